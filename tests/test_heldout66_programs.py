"""Minimal reproductions of what bench/_rw_heldout66.py's programs (pmixer/SASRec.pytorch,
gusye1234/LightGCN-PyTorch, meijieru/crnn.pytorch) met, each run under torch and converted.

- BCEWithLogitsLoss (mean) over a number of elements that changes from batch to batch (SASRec's loss over the
  positions `np.where(pos != 0)` picks): MindSpore 2.10's kernel gradient kept dividing by the element count of its
  first call in the process (a batch of 8 after one of 5 got 8/5 of torch's gradient; the loss itself right, so only
  the training drifted). _ms_compat.binary_cross_entropy_with_logits takes the kernel's elementwise loss and reduces
  it itself."""
import numpy as np
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

# a mean over the picked positions, their number changing from batch to batch
BCE_OF_PICKED = _FILL + '''
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 3)
        self.fc = nn.Linear(3, 1)

    def forward(self, seq):
        h = self.fc(self.emb(torch.LongTensor(seq))).squeeze(-1)
        return h, -h


net = Scorer()
fill(net, 0)
crit = nn.BCEWithLogitsLoss()
opt = torch.optim.SGD(net.parameters(), lr=0.5)
rng = np.random.RandomState(0)
for step in range(4):
    seq, pos = rng.randint(0, 10, (2, 5)), rng.randint(0, 2, (2, 5))
    pos_logits, neg_logits = net(seq)
    opt.zero_grad()
    indices = np.where(pos != 0)
    loss = crit(pos_logits[indices], torch.ones(pos_logits.shape)[indices])
    loss += crit(neg_logits[indices], torch.zeros(neg_logits.shape)[indices])
    loss.backward()
    opt.step()

weights = [p.detach() for p in net.parameters()]
'''


def test_bce_with_logits_mean_over_a_changing_number_of_elements():
    program_weights_match_torch(BCE_OF_PICKED, graph=False)
