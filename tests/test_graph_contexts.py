"""`with ctx:` in a compiled train step or construct, where ctx is contextlib.nullcontext() or an
autocast (nanoGPT's train.py: `ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(...)`).
Compiled, MindSpore 2.10 enters only jit_class objects ("Only support jit_class instance, but got
PythonObject(type: <class 'contextlib.nullcontext'>...)"); nullcontext becomes _ms_compat.nullcontext,
a jit_class, as autocast is _ms_compat.autocast (its difference reported). Losses and final weights
against torch, in GRAPH and PYNATIVE mode."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import DIFFERENCE  # noqa: E402

from .test_train_loop import _batches, run_both  # noqa: E402

NULLCONTEXT_STEP = """
from contextlib import nullcontext
import torch
import torch.nn as nn
import torch.nn.functional as F

device_type = 'cpu'
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=torch.bfloat16)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        with nullcontext(2.0) as scale:          # the enter result, inside construct
            h = torch.tanh(self.fc1(x)) * scale
        return self.fc2(h)


def make():
    model = Net()
    return {"model": model, "optimizer": torch.optim.SGD(model.parameters(), lr=0.1)}


def train(objs, batches):
    model, optimizer = objs["model"], objs["optimizer"]
    losses = []
    for x, y in batches:
        with ctx:
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
"""


def test_with_nullcontext_or_autocast_in_compiled_step():
    code, sites, results = run_both(NULLCONTEXT_STEP, _batches(n=2))
    assert "ctx = _ms_compat.nullcontext() if device_type == 'cpu' else _ms_compat.autocast(" in code
    assert "with _ms_compat.nullcontext(2.0) as scale:" in code
    assert "    with ctx:" in code.split("def forward_fn")[1]      # entered inside the compiled step
    autocast = [s for s in sites if s.api == "torch.amp.autocast"]
    assert autocast and all(s.status == DIFFERENCE and "float32" in s.note for s in autocast)
    assert len(results["graph"]) == 2
