"""The `heldout46` set of bench/real_world.py (`--set heldout46`): locuslab/fast_adversarial (MNIST and CIFAR10)
and yaodongyu/TRADES, converted as a new user would convert them: adversarial training, gradients with respect to
the input (`delta.requires_grad = True` and `delta.grad`, torch.autograd.grad of a KL loss), sign steps projected
with clamp/min/max, `.data` writes and masked `.data[...]` writes, random starts.

    python bench/real_world.py --mirrors /work/.mirror --set heldout46 [--only fa_mnist_fgsm,trades_train]

- locuslab/fast_adversarial, MNIST/ (train_mnist.py, evaluate_mnist.py, mnist_net.py; synthetic MNIST idx files
  under x/mnist-data, the scripts' `../mnist-data`: 16 training and 8 test images):
  - fa_mnist_fgsm: train_mnist.py run whole, `--attack fgsm --epochs 1 --batch-size 4`: the random start
    (`uniform_` of a zeros_like: the runner's matched draws), the input gradient through `delta.grad`, the
    `.data` projections, then Adam on the clamped adversarial batch with the cyclic learning rate
    (np.interp) written into param_groups; torch.save of the state_dict. Two backward()s per step.
  - fa_mnist_pgd: the same with `--attack pgd --attack-iters 3 --alpha 0.1`: `opt.zero_grad()` inside the attack
    loop (delta's own gradient accumulates across its iterations), `delta.data[I] = ...[I]` on the examples still
    classified right. Four backward()s per step.
  - fa_mnist_eval: a driver of ours calls train_mnist.main() (fgsm, as above, `--fname` a file of ours) and then
    evaluate_mnist.main() (`--attack pgd --attack-iters 3 --restarts 2 --alpha 0.1`: torch.load of the trained
    state_dict, attack_pgd's restarts with `torch.where`, the early break, `delta.grad.zero_()`, the masked
    max_delta update), its "Test Loss" log line sent to stdout (PRINTED); then evaluate_mnist's attack_fgsm and
    attack_pgd on the first test batch of 4, their deltas' sums printed as VALUEs.
- locuslab/fast_adversarial, CIFAR10/ (utils.py, preact_resnet.py): train_fgsm.py, train_pgd.py and train_free.py
  need apex (`amp.initialize` at opt level O2, `amp.scale_loss` around every backward()), which is not installed
  and needs CUDA: they are not run. utils.py imports apex.amp at its top and calls it only when attack_pgd gets an
  optimizer: an `apex` stand-in of ours on both sides (its scale_loss raises; nothing calls it).
  - fa_cifar_pgd: a driver of ours: utils.get_loaders on a synthetic CIFAR-10 (16 training and 8 test images,
    RandomCrop with padding, RandomHorizontalFlip, Normalize; 2 workers, seeds aligned by the runner),
    PreActResNet18, SGD with momentum and weight decay, and a PGD training step of the shape train_pgd.py has
    (per-channel uniform_ random starts written into slices of delta, two sign steps on `delta.grad`,
    `delta.grad.zero_()`, the step on the detached perturbation) without amp, 4 steps; then utils.evaluate_pgd
    (attack_pgd with 3 iterations and 2 restarts: index lists from torch.where, `delta.data[index[0], :, :, :]`)
    and evaluate_standard. VALUEs: both evaluations' losses and accuracies, utils' upper/lower limits.
  - fa_cifar_free: a driver of ours, the same loaders, network and evaluations around a training loop of the
    shape train_free.py has, without amp: one perturbation for the whole run (`delta.requires_grad = True` before
    the loop), each batch replayed twice, one backward() serving the optimizer's step and `delta.grad` (sign step,
    `.data` projection, `delta.data[:X.size(0)] = ...` onto the image range), `delta.grad.zero_()` after the step,
    CyclicLR stepped each replay.
- yaodongyu/TRADES (trades.py, train_trades_mnist.py, pgd_attack_mnist.py, models/; synthetic MNIST under x/data,
  the scripts' `../data`: 16 training and 8 test images):
  - trades_train: a driver of ours imports train_trades_mnist.py with `--batch-size 4 --test-batch-size 4
    --epochs 1 --log-interval 1` (its loaders and args built at import), sets `args.num_steps = 3` (the script's
    --num-steps has no type: a value given on the command line would be a string), and calls its main():
    SmallCNN, SGD with momentum, adjust_learning_rate, train() through trades.trades_loss (model.eval(), the
    randn start, three sign steps on torch.autograd.grad of KLDivLoss(size_average=False) under enable_grad,
    model.train(), the natural and robust losses), then eval_train and eval_test (their accuracy lines PRINTED).
  - trades_pgd: a driver of ours imports pgd_attack_mnist.py with `--test-batch-size 4`, builds two SmallCNNs
    in eval mode (fc3's weight, which SmallCNN initialises to zeros, drawn from a normal of ours so the input
    gradients are not zero) and calls _pgd_whitebox and _pgd_blackbox with num_steps 3 on each test batch (the
    FloatTensor(...).uniform_ random start, SGD over the input, `X_pgd.grad.data.sign()`, Variables rebuilt each
    step). VALUEs: the returned error counts.
The torch side's `.cuda()` calls (the scripts call them whatever torch.cuda.is_available() says) are made
`.cpu()` after the conversion; torchvision does not import next to this CPU torch: the torch side gets the
stand-ins of heldout36/44 (MNIST) and heldout45 (CIFAR-10).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

from bench._rw_heldout44 import _TV_DATASETS as _MNIST_DATASETS, _TV_TRANSFORMS as _MNIST_TRANSFORMS
from bench._rw_heldout45 import _TORCHVISION as _CIFAR_TORCHVISION

FA = "locuslab+fast_adversarial@54f728755e71857b632882ba6d6cef22f56e2172"
TRADES = "yaodongyu+TRADES@6e8e11b7c281371c2f027ffadfbaea80361f09de"


def _mnist(folder):
    """MNIST idx files under RUN/SIDE/x/<folder>/MNIST/raw: the scripts read `../<folder>` from their directory."""
    def write(root):
        from tests.corpus import write_mnist
        write_mnist(Path(root).parent / "x" / folder, n_train=16, n_test=8, seed=46)
    return write


def _cifar(root):
    """A synthetic CIFAR-10 in the driver's directory (cifar-data/cifar-10-batches-py)."""
    from bench.data_speed import write_cifar10
    write_cifar10(Path(root).parent / "x" / "prog" / "cifar-data", n_train=16, n_test=8, seed=46)


def _cpu(*names):
    """No GPU here: the torch side's `.cuda()` calls in these files are made `.cpu()` (after the conversion)."""
    def edit(proj):
        for name in names:
            path = Path(proj) / name
            text = path.read_text()
            if ".cuda()" not in text:
                raise RuntimeError(f"{name}: no .cuda() found")
            path.write_text(text.replace(".cuda()", ".cpu()"))
    return edit


_MNIST_TV = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout46.py."""\nfrom . import datasets, '
                               'transforms\n',
    "torchvision/datasets.py": _MNIST_DATASETS,
    "torchvision/transforms.py": _MNIST_TRANSFORMS,
}

_APEX = {
    "apex/__init__.py": '"""A stand-in written by bench/_rw_heldout46.py: apex is not installed."""\n',
    "apex/amp.py": '''"""A stand-in written by bench/_rw_heldout46.py: apex's amp needs CUDA; nothing here may call it."""


def scale_loss(*args, **kwargs):
    raise RuntimeError("apex.amp stand-in: scale_loss called")


def initialize(*args, **kwargs):
    raise RuntimeError("apex.amp stand-in: initialize called")
''',
}

_FA_MNIST_EVAL = '''
"""A driver written by bench/_rw_heldout46.py: train_mnist's main() (fgsm), then evaluate_mnist's main() (pgd)
on the saved weights, then its two attacks on one test batch."""
import logging
import sys

import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

import evaluate_mnist as judge
import train_mnist as teacher
from mnist_net import mnist_net


class ToStdout(logging.Handler):
    def emit(self, record):
        text = record.getMessage()
        if text.startswith("Test Loss"):
            print(text)


logging.getLogger().addHandler(ToStdout())

sys.argv = ["train_mnist.py", "--attack", "fgsm", "--epochs", "1", "--batch-size", "4", "--fname", "fitted.pt"]
teacher.main()
sys.argv = ["evaluate_mnist.py", "--fname", "fitted.pt", "--attack", "pgd", "--attack-iters", "3",
            "--restarts", "2", "--alpha", "0.1", "--batch-size", "4"]
judge.main()

net = mnist_net()
net.load_state_dict(torch.load("fitted.pt"))
net.eval()
held_out = datasets.MNIST(root="../mnist-data", transform=transforms.ToTensor(), train=False)
images, labels = next(iter(DataLoader(held_out, batch_size=4, shuffle=False)))
quick = judge.attack_fgsm(net, images, labels, 0.3)
print("VALUE", "fgsm_sum", float(quick.sum()))
print("VALUE", "fgsm_abs", float(quick.abs().sum()))
strong = judge.attack_pgd(net, images, labels, 0.3, 0.1, 3, 2)
print("VALUE", "pgd_sum", float(strong.sum()))
print("VALUE", "pgd_abs", float(strong.abs().sum()))
with torch.no_grad():
    print("VALUE", "pgd_logits", float(net(images + strong).abs().sum()))
'''

_FA_CIFAR = '''
"""A driver written by bench/_rw_heldout46.py: a PGD training step of train_pgd.py's shape, without apex, through
utils.py's loaders, clamp and limits, then utils' evaluate_pgd and evaluate_standard."""
import numpy as np
import torch
import torch.nn as nn

import utils
from preact_resnet import PreActResNet18

np.random.seed(0)
torch.manual_seed(0)
batches, held_out = utils.get_loaders("cifar-data", 4)
radius = (8 / 255.) / utils.std
stride = (2 / 255.) / utils.std
print("VALUE", "upper", float(utils.upper_limit.sum()))
print("VALUE", "lower", float(utils.lower_limit.sum()))

net = PreActResNet18()
net.train()
sgd = torch.optim.SGD(net.parameters(), lr=0.02, momentum=0.9, weight_decay=5e-4)
xent = nn.CrossEntropyLoss()
for images, labels in batches:
    noise = torch.zeros_like(images)
    for c in range(len(radius)):
        bound = radius[c][0][0].item()
        noise[:, c, :, :].uniform_(-bound, bound)
    noise.data = utils.clamp(noise, utils.lower_limit - images, utils.upper_limit - images)
    noise.requires_grad = True
    for _ in range(2):
        xent(net(images + noise), labels).backward()
        g = noise.grad.detach()
        noise.data = utils.clamp(noise + stride * torch.sign(g), -radius, radius)
        noise.data = utils.clamp(noise, utils.lower_limit - images, utils.upper_limit - images)
        noise.grad.zero_()
    noise = noise.detach()
    scores = net(images + noise)
    loss = xent(scores, labels)
    sgd.zero_grad()
    loss.backward()
    sgd.step()

adv_loss, adv_acc = utils.evaluate_pgd(held_out, net, 3, 2)
print("VALUE", "pgd_loss", adv_loss)
print("VALUE", "pgd_acc", adv_acc)
clean_loss, clean_acc = utils.evaluate_standard(held_out, net)
print("VALUE", "clean_loss", clean_loss)
print("VALUE", "clean_acc", clean_acc)
'''

# train_free.py's training loop without apex: each batch replayed, one backward() for the step and the perturbation
_FA_FREE = _FA_CIFAR.split("net = PreActResNet18()")[0].replace(
    "a PGD training step of train_pgd.py's shape", "free adversarial training of train_free.py's shape") + '''net = PreActResNet18()
net.train()
sgd = torch.optim.SGD(net.parameters(), lr=0.02, momentum=0.9, weight_decay=5e-4)
xent = nn.CrossEntropyLoss()
lr_steps = 2 * len(batches)
scheduler = torch.optim.lr_scheduler.CyclicLR(sgd, base_lr=0.0, max_lr=0.02, step_size_up=lr_steps / 2,
                                              step_size_down=lr_steps / 2)
delta = torch.zeros(4, 3, 32, 32)
delta.requires_grad = True
for images, labels in batches:
    for _ in range(2):
        output = net(images + delta[:images.size(0)])
        loss = xent(output, labels)
        sgd.zero_grad()
        loss.backward()
        grad = delta.grad.detach()
        delta.data = utils.clamp(delta + radius * torch.sign(grad), -radius, radius)
        delta.data[:images.size(0)] = utils.clamp(delta[:images.size(0)], utils.lower_limit - images,
                                                  utils.upper_limit - images)
        sgd.step()
        delta.grad.zero_()
        scheduler.step()
''' + _FA_CIFAR.split("    sgd.step()\n")[1]

_TRADES_TRAIN = '''
"""A driver written by bench/_rw_heldout46.py: train_trades_mnist.py's main() with three inner PGD steps."""
import train_trades_mnist as recipe

recipe.args.num_steps = 3
recipe.main()
'''

_TRADES_PGD = '''
"""A driver written by bench/_rw_heldout46.py: pgd_attack_mnist.py's white-box and black-box PGD on two
SmallCNNs of ours (untrained; fc3 drawn so the input gradients are not zero)."""
import torch

import pgd_attack_mnist as attacks
from models.small_cnn import SmallCNN

torch.manual_seed(0)
victim = SmallCNN()
proxy = SmallCNN()
for net in (victim, proxy):
    torch.nn.init.normal_(net.classifier.fc3.weight, 0.0, 0.5)
    net.eval()
for k, (images, labels) in enumerate(attacks.test_loader):
    clean_err, adv_err = attacks._pgd_whitebox(victim, images, labels, num_steps=3)
    print("VALUE", "white_%d" % k, float(clean_err), float(adv_err))
    clean_err, adv_err = attacks._pgd_blackbox(victim, proxy, images, labels, num_steps=3)
    print("VALUE", "black_%d" % k, float(clean_err), float(adv_err))
'''

_FA_MNIST_FILES = "MNIST/train_mnist.py,MNIST/evaluate_mnist.py,MNIST/mnist_net.py"
_TRADES_FILES = "trades.py,train_trades_mnist.py,pgd_attack_mnist.py,models"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("fa_mnist_fgsm", FA, "MNIST", "train_mnist.py", ["--attack", "fgsm", "--epochs", "1", "--batch-size", "4"],
     _mnist("mnist-data")),
    ("fa_mnist_pgd", FA, "MNIST", "train_mnist.py", ["--attack", "pgd", "--epochs", "1", "--batch-size", "4",
                                                     "--attack-iters", "3", "--alpha", "0.1"], _mnist("mnist-data")),
    ("fa_mnist_eval", FA, _FA_MNIST_FILES, "driver.py", [], _mnist("mnist-data")),
    ("fa_cifar_pgd", FA, "CIFAR10/utils.py,CIFAR10/preact_resnet.py", "driver.py", [], _cifar),
    ("fa_cifar_free", FA, "CIFAR10/utils.py,CIFAR10/preact_resnet.py", "driver.py", [], _cifar),
    ("trades_train", TRADES, _TRADES_FILES, "driver.py", ["--batch-size", "4", "--test-batch-size", "4",
                                                         "--epochs", "1", "--log-interval", "1"], _mnist("data")),
    ("trades_pgd", TRADES, _TRADES_FILES, "driver.py", ["--test-batch-size", "4"], _mnist("data")),
]

DEPS: dict = {}

DRIVERS = {"fa_mnist_eval": _FA_MNIST_EVAL, "fa_cifar_pgd": _FA_CIFAR, "fa_cifar_free": _FA_FREE,
           "trades_train": _TRADES_TRAIN,
           "trades_pgd": _TRADES_PGD}

FILES = {"fa_cifar_pgd": dict(_APEX), "fa_cifar_free": dict(_APEX)}

TORCH_FILES = {
    "fa_mnist_fgsm": {**_MNIST_TV, ".cuda": _cpu("train_mnist.py")},
    "fa_mnist_pgd": {**_MNIST_TV, ".cuda": _cpu("train_mnist.py")},
    "fa_mnist_eval": {**_MNIST_TV, ".cuda": _cpu("train_mnist.py", "evaluate_mnist.py")},
    "fa_cifar_pgd": {**_CIFAR_TORCHVISION, ".cuda": _cpu("utils.py")},
    "fa_cifar_free": {**_CIFAR_TORCHVISION, ".cuda": _cpu("utils.py")},
    "trades_train": {**_MNIST_TV, ".cuda": _cpu("trades.py")},
    "trades_pgd": dict(_MNIST_TV),
}

# every backward() (the attacks' too): fgsm 4 steps x 2; pgd 4 x 4; eval: 8 + evaluate_mnist's 2 batches x 2
# restarts x 3 + 6 + 1; cifar: 4 x 3 + 2 batches x 2 restarts x 3; free: 4 x 2 + 12; trades: 4 steps; trades_pgd:
# 2 x (3 + 3)
LOSSES = {"fa_mnist_fgsm": 8, "fa_mnist_pgd": 16, "fa_mnist_eval": 40, "fa_cifar_pgd": 24, "fa_cifar_free": 20,
          "trades_train": 4,
          "trades_pgd": 12}

PRINTED = {"fa_mnist_eval": r"^Test Loss: .*$", "trades_train": r"^(Training|Test): Average .*$"}
