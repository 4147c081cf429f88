"""The `heldout36` set of bench/real_world.py (`--set heldout36`): eriklindernoren/PyTorch-GAN's scripts that the
default set does not run (it runs 17 of the MNIST ones), converted as a new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout36 [--only cogan,cyclegan]

Each program is implementations/<name>/<name>.py run whole (its datasets.py and models.py beside it, converted
with it) with small sizes, one epoch, and the runner's loss budget (LOSSES) as the cap on iterations; the losses
are every backward() of the torch side against the converted steps' losses. The scripts write their samples
with save_image into images/ (let be; not compared).

- cogan: CoGAN, coupled generators and discriminators sharing layers, on torchvision's MNIST (synthetic idx files
  under data/mnist/MNIST/raw) zipped with MNIST-M (mnistm.py's processed mnist_m_train.pt / mnist_m_test.pt: a
  tuple of uint8 images (N, 28, 28, 3) and labels, written with torch.save by a script of ours before the runs
  and copied to the converted side, so download() finds them and returns); Resize(16), 3 G and 3 D steps.
- pixelda: PixelDA on the same MNIST and MNIST-M: a residual generator, a patch discriminator and a task
  classifier, one optimizer over the generator and the classifier (itertools.chain); 3 iterations.
- clustergan / clustergan_wass: ClusterGAN (generator, encoder and discriminator; itertools.chain of two
  networks' parameters in one optimizer; n_critic 2 steps of the generator/encoder), vanilla and with `-w`
  (Wasserstein loss with calc_gradient_penalty's torch.autograd.grad, create_graph) on MNIST at 28 pixels.
- context_encoder: the context encoder on an image folder (data/img_align_celeba: 4004 synthetic 40x40 JPEGs;
  datasets.py keeps all but the last 4000 for training: 4 images), random masks drawn with np.random,
  Resize((128, 128), BICUBIC) (datasets.py masks at its own default sizes, 128 and 64, whatever the script's
  arguments); pixel-wise L1 plus adversarial loss.
- unit: UNIT (two encoders sharing a block, two generators sharing a block, VAE-style KL terms with
  torch.randn noise matched by the runner, two discriminators) on cyclegan's kind of folder, 32 px, dim 8.
- cyclegan: CycleGAN (ResNet generators with one residual block, PatchGAN discriminators, ReplayBuffer drawing
  with python's random, LambdaLR schedulers, identity and cycle losses, `itertools.chain` of both generators'
  parameters) on data/synth/{train,test}/{A,B}: 32x32 after Resize(int(32 * 1.12), BICUBIC), RandomCrop and
  RandomHorizontalFlip (torch.randint/torch.rand, matched by the runner); sample_images at batch 0 (eval mode,
  the val loader, make_grid).
- discogan: DiscoGAN (two UNet generators, two discriminators, one G optimizer over both) on
  data/edges/{train,val}: A|B side by side images of 128x64, split by datasets.py, flipped by np.random, 64 px.

torchvision does not import next to this CPU torch: the torch side gets a stand-in of ours (MNIST as PIL images,
Compose, Resize (size, interpolation), RandomCrop, RandomHorizontalFlip, ToTensor of L and RGB images, Normalize,
utils.make_grid and save_image), written after the conversion (the converted side's torchvision is the
converter's own).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

GANS = "eriklindernoren+PyTorch-GAN@36d3c77e5ff20ebe0aeefd322326a134a279b93e"

_ENV = {"ONEDNN_MAX_CPU_ISA": "AVX2", "PATH": "/usr/bin:/bin"}


def _side(data_root):
    data_root = Path(data_root)
    return data_root.parent.name, data_root


# MNIST-M's processed files, as mnistm.py's download() would leave them, written by torch with our code
_MNISTM_WRITER = '''
import os
import sys
import numpy as np
import torch
rng = np.random.RandomState(36)
folder = os.path.join(sys.argv[1], "processed")
os.makedirs(folder, exist_ok=True)
os.makedirs(os.path.join(sys.argv[1], "raw"), exist_ok=True)
for name, n in (("mnist_m_train.pt", 40), ("mnist_m_test.pt", 8)):
    pixels = torch.from_numpy(rng.randint(0, 256, (n, 28, 28, 3)).astype(np.uint8))
    labels = torch.from_numpy(rng.randint(0, 10, n).astype(np.int64))
    with open(os.path.join(folder, name), "wb") as f:
        torch.save((pixels, labels), f)
'''


def _mnist_data(root):
    from tests.corpus import write_mnist
    side, data = _side(root)
    write_mnist(data / "mnist", n_train=40, n_test=8, seed=36)


def _mnist_and_m_data(root):
    _mnist_data(root)
    side, data = _side(root)
    target = data / "mnistm"
    if side == "torch":
        subprocess.run([sys.executable, "-c", _MNISTM_WRITER, str(target)], check=True, env=_ENV)
    else:
        shutil.copytree(data.parent.parent / "torch" / "data" / "mnistm", target)


def _pictures(folder: Path, count: int, width: int, height: int, seed: int, first: int = 0):
    from PIL import Image
    rng = np.random.RandomState(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(count):
        base = rng.randint(0, 256, 3)
        pixels = np.clip(base + rng.normal(0, 40, (height, width, 3)), 0, 255).astype(np.uint8)
        Image.fromarray(pixels, "RGB").save(folder / f"{first + k:06d}.jpg", quality=95)


def _context_data(root):
    _pictures(_side(root)[1] / "img_align_celeba", 4004, 40, 40, 36)


def _cyclegan_data(root):
    base = _side(root)[1] / "synth"
    for seed, (mode, part, count) in enumerate((("train", "A", 6), ("train", "B", 5), ("test", "A", 3),
                                                ("test", "B", 3))):
        _pictures(base / mode / part, count, 24, 20, 40 + seed)


def _edges_data(root):
    base = _side(root)[1] / "edges"
    _pictures(base / "train", 6, 128, 64, 50)
    _pictures(base / "val", 4, 128, 64, 51)


_BIG = "1000000"
_COGAN = ["--n_epochs", "1", "--batch_size", "4", "--latent_dim", "8", "--img_size", "16",
          "--sample_interval", _BIG]
_PIXELDA = ["--n_epochs", "1", "--batch_size", "4", "--img_size", "32", "--latent_dim", "4",
            "--n_residual_blocks", "1", "--sample_interval", _BIG]
_CLUSTER = ["-n", "1", "-b", "4", "-d", "6", "-c", "2"]
# datasets.py's ImageDataset masks at its own defaults (img_size 128, mask_size 64: the script does not pass them)
_CONTEXT = ["--n_epochs", "1", "--batch_size", "2", "--img_size", "128", "--mask_size", "64",
            "--sample_interval", _BIG]
_UNIT = ["--n_epochs", "1", "--decay_epoch", "0", "--batch_size", "2", "--dataset_name", "synth",
         "--img_height", "32", "--img_width", "32", "--dim", "8", "--n_cpu", "0", "--sample_interval", _BIG]
_CYCLE = ["--n_epochs", "1", "--decay_epoch", "0", "--batch_size", "2", "--dataset_name", "synth",
          "--img_height", "32", "--img_width", "32", "--n_residual_blocks", "1", "--n_cpu", "0",
          "--sample_interval", _BIG]
_DISCO = ["--n_epochs", "1", "--batch_size", "2", "--dataset_name", "edges", "--img_height", "64",
          "--img_width", "64", "--n_cpu", "0", "--sample_interval", _BIG]


def _program(name, script, args, data, folder=None):
    return (name, GANS, f"implementations/{folder or name}", script, args, data)


# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    _program("cogan", "cogan.py", _COGAN, _mnist_and_m_data),
    _program("pixelda", "pixelda.py", _PIXELDA, _mnist_and_m_data),
    _program("clustergan", "clustergan.py", _CLUSTER, _mnist_data, "cluster_gan"),
    _program("clustergan_wass", "clustergan.py", _CLUSTER + ["-w"], _mnist_data, "cluster_gan"),
    _program("context_encoder", "context_encoder.py", _CONTEXT, _context_data),
    _program("unit", "unit.py", _UNIT, _cyclegan_data),
    _program("cyclegan", "cyclegan.py", _CYCLE, _cyclegan_data),
    _program("discogan", "discogan.py", _DISCO, _edges_data),
]

DEPS: dict = {}
DRIVERS: dict = {}

# torchvision does not import next to this CPU torch: the torch side's stand-in (ours), written after the conversion
_TV_DATASETS = '''
"""A stand-in written by bench/_rw_heldout36.py: MNIST from root/MNIST/raw's idx files, items as PIL images."""
import os

import numpy as np
import torch
from PIL import Image


def _read_idx(path):
    with open(path, "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * d:8 + 4 * d], "big") for d in range(dims)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * dims).reshape(shape).copy()


class MNIST:
    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        stem = "train" if train else "t10k"
        folder = os.path.join(root, "MNIST", "raw")
        self.data = torch.from_numpy(_read_idx(os.path.join(folder, stem + "-images-idx3-ubyte")))
        self.targets = torch.from_numpy(_read_idx(os.path.join(folder, stem + "-labels-idx1-ubyte")).astype(np.int64))
        self.transform, self.target_transform = transform, target_transform

    train_labels = test_labels = property(lambda self: self.targets)
    train_data = test_data = property(lambda self: self.data)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, k):
        picture, label = Image.fromarray(self.data[k].numpy(), mode="L"), int(self.targets[k])
        if self.transform is not None:
            picture = self.transform(picture)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return picture, label
'''

_TV_TRANSFORMS = '''
"""A stand-in written by bench/_rw_heldout36.py: the transforms the scripts use, on PIL images, computed as
torchvision computes them and drawing as torchvision draws (torch.randint, torch.rand)."""
import numpy as np
import torch
from PIL import Image


class Compose:
    def __init__(self, parts):
        self.parts = list(parts)

    def __call__(self, item):
        for part in self.parts:
            item = part(item)
        return item


class Resize:
    def __init__(self, size, interpolation=Image.BILINEAR):
        self.size, self.interpolation = size, int(interpolation)

    def __call__(self, picture):
        width, height = picture.size
        if isinstance(self.size, int):
            if width <= height:
                target = (self.size, int(self.size * height / width))
            else:
                target = (int(self.size * width / height), self.size)
            if (width, height) == target:
                return picture
        else:
            target = (self.size[1], self.size[0])
        return picture.resize(target, self.interpolation)


class RandomCrop:
    def __init__(self, size):
        self.size = (size, size) if isinstance(size, int) else tuple(size)

    def __call__(self, picture):
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
        if torch.rand(1) < self.p:
            return picture.transpose(Image.FLIP_LEFT_RIGHT)
        return picture


class ToTensor:
    def __call__(self, picture):
        pixels = np.array(picture, np.uint8, copy=True)
        if pixels.ndim == 2:
            pixels = pixels[:, :, None]
        return torch.from_numpy(pixels).permute(2, 0, 1).contiguous().float().div(255)


class Normalize:
    def __init__(self, mean, std):
        self.mean, self.std = mean, std

    def __call__(self, x):
        centre = torch.as_tensor(self.mean, dtype=x.dtype).view(-1, 1, 1)
        spread = torch.as_tensor(self.std, dtype=x.dtype).view(-1, 1, 1)
        return (x - centre) / spread
'''

_TV_UTILS = '''
"""A stand-in written by bench/_rw_heldout36.py: make_grid and save_image as torchvision lays them out."""
import math

import torch
from PIL import Image


def make_grid(batch, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    if isinstance(batch, (list, tuple)):
        batch = torch.stack(list(batch))
    batch = batch.detach()
    if batch.dim() == 2:
        batch = batch.unsqueeze(0)
    if batch.dim() == 3:
        batch = batch.unsqueeze(0)
    if batch.size(1) == 1:
        batch = torch.cat([batch] * 3, 1)
    if normalize:
        batch = batch.clone()
        low, high = (float(batch.min()), float(batch.max())) if value_range is None else value_range
        batch = batch.clamp(low, high).sub(low).div(max(high - low, 1e-5))
    if batch.size(0) == 1:
        return batch[0]
    count = batch.size(0)
    across = min(nrow, count)
    down = int(math.ceil(float(count) / across))
    cell_h, cell_w = batch.size(2) + padding, batch.size(3) + padding
    sheet = batch.new_full((batch.size(1), cell_h * down + padding, cell_w * across + padding), pad_value)
    for k in range(count):
        row, col = divmod(k, across)
        sheet[:, row * cell_h + padding:(row + 1) * cell_h, col * cell_w + padding:(col + 1) * cell_w] = batch[k]
    return sheet


def save_image(batch, fp, format=None, **kw):
    sheet = make_grid(batch, **kw)
    pixels = sheet.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to("cpu", torch.uint8).numpy()
    Image.fromarray(pixels).save(fp, format=format)
'''

_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout36.py."""\nfrom . import datasets, '
                               'transforms, utils\n',
    "torchvision/datasets.py": _TV_DATASETS,
    "torchvision/transforms.py": _TV_TRANSFORMS,
    "torchvision/utils.py": _TV_UTILS,
}



def _cluster_cpu(proj):
    """No GPU here: clustergan.py's sample_z and calc_gradient_penalty call `.cuda()` and name
    torch.cuda.FloatTensor whatever torch.cuda.is_available() says; the torch side's made `.cpu()` and
    torch.FloatTensor (after the conversion, which saw them as written)."""
    path = Path(proj) / "clustergan.py"
    text = path.read_text()
    for old, new in ((".cuda()", ".cpu()"), ("torch.cuda.FloatTensor", "torch.FloatTensor")):
        if old not in text:
            raise RuntimeError(f"clustergan.py: {old!r} not found")
        text = text.replace(old, new)
    path.write_text(text)


TORCH_FILES = {name: dict(_TORCHVISION) for name, *_ in PROGRAMS}
for _name in ("clustergan", "clustergan_wass"):
    TORCH_FILES[_name]["clustergan.py"] = _cluster_cpu

# the cap on iterations: 6 losses (real_world's default budget; three G and three D steps for most, ClusterGAN's
# G/E step every n_critic iterations, a program with fewer iterations ends first)
LOSSES = {name: 6 for name, *_ in PROGRAMS}

# ClusterGAN as written: its D loss is differentiated through gen_imgs, whose generator the G/E step has changed in
# place; torch (>= 1.5) refuses it. The converted runs must stop there too (compared up to it).
RAISES = {name: r"RuntimeError: one of the variables needed for gradient computation has been modified by an "
                r"inplace operation" for name in ("clustergan", "clustergan_wass")}
