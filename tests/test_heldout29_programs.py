"""Minimal reproductions of what bench/_rw_heldout29.py's programs (locuslab/TCN's task scripts, davda54/sam's
example/train.py, lucidrains/lion-pytorch) needed, each compared with torch in PYNATIVE and GRAPH mode.

- Gradient clipping between `zero_grad()` and `backward()` under a condition (TCN's copymem_test.py clips the
  gradients zero_grad() just cleared, inside `if args.clip > 0:`): torch clips nothing there. The plain
  statement was already removed (train_loop._take_cleared_clips); under the `if` it stayed as a
  `_ms_compat.clip_grad_norm_` on the parameters, which raises MigrationError (MindSpore keeps no .grad), so the
  script stopped at its first step. The `if` whose only statement is such a clip, with a test that calls
  nothing, now goes with it.
- Reductions over a list of dims for std/var (`data.std(dim=[0, 2, 3])`, sam's data/cifar.py normalisation
  statistics): torch takes a list; ops.std/var/std_mean/var_mean refused it (`Each axis should be integer, but
  got <class 'list'>`). The _ms_compat reductions pass a tuple, as they already did for the norms."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

CLEARED_CLIP = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import weight_norm


class Trim(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        return x[:, :, :-self.n].contiguous()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(2, 4, 3, padding=4, dilation=2))
        self.trim = Trim(4)
        self.out = nn.Linear(4, 3)

    def forward(self, x):
        y = torch.relu(self.trim(self.conv(x)))
        return self.out(y.transpose(1, 2))


clip = 0.5
model = Net()
fill(model, 3)
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-2)
data = torch.linspace(-2, 3, 2 * 2 * 10).reshape(2, 2, 10) ** 2
# normalised by statistics over a list of dims
data = (data - data.mean(dim=[0, 2], keepdim=True)) / data.std(dim=[0, 2], keepdim=True)
spread = torch.var(data * 2, dim=[0, 2]) + torch.std_mean(data, dim=[1, 2])[0].sum() \\
    + torch.var_mean(data, [0, 1])[0].sum()
target = torch.tensor([[0, 1, 2, 0, 1, 2, 0, 1, 2, 0], [2, 2, 1, 1, 0, 0, 2, 2, 1, 1]])
losses = []
for step in range(3):
    optimizer.zero_grad()
    out = model(data)
    loss = F.cross_entropy(out.reshape(-1, 3), target.view(-1))
    if clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
weights = [p.detach() for p in model.parameters()] + [torch.tensor(losses), spread]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_clip_of_cleared_gradients_under_if_and_list_dim_spreads(graph):
    code, sites = program_weights_match_torch(CLEARED_CLIP, graph=graph)
    assert "clip_grad_norm_" not in code, code
    assert any(s.api == "torch.nn.utils.clip_grad_norm_" and s.target == "removed" for s in sites), sites
