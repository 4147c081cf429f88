"""The `heldout32` set of bench/real_world.py (`--set heldout32`): weiaicunzai/pytorch-cifar100, the whole
repository converted as a new user would convert it (`msmigrate convert` of its root).

    python bench/real_world.py --mirrors /work/.mirror --set heldout32 [--only train_resnet18,zoo_vgg]

- train_<net>: train.py run whole, `python train.py -net NET -b 2`, on a synthetic CIFAR-100 in torchvision's
  on-disk format (./data/cifar-100-python/{train,test,meta}: pickles with `data`, `fine_labels`,
  `coarse_labels`; 8 training and 4 test images, written beside the program). What runs: get_network, the
  training and test DataLoaders (num_workers=4, shuffle) with RandomCrop(32, padding=4), RandomHorizontalFlip,
  RandomRotation(15), ToTensor, Normalize; SGD (momentum 0.9, weight decay 5e-4), MultiStepLR stepped with an
  epoch argument, utils.py's WarmUpLR (a `_LRScheduler` subclass: lr 0 at the first step); the SummaryWriter's
  add_graph, add_scalar of the last layer's gradient norms (`para.grad.norm()` after the step) and
  add_histogram; eval_training after the first epoch (4 steps), then the second epoch. The runner stops each
  side at its 6th loss. The `Training Epoch` lines (loss to 4 digits, the warm-up learning rate) are PRINTED.
  Nets: resnet18, vgg11, mobilenetv2, densenet121, googlenet, shufflenetv2, seresnet18, stochasticdepth18,
  attention56.
- zoo_<family>: a driver of ours builds each architecture get_network knows (its own `-net` names, through
  get_network with an args Namespace) and, for each, prints a VALUE of one eval-mode forward of two 3x32x32
  images, takes one SGD training step (CrossEntropyLoss: one loss per architecture) and prints a VALUE of the
  eval-mode forward after it; an `ARCH name ok` line (or the error it raised: a PRINTED line, so one
  architecture that stops does not hide the others).
- test_resnet18: test.py run whole (`-net resnet18 -weights ../../data/resnet18.pth -b 2`) on a checkpoint that
  torch wrote (a driver of ours, run with torch before the runs: resnet18 from the repository's models, three
  train-mode forwards so that BatchNorm's running statistics move, then torch.save of its state_dict), over the
  4 test images: its top-1 / top-5 error lines are PRINTED. (The runner gives the converted model torch's weights
  at its first call, which is after test.py's own load_state_dict: the values compared are the forward's, the
  load is checked to run.)

Not installed here, so stand-ins of ours: torchvision does not import next to this CPU torch; the torch side gets
our torchvision (datasets.CIFAR100 over the pickles, and the five transforms as torchvision computes them on PIL
images, drawing through torch.rand / torch.randint / Tensor.uniform_ as torchvision does), written beside the torch
program after the conversion, so the converter sees the user's import (the converted side's torchvision is the
converter's own). tensorboard is not installed: the runner's SummaryWriter stand-in logs nothing on the torch side
(the converted side's is _ms_compat's own). matplotlib (imported by test.py, unused) is a stand-in module of ours.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

CIFAR100 = "weiaicunzai+pytorch-cifar100@11d8418f415b261e4ae3cb1ffe20d06ec95b98e4"

TRAIN_NETS = ["resnet18", "vgg11", "mobilenetv2", "densenet121", "googlenet", "shufflenetv2", "seresnet18",
              "stochasticdepth18", "attention56"]

# every name get_network knows, in families (one program each: a GRAPH run compiles each architecture's step)
ZOO = {
    "zoo_vgg": ["vgg11", "vgg13", "vgg16", "vgg19"],
    "zoo_resnet": ["resnet18", "resnet34", "resnet50", "resnet101", "resnet152"],
    "zoo_preact": ["preactresnet18", "preactresnet34", "preactresnet50", "preactresnet101", "preactresnet152"],
    "zoo_resnext": ["resnext50", "resnext101", "resnext152"],
    "zoo_densenet": ["densenet121", "densenet161", "densenet169", "densenet201"],
    "zoo_inception": ["googlenet", "inceptionv3", "inceptionv4", "inceptionresnetv2", "xception"],
    "zoo_mobile": ["shufflenet", "shufflenetv2", "squeezenet", "mobilenet", "mobilenetv2", "nasnet"],
    "zoo_senet": ["seresnet18", "seresnet34", "seresnet50", "seresnet101", "seresnet152"],
    "zoo_other": ["attention56", "attention92", "wideresnet", "stochasticdepth18", "stochasticdepth34",
                  "stochasticdepth50", "stochasticdepth101"],
}


def _cifar100(prog: Path, n_train=8, n_test=4, seed=32):
    """prog/data/cifar-100-python/{train,test,meta}: random pixels in the pickles torchvision reads."""
    rng = np.random.RandomState(seed)
    base = prog / "data" / "cifar-100-python"
    base.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", n_train), ("test", n_test)):
        fine = rng.randint(0, 100, n)
        entry = {"filenames": [f"{split}_{k}.png" for k in range(n)], "batch_label": f"{split} batch",
                 "fine_labels": fine.tolist(), "coarse_labels": (fine // 5).tolist(),
                 "data": rng.randint(0, 256, (n, 3072)).astype(np.uint8)}
        with open(base / split, "wb") as f:
            pickle.dump(entry, f)
    with open(base / "meta", "wb") as f:
        pickle.dump({"fine_label_names": [f"fine{k}" for k in range(100)],
                     "coarse_label_names": [f"coarse{k}" for k in range(20)]}, f)


def _data(root):
    """Both sides: the synthetic CIFAR-100 beside the program (train.py and test.py read ./data)."""
    prog = Path(root).parent / "x" / "prog"
    prog.mkdir(parents=True, exist_ok=True)
    _cifar100(prog)


# a checkpoint written by torch, with our code: resnet18 of the repository, BatchNorm statistics moved
_CHECKPOINT = '''
import sys
import torch
sys.path.insert(0, sys.argv[1])
from models.resnet import resnet18
torch.manual_seed(32)
net = resnet18()
net.train()
with torch.no_grad():
    for _ in range(3):
        net(torch.randn(4, 3, 32, 32) * 0.5 + 0.2)
torch.save(net.state_dict(), sys.argv[2])
'''


def _test_data(root):
    _data(root)
    root = Path(root)
    target = root / "resnet18.pth"
    if root.parent.name == "torch":
        prog = root.parent / "x" / "prog"
        subprocess.run([sys.executable, "-c", _CHECKPOINT, str(prog), str(target)], check=True,
                       env={"ONEDNN_MAX_CPU_ISA": "AVX2", "PATH": "/usr/bin:/bin"})
    else:
        shutil.copy(root.parent.parent / "torch" / "data" / "resnet18.pth", target)


_ZOO_DRIVER = '''
from argparse import Namespace

import torch
import torch.nn as nn

from utils import get_network

torch.manual_seed(0)
images = torch.randn(2, 3, 32, 32)
labels = torch.tensor([17, 83])
criterion = nn.CrossEntropyLoss()


def one(name):
    net = get_network(Namespace(net=name, gpu=False))
    net.eval()
    with torch.no_grad():
        first = net(images)
    print("VALUE", name + "_eval", float(first.abs().sum()))
    net.train()
    sgd = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    sgd.zero_grad()
    loss = criterion(net(images), labels)
    loss.backward()
    sgd.step()
    net.eval()
    with torch.no_grad():
        second = net(images)
    print("VALUE", name + "_after", float(second.abs().sum()))


for name in NAMES:
    try:
        one(name)
    except Exception as e:
        print("ARCH", name, "raised", type(e).__name__, str(e).split(" (")[0][:120])
    else:
        print("ARCH", name, "ok")
'''

_MATPLOTLIB = {
    "matplotlib/__init__.py": '"""A stand-in written by bench/_rw_heldout32.py: matplotlib is not installed."""\n',
    "matplotlib/pyplot.py": '"""A stand-in written by bench/_rw_heldout32.py (test.py imports it, unused)."""\n',
}

# torchvision does not import next to this CPU torch: the torch side's stand-in (ours), written beside the torch
# program after the conversion
_TV_DATASETS = '''
"""A stand-in written by bench/_rw_heldout32.py: CIFAR-100 from root/cifar-100-python's pickles."""
import os
import pickle

import numpy as np
from PIL import Image


class CIFAR100:
    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        name = "train" if train else "test"
        with open(os.path.join(root, "cifar-100-python", name), "rb") as f:
            entry = pickle.load(f, encoding="latin1")
        self.data = np.asarray(entry["data"]).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        self.targets = list(entry["fine_labels"])
        self.transform, self.target_transform = transform, target_transform

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        picture, label = Image.fromarray(self.data[i]), self.targets[i]
        if self.transform is not None:
            picture = self.transform(picture)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return picture, label
'''

_TV_TRANSFORMS = '''
"""A stand-in written by bench/_rw_heldout32.py: the transforms train.py and test.py use, on PIL images, computed
as torchvision computes them and drawing their random numbers the way torchvision draws them."""
import numpy as np
import torch
from PIL import Image, ImageOps


class Compose:
    def __init__(self, steps):
        self.steps = list(steps)

    def __call__(self, x):
        for step in self.steps:
            x = step(x)
        return x


class RandomCrop:
    def __init__(self, size, padding=None):
        self.size = (size, size) if isinstance(size, int) else tuple(size)
        self.padding = padding

    def __call__(self, picture):
        if self.padding:
            picture = ImageOps.expand(picture, border=(self.padding,) * 4, fill=(0,) * len(picture.getbands()))
        width, height = picture.size
        want_h, want_w = self.size
        if (height, width) == (want_h, want_w):
            return picture
        top = torch.randint(0, height - want_h + 1, size=(1,)).item()
        left = torch.randint(0, width - want_w + 1, size=(1,)).item()
        return picture.crop((left, top, left + want_w, top + want_h))


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, picture):
        return picture.transpose(Image.FLIP_LEFT_RIGHT) if torch.rand(1) < self.p else picture


class RandomRotation:
    def __init__(self, degrees):
        self.degrees = (-degrees, degrees) if isinstance(degrees, (int, float)) else tuple(degrees)

    def __call__(self, picture):
        angle = float(torch.empty(1).uniform_(float(self.degrees[0]), float(self.degrees[1])).item())
        return picture.rotate(angle, Image.NEAREST, False, None, fillcolor=(0,) * len(picture.getbands()))


class ToTensor:
    def __call__(self, picture):
        pixels = torch.from_numpy(np.array(picture, np.uint8, copy=True))
        return pixels.permute(2, 0, 1).contiguous().to(torch.get_default_dtype()).div(255)


class Normalize:
    def __init__(self, mean, std):
        self.mean, self.std = mean, std

    def __call__(self, x):
        mean = torch.as_tensor(self.mean, dtype=x.dtype).view(-1, 1, 1)
        std = torch.as_tensor(self.std, dtype=x.dtype).view(-1, 1, 1)
        return (x - mean) / std
'''

_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout32.py."""\nfrom . import datasets, '
                               'transforms\n',
    "torchvision/datasets.py": _TV_DATASETS,
    "torchvision/transforms.py": _TV_TRANSFORMS,
}

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [(f"train_{net}", CIFAR100, ".", "train.py", ["-net", net, "-b", "2"], _data) for net in TRAIN_NETS] + [
    (name, CIFAR100, "models,utils.py,conf", "driver.py", [], None) for name in ZOO] + [
    ("test_resnet18", CIFAR100, ".", "test.py", ["-net", "resnet18", "-weights", "../../data/resnet18.pth",
                                                 "-b", "2"], _test_data)]

DEPS: dict = {}

DRIVERS = {name: _ZOO_DRIVER.replace("NAMES", repr(names)) for name, names in ZOO.items()}

FILES = {name: dict(_MATPLOTLIB) for name, *_ in PROGRAMS}

TORCH_FILES = {name: dict(_TORCHVISION) for name, *_ in PROGRAMS}

# each architecture's one training step is a loss
LOSSES = {name: len(names) for name, names in ZOO.items()}

PRINTED = {f"train_{net}": r"^Training Epoch: .*$" for net in TRAIN_NETS}
PRINTED.update({name: r"^ARCH .*$" for name in ZOO})
PRINTED["test_resnet18"] = r"^Top [15] err: .*$"
