"""Minimal reproductions of what bench/_rw_heldout52.py's programs (akamaster/pytorch_resnet_cifar10,
caogang/wgan-gp) met, each run under torch and converted.

- A critic loop and a generator step in one scope (wgan-gp's script: `for iter_d in range(CRITIC_ITERS): ...
  optimizerD.step()`, then `G.backward(mone); optimizerG.step()`): the two train steps got fresh names for their
  functions (forward_fn_2, train_step_2) but not for `grad_fn`, an assignment: the generator step rebound the
  critic step's grad_fn, so from the second iteration on the critic step differentiated the generator's forward
  with respect to the generator's parameters (wgan-gp: an unpacking error; here, both steps of the same arity,
  the wrong network trained silently).
- The option-A shortcut of the CIFAR ResNets, `LambdaLayer(lambda x: F.pad(x[:, :, ::2, ::2], ...))` stored on a
  Cell and called in its construct: GRAPH mode stopped with MindSpore's "Parse Lambda Function Fail" (it reads a
  lambda by its source line); the lambda is now bound on a line of its own (graph_stored_lambdas.py).
- `criterion = nn.CrossEntropyLoss().cuda()`, later `criterion.half()` (trainer.py's --half): the moved layer was
  not known to be a module, and its cast became Tensor.astype on a Cell, an AttributeError
  (module_cast.constructed_then_moved).
- `torch.manual_seed(1)` after `random.seed(...)`: the converted manual_seed (mindspore.set_seed) reseeded Python's
  random, which torch's leaves alone: gan_toy.py's `random.choice` data differed from torch's."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

CRITIC_THEN_GENERATOR = _FILL + '''
import torch.nn as nn


def batches():
    k = 0
    while True:
        k += 1
        yield np.linspace(-1, 1, 12).reshape(6, 2).astype(np.float32) * k


netG = nn.Sequential(nn.Linear(2, 8), nn.ReLU(True), nn.Linear(8, 2))
netD = nn.Sequential(nn.Linear(2, 8), nn.ReLU(True), nn.Linear(8, 1))
fill(netG, 1)
fill(netD, 2)
optimizerD = torch.optim.Adam(netD.parameters(), lr=1e-2, betas=(0.5, 0.9))
optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-2, betas=(0.5, 0.9))
one = torch.tensor(1, dtype=torch.float)
mone = one * -1
data = batches()
seen = []
for iteration in range(2):
    for p in netD.parameters():
        p.requires_grad = True
    for iter_d in range(2):
        real = torch.Tensor(next(data))
        netD.zero_grad()
        D_real = netD(real).mean()
        D_real.backward(mone)
        noise = torch.Tensor(next(data)) * 0.5
        fake = netG(noise).detach()
        D_fake = netD(fake).mean()
        D_fake.backward(one)
        optimizerD.step()
        seen.append(D_real.detach())
    for p in netD.parameters():
        p.requires_grad = False
    netG.zero_grad()
    real = torch.Tensor(next(data))
    fake = netG(real * 0.25)
    G = netD(fake).mean()
    G.backward(mone)
    optimizerG.step()
    seen.append(G.detach())
weights = [p.detach() for p in netD.parameters()] + [p.detach() for p in netG.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_critic_loop_then_generator_step_in_one_scope(graph):
    program_weights_match_torch(CRITIC_THEN_GENERATOR, graph=graph)


OPTION_A_SHORTCUT = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F


class LambdaLayer(nn.Module):
    def __init__(self, lambd):
        super(LambdaLayer, self).__init__()
        self.lambd = lambd

    def forward(self, x):
        return self.lambd(x)


class Block(nn.Module):
    def __init__(self, planes):
        super(Block, self).__init__()
        self.conv = nn.Conv2d(planes // 2, planes, 3, stride=2, padding=1, bias=False)
        self.shortcut = LambdaLayer(lambda x:
                                    F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, planes // 4, planes // 4), "constant", 0))

    def forward(self, x):
        out = self.conv(x)
        out += self.shortcut(x)
        return F.relu(out).mean(dim=(2, 3)).sum(1)


net = Block(4)
fill(net, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
seen = []
for k in range(3):
    x = torch.linspace(-1, 1, 2 * 2 * 6 * 6).reshape(2, 2, 6, 6) * (k + 1)
    loss = (net(x) - 1).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach() for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_lambda_handed_to_a_cell_runs_compiled(graph):
    code, _ = program_weights_match_torch(OPTION_A_SHORTCUT, graph=graph)
    assert "LambdaLayer(_ms_cell_fn1)" in code


MOVED_LOSS_CAST = _FILL + '''
import torch.nn as nn

model = nn.Linear(4, 3)
fill(model, 5)
criterion = nn.CrossEntropyLoss().cpu()
model.double()
criterion.double()
x = torch.linspace(-1, 1, 20, dtype=torch.float64).reshape(5, 4)
out = model(x)
weights = [out, criterion(out, torch.tensor([0, 1, 2, 1, 0]))]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_loss_layer_moved_then_cast(graph):
    program_weights_match_torch(MOVED_LOSS_CAST, graph=graph)


SEEDED_PYTHON_RANDOM = '''
import random

import torch

random.seed(3)
torch.manual_seed(1)
centers = [(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)]
weights = [torch.tensor([random.choice(centers) for _ in range(6)]), torch.tensor([random.random()])]
'''


def test_manual_seed_leaves_python_random_alone():
    program_weights_match_torch(SEEDED_PYTHON_RANDOM, graph=False)
