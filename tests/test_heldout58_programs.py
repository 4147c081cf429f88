"""Minimal reproductions of what bench/_rw_heldout58.py's programs (ikostrikov/pytorch-flows, jik876/hifi-gan,
HobbitLong/SupContrast) met, each run under torch and converted.

- A GAN loop whose discriminator step and generator step both read a batch tensor reshaped in place of its own
  name before them (hifi-gan's train.py: `y = y.unsqueeze(1)`, then `mpd(y, y_g_hat.detach())` in the
  discriminator step and `mpd(y, y_g_hat)` in the generator step): the first step returned the reshaped `y`, and
  the second step's forward reshaped it again (a 4-D waveform: "too many values to unpack" in the discriminator).
  A statement of an earlier step that rebinds a name it reads is not run again by a later step: the later step
  takes the value the earlier one returned."""
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
weights = [p.detach().reshape(-1) for p in gen.parameters()] + [p.detach().reshape(-1) for p in disc.parameters()] + seen
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
