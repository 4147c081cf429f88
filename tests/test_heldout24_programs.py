"""Minimal reproductions of what bench/_rw_heldout24.py's programs (karpathy/llama2.c's train.py, mamba-minimal,
hkproj/pytorch-llama, minRF) needed, each compared with torch.

- A loss the model's forward stores on itself (`self.last_loss = F.cross_entropy(...)`) and the loop reads back
  through another name after calling it (`logits = model(X, Y); loss = raw_model.last_loss`, llama2.c's train.py):
  a compiled step read the attribute as a constant of the compile-time object, so every step returned the first
  loss and the weights moved by a stale gradient. Such a step runs op by op, in GRAPH mode too. (Without the
  `with ctx:` block that holds the call and the read together, the read alone is no sound step: the backward()
  is taped, tests/test_taped_backward.py.)
- The rotary embedding of LLaMA-style models as complex numbers (`torch.view_as_real(torch.view_as_complex(xq) *
  freqs_cis)`, minRF's DiT_Llama, Meta's llama): MindSpore 2.10 has no gradient for a complex Mul ("gradient not
  support for complex type"), so a model using it did not train. The product (and quotient) of two complex
  tensors is taken on their real and imaginary parts."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

STORED_LOSS = _FILL + '''
from contextlib import nullcontext

import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.out = nn.Linear(8, 10)
        self.last_loss = None

    def forward(self, tokens, targets=None):
        logits = self.out(torch.tanh(self.emb(tokens)))
        if targets is not None:
            self.last_loss = F.cross_entropy(logits.view(-1, 10), targets.view(-1))
        else:
            self.last_loss = None
        return logits


model = Model()
fill(model, 4)
raw_model = model
ctx = nullcontext()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
data = torch.tensor([[1, 2, 3, 4, 5], [6, 7, 8, 9, 0], [2, 4, 6, 8, 1]])
losses = []
for step in range(4):
    X, Y = data[step % 3:step % 3 + 1, :-1], data[step % 3:step % 3 + 1, 1:]
    with ctx:
        logits = model(X, Y)
        loss = raw_model.last_loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    losses.append(loss.item())
weights = [p.detach() for p in model.parameters()] + [torch.tensor(losses)]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_loss_stored_by_forward_read_after_the_call(graph):
    code, _ = program_weights_match_torch(STORED_LOSS, graph=graph)
    assert "host_calls=True" in code, code


ROTARY = _FILL + '''
import torch.nn as nn


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)


class Rotary(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(8, 8)
        self.freqs_cis = precompute_freqs_cis(8, 16)

    def forward(self, x):
        xq = self.wq(x)
        xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        freqs = self.freqs_cis[: x.shape[1]].view(1, x.shape[1], -1)
        out = torch.view_as_real(xq_ * freqs).flatten(2)
        back = torch.view_as_real(xq_ / (freqs * 2)).flatten(2)
        return out + 0.5 * back


model = Rotary()
fill(model, 5)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 2 * 5 * 8).reshape(2, 5, 8)
target = torch.linspace(1, -1, 2 * 5 * 8).reshape(2, 5, 8)
for step in range(3):
    loss = ((model(x) - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
weights = [p.detach() for p in model.parameters()]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_complex_rotary_embedding_trains(graph):
    from tests.parity.harness import load_torch
    program_weights_match_torch(ROTARY, graph=graph)
    ref = load_torch(ROTARY)
    fresh = load_torch(ROTARY.replace("range(3)", "range(0)"))
    assert abs(ref["weights"][0] - fresh["weights"][0]).max() > 1e-3       # torch trained the weights
