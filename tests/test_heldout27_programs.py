"""Minimal reproductions of what bench/_rw_heldout27.py's programs (lucidrains/perceiver-pytorch,
lucidrains/g-mlp-pytorch's train.py and AutoregressiveWrapper, karpathy/ng-video-lecture) needed, each compared
with torch in PYNATIVE and GRAPH mode.

- An imported torch module's name bound again to the optimizer (`import torch.optim as optim`, then
  `optim = torch.optim.Adam(...)`, `optim.step()`, g-mlp's train.py): every later `optim` was read as the module,
  so the assignment became a raising TODO ("assigns a torch global setting") and so did `optim.step()` and
  `optim.zero_grad()`; the program stopped with a NameError. In the module body the name is the program's own
  from the rebinding statement on; in a function that binds it, throughout the function (Python's local).
- Two training loops in the module body, the first clearing its gradients after each step (`zero_grad()` last)
  and the second, further down, at the top of its iterations (a driver training a model and then another): the
  second loop's backward() was taken for one that leaves gradients the first loop's first step adds to, and the
  first loop became a raising TODO. The module body runs once: a backward() after a loop, with no loop around
  both, never runs before it."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

REBOUND_ALIAS = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(12, 8)
        self.out = nn.Linear(8, 12)

    def forward(self, x):
        return self.out(torch.tanh(self.emb(x)))


def pretrain(head, x):
    optim = torch.optim.SGD(head.parameters(), lr=0.1, momentum=0.9)     # the function's own, throughout it
    for step in range(3):
        optim.zero_grad()
        loss = (head(x) ** 2).mean()
        loss.backward()
        optim.step()
    return loss.item()


head = nn.Linear(4, 3)
fill(head, 1)
pretrained = pretrain(head, torch.linspace(-1, 1, 12).reshape(3, 4))

model = Net()
fill(model, 3)
data = torch.tensor([[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 0], [2, 4, 6, 8, 10, 1], [3, 5, 7, 9, 11, 2]])

optim = torch.optim.Adam(model.parameters(), lr=1e-2)

losses = []
for i in range(3):
    model.train()
    for k in range(2):      # gradient accumulation, as g-mlp's train.py
        batch = data[(2 * i + k) % 4:(2 * i + k) % 4 + 2]
        loss = F.cross_entropy(model(batch[:, :-1]).transpose(1, 2), batch[:, 1:])
        loss.backward()
        losses.append(loss.item())
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optim.step()
    optim.zero_grad()
weights = [p.detach() for p in model.parameters()] + [p.detach() for p in head.parameters()] + [
    torch.tensor(losses + [pretrained])]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_torch_module_name_bound_again_to_the_optimizer(graph):
    code, _ = program_weights_match_torch(REBOUND_ALIAS, graph=graph)
    assert "Unconverted" not in code, code


LATER_LOOP = _FILL + '''
import torch.nn as nn

first = nn.Linear(4, 3)
second = nn.Linear(4, 2)
fill(first, 1)
fill(second, 2)
x = torch.linspace(-1, 1, 12).reshape(3, 4)
opt1 = torch.optim.SGD(first.parameters(), lr=0.1, momentum=0.9)
for step in range(3):
    loss = (first(x) ** 2).mean()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(first.parameters(), 0.5)
    opt1.step()
    opt1.zero_grad()
opt2 = torch.optim.SGD(second.parameters(), lr=0.1)
for step in range(2):
    opt2.zero_grad()
    loss = (second(x) - 1).abs().mean()
    loss.backward()
    opt2.step()
weights = [p.detach() for p in first.parameters()] + [p.detach() for p in second.parameters()]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_loop_clearing_after_its_step_then_another_loop(graph):
    program_weights_match_torch(LATER_LOOP, graph=graph)
