"""`m(input=x)` on a torch layer (msmigrate/layer_calls.py): torch names every layer's first forward argument
`input`, the MindSpore Cell it becomes names it otherwise, so the keyword becomes the first positional argument.
torch and the conversion on the same inputs (values and input gradient), the layer held by a local name, a
module-level name and a Module attribute; a user function's own `input=` keyword stays."""
from __future__ import annotations

from tests.parity.harness import check_function, check_layer, rnd

SRC = """
import torch
import torch.nn as nn

norm = nn.LayerNorm(4)


def scale(input, k=2.0):
    return input * k


def fn(x, y):
    bn = nn.BatchNorm1d(3, eps=0.5)
    bn.eval()
    act = nn.Softplus(beta=2.0)
    loss = nn.SmoothL1Loss(beta=0.5)
    return (bn(input=x), norm(input=y), act(input=y), loss(input=y, target=y * 0.5),
            scale(input=y, k=3.0))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(4, eps=1e-3)
        self.pool = nn.AvgPool1d(2)

    def forward(self, y):
        return self.pool(input=self.ln(input=y))


def make():
    return Net()
"""


def test_keyword_input():
    x, y = rnd(5, 3, 4, seed=1), rnd(2, 3, 4, seed=2)
    code, _ = check_function(SRC, [x, y], grad=True, graph=False)
    assert "(input=" not in code.replace("scale(input=", ""), code
    assert "scale(input=y" in code
    check_layer(SRC, [y])
