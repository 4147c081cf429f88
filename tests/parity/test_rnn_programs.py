"""Recurrent models in training programs (a tagger over packed sequences, a weight fill by parameter order).
- MindSpore's RNNs hold every layer's weight_ih first, then every weight_hh...; torch's parameters() go layer by
  layer, direction by direction (weight_ih, weight_hh, bias_ih, bias_hh): code that enumerates or zips parameters
  (an init by position, an EMA copy, parameters_to_vector) computed something else with no error.
- A forward that packs sequences (PackedSequence orders rows by the lengths' values) cannot compile: the program
  started in GRAPH mode and its train step failed with MindSpore's raw "parameters number" TypeError. It now
  starts in PYNATIVE, and its losses are torch's."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import assert_close, load_converted, load_torch  # noqa: E402

ORDER_SRC = '''
import torch
from torch import nn


def names(kind, **kw):
    rnn = getattr(nn, kind)(3, 4, **kw)
    return [n for n, _ in rnn.named_parameters()], [tuple(p.shape) for p in rnn.parameters()]
'''

CASES = [("LSTM", dict(num_layers=2, bidirectional=True)), ("GRU", dict(num_layers=2)),
         ("RNN", dict(bidirectional=True, bias=False)), ("LSTM", dict(num_layers=1, batch_first=True))]


@pytest.mark.parametrize("kind,kw", CASES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(CASES)])
def test_rnn_parameters_in_torchs_order(kind, kw):
    mod, _, _ = load_converted(ORDER_SRC)
    want = load_torch(ORDER_SRC)["names"](kind, **kw)
    assert mod.names(kind, **kw) == want
    assert len(want[0]) > 2


TAGGER_SRC = '''
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence, pack_padded_sequence, pad_packed_sequence


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(12, 5, padding_idx=0)
        self.rnn = nn.LSTM(5, 4, num_layers=2, batch_first=True, bidirectional=True)
        self.out = nn.Linear(8, 3)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.emb(tokens), lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True)
        return self.out(out)


model = Tagger()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()).float() * 0.7 + i).reshape(p.shape) * 0.3)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
seqs = [torch.tensor([(i * 3 + j) % 11 + 1 for j in range(n)]) for i, n in enumerate([4, 2, 5])]
tokens = pad_sequence(seqs, batch_first=True)
lengths = torch.tensor([len(s) for s in seqs])
target = pad_sequence([s % 3 for s in seqs], batch_first=True, padding_value=-100)
losses = []
for step in range(3):
    opt.zero_grad()
    logits = model(tokens, lengths)
    loss = nn.functional.cross_entropy(logits.reshape(-1, 3), target.reshape(-1), ignore_index=-100)
    loss.backward()
    opt.step()
    losses.append(loss.item())
losses = torch.tensor(losses)
'''


def test_packed_sequence_tagger_trains_as_torch():
    ref = load_torch(TAGGER_SRC)
    mod, code, _ = load_converted(TAGGER_SRC)
    assert "ms.set_context(mode=ms.PYNATIVE_MODE)" in code and "packs sequences" in code
    assert_close(mod.losses, ref["losses"].numpy(), rtol=1e-5, atol=1e-6, what="losses")
    assert len(set(np.round(ref["losses"].numpy(), 4))) == 3      # the steps changed the weights
