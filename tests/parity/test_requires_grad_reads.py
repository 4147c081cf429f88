"""`x.requires_grad` read on a tensor (msmigrate/unmapped_tensor_api.py, helper
templates/compat_parts/requires_grad.py): a Parameter's flag; a computed tensor's True inside the train step's
gradient (the converted value_and_grad) and False under no_grad, as torch's. vector-quantize-pytorch guards its
straight-through estimator with it (`input_requires_grad = x.requires_grad`): a MigrationError before. Here
the guarded branch changes the value, so a wrong flag shows in the losses. A compiled graph cannot tell
(compiled once for calls with and without a gradient): MigrationError naming the original line."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import assert_close, load_converted, load_torch  # noqa: E402

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


def test_requires_grad_read_in_a_train_step_and_under_no_grad():
    mod, code, sites = load_converted(SRC)
    ref = load_torch(SRC)
    assert "_ms_compat.requires_grad_of(h, " in code, code
    assert "ms.set_context(mode=ms.PYNATIVE_MODE)" in code      # the run header: only PyNative can answer
    for name in ("losses", "evaluated", "weight_flag", "frozen_flag"):
        got = getattr(mod, name)
        want = ref[name].detach().numpy() if hasattr(ref[name], "detach") else ref[name]
        assert_close(got, want, what=name)
    assert [s.status for s in sites if s.api == "Tensor.requires_grad"] == ["converted-with-difference"]


def test_requires_grad_read_in_a_compiled_graph_names_the_line():
    mod, code, _ = load_converted(SRC)
    from _ms_compat import MigrationError
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(MigrationError, match=r"requires_grad` of a computed tensor at \S+:13 is read inside "
                                                 r"a compiled graph"):
            mod.Gate()(ms.Tensor(np.ones((2, 2), np.float32)))
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
