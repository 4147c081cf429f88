"""A training program whose network calls a host library on a tensor in its forward (DETR's HungarianMatcher:
SciPy's `linear_sum_assignment(c[i])`; `np.sqrt(h.sum().item())`): the call is `_ms_compat.host_result(...)`
(msmigrate/host_draws.py), which computes in PyNative and stops a compiled graph with MigrationError.

Converted, the program started in GRAPH mode, so it stopped at its first step with that MigrationError
(bench/real_world.py's DETR: models/matcher.py:81) although op by op it computes what torch computes. A
program whose forward reaches such a call now starts in PYNATIVE mode (ProjectIndex.reaches_host_results), as
one whose forward shapes itself with `.tolist()`; forced into GRAPH mode, SciPy's call still stops with the
MigrationError naming the original line, and a cell reading `.item()` runs op by op there (heldout51)."""
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


def _forced_into_graph_mode(name):
    """The converted program with its mode line turned to GRAPH_MODE, imported (run); its module."""
    code, _ = convert_snippet(PROGRAMS[name][0])
    forced, n = re.subn(r"ms\.set_context\(mode=ms\.PYNATIVE_MODE\)", "ms.set_context(mode=ms.GRAPH_MODE)", code)
    assert n == 1, code
    path = _TMP / f"ms_forced_graph_{name}.py"
    path.write_text(forced, encoding="utf-8")
    importlib.invalidate_caches()
    load_converted("x = 1\n")     # the tree's helper module in place
    try:
        return importlib.import_module(path.stem)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_forced_into_graph_mode_it_names_the_line():
    src, line_text, api = PROGRAMS["scipy"]
    line = src.splitlines().index(line_text) + 1
    with pytest.raises(Exception) as err:
        _forced_into_graph_mode("scipy")
    assert type(err.value).__name__ == "MigrationError", f"{type(err.value).__name__}: {err.value}"
    assert f"{api} at " in str(err.value) and f":{line} " in str(err.value), err.value


def test_forced_into_graph_mode_a_read_of_item_runs_op_by_op():
    """`np.sqrt(h.detach().abs().sum().item())` in a cell's forward: forced into GRAPH mode, the cell reading
    `.item()` runs op by op, and so does the train step reaching it (graph_constants.reads_on_host and
    compat_parts/train.py, heldout51; before, it stopped with MigrationError naming the line): torch's weights."""
    from .harness import assert_close, load_torch
    mod = _forced_into_graph_mode("numpy_of_item")
    want = load_torch(PROGRAMS["numpy_of_item"][0])["weights"]
    assert len(mod.weights) == len(want)
    for i, (got, ref) in enumerate(zip(mod.weights, want)):
        assert_close(got, ref.detach(), rtol=1e-5, atol=2e-5, what=f"weight {i}")
