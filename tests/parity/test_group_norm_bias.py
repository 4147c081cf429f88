"""nn.GroupNorm(bias=False) (torch 2.x: a weight and no bias) -> _ms_compat.GroupNorm with beta frozen at zero:
torch and the conversion on the same inputs: outputs and the input gradient (functions, PyNative); a Cell loading
torch's state_dict (which has no bias) strictly, the weight's gradient, and GRAPH mode; beta is not trainable."""
from __future__ import annotations

from msmigrate.registry import TODO
from tests.parity.harness import check_function, check_layer, load_converted, rnd

SRC = """
import torch
import torch.nn as nn


def fn(x, s):
    a = nn.GroupNorm(2, 4, bias=False)
    b = nn.GroupNorm(3, 6, 0.001, bias=False)
    c = nn.GroupNorm(1, 6, affine=False, bias=False)
    nn.init.constant_(a.weight, 1.5)
    return a(x), b(s), c(s)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.g = nn.GroupNorm(2, 4, eps=1e-3, bias=False)
        nn.init.uniform_(self.g.weight, 0.5, 2.0)

    def forward(self, x):
        return self.g(x * 2 + 1)


def make():
    return Net()
"""
IMG, SEQ = rnd(2, 4, 3, 5, seed=1), rnd(3, 6, 7, seed=2)


def test_group_norm_without_bias():
    code, sites = check_function(SRC, [IMG, SEQ], grad=True, graph=False, rtol=1e-4, atol=1e-5)
    assert not [s.api for s in sites if s.status == TODO]
    assert "_ms_compat.GroupNorm(2, 4, bias=False)" in code
    check_layer(SRC, [IMG], train=True, grad=True, rtol=1e-4, atol=1e-5)   # PyNative and GRAPH
    mod, _, _ = load_converted(SRC)
    assert [p.name for p in mod.make().trainable_params()] == ["g.gamma"]   # torch: weight only
