"""Plain values a compiled train step reads, changed by the program between steps (issue 12, first rule).

A MindSpore graph takes the plain values it reads as constants: a cell's `self.temperature`, its training flag,
a number the step closes over. MindSpore 2.10 does not compile the graph again when the program changes them, so
the converted step (GRAPH mode, converted programs' default) kept computing with the old values, silently: a
temperature annealed by the loop, `model.eval()` on a part of the network, a flag turning an auxiliary loss on.
The compiled step (_ms_compat.StepCell) compares them with its graph's on each call and compiles for new values,
or runs op by op once they keep changing. Each program runs in torch and converted, in GRAPH and PYNATIVE mode,
from the same weights and inputs; the losses of every step and the final weights must agree."""
from __future__ import annotations

import hashlib
import importlib
import sys
import warnings

import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .parity import harness as H  # noqa: E402

NET = '''
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 6)
        self.drop = torch.nn.Dropout(0.5)
        self.out = torch.nn.Linear(6, 2)
        self.temperature = 1.0
        self.aux = False

    def forward(self, x):
        h = self.drop(self.a(x).clamp(min=0))
        y = self.out(h) / self.temperature
        if self.aux:
            y = y + h.mean()
        return y


model = Net()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) * 0.3)
x = torch.linspace(-1, 1, 24).reshape(6, 4)
y = torch.linspace(0, 1, 12).reshape(6, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
'''

TAIL = '''
weights = list(model.parameters()) + [torch.tensor(losses)]
'''


def run_both(src: str, mode: str):
    """The converted program run in `mode` and the torch program: their `weights` lists agree. Returns the
    warnings the converted run gave."""
    code, sites = H.convert_snippet(src)
    H.no_todo(sites)
    if "ms.set_context(mode=ms.GRAPH_MODE)" in code:    # a program that trains
        code = code.replace("ms.set_context(mode=ms.GRAPH_MODE)", f"ms.set_context(mode=ms.{mode})")
    else:
        code = code.replace("import _ms_compat\n", f"import _ms_compat\nms.set_context(mode=ms.{mode})\n", 1)
    assert f"ms.set_context(mode=ms.{mode})" in code, code
    name = "ms_constants_" + hashlib.sha1(code.encode()).hexdigest()[:16]
    (H._TMP / f"{name}.py").write_text(code, encoding="utf-8")
    H.load_converted("x = 1\n")     # the whole helper imported as _ms_compat
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            mod = importlib.import_module(name)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    want = H.load_torch(src)["weights"]
    assert len(mod.weights) == len(want)
    for i, (got, ref) in enumerate(zip(mod.weights, want)):
        H.assert_close(got, ref.detach(), rtol=1e-5, atol=2e-5,
                       what=f"{mode} {'losses' if i == len(want) - 1 else f'parameter {i}'}")
    return [str(w.message) for w in seen]


MODES = pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])


@MODES
def test_an_attribute_changed_once_per_epoch(mode):
    """A temperature raised every 20 steps (an epoch): each value gets its graph (torch's losses at every step)."""
    src = NET + '''
model.drop.p = 0.0
for step in range(45):
    if step % 20 == 0:
        model.temperature = 1.0 + step / 10
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
''' + TAIL
    found = run_both(src, mode)
    assert not [w for w in found if "op by op" in w], found


@MODES
def test_a_flag_and_eval_toggled_between_steps(mode):
    """A flag turning an extra term on, and a part of the network put in eval mode (its dropout off) and back:
    the values alternate, and the graphs compiled for them are run again."""
    src = NET + '''
for step in range(8):
    model.aux = step % 2 == 1
    if step % 4 < 2:
        model.drop.eval()
    else:
        model.drop.train()
        model.drop.p = 0.0
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
''' + TAIL
    run_both(src, mode)


@pytest.mark.parametrize("mode", ["GRAPH_MODE"])
def test_a_value_changed_on_every_step_runs_op_by_op(mode):
    """A temperature annealed on every step: after a few graphs the step runs op by op, with a warning naming
    what changed, and still computes torch's losses."""
    src = NET + '''
model.drop.p = 0.0
for step in range(30):
    model.temperature = 1.0 + 0.1 * step
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
''' + TAIL
    found = run_both(src, mode)
    assert [w for w in found if "op by op" in w and "temperature" in w], found


@MODES
def test_a_number_the_loop_rebinds(mode):
    """A weight the loop computes each epoch and the loss reads from the enclosing function (a KL weight
    warm-up): the step reads the current one."""
    src = NET + '''
def train():
    beta = 0.0
    for step in range(6):
        if step % 3 == 0:
            beta = step / 6
        opt.zero_grad()
        out = model(x)
        loss = ((out - y) ** 2).mean() + beta * out.abs().mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())


model.drop.p = 0.0
train()
''' + TAIL
    run_both(src, mode)


@MODES
def test_a_model_called_directly_reads_its_current_attributes(mode):
    """The model called outside a train step (evaluation, sampling) in GRAPH mode compiles as its own graph: a
    temperature set between calls, a flag, a sub-layer's setting, are read as torch reads them."""
    src = NET + '''
outs = []
model.eval()
with torch.no_grad():
    for t in (1.0, 2.0, 1.0, 4.0):
        model.temperature = t
        outs.append(model(x))
    model.aux = True
    outs.append(model(x))
    model.drop.p = 0.0
    model.drop.train()
    outs.append(model(x))
losses = [float(o.sum()) for o in outs]
''' + TAIL
    run_both(src, mode)


@MODES
def test_a_number_the_loop_increments(mode):
    """`beta = min(1.0, beta + 0.25)` each step (a warm-up written from its own value): the loop keeps it, the
    step takes the current value."""
    src = NET + '''
def train():
    beta = 0.0
    for step in range(5):
        beta = min(1.0, beta + 0.25)
        opt.zero_grad()
        out = model(x)
        loss = ((out - y) ** 2).mean() + beta * out.abs().mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())


model.drop.p = 0.0
train()
''' + TAIL
    run_both(src, mode)


@MODES
def test_a_module_setting_the_forward_reads(mode):
    """A module-level setting read by a function the forward calls, changed by the program between calls (a
    sampling temperature kept as a global): read as torch reads it."""
    src = '''
import torch

SCALE = 1.0


def scaled(h):
    return h * SCALE


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 2)

    def forward(self, x):
        return scaled(self.a(x))


model = Net()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape))
x = torch.linspace(-1, 1, 8).reshape(2, 4)
outs = []
with torch.no_grad():
    for s in (1.0, 3.0, 1.0, 0.5):
        SCALE = s
        outs.append(model(x))
losses = [float(o.sum()) for o in outs]
''' + TAIL
    run_both(src, mode)
