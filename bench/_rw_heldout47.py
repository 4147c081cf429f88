"""The `heldout47` set of bench/real_world.py (`--set heldout47`): timgaripov/swa and HobbitLong/RepDistiller,
converted as a new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout47 [--only swa_vgg16bn,rd_feature]

- timgaripov/swa (train.py, utils.py, models/ converted; CIFAR-10 in torchvision's on-disk format, 16 training and
  8 test images under data/cifar10/cifar-10-batches-py). The repository was written for Python 2 and torch 0.3:
  utils.py's `.cuda(async=True)` is a SyntaxError since Python 3.7 (msmigrate reports the file as not valid
  Python and copies it as it is), `loss.data[0]` an IndexError since torch 0.5 and `train_set.train_labels` an
  AttributeError since torchvision 0.2.2. Before converting, both sides get those three written as their
  successors (`non_blocking=True`, `loss.item()`, `train_set.targets`): nothing else is changed. tabulate is not
  installed: a stand-in module of ours prints each row's numbers as VALUE lines (the elapsed time left out: the
  epoch, lr, train loss and accuracy, test loss and accuracy, the SWA model's test loss and accuracy). torchvision
  is heldout39's stand-in on the torch side (CIFAR10 from the pickles, RandomCrop/RandomHorizontalFlip/ToTensor/
  Normalize); the torch side's `.cuda(...)` calls are made `.cpu()`.
  - swa_vgg16bn: train.py run whole, `--swa --model VGG16BN --epochs 3 --swa_start 2 --batch_size 8 --lr_init
    0.01 --swa_lr 0.005 --eval_freq 1 --save_freq 2 --num_workers 0`: two SGD steps per epoch (momentum, weight
    decay, utils.adjust_learning_rate by schedule()), utils.eval after each epoch, from epoch 2
    utils.moving_average of the parameters into the SWA model and utils.bn_update (the BatchNorm running
    statistics reset by assigning new tensors, the momenta saved through `model.apply`, set to b / (n + b) per
    batch: a cumulative average over the loader, then put back), the SWA model evaluated; checkpoints saved by
    utils.save_checkpoint (torch.save of state dicts and the optimizer's state) at epochs 0, 2 and 3.
  - swa_resume: a driver of ours adds a config class to the imported models package (PreResNet of depth 8,
    the PreResNet110 config's transforms) and runs train.py twice through runpy: `--swa --swa_start 1 --epochs
    2 --save_freq 1`, then `--resume DIR/checkpoint-2.pt --epochs 3` (the model, optimizer, SWA model and swa_n
    loaded from the checkpoint the first run wrote). VALUEs: the rows, then the sums of the last checkpoint's
    float entries (model and SWA model) and its swa_n.
- HobbitLong/RepDistiller (models/, distiller_zoo/, crd/, helper/ converted with a driver of ours beside them):
  the driver builds, for each `--distill` choice, a teacher (resnet20) and a student (resnet8) from
  models.model_dict with 100 classes (their BatchNorm statistics set from the training images by one pass at
  momentum 1, as a trained teacher's are: a random network's eval features grow to thousands), the criterion modules as train_student.py's main() builds them (ConvReg,
  LinearEmbed, VIDLoss per feature, Connector, Paraphraser/Translator, FSP, CRDLoss), an opt Namespace of ours,
  SGD over the trainable list (lr 0.01, momentum 0.9, weight decay 5e-4) and runs helper/loops.py's
  train_distill for one epoch over 8 images of 32x32 (a TensorDataset of ours yielding image, label, index, and
  for crd the contrast indices; batch 4, shuffled: two steps), then validate on 4 images. Before training, the
  value of each loss on fixed features (the models' is_feat outputs on fixed inputs) is printed as a VALUE.
  tensorboard_logger is not needed (train_student.py's main() is not run: it needs a trained teacher's
  checkpoint and torchvision's CIFAR100).
  - rd_logit: kd, hint, attention, similarity, nst, rkd, pkt.
  - rd_feature: correlation, vid, kdsvd.
  - rd_crd: crd (CRDLoss: Embed, ContrastMemory with 8 negatives, its momentum update of the memory bank by
    index_copy_, ContrastLoss), in `exact` mode. The torch side's AliasMethod.cuda() (called by ContrastMemory
    whatever is available) moves its tables with `.cpu()` (no GPU here; the converted side's are the
    converter's).
  - rd_init: abound, factor and fsp: helper/pretrain.py's init() (one epoch of its own SGD on the connector,
    paraphraser or the student's feature modules, a logger of ours that keeps the values) and then
    train_distill.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

import re
from pathlib import Path

from bench._rw_heldout39 import _TV_DATASETS, _TV_TRANSFORMS

SWA = "timgaripov+swa@411b2fcad59bec60c6c9eb1eb19ab906540e5ea2"
RD = "HobbitLong+RepDistiller@b84f547c5db6a35318d4671d7d5c4de74c822403"


def _cifar(root):
    """Both sides: a synthetic CIFAR-10 where train.py reads it (--data_path data, then data/cifar10)."""
    from bench.data_speed import write_cifar10
    prog = Path(root).parent / "x" / "prog"
    write_cifar10(prog / "data" / "cifar10", n_train=16, n_test=8, seed=47)


def _python3(proj):
    """Both sides, before converting: the three Python 2 / torch 0.3 spellings written as their successors."""
    proj = Path(proj)
    utils = proj / "utils.py"
    utils.write_text(utils.read_text().replace("async=True", "non_blocking=True")
                     .replace("loss.data[0]", "loss.item()"))
    train = proj / "train.py"
    train.write_text(train.read_text().replace("train_set.train_labels", "train_set.targets"))


def _cpu(proj):
    """The torch side only: no GPU here (train.py and utils.py call `.cuda()` whatever is available)."""
    for name in ("train.py", "utils.py"):
        path = Path(proj) / name
        path.write_text(re.sub(r"\.cuda\([^()]*\)", ".cpu()", path.read_text()))


def _rd_cpu(proj):
    """The torch side only: crd/memory.py's AliasMethod.cuda() moves its tables with `.cuda()` whatever is
    available (ContrastMemory calls it at construction); made `.cpu()` (the converted side's are the converter's)."""
    path = Path(proj) / "crd" / "memory.py"
    text = path.read_text()
    for table in ("prob", "alias"):
        text = text.replace(f"self.{table}.cuda()", f"self.{table}.cpu()")
    path.write_text(text)


_TABULATE = '''
"""A stand-in written by bench/_rw_heldout47.py: tabulate is not installed. Each row's numbers are printed as
VALUE lines (the elapsed time left out); the table comes back as three plain lines."""


def tabulate(rows, headers=(), tablefmt="simple", floatfmt="g"):
    lines = ["  ".join(str(h) for h in headers), "--"]
    for row in rows:
        for head, cell in zip(headers, row):
            if head not in ("ep", "time") and cell is not None:
                print("VALUE", "%s_%s" % (head, row[0]), float(cell))
        lines.append("  ".join(str(cell) for cell in row))
    return "\\n".join(lines)
'''

_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout47.py."""\nfrom . import datasets, '
                               'transforms\n',
    "torchvision/datasets.py": _TV_DATASETS,
    "torchvision/transforms.py": _TV_TRANSFORMS,
}

_SWA_RESUME = '''
import runpy
import sys

import torch

import models


class PreResNetSmall:
    """our config: the repository's PreResNet at depth 8, with its CIFAR transforms"""
    base = models.preresnet.PreResNet
    args = list()
    kwargs = {"depth": 8}
    transform_train = models.PreResNet110.transform_train
    transform_test = models.PreResNet110.transform_test


models.PreResNetSmall = PreResNetSmall
common = ["--dir", "ckpt", "--data_path", "data", "--model", "PreResNetSmall", "--batch_size", "8",
          "--num_workers", "0", "--lr_init", "0.02", "--swa", "--swa_start", "1", "--swa_lr", "0.01",
          "--eval_freq", "1", "--save_freq", "1"]
sys.argv = ["train.py"] + common + ["--epochs", "2"]
runpy.run_path("train.py", run_name="__main__")
sys.argv = ["train.py"] + common + ["--epochs", "3", "--resume", "ckpt/checkpoint-2.pt"]
runpy.run_path("train.py", run_name="__main__")

saved = torch.load("ckpt/checkpoint-3.pt")
for key in ("state_dict", "swa_state_dict"):
    floats = [v for k, v in saved[key].items() if "num_batches" not in k]
    print("VALUE", key + "_sum", float(sum(float(v.float().sum()) for v in floats)))
    print("VALUE", key + "_abs", float(sum(float(v.float().abs().sum()) for v in floats)))
print("VALUE", "swa_n", saved["swa_n"])
print("VALUE", "epoch", saved["epoch"])
'''

_RD_COMMON = '''
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

from models import model_dict
from models.util import Connector, ConvReg, LinearEmbed, Paraphraser, Translator
from distiller_zoo import (ABLoss, Attention, Correlation, DistillKL, FactorTransfer, FSP, HintLoss, KDSVD,
                           NSTLoss, PKT, RKDLoss, Similarity, VIDLoss)
from crd.criterion import CRDLoss as ContrastiveLoss
from helper.loops import validate, train_distill
from helper.pretrain import init as init_stage

torch.manual_seed(0)
pictures = torch.randn(8, 3, 32, 32)
labels = torch.tensor([3, 17, 42, 99, 0, 5, 64, 21])
spots = torch.arange(8)
picker = np.random.RandomState(7)
contrast = torch.from_numpy(np.stack([np.concatenate([[i], picker.choice([j for j in range(8) if j != i], 8)])
                                      for i in range(8)])).long()
probe = torch.randn(4, 3, 32, 32)


class Logbook:
    """what train_student.py's tensorboard logger is given, kept"""
    def __init__(self):
        self.rows = []

    def log_value(self, name, value, step):
        self.rows.append((name, float(value), step))


def settings(choice):
    return argparse.Namespace(distill=choice, gamma=1.0, alpha=0.5, beta=0.8, kd_T=4.0, hint_layer=2,
                              feat_dim=16, nce_k=8, nce_t=0.07, nce_m=0.5, mode="exact", n_data=8,
                              print_freq=1, init_epochs=1, learning_rate=0.01, momentum=0.9,
                              weight_decay=5e-4, model_s="resnet8", model_t="resnet20")


def show(name, value):
    if isinstance(value, (list, tuple)):
        value = sum(value)
    print("VALUE", name, float(value))


def calibrated(net):
    """BatchNorm statistics of the data, as a trained network has them (a random one's, 0 and 1, make its eval
    features grow to thousands): one pass in train mode at momentum 1, then momentum 0.1 again"""
    for part in net.modules():
        if isinstance(part, nn.BatchNorm2d):
            part.momentum = 1.0
    net.train()
    with torch.no_grad():
        net(pictures)
    for part in net.modules():
        if isinstance(part, nn.BatchNorm2d):
            part.momentum = 0.1
    return net


def run(choice):
    opt = settings(choice)
    teacher = calibrated(model_dict[opt.model_t](num_classes=100))
    student = calibrated(model_dict[opt.model_s](num_classes=100))
    teacher.eval()
    student.eval()
    feat_t, _ = teacher(probe, is_feat=True)
    feat_s, _ = student(probe, is_feat=True)
    modules = nn.ModuleList([student])
    trainable = nn.ModuleList([student])
    with_index = choice == "crd"
    rows = TensorDataset(pictures, labels, spots, contrast) if with_index else TensorDataset(pictures, labels, spots)
    loader = DataLoader(rows, batch_size=4, shuffle=True)
    held = DataLoader(TensorDataset(probe, labels[:4]), batch_size=4)
    if choice == "kd":
        kd = DistillKL(opt.kd_T)
        show("kd_fixed", kd(feat_s[-1][:, :16], feat_t[-1][:, :16]))
    elif choice == "hint":
        kd = HintLoss()
        reg = ConvReg(feat_s[opt.hint_layer].shape, feat_t[opt.hint_layer].shape)
        modules.append(reg)
        trainable.append(reg)
        show("hint_fixed", kd(reg(feat_s[opt.hint_layer]), feat_t[opt.hint_layer]))
    elif choice == "crd":
        opt.s_dim, opt.t_dim = feat_s[-1].shape[1], feat_t[-1].shape[1]
        kd = ContrastiveLoss(opt)
        modules.append(kd.embed_s)
        modules.append(kd.embed_t)
        trainable.append(kd.embed_s)
        trainable.append(kd.embed_t)
    elif choice == "attention":
        kd = Attention()
        show("attention_fixed", kd(feat_s[1:-1], feat_t[1:-1]))
    elif choice == "nst":
        kd = NSTLoss()
        show("nst_fixed", kd(feat_s[1:-1], feat_t[1:-1]))
    elif choice == "similarity":
        kd = Similarity()
        show("similarity_fixed", kd([feat_s[-2]], [feat_t[-2]]))
    elif choice == "rkd":
        kd = RKDLoss()
        show("rkd_fixed", kd(feat_s[-1], feat_t[-1]))
    elif choice == "pkt":
        kd = PKT()
        show("pkt_fixed", kd(feat_s[-1], feat_t[-1]))
    elif choice == "kdsvd":
        kd = KDSVD()
        show("kdsvd_fixed", kd(feat_s[1:-1], feat_t[1:-1]))
    elif choice == "correlation":
        kd = Correlation()
        to_s, to_t = (LinearEmbed(f[-1].shape[1], opt.feat_dim) for f in (feat_s, feat_t))
        for part in (to_s, to_t):
            modules.append(part)
            trainable.append(part)
        show("correlation_fixed", kd(to_s(feat_s[-1]), to_t(feat_t[-1])))
    elif choice == "vid":
        kd = nn.ModuleList([VIDLoss(s.shape[1], t.shape[1], t.shape[1]) for s, t in zip(feat_s[1:-1], feat_t[1:-1])])
        trainable.append(kd)
        show("vid_fixed", [part(s, t) for s, t, part in zip(feat_s[1:-1], feat_t[1:-1], kd)])
    elif choice == "abound":
        connector = Connector([f.shape for f in feat_s[1:-1]], [f.shape for f in feat_t[1:-1]])
        first = nn.ModuleList([connector, student.get_feat_modules()])
        kd = ABLoss(len(feat_s[1:-1]))
        show("abound_fixed", kd(connector(feat_s[1:-1]), feat_t[1:-1]))
        init_stage(student, teacher, first, kd, loader, Logbook(), opt)
        modules.append(connector)
    elif choice == "factor":
        paraphraser = Paraphraser(feat_t[-2].shape)
        translator = Translator(feat_s[-2].shape, feat_t[-2].shape)
        first = nn.ModuleList([paraphraser])
        init_stage(student, teacher, first, nn.MSELoss(), loader, Logbook(), opt)
        kd = FactorTransfer()
        modules.append(translator)
        modules.append(paraphraser)
        trainable.append(translator)
        show("factor_fixed", kd(translator(feat_s[-2]), paraphraser(feat_t[-2], is_factor=True)))
    elif choice == "fsp":
        kd = FSP([s.shape for s in feat_s[:-1]], [t.shape for t in feat_t[:-1]])
        show("fsp_fixed", kd(feat_s[:-1], feat_t[:-1]))
        first = nn.ModuleList([student.get_feat_modules()])
        init_stage(student, teacher, first, kd, loader, Logbook(), opt)
    losses = nn.ModuleList([nn.CrossEntropyLoss(), DistillKL(opt.kd_T), kd])
    sgd = optim.SGD(trainable.parameters(), lr=opt.learning_rate, momentum=opt.momentum,
                    weight_decay=opt.weight_decay)
    modules.append(teacher)
    acc, loss = train_distill(1, loader, modules, losses, sgd, opt)
    show(choice + "_train_acc", acc)
    show(choice + "_train_loss", loss)
    top1, top5, held_loss = validate(held, student, nn.CrossEntropyLoss(), opt)
    show(choice + "_val_top1", top1)
    show(choice + "_val_loss", held_loss)
    print("DISTILL", choice, "ok")

'''


def _rd_driver(choices):
    return _RD_COMMON + "\nfor choice in %r:\n    run(choice)\n" % (choices,)


RD_PARTS = "models,distiller_zoo,crd,helper"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("swa_vgg16bn", SWA, "train.py,utils.py,models", "train.py",
     ["--dir", "ckpt", "--data_path", "data", "--model", "VGG16BN", "--swa", "--epochs", "3", "--swa_start", "2",
      "--batch_size", "8", "--lr_init", "0.01", "--swa_lr", "0.005", "--eval_freq", "1", "--save_freq", "2",
      "--num_workers", "0"], _cifar),
    ("swa_resume", SWA, "train.py,utils.py,models", "driver.py", [], _cifar),
    ("rd_logit", RD, RD_PARTS, "driver.py", [], None),
    ("rd_feature", RD, RD_PARTS, "driver.py", [], None),
    ("rd_crd", RD, RD_PARTS, "driver.py", [], None),
    ("rd_init", RD, RD_PARTS, "driver.py", [], None),
]

DEPS: dict = {}

DRIVERS = {
    "swa_resume": _SWA_RESUME,
    "rd_logit": _rd_driver(["kd", "hint", "attention", "similarity", "nst", "rkd", "pkt"]),
    "rd_feature": _rd_driver(["correlation", "vid", "kdsvd"]),
    "rd_crd": _rd_driver(["crd"]),
    "rd_init": _rd_driver(["abound", "factor", "fsp"]),
}

_SWA_FILES = {".python3": _python3, "tabulate.py": _TABULATE}
FILES = {"swa_vgg16bn": _SWA_FILES, "swa_resume": _SWA_FILES}

TORCH_FILES = {"swa_vgg16bn": {**_TORCHVISION, ".cuda": _cpu}, "swa_resume": {**_TORCHVISION, ".cuda": _cpu},
               "rd_crd": {".cuda": _rd_cpu}}

# swa_vgg16bn: 3 epochs of 2 steps; swa_resume: 2 + 1 epochs of 2 steps; rd_*: 2 steps per choice (and init's 2)
LOSSES = {"swa_vgg16bn": 6, "swa_resume": 6, "rd_logit": 14, "rd_feature": 6, "rd_crd": 2, "rd_init": 12}

PRINTED = {name: r"^DISTILL .*$" for name in ("rd_logit", "rd_feature", "rd_crd", "rd_init")}
