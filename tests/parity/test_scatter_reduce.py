"""torch.scatter_reduce / Tensor.scatter_reduce / Tensor.scatter_reduce_ (-> _ms_compat.scatter_reduce,
templates/compat_parts/scatter_reduce.py): torch and the conversion on the same inputs, every reduction with and
without include_self, a reduction held in a variable (as the peer suite writes it), 1-d to 3-d along each dim,
an index smaller than src, integer inputs; values and the gradients with respect to input and src."""
from __future__ import annotations

import numpy as np

from msmigrate.registry import TODO
from tests.parity.harness import check_function, rnd

SRC = """
import torch


def flat(x, s, i):
    kind = "prod"
    outs = []
    for r in ("sum", "mean", "amax", "amin"):
        outs.append(torch.scatter_reduce(x, 0, i, s, r))
        outs.append(torch.scatter_reduce(x, 0, i, s, reduce=r, include_self=False))
    outs.append(torch.scatter_reduce(x, 0, i, s, kind))
    outs.append(x.scatter_reduce(0, i, s, "prod", include_self=False))
    return outs


def matrix(x, s, i):
    y = x.clone()
    y.scatter_reduce_(1, i, s, "amax")
    return (torch.scatter_reduce(x, 1, i, s, "sum"), x.scatter_reduce(1, i, s, "mean", include_self=False),
            torch.scatter_reduce(input=x, dim=1, index=i, src=s, reduce="amin", include_self=True), y,
            x.scatter_reduce(0, i[:2, :1] % 3, s[:2, :1], "prod"))


def smaller(x, s, i):
    # src larger than the index: torch reads src[:2, :2] only (torch's backward refuses this case)
    outs = []
    for r in ("sum", "prod", "mean", "amax", "amin"):
        outs.append(x.scatter_reduce(1, i[:2, :2], s, r))
        outs.append(x.scatter_reduce(1, i[:2, :2], s, r, include_self=False))
    return outs


def cube(x, s, i):
    return x.scatter_reduce(2, i, s, "mean"), x.scatter_reduce(-2, i % 3, s, "amax", include_self=False)


def integers(x, s, i):
    outs = []
    for r in ("sum", "prod", "mean", "amax", "amin"):
        outs.append(torch.scatter_reduce(x, 0, i, s, r))
        outs.append(torch.scatter_reduce(x, 0, i, s, r, include_self=False))
    return outs
"""
RNG = np.random.default_rng(0)
X1, S1 = rnd(5, seed=1), rnd(7, seed=2)
I1 = np.array([0, 1, 0, 1, 2, 1, 0], np.int64)     # positions 3 and 4 get nothing
X2, S2 = rnd(3, 5, seed=3), rnd(3, 3, seed=4)
I2 = RNG.integers(0, 5, (3, 3)).astype(np.int64)
X3, S3 = rnd(2, 3, 4, seed=5), rnd(2, 3, 4, seed=6)
I3 = RNG.integers(0, 4, (2, 3, 4)).astype(np.int64)
XI, SI = RNG.integers(-5, 9, 5).astype(np.int64), RNG.integers(-5, 9, 7).astype(np.int64)


def test_scatter_reduce():
    # GRAPH mode (ms.jit) for one table: compiling all of them would take most of the test's time
    for entry, inputs in (("flat", [X1, S1, I1]), ("matrix", [X2, S2, I2]), ("cube", [X3, S3, I3])):
        _, sites = check_function(SRC, inputs, entry=entry, grad=True, graph=entry == "matrix", rtol=1e-5, atol=1e-5)
        assert not [s.api for s in sites if s.status == TODO]
        assert {s.api for s in sites} & {"torch.scatter_reduce", "Tensor.scatter_reduce"}
    check_function(SRC, [X2, rnd(4, 4, seed=7), I2], entry="smaller", graph=False)
    code, _ = check_function(SRC, [XI, SI, I1], entry="integers", graph=False)
    assert "scatter_reduce(" in code
