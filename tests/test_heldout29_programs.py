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
  got <class 'list'>`). The _ms_compat reductions pass a tuple, as they already did for the norms.
- `torch.manual_seed(s)` became `mindspore.set_seed(s)`, which also calls np.random.seed(s): a program whose
  NumPy stream was seeded drew other np.random numbers after the call than under torch (TCN's data generators
  and its np.random.shuffle of training sequences: other data, other order). _ms_compat.manual_seed puts NumPy's
  stream back where it was once NumPy was seeded.
- `soft.scatter_(dim=1, index=..., value=1.0 - eps)` (sam's smooth_crossentropy): a value= that is no
  literal went to the tensor-src path, `ops.slice(<float>, ...)`, which refuses a number. value= is a float."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

CLEARED_CLIP = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import weight_norm as wn


class Trim(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        return x[:, :, :-self.n].contiguous()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = wn(nn.Conv1d(2, 4, 3, padding=4, dilation=2))
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


SEEDED_SMOOTH = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F


def smooth_loss(logits, target, eps=0.1):
    k = logits.size(1)
    soft = torch.full_like(logits, fill_value=eps / (k - 1))
    soft.scatter_(dim=1, index=target.unsqueeze(1), value=1.0 - eps)
    return F.kl_div(input=F.log_softmax(logits, dim=1), target=soft, reduction='none').sum(-1)


np.random.seed(3)
first = np.random.rand(2)
torch.manual_seed(11)      # torch leaves NumPy's stream where it is
inputs = torch.from_numpy(np.random.rand(6, 4).astype(np.float32))
labels = torch.from_numpy(np.random.randint(0, 3, 6))
model = nn.Linear(4, 3)
fill(model, 5)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
losses = []
for step in range(3):
    order = np.random.permutation(6)[:4]
    x, y = inputs[order], labels[order]
    opt.zero_grad()
    loss = smooth_loss(model(x), y, eps=0.2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
weights = [p.detach() for p in model.parameters()] + [torch.tensor(losses), torch.from_numpy(first)]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_manual_seed_leaves_seeded_numpy_and_scatter_value_expression(graph):
    code, _ = program_weights_match_torch(SEEDED_SMOOTH, graph=graph)
    assert "_ms_compat.manual_seed(" in code, code
