"""Code that names torch objects by their canonical (defining) module paths converts like
code that uses the public names: the registry resolves them through msmigrate/torch_aliases.py."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .harness import check_function, check_layer  # noqa: E402


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


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
