"""torch layer attributes that MindSpore's layers hold under another name, read on a layer the converter knows
(`self.emb.embedding_dim`, `m.eps` under `isinstance(m, nn.LayerNorm)`, a subclass's `self.negative_slope`):
Embedding num_embeddings/embedding_dim (vocab_size/embedding_size), LayerNorm eps (epsilon), LeakyReLU
negative_slope (alpha), an RNN's bias flag (has_bias); a 1-d convolution's kernel_size/stride/dilation ((k,) in
torch, MindSpore's 2-d (1, k): `kernel_size[0]` was 1, a causal padding computed from it silently 0). Each was a raw AttributeError (an embedding's width read
in forward: `x * math.sqrt(self.emb.embedding_dim)`); the values read are torch's."""
from __future__ import annotations

from pathlib import Path

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


# ------------------------------------------------------------------ a layer's parameter read where its owner's class is unknown
OWNER_MODEL = '''
import torch
from torch import nn


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_emb = nn.Embedding(7, 4)
        self.pos_emb = nn.Embedding(5, 4)
        self.norm = nn.LayerNorm(4)
'''
OWNER_USE = '''
import torch
from torch import nn


def context_size(model):
    return model.pos_emb.weight.shape[0]


class TiedHead(nn.Module):
    """logits through the token embedding of a model it is given (its class unknown here)"""
    def __init__(self, gpt):
        super().__init__()
        self.gpt = gpt

    def forward(self, h):
        h = self.gpt.norm(h) * self.gpt.norm.weight + self.gpt.pos_emb.weight[: h.shape[1]]
        return h @ self.gpt.tok_emb.weight.T
'''
OWNER_RUN = '''
import json, sys
import numpy as np
import mindspore as ms
from msmigrate.weights import load_torch_state_dict
import model, use

out = {}
for mode in ("pynative", "graph"):
    ms.set_context(mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE)
    gpt = model.GPT()
    head = use.TiedHead(gpt)
    load_torch_state_dict(head, dict(np.load(sys.argv[1])), strict=True)
    h, w = ms.Tensor(np.load(sys.argv[2])), ms.Tensor(np.load(sys.argv[3]))

    def objective(h):
        return (head(h) * w).sum()
    step = ms.value_and_grad(objective, None, head.trainable_params())
    loss, grads = (ms.jit(step) if mode == "graph" else step)(h)
    out[mode] = {"loss": float(loss), "context": use.context_size(gpt),
                 "grads": {p.name: g.asnumpy().tolist() for p, g in zip(head.trainable_params(), grads)}}
print(json.dumps(out))
'''


def test_parameter_of_an_attribute_another_module_sets(tmp_path):
    """rasbt/LLMs-from-scratch's `model.pos_emb.weight.shape[0]` in a function given the model: every class of the
    project that sets `self.pos_emb` sets an nn.Embedding, so the read is MindSpore's embedding_table (before: a raw
    AttributeError naming no original line); values and parameter gradients as torch's, PYNATIVE and GRAPH."""
    import json
    import os
    import subprocess
    import sys

    import torch

    from msmigrate.cli import main

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "model.py").write_text(OWNER_MODEL)
    (src / "use.py").write_text(OWNER_USE)
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    assert "model.pos_emb.embedding_table.shape[0]" in (out / "use.py").read_text()
    ns_model, ns_use = load_torch(OWNER_MODEL), {}
    sys.modules["model"] = type(sys)("model")
    sys.modules["model"].__dict__.update(ns_model)
    try:
        ns_use = load_torch(OWNER_USE)
    finally:
        del sys.modules["model"]
    torch.manual_seed(0)
    gpt = ns_model["GPT"]()
    head = ns_use["TiedHead"](gpt)
    rng = np.random.default_rng(0)
    h, w = rng.standard_normal((2, 3, 4)).astype(np.float32), rng.standard_normal((2, 3, 7)).astype(np.float32)
    loss = (head(torch.from_numpy(h)) * torch.from_numpy(w)).sum()
    loss.backward()
    np.savez(tmp_path / "sd.npz", **{k: v.detach().numpy() for k, v in head.state_dict().items()})
    np.save(tmp_path / "h.npy", h)
    np.save(tmp_path / "w.npy", w)
    (out / "run_both.py").write_text(OWNER_RUN)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(out), str(Path(__file__).resolve().parents[2])]))
    r = subprocess.run([sys.executable, "run_both.py", str(tmp_path / "sd.npz"), str(tmp_path / "h.npy"),
                        str(tmp_path / "w.npy")], cwd=out, capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    t_grads = {"gpt.tok_emb.embedding_table": gpt.tok_emb.weight.grad, "gpt.pos_emb.embedding_table":
               gpt.pos_emb.weight.grad, "gpt.norm.gamma": gpt.norm.weight.grad, "gpt.norm.beta": gpt.norm.bias.grad}
    for mode in ("pynative", "graph"):
        assert got[mode]["context"] == 5
        np.testing.assert_allclose(got[mode]["loss"], float(loss), rtol=1e-5, err_msg=mode)
        assert set(got[mode]["grads"]) == set(t_grads), got[mode]["grads"].keys()
        for name, g in t_grads.items():
            np.testing.assert_allclose(np.array(got[mode]["grads"][name]), g.numpy(), rtol=1e-4, atol=1e-5,
                                       err_msg=f"{mode} {name}")
