"""Minimal reproductions of what bench/_rw_heldout22.py's programs (karpathy/makemore driven through its pieces,
kuangliu/pytorch-cifar's models) needed, each compared with torch.

- A plain class of the program that wraps a DataLoader's iterator and hands out batches by a method of its own
  (makemore's InfiniteDataLoader: `next(self.data_iter)`, a fresh iter() on StopIteration), called as the first
  statement of the loop (`X, Y = loader.next()`): the batch is the step's data, as `next(it)` is. Put inside the
  compiled step, GRAPH mode could not compile it (a `try` statement; had it compiled, it would have fetched one batch,
  at compile time, for every step)."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

BATCHES = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Words(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = torch.tensor([(i * 3 + k) % 7 for k in range(4)], dtype=torch.long)
        y = torch.roll(x, -1)
        y[-1] = -1
        return x, y


class EndlessLoader:
    """Batches for ever: a new pass over the data each time the last one ends."""

    def __init__(self, dataset, **kwargs):
        self.loader = DataLoader(dataset, **kwargs)
        self.data_iter = iter(self.loader)

    def next(self):
        try:
            batch = next(self.data_iter)
        except StopIteration:
            self.data_iter = iter(self.loader)
            batch = next(self.data_iter)
        return batch


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(7, 5)
        self.head = nn.Linear(5, 7)

    def forward(self, idx, targets):
        logits = self.head(torch.tanh(self.wte(idx)))
        return logits, F.cross_entropy(logits.view(-1, 7), targets.view(-1), ignore_index=-1)


model = Tiny()
fill(model, 0)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.99))
loader = EndlessLoader(Words(10), batch_size=4, shuffle=False)
losses = []
for step in range(6):
    X, Y = loader.next()
    logits, loss = model(X, Y)
    model.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
weights = [p.detach() for p in model.parameters()] + [torch.tensor(losses)]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_batches_from_a_method_of_a_plain_loader(graph):
    code, _ = program_weights_match_torch(BATCHES, graph=graph)
    # the batch is fetched before the step, each step: never inside the compiled graph
    step = code.split("def forward_fn", 1)[1].split("def train_step", 1)[0]
    assert "loader.next()" not in step, code
