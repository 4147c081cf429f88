"""A train step written on one line (`optimizer.zero_grad(); loss.backward(); optimizer.step()`) or with two
optimizers stepped on one line: each call becomes a statement of its own, so the train-step analysis finds the
step (it stopped with "no optimizer.step() follows this backward()" before), and the weights after a few steps
match torch's, PYNATIVE and GRAPH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .parity.harness import program_weights_match_torch  # noqa: E402

TWO_LOSSES_ONE_LINE = """
import torch
import torch.nn as nn

shared = nn.Linear(6, 8)
head_a = nn.Linear(8, 1)
head_b = nn.Linear(8, 3)
with torch.no_grad():
    for i, p in enumerate([shared.weight, shared.bias, head_a.weight, head_a.bias, head_b.weight, head_b.bias]):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + 0.1 * i))
opt_a = torch.optim.SGD(list(shared.parameters()) + list(head_a.parameters()), lr=0.1)
opt_b = torch.optim.SGD(head_b.parameters(), lr=0.1, momentum=0.9)
x = torch.linspace(-1, 1, 60).reshape(10, 6)
ya = torch.linspace(0, 1, 10).reshape(10, 1)
yb = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2, 0])
for step in range(3):
    h = torch.tanh(shared(x))
    la = nn.functional.mse_loss(head_a(h), ya)
    lb = nn.functional.cross_entropy(head_b(h), yb)
    opt_a.zero_grad(); opt_b.zero_grad()
    la.backward(retain_graph=True); lb.backward()   # the shared layer gets both losses' gradients
    opt_a.step(); opt_b.step()
weights = [shared.weight, shared.bias, head_a.weight, head_b.weight, head_b.bias]
"""

ONE_LINE_STEP = """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.4, 0.6, p.numel()).reshape(p.shape) * (1 - 0.2 * i))
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
x = torch.linspace(-1, 1, 24).reshape(6, 4)
y = torch.linspace(1, -1, 12).reshape(6, 2)


def train(epochs):
    for _ in range(epochs):
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad(); loss.backward(); optimizer.step()  # one step per line


train(3)
weights = [p for p in model.parameters()]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_two_optimizers_stepped_on_one_line(graph):
    code, _ = program_weights_match_torch(TWO_LOSSES_ONE_LINE, graph)
    assert "TODO" not in code and "backward" not in code, code
    assert "return la + lb" in code, code      # both backward()s: the gradient of the sum


@pytest.mark.parametrize("graph", [False, True])
def test_one_line_train_step(graph):
    code, _ = program_weights_match_torch(ONE_LINE_STEP, graph)
    assert "TODO" not in code and "zero_grad" not in code, code
    assert "loss = train_step()" in code, code
