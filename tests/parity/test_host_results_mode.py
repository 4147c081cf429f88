"""A training program whose network calls a host library on a tensor in its forward (DETR's HungarianMatcher:
SciPy's `linear_sum_assignment(c[i])`; `np.sqrt(h.sum().item())`): the call is `_ms_compat.host_result(...)`
(msmigrate/host_draws.py), which computes in PyNative and stops a compiled graph with MigrationError.

Converted, the program started in GRAPH mode, so it stopped at its first step with that MigrationError
(bench/real_world.py's DETR: models/matcher.py:81) although op by op it computes what torch computes. A
program whose forward reaches such a call now starts in PYNATIVE mode (ProjectIndex.reaches_host_results), as
one whose forward shapes itself with `.tolist()`; forced into GRAPH mode it still stops with the MigrationError
naming the original line."""
from __future__ import annotations

import importlib
import re

import pytest

pytest.importorskip("torch")
pytest.importorskip("scipy")
ms = pytest.importorskip("mindspore")

from .harness import _TMP, convert_snippet, load_converted, program_weights_match_torch  # noqa: E402

MATCHED = '''
import torch
import torch.nn as nn
from scipy.optimize import linear_sum_assignment


class Matcher(nn.Module):
    @torch.no_grad()
    def forward(self, pred, target):
        cost = torch.cdist(pred, target, p=1)
        rows, cols = linear_sum_assignment(cost)
        return torch.as_tensor(rows, dtype=torch.int64), torch.as_tensor(cols, dtype=torch.int64)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.matcher = Matcher()

    def forward(self, x, target):
        pred = self.fc(x)
        rows, cols = self.matcher(pred, target)
        return (pred[rows] - target[cols]).abs().sum()


net = Net()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-0.6, 0.5, p.numel()).reshape(p.shape) * (1 + 0.3 * i))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
x = torch.tensor([[0.3, -1.2, 2.0], [1.5, 0.1, -0.7], [-0.4, 0.9, 0.2], [0.8, 0.5, -1.1]])
target = torch.tensor([[1.0, -0.5], [-0.3, 0.2], [0.6, 0.9], [0.0, 1.2]])
losses = []
for step in range(3):
    opt.zero_grad()
    loss = net(x, target)
    loss.backward()
    opt.step()
    losses.append(loss.item())
weights = list(net.parameters()) + [torch.tensor(losses)]
'''

SCALED = '''
import numpy as np
import torch
import torch.nn as nn


class Scaled(nn.Module):
    def forward(self, h):
        scale = np.sqrt(h.detach().abs().sum().item())
        return h / scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.scaled = Scaled()

    def forward(self, x):
        return self.scaled(self.fc(x)).pow(2).sum()


net = Net()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-0.6, 0.5, p.numel()).reshape(p.shape) * (1 + 0.3 * i))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
x = torch.tensor([[0.3, -1.2, 2.0], [1.5, 0.1, -0.7], [-0.4, 0.9, 0.2], [0.8, 0.5, -1.1]])
losses = []
for step in range(3):
    opt.zero_grad()
    loss = net(x)
    loss.backward()
    opt.step()
    losses.append(loss.item())
weights = list(net.parameters()) + [torch.tensor(losses)]
'''

PROGRAMS = {"scipy": (MATCHED, "        rows, cols = linear_sum_assignment(cost)", "scipy.optimize.linear_sum_assignment"),
            "numpy_of_item": (SCALED, "        scale = np.sqrt(h.detach().abs().sum().item())", "numpy.sqrt")}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_host_call_in_forward_starts_the_program_in_pynative(name):
    src = PROGRAMS[name][0]
    code, _ = program_weights_match_torch(src, graph=False, what=f"{name}: ")
    assert "_ms_compat.host_result(" in code, code
    assert "ms.set_context(mode=ms.PYNATIVE_MODE)" in code, code


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_forced_into_graph_mode_it_names_the_line(name):
    src, line_text, api = PROGRAMS[name]
    code, _ = convert_snippet(src)
    forced, n = re.subn(r"ms\.set_context\(mode=ms\.PYNATIVE_MODE\)", "ms.set_context(mode=ms.GRAPH_MODE)", code)
    assert n == 1, code
    path = _TMP / f"ms_forced_graph_{name}.py"
    path.write_text(forced, encoding="utf-8")
    importlib.invalidate_caches()
    load_converted("x = 1\n")     # the tree's helper module in place
    line = src.splitlines().index(line_text) + 1
    try:
        with pytest.raises(Exception) as err:
            importlib.import_module(path.stem)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert type(err.value).__name__ == "MigrationError", f"{type(err.value).__name__}: {err.value}"
    assert f"{api} at " in str(err.value) and f":{line} " in str(err.value), err.value
