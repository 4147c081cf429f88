"""The `heldout45` set of bench/real_world.py (`--set heldout45`): facebookresearch/mixup-cifar10,
uoguelph-mlrg/Cutout, Po-Hsun-Su/pytorch-ssim and davidtvs/pytorch-lr-finder, converted as a new user would convert
them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout45 [--only mixup_lenet,lrf_modes]

- facebookresearch/mixup-cifar10 (models/, utils.py and train.py converted with a driver of ours beside them):
  - mixup_lenet: the driver imports train.py itself with the program's arguments (`--model LeNet --epoch 0
    --batch-size 4 --lr 0.05`): train.py builds its CIFAR-10 datasets and DataLoaders (RandomCrop(32,
    padding=4), RandomHorizontalFlip, ToTensor, Normalize; 8 workers), the network through
    `models.__dict__[args.model]`, CrossEntropyLoss and SGD with momentum and weight decay, and writes its csv
    log; its epoch loop runs zero times. The driver then trains two epochs of its own loop through train.py's
    mixup_data (np.random.beta, torch.randperm: the runner draws the permutation alike, NumPy is seeded alike on
    both sides) and mixup_criterion, with adjust_learning_rate at epoch 120 between them. VALUEs: each step's
    lam and its batch's absolute sum, the learning rate after the adjustment. Last, train.py's test(0)
    (`loss.data[0]` of a 0-d tensor: IndexError in torch): its outcome is a PRINTED line. The workers draw the
    crops and flips (the runner aligns their seeds and streams). train.py reads ~/data (the driver points HOME
    at its directory) and utils.py asks `stty size` for the terminal's width at import (a `bin/stty` of ours
    printing `24 80`, first on the driver's PATH).
- uoguelph-mlrg/Cutout:
  - cutout_resnet18: train.py run whole, `--model resnet18 --data_augmentation --cutout --length 8
    --batch_size 4 --epochs 2 --learning_rate 0.01` (at its default 0.1 the losses of batches of 4 jump to 28
    by the second step), on a synthetic CIFAR-10 in torchvision's format (data/cifar-10-batches-py: 16
    training and 8 test images): RandomCrop, RandomHorizontalFlip, ToTensor, Normalize and util/cutout.py's
    Cutout (np.random.randint in the DataLoader's 2 workers), ResNet18, SGD with Nesterov momentum, MultiStepLR
    stepped with an epoch argument, test() and its tqdm.write line (PRINTED), CSVLogger. The torch side's
    `.cuda()` calls are made `.cpu()` (no GPU here; the converted side's are the converter's).
- Po-Hsun-Su/pytorch-ssim (pytorch_ssim/ converted with a driver of ours):
  - ssim_values: two random 3x16x16 image pairs (torch.rand, drawn alike): pytorch_ssim.ssim with
    size_average True and False, window sizes 11 and 5; the SSIM module called on 3-channel images (its window
    rebuilt for 3 channels and type_as) and then on 1-channel ones; torch.autograd.grad of ssim and of SSIM with
    respect to the second image. VALUEs: the values, the gradients' sums and absolute sums.
  - ssim_max: max_ssim.py's loop written by us (max_ssim.py itself reads einstein.png with cv2 and indexes a 0-d
    tensor with `.data[0]`, an IndexError in torch): Adam at 0.01 on the second image of a random pair,
    maximising pytorch_ssim.SSIM() (the negated value is the loss), 6 steps.
- davidtvs/pytorch-lr-finder (torch_lr_finder/ converted with a driver of ours; no amp, plot never called):
  - lrf_modes: a small MLP of ours (4-16-3, ReLU) on a TensorDataset of 24 random points (DataLoader batch 8,
    shuffled), SGD with momentum: LRFinder(model, optimizer, criterion, device="cpu") (the model's and
    optimizer's states cached in memory), range_test in "linear" mode (start_lr 1e-3, end_lr 0.5, 5 iterations),
    reset(), range_test in "exp" mode (end_lr 10, 5 iterations, accumulation_steps 2), reset(), and range_test in
    "exp" mode up to lr 1e4 with diverge_th 2 (the divergence stop), then reset() again. VALUEs: every history lr
    and loss, best_loss, the history's length, the parameters' absolute sum after each reset.
  - lrf_val: range_test with a val_loader (ValDataLoaderIter, _validate's running loss over 16 points) in
    "linear" mode, smooth_f 0, 4 iterations, after one with a TrainDataLoaderIter subclass of ours whose
    inputs_labels_from_batch takes dict batches; VALUEs as lrf_modes.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

from bench._rw_heldout39 import _TV_DATASETS, _TV_TRANSFORMS

MIX = "facebookresearch+mixup-cifar10@eaff31ab397a90fbc0a4aac71fb5311144b3608b"
CUT = "uoguelph-mlrg+Cutout@287f934ea5fa00d4345c2cccecf3552e2b1c33e3"
SSIM = "Po-Hsun-Su+pytorch-ssim@3add4532d3f633316cba235da1c69e90f0dfb952"
LRF = "davidtvs+pytorch-lr-finder@76df3050c5554d698cb618e792957873bc878b30"


def _cifar(root):
    """Both sides: a synthetic CIFAR-10 in the program's directory (data/cifar-10-batches-py), the log
    directory Cutout's CSVLogger writes into, and a `bin/stty` answering `stty size` as a 24x80 terminal."""
    from bench.data_speed import write_cifar10
    prog = Path(root).parent / "x" / "prog"
    write_cifar10(prog / "data", n_train=16, n_test=8, seed=45)
    (prog / "logs").mkdir(parents=True, exist_ok=True)
    (prog / "bin").mkdir(parents=True, exist_ok=True)
    (prog / "bin" / "stty").write_text("#!/bin/sh\necho 24 80\n")
    (prog / "bin" / "stty").chmod(0o755)


def _cpu(proj):
    """No GPU here: Cutout's train.py calls `.cuda()` whatever torch.cuda.is_available() says; the torch side's
    calls are made `.cpu()` (the converted side's are the converter's)."""
    script = Path(proj) / "train.py"
    script.write_text(script.read_text().replace(".cuda()", ".cpu()"))


_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout45.py."""\nfrom . import datasets, '
                               'transforms, utils\n',
    # heldout39's, the root expanded as torchvision expands it (mixup's train.py reads '~/data')
    "torchvision/datasets.py": _TV_DATASETS.replace(
        "        names = [", "        root = os.path.expanduser(root)\n        names = [", 1),
    "torchvision/transforms.py": _TV_TRANSFORMS,
    "torchvision/utils.py": '"""A stand-in written by bench/_rw_heldout45.py: Cutout\'s train.py imports '
                            'make_grid and never calls it."""\nmake_grid = None\n',
}

_MIXUP_DRIVER = '''
import os

import torch

here = os.getcwd()
os.environ["HOME"] = here                         # train.py reads its CIFAR-10 from ~/data
os.environ["PATH"] = os.path.join(here, "bin") + os.pathsep + os.environ.get("PATH", "")

import train as recipe                            # noqa: E402  (runs train.py with this program's arguments)

for round_no in range(2):
    recipe.net.train()
    for k, (pictures, classes) in enumerate(recipe.trainloader):
        blended, first, second, lam = recipe.mixup_data(pictures, classes, recipe.args.alpha, recipe.use_cuda)
        scores = recipe.net(blended)
        loss = recipe.mixup_criterion(recipe.criterion, scores, first, second, lam)
        recipe.optimizer.zero_grad()
        loss.backward()
        recipe.optimizer.step()
        print("VALUE", "lam_%d_%d" % (round_no, k), float(lam))
        print("VALUE", "batch_%d_%d" % (round_no, k), float(pictures.abs().sum()))
    if round_no == 0:
        recipe.adjust_learning_rate(recipe.optimizer, 120)
        print("VALUE", "lr_after", recipe.optimizer.param_groups[0]["lr"])

try:
    recipe.test(0)
    print("TEST ok")
except Exception as e:
    print("TEST raised", type(e).__name__)
'''

_SSIM_VALUES = '''
import torch
import pytorch_ssim

first = torch.rand(2, 3, 16, 16)
second = torch.rand(2, 3, 16, 16)
grey = torch.rand(2, 1, 16, 16)
grey2 = torch.rand(2, 1, 16, 16)


def show(name, t):
    print("VALUE", name + "_sum", float(t.sum()))
    print("VALUE", name + "_abs", float(t.abs().sum()))


show("ssim", pytorch_ssim.ssim(first, second))
show("ssim_each", pytorch_ssim.ssim(first, second, size_average=False))
show("ssim_w5", pytorch_ssim.ssim(first, second, window_size=5))
show("ssim_same", pytorch_ssim.ssim(first, first))
judge = pytorch_ssim.SSIM()
show("module_rgb", judge(first, second))
show("module_grey", judge(grey, grey2))
judge_each = pytorch_ssim.SSIM(window_size=7, size_average=False)
show("module_each", judge_each(first, second))

target = second.clone().requires_grad_(True)
(g,) = torch.autograd.grad(pytorch_ssim.ssim(first, target), target)
show("grad_fn", g)
target2 = grey2.clone().requires_grad_(True)
(g2,) = torch.autograd.grad(judge(grey, target2), target2)
show("grad_module", g2)
'''

_SSIM_MAX = '''
import torch
from torch import optim
from torch.autograd import Variable

import pytorch_ssim

goal = torch.rand(1, 3, 16, 16)
start = torch.rand(goal.size())
goal = Variable(goal, requires_grad=False)
guess = Variable(start, requires_grad=True)

score = pytorch_ssim.ssim(goal, guess).item()
print("VALUE", "initial", score)
judge = pytorch_ssim.SSIM()
opt = optim.Adam([guess], lr=0.01)
rounds = 0
while score < 0.95 and rounds < 6:
    opt.zero_grad()
    negated = -judge(goal, guess)
    score = -negated.item()
    print("VALUE", "score_%d" % rounds, score)
    negated.backward()
    opt.step()
    rounds += 1
print("VALUE", "guess_sum", float(guess.detach().sum()))
'''

_LRF_COMMON = '''
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from torch_lr_finder import LRFinder, TrainDataLoaderIter

torch.manual_seed(0)
points = torch.randn(24, 4)
kinds = (points[:, 0] > 0).long() + (points[:, 1] > 0).long()
loader = DataLoader(TensorDataset(points, kinds), batch_size=8, shuffle=True)


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))

    def forward(self, x):
        return self.body(x)


net = Tiny()
crit = nn.CrossEntropyLoss()
opt = torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9)
finder = LRFinder(net, opt, crit, device="cpu")


def report(tag):
    for i, (rate, value) in enumerate(zip(finder.history["lr"], finder.history["loss"])):
        print("VALUE", "%s_lr_%d" % (tag, i), rate)
        print("VALUE", "%s_loss_%d" % (tag, i), value)
    print("VALUE", tag + "_best", finder.best_loss)
    print("VALUE", tag + "_len", len(finder.history["lr"]))
    finder.reset()
    print("VALUE", tag + "_restored", float(sum(p.detach().abs().sum() for p in net.parameters())))
    print("VALUE", tag + "_opt_lr", opt.param_groups[0]["lr"])
'''

_LRF_MODES = _LRF_COMMON + '''
finder.range_test(loader, start_lr=1e-3, end_lr=0.5, num_iter=5, step_mode="linear")
report("linear")
finder.range_test(loader, end_lr=10, num_iter=5, step_mode="exp", accumulation_steps=2)
report("exp")
finder.range_test(loader, end_lr=1e4, num_iter=12, step_mode="exp", diverge_th=2)
report("diverge")
'''

_LRF_VAL = _LRF_COMMON + '''
held = DataLoader(TensorDataset(points[:16] * 0.5, kinds[:16]), batch_size=8)


class Keyed(TensorDataset):
    def __getitem__(self, i):
        x, y = super().__getitem__(i)
        return {"x": x, "y": y}


class KeyedIter(TrainDataLoaderIter):
    def inputs_labels_from_batch(self, batch):
        return batch["x"], batch["y"]


keyed = KeyedIter(DataLoader(Keyed(points, kinds), batch_size=8))
finder.range_test(keyed, end_lr=1, num_iter=4, step_mode="exp")
report("keyed")
finder.range_test(loader, val_loader=held, end_lr=1, num_iter=4, step_mode="linear", smooth_f=0)
report("val")
'''

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("mixup_lenet", MIX, "models,utils.py,train.py", "driver.py",
     ["--model", "LeNet", "--epoch", "0", "--batch-size", "4", "--lr", "0.05"], _cifar),
    ("cutout_resnet18", CUT, ".", "train.py", ["--model", "resnet18", "--data_augmentation", "--cutout",
                                               "--length", "8", "--batch_size", "4", "--epochs", "2",
                                               "--learning_rate", "0.01"], _cifar),
    ("ssim_values", SSIM, "pytorch_ssim", "driver.py", [], None),
    ("ssim_max", SSIM, "pytorch_ssim", "driver.py", [], None),
    ("lrf_modes", LRF, "torch_lr_finder", "driver.py", [], None),
    ("lrf_val", LRF, "torch_lr_finder", "driver.py", [], None),
]

DEPS: dict = {}

DRIVERS = {"mixup_lenet": _MIXUP_DRIVER, "ssim_values": _SSIM_VALUES, "ssim_max": _SSIM_MAX,
           "lrf_modes": _LRF_MODES, "lrf_val": _LRF_VAL}

FILES: dict = {}

TORCH_FILES = {"mixup_lenet": dict(_TORCHVISION), "cutout_resnet18": {**_TORCHVISION, ".cuda": _cpu}}

# mixup_lenet: two epochs of 4 steps; lrf_modes: 5 + 10 (accumulation 2) + up to 12 backward()s; lrf_val: 4 + 4
LOSSES = {"mixup_lenet": 8, "lrf_modes": 27, "lrf_val": 8}

PRINTED = {"mixup_lenet": r"^TEST .*$", "cutout_resnet18": r"^test_acc: .*$"}
