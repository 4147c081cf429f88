"""The `heldout52` set of bench/real_world.py (`--set heldout52`): akamaster/pytorch_resnet_cifar10 (the CIFAR
ResNets of He et al. with option-A shortcuts, trainer.py run whole, and its --resume/--evaluate path on a bundled
pretrained checkpoint) and caogang/wgan-gp (WGAN-GP on toy 2-D distributions and on MNIST: three backward() calls
per critic step, `backward(mone)`, the gradient penalty through `autograd.grad(create_graph=True)`), converted as a
new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout52 [--only resnet20,wgan_toy_8gaussians]

- akamaster/pytorch_resnet_cifar10 (trainer.py, resnet.py, pretrained_models/ as they are): a synthetic CIFAR-10
  in torchvision's on-disk format (python-pickle batches, 16 training and 8 test images) under ./data, where
  trainer.py's `datasets.CIFAR10(root='./data', download=True)` reads it. trainer.py run whole with `--epochs 2
  -b 8 -j 0 --print-freq 1 --save-dir save`: model_names from resnet.__dict__, DataParallel around the ResNet
  (kaiming_normal_ through `self.apply`, LambdaLayer's option-A shortcut `F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0,
  planes//4, planes//4))`, `out += self.shortcut(x)`, avg_pool2d by the feature map's size), the loaders
  (RandomHorizontalFlip, RandomCrop(32, 4), ToTensor, Normalize; the validation loader in batches of 128),
  CrossEntropyLoss, SGD (momentum, weight decay), MultiStepLR with `last_epoch=start_epoch - 1`, train() (the
  AverageMeters, accuracy() by topk and `correct_k.mul_`), validate() under no_grad, save_checkpoint (torch.save of
  the state dict every epoch). 4 losses; PRINTED: the " * Prec@1" and "current lr" lines.
  - resnet20, resnet32: `-a resnet20`, `-a resnet32 --lr 0.02` (at trainer.py's 0.1 resnet32's kaiming-initialized
    32 layers start at a loss of 7.5 on random labels and the fourth loss is rounding amplified: torch's own
    float32 runs, oneDNN's and its native kernels', differ by 4.1e-2 there).
  - resnet20_half: `-a resnet20 --half` (`model.half()`, `criterion.half()`, `input_var.half()`; torch runs
    float16 convolutions on this CPU).
  - resnet20_evaluate, resnet32_evaluate: a driver of ours loads the architecture's bundled checkpoint
    (pretrained_models/resnet20-12fca82f.th, resnet32-d509ac18.th: legacy-format torch pickles of CUDA tensors,
    `module.`-prefixed names) with `torch.load(map_location="cpu")`, prints its best_prec1 and the sum of its
    weights (VALUEs) and saves it with `epoch` added under --resume (trainer.py reads `checkpoint['epoch']`, which
    the bundled checkpoints lack: a KeyError in torch itself); then trainer.main() with `--resume resume.th
    --evaluate`: torch.load, load_state_dict into the DataParallel model, the "=> loaded checkpoint" line,
    validate() in eval mode, given a criterion of ours that prints each validation batch's loss and logits' sum
    as VALUEs.
  The torch side only, after the conversion: `.cuda()` made `.cpu()` (DataParallel's and the criterion's,
  unconditional; no GPU here) and trainer.py's `torch.load(args.resume)` given `map_location='cpu'` (the bundled
  checkpoints hold CUDA tensors, which CPU torch refuses to load as they are).
- caogang/wgan-gp (gan_toy.py or gan_mnist.py, with tflib/): the programs are Python 2. Before converting, both
  sides get the smallest modernization that lets Python 3 run them: print statements as calls, xrange as range,
  `gen.next()` as `next(gen)`, cPickle as pickle, `/` of integers meant as floor division (dataset sizes and batch
  counts) as `//`, `one = torch.FloatTensor([1])` (the gradient given to backward() of a 0-d mean, a shape
  mismatch since torch 0.4) as `torch.tensor(1, dtype=torch.float)`, dict views passed to NumPy as lists (tflib/plot.py's flush), and scipy.misc.imsave (removed in
  SciPy 1.2) as imageio's imwrite, its successor (save_images is not reached here). The settings are module
  constants, no command line: ITERS (100000 or 200000) set to 2 and, for gan_toy.py, DATASET to the program's.
  - wgan_toy_8gaussians, wgan_toy_25gaussians, wgan_toy_swissroll: gan_toy.py, MODE wgan-gp, DIM 512, batch
    256, CRITIC_ITERS 5: two generator iterations of five critic steps each (netD.zero_grad, `D_real.backward(mone)`,
    `D_fake.backward(one)` on a generator output detached through `Variable(netG(...).data)`, the gradient
    penalty's `autograd.grad(outputs, inputs, grad_outputs=ones, create_graph=True, retain_graph=True)` and its
    backward, Adam's step), then the generator step with the critic's parameters' requires_grad False
    (`G.backward(mone)`); the data from np.random, random.choice (8gaussians), a shuffled 100000-point grid
    (25gaussians) or sklearn's make_swiss_roll; lib.plot.plot of the costs (no flush before iteration 99).
    `use_cuda = True`: the torch side's `.cuda()` made `.cpu()`.
  - wgan_mnist: gan_mnist.py, DIM 64, batch 50: tflib.mnist.load reads /tmp/mnist.pkl.gz (the gzipped pickle of
    ((train images, labels), (dev ...), (test ...)), 784 floats in [0, 1] per image, as deeplearning.net's
    mnist.pkl.gz; 100 training images here), shuffles it with numpy's state saved and restored; the generator's
    ConvTranspose2d stack and `[:, :, :7, :7]` crop, the strided-conv critic, the same critic/generator steps;
    lib.plot.flush at iterations 0 and 1 (matplotlib plots under tmp/mnist, which the data writer creates, and
    log.pkl). `use_cuda = torch.cuda.is_available()`: False on both sides.
  The losses compared: every backward() on the torch side, grouped per optimizer step where the converted side
  differentiates their sum.

Not installed here, so installed apart: matplotlib and scikit-learn (gan_toy.py and gan_mnist.py import both at
their top; swissroll calls make_swiss_roll), and imageio, given to both sides by the runner's RW_SITE (`pip install
--target DIR --no-deps` of matplotlib, scikit-learn, imageio and their pure dependencies: pyparsing, cycler,
kiwisolver, fonttools, contourpy, python-dateutil, joblib, threadpoolctl, cloudpickle, narwhals). torchvision does
not import next to this CPU torch: the resnet programs' torch side gets heldout39's CIFAR10 and transforms stand-ins
(written after the conversion; the converted side's torchvision is the converter's own).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

import gzip
import pickle
import re
from pathlib import Path

import numpy as np

from bench._rw_heldout39 import _TV_DATASETS, _TV_TRANSFORMS

RESNETS = "akamaster+pytorch_resnet_cifar10@d5489e8995e81e91ce6b1d69dcc98ad579b0b153"
WGAN = "caogang+wgan-gp@ae47a185ed2e938c39cf3eb2f06b32dc1b6a2064"

def _side(root):
    return Path(root).parent.name, Path(root).parent / "x" / "prog"


def _edit(path: Path, patches, regex=False):
    text = path.read_text()
    for old, new in patches:
        if not (re.search(old, text, flags=re.M) if regex else old in text):
            raise RuntimeError(f"{path.name}: {old!r} not found")
        text = re.sub(old, new, text, flags=re.M) if regex else text.replace(old, new)
    path.write_text(text)


# ------------------------------------------------------------------ pytorch_resnet_cifar10
def _cifar(root):
    """Both sides: a synthetic CIFAR-10 under ./data (trainer.py's root, relative to the program's directory)."""
    from bench.data_speed import write_cifar10
    _, prog = _side(root)
    write_cifar10(prog / "data", n_train=16, n_test=8, seed=52)


def _resnet_cpu(proj):
    """The torch side only: no GPU here (`.cuda()` whatever is available) and the bundled checkpoints' CUDA
    tensors loaded to the CPU."""
    _edit(Path(proj) / "trainer.py", [(".cuda()", ".cpu()"),
                                      ("torch.load(args.resume)", "torch.load(args.resume, map_location='cpu')")])


_EVALUATE_DRIVER = '''
"""A driver written by bench/_rw_heldout52.py: the bundled pretrained checkpoint of the architecture loaded (its
figures printed as VALUEs) and saved under --resume with the `epoch` that trainer.py's resume reads and the bundled
checkpoints lack (a KeyError in torch itself); then trainer.main(), its validate() given a criterion that prints
each validation batch's loss and logits' sum as VALUEs."""
import glob

import torch

import trainer

args = trainer.parser.parse_args()
bundled = sorted(glob.glob("pretrained_models/%s-*.th" % args.arch))[0]
checkpoint = torch.load(bundled, map_location="cpu")
print("VALUE best_prec1", float(checkpoint["best_prec1"]))
print("VALUE weights_sum", float(sum(v.float().sum() for v in checkpoint["state_dict"].values())))
checkpoint["epoch"] = 0
torch.save(checkpoint, args.resume)

validate = trainer.validate


def validate_and_report(val_loader, model, criterion):
    batches = []

    def reporting(output, target):
        loss = criterion(output, target)
        print("VALUE val_loss_%d" % len(batches), float(loss))
        print("VALUE val_logits_%d" % len(batches), float(output.float().sum()))
        batches.append(1)
        return loss
    return validate(val_loader, model, reporting)


trainer.validate = validate_and_report
trainer.main()
'''

# ------------------------------------------------------------------ wgan-gp
# Python 2 spellings (both sides, before converting), per file: (pattern, replacement), regular expressions
_PRINT_STATEMENT = (r"^(\s*)print (?!\()(.+)$", r"\1print(\2)")
# `D_real.backward(mone)` of a 0-d mean with a 1-element gradient is a shape mismatch since torch 0.4: the 0-d
# spelling the repository's issues give
_ONE = (r"^one = torch\.FloatTensor\(\[1\]\)$", "one = torch.tensor(1, dtype=torch.float)")
_PY3 = {
    "gan_toy.py": [_PRINT_STATEMENT, _ONE, (r"\bxrange\(", "range("), (r"\bdata\.next\(\)", "next(data)"),
                   (r"100000 / 25", "100000 // 25"), (r"len\(dataset\) / BATCH_SIZE", "len(dataset) // BATCH_SIZE")],
    "gan_mnist.py": [_PRINT_STATEMENT, _ONE, (r"\bxrange\(", "range("), (r"\bdata\.next\(\)", "next(data)")],
    "tflib/__init__.py": [_PRINT_STATEMENT],
    "tflib/plot.py": [_PRINT_STATEMENT, (r"import cPickle as pickle", "import pickle"),
                      (r"np\.mean\(vals\.values\(\)\)", "np.mean(list(vals.values()))"),
                      (r"np\.sort\(_since_beginning\[name\]\.keys\(\)\)",
                       "np.sort(list(_since_beginning[name].keys()))")],
    "tflib/mnist.py": [_PRINT_STATEMENT, (r"import cPickle as pickle", "import pickle"), (r"\bxrange\(", "range(")],
    "tflib/save_images.py": [(r"^import scipy\.misc\nfrom scipy\.misc import imsave$",
                              "from imageio import imwrite as imsave"),
                             (r"n_samples/rows", "n_samples//rows"), (r"j = n/nw", "j = n//nw")],
}


def _wgan_py3(script, settings):
    def successors(proj):
        for rel, patches in _PY3.items():
            if (Path(proj) / rel).exists() and (rel.startswith("tflib") or rel == script):
                _edit(Path(proj) / rel, patches, regex=True)
        _edit(Path(proj) / script, settings, regex=True)
    return successors


def _wgan_cpu(proj):
    """The torch side only: gan_toy.py's `use_cuda = True` calls `.cuda()` whatever is available."""
    _edit(Path(proj) / "gan_toy.py", [(".cuda()", ".cpu()")])


def _mnist_pickle(root):
    """Both sides: /tmp/mnist.pkl.gz (tflib.mnist.load's fixed path) in deeplearning.net's format: a gzipped
    pickle of (train, dev, test), each (float32 images N x 784 in [0, 1], int64 labels N); and tmp/mnist, where
    lib.plot.flush saves its plots."""
    _, prog = _side(root)
    (prog / "tmp" / "mnist").mkdir(parents=True, exist_ok=True)
    rs = np.random.RandomState(52)

    def split(n):
        return rs.rand(n, 784).astype(np.float32), rs.randint(0, 10, n).astype(np.int64)
    with gzip.open("/tmp/mnist.pkl.gz", "wb") as f:
        pickle.dump((split(100), split(50), split(50)), f, protocol=2)


def _toy_dirs(root):
    _, prog = _side(root)
    (prog / "tmp").mkdir(parents=True, exist_ok=True)


_RESNET_FILES = "trainer.py,resnet.py,pretrained_models"
_RESNET_RUN = ["--epochs", "2", "-b", "8", "-j", "0", "--print-freq", "1", "--save-dir", "save"]

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("resnet20", RESNETS, _RESNET_FILES, "trainer.py", ["-a", "resnet20"] + _RESNET_RUN, _cifar),
    ("resnet32", RESNETS, _RESNET_FILES, "trainer.py", ["-a", "resnet32", "--lr", "0.02"] + _RESNET_RUN, _cifar),
    ("resnet20_half", RESNETS, _RESNET_FILES, "trainer.py", ["-a", "resnet20", "--half"] + _RESNET_RUN, _cifar),
    ("resnet20_evaluate", RESNETS, _RESNET_FILES, "driver.py",
     ["-a", "resnet20", "--resume", "resume.th", "--evaluate", "-j", "0", "--print-freq", "1"], _cifar),
    ("resnet32_evaluate", RESNETS, _RESNET_FILES, "driver.py",
     ["-a", "resnet32", "--resume", "resume.th", "--evaluate", "-j", "0", "--print-freq", "1"], _cifar),
    ("wgan_toy_8gaussians", WGAN, "gan_toy.py,tflib", "gan_toy.py", [], _toy_dirs),
    ("wgan_toy_25gaussians", WGAN, "gan_toy.py,tflib", "gan_toy.py", [], _toy_dirs),
    ("wgan_toy_swissroll", WGAN, "gan_toy.py,tflib", "gan_toy.py", [], _toy_dirs),
    ("wgan_mnist", WGAN, "gan_mnist.py,tflib", "gan_mnist.py", [], _mnist_pickle),
]

DEPS: dict = {}

DRIVERS = {"resnet20_evaluate": _EVALUATE_DRIVER, "resnet32_evaluate": _EVALUATE_DRIVER}

_ITERS = (r"^ITERS = \d+", "ITERS = 2")
FILES = {f"wgan_toy_{d}": {".successors": _wgan_py3("gan_toy.py", [_ITERS, (r"^DATASET = '8gaussians'",
                                                                             f"DATASET = '{d}'")])}
         for d in ("8gaussians", "25gaussians", "swissroll")}
FILES["wgan_mnist"] = {".successors": _wgan_py3("gan_mnist.py", [_ITERS])}

_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout52.py."""\nfrom . import datasets, '
                               'transforms\n',
    "torchvision/datasets.py": _TV_DATASETS,
    "torchvision/transforms.py": _TV_TRANSFORMS,
}
TORCH_FILES = {name: {**_TORCHVISION, ".cuda": _resnet_cpu} for name, *_ in PROGRAMS if name.startswith("resnet")}
TORCH_FILES.update({name: {".cuda": _wgan_cpu} for name, *_ in PROGRAMS if name.startswith("wgan_toy")})

# resnet: 2 epochs of 2 batches; wgan: 2 iterations of 5 critic steps (3 backward() each) and a generator step
LOSSES = {name: 4 for name, *_ in PROGRAMS if name.startswith("resnet")}
LOSSES.update({name: 32 for name, *_ in PROGRAMS if name.startswith("wgan")})

PRINTED = {name: r"^ \* Prec@1 .*$|^current lr .*$" for name, *_ in PROGRAMS if name.startswith("resnet")}
