"""torch's private helpers that model libraries call themselves (timm's variance_scaling_ and
lecun_normal_ read torch.nn.init._calculate_fan_in_and_fan_out)."""
from __future__ import annotations

from ..records import mapping

_T = "tests/parity/test_library_idioms_timm.py::test_library_idioms"
mapping("torch.nn.init._calculate_fan_in_and_fan_out", "expr:_ms_compat._fans(tuple({tensor}.shape))",
        args=("tensor",), note="(fan_in, fan_out) from the tensor's shape, as torch computes them", test=_T)
