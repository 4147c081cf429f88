"""A tensor's device read inside code GRAPH mode compiles (lucidrains/mlm-pytorch's get_mask_subset_with_prob:
`batch, seq_len, device = *mask.shape, mask.device`, then `torch.rand(..., device=device)`). MindSpore has one
device per context, so there the read is a constant of the context's device: it feeds device= arguments (which
the mappings drop), `.to(device)` and comparisons of the device or its .type, and no longer a run-time Python
object (JIT fallback) in the compiled step."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .parity.harness import program_weights_match_torch  # noqa: E402

DEVICE_READS = """
import torch
import torch.nn as nn
import torch.nn.functional as F


def positions(mask):
    batch, seq_len, device = *mask.shape, mask.device
    return torch.arange(seq_len, device=device).float().expand(batch, seq_len) / seq_len


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 2)

    def forward(self, x):
        device = x.device
        h = self.a(x) + positions(x[..., 0] > 0).unsqueeze(-1)
        h = h + torch.zeros(h.shape, device=x.device) + torch.ones(1, device=device).to(device)
        if x.device.type == "cpu" or device == torch.device("cpu"):
            h = h * 2
        if str(device) != "cuda":
            h = h + 1
        return self.b(h.to(device))


net = Net()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 3)
x = torch.linspace(-1, 1, 24).reshape(2, 3, 4)
y = torch.linspace(1, -1, 12).reshape(2, 3, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for i in range(3):
    opt.zero_grad()
    loss = F.mse_loss(net(x), y)
    loss.backward()
    opt.step()
weights = [p for p in net.parameters()]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_device_reads_in_a_compiled_step(graph):
    """`device = x.device` (and inside a helper function, from a tuple with the shape) feeding device= arguments,
    `.to(device)`, `x.device.type == "cpu"`, `device == torch.device("cpu")` and `str(device)` in a trained
    forward: the parameters after three SGD steps vs torch (before: "'String' object has no attribute 'type'"
    while compiling)."""
    code, _ = program_weights_match_torch(DEVICE_READS, graph)
    assert "device_of(" in code, code


MASKED = """
import torch
import torch.nn as nn


def get_mask(mask, prob):
    batch, seq_len, device = *mask.shape, mask.device
    rand = torch.rand((batch, seq_len), device=device).masked_fill(~mask, -1e9)
    new_mask = torch.zeros((batch, seq_len + 1), device=device)
    return new_mask[:, 1:] + (rand > prob).float()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)

    def forward(self, x):
        return self.a(x) * get_mask(x[..., 0] > 0, 0.5).unsqueeze(-1)


def make():
    return Net()
"""


def test_device_read_compiles_without_the_python_fallback():
    """mlm-pytorch's get_mask_subset_with_prob, reduced: under jit_syntax_level=STRICT (no JIT fallback) the
    compiled forward builds, so the device read is no run-time Python object there (before: a fallback value,
    and the bench's aligned random draws could not run in mlm's compiled step)."""
    import mindspore as ms
    import numpy as np

    from .parity.harness import load_converted

    mod, code, _ = load_converted(MASKED)
    assert "_ms_compat.device_of(mask)" in code, code
    level = ms.get_context("jit_syntax_level")
    ms.set_context(mode=ms.GRAPH_MODE, jit_syntax_level=ms.STRICT)
    try:
        out = mod.make()(ms.Tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)))
        assert out.shape == (2, 3, 4)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE, jit_syntax_level=level)


def test_device_read_in_a_jit_function_of_pynative_mode():
    """ms.jit in PYNATIVE mode: the forward with the device read compiles under strict syntax (no fallback), and
    a read run by Python keeps the tensor's own device."""
    import mindspore as ms
    import numpy as np

    from .parity.harness import load_converted

    mod, _, _ = load_converted(MASKED)
    net = mod.make()
    x = ms.Tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4))
    level = ms.get_context("jit_syntax_level")
    ms.set_context(mode=ms.PYNATIVE_MODE, jit_syntax_level=ms.STRICT)
    try:
        assert ms.jit(net.construct)(x).shape == (2, 3, 4)
        assert str(mod._ms_compat.device_of(x)) == "cpu"          # run by Python: the tensor's own device
        assert mod._ms_compat.device_of(x).type == "cpu"
    finally:
        ms.set_context(jit_syntax_level=level)
