"""Forms that straight-line scripts write at their top level (no function around them), run by torch and
converted on the same values:

- an in-place method whose result is used, `r = x.addcmul_(a, b)`: the rebinding `x = <out-of-place>` goes
  before the statement (msmigrate/inplace_values.py, now also for a module's top level), r and x agree;
- `torch.tensor` of a literal holding complex numbers is complex64 in torch (MindSpore would infer
  complex128), and so are the results computed from it (angle/real: float32)."""
from __future__ import annotations

import numpy as np

from msmigrate.registry import TODO
from tests.parity.harness import load_converted, load_torch

INPLACE_SRC = """
import torch
x = torch.tensor([[0.5, -1.5, 2.0], [3.0, 0.25, -0.75]])
a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
b = torch.tensor([[0.5, 0.5, 2.0], [1.0, -1.0, 0.1]])
r = x.addcmul_(a, b, value=0.5)
y = torch.tensor([0.2, -0.4, 0.9])
s = y.acos_() * 2
k = torch.tensor([3, -7, 12], dtype=torch.int32)
sh = torch.tensor([1, 2, 0], dtype=torch.int32)
t = k.bitwise_left_shift_(sh)
"""

COMPLEX_SRC = """
import torch
z = torch.tensor([-1 + 1j, 2 - 3j, 0.5j])
w = torch.tensor([[1, 2 + 0j], [3j, -4]])
c = torch.tensor(1.5 - 2j)
ang = torch.angle(z)
re = z.real
prod = z * w[0, 1]
"""


def _np(v):
    return v.detach().numpy() if hasattr(v, "detach") else v.asnumpy()


def _dtype(v) -> str:
    return str(v.dtype).replace("torch.", "").lower()


def _check(src, names):
    want = load_torch(src)
    mod, code, sites = load_converted(src)
    assert not [s for s in sites if s.status == TODO], code
    for n in names:
        got = getattr(mod, n)
        assert _dtype(got) == _dtype(want[n]), (n, got.dtype, want[n].dtype, code)
        np.testing.assert_allclose(_np(got), _np(want[n]), rtol=1e-6, atol=1e-6, err_msg=n)
    return code


def test_used_inplace_results_at_top_level():
    code = _check(INPLACE_SRC, ["r", "x", "s", "y", "t", "k"])
    assert "x = ops.addcmul(" in code and "\nr = x\n" in code, code


def test_complex_literals_are_complex64():
    code = _check(COMPLEX_SRC, ["z", "w", "c", "ang", "re", "prod"])
    assert code.count("dtype=ms.complex64") == 3, code


TILE_SRC = """
import torch
x = torch.tensor([1, 2, 3])
a = 4
r_list = x.repeat([4, 2, 3])
r_name = x.repeat(a)
r_args = x.repeat(2, 2)
y = torch.Tensor([[1., 2.], [3., 4.]])
t_list = y.tile([2, 1])
t_int = y.tile(2)
t_fn = torch.tile(y, [3])
t_fn_tuple = torch.tile(y, (2, 2))
"""


def test_tile_counts():
    """repeat/tile counts as an int, a list or a name: ops.tile takes a tuple only. `y = torch.Tensor(...)`
    is known as a tensor, so its methods convert (MindSpore's own Tensor.tile refuses a list and an int)."""
    code = _check(TILE_SRC, ["r_list", "r_name", "r_args", "t_list", "t_int", "t_fn", "t_fn_tuple"])
    assert "y.tile(" not in code, code
