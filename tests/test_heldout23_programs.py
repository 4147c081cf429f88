"""Minimal reproductions of what bench/_rw_heldout23.py's programs (lucidrains/vit-pytorch's variants,
milesial/Pytorch-UNet, jadore801120/attention-is-all-you-need-pytorch's train_epoch) needed, each compared with
torch.

- `del self.cache` in a method forward calls (vit-pytorch's Extractor.clear): the read guard of state kept across
  calls wrapped the statement's target, `del _ms_compat.graph_state(self.cache, ...)`, not valid Python: the whole
  file failed to convert (copied unchanged). It is now `self.cache = None`, as `del name` is in Cell code.
- A program that sets a sys.modules entry between `import sys` and `import torch` (the drivers' stand-ins for
  torchvision and torchtext): the run header (`ms.set_context(mode=...)`, `_ms_compat.set_device(...)`) went after
  `import sys`, before the mindspore imports put where `import torch` stood: NameError: name 'ms' is not defined."""
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


STAND_IN_FIRST = """
import sys
import types

import numpy as np

sys.modules["standin_vision"] = types.ModuleType("standin_vision")
sys.modules["standin_vision"].transforms = None

import torch
import torch.nn as nn
import torch.nn.functional as F


def fill(module, seed):
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, tuple(p.shape)).astype(np.float32)))


model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
fill(model, 5)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
x = torch.linspace(-1, 1, 12).reshape(4, 3)
y = torch.tensor([1, 0, 1, 1])
losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
weights = [p.detach() for p in model.parameters()] + losses
"""


@pytest.mark.parametrize("graph", [False, True])
def test_run_header_after_imports_that_follow_statements(graph):
    code, _ = program_weights_match_torch(STAND_IN_FIRST, graph=graph)
    lines = code.splitlines()
    first_use = min(i for i, line in enumerate(lines) if line.startswith(("ms.", "_ms_compat.")))
    assert "import mindspore as ms" in lines[:first_use] and "import _ms_compat" in lines[:first_use], code
    assert lines.index('sys.modules["standin_vision"] = types.ModuleType("standin_vision")') < first_use, code
