"""Constant padding in a compiled train step. MindSpore 2.10 CPU's constant pad kernel (ops.pad, the ConstantPad
Cells, mint's pad) gives the layers before it a wrong gradient from a compiled step's second run on, and then zero,
silently. F.pad / the padding layers / LocalResponseNorm went through _ms_compat.pad_constant (concatenation) before
(tests/test_heldout9_programs.py::test_padding_in_a_compiled_step); here the other places a gradient flows through
padding: F.local_response_norm, conv_transpose3d's output_padding beyond
padding, torch.stft (pad_mode='constant', a short window) and torch.istft (length beyond the signal), the traced
route's constant_pad_nd and pooling padding, Keras' ZeroPadding2D. reflect / replicate / circular padding (PadV3 in
those modes, MirrorPad) were measured right in a compiled step: kept, with a program here that would show it."""
from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .parity.harness import program_weights_match_torch  # noqa: E402

_TRAIN = """
net = Net()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 3)
x = torch.linspace(-1, 1, 24).reshape(2, 3, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for i in range(3):
    opt.zero_grad()
    loss = net(x)
    loss.backward()
    opt.step()
weights = [p for p in net.parameters()]
"""

NORMS_AND_CONV = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 8)
        self.b = nn.Linear(8, 4)
        self.w = nn.Parameter(torch.zeros(3, 2, 2, 2, 2))

    def forward(self, x):
        h = self.a(x)                                              # (2, 3, 8)
        h = h + F.local_response_norm(h, 3, alpha=0.5)             # pads the channels' squares
        g = h.reshape(2, 3, 2, 4)
        v = F.conv_transpose3d(g.reshape(2, 3, 2, 2, 2), self.w, stride=2, padding=0, output_padding=1)
        return (self.b(g.reshape(2, 3, 8)) ** 2).mean() + (v * v).mean() + v[:, :, -1].mean()
""" + _TRAIN

SPECTRA = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 8)
        self.window = nn.Parameter(torch.ones(6))
        self.synthesis = nn.Parameter(torch.ones(8))

    def forward(self, x):
        h = self.a(x).reshape(2, 24)
        s = torch.stft(h, 8, 2, 6, self.window, center=True, pad_mode="constant", return_complex=True)
        r = torch.stft(h, 8, 3, window=self.synthesis, center=True, pad_mode="reflect", return_complex=True)
        return (s.abs() ** 2).mean() + s.real[:, 1:3].sum() + (r.abs() ** 2).mean()
""" + _TRAIN

MODES = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.rep = nn.ReplicationPad2d((1, 0, 2, 1))
        self.ref = nn.ReflectionPad1d((2, 1))
        self.cir = nn.CircularPad2d((1, 2, 0, 1))
        self.rep3 = nn.ReplicationPad3d(1)

    def forward(self, x):
        h = self.a(x)                                               # (2, 3, 4)
        p = F.pad(h, (1, 2), mode="reflect") + F.pad(h, (2, 1), mode="replicate") + F.pad(h, (1, 2), mode="circular")
        q = F.pad(h.unsqueeze(0), (1, 1, 2, 0), mode="reflect")
        r = (self.rep(h.unsqueeze(1)) ** 2).mean() + (self.cir(h.unsqueeze(1)) ** 3).mean()
        t = self.rep3(h.reshape(1, 2, 3, 2, 2))
        return (p * p).mean() + (q ** 3).mean() + r + (self.ref(h) ** 2).mean() + (t ** 3).mean() + p[..., 0].sum()
""" + _TRAIN


@pytest.mark.parametrize("graph", [False, True])
def test_norms_and_transposed_conv_padding_in_a_compiled_step(graph):
    """F.local_response_norm (its inline form padded the channels' squares with ops.pad) and F.conv_transpose3d with output_padding beyond padding (padded the output): now through
    _ms_compat.pad_constant. The parameters after three SGD steps, PYNATIVE and GRAPH, vs torch."""
    code, _ = program_weights_match_torch(NORMS_AND_CONV, graph)
    assert "_ms_compat.pad_constant(" in code and "ops.pad(" not in code, code


@pytest.mark.parametrize("graph", [False, True])
def test_stft_istft_padding_in_a_compiled_step(graph):
    """torch.stft with pad_mode='constant' and a window shorter than n_fft (both padded; reflect too): the
    windows parameters, so every pad is on the gradient's path. Parameters after three SGD steps, PYNATIVE and
    GRAPH, vs torch. (torch.istft's zeros past the signal go the same way, but its NOLA check branches on a
    tensor, so a step holding it runs op by op: no compiled step to test.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)       # the step compiles (no fallback to op by op)
        program_weights_match_torch(SPECTRA, graph)


@pytest.mark.parametrize("graph", [False, True])
def test_reflect_replicate_circular_padding_in_a_compiled_step(graph):
    """reflect / replicate / circular padding (F.pad, the Replication/Reflection/CircularPad layers, reflect on a
    4-d input): MindSpore's PadV3 in those modes and MirrorPad give the right gradient in a compiled step (measured
    on 2.10 CPU; only the constant mode is wrong there), so they stay; the parameters after three SGD steps vs
    torch keep that checked."""
    program_weights_match_torch(MODES, graph)


def test_keras_zero_padding_helper_in_a_compiled_step(tmp_path):
    """Keras' ZeroPadding2D became `ops.pad(x, ...)` in the written model.py; now the emitted zero_pad helper
    (zeros concatenated). A Dense, zero_pad, a Dense trained three SGD steps in a compiled step (GRAPH) vs torch's
    F.pad between the same Linears: the gradients of every step."""
    import mindspore as ms
    import torch
    import torch.nn.functional as F
    from mindspore import nn, ops

    from msmigrate.keras.convert import _HELPER_SRC

    import importlib.util

    path = tmp_path / "keras_zero_pad.py"     # GRAPH mode reads the helper's source from its file
    path.write_text("import numpy as np\nimport mindspore as ms\nfrom mindspore import nn, ops\n"
                    + _HELPER_SRC["zero_pad"], encoding="utf-8")
    spec = importlib.util.spec_from_file_location("keras_zero_pad", path)
    helper = importlib.util.module_from_spec(spec)
    sys.modules["keras_zero_pad"] = helper
    spec.loader.exec_module(helper)
    zero_pad, pad = helper.zero_pad, (1, 2, 2, 0)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Dense(4, 5), nn.Dense(8, 3)

        def construct(self, x):
            return self.b(zero_pad(self.a(x), pad))

    t = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Linear(8, 3))
    with torch.no_grad():
        for i, p in enumerate(t.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 3)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        net = Net()
        for p, tp in zip(net.trainable_params(), t.parameters()):
            p.set_data(ms.Tensor(tp.detach().numpy()))
        x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)
        y = np.linspace(1, -1, 30, dtype=np.float32).reshape(2, 5, 3)
        opt = nn.SGD(net.trainable_params(), 0.1)

        def forward(a, b):
            return ((net(a) - b) ** 2).mean()

        grad_fn = ms.value_and_grad(forward, None, opt.parameters)

        @ms.jit
        def step(a, b):
            loss, grads = grad_fn(a, b)
            opt(grads)
            return loss, grads

        topt = torch.optim.SGD(t.parameters(), 0.1)
        for i in range(3):
            _, grads = step(ms.Tensor(x), ms.Tensor(y))
            topt.zero_grad()
            F.mse_loss(t[1](F.pad(t[0](torch.tensor(x)), pad)), torch.tensor(y)).backward()
            for g, tp in zip(grads, t.parameters()):
                np.testing.assert_allclose(g.asnumpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=f"step {i}")
            topt.step()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
