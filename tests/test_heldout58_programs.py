"""Minimal reproductions of what bench/_rw_heldout58.py's programs (ikostrikov/pytorch-flows, jik876/hifi-gan,
HobbitLong/SupContrast) met, each run under torch and converted.

- A GAN loop whose discriminator step and generator step both read a batch tensor reshaped in place of its own
  name before them (hifi-gan's train.py: `y = y.unsqueeze(1)`, then `mpd(y, y_g_hat.detach())` in the
  discriminator step and `mpd(y, y_g_hat)` in the generator step): the first step returned the reshaped `y`, and
  the second step's forward reshaped it again (a 4-D waveform: "too many values to unpack" in the discriminator).
  A statement of an earlier step that rebinds a name it reads is not run again by a later step: the later step
  takes the value the earlier one returned.
- A class of the program stored on torch's nn (pytorch-flows' flows.py: `nn.MaskedLinear = MaskedLinear`, then
  `nn.MaskedLinear(...)` in MADE): the store and every use were raising TODOs ("assigns a torch global setting",
  "no MindSpore mapping known"); in the module that stores it, `nn.MaskedLinear` is the program's MaskedLinear.
- A name a loop binds and the code after it reads, bound by another branch of an `if` around the loop too
  (MADE's `a`, under `if mode == 'direct'` and in the inverse's column loop): GRAPH mode refused it ("The local
  variable 'a' defined in the 'for' loop body cannot be used outside of the loop body"); the `a = None` before the
  loop was not written, the other branch counting as binding it first.
- A NumPy permutation kept as a Module attribute and used as an index in forward (pytorch-flows' Reverse:
  `inputs[:, self.perm]`): GRAPH mode refused it ("the types only support 'Slice', ... but got External"); read
  through _ms_compat.host_index as a NumPy name already was."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

REBOUND_BATCH_TWO_STEPS = _FILL + '''
import torch.nn as nn

gen = nn.Conv1d(2, 1, 3, padding=1)
disc = nn.Conv1d(1, 1, 3, padding=1)
fill(gen, 1)
fill(disc, 2)
opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
seen = []
batches = [(torch.linspace(-1, 1, 2 * 2 * 6).reshape(2, 2, 6) * (k + 1), torch.linspace(0, 1, 12).reshape(2, 6))
           for k in range(2)]
for x, y in batches:
    x = torch.autograd.Variable(x)
    y = torch.autograd.Variable(y)
    y = y.unsqueeze(1)
    fake = gen(x)
    opt_d.zero_grad()
    loss_d = (1 - disc(y)).pow(2).mean() + disc(fake.detach()).pow(2).mean()
    loss_d.backward()
    opt_d.step()
    opt_g.zero_grad()
    loss_g = (1 - disc(fake)).pow(2).mean() + (y - fake).abs().mean()
    loss_g.backward()
    opt_g.step()
    seen += [loss_d.detach(), loss_g.detach()]
weights = [p.detach().reshape(-1) for p in [*gen.parameters(), *disc.parameters()]] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_batch_rebound_before_two_steps(graph):
    program_weights_match_torch(REBOUND_BATCH_TWO_STEPS, graph=graph)


OWN_CLASS_ON_TORCH_NN = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F


class MaskedLinear(nn.Module):
    def __init__(self, cin, cout, mask):
        super().__init__()
        self.linear = nn.Linear(cin, cout)
        self.register_buffer('mask', mask)

    def forward(self, x):
        return F.linear(x, self.linear.weight * self.mask, self.linear.bias)


nn.MaskedLinear = MaskedLinear

mask = torch.tril(torch.ones(3, 3))
net = nn.Sequential(nn.MaskedLinear(3, 3, mask), nn.Tanh(), nn.MaskedLinear(3, 3, mask))
fill(net, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
seen = []
for k in range(2):
    x = torch.linspace(-1, 1, 12).reshape(4, 3) * (k + 1)
    loss = net(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_own_class_stored_on_torch_nn(graph):
    code, sites = program_weights_match_torch(OWN_CLASS_ON_TORCH_NN, graph=graph)
    assert "nn.MaskedLinear" not in code.replace("# msmigrate: nn.MaskedLinear", "")
    assert any(s.api == "torch.nn.MaskedLinear" and s.target == "(removed)" for s in sites)


LOOP_NAME_AFTER_OTHER_BRANCH = _FILL + '''
import torch.nn as nn


class Made(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 6)

    def forward(self, inputs, mode='direct'):
        if mode == 'direct':
            m, a = self.net(inputs).chunk(2, 1)
            return (inputs - m) * torch.exp(-a), -a.sum(-1, keepdim=True)
        else:
            x = torch.zeros_like(inputs)
            for i_col in range(inputs.shape[1]):
                m, a = self.net(x).chunk(2, 1)
                x = x + (inputs * torch.exp(a) + m) * (torch.arange(3) == i_col).float()
            return x, -a.sum(-1, keepdim=True)


net = Made()
fill(net, 5)
x = torch.linspace(-1, 1, 12).reshape(4, 3)
u, logdet = net(x)
back, inv_logdet = net(u, mode='inverse')
weights = [u, logdet, back, inv_logdet]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_name_a_loop_binds_after_another_branch_bound_it(graph):
    code, _ = program_weights_match_torch(LOOP_NAME_AFTER_OTHER_BRANCH, graph=graph)
    assert "a = None" in code


NUMPY_PERMUTATION_ATTRIBUTE = _FILL + '''
import torch.nn as nn


class Reverse(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.perm = np.array(np.arange(0, n)[::-1])
        self.inv_perm = np.argsort(self.perm)
        self.scale = nn.Linear(n, n)

    def forward(self, inputs, mode='direct'):
        if mode == 'direct':
            return self.scale(inputs)[:, self.perm]
        return inputs[:, self.inv_perm]


net = Reverse(3)
fill(net, 6)
x = torch.linspace(-1, 1, 12).reshape(4, 3)
y = net(x)
weights = [y, net(y, mode='inverse')]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_numpy_permutation_attribute_as_index(graph):
    code, _ = program_weights_match_torch(NUMPY_PERMUTATION_ATTRIBUTE, graph=graph)
    assert "host_index(self.perm)" in code
