"""torch.nn.init's structured initialisers (eye_, dirac_, sparse_) -> the helpers in
templates/compat_parts/nn_init_extra.py. The distribution initialisers (normal_, kaiming_*...) are in
module_api.py; tests/parity/test_nn_init.py proves both with every keyword."""
from __future__ import annotations

from ..records import DIFFERENCE, mapping

T = "tests/parity/test_nn_init.py"

mapping("torch.nn.init.eye_", "_ms_compat.eye_", args=("tensor",), target_args=("param",),
        rename={"tensor": "param"}, note="the identity matrix, written in place", test=f"{T}::test_structured_init")
mapping("torch.nn.init.dirac_", "_ms_compat.dirac_", args=("tensor", "groups"), target_args=("param", "groups"),
        rename={"tensor": "param"}, note="an identity convolution kernel, written in place",
        test=f"{T}::test_structured_init")
mapping("torch.nn.init.sparse_", "_ms_compat.sparse_", args=("tensor", "sparsity", "std", "generator"),
        target_args=("param", "sparsity", "std"), rename={"tensor": "param"}, drop=("generator",),
        status=DIFFERENCE,
        note="a dense tensor of N(0, std) values with ceil(sparsity * rows) zeros per column, as torch; the "
             "random stream differs from torch's", test=f"{T}::test_structured_init")
