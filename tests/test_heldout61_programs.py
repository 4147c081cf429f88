"""Minimal reproductions of what bench/_rw_heldout61.py's programs (karpathy/minGPT, lucidrains/x-transformers,
facebookresearch/detr) met, each run under torch and converted.

- A decorator of methods whose wrapper takes the instance as `self` outside any class (x-transformers'
  eval_decorator: `def inner(self, *args, **kwargs): was_training = self.training; self.eval(); ...;
  self.train(was_training)`, on AutoregressiveWrapper.generate): `self` outside a class counted as an object that
  is no Module, so `self.eval()` and `self.train(mode)` stayed as written ("'AutoregressiveWrapper' object has no
  attribute 'eval'", naming no line of the original). Outside a class, `self` is a name of unknown type like any
  other parameter.
- einx's element-wise operations (x-transformers: `einx.subtract('j, i -> i j', k_pos, q_pos)` for alibi's and the
  relative positions, `einx.where('b n, b n d, -> b n d', mask, out, 0.)` on the attention layers' outputs,
  `einx.multiply('b n h, b h n d -> b h n d', gates, out)` for gated values): einx was no torch name, so its calls
  were copied through and stopped on MindSpore tensors with einx's BackendResolutionError, naming no line. einx is
  a torch submodule now; element-wise calls with a literal description of plain axes are written out (operands
  indexed with None, transposed into the output's order, then the MindSpore operation), the rest are TODOs that
  raise MigrationError naming the line.
- A module's device read through its first buffer (x-transformers' AlibiPositionalBias: `@property def device(self):
  return next(self.buffers()).device`, read in forward): GRAPH mode cannot compile the generator behind
  buffers() ("Unsupported expression 'Yield'"; a MigrationError naming the line, in msmigrate verify's GRAPH check of
  the alibi model). `next(self.buffers())` is the first buffer __init__ surely registers, `self.slopes`, as
  `next(self.parameters())` already was the first parameter (first_parameters.py)."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

EVAL_DECORATOR = _FILL + '''
import torch.nn as nn


def eval_decorator(fn):
    def inner(self, *args, **kwargs):
        was_training = self.training
        self.eval()
        out = fn(self, *args, **kwargs)
        self.train(was_training)
        return out
    return inner


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x):
        return self.bn(self.fc(x))

    @torch.no_grad()
    @eval_decorator
    def generate(self, x):
        return self(x) + float(self.training)


net = Net()
fill(net, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 12).reshape(4, 3)
seen = []
for _ in range(2):
    loss = net(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
    seen.append(net.generate(x))        # eval mode inside (running statistics), train mode again after
    seen.append(torch.tensor(float(net.training)))
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_eval_and_train_through_a_decorator_self(graph):
    program_weights_match_torch(EVAL_DECORATOR, graph=graph)


EINX_ELEMENTWISE = _FILL + '''
import einx
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.gate = nn.Linear(3, 2)

    def forward(self, x, mask):
        n = x.shape[1]
        pos = torch.arange(n)
        rel = einx.subtract('j, i -> i j', pos, pos).abs().float()
        bias = -einx.subtract('j, i -> 1 i j', pos, pos).abs()
        h = self.fc(x)
        h = einx.where('b n, b n d, -> b n d', mask, h, 0.)
        g = self.gate(x).sigmoid()
        h2 = einx.multiply('b n h, b h n d -> b h n d', g, h[:, None].expand(-1, 2, -1, -1))
        w = einx.multiply('b n, b', h.sum(-1), x.sum((1, 2)))
        lt = einx.less('j, i -> i j', pos, torch.tensor([1, 2]))
        e = einx.subtract('... j, ... i -> ... i j', h.sum(-1), h.sum(-1))
        return ((h2 * torch.linspace(0, 1, 3)).pow(2).mean() + (rel * bias).mean() + w.mean() + lt.float().mean()
                + e.pow(2).mean())


net = Net()
fill(net, 5)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 2 * 4 * 3).reshape(2, 4, 3)
mask = torch.tensor([[True, True, False, True], [True, False, True, True]])
seen = []
for _ in range(2):
    loss = net(x, mask)
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_einx_elementwise(graph):
    program_weights_match_torch(EINX_ELEMENTWISE, graph=graph)


EINX_OTHER = '''
import einx
import torch


def flip(x):
    return einx.rearrange('b n -> n b', x)
'''


def test_einx_other_operations_raise():
    """an einx call that is not converted is a TODO raising MigrationError at its line (not einx's error)"""
    import mindspore as ms
    import numpy as np

    from tests.parity.harness import load_converted
    mod, _, sites = load_converted(EINX_OTHER, pynative=True)
    assert any(s.status == "todo" and s.api == "einx.rearrange" and s.line == 7 for s in sites)
    with pytest.raises(Exception, match=r"einx\.rearrange at __main__:7 was not converted") as caught:
        mod.flip(ms.Tensor(np.ones((2, 3), np.float32)))
    assert type(caught.value).__name__ == "MigrationError"


FIRST_BUFFER_DEVICE = _FILL + '''
import torch.nn as nn


class Bias(nn.Module):
    def __init__(self, heads):
        super().__init__()
        slopes = torch.tensor([2.0 ** -(i + 1) for i in range(heads)])
        slopes = slopes.reshape(heads, 1, 1)
        self.register_buffer('slopes', slopes, persistent=False)
        self.register_buffer('bias', None, persistent=False)

    @property
    def device(self):
        return next(self.buffers()).device

    def forward(self, n):
        h, device = self.slopes.shape[0], self.device
        pos = torch.arange(n, device=device)
        return -(pos[None, :] - pos[:, None]).abs() * self.slopes


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.bias = Bias(2)

    def forward(self, x):
        scores = self.fc(x) @ x.transpose(1, 2)
        return (scores[:, None] + self.bias(x.shape[1])).softmax(-1).sum(1) @ x


net = Net()
fill(net, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 2 * 3 * 4).reshape(2, 3, 4)
seen = []
for _ in range(2):
    loss = net(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
with torch.no_grad():
    seen.append(net(x))     # the network called alone (a Cell compiled whole in GRAPH mode)
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_device_of_the_first_buffer(graph):
    program_weights_match_torch(FIRST_BUFFER_DEVICE, graph=graph)
