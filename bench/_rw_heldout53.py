"""The `heldout53` set of bench/real_world.py (`--set heldout53`): pclucas14/pixel-cnn-pp (PixelCNN++: weight-normalized
down- and down-right-shifted convolutions and transposed convolutions, gated resnets with concat_elu, the
discretized mixture-of-logistics loss and its sampler) and martinarjovsky/WassersteinGAN (DCGAN and MLP
generators and critics, weight clipping, RMSprop or Adam, `backward(one)` / `backward(mone)`), converted as a new
user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout53 [--only pcnn_mnist,wgan_dcgan]

- pclucas14/pixel-cnn-pp (main.py, model.py, layers.py, utils.py as they are, but for the modernization below):
  main.py run whole with `-q 1 -n 8 -m 2 -b 4 -p 1` (one gated resnet per stage, 8 filters, 2 logistics, batch 4,
  a loss line printed each step) on synthetic data in the on-disk format its dataset reads, under RUN/SIDE/data
  (`-i ../../data`): torchvision's MNIST idx files (MNIST/raw) or CIFAR-10's pickle batches
  (cifar-10-batches-py), 8 training and 8 test images, so two steps per epoch (drop_last) and two test batches.
  Each epoch: the training loop (ToTensor and the `(x - .5) * 2` rescaling, a DataLoader with one worker,
  PixelCNN: its init_padding built at the first forward and kept, the up pass of gated resnets and strided
  down-shifted convolutions, the down pass popping the lists, the nin 1x1 layers; the loss; Adam), StepLR's
  step, the test loop in eval mode; at `--save_interval` epochs a torch.save of the state dict and sample():
  28 x 28 forwards with sample=True, each drawing the mixture indicator and the logistic through
  `torch.FloatTensor(...).uniform_` (the runner's matched stream), written pixel by pixel into the batch, then
  utils.save_image. The losses compared.
  - pcnn_mnist: `-d mnist -x 2 -t 10` (four steps, discretized_mix_logistic_loss_1d; no sampling).
  - pcnn_cifar: `-d cifar -x 2 -t 10` (four steps, discretized_mix_logistic_loss with its coefficients of the
    preceding sub-pixels).
  - pcnn_sample: a driver of ours runs main.py as `__main__` with `-d mnist -x 1 -t 10` (two steps), then calls
    its sample() on a smaller canvas (the globals it reads, obs and sample_batch_size, set to 1 x 8 x 8 and 4
    images: 64 forwards with sample=True instead of 28 x 28 of 25 images, which took torch alone over 240 s on
    the shared cores) and prints the sum of |sample| and of the sample as VALUEs.
  Before converting, both sides get the smallest changes that let the original run on Python 3 and torch 2.13:
  utils.py's `print e` as `print(e)` (a Python 2 statement: a SyntaxError), main.py's `input.cuda(async=True)`
  as `input.cuda(non_blocking=True)` (`async` is a keyword since Python 3.7: a SyntaxError) and `loss.data[0]`
  as `loss.item()` (indexing a 0-d tensor is an IndexError since torch 0.5). After the conversion (which saw
  `.cuda()` as written) the torch side's `.cuda(...)` calls are made `.cpu()` and `torch.cuda.synchronize()`
  `torch.cpu.synchronize()` (no GPU here). tensorboardX is not installed: both sides get a stand-in whose
  SummaryWriter records nothing.
- martinarjovsky/WassersteinGAN (main.py, generate.py and models/ as they are, but for the modernization below):
  main.py run whole with `--dataset folder --dataroot ../../data/wgan --imageSize 16 --nz 8 --ngf 8 --ndf 8
  --batchSize 4 --workers 1` on a synthetic ImageFolder (two class directories of five 20x20 RGB PNGs: Resize
  to 16 and CenterCrop are real resizes and crops; 10 images, so 3 batches, the last one of 2). Each epoch: while
  gen_iterations < 25 the critic trains through the whole epoch (Diters 100), clamping its parameters through
  `p.data.clamp_` before each step, `input.resize_as_(real_cpu).copy_(real_cpu)`, `errD_real.backward(one)`,
  the generator's output detached through `Variable(netG(noisev).data)` with `noise.resize_(...).normal_(0, 1)`
  (the runner's matched stream), `errD_fake.backward(mone)`, the optimizer's step; then the generator step with
  the critic's `requires_grad` off, `errG.backward(one)`; the losses line printed; the state dicts saved at each
  epoch's end. The losses (every backward's value) compared.
  - wgan_dcgan: `--niter 2 --n_extra_layers 1` (DCGAN_G and DCGAN_D with BatchNorm, RMSprop).
  - wgan_nobn_adam: `--niter 2 --noBN --adam` (DCGAN_G_nobn, DCGAN_D, Adam with beta1 0.5).
  - wgan_mlp: `--niter 2 --mlp_G --mlp_D` (MLP_G, MLP_D).
  - wgan_generate: a driver of ours runs main.py as `__main__` (`--niter 1`, DCGAN), then generate.py as
    `__main__` on the generator_config.json and netG_epoch_0.pth it wrote (`-n 2`: normal_ noise, the
    generator in training mode, two images saved), and prints the sum of |fake| as a VALUE.
  Before converting, both sides get the smallest changes that let the original run on Python 3 and today's
  torchvision: main.py's `data_iter.next()` as `next(data_iter)` (Python 3 iterators have no `.next()`) and
  `transforms.Scale` as `transforms.Resize` (its successor; Scale is gone from torchvision).

torchvision does not import next to this CPU torch: the torch sides get a stand-in of ours (MNIST, CIFAR10 and
ImageFolder as torchvision reads them, heldout32's, heldout34's and heldout36's transforms, heldout36's
save_image), written after the conversion; the converted side's torchvision is the converter's own.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from bench._rw_heldout32 import _TV_TRANSFORMS as _TV_TRANSFORMS_32
from bench._rw_heldout34 import _TV_MORE_TRANSFORMS
from bench._rw_heldout36 import _TV_TRANSFORMS as _TV_TRANSFORMS_36, _TV_UTILS
from bench._rw_heldout40 import _TENSORBOARDX

PCNN = "pclucas14+pixel-cnn-pp@7cb4436f062fda9b63ecc9e3b75d2c2dcb379931"
WGAN = "martinarjovsky+WassersteinGAN@f7a01e82007ea408647c451b9e1c8f1932a3db67"


def _mnist(root):
    from tests.corpus import write_mnist
    write_mnist(root, n_train=8, n_test=8)


def _cifar(root):
    from tests.corpus import write_cifar10
    write_cifar10(root, n_train=8, n_test=8)


def _wgan_images(root):
    """Both sides: two ImageFolder classes of five 20x20 RGB PNGs under RUN/SIDE/data/wgan."""
    from PIL import Image
    rs = np.random.RandomState(53)
    for c in ("a", "b"):
        d = Path(root) / "wgan" / c
        d.mkdir(parents=True, exist_ok=True)
        for i in range(5):
            Image.fromarray(rs.randint(0, 256, (20, 20, 3)).astype(np.uint8)).save(d / f"{i}.png")


def _edit(path, pairs):
    text = path.read_text()
    for old, new in pairs:
        if old not in text:
            raise RuntimeError(f"{path}: {old!r} not found")
        text = text.replace(old, new)
    path.write_text(text)


def _pcnn_today(proj):
    """Both sides, before converting: the Python 2 / torch 0.3 spellings that stop the original today."""
    _edit(Path(proj) / "utils.py", [("print e\n", "print(e)\n")])
    _edit(Path(proj) / "main.py", [("cuda(async=True)", "cuda(non_blocking=True)"),
                                   ("loss.data[0]", "loss.item()")])


def _pcnn_cpu(proj):
    """No GPU here: the torch side's `.cuda(...)` made `.cpu()`, torch.cuda.synchronize() torch.cpu's (after the
    conversion, which saw them as written)."""
    _edit(Path(proj) / "main.py", [(".cuda(non_blocking=True)", ".cpu()"), (".cuda()", ".cpu()"),
                                   ("torch.cuda.synchronize()", "torch.cpu.synchronize()")])
    _edit(Path(proj) / "utils.py", [(".cuda()", ".cpu()")])


def _wgan_today(proj):
    """Both sides, before converting: Python 3 iterators have no `.next()`; torchvision's Scale is now Resize."""
    _edit(Path(proj) / "main.py", [("data_iter.next()", "next(data_iter)"),
                                   ("transforms.Scale(", "transforms.Resize(")])


_PCNN_SAMPLE_DRIVER = '''
"""A driver written by bench/_rw_heldout53.py: main.py run as __main__ (its arguments: one epoch, no sampling), then
its sample() on a smaller canvas: the globals sample() reads (obs, sample_batch_size) set to 8 x 8 and 4 images, so
64 forwards instead of 784 of 25."""
import runpy

g = runpy.run_path("main.py", run_name="__main__")
canvas = g["sample"].__globals__         # main.py's own globals, which sample() reads (run_path returns a copy)
canvas["obs"], canvas["sample_batch_size"] = (1, 8, 8), 4
drawn = g["sample"](g["model"])
print("VALUE sample_abs", float(drawn.abs().sum()))
print("VALUE sample_sum", float(drawn.sum()))
'''

_WGAN_GENERATE_DRIVER = '''
"""A driver written by bench/_rw_heldout53.py: main.py run as __main__ (its arguments), then generate.py on the
generator config and checkpoint main.py wrote."""
import runpy
import sys

runpy.run_path("main.py", run_name="__main__")
sys.argv = ["generate.py", "-c", "samples/generator_config.json", "-w", "samples/netG_epoch_0.pth",
            "-o", "samples", "-n", "2"]
g = runpy.run_path("generate.py", run_name="__main__")
print("VALUE fake_abs", float(g["fake"].abs().sum()))
'''

_TV_DATASETS = '''
"""A stand-in written by bench/_rw_heldout53.py: MNIST (root/MNIST/raw's idx files), CIFAR10 (root/cifar-10-batches-py's
pickles) and ImageFolder (sorted class directories and files), items as PIL images, as torchvision reads them."""
import os
import pickle

import numpy as np
import torch
from PIL import Image


def _read_idx(path):
    with open(path, "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * d:8 + 4 * d], "big") for d in range(dims)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * dims).reshape(shape).copy()


class _Items:
    def __len__(self):
        return len(self.targets)

    def __getitem__(self, k):
        picture, label = self._picture(k), int(self.targets[k])
        if self.transform is not None:
            picture = self.transform(picture)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return picture, label


class MNIST(_Items):
    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        stem = "train" if train else "t10k"
        folder = os.path.join(root, "MNIST", "raw")
        self.data = _read_idx(os.path.join(folder, stem + "-images-idx3-ubyte"))
        self.targets = _read_idx(os.path.join(folder, stem + "-labels-idx1-ubyte")).astype(np.int64)
        self.transform, self.target_transform = transform, target_transform

    def _picture(self, k):
        return Image.fromarray(self.data[k], mode="L")


class CIFAR10(_Items):
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

    def _picture(self, k):
        return Image.fromarray(self.data[k])


class ImageFolder(_Items):
    def __init__(self, root, transform=None, target_transform=None):
        classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
        self.samples = [(os.path.join(root, c, name), k) for k, c in enumerate(classes)
                        for name in sorted(os.listdir(os.path.join(root, c)))]
        self.targets = [s[1] for s in self.samples]
        self.transform, self.target_transform = transform, target_transform

    def _picture(self, k):
        with open(self.samples[k][0], "rb") as f:
            return Image.open(f).convert("RGB")
'''


def _torchvision(transforms):
    return {
        "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout53.py."""\nfrom . import datasets, '
                                   'transforms, utils\n',
        "torchvision/datasets.py": _TV_DATASETS,
        "torchvision/transforms.py": transforms,
        "torchvision/utils.py": _TV_UTILS,
    }


_PCNN_COMMON = ["-i", "../../data", "-q", "1", "-n", "8", "-m", "2", "-b", "4", "-p", "1"]
_WGAN_COMMON = ["--dataset", "folder", "--dataroot", "../../data/wgan", "--imageSize", "16", "--nz", "8",
                "--ngf", "8", "--ndf", "8", "--batchSize", "4", "--workers", "1"]

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("pcnn_mnist", PCNN, "", "main.py", _PCNN_COMMON + ["-d", "mnist", "-x", "2", "-t", "10"], _mnist),
    ("pcnn_cifar", PCNN, "", "main.py", _PCNN_COMMON + ["-d", "cifar", "-x", "2", "-t", "10"], _cifar),
    ("pcnn_sample", PCNN, "main.py,model.py,layers.py,utils.py", "driver.py",
     _PCNN_COMMON + ["-d", "mnist", "-x", "1", "-t", "10"], _mnist),
    ("wgan_dcgan", WGAN, "", "main.py", _WGAN_COMMON + ["--niter", "2", "--n_extra_layers", "1"], _wgan_images),
    ("wgan_nobn_adam", WGAN, "", "main.py", _WGAN_COMMON + ["--niter", "2", "--noBN", "--adam"], _wgan_images),
    ("wgan_mlp", WGAN, "", "main.py", _WGAN_COMMON + ["--niter", "2", "--mlp_G", "--mlp_D"], _wgan_images),
    ("wgan_generate", WGAN, "main.py,generate.py,models", "driver.py", _WGAN_COMMON + ["--niter", "1"],
     _wgan_images),
]

DEPS: dict = {}

DRIVERS = {"pcnn_sample": _PCNN_SAMPLE_DRIVER, "wgan_generate": _WGAN_GENERATE_DRIVER}

FILES = {name: ({".today": _pcnn_today, **_TENSORBOARDX} if name.startswith("pcnn_") else {".today": _wgan_today})
         for name, *_ in PROGRAMS}

TORCH_FILES = {name: ({**_torchvision(_TV_TRANSFORMS_36), ".cpu": _pcnn_cpu} if name.startswith("pcnn_")
                      else _torchvision(_TV_TRANSFORMS_32 + _TV_MORE_TRANSFORMS))
               for name, *_ in PROGRAMS}

# pcnn: four steps (two with sampling); wgan: per epoch three critic steps of two backward()s each and one generator
# step, two epochs (the programs end first)
LOSSES = {name: (6 if name.startswith("pcnn_") else 16) for name, *_ in PROGRAMS}
