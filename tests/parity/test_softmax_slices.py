"""Softmax over a slice whose elements are all -inf (an attention row with every key masked). Measured on
MindSpore 2.10 CPU: ops.softmax gives 0 there (torch: nan) and garbage in the slices after it, when the memory
it reuses held other values. Every converted softmax form goes through _ms_compat.softmax
(templates/compat_parts/softmax_slices.py); values and the gradient through the other rows match torch,
PyNative and GRAPH."""
from __future__ import annotations

import numpy as np

from tests.parity.harness import assert_close, load_converted, load_torch

SRC = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Softmax(dim=-1)
        self.implicit = nn.Softmax()

    def forward(self, x, keep):
        s = x.masked_fill(~keep, float('-inf'))
        return (torch.softmax(s, 1), F.softmax(s, dim=-1), s.softmax(-1), self.layer(s), self.implicit(s),
                torch.special.softmax(s, 1), F.softmax(s, -1, dtype=torch.float64))


def make():
    return Net()
"""

RNG = np.random.default_rng(3)
X = RNG.standard_normal((5, 6)).astype(np.float32)
KEEP = RNG.random((5, 6)) > 0.3
KEEP[1] = False          # a row with nothing kept, before other rows
KEEP[:, 0] |= np.arange(5) != 1
ROWS = [0, 2, 3, 4]      # the rows with something kept


def _dirty_pool():
    """Fill MindSpore's memory pool with other values, as a real program's earlier steps do."""
    import mindspore as ms
    junk = [ms.Tensor(RNG.standard_normal((64, 64)).astype(np.float32)) * 3 for _ in range(6)]
    del junk


def test_softmax_forms():
    mod, code, _ = load_converted(SRC)
    assert code.count("_ms_compat.softmax(") == 5 and "_ms_compat.Softmax(" in code, code
    _against_torch(SRC, mod.make(), calls=3)


def _against_torch(src, net, calls):
    """`net` (the converted make()) against torch's on X with the rows KEEP empties: each output's row 1 is nan,
    the other rows and their gradient are torch's, PyNative and GRAPH, after `calls` dirty pools each."""
    import mindspore as ms
    import torch

    t_x = torch.from_numpy(X.copy()).requires_grad_(True)
    want = load_torch(src)["make"]()(t_x, torch.from_numpy(KEEP))
    sum((w[ROWS].double() * (i + 1)).sum() for i, w in enumerate(want)).backward()
    keep = ms.Tensor(KEEP)

    def total(x):
        return sum((o[ROWS].astype(ms.float64) * (i + 1)).sum() for i, o in enumerate(net(x, keep)))
    for mode, run, grad in (("pynative", net, ms.grad(total)), ("graph", ms.jit(net.construct), ms.jit(ms.grad(total)))):
        for _ in range(calls):
            _dirty_pool()
            got = run(ms.Tensor(X), keep)
            assert_close(got, want, 1e-5, 1e-6, mode)
            assert all(np.isnan(o.asnumpy()[1]).all() for o in got), mode     # torch's nan for the empty row
        assert_close(grad(ms.Tensor(X)), t_x.grad, 1e-5, 1e-6, mode + " gradient")


OTHER_SRC = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.softmin = nn.Softmin(dim=-1)
        self.softmax2d = nn.Softmax2d()

    def forward(self, x, keep):
        up = x.masked_fill(~keep, float('inf'))       # softmin's empty slice: all +inf
        down = x.masked_fill(~keep, float('-inf'))
        channels = self.softmax2d(down.t().reshape(1, 6, 5, 1)).reshape(6, 5).t()    # dim -3 is the row
        return (F.softmin(up, dim=1), F.softmin(up, -1, dtype=torch.float64), self.softmin(up), channels,
                self.softmax2d(down.t().reshape(6, 5, 1)).reshape(6, 5).t())


def make():
    return Net()
"""


def test_softmin_and_softmax2d():
    """nn.Softmin, F.softmin (a slice of all +inf) and nn.Softmax2d (a position whose channels are all -inf) go
    through the same guard: torch's nan there, the other slices and their gradient right, PyNative and GRAPH."""
    mod, code, _ = load_converted(OTHER_SRC)
    assert code.count("_ms_compat.softmin(") == 2 and "_ms_compat.Softmin(" in code, code
    assert "_ms_compat.Softmax2d(" in code, code
    _against_torch(OTHER_SRC, mod.make(), calls=2)
