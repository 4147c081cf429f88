"""Code that names torch objects by their canonical (defining) module paths converts like
code that uses the public names: the registry resolves them through msmigrate/torch_aliases.py."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .harness import check_function, check_layer, rnd  # noqa: E402


LAYER_SRC = '''
import torch
import torch.nn.modules.conv
import torch.nn.modules.loss as L
from torch.nn.modules.linear import Linear
from torch.nn.modules.module import Module
from torch.nn.modules.batchnorm import BatchNorm2d
from torch.nn.parameter import Parameter
from torch._tensor import Tensor


class Net(Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.modules.conv.Conv2d(3, 4, 3, padding=1)
        self.bn = BatchNorm2d(4)
        self.fc = Linear(4 * 5 * 5, 6)
        self.scale = Parameter(torch.ones(6) * 0.5)
        self.crit = L.MSELoss()

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        h = self.bn(self.conv(x)).flatten(1)
        out = self.fc(h) * self.scale
        return out, self.crit(out, y)


def make():
    return Net()
'''


def test_canonical_module_paths():
    code, sites = check_layer(LAYER_SRC, [rnd(2, 3, 5, 5), rnd(2, 6, seed=1)], grad=True)
    assert not [s for s in sites if s.status == TODO], [(s.api, s.note) for s in sites if s.status == TODO]
    apis = {s.api for s in sites}
    assert {"torch.nn.Conv2d", "torch.nn.Linear", "torch.nn.MSELoss", "torch.nn.BatchNorm2d"} <= apis, apis
    # state_dict names survive: BatchNorm's parameters were renamed like the public class's
    assert "nn.BatchNorm2d" in code and "nn.Dense" in code


FN_SRC = '''
import torch
import torch.functional
import torch._C._nn


def fn(x, w):
    a = torch.functional.einsum("ij,jk->ik", x, w)
    b, c = torch.functional.split(x, [1, 2], 1)
    d = torch.functional.norm(x)
    e = torch._C._nn.gelu(x)
    f = torch._C._nn.linear(x, w.t())
    g = isinstance(x, torch._tensor.Tensor)
    return a, b, c, d, e, f, g
'''


def test_canonical_function_paths():
    code, sites = check_function(FN_SRC, [rnd(4, 3), rnd(3, 3, seed=1)], grad=True, atol=1e-4, rtol=1e-4)
    assert not [s for s in sites if s.status == TODO], [(s.api, s.note) for s in sites if s.status == TODO]
    assert {"torch.einsum", "torch.split", "torch.norm", "torch.nn.functional.gelu",
            "torch.nn.functional.linear"} <= {s.api for s in sites}


BASES_SRC = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.conv import _ConvNd
from torch.nn.modules.loss import _Loss, _WeightedLoss


class L1Like(_Loss):
    def __init__(self, reduction="mean"):
        super().__init__(reduction=reduction)

    def forward(self, a, b):
        d = (a - b).abs()
        return d.mean() if self.reduction == "mean" else d.sum()


class Legacy(_Loss):
    def __init__(self):
        super().__init__(size_average=False)   # the old flags: reduction 'sum'

    def forward(self, a, b):
        return (a - b).abs().sum()


class WeightedMSE(_WeightedLoss):
    def forward(self, a, b):
        return ((a - b) ** 2 * self.weight).mean()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        self.up = nn.ConvTranspose2d(3, 3, 1)
        self.bn = nn.BatchNorm2d(3)
        self.fc = nn.Linear(3, 3)
        self.l1 = L1Like(reduction="sum")
        self.legacy = Legacy()
        self.wmse = WeightedMSE(weight=torch.tensor([1.0, 2.0, 3.0]))
        self.ce = nn.CrossEntropyLoss()
        self.mse = nn.MSELoss()

    def forward(self, x, y):
        h = self.fc(self.bn(self.up(self.conv(x))).mean((2, 3)))
        return self.l1(h, y) + self.wmse(h, y)


def make():
    return Net()


def kinds(net):
    out = []
    for name, m in net.named_children():
        out.append((name, isinstance(m, _BatchNorm), isinstance(m, _ConvNd), isinstance(m, _Loss),
                    isinstance(m, _WeightedLoss)))
    return out + [net.l1.reduction, net.legacy.reduction]
'''


def test_private_bases():
    # the weight buffer of a _WeightedLoss subclass is in torch's state_dict and loads by name
    code, sites = check_layer(BASES_SRC, [rnd(2, 3, 4, 4), rnd(2, 3, seed=1)], grad=True)
    assert not [s for s in sites if s.status == TODO], [(s.api, s.note) for s in sites if s.status == TODO]
    from .harness import load_converted, load_torch
    ref = load_torch(BASES_SRC)
    mod, _, _ = load_converted(BASES_SRC)
    assert mod.kinds(mod.make()) == ref["kinds"](ref["make"]())
