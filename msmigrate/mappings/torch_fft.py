"""`torch.fft.*` -> `mindspore.ops.fft*` (MindSpore 2.10 has the whole family, same parameter names).

Proven by tests/parity/test_torch_fft.py (values of real and complex inputs, norm modes, n/s/dim,
gradients through rfft/fft). Complex results are complex64 for float32 input, as in torch.
"""
from __future__ import annotations

from .compose import FACTORY_DROP, composed

T = "tests/parity/test_torch_fft.py"
_ONE = ("input", "n", "dim", "norm")
_MANY = ("input", "s", "dim", "norm")
for _name in ("fft", "ifft", "rfft", "irfft"):
    composed(f"torch.fft.{_name}", f"ops.{_name}({{input}}, {{n}}, {{dim}}, {{norm}})", _ONE,
             defaults={"n": "None", "dim": "-1", "norm": "None"}, test=f"{T}::test_fft_values",
             note="same parameters and norm modes ('backward', 'forward', 'ortho') as torch")
for _name in ("fft2", "ifft2", "rfft2", "irfft2"):
    composed(f"torch.fft.{_name}", f"ops.{_name}({{input}}, {{s}}, {{dim}}, {{norm}})", _MANY,
             defaults={"s": "None", "dim": "(-2, -1)", "norm": "None"}, test=f"{T}::test_fft_values",
             note="same parameters and norm modes as torch")
for _name in ("fftn", "ifftn", "rfftn", "irfftn"):
    composed(f"torch.fft.{_name}", f"ops.{_name}({{input}}, {{s}}, {{dim}}, {{norm}})", _MANY,
             defaults={"s": "None", "dim": "None", "norm": "None"}, test=f"{T}::test_fft_values",
             note="same parameters and norm modes as torch")
# the Hermitian transforms through rfft/irfft (templates/compat_parts/hermitian_fft.py): MindSpore 2.10's
# ops.hfft*/ihfft* return the conjugate on every second call on CPU
for _kind, _size, _dim in (("", "n", "-1"), ("2", "s", "(-2, -1)"), ("n", "s", "None")):
    for _inverse in (False, True):
        composed(f"torch.fft.{'i' if _inverse else ''}hfft{_kind}",
                 f"_ms_compat.hermitian_fft('{_kind}', {_inverse}, {{input}}, {{{_size}}}, {{dim}}, {{norm}})",
                 ("input", _size, "dim", "norm"), defaults={_size: "None", "dim": _dim, "norm": "None"},
                 test=f"{T}::test_fft_values",
                 note="same parameters and norm modes as torch; computed as irfft of the conjugate (hfft) or the "
                      "conjugate of rfft (ihfft): MindSpore 2.10's ops.hfft*/ihfft* return the conjugate on every "
                      "second call on CPU")
for _name in ("fftshift", "ifftshift"):
    composed(f"torch.fft.{_name}", f"ops.{_name}({{input}}, {{dim}})", ("input", "dim"), defaults={"dim": "None"},
             test=f"{T}::test_fft_values")
for _name in ("fftfreq", "rfftfreq"):
    composed(f"torch.fft.{_name}", f"ops.{_name}({{n}}, float({{d}}), {{dtype}})", ("n", "d", "dtype"),
             defaults={"d": "1.0", "dtype": "None"}, drop=FACTORY_DROP, test=f"{T}::test_fft_values",
             note="float32 by default, as in torch; d as a float (the op takes no int); device=/requires_grad= "
                  "are dropped")
