"""Minimal reproductions of what bench/_rw_heldout59.py's programs (facebookresearch/DiT, facebookresearch/ConvNeXt,
microsoft/Swin-Transformer, with timm converted by --deps) met, each run under torch and converted.

- A model's `forward` passed as a function, not called (DiT's sample.py hands `model.forward_with_cfg` to
  p_sample_loop, and a DDIM sampling `model.forward` to ddim_sample_loop; here a deep copy of a trained model as
  train.py's EMA is): the reference was kept, and MindSpore's Cell has no `forward` ("The 'DiT' object has no
  attribute 'forward'"). A module's `forward` read is its construct; one of a receiver of unknown type goes
  through _ms_compat.forward_of, as the call `layer.forward(x)` does."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

FORWARD_PASSED = _FILL + '''
from copy import deepcopy

import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x, scale=1.0):
        return torch.tanh(self.fc(x)) * scale


def sample_loop(fn, x, steps, **kwargs):
    for _ in range(steps):
        x = x - 0.1 * fn(x, **kwargs)
    return x


net = Net()
fill(net, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 6).reshape(2, 3)
for _ in range(2):
    loss = sample_loop(net.forward, x, 2).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
ema = deepcopy(net)
with torch.no_grad():
    fns = {"own": net.forward}
    a = sample_loop(ema.forward, x, 3, scale=2.0)
    b = sample_loop(fns["own"], x, 1)
weights = [p.detach().reshape(-1) for p in net.parameters()] + [a, b, loss.detach()]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_forward_passed_as_function(graph):
    code, _ = program_weights_match_torch(FORWARD_PASSED, graph=graph)
    assert ".forward" not in code.replace("forward_of", "")
