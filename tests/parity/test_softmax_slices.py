"""Softmax over a slice whose elements are all -inf (an attention row with every key masked). Measured on
MindSpore 2.10 CPU: ops.softmax gives 0 there (torch: nan) and garbage in the slices after it, when the memory
it reuses held other values. Every converted softmax form goes through _ms_compat.softmax
(templates/compat_parts/softmax_slices.py); values and the gradient through the other rows match torch,
PyNative and GRAPH."""
from __future__ import annotations

import numpy as np

from tests.parity.harness import assert_close, load_converted, load_torch, no_todo

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
    assert code.count("_ms_compat.softmax(") == 4 and "_ms_compat.Softmax(" in code, code
    assert "_ms_compat.special_softmax(" in code, code     # torch.special.softmax: in float64 (special_compose.py)
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


LOG_SRC = """
import torch
import torch.nn as nn
import torch.nn.functional as F

layer = nn.LogSoftmax(dim=-1)
implicit = nn.LogSoftmax()


def fn(x, x32):
    return (torch.log_softmax(x, 1), F.log_softmax(x, dim=-1), x.log_softmax(-1), layer(x), implicit(x),
            torch.special.log_softmax(x, 1), F.log_softmax(x32, -1, dtype=torch.float64),
            torch.log_softmax(x32, 0, dtype=torch.float64), x32.log_softmax(1, dtype=torch.float64),
            F.log_softmax(x32, -1))
"""


def test_log_softmax_float64():
    """Every log_softmax form keeps float64 exact (MindSpore 2.10's CPU LogSoftmax computes float64 in float32:
    ~5e-7 off); a row of all -inf gives torch's nan; float32 within 1e-5; gradients match."""
    import mindspore as ms
    import torch

    x = RNG.standard_normal((4, 7)) * 4
    x[2] = -np.inf
    mod, code, sites = load_converted(LOG_SRC)
    no_todo(sites)
    assert code.count("_ms_compat.log_softmax(") == 7 and "_ms_compat.LogSoftmax(" in code, code
    t_x = torch.from_numpy(x.copy()).requires_grad_(True)
    want = load_torch(LOG_SRC)["fn"](t_x, torch.from_numpy(x.astype(np.float32)))
    rows = [0, 1, 3]
    sum((w[rows] * (i + 1)).sum() for i, w in enumerate(want[:6])).backward()
    net = mod.fn
    got = net(ms.Tensor(x), ms.Tensor(x.astype(np.float32)))
    for g, w in zip(got, want):
        assert str(g.dtype).lower() == str(w.dtype).replace("torch.", ""), (g.dtype, w.dtype)
    assert_close(got[:9], want[:9], 1e-13, 1e-13, "float64")      # was ~5e-7 off
    assert_close(got[9:], want[9:], 1e-5, 1e-5, "float32")
    assert np.isnan(got[0].asnumpy()[2]).all()

    def total(v):
        return sum((o[ms.Tensor(rows)] * (i + 1)).sum() for i, o in enumerate(net(v, ms.Tensor(x.astype(np.float32)))[:6]))
    assert_close(ms.grad(total)(ms.Tensor(x))[ms.Tensor(rows)], t_x.grad[rows], 1e-12, 1e-12, "gradient")


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


ONE_SRC = """
import torch
import torch.nn as nn
import torch.nn.functional as F

layer = nn.Softmax(dim=1)


def fn(x):
    return torch.softmax(x, -1), F.softmax(x, dim=1), x.softmax(-1), layer(x), F.softmin(x, -1)
"""


def test_softmax_over_an_axis_of_length_1():
    """Over an axis of length 1 the helpers compute torch's value without ops.softmax (MindSpore 2.10 reuses the
    gradient it builds there, wrong, for later inputs of the same rank; tests/test_heldout23_programs.py): 1, nan
    at inf, -inf and nan; the gradient 0 at a finite element and nan at inf and nan, as torch's; PyNative and
    GRAPH."""
    import mindspore as ms
    import torch

    x = np.array([[1.5], [-3.0], [np.inf], [np.nan], [-np.inf]], np.float32)
    finite = [0, 1, 2, 3]      # the rows whose gradient torch computes (the all -inf row: the helper's where)
    mod, code, sites = load_converted(ONE_SRC)
    no_todo(sites)
    t_x = torch.from_numpy(x.copy()).requires_grad_(True)
    want = load_torch(ONE_SRC)["fn"](t_x)
    sum((w[finite] * (i + 1)).sum() for i, w in enumerate(want)).backward()

    def total(v):
        return sum((o[ms.Tensor(finite)] * (i + 1)).sum() for i, o in enumerate(mod.fn(v)))
    for mode, run, grad in (("pynative", mod.fn, ms.grad(total)), ("graph", ms.jit(mod.fn), ms.jit(ms.grad(total)))):
        got = run(ms.Tensor(x))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.asnumpy(), w.detach().numpy(), err_msg=mode)
        np.testing.assert_array_equal(grad(ms.Tensor(x)).asnumpy()[finite], t_x.grad.numpy()[finite],
                                      err_msg=mode + " gradient")
