"""The `heldout44` set of bench/real_world.py (`--set heldout44`): znxlwm/pytorch-generative-model-collections (ten
GANs behind one main.py) and timbmg/VAE-CVAE-MNIST (train.py, VAE and CVAE), converted as a new user would convert
them, on synthetic MNIST idx files in torchvision's on-disk layout.

    python bench/real_world.py --mirrors /work/.mirror --set heldout44 [--only gan,vae]

- main_as_written: main.py's main() as written (`--gan_type GAN --dataset mnist`), called by a driver of ours that
  prints its outcome (`MAIN raised <type>: <message>`, a PRINTED line): dataloader.py normalizes the one-channel
  MNIST images with a three-entry mean and std; torchvision's Normalize subtracts in place and stops ("output with
  shape [1, 16, 16] doesn't match the broadcast shape [3, 16, 16]") on the first batch, in GAN.__init__. The
  converted run must stop there with the same error.
- gan, cgan, acgan, infogan, ebgan, began, wgan, wgan_gp, dragan, lsgan: a driver of ours beside the collections'
  files (main.py, the ten model files, utils.py and dataloader.py, as they are) that replaces each model file's
  `dataloader` function by one of ours (the same MNIST folder, Resize, ToTensor, and a one-entry Normalize) and
  then calls main.py's main() with `--gan_type NAME --dataset mnist --epoch 1 --batch_size 4 --input_size 16
  --gpu_mode ""` (argparse's type=bool makes the empty string False: no `.cuda()` on the torch side). train()
  runs the D and G steps (Adam, BCE/MSE/L1/WGAN losses, the gradient penalties of WGAN_GP and DRAGAN through
  torch.autograd.grad with create_graph, WGAN's weight clipping, infoGAN's third optimizer over itertools.chain of
  both networks, BEGAN's k update from .item()); the losses are every backward() of torch against the converted
  steps' losses, 6 per run (WGAN and WGAN_GP: five critic steps, then the generator's), and utils.print_network's
  parameter counts and "training start!!" as PRINTED lines. infoGAN.py as written stops in torch at its first D
  loss (its discriminator's score is `x[:, 0]`, shape (N,), against (N, 1) labels: BCELoss's ValueError): RAISES,
  compared up to it (the printed lines). 40 training images of 16x16 after Resize, ten batches per epoch: the cap
  ends the runs before visualize_results (scipy.misc.imsave, gone from SciPy). DRAGAN.py draws `torch.rand(...).cuda()` whatever gpu_mode says: the torch side's `.cuda()`
  is made `.cpu()` after the conversion.
- vae, cvae: train.py run whole (`--epochs 1 --batch_size 4 --print_every 1000`, and `--conditional`) on
  data/MNIST (40 training images): torch.manual_seed, ToTensor, the reparameterization's torch.randn_like (the
  runner's matched noise), binary_cross_entropy with reduction='sum' and the KL term, Adam; iteration 0 draws
  torch.randn codes for vae.inference and plots them with matplotlib (saved under figs/). 6 losses.

pandas, seaborn (train.py) and imageio (utils.py) are imported at the top and are not in the shared environment:
installed apart and given to both sides by the runner's RW_SITE (`pip install --target DIR "pandas<2.3"
"numpy<2" seaborn imageio`, then the packages the environment has taken out of DIR). torchvision does not import
next to this CPU torch: the torch side gets a stand-in of ours (MNIST from the idx files as PIL images; Compose,
Resize, ToTensor and Normalize computed as torchvision computes them, Normalize's in-place subtraction included),
written after the conversion (the converted side's torchvision is the converter's own).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

from bench._rw_heldout36 import _TV_DATASETS as _MNIST_STANDIN

GANS = "znxlwm+pytorch-generative-model-collections@0d183bb5ea2fbe069e1c6806c4a9a1fd8e81656f"
VAES = "timbmg+VAE-CVAE-MNIST@4f1b22367a5c5cff88bf97ce78219132aa9fd977"

_KINDS = ("GAN", "CGAN", "ACGAN", "infoGAN", "EBGAN", "BEGAN", "WGAN", "WGAN_GP", "DRAGAN", "LSGAN")
_FILES = ",".join(["main.py", "utils.py", "dataloader.py"] + [kind + ".py" for kind in _KINDS])


def _mnist_beside_program(folder):
    """MNIST idx files under RUN/SIDE/x/prog/<folder>/MNIST/raw: the programs read them relative to their own
    directory (main.py's 'data/mnist', train.py's 'data')."""
    def write(root):
        from tests.corpus import write_mnist
        write_mnist(Path(root).parent / "x" / "prog" / folder, n_train=40, n_test=8, seed=44)
    return write


def _args(kind):
    return ["--gan_type", kind, "--dataset", "mnist", "--epoch", "1", "--batch_size", "4", "--input_size", "16",
            "--gpu_mode", ""]


# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [("main_as_written", GANS, _FILES, "as_written.py", _args("GAN"), _mnist_beside_program("data/mnist"))]
PROGRAMS += [(kind.lower(), GANS, _FILES, "gan_driver.py", _args(kind), _mnist_beside_program("data/mnist"))
             for kind in _KINDS]
PROGRAMS += [("vae", VAES, "", "train.py", ["--epochs", "1", "--batch_size", "4", "--print_every", "1000"],
              _mnist_beside_program("data")),
             ("cvae", VAES, "", "train.py", ["--epochs", "1", "--batch_size", "4", "--print_every", "1000",
                                             "--conditional"], _mnist_beside_program("data"))]

DEPS: dict = {}

_DRIVER = '''
"""A driver written by bench/_rw_heldout44.py: main.py's main() on one-channel MNIST. dataloader.py normalizes
with three channels' mean and std, which torchvision refuses on MNIST's one channel; every model file's loader
is swapped for the one below before main() builds the model."""
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

import main as entry
import GAN as gan_file
import CGAN as cgan_file
import ACGAN as acgan_file
import infoGAN as infogan_file
import EBGAN as ebgan_file
import BEGAN as began_file
import WGAN as wgan_file
import WGAN_GP as wgan_gp_file
import DRAGAN as dragan_file
import LSGAN as lsgan_file


def one_channel_loader(dataset, input_size, batch_size, split="train"):
    steps = transforms.Compose([
        transforms.Resize((input_size, input_size)),
        transforms.ToTensor(),
        transforms.Normalize(mean=(0.5,), std=(0.5,)),
    ])
    digits = datasets.MNIST("data/" + dataset, train=True, download=True, transform=steps)
    return DataLoader(digits, batch_size=batch_size, shuffle=True)


for model_file in (gan_file, cgan_file, acgan_file, infogan_file, ebgan_file, began_file, wgan_file,
                   wgan_gp_file, dragan_file, lsgan_file):
    model_file.dataloader = one_channel_loader

entry.main()
'''

DRIVERS = {kind.lower(): _DRIVER for kind in _KINDS}
DRIVERS["main_as_written"] = '''
"""A driver written by bench/_rw_heldout44.py: main.py's main() as written, its outcome printed."""
import main as entry

try:
    entry.main()
except RuntimeError as error:
    print(f"MAIN raised {type(error).__name__}: {error}")
'''

# torchvision does not import next to this CPU torch: the torch side's stand-in (ours), written after the conversion
_TV_DATASETS = _MNIST_STANDIN   # bench/_rw_heldout36.py's (MNIST from root/MNIST/raw's idx files)

_TV_TRANSFORMS = '''
"""A stand-in written by bench/_rw_heldout44.py: the transforms the programs use, computed as torchvision computes
them (Normalize on a clone, subtracting and dividing in place: a mean with more entries than the image has
channels is torch's broadcast error)."""
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
        self.size, self.interpolation = size, interpolation

    def __call__(self, picture):
        width, height = picture.size
        if isinstance(self.size, int):
            short = min(width, height)
            target = (self.size * width // short, self.size * height // short)
        else:
            target = (self.size[1], self.size[0])
        return picture.resize(target, self.interpolation)


class ToTensor:
    def __call__(self, picture):
        pixels = np.array(picture, np.uint8, copy=True)
        if pixels.ndim == 2:
            pixels = pixels[:, :, None]
        return torch.from_numpy(pixels).permute(2, 0, 1).contiguous().float().div(255)


class Normalize:
    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, inplace

    def __call__(self, x):
        out = x if self.inplace else x.clone()
        centre = torch.as_tensor(self.mean, dtype=x.dtype).view(-1, 1, 1)
        spread = torch.as_tensor(self.std, dtype=x.dtype).view(-1, 1, 1)
        return out.sub_(centre).div_(spread)
'''

_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout44.py."""\nfrom . import datasets, '
                               'transforms\n',
    "torchvision/datasets.py": _TV_DATASETS,
    "torchvision/transforms.py": _TV_TRANSFORMS,
}


def _dragan_cpu(proj):
    """No GPU here: DRAGAN.py's gradient penalty calls `.cuda()` on its alpha draw whatever gpu_mode says; the
    torch side's `.cuda()` calls are made `.cpu()` (after the conversion, which saw them as written; with gpu_mode
    False no other `.cuda()` of the file runs)."""
    path = Path(proj) / "DRAGAN.py"
    text = path.read_text()
    if ".cuda()" not in text:
        raise RuntimeError("DRAGAN.py: no .cuda() found")
    path.write_text(text.replace(".cuda()", ".cpu()"))


TORCH_FILES = {name: dict(_TORCHVISION) for name, *_ in PROGRAMS}
TORCH_FILES["dragan"]["DRAGAN.py"] = _dragan_cpu

LOSSES = {name: 6 for name, *_ in PROGRAMS}

# main.py's networks, counted by utils.print_network; main_as_written's outcome (dataloader.py's three-entry
# Normalize on one-channel images: torchvision's in-place broadcast error, with its message)
PRINTED = {name: r"^Total number of parameters: \d+$|^training start!!$" for name, *_ in PROGRAMS}
PRINTED["main_as_written"] = r"^MAIN .*$|^Total number of parameters: \d+$"
for _name in ("vae", "cvae"):
    del PRINTED[_name]

# infoGAN.py's discriminator returns its real/fake score as x[:, 0], shape (N,), which BCELoss compares with the
# (N, 1) labels: torch refuses such a target (a deprecation warning in the torch of 2018, an error now), at the
# first D loss
RAISES = {"infogan": r"ValueError: Using a target size \(torch\.Size\(\[4, 1\]\)\) that is different to the input "
                     r"size \(torch\.Size\(\[4\]\)\)"}
