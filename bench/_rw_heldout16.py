"""The `heldout16` set of bench/real_world.py (`--set heldout16`): a repository the converter was never run on,
converted as a new user would convert it: the torchdiffeq package converted together with one of its examples or a
short driver of ours (the package copied next to the program, both converted as one project tree).

    python bench/real_world.py --mirrors /work/.mirror --set heldout16 [--only ode_demo,odeint_fixed]

- rtqichen/torchdiffeq:
  - ode_demo: examples/ode_demo.py as it is, with small flags (--niters 3 --data_size 60 --batch_time 5
    --batch_size 4 --test_freq 3, no --viz, no --adjoint): the true spiral solved by dopri5 under no_grad, an
    ODEFunc (Linear-Tanh-Linear of y**3) trained by RMSprop through odeint's default dopri5 (adaptive steps:
    while loops on error ratios, float64 time tensors, _UncheckedAssign's custom autograd Function writing
    `scratch.data[index]`), numpy's random batches, the evaluation solve at test_freq.
  - odeint_fixed: a driver of ours: a small ODEFunc (Linear-Tanh-Linear plus a term in t) and a trained initial
    state (an nn.Parameter) given to odeint with the fixed-grid solvers euler, midpoint and rk4 (step_size 0.1), two
    SGD steps each (two parameter groups), then the solution under no_grad and the trained tensors printed: the
    losses carry the values, the printed sums the gradients.
  - odeint_adaptive: the same with the adaptive solvers dopri5 and bosh3 (rtol 1e-3, atol 1e-4), three steps each.
  - odeint_adjoint: the same through odeint_adjoint with rk4 and dopri5 (OdeintAdjointMethod, a custom
    torch.autograd.Function whose backward solves the augmented system with torch.autograd.grad of the function's
    output with respect to t, y and the parameters inside it): not converted, it stops with a MigrationError naming
    adjoint.py:94 when the first backward reaches it.
  - odenet_mnist: examples/odenet_mnist.py's ODEfunc/ODEBlock (ConcatConv2d, GroupNorm, the nfe counter) in a
    small network trained two steps on synthetic images by a driver of ours (the script's torchvision loaders do
    not import next to this torch; its module is imported with a torchvision stand-in).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

TORCHDIFFEQ = "rtqichen+torchdiffeq@657943acefa826ef04c025ebeb1ff5e9d60dc268"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("ode_demo", TORCHDIFFEQ, "torchdiffeq,examples/ode_demo.py", "ode_demo.py",
     ["--niters", "3", "--data_size", "60", "--batch_time", "5", "--batch_size", "4", "--test_freq", "3"], None),
    ("odeint_fixed", TORCHDIFFEQ, "torchdiffeq", "driver.py", [], None),
    ("odeint_adaptive", TORCHDIFFEQ, "torchdiffeq", "driver.py", [], None),
    ("odeint_adjoint", TORCHDIFFEQ, "torchdiffeq", "driver.py", [], None),
    ("odenet_mnist", TORCHDIFFEQ, "torchdiffeq,examples/odenet_mnist.py", "driver.py", [], None),
]

DEPS: dict = {}

_FUNC = '''
import torch
import torch.nn as nn


class ODEFunc(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
        with torch.no_grad():
            self.net[0].weight.copy_(torch.linspace(-0.5, 0.5, 32).reshape(16, 2))
            self.net[0].bias.copy_(torch.linspace(-0.1, 0.1, 16))
            self.net[2].weight.copy_(torch.linspace(0.4, -0.4, 32).reshape(2, 16))
            self.net[2].bias.fill_(0.05)

    def forward(self, t, y):
        return self.net(y) + 0.1 * t * y


y0 = torch.tensor([[1.0, -0.5], [0.3, 0.8]])
t = torch.linspace(0.0, 1.0, 5)
target = torch.tensor([[0.5, 0.2], [-0.1, 0.9]])
weights = torch.linspace(1, 2, 5).reshape(5, 1, 1)


def run(tag, method, steps=3, **kw):
    """SGD steps of the function's parameters and of a trained initial state through odeint; the
    solution and the trained tensors printed."""
    func = ODEFunc()
    start = nn.Parameter(y0.clone())
    optimizer = torch.optim.SGD([{"params": func.parameters()}, {"params": [start], "lr": 0.05}], lr=0.1)
    for step in range(steps):
        optimizer.zero_grad()
        sol = odeint(func, start, t, method=method, **kw)
        loss = ((sol[-1] - target) ** 2).sum() + (sol * weights).abs().mean()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        sol = odeint(func, start, t, method=method, **kw)
    print("VALUE", tag + "_sol", float(sol.sum()))
    print("VALUE", tag + "_sol_abs", float((sol * weights).abs().sum()))
    print("VALUE", tag + "_y0", float((start * torch.tensor([1.0, 2.0])).sum()))
    for i, p in enumerate(func.parameters()):
        print("VALUE", tag + "_p%d" % i, float((p * torch.linspace(0.5, 1.5, p.numel()).reshape(p.shape)).sum()))
'''

DRIVERS = {
    "odeint_fixed": '''
from torchdiffeq import odeint
''' + _FUNC + '''
run("euler", "euler", steps=2)
run("midpoint", "midpoint", steps=2, options=dict(step_size=0.1))
run("rk4", "rk4", steps=2, options=dict(step_size=0.1))
''',
    "odeint_adaptive": '''
from torchdiffeq import odeint
''' + _FUNC + '''
run("dopri5", "dopri5", rtol=1e-3, atol=1e-4)
run("bosh3", "bosh3", rtol=1e-3, atol=1e-4)
''',
    "odeint_adjoint": '''
from torchdiffeq import odeint_adjoint as odeint
''' + _FUNC + '''
run("rk4", "rk4")
run("dopri5", "dopri5", rtol=1e-3, atol=1e-4)
''',
    "odenet_mnist": '''
import sys
import types

torchvision = types.ModuleType("torchvision")
torchvision.datasets = types.ModuleType("torchvision.datasets")
torchvision.transforms = types.ModuleType("torchvision.transforms")
sys.modules["torchvision"] = torchvision
sys.modules["torchvision.datasets"] = torchvision.datasets
sys.modules["torchvision.transforms"] = torchvision.transforms
sys.argv = [sys.argv[0], "--tol", "1e-2"]
import torch
import torch.nn as nn
from odenet_mnist import ODEBlock, ODEfunc, Flatten, norm, learning_rate_with_decay

torch.manual_seed(0)
feature = ODEBlock(ODEfunc(8))
model = nn.Sequential(nn.Conv2d(1, 8, 3, 1), norm(8), nn.ReLU(inplace=True), nn.Conv2d(8, 8, 4, 2, 1),
                      feature, norm(8), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d((1, 1)), Flatten(),
                      nn.Linear(8, 10))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
lr_fn = learning_rate_with_decay(4, batch_denom=128, batches_per_epoch=2, boundary_epochs=[1, 2],
                                 decay_rates=[1, 0.1, 0.01])
x = torch.randn(4, 1, 10, 10)
y = torch.tensor([1, 3, 5, 7])
for itr in range(3):
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr_fn(itr)
    optimizer.zero_grad()
    logits = model(x)
    loss = criterion(logits, y)
    nfe_forward = feature.nfe
    feature.nfe = 0
    loss.backward()
    optimizer.step()
    print("nfe", nfe_forward)
with torch.no_grad():
    out = model(x)
print("VALUE logits_sum", float(out.sum()))
print("VALUE logits_abs", float(out.abs().sum()))
''',
}
