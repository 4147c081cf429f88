"""The `heldout49` set of bench/real_world.py (`--set heldout49`): dragen1860/MAML-Pytorch (model-agnostic
meta-learning: a network run functionally from a list of parameters, inner steps by torch.autograd.grad whose
query loss is differentiated through them) and clovaai/CutMix-PyTorch (train.py run whole on CIFAR-10 with
PyramidNet and ResNet, the CutMix boxes and the mixed loss), converted as a new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout49 [--only maml_mlp,cm_pyramid_cutmix]

- dragen1860/MAML-Pytorch (learner.py and meta.py as they are): a driver of ours builds meta.Meta with an
  argparse Namespace of omniglot_train.py's fields (n_way 3, k_spt 1, k_qry 2, imgsz 14, imgc 1, task_num 2,
  meta_lr 1e-3, update_lr 0.4, update_step 2, update_step_test 3) and a small config, then runs 3 meta-training
  steps `maml(x_spt, y_spt, x_qry, y_qry)` on synthetic N-way K-shot batches of omniglot_train.py's shapes
  (x [task_num, n_way*k, 1, imgsz, imgsz] float32 and y [task_num, n_way*k] int64, numpy arrays drawn by the
  driver with np.random, made tensors by torch.from_numpy): per task Learner.forward over `vars` (F.conv2d,
  F.batch_norm with the running statistics as buffers and bn_training True, F.relu in place, view, F.linear),
  F.cross_entropy, torch.autograd.grad over net.parameters() (the ParameterList), the fast weights by
  `list(map(lambda p: p[1] - self.update_lr * p[0], zip(grad, ...)))`, the query losses and accuracies under
  no_grad and after each inner step (argmax of softmax, `.sum().item()`), the mean query loss differentiated
  through the inner steps (a gradient of a gradient: not first-order) and Adam's step. Then one finetunning call
  per task of a test batch (deepcopy of the Learner, update_step_test inner steps). The accuracies are printed as
  VALUEs (each step's and finetunning's), then the sum of |parameters| and of the BN running statistics.
  - maml_mlp: config flatten, linear [16, 196], relu, linear [3, 16] (no convolution, no BatchNorm).
  - maml_conv: config conv2d [4, 1, 3, 3, 2, 0], relu, bn [4], conv2d [4, 4, 3, 3, 2, 0], relu, bn [4],
    flatten, linear [3, 16] (omniglot_train.py's config, narrower and shallower).
- clovaai/CutMix-PyTorch (train.py, pyramidnet.py, resnet.py, utils.py): train.py run whole on a synthetic
  CIFAR-10 in torchvision's on-disk format (16 training and 8 test images under x/data, train.py's `../data`),
  `--dataset cifar10 -j 0 --batch_size 8 --epochs 2 --lr 0.1 --beta 1.0`: the loaders (shuffled, also the
  validation one), the net in torch.nn.DataParallel, CrossEntropyLoss, SGD (momentum, nesterov, weight decay),
  adjust_learning_rate per epoch, train() (np.random.rand(1) against cutmix_prob, np.random.beta,
  torch.randperm, rand_bbox's np.random.randint and np.clip, the box pasted in place
  `input[:, :, bbx1:bbx2, bby1:bby2] = input[rand_index, ...]`, the loss mixed by the box's area, accuracy()
  by topk, the log lines), validate() and save_checkpoint (torch.save, shutil.copyfile of the best). Before
  converting, both sides get two spellings written as their successors (nothing else changed): rand_bbox's
  `np.int(` as `int(` (numpy 1.24 removed np.int) and accuracy()'s `correct[:k].view(-1)` as
  `.reshape(-1)` (a view of the transposed top-k is a RuntimeError since torch 1.x). The torch side's
  `.cuda()` calls and pyramidnet.py's `torch.cuda.FloatTensor(` are made `.cpu()` and `torch.FloatTensor(`
  (no GPU here; the converted side's are the converter's).
  - cm_pyramid_cutmix: `--net_type pyramidnet --depth 11 --alpha 12 --cutmix_prob 1` (bottleneck blocks, one
    per stage; the zero-padded shortcut with AvgPool2d).
  - cm_pyramid_plain: the same with `--cutmix_prob 0` (the plain loss only).
  - cm_resnet_cutmix: `--net_type resnet --depth 8 --no-bottleneck --cutmix_prob 1` (basic blocks).
  PRINTED: the "* Epoch" and "Current best accuracy" lines.

torchvision does not import next to this CPU torch: the torch side gets heldout39's CIFAR10 and transforms
stand-ins and an empty models module (train.py lists torchvision.models' names); the converted side's torchvision
is the converter's own.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

import re
from pathlib import Path

from bench._rw_heldout39 import _TV_DATASETS, _TV_TRANSFORMS

MAML = "dragen1860+MAML-Pytorch@98a00d41724c133bd29619a2fb2cc46dd128a368"
CUTMIX = "clovaai+CutMix-PyTorch@2d8eb68faff7fe4962776ad51d175c3b01a25734"

_MAML_DRIVER = '''
"""A driver written by bench/_rw_heldout49.py: meta.Meta trained for a few meta-steps on synthetic N-way K-shot
batches, then finetunning on a test batch (argv[1]: the config)."""
import argparse
import sys

import numpy as np
import torch

from meta import Meta

CONFIGS = {
    "mlp": [("flatten", []), ("linear", [16, 196]), ("relu", [True]), ("linear", [3, 16])],
    "conv": [("conv2d", [4, 1, 3, 3, 2, 0]), ("relu", [True]), ("bn", [4]),
             ("conv2d", [4, 4, 3, 3, 2, 0]), ("relu", [True]), ("bn", [4]),
             ("flatten", []), ("linear", [3, 16])],
}
args = argparse.Namespace(n_way=3, k_spt=1, k_qry=2, imgsz=14, imgc=1, task_num=2, meta_lr=1e-3,
                          update_lr=0.4, update_step=2, update_step_test=3)
torch.manual_seed(222)
np.random.seed(222)
maml = Meta(args, CONFIGS[sys.argv[1]])


def batch():
    """task_num tasks of n_way classes: k_spt support and k_qry query images per class"""
    def part(k):
        x = np.random.rand(args.task_num, args.n_way * k, args.imgc, args.imgsz, args.imgsz).astype(np.float32)
        y = np.tile(np.repeat(np.arange(args.n_way), k), (args.task_num, 1)).astype(np.int64)
        for t in range(args.task_num):
            for c in range(args.n_way):    # each class its own brightness, so that it can be learned
                x[t, y[t] == c] += 0.5 * c
        return x, y
    x_spt, y_spt = part(args.k_spt)
    x_qry, y_qry = part(args.k_qry)
    return [torch.from_numpy(a) for a in (x_spt, y_spt, x_qry, y_qry)]


for step in range(3):
    x_spt, y_spt, x_qry, y_qry = batch()
    accs = maml(x_spt, y_spt, x_qry, y_qry)
    for k, acc in enumerate(accs):
        print("VALUE", "step%d_acc%d" % (step, k), float(acc))

x_spt, y_spt, x_qry, y_qry = batch()
for t, (xs, ys, xq, yq) in enumerate(zip(x_spt, y_spt, x_qry, y_qry)):
    accs = maml.finetunning(xs, ys, xq, yq)
    for k, acc in enumerate(accs):
        print("VALUE", "finetune%d_acc%d" % (t, k), float(acc))

print("VALUE", "params_abs", float(sum(p.detach().abs().sum() for p in maml.net.parameters())))
print("VALUE", "bn_stats_abs", float(sum(v.abs().sum() for v in maml.net.vars_bn)))
'''


def _cifar(root):
    """Both sides: a synthetic CIFAR-10 where train.py reads it (`../data` from x/prog)."""
    from bench.data_speed import write_cifar10
    write_cifar10(Path(root).parent / "x" / "data", n_train=16, n_test=8, seed=49)


def _successors(proj):
    """Both sides, before converting: numpy 1.24 removed `np.int` (rand_bbox's `np.int(W * cut_rat)`), and since
    torch 1.x accuracy()'s `correct[:k].view(-1)` of a transposed tensor is a RuntimeError (not contiguous)."""
    train = Path(proj) / "train.py"
    train.write_text(train.read_text().replace("np.int(", "int(").replace("correct[:k].view(-1)",
                                                                             "correct[:k].reshape(-1)"))


def _cpu(proj):
    """The torch side only: no GPU here (train.py calls `.cuda()` whatever is available, pyramidnet.py's
    shortcut pads with `torch.cuda.FloatTensor(...)`)."""
    train = Path(proj) / "train.py"
    train.write_text(re.sub(r"\.cuda\(\)", ".cpu()", train.read_text()))
    pyramid = Path(proj) / "pyramidnet.py"
    pyramid.write_text(pyramid.read_text().replace("torch.cuda.FloatTensor(", "torch.FloatTensor("))


_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout49.py."""\nfrom . import datasets, '
                               'models, transforms\n',
    "torchvision/datasets.py": _TV_DATASETS,
    "torchvision/transforms.py": _TV_TRANSFORMS,
    "torchvision/models.py": '"""A stand-in written by bench/_rw_heldout49.py: train.py lists its names."""\n',
}

_CM_FILES = "train.py,pyramidnet.py,resnet.py,utils.py"
_CM_COMMON = ["--dataset", "cifar10", "-j", "0", "--batch_size", "8", "--epochs", "2", "--lr", "0.1",
              "--beta", "1.0"]

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("maml_mlp", MAML, "learner.py,meta.py", "driver.py", ["mlp"], None),
    ("maml_conv", MAML, "learner.py,meta.py", "driver.py", ["conv"], None),
    ("cm_pyramid_cutmix", CUTMIX, _CM_FILES, "train.py",
     _CM_COMMON + ["--net_type", "pyramidnet", "--depth", "11", "--alpha", "12", "--cutmix_prob", "1",
                   "--expname", "pc"], _cifar),
    ("cm_pyramid_plain", CUTMIX, _CM_FILES, "train.py",
     _CM_COMMON + ["--net_type", "pyramidnet", "--depth", "11", "--alpha", "12", "--cutmix_prob", "0",
                   "--expname", "pp"], _cifar),
    ("cm_resnet_cutmix", CUTMIX, _CM_FILES, "train.py",
     _CM_COMMON + ["--net_type", "resnet", "--depth", "8", "--no-bottleneck", "--cutmix_prob", "1",
                   "--expname", "rc"], _cifar),
]

DEPS: dict = {}

DRIVERS = {"maml_mlp": _MAML_DRIVER, "maml_conv": _MAML_DRIVER}

FILES = {name: {".successors": _successors} for name, *_ in PROGRAMS if name.startswith("cm_")}

TORCH_FILES = {name: {**_TORCHVISION, ".cuda": _cpu} for name, *_ in PROGRAMS if name.startswith("cm_")}

# MAML: 3 meta-steps; CutMix: 2 epochs of 2 steps
LOSSES = {"maml_mlp": 3, "maml_conv": 3, "cm_pyramid_cutmix": 4, "cm_pyramid_plain": 4, "cm_resnet_cutmix": 4}

PRINTED = {name: r"^\* Epoch: .*$|^Current best accuracy.*$" for name, *_ in PROGRAMS if name.startswith("cm_")}
