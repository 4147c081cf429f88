"""Constants, small predicates and torch's private argument helpers that user code
often imports."""
from __future__ import annotations

from ..records import DIFFERENCE, mapping

T = "tests/parity/test_misc.py"

mapping("torch.pi", "math.pi", test=f"{T}::test_constants")
mapping("torch.e", "math.e", test=f"{T}::test_constants")
mapping("torch.inf", "math.inf", test=f"{T}::test_constants")
mapping("torch.nan", "math.nan", test=f"{T}::test_constants")
mapping("torch.is_floating_point", "mindspore.ops.is_floating_point", args=("input",),
        target_args=("input",), test=f"{T}::test_predicates")
mapping("torch.is_tensor", "expr:isinstance({obj}, ms.Tensor)", args=("obj",), test=f"{T}::test_predicates")
mapping("torch._check", "drop", args=("cond", "message"), status=DIFFERENCE,
        note="runtime check removed (not expressible inside a compiled MindSpore graph)", test=f"{T}::test_predicates")
for _name, _n in (("_single", 1), ("_pair", 2), ("_triple", 3), ("_quadruple", 4), ("_ntuple", None)):
    if _n is None:
        mapping("torch.nn.modules.utils._ntuple", "_ms_compat.ntuple", args=("n", "name"), target_args=("n",),
                drop=("name",), test=f"{T}::test_ntuple")
    else:
        mapping(f"torch.nn.modules.utils.{_name}", f"_ms_compat.{_name.lstrip('_')}", args=("x",),
                target_args=("x",), test=f"{T}::test_ntuple")
for _src in ("torch.nn.Buffer", "torch.nn.parameter.Buffer"):
    mapping(_src, "_ms_compat.Buffer", args=("data", "persistent"), target_args=("data", "persistent"),
            note="persistent: a Parameter that is not trained (saved in checkpoints); otherwise the tensor itself",
            test=f"{T}::test_buffer_class")
