"""Minimal reproductions of what bench/_rw_heldout21.py's reinforcement-learning programs (pytorch/examples'
reinforce and actor_critic, seungeunrho/minimalRL) needed, each compared with torch. The taped backward()s
themselves are tests/test_taped_backward.py.

- A replay buffer drawing its batch with Python's `random.sample` in a method, called inside the train step
  (minimalRL's DQN): a compiled step would draw it once, at compile time, and train on one batch every step.
- `tensor * other.numpy()` (minimalRL's V-trace): torch takes the array as a tensor, MindSpore's Mul refused it.
- An optimizer kept in a module's attribute (`self.optimizer = optim.Adam(self.parameters())` in __init__):
  MindSpore's optimizer is a Cell, so the module's parameters() listed its moments too.
- A tensor made trainable by a statement of its own (`self.log_alpha = torch.tensor(...)` then
  `self.log_alpha.requires_grad = True`, minimalRL's SAC temperature) and given to an optimizer: it must become a
  Parameter as with `requires_grad=True` in the call, or MindSpore's optimizer refuses it.
- `torch.tensor(a_lst)` of a list filled with one-element tensors (minimalRL's PPO-continuous keeps each sampled
  action, a shape-[1] tensor, as `a_lst.append([a])`): torch reads each as its number ([n, 1]); mindspore.Tensor
  kept its dimension ([n, 1, 1]) and the loss broadcast to [n, n, 1]."""
import random

import numpy as np
import pytest

from tests.parity.harness import assert_close, load_converted, load_torch, program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

REPLAY = _FILL + '''
import collections
import random
import torch.nn as nn
import torch.nn.functional as F


class ReplayBuffer:
    def __init__(self):
        self.buffer = collections.deque(maxlen=100)

    def put(self, transition):
        self.buffer.append(transition)

    def sample(self, n):
        batch = random.sample(self.buffer, n)
        s_lst, r_lst = [], []
        for s, r in batch:
            s_lst.append(s)
            r_lst.append([r])
        return torch.tensor(np.array(s_lst), dtype=torch.float), torch.tensor(r_lst)


q = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
fill(q, 0)
memory = ReplayBuffer()
rng = np.random.RandomState(1)
for i in range(40):
    memory.put((rng.randn(3).astype(np.float32), float(rng.rand())))
optimizer = torch.optim.Adam(q.parameters(), lr=1e-2)
random.seed(7)


def train(q, memory, optimizer):
    for i in range(4):
        s, r = memory.sample(5)
        loss = F.smooth_l1_loss(q(s), r)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


train(q, memory, optimizer)
weights = [p.detach() for p in q.parameters()]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_replay_buffer_draws_each_step(graph):
    random.seed(7)      # the converted program draws from the same Python random state as torch's
    code, _ = program_weights_match_torch(REPLAY, graph=graph)
    # the batch is the step's data (drawn before it), or the step runs op by op: never drawn at compile time
    step = code.split("def forward_fn", 1)[1].split("def train_step", 1)[0]
    assert "memory.sample" not in step or "host_calls=True" in code, code


def test_tensor_times_a_numpy_read():
    src = '''
import torch
rhos = torch.tensor([[0.5], [2.0]])
v = torch.tensor([[1.0], [3.0]])
td = torch.tensor([[2.0], [1.0]])
delta = rhos * (td - v).numpy()
vs = torch.tensor([[0.1], [0.2]]) + v.numpy()
both = v.numpy() * td.numpy()
'''
    mod, code, _ = load_converted(src, pynative=True)
    ref = load_torch(src)
    for name in ("delta", "vs", "both"):
        assert_close(getattr(mod, name), ref[name], what=name)
    assert type(ref["both"]).__name__ == type(mod.both).__name__ == "ndarray"


def test_optimizer_held_by_the_module_is_no_submodule():
    src = _FILL + '''
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-2)


pi = Policy()
fill(pi, 2)
pi.fc(torch.ones(1, 3)).sum().backward()
pi.optimizer.step()
names = [n for n, _ in pi.named_parameters()]
modules = [n for n, _ in pi.named_modules()]
weights = [p.detach() for p in pi.parameters()]
'''
    mod, code, _ = load_converted(src, pynative=True)
    ref = load_torch(src)
    assert mod.names == ref["names"] == ["fc.weight", "fc.bias"]
    assert mod.modules == ref["modules"] == ["", "fc"], mod.modules
    for got, want in zip(mod.weights, ref["weights"]):
        assert_close(got, want, what="weight")
    assert np.isfinite(mod.weights[0].asnumpy()).all()


TEMPERATURE = _FILL + '''
import torch.nn as nn
import torch.optim as optim


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)
        self.optimizer = optim.Adam(self.parameters(), lr=0.01)
        self.log_alpha = torch.tensor(np.log(0.1))
        self.log_alpha.requires_grad = True
        self.log_alpha_optimizer = optim.Adam([self.log_alpha], lr=0.05)

    def train_net(self, s):
        out = self.fc(s)
        loss = (-self.log_alpha.exp().detach() * out).mean() + (out ** 2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        alpha_loss = -(self.log_alpha.exp() * (out.detach() + 1.0)).mean()
        self.log_alpha_optimizer.zero_grad()
        alpha_loss.backward()
        self.log_alpha_optimizer.step()


p = Policy()
fill(p, 3)
w = torch.tensor([0.5, -0.75])
w.requires_grad_()
opt = optim.SGD([w], lr=0.1)
x = torch.tensor([1.0, 2.0])
for i in range(3):
    p.train_net(torch.arange(12, dtype=torch.float32).reshape(4, 3) / 10 + i)
    loss = ((w * x).sum() - 1.0) ** 2
    opt.zero_grad()
    loss.backward()
    opt.step()
weights = [p.log_alpha.detach(), w.detach()] + [q.detach() for q in p.fc.parameters()]
names = [n for n, _ in p.named_parameters()]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_tensor_flagged_trainable_by_its_own_statement(graph):
    code, _ = program_weights_match_torch(TEMPERATURE, graph=graph)
    assert "ms.Parameter(ms.Tensor(np.log(0.1)))" in code, code
    ref = load_torch(TEMPERATURE)
    assert abs(float(ref["weights"][0]) - np.log(0.1)) > 1e-3      # torch moved the temperature: a check that can fail
    # torch's tensor was no parameter of the module (fill() left it alone): neither is the converted one
    mod, _, _ = load_converted(TEMPERATURE, pynative=True)
    assert mod.names == ref["names"] == ["fc.weight", "fc.bias"], mod.names


def test_tensor_of_a_list_holding_one_element_tensors():
    src = '''
import torch

a_lst, r_lst = [], []
for i in range(3):
    a = torch.tensor([0.5 * i - 0.25])
    a_lst.append([a])
    r_lst.append(float(i))
a_batch = torch.tensor(a_lst, dtype=torch.float)
r = torch.tensor(r_lst)
diff = a_batch - r.unsqueeze(1)
mixed = [torch.tensor(1.5), torch.tensor([2.5]), 3.5]
flat = torch.tensor(mixed)
ints = [torch.tensor([3]), torch.tensor([4])]
as_ints = torch.tensor(ints)
wide = [torch.ones(2), torch.ones(2)]
try:
    torch.tensor(wide)
    refused = None
except ValueError as e:
    refused = str(e)
'''
    mod, code, _ = load_converted(src, pynative=True)
    ref = load_torch(src)
    assert "_ms_compat.tensor_data(a_lst)" in code and "ms.Tensor(r_lst)" not in code, code
    for name in ("a_batch", "r", "diff", "flat", "as_ints"):
        got, want = getattr(mod, name), ref[name]
        assert tuple(got.shape) == tuple(want.shape), (name, got.shape, want.shape)
        assert_close(got, want, what=name)
    assert str(mod.as_ints.dtype) == "Int64" and ref["as_ints"].dtype == ref["torch"].int64
    assert mod.refused == ref["refused"] == "only one element tensors can be converted to Python scalars"
