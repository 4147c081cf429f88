"""An in-place result returned where an `inplace` flag chose it (msmigrate/inplace_flag_returns.py): timm's and
geffnet's activations, `return x.mul_(x.sigmoid()) if inplace else x.mul(x.sigmoid())`, `if inplace: return
x.add_(3.).clamp_(0., 6.).div_(6.)`, an activation module's `return x.sigmoid_() if self.inplace else x.sigmoid()`.
Before: each in-place call was a raising TODO, so every network built with these activations stopped. Now the
value returned is the out-of-place result; a caller in the same file that reads its tensor after the call still
stops with MigrationError (torch changed that tensor)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import check_layer, load_converted, no_todo, rnd  # noqa: E402

SRC = '''
import torch
from torch import nn
from torch.nn import functional as F


def swish(x, inplace: bool = False):
    return x.mul_(x.sigmoid()) if inplace else x.mul(x.sigmoid())


def hard_sigmoid(x, inplace: bool = False):
    if inplace:
        return x.add_(3.).clamp_(0., 6.).div_(6.)
    else:
        return F.relu6(x + 3.) / 6.


def hard_swish(x, inplace: bool = False):
    inner = F.relu6(x + 3.).div_(6.)
    return x.mul_(inner) if inplace else x.mul(inner)


class Sigmoid(nn.Module):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return x.sigmoid_() if self.inplace else x.sigmoid()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 6)
        self.b = nn.Linear(6, 6)
        self.c = nn.Linear(6, 3)
        self.gate = Sigmoid(inplace=True)

    def forward(self, x):
        x = self.a(x)
        x = swish(x, inplace=True)
        h = self.b(x)
        x = hard_sigmoid(h, True) + hard_swish(x, inplace=True)
        return self.gate(self.c(x)) + hard_sigmoid(x).sum(-1, keepdim=True)


class Gated(nn.Module):
    """In-place forms torch's autograd can differentiate (each result, not the input, is saved)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 6)
        self.b = nn.Linear(6, 3)
        self.gate = Sigmoid(inplace=True)

    def forward(self, x):
        h = self.a(x)
        x = hard_sigmoid(h, inplace=True)
        return self.gate(self.b(x)) + hard_sigmoid(x).sum(-1, keepdim=True)


def make():
    return Net()


def make_gated():
    return Gated()


def reads_after(h):
    y = swish(h, True)
    return y + h
'''


def test_flagged_in_place_returns_match_torch():
    """Values in both modes of a network whose activations return their input changed in place, and gradients
    where torch's autograd allows the in-place forms."""
    code, sites = check_layer(SRC, [rnd(5, 4) * 3])
    check_layer(SRC, [rnd(5, 4) * 3], entry="make_gated", grad=True)
    assert "return x.mul(" in code and "x = ops.add(x, 3.)" in code, code
    assert "def reads_after" in code
    # the caller reading `h` after swish changed it in torch is the one TODO left
    todo = [s for s in sites if s.status == "todo"]
    assert len(todo) == 1 and "reads_after" not in todo[0].api, sites


def test_a_caller_reading_its_tensor_afterwards_still_stops():
    import numpy as np
    mod, code, _ = load_converted(SRC)
    with pytest.raises(Exception, match="MigrationError|changes the argument"):
        mod.reads_after(ms.Tensor(np.ones((2, 3), np.float32)))
