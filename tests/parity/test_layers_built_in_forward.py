"""A forward that builds a layer and calls it (`nn.Embedding(5, 3)(ids)`, `nn.Linear(4, 2)(x)`,
`nn.LayerNorm(x.shape[-1])(x)`): torch builds a fresh layer at each call, its weights drawn anew and never trained.

Converted in a program that trains, it ran in GRAPH mode: the graph built the layer once, at compile time (the same
weights at every call), or could not build it (nn.Embedding's initializer object: "class
'mindspore.common.initializer.Normal' is not supported in 'construct'", naming no original line). A program whose
forward builds a layer with drawn weights now starts in PYNATIVE mode (ProjectIndex.reaches_layers_built_in_forward),
where each call builds its own, as torch. A LayerNorm's weights are constants (1 and 0): its program stays in GRAPH
mode and computes torch's values."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import load_converted, load_torch, program_weights_match_torch  # noqa: E402

HEAD = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        FRESH
        return out


net = Net()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) * 0.3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 12).reshape(3, 4)
losses = []
for step in range(3):
    opt.zero_grad()
    loss = net(x).pow(2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
weights = list(net.parameters()) + [torch.tensor(losses)]
'''

# the fresh layers' outputs enter the loss times 0: the result is deterministic (torch's weights to compare), while
# each call still builds its layer
DRAWN = HEAD.replace("FRESH", "out = h * 1.5 + 0 * nn.Linear(4, 4)(h) + 0 * nn.Embedding(5, 4)(torch.tensor([0, 2, 4]))")
LAYER_NORM = HEAD.replace("FRESH", "out = nn.LayerNorm(h.shape[-1])(h * 10 + torch.arange(4.0))")
# the same forward twice: torch's fresh Linear gives other values at each call
TWICE = HEAD.replace("FRESH", "out = nn.Linear(4, 2)(h)") + '''
first, second = net(x), net(x)
differs = bool((first - second).abs().max() > 0)
'''


@pytest.mark.parametrize("graph", [False, True], ids=["pynative", "graph"])
def test_layers_with_drawn_weights_built_in_forward(graph):
    code, _ = program_weights_match_torch(DRAWN, graph, what="layers built in forward: ")
    assert "ms.set_context(mode=ms.PYNATIVE_MODE)" in code, code


@pytest.mark.parametrize("graph", [False, True], ids=["pynative", "graph"])
def test_layer_norm_built_in_forward_matches_torch(graph):
    """Weight 1, bias 0: deterministic, so the program keeps GRAPH mode and torch's values."""
    code, _ = program_weights_match_torch(LAYER_NORM, graph, what="LayerNorm built in forward: ")
    assert "ms.set_context(mode=ms.GRAPH_MODE)" in code, code


def test_each_call_builds_its_layer():
    assert load_torch(TWICE)["differs"] is True
    mod, code, _ = load_converted(TWICE)
    try:
        assert mod.differs is True, code
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
