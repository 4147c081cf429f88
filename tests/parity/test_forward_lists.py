"""A forward that turns a tensor into a Python list and lets the values shape it (the image-captioning
decoders: `decode_lengths = (caption_lengths - 1).tolist()`, a loop over `max(decode_lengths)` steps, each on
the first `sum([l > t for l in decode_lengths])` rows).

Converted in a program that trains, it ran in GRAPH mode, where MindSpore runs the list through JIT fallback:
the LSTMCell stepped on the sliced rows failed with "For 'LSTMCell', the 'hx' must be Tuple, but got
Tensor[Float64]", naming no original line (bench/_rw_heldout7.py's captioning). A program whose forward calls
`.tolist()` now starts in PYNATIVE mode (ProjectIndex.reaches_lists_in_forward), where the values are Python
ints, as in torch."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import program_weights_match_torch  # noqa: E402

DECODER = '''
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(9, 4)
        self.cell = nn.LSTMCell(4, 5)
        self.out = nn.Linear(5, 9)

    def forward(self, tokens, lengths):
        lengths, order = lengths.sort(dim=0, descending=True)
        tokens = tokens[order]
        emb = self.emb(tokens)
        decode_lengths = (lengths - 1).tolist()
        h = torch.zeros(tokens.shape[0], 5)
        c = torch.zeros(tokens.shape[0], 5)
        scores = torch.zeros(tokens.shape[0], max(decode_lengths), 9)
        for t in range(max(decode_lengths)):
            rows = sum([n > t for n in decode_lengths])
            h, c = self.cell(emb[:rows, t, :], (h[:rows], c[:rows]))
            scores[:rows, t, :] = self.out(h)
        return scores, tokens


net = Decoder()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-0.6, 0.5, p.numel()).reshape(p.shape) * (1 + 0.2 * i))
opt = torch.optim.Adam(net.parameters(), lr=0.01)
tokens = torch.tensor([[1, 2, 3, 4, 5], [2, 3, 4, 0, 0], [5, 6, 7, 8, 0], [8, 1, 0, 0, 0]])
lengths = torch.tensor([5, 3, 4, 2])
losses = []
for step in range(3):
    opt.zero_grad()
    scores, sorted_tokens = net(tokens, lengths)
    loss = nn.functional.cross_entropy(scores.reshape(-1, 9), sorted_tokens[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
    losses.append(loss.item())
weights = list(net.parameters()) + [torch.tensor(losses)]
'''


@pytest.mark.parametrize("graph", [False, True], ids=["pynative", "graph"])
def test_forward_shaped_by_a_list_of_its_values(graph):
    code, _ = program_weights_match_torch(DECODER, graph, what="forward shaped by .tolist(): ")
    assert "ms.set_context(mode=ms.PYNATIVE_MODE)" in code, code
