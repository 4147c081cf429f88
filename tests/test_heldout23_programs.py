"""Minimal reproductions of what bench/_rw_heldout23.py's programs (lucidrains/vit-pytorch's variants,
milesial/Pytorch-UNet, jadore801120/attention-is-all-you-need-pytorch's train_epoch) needed, each compared with
torch.

- `del self.cache` in a method forward calls (vit-pytorch's Extractor.clear): the read guard of state kept across
  calls wrapped the statement's target, `del _ms_compat.graph_state(self.cache, ...)`, not valid Python: the whole
  file failed to convert (copied unchanged). It is now `self.cache = None`, as `del name` is in Cell code."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

CLEARED_CACHE = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F


class Extract(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.head = nn.Linear(4, 2)
        self.latents = None

    def clear(self):
        del self.latents
        self.latents = None

    def forward(self, x):
        self.clear()
        self.latents = self.fc(x).tanh()
        return self.head(self.latents)


model = Extract()
fill(model, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 15).reshape(5, 3)
y = torch.tensor([0, 1, 1, 0, 1])
losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
weights = [p.detach() for p in model.parameters()] + losses
'''


@pytest.mark.parametrize("graph", [False, True])
def test_del_of_an_attribute_in_forward(graph):
    code, _ = program_weights_match_torch(CLEARED_CACHE, graph=graph)
    assert "del " not in code.split("def clear", 1)[1].split("def construct", 1)[0], code
