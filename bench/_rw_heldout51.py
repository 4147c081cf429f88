"""The `heldout51` set of bench/real_world.py (`--set heldout51`): rosinality/glow-pytorch (Glow: ActNorm with its
data-dependent initialization, invertible 1x1 convolutions plain and LU-parametrized, affine and additive
couplings, squeeze and split, the log-likelihood in bits per dimension) and
orobix/Prototypical-Networks-for-Few-shot-Learning-PyTorch (ProtoNet trained episodically on an Omniglot-like
folder), converted as a new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout51 [--only glow_lu_affine,proto_train]

- rosinality/glow-pytorch (train.py and model.py as they are): a synthetic image folder in torchvision
  ImageFolder's on-disk layout under RUN/SIDE/data/glow (two class directories of five 12x10 RGB PNGs: Resize
  to the image size's short side, then CenterCrop, are real resizes and crops), train.py's positional PATH
  `../../data/glow`. train.py run whole (`--batch 4 --n_flow 2 --n_block 2 --n_sample 2 --lr 1e-4`): sample_data's
  endless generator (a DataLoader shuffled, 4 workers, remade at StopIteration), the transforms (Resize,
  CenterCrop, RandomHorizontalFlip, ToTensor), Glow inside nn.DataParallel, Adam; train()'s first iteration
  calls `model.module(...)` under no_grad (each ActNorm's data-dependent initialization: `.item()` of a uint8
  buffer, loc and scale written through `.data.copy_`, the buffer `fill_(1)`) and `continue`s; each next
  iteration quantizes the image to n_bits (`torch.floor`), adds `torch.rand_like` noise (the runner's matched
  stream), runs the flows (ActNorm, InvConv2dLU's `w_p @ (w_l * l_mask + l_eye) @ (w_u * u_mask + diag(s_sign *
  exp(w_s)))` or InvConv2d's `torch.slogdet` of the double weight, AffineCoupling's sigmoid scale or additive
  shift with ZeroConv2d's `F.pad(value=1)`, the squeeze's view/permute, the split prior's gaussian_log_p),
  calc_loss, `model.zero_grad()`, backward, the learning rate written into `param_groups[0]["lr"]`, Adam's step;
  `--iter 5`: four training steps (the losses compared), no sample image and no checkpoint (`i % 100`,
  `i % 10000` at i 0 only, which `continue`s first).
  - glow_lu_affine: `--affine --img_size 8 --n_bits 5` (InvConv2dLU; its scipy.linalg qr and lu at build).
  - glow_plain_additive: `--no_lu --img_size 8 --n_bits 5` (InvConv2d: `torch.qr` at build, slogdet in
    float64; additive coupling, `logdet = None`).
  - glow_reverse: a driver of ours runs train.py as `__main__` (runpy, `--affine --no_lu --img_size 8 --n_bits 8
    --iter 3`: two steps, no quantization), then, from its globals, calls `model_single.reverse` under no_grad
    on calc_z_shapes' latent shapes drawn with torch.randn times the temperature (sampling: gaussian_sample,
    `inverse()` of each 1x1 weight, the couplings' reverse, the unsqueeze), and on the z_outs of a forward of
    one batch with reconstruct=True; the sums of |sample|, of log_p and logdet and of |reconstruction| print as
    VALUEs (not the reconstruction error, 3e-5 of a sum of 92: rounding, which torch's own float32 and float64
    runs give apart by far more than the tolerance).
- orobix/Prototypical-Networks-for-Few-shot-Learning-PyTorch (src/ as it is): an Omniglot-like dataset under
  RUN/SIDE/data/omniglot in the layout OmniglotDataset reads (data/ALPHABET/CHARACTER/*.png of 1-bit 20x20
  images and splits/vinyals/{train,val,test}.txt listing ALPHABET/CHARACTER/rotNNN classes; `data/` exists, so
  nothing is downloaded): per split, its rotations of its characters, 5 images each. src/train.py run whole:
  init_seed, three dataloaders (OmniglotDataset's PIL rotate and resize to 28x28, `1.0 - torch.from_numpy`,
  `transpose(0, 1).contiguous().view`; PrototypicalBatchSampler's nan-filled index table, torch.randperm class
  and sample draws, the batch filled through float index tensors) as each DataLoader's batch_sampler, ProtoNet
  (four conv-BN-ReLU-maxpool blocks), Adam, StepLR; train() for `-nep 2` epochs of `-its 3` episodes
  (prototypical_loss: `.to('cpu')`, `eq(c).nonzero()[:n]`, torch.unique, the prototypes' means, euclidean_dist
  by expand, log_softmax, gather, `max(2)`, the accuracy) with validation in eval mode after each epoch, torch.save
  of the best and last state dicts, the lists written through `locals()[name]`; test() of the last model and of
  `best_state` (a state_dict taken while training: torch's tensors share the parameters' storage), ten passes
  each over the test loader. The losses compared; PRINTED: the accuracies train(), validation and test() print (proto_oneshot: not
  test()'s, below).
  Before converting, both sides get one spelling written as its successor: load_img's
  `np.array(x, np.float32, copy=False)` as `np.asarray(x, np.float32)` (NumPy 2 made `copy=False` a ValueError
  where a copy is needed, as for a PIL image).
  - proto_train: `-cTr 3 -nsTr 2 -nqTr 2 -cVa 3 -nsVa 2 -nqVa 2 -lrS 1` (the learning rate halved each epoch).
  - proto_oneshot: `-cTr 4 -nsTr 1 -nqTr 3 -cVa 3 -nsVa 1 -nqVa 3 -lr 0.01` (one support image per class:
    the prototype is the support embedding itself). Its test accuracies are not compared: its second test
    (best_state) sits on near ties between prototypes, where torch's own float32 and float64 runs print 0.6556
    and 0.6593.

torchvision does not import next to this CPU torch: glow's torch side gets a stand-in of ours (ImageFolder over
sorted class directories, heldout32's and heldout34's transforms, a save_image that nothing reached here calls),
written after the conversion; the converted side's torchvision is the converter's own.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from bench._rw_heldout32 import _TV_TRANSFORMS
from bench._rw_heldout34 import _TV_MORE_TRANSFORMS

GLOW = "rosinality+glow-pytorch@97081ff115a694cf04aeedbd58447f33d242c879"
PROTO = "orobix+Prototypical-Networks-for-Few-shot-Learning-PyTorch@df89808d708637b769a41f27416b911758b8efb7"


def _glow_images(root):
    """Both sides: two ImageFolder classes of five 12x10 RGB PNGs under RUN/SIDE/data/glow."""
    from PIL import Image
    rs = np.random.RandomState(51)
    for c in ("cats", "dogs"):
        d = Path(root) / "glow" / c
        d.mkdir(parents=True, exist_ok=True)
        for i in range(5):
            Image.fromarray(rs.randint(0, 256, (10, 12, 3)).astype(np.uint8)).save(d / f"{i}.png")


def _omniglot(root):
    """Both sides: RUN/SIDE/data/omniglot in OmniglotDataset's layout: data/ALPHABET/CHARACTER/*.png (1-bit) and
    splits/vinyals/{train,val,test}.txt of ALPHABET/CHARACTER/rotNNN lines."""
    from PIL import Image
    rs = np.random.RandomState(51)
    base = Path(root) / "omniglot"
    splits = {"train": [("Alpha", "character01"), ("Alpha", "character02")],
              "val": [("Beta", "character01")],
              "test": [("Beta", "character02")]}
    (base / "splits" / "vinyals").mkdir(parents=True, exist_ok=True)
    shared = rs.rand(20, 20) < 0.3
    for split, chars in splits.items():
        lines = []
        for alphabet, char in chars:
            d = base / "data" / alphabet / char
            d.mkdir(parents=True, exist_ok=True)
            stroke = shared ^ (rs.rand(20, 20) < 0.04)     # characters alike: a few strokes their own
            for i in range(5):      # each drawing a noisy copy; Omniglot: white paper (1), black strokes (0)
                pixels = ~(stroke ^ (rs.rand(20, 20) < 0.15))
                Image.fromarray(pixels).convert("1").save(d / f"{char}_{i:02d}.png")
            lines += [f"{alphabet}/{char}/rot{r:03d}" for r in (0, 90, 180, 270)]
        (base / "splits" / "vinyals" / f"{split}.txt").write_text("\n".join(lines) + "\n")


def _proto_successors(proj):
    """Both sides, before converting: NumPy 2 raises for `np.array(..., copy=False)` where a copy is needed (a PIL
    image); `np.asarray` is its documented successor."""
    f = Path(proj) / "omniglot_dataset.py"
    text = f.read_text()
    old = "np.array(x, np.float32, copy=False)"
    if old not in text:
        raise RuntimeError(f"{f}: {old!r} not found")
    f.write_text(text.replace(old, "np.asarray(x, np.float32)"))


_GLOW_REVERSE_DRIVER = '''
"""A driver written by bench/_rw_heldout51.py: train.py run as __main__ (its arguments), then its Glow sampled
from the prior and a batch reconstructed from its own latents."""
import runpy

import torch

g = runpy.run_path("train.py", run_name="__main__")
args, model = g["args"], g["model_single"]
z_sample = [torch.randn(args.n_sample, *shape) * args.temp
            for shape in g["calc_z_shapes"](3, args.img_size, args.n_flow, args.n_block)]
with torch.no_grad():
    sample = model.reverse(z_sample)
    print("VALUE sample_abs", float(sample.abs().sum()))
    image = torch.rand(2, 3, args.img_size, args.img_size) - 0.5
    log_p, logdet, z_outs = model(image)
    print("VALUE log_p", float(log_p.sum()))
    print("VALUE logdet", float(logdet.sum()))
    back = model.reverse(z_outs, reconstruct=True)
    print("VALUE reconstruct_abs", float(back.abs().sum()))
'''

_TV_DATASETS = '''
"""A stand-in written by bench/_rw_heldout51.py: ImageFolder as torchvision reads a folder (sorted class
directories, sorted image files, RGB PIL images)."""
import os

from PIL import Image

_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


class ImageFolder:
    def __init__(self, root, transform=None, target_transform=None):
        self.classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}
        self.samples = []
        for c in self.classes:
            for base, _, files in sorted(os.walk(os.path.join(root, c), followlinks=True)):
                for name in sorted(files):
                    if name.lower().endswith(_EXTENSIONS):
                        self.samples.append((os.path.join(base, name), self.class_to_idx[c]))
        self.targets = [s[1] for s in self.samples]
        self.transform, self.target_transform = transform, target_transform

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, target = self.samples[i]
        with open(path, "rb") as f:
            picture = Image.open(f).convert("RGB")
        if self.transform is not None:
            picture = self.transform(picture)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return picture, target
'''

_TV_UTILS = '''
"""A stand-in written by bench/_rw_heldout51.py: train.py imports utils for save_image, which the runs here do not
reach (i % 100 == 0 only at the first iteration, which continues first)."""


def save_image(*args, **kwargs):
    raise NotImplementedError("the stand-in's save_image is imported, not used")
'''

_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout51.py."""\nfrom . import datasets, '
                               'transforms, utils\n',
    "torchvision/datasets.py": _TV_DATASETS,
    "torchvision/transforms.py": _TV_TRANSFORMS + _TV_MORE_TRANSFORMS,
    "torchvision/utils.py": _TV_UTILS,
}

_GLOW_COMMON = ["--batch", "4", "--n_flow", "2", "--n_block", "2", "--n_sample", "2", "--lr", "1e-4"]
_PROTO_COMMON = ["--dataset_root", "../../data/omniglot", "--experiment_root", "../output", "-nep", "2",
                 "-its", "3"]

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("glow_lu_affine", GLOW, "train.py,model.py", "train.py",
     _GLOW_COMMON + ["--affine", "--img_size", "8", "--n_bits", "5", "--iter", "5", "../../data/glow"],
     _glow_images),
    ("glow_plain_additive", GLOW, "train.py,model.py", "train.py",
     _GLOW_COMMON + ["--no_lu", "--img_size", "8", "--n_bits", "5", "--iter", "5", "../../data/glow"],
     _glow_images),
    ("glow_reverse", GLOW, "train.py,model.py", "driver.py",
     _GLOW_COMMON + ["--affine", "--no_lu", "--img_size", "8", "--n_bits", "8", "--iter", "3",
                     "../../data/glow"], _glow_images),
    ("proto_train", PROTO, "src", "train.py",
     _PROTO_COMMON + ["-cTr", "3", "-nsTr", "2", "-nqTr", "2", "-cVa", "3", "-nsVa", "2", "-nqVa", "2",
                      "-lrS", "1", "-lr", "1e-5"], _omniglot),
    ("proto_oneshot", PROTO, "src", "train.py",
     _PROTO_COMMON + ["-cTr", "4", "-nsTr", "1", "-nqTr", "3", "-cVa", "3", "-nsVa", "1", "-nqVa", "3",
                      "-lr", "1e-4"], _omniglot),
]

DEPS: dict = {}

DRIVERS = {"glow_reverse": _GLOW_REVERSE_DRIVER}

FILES = {name: {".successors": _proto_successors} for name, *_ in PROGRAMS if name.startswith("proto_")}

TORCH_FILES = {name: dict(_TORCHVISION) for name, *_ in PROGRAMS if name.startswith("glow_")}

# glow: the programs end first (4 and 2 training steps); proto: 2 epochs of 3 episodes, then validation and tests
LOSSES = {name: 6 for name, *_ in PROGRAMS}

# proto_oneshot's test accuracies sit on near ties of its one-shot prototypes: torch itself prints 0.6556 in float32
# and 0.6593 in float64 for its second test (ten passes over 1-shot episodes), so only its training and validation
# accuracies are compared
PRINTED = {"proto_train": r"Avg (?:Train|Val) Acc: .*$|^Test Acc: .*$|^=== Epoch: .*$",
           "proto_oneshot": r"Avg (?:Train|Val) Acc: .*$|^=== Epoch: .*$"}
