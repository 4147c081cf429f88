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
            s.sum(0), x.sum(1), x.mean(1))
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
