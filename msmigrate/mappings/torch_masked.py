"""torch.masked's functions of a strided tensor with `mask=` (sum, prod, amax, amin, argmax, argmin, mean, median,
norm, var, std, logsumexp, softmax, log_softmax, softmin, normalize, cumsum, cumprod, logaddexp): helpers in
templates/compat_parts/masked_reductions.py that give the masked-out elements the identity of the operation, as
torch.masked documents. Proven by tests/parity/test_torch_masked.py (values and dtypes against torch, gradients).
"""
from __future__ import annotations

from ..records import mapping

T = "tests/parity/test_torch_masked.py::test_masked"
_NOTE = ("the masked-out elements take the identity of the {what} (templates/compat_parts/masked_reductions.py); "
         "a MaskedTensor input is not translated")
_KW = ("keepdim", "dtype", "mask")

for _name, _what in (("sum", "sum (0)"), ("prod", "product (1)"), ("amax", "maximum (-inf)"),
                     ("amin", "minimum (+inf)"), ("argmax", "maximum (-inf); the index has the input's dtype, as "
                                                 "torch"), ("argmin", "minimum (+inf); the index has the input's "
                                                            "dtype, as torch"),
                     ("mean", "sum (0), over the count of the elements kept (nan where none is)"),
                     ("logsumexp", "log-sum-exp (-inf)")):
    mapping(f"torch.masked.{_name}", f"_ms_compat.masked_{_name}", args=("input", "dim") + _KW,
            target_args=("input", "dim") + _KW, note=_NOTE.format(what=_what), test=T)
mapping("torch.masked.norm", "_ms_compat.masked_norm", args=("input", "ord", "dim") + _KW,
        target_args=("input", "ord", "dim") + _KW, note=_NOTE.format(what="norm (0; +inf for ord=-inf)"), test=T)
for _name in ("var", "std"):
    mapping(f"torch.masked.{_name}", f"_ms_compat.masked_{_name}",
            args=("input", "dim", "unbiased", "correction") + _KW,
            target_args=("input", "dim", "unbiased", "correction") + _KW,
            note=_NOTE.format(what="sum (0): squared deviations from the mean of the elements kept over their count "
                                   "less the correction"), test=T)
mapping("torch.masked.median", "_ms_compat.masked_median", args=("input", "dim") + _KW,
        target_args=("input", "dim") + _KW,
        note=_NOTE.format(what="median (NaN, left out by ops.nanmedian); nan where none is kept"), test=T)
for _name, _what in (("softmax", "softmax (-inf); nan where no element along dim is kept, as torch"),
                     ("log_softmax", "log-softmax (-inf); nan where no element along dim is kept, as torch"),
                     ("softmin", "softmin (+inf); nan where no element along dim is kept, as torch")):
    mapping(f"torch.masked.{_name}", f"_ms_compat.masked_{_name}", args=("input", "dim", "dtype", "mask"),
            target_args=("input", "dim", "dtype", "mask"), note=_NOTE.format(what=_what), test=T)
mapping("torch.masked.normalize", "_ms_compat.masked_normalize", args=("input", "ord", "dim", "eps", "dtype", "mask"),
        target_args=("input", "ord", "dim", "eps", "dtype", "mask"),
        note=_NOTE.format(what="norm (0): the elements kept (0 elsewhere) over their norm, clamped to eps"), test=T)
for _name, _what in (("cumsum", "sum (0)"), ("cumprod", "product (1)")):
    mapping(f"torch.masked.{_name}", f"_ms_compat.masked_{_name}", args=("input", "dim", "dtype", "mask"),
            target_args=("input", "dim", "dtype", "mask"), note=_NOTE.format(what=_what), test=T)
mapping("torch.masked.logaddexp", "_ms_compat.masked_logaddexp",
        args=("input", "other", "dtype", "input_mask", "other_mask"),
        target_args=("input", "other", "dtype", "input_mask", "other_mask"),
        note=_NOTE.format(what="log-add-exp (-inf), each input by its own mask"), test=T)
