"""Matrix products over an empty contracted dim give torch's zeros (plus the bias / the added input).

MindSpore 2.10's CPU matmul kernels leave such a result uninitialised (templates/compat_parts/
empty_products.py): `x[:, keep] @ w[keep]` with no column kept gave garbage or nan. The operands are selected
by a boolean mask, so under ms.jit the contracted length is dynamic. Each snippet runs with a mask that keeps
nothing and one that keeps some columns, in PyNative and GRAPH mode, values and gradients.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.parity.harness import check_function
from tests.parity.test_tensor_methods import expect

X = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
NONE = np.zeros(3, bool)
SOME = np.array([1, 0, 1], bool)

FUNCTIONS = '''
import torch
import torch.nn.functional as F
def fn(x, m):
    a = x[:, m]
    b = x.T[m]
    return (torch.matmul(a, b), torch.mm(a, b), torch.bmm(a[None], b[None]), torch.einsum('ik,kj->ij', a, b),
            torch.dot(a[0], b[:, 0]), torch.mv(a, b[:, 0]))
'''

# the products that add a bias or an input
AFFINE = '''
import torch
import torch.nn.functional as F
def fn(x, m):
    a = x[:, m]
    b = x.T[m]
    return (F.linear(a, b.T, x[:, 0]), F.linear(a, b.T), torch.addmm(x[:, :1], a, b),
            torch.baddbmm(x[None, :, :1], a[None], b[None]))

'''

METHODS = '''
import torch
def fn(x: torch.Tensor, m: torch.Tensor):
    a = x[:, m]
    b = x.T[m]
    return a @ b, a.matmul(b), a.mm(b), a[None].bmm(b[None]), a[0] @ b[:, 0], (a @ b) * 2
'''


@pytest.mark.parametrize("mask", [NONE, SOME], ids=["empty", "some"])
def test_functions(mask):
    code, sites = check_function(FUNCTIONS, [X, mask], grad=True, rtol=1e-5, atol=1e-6)
    expect(sites, code, converted=["torch.matmul", "torch.mm", "torch.bmm", "torch.dot", "torch.mv"])
    assert "_ms_compat.matmul(a, b)" in code, code
    assert "_ms_compat.reduce_sum(ops.expand_dims(a, 1)" in code, code     # einsum's contraction


@pytest.mark.parametrize("mask", [NONE, SOME], ids=["empty", "some"])
def test_affine(mask):
    code, sites = check_function(AFFINE, [X, mask], grad=True, rtol=1e-5, atol=1e-6)
    expect(sites, code, converted=["torch.addmm", "torch.baddbmm", "torch.nn.functional.linear"])
    assert "_ms_compat.dense(a, b.T, x[:, 0])" in code, code


# ops.inner / ops.tensor_dot do not compile a dynamic shape under ms.jit (an error, not a wrong value): operands
# of a static empty shape, (4, 0) @ (0, 5)
STATIC = '''
import torch
def fn(a, b):
    return torch.inner(a, b.T), torch.tensordot(a, b, dims=1), torch.matmul(a, b), a @ b
'''


@pytest.mark.parametrize("inner", [0, 2])
def test_static_shapes(inner):
    a = np.random.default_rng(1).standard_normal((4, inner)).astype(np.float32)
    b = np.random.default_rng(2).standard_normal((inner, 5)).astype(np.float32)
    code, sites = check_function(STATIC, [a, b], grad=True, rtol=1e-5, atol=1e-6)
    expect(sites, code, converted=["torch.inner", "torch.tensordot", "torch.matmul"])


@pytest.mark.parametrize("mask", [NONE, SOME], ids=["empty", "some"])
def test_methods(mask):
    code, sites = check_function(METHODS, [X, mask], grad=True, rtol=1e-5, atol=1e-6)
    expect(sites, code, converted=["Tensor.__matmul__", "Tensor.matmul", "Tensor.mm", "Tensor.bmm"])
    assert "@" not in code.split("def fn", 1)[1], code


def test_matmul_of_numpy_values():
    """`@` of NumPy calls stays `@`; of untyped values it is the helper, which is `@` itself on NumPy arrays."""
    from tests.parity.harness import load_converted
    mod, code, _ = load_converted("import numpy as np\ndef f(a, b):\n    return a @ b, np.ones((2, 2)) @ np.ones(2)\n")
    assert "return _ms_compat.matmul(a, b), np.ones((2, 2)) @ np.ones(2)" in code, code
    a, b = np.arange(6.).reshape(2, 3), np.ones((3, 0))
    out = mod.f(a, b)
    assert isinstance(out[0], np.ndarray) and out[0].shape == (2, 0) and out[1].tolist() == [2.0, 2.0]
    assert mod.f(a, np.ones(3))[0].tolist() == (a @ np.ones(3)).tolist()


OUT_POSITIONAL = '''
import torch
def fn(a, b):
    out = torch.zeros(0)
    return torch.tensordot(a, b, 1, out)
'''


def test_tensordot_out_given_positionally_raises():
    """torch.tensordot(a, b, dims, out): out bound by position is out= (no MindSpore counterpart): a TODO that
    raises where it runs (before, a fourth argument to tensor_dot raised TypeError)."""
    from tests.parity.harness import load_converted
    mod, code, sites = load_converted(OUT_POSITIONAL)
    expect(sites, code, todo=["torch.tensordot"])
    a = np.ones((2, 3), np.float32)
    import mindspore as ms
    with pytest.raises(sys.modules["_ms_compat"].MigrationError, match=r"tensordot at \S+:5\b"):
        mod.fn(ms.Tensor(a), ms.Tensor(a.T))
