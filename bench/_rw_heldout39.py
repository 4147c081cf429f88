"""The `heldout39` set of bench/real_world.py (`--set heldout39`): kentaroy47/vision-transformers-cifar10, its
models/ package converted as a new user would convert it (`msmigrate convert` of a directory holding models/ and a
driver of ours).

    python bench/real_world.py --mirrors /work/.mirror --set heldout39 [--only zoo_vit,zoo_cnn]

- zoo_<family>: a driver of ours builds each architecture train_cifar10.py builds, with the constructor arguments
  train_cifar10.py passes, shrunk for time (dim 32 instead of 512, depth 2 instead of 6, 2 heads, mlp_dim 64,
  patch 8 on 32x32 images; swin_t with hidden_dim 16, two layers per stage and window 4; ConvMixer of width 32 and
  depth 2 with train_cifar10.py's kernel 8 and patch 1; VGG11 since VGG('VGG19', num_classes=...) is a TypeError
  in torch), seeded with torch.manual_seed. For each: a VALUE of one eval-mode forward of two 3x32x32 images
  (torch.randn, drawn alike on both sides by the runner), one training step as train_cifar10.py takes it
  (CrossEntropyLoss, Adam at 1e-3 on net.parameters(): one loss per architecture), a VALUE of the absolute sum
  of the updated trainable parameters and a VALUE of the eval-mode forward after the step, and an `ARCH name ok`
  line (or the error it raised: a PRINTED line, so one architecture that stops does not hide the others). The
  runner gives the converted model torch's initial weights (by name, msmigrate.weights) at its first call and
  turns dropout off on both sides (CaiT's layer dropout, a Tensor.uniform_ draw per layer, stays: the runner draws
  it alike).
  - zoo_vit: ViT (models/vit.py), the small-dataset ViT with shifted patch tokens and locality self-attention
    (models/vit_small.py, at vit_small's and vit_tiny's head counts), SimpleViT (sin-cos 2-D position
    embedding), DyT (DynamicTanh instead of LayerNorm).
  - zoo_cait_swin: CaiT (LayerScale, class-attention over the patch tokens, layer dropout 0.05) and Swin
    (cyclic shift with torch.roll, masked window attention with relative position embedding, patch merging with
    nn.Unfold).
  - zoo_mixer: ConvMixer (padding="same" with an even kernel), MLPMixer (Conv1d token mixing through einops
    layers) and mobilevit_xxs (MV2 blocks, MobileViT blocks with einops patch rearranges) as train_cifar10.py
    builds it for 32x32 images, `mobilevit_xxs(32, 10)`, which stops in torch (einops cannot split the 1x1 map
    of its last block into 2x2 patches: the error is the compared outcome), and mobilevit_xxs(64, 10) on 64x64
    images (mobilevit_64, drawn after the 32x32 ones).
  - zoo_cnn: ResNet18 (num_classes=10) and VGG11 (models/vgg.py).
- train_<net>: train_cifar10.py run whole (`--net NET --n_epochs 2 --bs 4 --dimhead 32 --patch 8`, res18 with
  `--lr 1e-3`), the whole repository converted, on a synthetic CIFAR-10 in torchvision's format
  (./data/cifar-10-batches-py: 16 training and 8 test images). What runs: RandAugment (Python's random, PIL
  operations) before RandomCrop(32, padding=4), Resize(32), RandomHorizontalFlip, ToTensor, Normalize; the
  DataLoaders (num_workers=8); the net train_cifar10.py builds (vit: depth 6, 8 heads, mlp_dim 512 at dim 32;
  ResNet18; MLPMixer of dim 512 and depth 6); Adam, CosineAnnealingLR stepped with an epoch argument; the CUDA
  GradScaler and autocast as written (no GPU here: torch disables both with a warning); train() and test() with
  utils.py's progress_bar, the checkpoint torch.save of net, optimizer and scaler states, the log and csv files,
  wandb.init / config.update / watch / log / save. The runner stops each side at its 6th loss (in the second
  epoch, after the first test()). PRINTED: the `Epoch: N` headers, `Saving..` and the validation-loss list.

Not installed here, so stand-ins or separate installs: torchvision does not import next to this CPU torch: the
torch side gets our torchvision (datasets.CIFAR10 over the pickles; Compose with its `transforms` list, RandomCrop,
Resize (an image already of the size returned as it is, as torchvision does), RandomHorizontalFlip, ToTensor,
Normalize, drawing through torch.randint / torch.rand as torchvision does), written after the conversion; the
converted side's torchvision is the converter's own. train_cifar10.py calls `net.cuda()` whatever
torch.cuda.is_available() says: the torch side's is made `net.cpu()`. pandas and wandb (train_cifar10.py imports
both; `usewandb = ~args.nowandb` is -1 or -2, true either way, so wandb.init always runs) are not in the shared
environment: installed apart, `pip install --target DIR pandas wandb` (numpy<2 and torch pinned), and named to the
runner with RW_SITE=DIR (the packages the environment already has taken out of DIR); wandb runs in its disabled
mode, set by a ./wandb/settings file written beside the program on both sides (nothing is sent; wandb.watch of the
converted Cell does nothing there). Without RW_SITE the train programs stop at `import pandas` on the torch side.

timm does not import next to this CPU torch (its torchvision import
fails); models/dyt.py imports timm.models.layers.LayerNorm2d at its top and reads it only in convert_ln_to_dyt,
which DyT never calls: a stand-in timm package of ours with that one name (a LayerNorm subclass) is written beside
the driver (or the repository's root) before the conversion, so both sides import it (train_cifar10.py imports
models.dyt at its top).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

VTC = "kentaroy47+vision-transformers-cifar10@5bb83d36018b314c3020558541015bb01bce15bc"

# constructor calls per architecture, each as train_cifar10.py writes it, sizes shrunk
_SMALL = "image_size=32, patch_size=8, num_classes=10, dim=32, depth=2, heads=2, mlp_dim=64"
ZOO = {
    "zoo_vit": {
        "vit": f"ViT({_SMALL}, dropout=0.1, emb_dropout=0.1)",
        "vit_small": f"SmallViT({_SMALL.replace('heads=2', 'heads=4')}, dropout=0.1, emb_dropout=0.1)",
        "vit_tiny": f"SmallViT({_SMALL.replace('heads=2', 'heads=3')}, dropout=0.1, emb_dropout=0.1)",
        "simplevit": f"SimpleViT({_SMALL})",
        "dyt": f"DyT({_SMALL}, dropout=0.1, emb_dropout=0.1)",
    },
    "zoo_cait_swin": {
        "cait": f"CaiT({_SMALL}, cls_depth=1, dropout=0.1, emb_dropout=0.1, layer_dropout=0.05)",
        "swin": "swin_t(hidden_dim=16, layers=(2, 2, 2, 2), heads=(1, 2, 2, 2), window_size=4, num_classes=10, "
                "downscaling_factors=(2, 2, 2, 1))",
    },
    "zoo_mixer": {
        "convmixer": "ConvMixer(32, 2, kernel_size=8, patch_size=1, n_classes=10)",
        "mlpmixer": "MLPMixer(image_size=32, channels=3, patch_size=4, dim=32, depth=2, num_classes=10)",
        "mobilevit_64": "mobilevit_xxs(64, 10)",
        # last: a model whose first call raises is numbered on the converted side, not on torch's (the runner
        # would give the next model the weights torch recorded for this one's successor)
        "mobilevit": "mobilevit_xxs(32, 10)",
    },
    "zoo_cnn": {
        "res18": "ResNet18(num_classes=10)",
        "vgg": "VGG('VGG11')",
    },
}

_ZOO_DRIVER = '''
import torch
import torch.nn as nn

from models.cait import CaiT
from models.convmixer import ConvMixer
from models.dyt import DyT
from models.mlpmixer import MLPMixer
from models.mobilevit import mobilevit_xxs
from models.resnet import ResNet18
from models.simplevit import SimpleViT
from models.swin import swin_t
from models.vgg import VGG
from models.vit import ViT
from models.vit_small import ViT as SmallViT

small = torch.randn(2, 3, 32, 32)
larger = torch.randn(2, 3, 64, 64)
labels = torch.tensor([3, 8])
criterion = nn.CrossEntropyLoss()


def one(name, build):
    images = larger if name.endswith("_64") else small
    torch.manual_seed(0)
    net = build()
    net.eval()
    with torch.no_grad():
        first = net(images)
    print("VALUE", name + "_eval", float(first.abs().sum()))
    net.train()
    adam = torch.optim.Adam(net.parameters(), lr=1e-3)
    adam.zero_grad()
    loss = criterion(net(images), labels)
    loss.backward()
    adam.step()
    total = 0.0
    for p in net.parameters():
        if p.requires_grad:     # not swin's -inf masks (Parameters with requires_grad=False)
            total += float(p.detach().abs().sum())
    print("VALUE", name + "_weights", total)
    net.eval()
    with torch.no_grad():
        second = net(images)
    print("VALUE", name + "_after", float(second.abs().sum()))


for name, build in BUILDS:
    try:
        one(name, build)
    except Exception as e:
        print("ARCH", name, "raised", type(e).__name__, str(e).split(" (")[0][:120])
    else:
        print("ARCH", name, "ok")
'''


def _driver(builds):
    rows = ",\n    ".join(f"({name!r}, lambda: {call})" for name, call in builds.items())
    return _ZOO_DRIVER.replace("BUILDS", "[\n    " + rows + ",\n]")


# timm does not import next to this torch (its torchvision import fails): the one name models/dyt.py imports
_TIMM = {
    "timm/__init__.py": '"""A stand-in written by bench/_rw_heldout39.py: timm does not import here."""\n',
    "timm/models/__init__.py": '"""A stand-in written by bench/_rw_heldout39.py."""\n',
    "timm/models/layers.py": '"""A stand-in written by bench/_rw_heldout39.py: models/dyt.py reads LayerNorm2d '
                             'only in an isinstance test DyT never reaches."""\nfrom torch import nn\n\n\n'
                             'class LayerNorm2d(nn.LayerNorm):\n    pass\n',
}



def _data(root):
    """Both sides: a synthetic CIFAR-10 beside the program (train_cifar10.py reads ./data), and wandb's workspace
    settings file there (./wandb/settings, mode disabled: nothing is sent, wandb.watch and wandb.log do nothing)."""
    from bench.data_speed import write_cifar10
    prog = Path(root).parent / "x" / "prog"
    write_cifar10(prog / "data", n_train=16, n_test=8, seed=39)
    (prog / "wandb").mkdir(parents=True, exist_ok=True)
    (prog / "wandb" / "settings").write_text("[default]\nmode = disabled\n")


def _cpu(proj):
    """No GPU here: train_cifar10.py calls `net.cuda()` whatever torch.cuda.is_available() says; the torch side's
    is made `net.cpu()` (the converted side's net.cuda() is the converter's)."""
    script = Path(proj) / "train_cifar10.py"
    script.write_text(script.read_text().replace("net.cuda()", "net.cpu()"))


_TV_DATASETS = '''
"""A stand-in written by bench/_rw_heldout39.py: CIFAR-10 from root/cifar-10-batches-py's pickles."""
import os
import pickle

import numpy as np
from PIL import Image


class CIFAR10:
    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        names = [f"data_batch_{k}" for k in range(1, 6)] if train else ["test_batch"]
        rows, labels = [], []
        for name in names:
            with open(os.path.join(root, "cifar-10-batches-py", name), "rb") as f:
                entry = pickle.load(f, encoding="latin1")
            rows.append(np.asarray(entry["data"]))
            labels += list(entry["labels"])
        self.data = np.vstack(rows).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        self.targets = labels
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


CIFAR100 = None
'''

_TV_TRANSFORMS = '''
"""A stand-in written by bench/_rw_heldout39.py: the transforms train_cifar10.py uses, on PIL images, computed as
torchvision computes them and drawing their random numbers the way torchvision draws them."""
import numpy as np
import torch
from PIL import Image, ImageOps


class Compose:
    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, x):
        for step in self.transforms:
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


class Resize:
    """the shorter side to `size`, bilinear; an image already of that size is returned as it is"""
    def __init__(self, size):
        self.size = size

    def __call__(self, picture):
        width, height = picture.size
        short, long = min(width, height), max(width, height)
        if short == self.size:
            return picture
        other = int(self.size * long / short)
        shape = (self.size, other) if width <= height else (other, self.size)
        return picture.resize(shape, Image.BILINEAR)


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, picture):
        return picture.transpose(Image.FLIP_LEFT_RIGHT) if torch.rand(1) < self.p else picture


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
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout39.py."""\nfrom . import datasets, '
                               'transforms\n',
    "torchvision/datasets.py": _TV_DATASETS,
    "torchvision/transforms.py": _TV_TRANSFORMS,
}

# train_cifar10.py's own network sizes (depth 6, 8 heads, mlp_dim 512) with dim 32 (--dimhead) and 8x8 patches
_TRAIN_ARGS = ["--n_epochs", "2", "--bs", "4", "--dimhead", "32", "--patch", "8"]
TRAIN = {"train_vit": ["--net", "vit"], "train_res18": ["--net", "res18", "--lr", "1e-3"],
         "train_mlpmixer": ["--net", "mlpmixer"]}

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [(name, VTC, "models", "driver.py", [], None) for name in ZOO] + [
    (name, VTC, ".", "train_cifar10.py", args + _TRAIN_ARGS, _data) for name, args in TRAIN.items()]

DEPS: dict = {}

DRIVERS = {name: _driver(builds) for name, builds in ZOO.items()}

FILES = {name: dict(_TIMM) for name, *_ in PROGRAMS}

TORCH_FILES = {name: {**_TORCHVISION, "net.cuda": _cpu} for name in TRAIN}

# each architecture's one training step is a loss
LOSSES = {name: len(builds) for name, builds in ZOO.items()}

PRINTED = {name: r"^ARCH .*$" for name in ZOO}
# the epoch headers, the validation losses after each epoch (`print(list_loss)`), the checkpoint's `Saving..`
PRINTED.update({name: r"^(Epoch: \d+|\[[-0-9.e, ]*\]|Saving\.\.)$" for name in TRAIN})
