"""Constructs found by bench/real_world.py --set heldout18 (bench/_rw_heldout18.py: PaLM-pytorch, tab-transformer,
slot-attention, mixture-of-experts) in programs the converter was never run on, each reduced to a minimal torch
snippet of our own run against its conversion."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .parity.harness import program_weights_match_torch  # noqa: E402

# ------------------------------------------------------------------ a cast to an integer or boolean dtype
DISPATCH = """
import torch
import torch.nn as nn
import torch.nn.functional as F

gate = nn.Linear(4, 3)
with torch.no_grad():
    gate.weight.copy_(torch.linspace(-1, 1, 12).reshape(3, 4))
    gate.bias.fill_(0.05)
optimizer = torch.optim.SGD(gate.parameters(), lr=0.1)
x = torch.linspace(-2, 2, 24).reshape(6, 4)
y = torch.linspace(0, 1, 18).reshape(6, 3)
for step in range(3):
    combine = F.relu(gate(x))
    dispatch = combine.bool().to(combine)          # mixture-of-experts: 1 where routed, no gradient
    counts = combine.long().float()                # no gradient either
    picked = combine.to(torch.int32).to(torch.float32) + combine.to(dtype=torch.bool).float()
    loss = ((dispatch * y).sum() + (counts * y).sum() + (picked * y).sum()) * (combine * y).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
weights = [gate.weight, gate.bias]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_integer_and_boolean_casts_carry_no_gradient(graph):
    """mixture-of-experts' `dispatch_tensor = combine_tensor.bool().to(combine_tensor)`: torch's cast to bool (or
    to an integer dtype) gives a tensor without gradient, MindSpore's Cast passed the gradient back through it (1
    wherever the incoming gradient was nonzero for bool, the gradient itself for an integer dtype), so the
    gating weights trained on a gradient torch never computed: the losses of MoE differed from the second step on
    (3e-2). The cast now stops the gradient (`.bool()`, `.long()`, `.to(torch.int32)`, `.to(dtype=torch.bool)`).
    The weights after three SGD steps vs torch, PYNATIVE and GRAPH."""
    code, _ = program_weights_match_torch(DISPATCH, graph)
    assert "ops.stop_gradient(combine.astype(ms.bool_)).astype(combine.dtype)" in code, code
    assert "ops.stop_gradient(combine.astype(ms.int64)).astype(ms.float32)" in code, code


# ------------------------------------------------------------------ an embedding tied into a local Sequential
TIED = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return x + torch.tanh(self.proj(x))


def Model(num_tokens, dim, depth):
    net = nn.Sequential(nn.Embedding(num_tokens, dim), *[Block(dim) for _ in range(depth)], nn.LayerNorm(dim),
                        nn.Linear(dim, num_tokens, bias=False))
    net[-1].weight = net[0].weight                 # PaLM: the output projection is the embedding
    nn.init.normal_(net[0].weight, std=0.02)
    return net


torch.manual_seed(0)
net = Model(11, 6, 2)
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + 0.1 * i))
tokens = torch.tensor([[1, 4, 7, 2], [3, 3, 9, 10]])
optimizer = torch.optim.Adam(net.parameters(), lr=0.01)
for step in range(3):
    logits = net(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 11), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
weights = list(net.parameters())
"""


@pytest.mark.parametrize("graph", [False, True])
def test_embedding_tied_to_the_head_of_a_local_sequential(graph):
    """PaLM's `net = nn.Sequential(nn.Embedding(...), *[Block() for _ in range(depth)], ..., nn.Linear(...))`
    then `net[-1].weight = net[0].weight`, in a function: `net[0].weight` stayed `.weight`, which MindSpore's
    Embedding does not have (AttributeError). The types of a local Sequential's entries are known now, from
    its start before a starred entry and from its end after it: `net[0].embedding_table`. One parameter shared by
    the two layers, trained three Adam steps: the weights vs torch, both modes."""
    code, _ = program_weights_match_torch(TIED, graph)
    assert "net[-1].weight = net[0].embedding_table" in code, code


# ------------------------------------------------------------------ micro steps, a print, one update
ACCUMULATE = """
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.4, 0.6, p.numel()).reshape(p.shape))
data = torch.linspace(-1, 1, 36).reshape(12, 3)
target = torch.linspace(0, 1, 24).reshape(12, 2)
optim = torch.optim.Adam(model.parameters(), lr=0.02)
k = 0
for i in range(3):
    model.train()
    for __ in range(2):
        loss = F.mse_loss(model(data[k:k + 2]), target[k:k + 2])
        k += 2
        loss.backward()
    print(f"training loss: {loss.item()}")
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optim.step()
    optim.zero_grad()
weights = list(model.parameters())
"""


@pytest.mark.parametrize("graph", [False, True])
def test_accumulated_micro_steps_with_a_print_before_the_update(graph):
    """PaLM's train.py: `for __ in range(GRADIENT_ACCUMULATE_EVERY): loss = model(...); loss.backward()`, then
    `print(f"training loss: {loss.item()}")`, clipping, `optim.step()`, `optim.zero_grad()`. The print between
    the micro steps and the update kept the shape from being recognised (a TODO that raised). A statement that
    clears, steps, scales or clips nothing may stand there now; the gradients of the two micro steps add up
    before each update. The weights after three updates vs torch, both modes."""
    code, _ = program_weights_match_torch(ACCUMULATE, graph)
    assert "accum_grads = _ms_compat.accumulate_grads(accum_grads, grads)" in code, code


def test_a_clearing_statement_between_micro_steps_and_update_stays_a_todo():
    """The same loop with `optim.zero_grad()` between the micro steps and the update (torch then steps on
    cleared gradients): not the proven shape, the backward() stays a TODO."""
    from .parity.harness import convert_snippet
    from msmigrate.registry import TODO
    src = ACCUMULATE.replace('    print(f"training loss: {loss.item()}")\n',
                             '    print(f"training loss: {loss.item()}")\n    optim.zero_grad()\n')
    assert src != ACCUMULATE
    code, sites = convert_snippet(src)
    assert "accum_grads" not in code
    assert [s for s in sites if s.status == TODO and s.api == "Tensor.backward"], code


# ------------------------------------------------------------------ the network called on a batch helper's result
LOADER = """
import torch
import torch.nn as nn
import torch.nn.functional as F

SEQ = 4
data = torch.arange(60) % 7


def batch(k, n=2):
    rows = []
    for j in range(n):
        start = torch.tensor([(7 * k + 3 * j) % (data.size(0) - SEQ)])     # PaLM draws it: torch.randint(.., (1,))
        rows.append(data[start: start + SEQ + 1].long())      # PaLM's train.py: a (1,) tensor as slice bound
    return torch.stack(rows)


def cycle(rows):
    while True:
        for r in rows:
            yield r


class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(7, 5)
        self.out = nn.Linear(5, 7)

    def forward(self, x):
        logits = self.out(self.emb(x[:, :-1]))
        return F.cross_entropy(logits.transpose(1, 2), x[:, 1:])


torch.manual_seed(0)
model = Wrapper()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.3, 0.3, p.numel()).reshape(p.shape) * (1 + 0.2 * i))
loader = cycle([data[i:i + SEQ + 1].reshape(1, -1).repeat(2, 1) for i in range(0, 40, 5)])
optim = torch.optim.Adam(model.parameters(), lr=0.01)
for i in range(3):
    loss = model(next(loader))
    loss.backward()
    optim.step()
    optim.zero_grad()
for i in range(2):
    for k in range(2):
        loss = model(batch(2 * i + k))
        loss.backward()
    print("training loss", loss.item())
    optim.step()
    optim.zero_grad()
weights = list(model.parameters())
"""


@pytest.mark.parametrize("graph", [False, True])
def test_network_called_on_a_data_call_and_tensor_slice_bounds(graph):
    """PaLM's train.py: `loss = model(next(train_loader))` and a batch maker slicing with `rand_start =
    torch.randint(0, n, (1,))` (`data[rand_start: rand_start + seq_len + 1]`). Before: the statement, holding a
    data call, stayed out of the train step, and its loss was no network call's (a raising TODO); and MindSpore's
    indexing refused the (1,)-shaped bound (TypeError). Now the data call is read in a statement of its own
    before the step (`_ms_input = next(loader)`; `loss = model(_ms_input)`) and the bound through its
    `__index__()`. The second loop (micro steps after a loop that clears after each step) needs no leftover
    gradient either. The weights after five updates vs torch, both modes."""
    code, _ = program_weights_match_torch(LOADER, graph)
    assert "_ms_input = next(loader)" in code and "model(_ms_input)" in code, code
    assert "data[start.__index__(): (start + SEQ + 1).__index__()]" in code, code
