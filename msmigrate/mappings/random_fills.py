"""torch.Tensor's in-place random fills (exponential_, log_normal_, cauchy_, geometric_, bernoulli_, random_):
host draws written into the tensor like uniform_ (helpers: templates/compat_parts/random_fills.py)."""
from __future__ import annotations

from ..records import DIFFERENCE, mapping

T = "tests/parity/test_random_fills.py::test_random_fills_match_torch_statistics"
_NOTE = ("fills the whole tensor in place (Parameter.set_data / Tensor.copy_, as uniform_) with host draws of "
         "torch's distribution; the random stream differs from torch's; not inside construct under GRAPH mode")
_FILLS = {
    "exponential_": ("lambd", "generator"),
    "log_normal_": ("mean", "std", "generator"),
    "cauchy_": ("median", "sigma", "generator"),
    "geometric_": ("p", "generator"),
    "bernoulli_": ("p", "generator"),
    "random_": ("from_", "to", "generator"),
}
for _name, _args in _FILLS.items():
    mapping(f"Tensor.{_name}", f"_ms_compat.{_name}", args=_args, target_args=("x",) + _args[:-1],
            drop=("generator",), status=DIFFERENCE, note=_NOTE, test=T)
