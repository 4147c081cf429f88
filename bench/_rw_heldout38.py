"""The `heldout38` set of bench/real_world.py (`--set heldout38`): jettify/pytorch-optimizer's torch_optimizer
package (about thirty `torch.optim.Optimizer` subclasses written by hand: param_groups, self.state, p.grad, in-place
tensor arithmetic, closures) and its examples/mnist.py, converted as a new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout38 [--only opt_adam,opt_mnist]

- torch_optimizer/ is converted whole beside a driver of ours. The package imports pytorch_ranger (Ranger,
  RangerQH, RangerVA: not installed here, and not measured): a stand-in module of ours with empty classes.
  Each driver trains a small network of ours (Conv2d(2, 4, 3), Tanh, Flatten, Linear to 3 outputs; seeded, the
  same initial weights on both sides: the runner's) on a fixed batch (8 inputs of 2x6x6, MSE to random targets)
  for three steps per optimizer, a fresh network per optimizer (called once before its optimizer is made, so that
  an optimizer copying the parameters when made, MADGRAD's x0, copies torch's weights on both sides). The losses are the runner's (one per backward());
  after the steps each parameter's sum and absolute sum and the network's output are printed as VALUEs, and an
  `OPT name ok` line (or the error it raised: a PRINTED line compared with torch's, so one optimizer that stops
  does not hide the others; the losses of the runs after it then stand at other indices, and the program fails).
  - opt_adam: the Adam-like optimizers with their default options, `zero_grad(); loss.backward(); step()`:
    AdaBelief (weight_decouple), AdaBound, AdaMod, DiffGrad, Lamb, NovoGrad, QHAdam, RAdam, Yogi.
  - opt_adam_more: AdamP, Apollo, MADGRAD, SWATS, Adafactor (relative steps; on a network of linear layers of
    ours: its factored second moment assumes matrices, and a convolution's 4-d weight stops torch too), then the options that take other
    paths: AdaBelief with amsgrad and rectify, AdaBound with amsbound, NovoGrad with amsgrad and grad_averaging.
  - opt_sgd: the SGD-like optimizers in the closure form (`step(closure)`, the closure clearing the gradients and
    calling backward()): AccSGD, AggMo, LARS (momentum), PID (momentum), QHM, SGDP, SGDW (nesterov), Lion,
    A2GradUni, A2GradInc, A2GradExp, Shampoo.
  - opt_lookahead: Lookahead around Yogi and around SGDW (k=2: the slow weights' update within the three steps).
  - opt_adahessian: Adahessian (`loss.backward(create_graph=True)`, then the Hutchinson estimate of the Hessian's
    diagonal through torch.autograd.grad of the gradients; seed fixed: its Rademacher draws by torch.randint).
- opt_mnist: examples/mnist.py run whole (torch_optimizer's DiffGrad, StepLR, tensorboard's SummaryWriter with
  add_image of make_grid and add_histogram of each parameter and its .grad) for one epoch (`epochs` 15 made 1 in
  the torch copy before the conversion) on synthetic MNIST idx files in ../data (200 training, 100 test images);
  torchvision does not import next to this CPU torch: the torch side gets a stand-in of ours (MNIST over those
  files, the transforms as torchvision computes them, make_grid), written after the conversion.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

from bench._rw_heldout30 import _TV_DATASETS as _MNIST_STANDIN
from bench._rw_heldout32 import _TV_TRANSFORMS
from bench._rw_heldout37 import _TV_MORE     # ToTensor of a one-channel picture

OPTIM = "jettify+pytorch-optimizer@19c3e41952b94f2d60db06e559ee9a1433b25e53"

_RANGER = {"pytorch_ranger.py": '''
"""A stand-in written by bench/_rw_heldout38.py: pytorch_ranger is not installed (nothing here is called)."""


class Ranger:
    pass


class RangerQH:
    pass


class RangerVA:
    pass
'''}


def _mnist_data(root):
    """synthetic MNIST where mnist.py reads it (../data from its directory); on the torch side (written before the
    conversion) its epochs made 1"""
    from tests.corpus import write_mnist
    root = Path(root)
    prog = root.parent / "x" / "prog"
    write_mnist(prog.parent / "data", n_train=200, n_test=100)
    script = prog / "mnist.py"
    if root.parent.name == "torch" and script.exists():
        text = script.read_text()
        if "epochs: int = 15" not in text:
            raise RuntimeError("mnist.py: its epochs default was not found")
        script.write_text(text.replace("epochs: int = 15", "epochs: int = 1"))


# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("opt_adam", OPTIM, "torch_optimizer", "driver.py", [], None),
    ("opt_adam_more", OPTIM, "torch_optimizer", "driver.py", [], None),
    ("opt_sgd", OPTIM, "torch_optimizer", "driver.py", [], None),
    ("opt_lookahead", OPTIM, "torch_optimizer", "driver.py", [], None),
    ("opt_adahessian", OPTIM, "torch_optimizer", "driver.py", [], None),
    ("opt_mnist", OPTIM, "examples/mnist.py,torch_optimizer", "mnist.py", [], _mnist_data),
]

DEPS: dict = {}

FILES = {name: dict(_RANGER) for name, *_ in PROGRAMS}

LOSSES = {"opt_adam": 40, "opt_adam_more": 40, "opt_sgd": 60, "opt_lookahead": 10, "opt_adahessian": 6,
          "opt_mnist": 8}

PRINTED = {name: r"^OPT .*$" for name, *_ in PROGRAMS if name != "opt_mnist"}
PRINTED["opt_mnist"] = r"^Test set: .*$"

_MAKE_GRID = '''
"""A stand-in written by bench/_rw_heldout38.py: make_grid as torchvision lays a batch out (padding 2, 8 a row)."""
import torch


def make_grid(batch, nrow=8, padding=2, pad_value=0.0):
    if batch.size(1) == 1:
        batch = torch.cat((batch, batch, batch), 1)
    count = batch.size(0)
    across = min(nrow, count)
    down = (count + across - 1) // across
    high, wide = batch.size(2) + padding, batch.size(3) + padding
    sheet = batch.new_full((3, high * down + padding, wide * across + padding), pad_value)
    for k in range(count):
        row, col = divmod(k, across)
        sheet[:, row * high + padding:(row + 1) * high, col * wide + padding:(col + 1) * wide] = batch[k]
    return sheet
'''

TORCH_FILES = {"opt_mnist": {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout38.py."""\nfrom . import datasets, '
                               'transforms, utils\n',
    "torchvision/datasets.py": _MNIST_STANDIN,
    "torchvision/transforms.py": _TV_TRANSFORMS + _TV_MORE,
    "torchvision/utils.py": _MAKE_GRID,
}}

_SETUP = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_optimizer as optim

torch.manual_seed(0)
inputs = torch.randn(8, 2, 6, 6)
targets = torch.randn(8, 3)


def small_net():
    """called once before its optimizer is made: the runner gives both sides torch's weights at the first call,
    and MADGRAD (x0) and Lookahead (slow weights) copy the parameters when they are made"""
    net = nn.Sequential(nn.Conv2d(2, 4, 3), nn.Tanh(), nn.Flatten(), nn.Linear(64, 3))
    with torch.no_grad():
        net(inputs)
    return net


def linear_net():
    """linear layers only: Adafactor's factored second moment assumes matrices (a convolution's 4-d weight stops
    torch too)"""
    net = nn.Sequential(nn.Flatten(), nn.Linear(72, 8), nn.Tanh(), nn.Linear(8, 3))
    with torch.no_grad():
        net(inputs)
    return net


def summary(name, net):
    with torch.no_grad():
        print("VALUE", name + "_out", float(net(inputs).abs().sum()))
        for k, p in enumerate(net.parameters()):
            print("VALUE", "%s_p%d" % (name, k), float(p.sum()))
            print("VALUE", "%s_a%d" % (name, k), float(p.abs().sum()))


def attempt(name, fit, make):
    """one optimizer's three steps and VALUEs, or the error it raised (a PRINTED line, compared with torch's)"""
    try:
        net = fit(make)
    except Exception as e:
        print("OPT", name, "raised", type(e).__name__, str(e).split(" (")[0][:120])
        return
    print("OPT", name, "ok")
    summary(name, net)


def plain(make, steps=3, build=small_net):
    net = build()
    opt = make(net.parameters())
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(net(inputs), targets)
        loss.backward()
        opt.step()
    return net


def with_closure(make, steps=3):
    net = small_net()
    opt = make(net.parameters())

    def closure():
        opt.zero_grad()
        loss = F.mse_loss(net(inputs), targets)
        loss.backward()
        return loss
    for _ in range(steps):
        opt.step(closure)
    return net
'''

# Drivers: our own code, through the repository's modules.
DRIVERS = {
    "opt_adam": _SETUP + '''
for name, make in [
    ("adabelief", lambda ps: optim.AdaBelief(ps, lr=1e-2, weight_decay=1e-2, weight_decouple=True)),
    ("adabound", lambda ps: optim.AdaBound(ps, lr=1e-2, final_lr=0.1)),
    ("adamod", lambda ps: optim.AdaMod(ps, lr=1e-2, beta3=0.9)),
    ("diffgrad", lambda ps: optim.DiffGrad(ps, lr=1e-2)),
    ("lamb", lambda ps: optim.Lamb(ps, lr=1e-2, weight_decay=1e-2)),
    ("novograd", lambda ps: optim.NovoGrad(ps, lr=1e-2)),
    ("qhadam", lambda ps: optim.QHAdam(ps, lr=1e-2, nus=(0.7, 1.0))),
    ("radam", lambda ps: optim.RAdam(ps, lr=1e-2)),
    ("yogi", lambda ps: optim.Yogi(ps, lr=1e-2)),
]:
    attempt(name, plain, make)
''',
    "opt_adam_more": _SETUP + '''
for name, make in [
    ("adamp", lambda ps: optim.AdamP(ps, lr=1e-2, weight_decay=1e-2)),
    ("apollo", lambda ps: optim.Apollo(ps, lr=1e-2, warmup=2)),
    ("madgrad", lambda ps: optim.MADGRAD(ps, lr=1e-2)),
    ("swats", lambda ps: optim.SWATS(ps, lr=1e-2)),
    ("adafactor", lambda ps: optim.Adafactor(ps)),     # on linear_net (below)
    ("adabelief_ams", lambda ps: optim.AdaBelief(ps, lr=1e-2, amsgrad=True, rectify=True)),
    ("adabound_ams", lambda ps: optim.AdaBound(ps, lr=1e-2, amsbound=True)),
    ("novograd_ams", lambda ps: optim.NovoGrad(ps, lr=1e-2, amsgrad=True, grad_averaging=True)),
]:
    attempt(name, (lambda make: plain(make, build=linear_net)) if name == "adafactor" else plain, make)
''',
    "opt_sgd": _SETUP + '''
for name, make in [
    ("accsgd", lambda ps: optim.AccSGD(ps, lr=1e-2)),
    ("aggmo", lambda ps: optim.AggMo(ps, lr=1e-2)),
    ("lars", lambda ps: optim.LARS(ps, lr=1e-1, momentum=0.9, weight_decay=1e-3)),
    ("pid", lambda ps: optim.PID(ps, lr=1e-2, momentum=0.9)),
    ("qhm", lambda ps: optim.QHM(ps, lr=1e-2, momentum=0.9)),
    ("sgdp", lambda ps: optim.SGDP(ps, lr=1e-2, momentum=0.9, weight_decay=1e-2)),
    ("sgdw", lambda ps: optim.SGDW(ps, lr=1e-2, momentum=0.9, nesterov=True, weight_decay=1e-2)),
    ("lion", lambda ps: optim.Lion(ps, lr=1e-3, weight_decay=1e-2)),
    ("a2grad_uni", lambda ps: optim.A2GradUni(ps)),
    ("a2grad_inc", lambda ps: optim.A2GradInc(ps)),
    ("a2grad_exp", lambda ps: optim.A2GradExp(ps)),
    ("shampoo", lambda ps: optim.Shampoo(ps, lr=1e-2, momentum=0.5)),
]:
    attempt(name, with_closure, make)
''',
    "opt_lookahead": _SETUP + '''
for name, make in [
    ("lookahead_yogi", lambda ps: optim.Lookahead(optim.Yogi(ps, lr=1e-2), k=2, alpha=0.5)),
    ("lookahead_sgdw", lambda ps: optim.Lookahead(optim.SGDW(ps, lr=1e-2, momentum=0.9), k=2, alpha=0.5)),
]:
    attempt(name, plain, make)
''',
    "opt_adahessian": _SETUP + '''


def hessian_steps(make, steps=3):
    net = small_net()
    opt = make(net.parameters())
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(net(inputs), targets)
        loss.backward(create_graph=True)
        opt.step()
    return net


attempt("adahessian", hessian_steps, lambda ps: optim.Adahessian(ps, lr=0.1, seed=0))
''',
}
