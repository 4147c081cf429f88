"""In-place changes of an entry whose holder's kind the converter cannot see (msmigrate/held_items.py), run under torch
and converted: the EMA idioms real trainers write, and the rows of a tensor.

- `self.shadow[k].mul_(d).add_(v, alpha=1 - d)` over a dict of cloned weights, a chain on an entry keyed by a name:
  it was a raising TODO ("in place on a slice").
- `ema_params[name].copy_(v)` over `dict(ema_model.named_parameters())`: the converted `ema_params[name] = v`
  rebound the dict's entry and left the EMA model's weights where they were, silently.
- `sd_ema[k].mul_(d).add_(...)` over `ema_model.state_dict()`: the entry is the model's own parameter.
- `x[i].mul_(2)` on a tensor's row (a view in torch): assigned into the tensor; `x[idx].add_(1)` with a tensor of
  indices selects a copy in torch, which changes nothing."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL

EMA_PROGRAM = _FILL + '''
import copy

import torch.nn as nn


class ShadowEMA:
    def __init__(self, model, decay):
        self.decay = decay
        self.shadow = {k: v.detach().clone() for k, v in model.state_dict().items()}

    @torch.no_grad()
    def update(self, model):
        for k, v in model.state_dict().items():
            self.shadow[k].mul_(self.decay).add_(v.detach(), alpha=1 - self.decay)


def update_params(ema_model, model, decay):
    ema_params = dict(ema_model.named_parameters())
    with torch.no_grad():
        for name, p in model.named_parameters():
            ema_params[name].copy_(decay * ema_params[name] + (1 - decay) * p)


def update_state(ema_model, model, decay):
    sd, sd_ema = model.state_dict(), ema_model.state_dict()
    with torch.no_grad():
        for k in sd:
            sd_ema[k].mul_(decay).add_(sd[k].detach(), alpha=1 - decay)


net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
fill(net, 0)
shadow = ShadowEMA(net, 0.9)
by_params, by_state = copy.deepcopy(net), copy.deepcopy(net)
opt = torch.optim.SGD(net.parameters(), lr=0.5)
seen = []
for k in range(3):
    x = torch.linspace(-1, 1, 12).reshape(4, 3) * (k + 1)
    loss = net(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    shadow.update(net)
    update_params(by_params, net, 0.8)
    update_state(by_state, net, 0.7)
    seen.append(loss.detach())
weights = (list(shadow.shadow.values()) + [p.detach() for p in by_params.parameters()]
           + [p.detach() for p in by_state.parameters()] + seen)
'''

ROWS_PROGRAM = '''
import torch


def scale_rows(x, i, idx):
    x[i].mul_(2)
    x[i + 1].add_(x[0])
    x[idx].add_(100)     # a copy in torch: x stays as it is
    return x


x = torch.arange(12.0).reshape(4, 3)
scale_rows(x, 1, torch.tensor([0, 3]))
bufs = [torch.ones(2), torch.zeros(2)]
for j in range(2):
    bufs[j].add_(j + 5)
weights = [x, bufs[0], bufs[1]]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_ema_updates_of_dict_entries(graph):
    code, _ = program_weights_match_torch(EMA_PROGRAM, graph=graph)
    assert "_ms_compat.item_in_place(ema_params, name, " in code and "_ms_compat.item_in_place(sd_ema, k, " in code


def test_rows_and_list_entries_changed_in_place():
    code, _ = program_weights_match_torch(ROWS_PROGRAM, graph=False)
    assert "_ms_compat.item_in_place(x, i, " in code and "_ms_compat.item_in_place(bufs, j, " in code


EMA_MODULE_PROGRAM = _FILL + '''
import copy

import torch.nn as nn


class Ema(nn.Module):
    """an EMA of a model's state with no forward of its own (timm's ModelEmaV2 without its forward)"""
    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay

    def _update(self, model, update_fn):
        with torch.no_grad():
            for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                ema_v.copy_(update_fn(ema_v, model_v))

    def update(self, model):
        self._update(model, update_fn=lambda e, m: self.decay * e + (1. - self.decay) * m)


net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
fill(net, 0)
ema = Ema(net, 0.6)
opt = torch.optim.SGD(net.parameters(), lr=0.5)
seen = []
for k in range(3):
    x = torch.linspace(-1, 1, 12).reshape(4, 3) * (k + 1)
    loss = net(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema.update(net)
    seen.append(loss.detach())
weights = [p.detach() for p in ema.module.parameters()] + [ema.module[1].running_mean.clone()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_ema_module_without_forward(graph):
    """A Module with no forward, here or in a subclass, runs its methods on the host: the state_dict values its
    update loop changes in place are the EMA model's tensors, not rows of a tensor in Cell code (that was a raising
    TODO, "a row of `self.module.state_dict().values()`")."""
    program_weights_match_torch(EMA_MODULE_PROGRAM, graph=graph)
