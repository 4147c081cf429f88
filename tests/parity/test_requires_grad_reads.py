"""`x.requires_grad` read on a tensor (msmigrate/unmapped_tensor_api.py, helper
templates/compat_parts/requires_grad.py): a Parameter's flag; a computed tensor's True inside the train step's
gradient (the converted value_and_grad) and False under no_grad, as torch's. vector-quantize-pytorch guards its
straight-through estimator with it (`input_requires_grad = x.requires_grad`): a MigrationError before. Here
the guarded branch changes the value, so a wrong flag shows in the losses. A compiled graph cannot tell
(compiled once for calls with and without a gradient): MigrationError naming the original line."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import assert_close, convert_snippet, load_converted, load_torch  # noqa: E402

SRC = '''
import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([[0.5, -1.0], [1.5, 0.25]]))

    def forward(self, x):
        h = x @ self.w
        grad_path = h.requires_grad
        if grad_path:
            h = h * 2.0
        return h


model = Gate()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.tensor([[1.0, 2.0], [-0.5, 0.75]])
losses = []
for _ in range(2):
    opt.zero_grad()
    loss = (model(x) ** 2).sum()
    loss.backward()
    opt.step()
    losses.append(loss.item())
with torch.no_grad():
    evaluated = model(x)
weight_flag = float(model.w.requires_grad)
model.w.requires_grad_(False)
frozen_flag = float(model.w.requires_grad)
losses = torch.tensor(losses)
'''


@pytest.mark.parametrize("mode", ["GRAPH_MODE", "PYNATIVE_MODE"])
def test_requires_grad_read_in_a_train_step_and_under_no_grad(mode, tmp_path, monkeypatch):
    """The flag read in the train step's gradient (compile_step: compiled in GRAPH) and in a forward under
    no_grad (a plain call: compiled in GRAPH), against torch's losses and outputs, in either mode."""
    code, sites = convert_snippet(SRC)
    assert "_ms_compat.requires_grad_of(h, " in code, code
    assert "ms.set_context(mode=ms.GRAPH_MODE)" in code      # the run header: a compiled graph answers it too
    assert "_ms_compat.compile_step(" in code, code
    mod = _load_in_mode(code, mode, tmp_path, monkeypatch)
    ref = load_torch(SRC)
    for name in ("losses", "evaluated", "weight_flag", "frozen_flag"):
        got = getattr(mod, name)
        want = ref[name].detach().numpy() if hasattr(ref[name], "detach") else ref[name]
        assert_close(got, want, what=name)
    assert [s.status for s in sites if s.api == "Tensor.requires_grad"] == ["converted-with-difference"]


def _load_in_mode(code, mode, tmp_path, monkeypatch):
    """Import the converted program with its mode line set to `mode` (PyNative restored by conftest)."""
    code = code.replace("ms.set_context(mode=ms.GRAPH_MODE)", f"ms.set_context(mode=ms.{mode})")
    name = f"ms_grad_flag_{mode.lower()}"
    (tmp_path / f"{name}.py").write_text(code, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    load_converted(SRC)      # the whole _ms_compat helper imported, as for every snippet
    return importlib.import_module(name)


def test_requires_grad_read_under_jit_or_grad_outside_the_train_step_names_the_line():
    """A graph compiled by ms.grad (or ms.jit) may or may not record a gradient: MigrationError naming the
    original line; a direct GRAPH call (a forward) answers False, as PyNative does outside a gradient."""
    mod, code, _ = load_converted(SRC)
    from _ms_compat import MigrationError
    x = ms.Tensor(np.array([[1.0, 2.0], [-0.5, 0.75]], np.float32))
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        gate = mod.Gate()
        assert_close(gate(x), x.asnumpy() @ gate.w.asnumpy(), what="forward")      # not doubled: False
        with pytest.raises(MigrationError, match=r"requires_grad` of a computed tensor at \S+:13 is read inside "
                                                 r"a graph compiled by mindspore.jit or mindspore.grad"):
            ms.grad(gate)(x)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


UNKNOWN_KIND_SRC = '''
import torch
from torch import nn


def doubled(t):
    return t * 2.0


class Holder:
    requires_grad = 7.0


def make_holder():
    return Holder()


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([[0.5, -1.0], [1.5, 0.25]]))

    def forward(self, x):
        h = doubled(x @ self.w)
        if doubled(h).requires_grad:       # a function's result: its kind is unknown to the converter
            h = h * 3.0
        return h


x = torch.tensor([[1.0, 2.0], [-0.5, 0.75]])
model = Gate()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for _ in range(2):
    opt.zero_grad()
    loss = (model(x) ** 2).sum()
    loss.backward()
    opt.step()
    losses.append(loss.item())
losses = torch.tensor(losses)
leaf = torch.ones(3, requires_grad=True)


@torch.inference_mode()
def frozen(t):
    return t * 2.0


inference_flag = float(frozen(leaf).requires_grad)
holder_flag = make_holder().requires_grad
'''


def test_requires_grad_read_on_a_function_result():
    """`f(x).requires_grad` (the receiver's kind unknown to the converter; PaConvert's inference_mode programs
    read it on a decorated function's result): requires_grad_of answers for a tensor and reads any other
    object's own attribute; copied through it raised AttributeError on a MindSpore tensor."""
    mod, code, sites = load_converted(UNKNOWN_KIND_SRC)
    ref = load_torch(UNKNOWN_KIND_SRC)
    assert "_ms_compat.requires_grad_of(doubled(h), " in code, code
    assert "_ms_compat.requires_grad_of(frozen(leaf), " in code, code
    for name in ("losses", "inference_flag", "holder_flag"):
        got = getattr(mod, name)
        want = ref[name].detach().numpy() if hasattr(ref[name], "detach") else ref[name]
        assert_close(got, want, what=name)
