"""sum / mean / any / logsumexp of a tensor with no elements give torch's value (0, nan, False, -inf).

MindSpore 2.10's CPU kernels leave such a result uninitialised (templates/compat_parts/empty_reductions.py).
The inputs are selected by a boolean mask, as `loss[mask].sum()` does in a detection loss: under ms.jit that
selection has a dynamic shape. Each snippet runs with a mask that selects nothing and one that selects some
elements, in PyNative and GRAPH mode, values and gradients.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.parity.harness import check_function
from tests.parity.test_tensor_methods import expect

X = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
NONE = np.zeros((4, 3), bool)
SOME = np.array([[1, 0, 1], [0, 0, 0], [1, 1, 0], [0, 1, 0]], bool)
MASKS = pytest.mark.parametrize("mask", [NONE, SOME], ids=["empty", "some"])


def check_masked(src: str, mask, converted=(), grad: bool = True) -> str:
    """Values (and gradients) of `fn(X, mask)` against torch, PyNative and GRAPH; the converted code."""
    code, sites = check_function(src, [X, mask], grad=grad, rtol=1e-5, atol=1e-6)
    if converted:
        expect(sites, code, converted=list(converted))
    return code

FUNCTIONS = '''
import torch
def fn(x, m):
    s = x[m]
    return (torch.sum(s), torch.mean(s), torch.mean(x[m[:, 0]], 0), torch.mean(s, 0, True),
            torch.logsumexp(s, 0), torch.logsumexp(s, dim=0, keepdim=True), torch.special.logsumexp(s, 0),
            torch.sum(x, 1), torch.mean(x, dim=1), torch.sum(s, 0), torch.sum(s, dim=0, keepdim=True))
'''

METHODS = '''
import torch
def fn(x: torch.Tensor, m: torch.Tensor):
    s = x[m]
    return (s.sum(), s.mean(), x[m[:, 0]].mean(0), s.mean(dim=0, keepdim=True), s.logsumexp(0),
            s.sum(0), x.sum(1), x.mean(1), x.mean(1, True, dtype=torch.float64), s.mean(dtype=torch.float64),
            x.mean(dim=0, dtype=torch.float32))
'''

ANY = '''
import torch
def fn(x: torch.Tensor, m: torch.Tensor):
    s = x[m]
    return (torch.any(s > 0.5), (s > 0.5).any(), s.any(), torch.any(s), torch.any(x[m[:, 0]], 0), s.any(0),
            (x > 0.5).any(1), torch.any(x, dim=1, keepdim=True))
'''

INTS = '''
import torch
def fn(i: torch.Tensor, m: torch.Tensor):
    return torch.sum(i[m]), i[m].sum(), (i[m] > 0).sum(), torch.sum(i[m] > 0)
'''


@pytest.mark.parametrize("mask", [NONE, SOME], ids=["empty", "some"])
def test_functions(mask):
    code, sites = check_function(FUNCTIONS, [X, mask], grad=True, rtol=1e-5, atol=1e-6)
    expect(sites, code, converted=["torch.sum", "torch.mean", "torch.logsumexp", "torch.special.logsumexp"])
    assert "_ms_compat.reduce_sum(s)" in code and "_ms_compat.reduce_sum(x, 1)" in code, code


@pytest.mark.parametrize("mask", [NONE, SOME], ids=["empty", "some"])
def test_methods(mask):
    code, sites = check_function(METHODS, [X, mask], grad=True, rtol=1e-5, atol=1e-6)
    expect(sites, code, converted=["Tensor.sum", "Tensor.mean", "Tensor.logsumexp"])


@pytest.mark.parametrize("mask", [NONE, SOME], ids=["empty", "some"])
def test_any(mask):
    code, sites = check_function(ANY, [X, mask])
    expect(sites, code, converted=["torch.any", "Tensor.any"])
    assert "(s > 0.5).any()" not in code, code       # a comparison of a tensor is no longer copied through


@pytest.mark.parametrize("mask", [NONE, SOME], ids=["empty", "some"])
def test_integer_sums(mask):
    ints = np.arange(12, dtype=np.int64).reshape(4, 3) - 5
    code, _ = check_function(INTS, [ints, mask])
    assert code.count("_ms_compat.reduce_sum(") == 4, code


# prod / nansum / nanmean / norms / std / var / median / count_nonzero: torch's 1 / 0 / nan / 0 / nan / nan / 0
MORE_FUNCTIONS = '''
import torch
def fn(x, m):
    s = x[m]
    rows = x[m[:, 0]]
    return (torch.prod(s), torch.prod(rows, 0), torch.nansum(s), torch.nansum(rows, 0), torch.nanmean(s),
            torch.norm(s), torch.norm(rows, dim=0), torch.linalg.vector_norm(s, 1), torch.linalg.norm(s),
            torch.linalg.norm(rows), torch.std(s), torch.var(rows, 0),
            torch.var_mean(s), torch.std_mean(rows, 0), torch.median(s), torch.count_nonzero(s),
            torch.count_nonzero(rows, 0))
'''

MORE_METHODS = '''
import torch
def fn(x: torch.Tensor, m: torch.Tensor):
    s = x[m]
    rows = x[m[:, 0]]
    return s.prod(), rows.prod(0), s.std(), rows.var(0), s.norm(), rows.norm(dim=0), s.nansum(), s.median()
'''

# torch refuses these when the reduced dim is empty: the converted code raises too (no garbage value)
REFUSED = ["torch.amax(s, 0)", "torch.amin(rows, 0)", "torch.max(s)", "torch.min(s)", "s.max()", "s.amax()",
           "s.min()", "torch.median(rows, 0)[0]", "torch.linalg.vector_norm(s, float('inf'))"]


@pytest.mark.parametrize("mask", [NONE, SOME], ids=["empty", "some"])
def test_more_functions(mask):
    code, sites = check_function(MORE_FUNCTIONS, [X, mask], rtol=1e-5, atol=1e-6)
    expect(sites, code, converted=["torch.prod", "torch.nansum", "torch.nanmean", "torch.norm",
                                   "torch.linalg.vector_norm", "torch.linalg.norm", "torch.std", "torch.var", "torch.var_mean",
                                   "torch.std_mean", "torch.median", "torch.count_nonzero"])


@pytest.mark.parametrize("mask", [NONE, SOME], ids=["empty", "some"])
def test_more_gradients(mask):
    code, _ = check_function('''
import torch
def fn(x, m):
    s = x[m]
    return torch.prod(x[m[:, 0]], 0), torch.norm(s), torch.nansum(s), x[m[:, 0]].std(0)
''', [X, mask], grad=True, rtol=1e-5, atol=1e-5)
    assert "_ms_compat.reduce_prod(" in code and "_ms_compat.reduce_vector_norm(" in code, code


@pytest.mark.parametrize("mask", [NONE, SOME], ids=["empty", "some"])
def test_more_methods(mask):
    code, sites = check_function(MORE_METHODS, [X, mask], rtol=1e-5, atol=1e-6)
    expect(sites, code, converted=["Tensor.prod", "Tensor.std", "Tensor.var", "Tensor.norm"])


@pytest.mark.parametrize("expr", REFUSED)
def test_refused_reductions_raise(expr):
    import mindspore as ms

    from tests.parity.harness import load_converted, load_torch
    src = f"import torch\ndef fn(x: torch.Tensor, m: torch.Tensor):\n    s = x[m]\n    rows = x[m[:, 0]]\n" \
          f"    return {expr}\n"
    check_function(src, [X, SOME])                      # a value where there is something to reduce
    with pytest.raises(Exception):
        load_torch(src)["fn"](*[__import__("torch").from_numpy(a) for a in (X, NONE)])
    mod, code, _ = load_converted(src)
    args = [ms.Tensor(X), ms.Tensor(NONE)]
    for run in (mod.fn, ms.jit(mod.fn)):
        with pytest.raises(ValueError, match="non-zero size|empty input"):     # the inf norm: ops' own error
            run(*args)


# receivers the converter cannot type (untyped parameters, a function's result): decided at run time
# (untyped_methods.DIFFERING), the empty-safe form on a MindSpore tensor
UNTYPED = '''
import torch
def get(x, m):
    return x[m]
def fn(x, m):
    s = x[m]
    rows = x[m[:, 0]]
    return (s.sum(), s.mean(), get(x, m).sum(), get(x, m).mean(0), rows.prod(0), s.norm(), (s > 0).sum(),
            rows.sum(1), rows.mean(dim=0, keepdim=True))
'''


@pytest.mark.parametrize("mask", [NONE, SOME], ids=["empty", "some"])
def test_untyped_receivers(mask):
    code, _ = check_function(UNTYPED, [X, mask], grad=True, rtol=1e-5, atol=1e-6)
    assert "(_ms_compat.reduce_sum(s) if _ms_compat.is_tensor(s) else s.sum())" in code, code


def test_untyped_receivers_keep_numpy_methods():
    """On a NumPy array the same converted calls are the array's own methods."""
    from tests.parity.harness import load_converted
    mod, code, _ = load_converted(UNTYPED.rsplit("    return", 1)[0] + "    return s.sum(), get(x, m).mean(0), "
                                  "rows.prod(0), (s > 0).sum(), rows.sum(1)\n")
    assert "_ms_compat.reduce_prod(rows, 0) if _ms_compat.is_tensor(rows)" in code, code
    x, m = X.astype(np.float64), SOME
    s, rows = x[m], x[m[:, 0]]
    for g, w in zip(mod.fn(x, m), (s.sum(), s.mean(0), rows.prod(0), (s > 0).sum(), rows.sum(1))):
        assert isinstance(g, (np.ndarray, np.generic)) and np.allclose(g, w), (g, w)


# einops.reduce over an axis of length 0: torch's 0 / nan / 1 (its error for max, as einops on torch)
EINOPS = '''
import torch
from einops import reduce
def fn(x: torch.Tensor, m: torch.Tensor):
    s = x[:, m[0]]
    return reduce(s, 'b n -> b', 'sum'), reduce(s, 'b n -> b', 'mean'), reduce(s, 'b n -> b', 'prod')
'''


@pytest.mark.parametrize("mask", [NONE, SOME], ids=["empty", "some"])
def test_einops_reduce(mask):
    code, _ = check_function(EINOPS, [X, mask], grad=True, rtol=1e-5, atol=1e-6)
    assert "_ms_compat.reduce_sum(s, (1,))" in code and "_ms_compat.reduce_prod(s, (1,))" in code, code


def test_einops_max_of_nothing_raises():
    import mindspore as ms

    from tests.parity.harness import load_converted
    mod, code, _ = load_converted(EINOPS.replace("'sum'), reduce(s, 'b n -> b', 'mean'), reduce(s, 'b n -> b', 'prod')",
                                                 "'max')"))
    assert "_ms_compat.reduce_amax(s, (1,))" in code, code
    for run in (mod.fn, ms.jit(mod.fn)):
        with pytest.raises(ValueError, match="non-zero size"):
            run(ms.Tensor(X), ms.Tensor(NONE))
