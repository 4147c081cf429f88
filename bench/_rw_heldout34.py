"""The `heldout34` set of bench/real_world.py (`--set heldout34`): bearpaw/pytorch-classification's cifar.py and
yunjey/stargan's main.py, converted as a new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout34 [--only cifar_resnet,stargan_train]

- bearpaw/pytorch-classification (cifar.py, models/, utils/; its utils/progress is a git submodule the mirror does
  not hold: the `progress` package from PyPI, which scripts/setup.sh's bench libraries install): cifar_<arch> runs cifar.py whole (main(): the synthetic CIFAR-10 of
  ./data/cifar-10-batches-py in torchvision's format, 16 training and 8 test images, RandomCrop(32, padding=4),
  RandomHorizontalFlip, ToTensor, Normalize; the model built from `-a ARCH` and its depth / width options inside
  nn.DataParallel; SGD with momentum and weight decay; two epochs of two steps with `--schedule 1` (
  adjust_learning_rate writes param_group['lr'] at the second epoch); utils' accuracy (topk), AverageMeter, the
  progress Bar, the Logger's log.txt; test() after each epoch; save_checkpoint's torch.save of the model's and the
  optimizer's state dicts, shutil.copyfile of the best). A driver of ours imports cifar.py with the program's
  arguments (cifar.py parses them at import) and calls its main(), having wrapped the module's train() and test()
  to print their returned loss and top-1 average as VALUEs. Archs: alexnet, vgg19_bn, resnet (depth 20),
  preresnet (depth 8), densenet (depth 10, growth 4), resnext (depth 11, cardinality 2, widen 4: its classifier
  reads `x.view(-1, 1024)`, 256 times the widen factor), wrn (depth 10, widen 1). cifar_evaluate: `-a resnet --depth 8 --evaluate --resume checkpoint/checkpoint.pth.tar` on a
  checkpoint torch wrote (a script of ours, run with torch before the runs: the repository's resnet in
  DataParallel, three train-mode forwards, one SGD step, torch.save of save_checkpoint's dict), copied to the
  converted side: torch.load, load_state_dict of the model and the optimizer, the Logger reopened with
  resume=True, test() (its VALUEs).
  cifar.py as written does not run on today's Python and torch: `targets.cuda(async=True)` is a SyntaxError since
  Python 3.7, `loss.data[0]` and accuracy()'s `prec1[0]` index 0-d tensors (an IndexError since torch 0.5) and
  accuracy()'s `.view(-1)` of a transposed tensor is a RuntimeError, so before the conversion (both sides) they read
  `non_blocking=True`, `loss.item()`, `.sum(0, keepdim=True)` and `.reshape(-1)`; after it, the torch side's `.cuda()` (DataParallel's,
  unconditional) is made `.cpu()` (no GPU here; the converted side is the conversion of `.cuda()`). `-j 0`: the
  data loading in the main process.
- yunjey/stargan (main.py, solver.py, model.py, data_loader.py; logger.py, tensorflow's, is not imported with
  `--use_tensorboard False`): a synthetic CelebA under ./data/celeba (20x20 JPEG images and a
  list_attr_celeba.txt in the real format: the image count, the 40 attribute names, one line of -1/1 per image;
  CelebA takes the first 1999 lines of its shuffled list for testing, so 2007 lines name 12 image files):
  - stargan_train: `main.py --mode train` with image size 16 (CenterCrop(16), Resize(16)), conv dims 8, one
    residual block, two strided convolutions in D, batch 4, 6 iterations, n_critic 2 (three G steps), lr decay
    from iteration 2 every 2 iterations, the fixed samples' save_image at iteration 3 and the checkpoints'
    torch.save: the D and G losses (WGAN-GP: torch.autograd.grad with create_graph in gradient_penalty, torch.rand
    interpolation weights matched by the runner, torch.randperm target labels) compared, the `Decayed learning
    rates` and `Saved ...` lines PRINTED.
  - stargan_gp: a driver of ours: Generator and Discriminator at those sizes, one forward (VALUEs), Solver's
    create_labels (hair colours set, other attributes flipped), classification_loss, label2onehot and
    gradient_penalty called through the class (`Solver.gradient_penalty(holder, ...)`, from the driver's module)
    on a stand-in `self` of ours holding the device, and two Adam steps of a D loss with
    the penalty (losses) and the outputs after them (VALUEs).
  - stargan_test: `main.py --mode test --test_iters 5` on G and D checkpoints torch wrote (a script of ours, run
    with torch before the runs: the two networks after one Adam step, torch.save of their state dicts), copied to
    the converted side; the test split of a 10-line attribute list (10 images, batch 4: three batches, each
    translated to the five target domains and saved with save_image as JPEG); a driver of ours runs main.py
    (runpy) and prints each saved image's pixel sum as a VALUE.
  torchvision does not import next to this CPU torch: the torch side gets a stand-in of ours (CIFAR10 over the
  pickles, ImageFolder, the transforms as torchvision computes them on PIL images, utils.save_image as
  torchvision writes a one-column grid), written after the conversion.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from bench._rw_heldout32 import _TV_TRANSFORMS

CLS = "bearpaw+pytorch-classification@24f1c456f48c78133088c4eefd182ca9e6199b03"
STARGAN = "yunjey+stargan@94dd002e93a2863d9b987a937b85925b80f7a19f"

_ENV = {"ONEDNN_MAX_CPU_ISA": "AVX2", "PATH": "/usr/bin:/bin"}


def _side(root):
    return Path(root).parent.name, Path(root).parent / "x" / "prog"


def _edit(path: Path, patches):
    text = path.read_text()
    for old, new in patches:
        if old not in text:
            raise RuntimeError(f"{path.name}: {old!r} not found")
        text = text.replace(old, new)
    path.write_text(text)


# cifar.py under today's Python and torch (both sides, before the conversion)
_CIFAR_TODAY = [("cuda(async=True)", "cuda(non_blocking=True)"), ("loss.data[0]", "loss.item()")]
# accuracy(): a view of a transposed (non-contiguous) tensor, a RuntimeError since torch 1.x (reshape, as torch
# advises), and `prec1[0]` of the 0-d `.sum(0)` (keepdim=True keeps the 1-element tensor the code indexes)
_EVAL_TODAY = [("correct[:k].view(-1)", "correct[:k].reshape(-1)"), (".float().sum(0)", ".float().sum(0, keepdim=True)")]


def _cifar_data(root):
    from bench.data_speed import write_cifar10
    side, prog = _side(root)
    write_cifar10(prog / "data", n_train=16, n_test=8, seed=34)
    if side == "torch":
        _edit(prog / "cifar.py", _CIFAR_TODAY)
        _edit(prog / "utils" / "eval.py", _EVAL_TODAY)


# a checkpoint written by torch with our code, in save_checkpoint's layout
_CIFAR_CHECKPOINT = '''
import os
import sys
import torch
sys.path.insert(0, sys.argv[1])
from models.cifar import resnet
torch.manual_seed(34)
net = torch.nn.DataParallel(resnet(num_classes=10, depth=8))
sgd = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
net.train()
for _ in range(3):
    out = net(torch.randn(4, 3, 32, 32) * 0.5 + 0.2)
sgd.zero_grad()
out.square().mean().backward()
sgd.step()
os.makedirs(os.path.dirname(sys.argv[2]), exist_ok=True)
torch.save({"epoch": 3, "state_dict": net.state_dict(), "acc": 12.5, "best_acc": 25.0,
            "optimizer": sgd.state_dict()}, sys.argv[2])
with open(os.path.join(os.path.dirname(sys.argv[2]), "log.txt"), "w") as f:
    f.write("Learning Rate\\tTrain Loss\\tValid Loss\\tTrain Acc.\\tValid Acc.\\t\\n")
'''


def _cifar_checkpoint_data(root):
    _cifar_data(root)
    side, prog = _side(root)
    target = prog / "checkpoint" / "checkpoint.pth.tar"
    if side == "torch":
        subprocess.run([sys.executable, "-c", _CIFAR_CHECKPOINT, str(prog), str(target)], check=True, env=_ENV)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        torch_dir = Path(root).parent.parent / "torch" / "x" / "prog" / "checkpoint"
        for name in ("checkpoint.pth.tar", "log.txt"):
            shutil.copy(torch_dir / name, target.parent / name)


def _cifar_cpu(proj):
    """No GPU here: the torch program's `.cuda()` made `.cpu()` (after the conversion, which saw `.cuda()`)."""
    _edit(Path(proj) / "cifar.py", [(".cuda()", ".cpu()")])


_CIFAR_DRIVER = '''
import cifar

train_epoch = cifar.train
test_epoch = cifar.test


def train_and_report(*args):
    loss, top1 = train_epoch(*args)
    print("VALUE train_loss", float(loss))
    print("VALUE train_top1", float(top1))
    return loss, top1


def test_and_report(*args):
    loss, top1 = test_epoch(*args)
    print("VALUE test_loss", float(loss))
    print("VALUE test_top1", float(top1))
    return loss, top1


cifar.train = train_and_report
cifar.test = test_and_report
cifar.main()
'''

_ARCHS = {
    "alexnet": ["-a", "alexnet"],
    "vgg19_bn": ["-a", "vgg19_bn"],
    "resnet": ["-a", "resnet", "--depth", "20"],
    "preresnet": ["-a", "preresnet", "--depth", "8"],
    "densenet": ["-a", "densenet", "--depth", "10", "--growthRate", "4"],
    "resnext": ["-a", "resnext", "--depth", "11", "--cardinality", "2", "--widen-factor", "4"],
    "wrn": ["-a", "wrn", "--depth", "10", "--widen-factor", "1"],
}
_CIFAR_RUN = ["--epochs", "2", "--schedule", "1", "--train-batch", "8", "--test-batch", "4", "-j", "0",
              "--manualSeed", "7"]


# ------------------------------------------------------------------ StarGAN
_ATTRS = ("5_o_Clock_Shadow Arched_Eyebrows Attractive Bags_Under_Eyes Bald Bangs Big_Lips Big_Nose Black_Hair "
          "Blond_Hair Blurry Brown_Hair Bushy_Eyebrows Chubby Double_Chin Eyeglasses Goatee Gray_Hair Heavy_Makeup "
          "High_Cheekbones Male Mouth_Slightly_Open Mustache Narrow_Eyes No_Beard Oval_Face Pale_Skin Pointy_Nose "
          "Receding_Hairline Rosy_Cheeks Sideburns Smiling Straight_Hair Wavy_Hair Wearing_Earrings Wearing_Hat "
          "Wearing_Lipstick Wearing_Necklace Wearing_Necktie Young").split()


def _celeba(prog: Path, lines: int, images: int = 12, seed=34):
    """prog/data/celeba/{images/*.jpg, list_attr_celeba.txt}: 20x20 JPEGs and the attribute file's format."""
    from PIL import Image
    rng = np.random.RandomState(seed)
    folder = prog / "data" / "celeba" / "images"
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(images):
        base = rng.randint(0, 256, 3)
        pixels = np.clip(base + rng.normal(0, 50, (20, 20, 3)), 0, 255).astype(np.uint8)
        Image.fromarray(pixels, "RGB").save(folder / f"{k + 1:06d}.jpg")
    rows = [str(lines), " ".join(_ATTRS)]
    for i in range(lines):
        values = rng.choice([-1, 1], len(_ATTRS))
        rows.append(f"{i % images + 1:06d}.jpg " + " ".join(f"{v:2d}" for v in values))
    (prog / "data" / "celeba" / "list_attr_celeba.txt").write_text("\n".join(rows) + "\n")


def _stargan_data(root):
    _celeba(_side(root)[1], 2007)


# G and D checkpoints written by torch with our code (the networks after one Adam step)
_STARGAN_CHECKPOINT = '''
import os
import sys
import torch
sys.path.insert(0, sys.argv[1])
import model
torch.manual_seed(34)
G, D = model.Generator(8, 5, 1), model.Discriminator(16, 8, 5, 2)
opt = torch.optim.Adam(list(G.parameters()) + list(D.parameters()), 1e-2)
fake = G(torch.rand(4, 3, 16, 16) * 2 - 1, torch.rand(4, 5).round())
src, cls = D(fake)
(src.mean() + cls.square().mean()).backward()
opt.step()
os.makedirs(sys.argv[2], exist_ok=True)
torch.save(G.state_dict(), os.path.join(sys.argv[2], "5-G.ckpt"))
torch.save(D.state_dict(), os.path.join(sys.argv[2], "5-D.ckpt"))
'''


def _stargan_test_data(root):
    side, prog = _side(root)
    _celeba(prog, 10)
    target = prog / "stargan" / "models"
    if side == "torch":
        subprocess.run([sys.executable, "-c", _STARGAN_CHECKPOINT, str(prog), str(target)], check=True, env=_ENV)
    else:
        target.mkdir(parents=True, exist_ok=True)
        for name in ("5-G.ckpt", "5-D.ckpt"):
            shutil.copy(Path(root).parent.parent / "torch" / "x" / "prog" / "stargan" / "models" / name, target)


_STARGAN_SIZES = ["--image_size", "16", "--celeba_crop_size", "16", "--g_conv_dim", "8", "--d_conv_dim", "8",
                  "--g_repeat_num", "1", "--d_repeat_num", "2", "--batch_size", "4", "--num_workers", "0",
                  "--use_tensorboard", "False"]
_STARGAN_TRAIN = _STARGAN_SIZES + ["--mode", "train", "--num_iters", "6", "--num_iters_decay", "4",
                                   "--n_critic", "2", "--lr_update_step", "2", "--log_step", "1",
                                   "--sample_step", "3", "--model_save_step", "3"]
_STARGAN_TEST = _STARGAN_SIZES + ["--mode", "test", "--test_iters", "5"]

_STARGAN_TEST_DRIVER = '''
import glob
import os
import runpy
import sys

import numpy as np
from PIL import Image

sys.argv = ["main.py"] + ARGS
runpy.run_path("main.py", run_name="__main__")
for path in sorted(glob.glob(os.path.join("stargan", "results", "*.jpg"))):
    pixels = np.asarray(Image.open(path), dtype=np.float64)
    print("VALUE", os.path.basename(path), float(pixels.sum()), flush=True)
    print("VALUE", os.path.basename(path) + "_shape", float(pixels.shape[0] * 1000 + pixels.shape[1]))
'''.replace("ARGS", repr(_STARGAN_TEST))

_STARGAN_GP_DRIVER = '''
from types import SimpleNamespace

import torch

import model
from solver import Solver

torch.manual_seed(0)
G = model.Generator(conv_dim=8, c_dim=5, repeat_num=1)
D = model.Discriminator(image_size=16, conv_dim=8, c_dim=5, repeat_num=2)
d_opt = torch.optim.Adam(D.parameters(), 1e-3, [0.5, 0.999])
holder = SimpleNamespace(device=torch.device("cpu"))
x = torch.rand(4, 3, 16, 16) * 2 - 1
labels = torch.tensor([[1., 0., 0., 1., 0.], [0., 1., 0., 0., 1.], [0., 0., 1., 1., 1.], [1., 0., 0., 0., 0.]])
attrs = ["Black_Hair", "Blond_Hair", "Brown_Hair", "Male", "Young"]

targets = Solver.create_labels(holder, labels, 5, "CelebA", attrs)
for k, t in enumerate(targets):
    print("VALUE target%d" % k, float((t * torch.arange(1, 6)).sum()))
onehot = Solver.label2onehot(holder, torch.tensor([2, 0, 4, 1]), 5)
print("VALUE onehot", float((onehot * torch.arange(1, 6)).sum()))
with torch.no_grad():
    fake = G(x, targets[0])
    src, cls = D(fake)
print("VALUE fake", float(fake.abs().sum()))
print("VALUE src", float(src.sum()))
print("VALUE cls", float(cls.abs().sum()))
print("VALUE cls_loss", float(Solver.classification_loss(holder, cls, labels, "CelebA")))

for step in range(2):
    src_real, cls_real = D(x)
    fake = G(x, targets[1]).detach()
    src_fake, _ = D(fake)
    alpha = torch.rand(x.size(0), 1, 1, 1)
    mixed = (alpha * x + (1 - alpha) * fake).requires_grad_()
    src_mixed, _ = D(mixed)
    penalty = Solver.gradient_penalty(holder, src_mixed, mixed)
    print("VALUE penalty%d" % step, float(penalty))
    loss = -torch.mean(src_real) + torch.mean(src_fake) + Solver.classification_loss(
        holder, cls_real, labels, "CelebA") + 10 * penalty
    d_opt.zero_grad()
    loss.backward()
    d_opt.step()
with torch.no_grad():
    src, cls = D(x)
print("VALUE src_after", float(src.sum()))
print("VALUE cls_after", float(cls.abs().sum()))
'''

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [(f"cifar_{arch}", CLS, "cifar.py,models,utils", "driver.py", args + _CIFAR_RUN, _cifar_data)
            for arch, args in _ARCHS.items()] + [
    ("cifar_evaluate", CLS, "cifar.py,models,utils", "driver.py",
     ["-a", "resnet", "--depth", "8", "--evaluate", "--resume", "checkpoint/checkpoint.pth.tar", "--test-batch",
      "4", "-j", "0", "--manualSeed", "7"], _cifar_checkpoint_data),
    ("stargan_train", STARGAN, ".", "main.py", _STARGAN_TRAIN, _stargan_data),
    ("stargan_gp", STARGAN, "model.py,solver.py", "driver.py", [], None),
    ("stargan_test", STARGAN, "main.py,model.py,solver.py,data_loader.py", "driver.py", [], _stargan_test_data),
]

DEPS: dict = {}

DRIVERS = {name: _CIFAR_DRIVER for name, *_ in PROGRAMS if name.startswith("cifar_")}
DRIVERS["stargan_gp"] = _STARGAN_GP_DRIVER
DRIVERS["stargan_test"] = _STARGAN_TEST_DRIVER

# torchvision does not import next to this CPU torch: the torch side's stand-in (ours), written after the conversion
_TV_DATASETS = '''
"""A stand-in written by bench/_rw_heldout34.py: CIFAR-10 from root/cifar-10-batches-py's pickles, ImageFolder."""
import os
import pickle

import numpy as np
from PIL import Image


class CIFAR10:
    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        names = ["data_batch_%d" % k for k in range(1, 6)] if train else ["test_batch"]
        pixels, self.targets = [], []
        for name in names:
            with open(os.path.join(root, "cifar-10-batches-py", name), "rb") as f:
                entry = pickle.load(f, encoding="latin1")
            pixels.append(np.asarray(entry["data"]).reshape(-1, 3, 32, 32))
            self.targets.extend(entry["labels"])
        self.data = np.concatenate(pixels).transpose(0, 2, 3, 1)
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


class ImageFolder:
    def __init__(self, root, transform=None):
        raise NotImplementedError("the stand-in's ImageFolder is imported, not used")
'''

_TV_MORE_TRANSFORMS = '''


class CenterCrop:
    def __init__(self, size):
        self.size = (size, size) if isinstance(size, int) else tuple(size)

    def __call__(self, picture):
        width, height = picture.size
        want_h, want_w = self.size
        top = int(round((height - want_h) / 2.0))
        left = int(round((width - want_w) / 2.0))
        return picture.crop((left, top, left + want_w, top + want_h))


class Resize:
    def __init__(self, size):
        self.size = size

    def __call__(self, picture):
        width, height = picture.size
        if isinstance(self.size, int):
            short, long = (width, height) if width <= height else (height, width)
            if short == self.size:
                return picture
            new_long = int(self.size * long / short)
            want = (self.size, new_long) if width <= height else (new_long, self.size)
        else:
            want = (self.size[1], self.size[0])
        return picture.resize(want, Image.BILINEAR)
'''

_TV_UTILS = '''
"""A stand-in written by bench/_rw_heldout34.py: save_image of a batch as one column (padding 0), as torchvision
writes it."""
import torch
from PIL import Image


def save_image(tensor, fp, nrow=8, padding=2, **kw):
    if padding != 0 or kw:
        raise NotImplementedError("the stand-in writes padding=0 grids only")
    grid = tensor
    if tensor.dim() == 4:
        rows = [torch.cat(list(tensor[k:k + nrow]), dim=2) for k in range(0, tensor.size(0), nrow)]
        grid = torch.cat(rows, dim=1) if tensor.size(0) > 1 else tensor[0]
    ndarr = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to("cpu", torch.uint8).numpy()
    Image.fromarray(ndarr).save(fp)
'''

_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout34.py."""\nfrom . import datasets, '
                               'transforms, utils\n',
    "torchvision/datasets.py": _TV_DATASETS,
    "torchvision/transforms.py": _TV_TRANSFORMS + _TV_MORE_TRANSFORMS,
    "torchvision/utils.py": _TV_UTILS,
}

TORCH_FILES = {name: dict(_TORCHVISION) for name, *_ in PROGRAMS}
for _name in DRIVERS:
    if _name.startswith("cifar_"):
        TORCH_FILES[_name]["cifar.py"] = _cifar_cpu

# two epochs of two steps (the programs end before the budget); StarGAN: 6 D steps and 3 G steps
LOSSES = {"stargan_train": 10, "stargan_gp": 4}
LOSSES.update({name: 6 for name in DRIVERS if name.startswith("cifar_")})

PRINTED = {name: r"^(Epoch: |==> |    Total params).*$" for name in DRIVERS if name.startswith("cifar_")}
PRINTED["stargan_train"] = r"^(Decayed learning rates|Saved ).*$"
PRINTED["stargan_test"] = r"^(Loading|Saved ).*$"
