"""Constructs found by bench/real_world.py --set heldout16 (bench/_rw_heldout16.py: rtqichen/torchdiffeq's odeint,
odeint_adjoint and examples) in a library the converter was never run on, each reduced to a minimal torch snippet
of our own run against its conversion."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

import numpy as np  # noqa: E402

from msmigrate.cli import main  # noqa: E402
from tests.treeutil import run_printed, write_tree  # noqa: E402

from .parity.harness import program_weights_match_torch  # noqa: E402

# ------------------------------------------------------------------ @torch.no_grad() results inside a train step
NO_GRAD_RESULTS = """
import torch
import torch.nn as nn


@torch.no_grad()
def next_scale(error, last):
    # an adaptive step size: a function of the error estimate that torch's gradient does not see
    return last * torch.clamp(0.9 / error.abs().sqrt(), 0.2, 5.0)


class Teacher(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    @torch.no_grad()
    def forward(self, x):
        return self.lin(x).tanh(), x.sum()


model = nn.Linear(3, 2)
teacher = Teacher()
with torch.no_grad():
    model.weight.copy_(torch.linspace(-1, 1, 6).reshape(2, 3))
    model.bias.fill_(0.1)
    teacher.lin.weight.copy_(torch.linspace(1, -1, 4).reshape(2, 2))
    teacher.lin.bias.fill_(-0.2)
teacher.lin.weight.requires_grad_(False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.linspace(-2, 2, 12).reshape(4, 3)
scale = torch.tensor(0.5)
for step in range(3):
    out = model(x)
    scale = next_scale(((out - 0.3) ** 2).mean(), scale)
    target, _ = teacher(out)
    loss = ((out * scale - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
weights = [model.weight, model.bias]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_no_grad_decorated_results_carry_no_gradient(graph):
    """torchdiffeq's `@torch.no_grad() def _optimal_step_size(...)`: the decorator was removed ("MindSpore records
    gradients only inside grad/value_and_grad") and the train step differentiated through the step size the
    function returns (odeint's dopri5/bosh3 gradients off by 1e-3, silently). Now the results of a function (or
    forward) decorated with no_grad go through _ms_compat.no_grad_value: the parameters after three SGD steps
    match torch, PYNATIVE and GRAPH."""
    code, _ = program_weights_match_torch(NO_GRAD_RESULTS, graph)
    assert "return _ms_compat.no_grad_value(last * " in code, code
    assert "return _ms_compat.no_grad_value((_ms_compat" in code or "no_grad_value((self.lin" in code, code


# ------------------------------------------------------------------ torch.Size.numel() of shapes kept in a list
SHAPE_NUMEL = """
import torch
import torch.nn as nn


def flat_to_shape(flat, shapes):
    parts, total = [], 0
    for shape in shapes:
        nxt = total + shape.numel()
        parts.append(flat[..., total:nxt].view((*shape,)))
        total = nxt
    return tuple(parts)


class Split(nn.Module):
    def __init__(self, shapes):
        super().__init__()
        self.shapes = shapes
        self.lin = nn.Linear(5, 5)

    def forward(self, x):
        a, b = flat_to_shape(self.lin(x), self.shapes)
        return (a * 2).sum() + (b ** 2).sum() + torch.Size([2, 3]).numel()


y = (torch.zeros(2), torch.zeros(3, 1))
model = Split([t.shape for t in y])
with torch.no_grad():
    model.lin.weight.copy_(torch.linspace(-1, 1, 25).reshape(5, 5))
    model.lin.bias.fill_(0.1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.linspace(-1, 1, 5)
for step in range(3):
    loss = model(x)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
weights = [model.lin.weight, model.lin.bias]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_numel_of_a_shape(graph):
    """torchdiffeq's _flat_to_shape: `total + shape.numel()` over the shapes of a tuple state (`[y.shape for y in
    y0]`). A torch.Size is a tuple once converted: `shape.numel()` stopped with AttributeError ('tuple' object has
    no attribute 'numel'). On a receiver of unknown type `.numel()` is now `_ms_compat.numel(...)` (a tensor's
    numel, a shape's product): the parameters after three SGD steps vs torch, PYNATIVE and GRAPH."""
    code, _ = program_weights_match_torch(SHAPE_NUMEL, graph)
    assert "total + _ms_compat.numel(shape)" in code, code


# ------------------------------------------------------------------ a library's no_grad block, another file's train step
LIBRARY = """\
    import torch


    def next_scale(error, last):
        # a helper of a library whose files never call backward
        with torch.no_grad():
            factor = torch.clamp(0.9 / error.abs().sqrt(), 0.2, 5.0)
            scaled = last * factor
        return scaled
"""

TRAIN = """\
    import torch
    import torch.nn as nn
    from solver import next_scale

    model = nn.Linear(3, 2)
    with torch.no_grad():
        model.weight.copy_(torch.linspace(-1, 1, 6).reshape(2, 3))
        model.bias.fill_(0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.linspace(-2, 2, 12).reshape(4, 3)
    scale = torch.tensor(0.5)
    for step in range(3):
        out = model(x)
        scale = next_scale(((out - 0.3) ** 2).mean(), scale)
        loss = ((out * scale - 0.2) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("OUT", [float(v) for v in model.weight.detach().reshape(-1)] + [float(v) for v in model.bias.detach()])
"""


def test_no_grad_block_of_a_library_function(tmp_path):
    """The same step size computed under `with torch.no_grad():` in a function of a library file that never calls
    backward (torchdiffeq's _nextafter holds one), called from another file's train step. The block's names were
    rebound through _ms_compat.no_grad_value only in files that call backward, so the step differentiated through
    `scaled`, silently. Now every no_grad block inside a function is: the weights after three steps vs torch,
    PYNATIVE and GRAPH."""
    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {"solver.py": LIBRARY, "train.py": TRAIN})
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    assert "scaled = _ms_compat.no_grad_value(scaled)" in (out / "solver.py").read_text()
    want = run_printed(src, "torch")
    for mode in ("pynative", "graph"):
        got = run_printed(out, "ms", mode)
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-6, err_msg=mode)
