"""A model copied with copy.deepcopy (an EMA or teacher copy): its parameters() are torch's, buffers left out.
copy.deepcopy of a MindSpore Parameter drops the mark that tells a register_buffer buffer from a parameter, so
`zip(ema.parameters(), model.parameters())` paired the EMA's causal-mask buffer with the model's first weight
and the update raised a broadcast error (a GPT-style EMA training program)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import load_converted, load_torch  # noqa: E402

SRC = '''
import copy
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.tril(torch.ones(3, 3)))
        self.fc = nn.Linear(3, 3)
        self.register_buffer("scale", torch.full((3,), 2.0))

    def forward(self, x):
        return self.fc(x @ self.mask) * self.scale


def make():
    net = Net()
    with torch.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape) * (i + 1))
    return net


def ema_step(ema, model, decay):
    with torch.no_grad():
        for pe, pm in zip(ema.parameters(), model.parameters()):
            pe.mul_(decay).add_(pm.detach(), alpha=1 - decay)


def run(x):
    model = make()
    ema = copy.deepcopy(model)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.5)
    ema_step(ema, model, 0.9)
    names = [n for n, _ in ema.named_parameters()]
    buffers = [n for n, _ in ema.named_buffers()]
    return ema(x), len(list(ema.parameters())), names, buffers
'''
X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)


def test_deep_copied_model_parameters_leave_its_buffers_out():
    import torch
    out_t, n_t, names_t, buffers_t = load_torch(SRC)["run"](torch.from_numpy(X))
    mod, code, sites = load_converted(SRC)
    out_m, n_m, names_m, buffers_m = mod.run(ms.Tensor(X))
    assert (n_m, names_m, buffers_m) == (n_t, names_t, buffers_t) == (2, ["fc.weight", "fc.bias"],
                                                                      ["mask", "scale"])
    np.testing.assert_allclose(out_m.asnumpy(), out_t.detach().numpy(), rtol=1e-5, atol=1e-5)
