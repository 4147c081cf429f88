"""torch layer attributes that MindSpore's layers hold under another name, read on a layer the converter knows
(`self.emb.embedding_dim`, `m.eps` under `isinstance(m, nn.LayerNorm)`, a subclass's `self.negative_slope`):
Embedding num_embeddings/embedding_dim (vocab_size/embedding_size), LayerNorm eps (epsilon), LeakyReLU
negative_slope (alpha), an RNN's bias flag (has_bias); a 1-d convolution's kernel_size/stride/dilation ((k,) in
torch, MindSpore's 2-d (1, k): `kernel_size[0]` was 1, a causal padding computed from it silently 0). Each was a raw AttributeError (an embedding's width read
in forward: `x * math.sqrt(self.emb.embedding_dim)`); the values read are torch's."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import assert_close, load_converted, load_torch  # noqa: E402

SRC = '''
import math
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 6)
        self.norm = nn.LayerNorm(6, eps=1e-3)
        self.act = nn.LeakyReLU(0.3)
        self.rnn = nn.GRU(6, 4, bias=False)

    def forward(self, tokens):
        x = self.emb(tokens) * math.sqrt(self.emb.embedding_dim) / self.emb.num_embeddings
        return self.act(self.norm(x)) * self.norm.eps


class Causal(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 3, 3, dilation=2)

    def forward(self, x):
        pad = (self.conv.kernel_size[0] - 1) * self.conv.dilation[0]
        return self.conv(nn.functional.pad(x, (pad, 0))), self.conv.stride


class Slope(nn.LeakyReLU):
    def doubled(self):
        return 2 * self.negative_slope


def settings(model):
    out = []
    for m in model.modules():
        if isinstance(m, nn.Embedding):
            out.append(("emb", m.num_embeddings, m.embedding_dim))
        elif isinstance(m, nn.LayerNorm):
            out.append(("norm", m.eps))
        elif isinstance(m, nn.LeakyReLU):
            out.append(("act", m.negative_slope))
        elif isinstance(m, nn.Conv1d):
            out.append(("conv", m.kernel_size, m.stride, m.dilation))
        elif isinstance(m, nn.GRU):
            out.append(("rnn", m.bias, m.hidden_size, m.num_layers))
    return out


def run(tokens):
    net = Net()
    with torch.no_grad():
        net.emb.weight.copy_(torch.linspace(-2.0, 2.0, 66).reshape(11, 6))
    causal = Causal()
    nn.init.constant_(causal.conv.weight, 0.25)
    nn.init.constant_(causal.conv.bias, -0.5)
    y, stride = causal(torch.linspace(-1.0, 2.0, 14).reshape(1, 2, 7))
    return net(tokens), settings(net), Slope(0.15).doubled(), net.rnn.bias, settings(causal), stride, y
'''


def test_layer_attributes_read_as_torch():
    import torch
    tokens = np.array([[1, 4, 9], [0, 2, 10]], np.int64)
    want = load_torch(SRC)["run"](torch.from_numpy(tokens))
    mod, code, _ = load_converted(SRC)
    got = mod.run(ms.Tensor(tokens))
    assert "self.emb.embedding_size" in code and "m.epsilon" in code, code
    assert got[1:-1] == want[1:-1]
    assert want[4:6] == ([("conv", (3,), (1,), (2,))], (1,))
    assert_close(got[-1], want[-1].detach().numpy(), what="causal convolution")
    assert want[1] == [("emb", 11, 6), ("norm", 1e-3), ("act", 0.3), ("rnn", False, 4, 1)]
    assert_close(got[0], want[0].detach().numpy(), what="forward")
