"""A 1-d convolution's weight read and written as torch's (out, in, k) (msmigrate/conv1d_weights.py): MindSpore holds
it (out, in, 1, k). Before: `conv.weight.shape`/`.dim()` and `conv.weight[:, 0, :]` silently read the extra axis, a
`copy_` of a 3-D tensor raised a raw RuntimeError, `.data = t` and `= nn.Parameter(t)` a raw ValueError at the
next call. Values, shapes and (for a weight-standardised convolution reading its weight in forward) GRAPH mode and
gradients against torch."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import assert_close, check_layer, load_converted, load_torch, rnd  # noqa: E402

SRC = '''
import torch
import torch.nn.functional as F
from torch import nn


def layout():
    conv = nn.Conv1d(2, 3, 3)
    up = nn.ConvTranspose1d(3, 2, 4)
    nn.init.constant_(conv.weight, 0.5)
    fan_in, fan_out = nn.init._calculate_fan_in_and_fan_out(conv.weight)
    return (tuple(conv.weight.shape), conv.weight.size(-1), conv.weight.dim(), tuple(up.weight.shape),
            tuple(conv.weight[:, 0, :].shape), tuple(conv.weight.view(3, -1).shape), fan_in, fan_out)


def written(x):
    a = nn.Conv1d(2, 3, 3)
    b = nn.Conv1d(2, 3, 3)
    c = nn.Conv1d(2, 3, 3, bias=False)
    w = torch.arange(18, dtype=torch.float32).reshape(3, 2, 3) / 10 - 0.8
    with torch.no_grad():
        a.weight.copy_(w)
        a.bias.zero_()
    b.weight.data = w.flip(0)
    b.bias.data.fill_(0.5)
    c.weight = nn.Parameter(w * 2)
    return a(x), b(x), c(x), a.weight[1, :, 0] * 2


class Standardised(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 4, 3, padding=1)

    def forward(self, x):
        mean = self.conv.weight.mean(dim=(1, 2), keepdim=True)
        std = self.conv.weight.std(dim=(1, 2), keepdim=True)
        w = (self.conv.weight.view(4, -1).view(4, 2, 3) - mean) / (std + 1e-5)
        return F.conv1d(x, w, self.conv.bias, padding=self.conv.weight.shape[-1] // 2)


def make():
    return Standardised()
'''


def test_conv1d_weight_layout_reads_as_torch():
    want = load_torch(SRC)["layout"]()
    mod, code, _ = load_converted(SRC)
    assert mod.layout() == want == ((3, 2, 3), 3, 3, (3, 2, 4), (3, 3), (3, 6), 6, 9)


def test_conv1d_weight_written_in_torchs_layout():
    import torch
    x = rnd(2, 2, 7, seed=4)
    want = load_torch(SRC)["written"](torch.from_numpy(x))
    mod, code, _ = load_converted(SRC)
    assert "a.weight.copy_(_ms_compat.conv1d_weight_value(" in code, code
    got = mod.written(ms.Tensor(x))
    assert_close(list(got), [t.detach().numpy() for t in want], what="convolutions with written weights")


def test_conv1d_weight_read_in_forward_graph_and_gradients():
    check_layer(SRC, [rnd(2, 2, 7, seed=5)], graph=True, grad=True)
