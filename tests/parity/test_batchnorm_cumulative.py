"""nn.BatchNorm1d/2d/3d(momentum=None) -> _ms_compat.CumulativeBatchNorm*d: torch's cumulative moving average
(the n-th training batch weighs 1/n in running_mean/running_var), torch and the conversion on the same inputs:
outputs, the input gradient, the running statistics after several training batches, then eval reading them; in
PyNative (functions) and GRAPH mode (a Cell, running statistics and the batch count loaded from torch)."""
from __future__ import annotations

from msmigrate.registry import TODO
from tests.parity.harness import check_function, check_layer, rnd

SRC = """
import torch
import torch.nn as nn


def cumulative(s, i, v):
    a = nn.BatchNorm1d(3, momentum=None)
    b = nn.BatchNorm2d(3, eps=1e-3, momentum=None, affine=False)
    c = nn.BatchNorm3d(2, momentum=None)
    for k in range(3):
        ya, yb, yc = a(s * (k + 1) + k), b(i - k), c(v * (k + 2))
    return ya, yb, yc, a.running_mean, a.running_var, b.running_mean, b.running_var, c.running_mean, c.running_var


def cumulative_eval(s, i, v):
    a = nn.BatchNorm1d(3, momentum=None)
    b = nn.BatchNorm2d(3, momentum=None)
    c = nn.BatchNorm3d(2, momentum=None)
    a(s[:, :, 0] * 2 + 1)       # 2-d input to BatchNorm1d
    a(s[:, :, 1] - 3)
    b(i * 3)
    b(i + 2)
    c(v * 2 + 1)
    c(v - 1)
    a.eval()
    b.eval()
    c.eval()
    return a(s), b(i), c(v), a.running_var, b.running_mean


def no_running_stats(i):
    b = nn.BatchNorm2d(3, momentum=None, track_running_stats=False)
    b(i * 5)
    b.eval()
    return b(i)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.BatchNorm2d(3, momentum=None)
        self.c = nn.BatchNorm3d(2, momentum=None)

    def forward(self, i, v):
        y = self.a(i * 2 + 1)
        z = self.c(v + 1)
        return self.a(i) + y, self.c(v) + z, self.a.running_mean * 1, self.a.running_var * 1, self.c.running_var * 1


def make():
    return Net()
"""
SEQ, IMG, VOL = rnd(4, 3, 5, seed=1), rnd(2, 3, 4, 5, seed=2), rnd(2, 2, 3, 4, 5, seed=3)


def test_batchnorm_cumulative_average():
    for entry, inputs in (("cumulative", [SEQ, IMG, VOL]), ("cumulative_eval", [SEQ, IMG, VOL]),
                          ("no_running_stats", [IMG])):
        code, sites = check_function(SRC, inputs, entry=entry, grad=True, graph=False, rtol=1e-4, atol=1e-5)
        assert not [s.api for s in sites if s.status == TODO]
        assert "_ms_compat.CumulativeBatchNorm2d(" in code


def test_batchnorm_cumulative_graph():
    # GRAPH mode: two training batches in one construct, counting on from the batch count loaded from torch
    code, _ = check_layer(SRC, [IMG, VOL], train=True, rtol=1e-4, atol=1e-5)
    assert "num_batches_tracked" not in code       # counted inside _ms_compat, not by the converted code
    check_layer(SRC, [IMG, VOL], train=False, rtol=1e-4, atol=1e-5)


LAZY_SRC = """
import torch
import torch.nn as nn


def lazy_cumulative(s, i, v):
    a = nn.LazyBatchNorm1d(momentum=None)
    b = nn.LazyBatchNorm2d(eps=1e-3, momentum=None)
    c = nn.LazyBatchNorm3d(momentum=None, affine=False)
    for k in range(3):
        ya, yb, yc = a(s * (k + 1) + k), b(i - k), c(v * (k + 2))
    out = (ya, yb, yc, a.running_mean, a.running_var, b.running_mean, b.running_var, c.running_mean, c.running_var)
    a.eval()
    b.eval()
    return out + (a(s), b(i))
"""


def test_lazy_cumulative():
    """nn.LazyBatchNorm*d(momentum=None) (was a TODO) builds the cumulative layer at its first call: torch's running
    statistics after three training batches, eval reading them, and the input gradients."""
    code, sites = check_function(LAZY_SRC, [SEQ, IMG, VOL], entry="lazy_cumulative", grad=True, graph=False,
                                 rtol=1e-4, atol=1e-5)
    assert not [s.api for s in sites if s.status == TODO], code
    assert "_ms_compat.LazyBatchNorm2d(eps=1e-3, momentum=None)" in code, code
