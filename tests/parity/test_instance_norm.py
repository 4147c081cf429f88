"""nn.InstanceNorm1d/2d/3d (-> _ms_compat.InstanceNorm*d) and nn.BatchNorm3d's running statistics, torch and the
conversion on the same inputs: outputs, the input gradient, and the running statistics a train-mode forward leaves
(read back as `m.running_mean`, which the conversion renames: moving_mean, bn2d.moving_mean for BatchNorm3d).
Batched and unbatched inputs, track_running_stats both ways, affine both ways."""
from __future__ import annotations

from msmigrate.registry import TODO
from tests.parity.harness import check_function, check_layer, rnd

SRC = """
import torch
import torch.nn as nn


def instance_train(s, i, v):
    a = nn.InstanceNorm1d(3, affine=True)
    b = nn.InstanceNorm2d(3, eps=1e-3, momentum=0.3, track_running_stats=True)
    c = nn.InstanceNorm3d(2, affine=True, track_running_stats=True)
    a.train()
    b.train()
    c.train()
    return a(s), b(i), c(v), b.running_mean, b.running_var, c.running_mean, c.running_var


def instance_unbatched(s, i, v):
    a = nn.InstanceNorm1d(3)
    b = nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
    c = nn.InstanceNorm3d(2)
    b.train()
    y = b(i[0])
    return a(s[1]), y, b.running_mean, b.running_var, c(v[0])


def instance_fresh(i):
    # no train() call: torch's modules start in training mode (instance statistics, running ones updated)
    b = nn.InstanceNorm2d(3, track_running_stats=True)
    return b(i), b.running_mean


def instance_eval(i, v):
    b = nn.InstanceNorm2d(3, momentum=0.5, track_running_stats=True)
    c = nn.InstanceNorm3d(2, affine=True)
    b.train()
    b(i * 2 + 1)                  # running statistics away from 0 and 1
    b.eval()
    c.eval()
    return b(i), b(i[1]), c(v), b.running_mean


def batchnorm3d_train(v):
    m = nn.BatchNorm3d(2, momentum=0.3)
    m.train()
    y = m(v * 3 + 1)
    return y, m.running_mean, m.running_var, m.weight * 1, m.bias * 1


def batchnorm3d_eval(v):
    m = nn.BatchNorm3d(2, eps=1e-3)
    m.train()
    m(v * 2 - 1)
    m.eval()
    return m(v), m.running_var


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
        self.b = nn.InstanceNorm1d(3)

    def forward(self, i, s):
        return self.a(i), self.b(s), self.b(s[0])


def make():
    return Net()
"""
SEQ, IMG, VOL = rnd(2, 3, 7, seed=1), rnd(2, 3, 4, 5, seed=2), rnd(2, 2, 3, 4, 5, seed=3)


def test_instance_norm():
    for entry, inputs in (("instance_train", [SEQ, IMG, VOL]), ("instance_unbatched", [SEQ, IMG, VOL]),
                          ("instance_eval", [IMG, VOL]), ("instance_fresh", [IMG])):
        _, sites = check_function(SRC, inputs, entry=entry, grad=True, graph=False, rtol=1e-4, atol=1e-5)
        assert not [s.api for s in sites if s.status == TODO]
    # a Cell holding them, in PyNative and GRAPH mode, eval then train (running statistics loaded from torch)
    check_layer(SRC, [IMG, SEQ], rtol=1e-4, atol=1e-5)
    check_layer(SRC, [IMG, SEQ], train=True, rtol=1e-4, atol=1e-5)


def test_batchnorm3d_running_stats():
    for entry in ("batchnorm3d_train", "batchnorm3d_eval"):
        code, sites = check_function(SRC, [VOL], entry=entry, grad=True, graph=False, rtol=1e-4, atol=1e-5)
        assert "bn2d.moving_mean" in code and "bn2d.gamma" in code or entry == "batchnorm3d_eval"
