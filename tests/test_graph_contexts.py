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
    net = Net()
    return {"model": net, "optimizer": torch.optim.Adam(net.parameters(), lr=0.01)}


def train(objs, batches):
    losses = []
    model, optimizer = objs["model"], objs["optimizer"]
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


ENTERED_IN_CONSTRUCT = """
import contextlib
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, ctx):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.ctx = ctx

    def forward(self, x):
        with self.ctx:
            y = self.fc(x)
        return y


def make_null():
    return Net(contextlib.nullcontext())


def make_other():
    return Net(contextlib.suppress(KeyError))
"""


def test_with_over_an_object_in_construct_is_checked_when_compiled():
    import mindspore as ms
    import numpy as np
    import torch
    from msmigrate.weights import load_torch_state_dict

    from .parity.harness import load_converted, load_torch
    mod, code, _ = load_converted(ENTERED_IN_CONSTRUCT)
    assert "_ms_compat.graph_context(self.ctx, " in code.split("def construct")[1].split("with self.ctx:")[0]
    torch.manual_seed(0)
    t_net = load_torch(ENTERED_IN_CONSTRUCT)["make_null"]()
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    expected = t_net(torch.from_numpy(x)).detach().numpy()
    sd = {k: v.detach().numpy() for k, v in t_net.state_dict().items()}
    try:
        for mode in (ms.GRAPH_MODE, ms.PYNATIVE_MODE):
            ms.set_context(mode=mode)
            net = mod.make_null()         # _ms_compat.nullcontext, a jit_class: entered in GRAPH mode too
            load_torch_state_dict(net, sd, strict=True)
            np.testing.assert_allclose(net(ms.Tensor(x)).asnumpy(), expected, rtol=1e-5, atol=1e-6)
        other = mod.make_other()          # contextlib.suppress: runs in PyNative ...
        load_torch_state_dict(other, sd, strict=True)
        np.testing.assert_allclose(other(ms.Tensor(x)).asnumpy(), expected, rtol=1e-5, atol=1e-6)
        ms.set_context(mode=ms.GRAPH_MODE)    # ... and stops, naming the line, when compiled
        with pytest.raises(Exception, match=r"the `with` at \S+:14 enters an object that is no mindspore.jit_class"):
            mod.make_other()(ms.Tensor(x))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
