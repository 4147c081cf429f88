"""The `heldout69` set of bench/real_world.py (`--set heldout69`): image restoration and domain generalisation:
megvii-research/NAFNet (basicsr's ImageRestorationModel built by create_model from an options dict as
basicsr/train.py builds it, with the NAFNet and Baseline archs, PSNRLoss / L1Loss, AdamW and its schedulers, trained
on a paired image folder read by basicsr's PairedImageDataset), swz30/Restormer (its ImageCleanModel with the
Restormer arch, L1Loss, CosineAnnealingRestartCyclicLR, the EMA copy of net_g, and train.py's progressive patch
sizes) and facebookresearch/DomainBed (algorithms.IRM, CORAL, GroupDRO and Mixup over MNIST_CNN with
hparams_registry's defaults, trained as domainbed/scripts/train.py trains them through InfiniteDataLoader and
evaluated with misc.accuracy over FastDataLoader), converted as a new user would convert them, through drivers of
ours calling their documented entry points.

    python bench/real_world.py --mirrors /work/.mirror --set heldout69 [--only nafnet_sidd,domainbed_irm]

(sanghyun-son/EDSR-PyTorch, first meant for this set, cannot be fetched: its snapshot is 2 GB.)

Extra packages: basicsr reads images with OpenCV (`pip install "opencv-python-headless<4.11"`, which setup.sh's
MSMIGRATE_BENCH_DEPS=1 installs) and Restormer's arch imports einops (installed by the test set-up). torchvision,
which basicsr's modules and DomainBed's networks.py import at module level (make_grid, normalize, resize,
torchvision.models) and nothing here calls, is a stand-in of ours on the torch side (the venv's torchvision does
not import beside this torch); DomainBed's networks.py imports timm (not installed; only its ViT and DINOv2
featurizers use it): a stand-in of ours on both sides. lmdb and skimage (basicsr's lmdb backend and SSIM metric, not
used) are stand-ins of ours on both sides.

- NAFNet (basicsr/ as it is): six 32 x 32 PNG pairs under datasets/train/{input,target} (a smooth image and a noisy
  copy, the SIDD layout of the repository's options), basicsr.data.create_dataset with PairedImageDataset (folder
  mode, io_backend disk: FileClient, imfrombytes, padding, paired_random_crop to gt_size 16, augment's flips and
  rotations drawn from Python's random, img2tensor), a DataLoader as create_dataloader builds it for training
  (shuffle, drop_last, batch 2; its persistent_workers needs workers, so none here and no persistent_workers),
  basicsr.models.create_model(opt) with an options dict as options.parse leaves it (model_type
  ImageRestorationModel, num_gpu 0), and train.py's loop (update_learning_rate, feed_data, optimize_parameters:
  the `0. * sum(p.sum() ...)` term, clip_grad_norm_(0.01), AdamW), then model.test() (max_minibatch) on a val batch
  and get_current_visuals.
  - nafnet_sidd: NAFNet(width 8, enc_blk_nums [1, 1], middle 1, dec [1, 1]) (SimpleGate, simplified channel
    attention, LayerNorm2d's custom autograd Function, beta/gamma residual scales), PSNRLoss, AdamW (1e-3, wd 1e-3,
    betas 0.9/0.9), TrueCosineAnnealingLR (T_max 8, eta_min 1e-7).
  - nafnet_baseline: Baseline(width 8, dw_expand 1, ffn_expand 2) (GELU, channel attention with Sigmoid), L1Loss,
    AdamW (lr 1e-3, wd 0), CosineAnnealingRestartLR (periods [4, 4], restart weights [1, 0.5]).
- Restormer (basicsr/ as it is): the same PNG folder and PairedImageDataset; model_type ImageCleanModel, the
  Restormer arch (dim 8, num_blocks [1, 1, 1, 1], one refinement block, heads [1, 1, 2, 2], ffn 2.66, bias False:
  MDTA's transposed attention through einops.rearrange, GDFN, PixelUnshuffle/PixelShuffle), L1Loss, AdamW (3e-4,
  wd 1e-4), CosineAnnealingRestartCyclicLR, use_grad_clip, and Restormer's train.py progressive learning written out
  as it is (groups of iterations, `((current_iter>groups) !=True).nonzero()[0]`, random.sample of the batch and
  random.random crops), feed_train_data, optimize_parameters(current_iter), then test() (net_g_ema where it has one).
  - restormer_derain: LayerNorm WithBias, mixing_augs mixup false, gt sizes [16, 8] (random crops of 8 after the third iteration).
  - restormer_ema: LayerNorm BiasFree, ema_decay 0.999 (net_g_ema copied at init, model_ema after each step),
    mini batch sizes [2, 1].
- DomainBed (domainbed/ as it is): three environments of 24 RGB 28 x 28 images with 2 classes (Debug28's shape;
  datasets.py imports torchvision's datasets and wilds at module level, so the driver makes the environments
  as Debug28 does, TensorDatasets, from NumPy), env 2 held out, hparams_registry.default_hparams(alg, 'Debug28')
  with batch_size 8, algorithms.get_algorithm_class(alg)(input_shape, 2, 2, hparams), InfiniteDataLoader per
  training environment (RandomSampler with replacement in a BatchSampler in an _InfiniteSampler), train.py's
  `zip(*train_loaders)` loop and misc.accuracy over FastDataLoader for every environment.
  - domainbed_irm: IRM (autograd.grad of each half-batch loss wrt a scale with create_graph, the penalty's own
    gradient), irm_penalty_anneal_iters 2 (Adam made anew at the third update, the penalty weight 100 after).
  - domainbed_coral: CORAL (mean and covariance differences of the features of each pair of environments).
  - domainbed_groupdro: GroupDRO (the q buffer set at the first update, `self.q[m] *= (eta * losses[m].data).exp()`,
    losses written per environment into a zeros tensor, torch.dot).
  - domainbed_mixup: Mixup (random_pairs_of_minibatches' torch.randperm, np.random.beta's lambda).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

NAFNET = "megvii-research+NAFNet@2b4af71ebe098a92a75910c233a3965a3e93ede4"
RESTORMER = "swz30+Restormer@df766d5521afd21cce56e24159f300b30ebf3fb0"
DOMAINBED = "facebookresearch+DomainBed@b93c22a1cfc3b2428398272c1a116c8de1f4139e"

_IMAGES = '''
import os

import numpy as np
from PIL import Image

# a paired image folder (the SIDD layout: input/ the noisy images, target/ the clean ones, the same file names)
rng = np.random.RandomState(11)
for split, count in (("train", 6), ("val", 2)):
    for sub in ("input", "target"):
        os.makedirs(os.path.join("datasets", split, sub), exist_ok=True)
    for i in range(count):
        base = rng.rand(4, 4, 3)
        gt = np.kron(base, np.ones((8, 8, 1))) * 200 + 20
        lq = np.clip(gt + rng.randn(32, 32, 3) * 20, 0, 255)
        Image.fromarray(gt.astype(np.uint8)).save(os.path.join("datasets", split, "target", "%03d.png" % i))
        Image.fromarray(lq.astype(np.uint8)).save(os.path.join("datasets", split, "input", "%03d.png" % i))
'''

_NAFNET_DRIVER = _IMAGES + '''
import torch

from basicsr.data import create_dataset
from basicsr.models import create_model

torch.manual_seed(0)
dataset_opt = {{
    "name": "SIDD-syn", "type": "PairedImageDataset", "phase": "train", "scale": 1,
    "dataroot_gt": "datasets/train/target", "dataroot_lq": "datasets/train/input", "filename_tmpl": "{{}}",
    "io_backend": {{"type": "disk"}}, "gt_size": 16, "use_flip": True, "use_rot": True,
    "num_worker_per_gpu": 0, "batch_size_per_gpu": 2, "dataset_enlarge_ratio": 1,
}}
val_opt = {{
    "name": "SIDD-val", "type": "PairedImageDataset", "phase": "val", "scale": 1,
    "dataroot_gt": "datasets/val/target", "dataroot_lq": "datasets/val/input", "io_backend": {{"type": "disk"}},
}}
opt = {{
    "name": "h69", "model_type": "ImageRestorationModel", "scale": 1, "num_gpu": 0, "manual_seed": 10,
    "is_train": True, "dist": False, "rank": 0, "world_size": 1,
    "datasets": {{"train": dataset_opt, "val": val_opt}},
    "network_g": {network},
    "path": {{"pretrain_network_g": None, "strict_load_g": True, "resume_state": None}},
    "train": {{
        "optim_g": {optim},
        "scheduler": {scheduler},
        "total_iter": 8, "warmup_iter": -1,
        "pixel_opt": {pixel},
    }},
    "val": {{"val_freq": 100, "save_img": False, "max_minibatch": 1}},
}}
train_set = create_dataset(dataset_opt)
# create_dataloader's training loader (shuffle, drop_last) without its persistent_workers, which needs workers
train_loader = torch.utils.data.DataLoader(train_set, batch_size=2, shuffle=True, num_workers=0, drop_last=True)
val_loader = torch.utils.data.DataLoader(create_dataset(val_opt), batch_size=2, shuffle=False, num_workers=0)
model = create_model(opt)
current_iter = 0
for epoch in range(3):
    for train_data in train_loader:
        current_iter += 1
        model.update_learning_rate(current_iter, warmup_iter=opt["train"].get("warmup_iter", -1))
        model.feed_data(train_data, is_val=False)
        result_code = model.optimize_parameters(current_iter, None)
        print("iter", current_iter, "lr", model.get_current_learning_rate(), "log", model.get_current_log())
print("VALUE lr", model.get_current_learning_rate()[0])
print("VALUE l_pix", float(model.get_current_log()["l_pix"]))
val_data = next(iter(val_loader))
model.feed_data(val_data, is_val=True)
model.test()
visuals = model.get_current_visuals()
print("VALUE result", float(visuals["result"].mean()))
print("VALUE result_err", float((visuals["result"] - visuals["gt"]).abs().mean()))
'''

_RESTORMER_DRIVER = _IMAGES + '''
import random

import numpy as np
import torch

from basicsr.data import create_dataset
from basicsr.models import create_model

torch.manual_seed(0)
dataset_opt = {{
    "name": "Rain-syn", "type": "Dataset_PairedImage", "phase": "train", "scale": 1,
    "dataroot_gt": "datasets/train/target", "dataroot_lq": "datasets/train/input", "filename_tmpl": "{{}}",
    "io_backend": {{"type": "disk"}}, "gt_size": 16, "geometric_augs": True,
    "num_worker_per_gpu": 0, "batch_size_per_gpu": 2, "dataset_enlarge_ratio": 1,
    "mini_batch_sizes": {mini_batch_sizes}, "iters": [3, 5], "gt_sizes": {gt_sizes},
}}
val_opt = {{
    "name": "Rain-val", "type": "Dataset_PairedImage", "phase": "val", "scale": 1,
    "dataroot_gt": "datasets/val/target", "dataroot_lq": "datasets/val/input", "io_backend": {{"type": "disk"}},
}}
opt = {{
    "name": "h69", "model_type": "ImageCleanModel", "scale": 1, "num_gpu": 0, "manual_seed": 100,
    "is_train": True, "dist": False, "rank": 0, "world_size": 1,
    "datasets": {{"train": dataset_opt, "val": val_opt}},
    "network_g": {{"type": "Restormer", "inp_channels": 3, "out_channels": 3, "dim": 8, "num_blocks": [1, 1, 1, 1],
                  "num_refinement_blocks": 1, "heads": [1, 1, 2, 2], "ffn_expansion_factor": 2.66, "bias": False,
                  "LayerNorm_type": "{layernorm}", "dual_pixel_task": False}},
    "path": {{"pretrain_network_g": None, "strict_load_g": True, "resume_state": None}},
    "train": {{
        "total_iter": 8, "warmup_iter": -1, "use_grad_clip": True, "ema_decay": {ema_decay},
        "scheduler": {{"type": "CosineAnnealingRestartCyclicLR", "periods": [3, 5], "restart_weights": [1, 1],
                      "eta_mins": [0.0003, 0.000001]}},
        "mixing_augs": {{"mixup": False, "mixup_beta": 1.2, "use_identity": True}},
        "optim_g": {{"type": "AdamW", "lr": 3e-4, "weight_decay": 1e-4, "betas": [0.9, 0.999]}},
        "pixel_opt": {{"type": "L1Loss", "loss_weight": 1, "reduction": "mean"}},
    }},
    "val": {{"window_size": 8, "val_freq": 100, "save_img": False}},
}}
train_set = create_dataset(dataset_opt)
train_loader = torch.utils.data.DataLoader(train_set, batch_size=2, shuffle=True, num_workers=0, drop_last=True)
val_loader = torch.utils.data.DataLoader(create_dataset(val_opt), batch_size=1, shuffle=False, num_workers=0)
model = create_model(opt)
total_iters = opt["train"]["total_iter"]
current_iter = 0
# train.py's progressive learning, as it writes it
iters = dataset_opt.get("iters")
batch_size = dataset_opt.get("batch_size_per_gpu")
mini_batch_sizes = dataset_opt.get("mini_batch_sizes")
gt_size = dataset_opt.get("gt_size")
mini_gt_sizes = dataset_opt.get("gt_sizes")
groups = np.array([sum(iters[0:i + 1]) for i in range(0, len(iters))])
logger_j = [True] * len(groups)
scale = opt["scale"]
epoch = 0
while current_iter <= total_iters and epoch < 4:
    for train_data in train_loader:
        current_iter += 1
        if current_iter > total_iters:
            break
        model.update_learning_rate(current_iter, warmup_iter=opt["train"].get("warmup_iter", -1))
        j = ((current_iter > groups) != True).nonzero()[0]
        if len(j) == 0:
            bs_j = len(groups) - 1
        else:
            bs_j = j[0]
        mini_gt_size = mini_gt_sizes[bs_j]
        mini_batch_size = mini_batch_sizes[bs_j]
        lq = train_data["lq"]
        gt = train_data["gt"]
        if mini_batch_size < batch_size:
            indices = random.sample(range(0, batch_size), k=mini_batch_size)
            lq = lq[indices]
            gt = gt[indices]
        if mini_gt_size < gt_size:
            x0 = int((gt_size - mini_gt_size) * random.random())
            y0 = int((gt_size - mini_gt_size) * random.random())
            x1 = x0 + mini_gt_size
            y1 = y0 + mini_gt_size
            lq = lq[:, :, x0:x1, y0:y1]
            gt = gt[:, :, x0 * scale:x1 * scale, y0 * scale:y1 * scale]
        model.feed_train_data({{"lq": lq, "gt": gt}})
        model.optimize_parameters(current_iter)
        print("iter", current_iter, "lr", model.get_current_learning_rate(), "log", model.get_current_log())
    epoch += 1
print("VALUE lr", model.get_current_learning_rate()[0])
print("VALUE l_pix", float(model.get_current_log()["l_pix"]))
val_data = next(iter(val_loader))
model.feed_data(val_data)
model.test()
visuals = model.get_current_visuals()
print("VALUE result", float(visuals["result"].mean()))
print("VALUE result_err", float((visuals["result"] - visuals["gt"]).abs().mean()))
'''

_DOMAINBED_DRIVER = '''
import numpy as np
import torch
from torch.utils.data import TensorDataset

from domainbed import algorithms, hparams_registry
from domainbed.lib import misc
from domainbed.lib.fast_data_loader import FastDataLoader, InfiniteDataLoader

algorithm_name = "{algorithm}"
torch.manual_seed(0)
np.random.seed(0)
device = "cpu"
# three environments of Debug28's shape: each class a colour, each environment its own brightness and noise
rng = np.random.RandomState(5)
input_shape, num_classes = (3, 28, 28), 2
envs = []
for e in range(3):
    ys = rng.randint(0, num_classes, 24)
    xs = 0.5 * rng.randn(24, 3, 28, 28)
    xs[:, 0] += (ys[:, None, None] * 2 - 1) * (0.3 + 0.3 * e)
    xs[:, 1] += (e - 1) * 0.5
    envs.append(TensorDataset(torch.from_numpy(xs.astype(np.float32)), torch.from_numpy(ys.astype(np.int64))))
test_envs = [2]
hparams = hparams_registry.default_hparams(algorithm_name, "Debug28")
hparams["batch_size"] = 8
hparams.update({extra})
print("HParams:", sorted(hparams.items()))
train_loaders = [InfiniteDataLoader(dataset=env, weights=None, batch_size=hparams["batch_size"], num_workers=0)
                 for i, env in enumerate(envs) if i not in test_envs]
eval_loaders = [FastDataLoader(dataset=env, batch_size=16, num_workers=0) for env in envs]
algorithm_class = algorithms.get_algorithm_class(algorithm_name)
algorithm = algorithm_class(input_shape, num_classes, len(envs) - len(test_envs), hparams)
algorithm.to(device)
train_minibatches_iterator = zip(*train_loaders)
n_steps = 5
for step in range(n_steps):
    minibatches_device = [(x.to(device), y.to(device)) for x, y in next(train_minibatches_iterator)]
    step_vals = algorithm.update(minibatches_device, None)
    print("step", step, sorted(step_vals.items()))
for i, loader in enumerate(eval_loaders):
    acc = misc.accuracy(algorithm, loader, None, device)
    print("VALUE env%d_acc" % i, acc)
with torch.no_grad():
    logits = algorithm.predict(envs[2].tensors[0])
print("VALUE logits", float(logits.abs().mean()))
'''

_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout69.py: the venv\'s torchvision does not '
                               'import beside this torch; basicsr and DomainBed import it at module level, nothing '
                               'here calls it."""\n__version__ = "0.0"\n',
    "torchvision/utils.py": 'def make_grid(*args, **kwargs):\n    raise NotImplementedError("stand-in")\n',
    "torchvision/transforms/__init__.py": '',
    "torchvision/transforms/functional.py": 'def normalize(*args, **kwargs):\n    raise NotImplementedError("stand-in")'
                                            '\n\n\ndef resize(*args, **kwargs):\n    raise NotImplementedError('
                                            '"stand-in")\n',
    "torchvision/models/__init__.py": '',
}
_STAND_INS = {
    "lmdb.py": '"""A stand-in written by bench/_rw_heldout69.py: lmdb is not installed (nothing opens a database)."""\n',
    "skimage/__init__.py": '',
    "skimage/metrics.py": '"""A stand-in written by bench/_rw_heldout69.py: scikit-image is not installed."""\n\n\n'
                          'def structural_similarity(*args, **kwargs):\n    raise NotImplementedError("stand-in")\n',
    "skimage/transform.py": '',
}
_TIMM = {"timm/__init__.py": '"""A stand-in written by bench/_rw_heldout69.py: timm is not installed; DomainBed\'s '
                             'networks.py imports it for its ViT featurizers, not used here."""\n'}

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("nafnet_sidd", NAFNET, "basicsr", "driver.py", [], None),
    ("nafnet_baseline", NAFNET, "basicsr", "driver.py", [], None),
    ("restormer_derain", RESTORMER, "basicsr", "driver.py", [], None),
    ("restormer_ema", RESTORMER, "basicsr", "driver.py", [], None),
    ("domainbed_irm", DOMAINBED, "domainbed", "driver.py", [], None),
    ("domainbed_coral", DOMAINBED, "domainbed", "driver.py", [], None),
    ("domainbed_groupdro", DOMAINBED, "domainbed", "driver.py", [], None),
    ("domainbed_mixup", DOMAINBED, "domainbed", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "nafnet_sidd": _NAFNET_DRIVER.format(
        network='{"type": "NAFNet", "width": 8, "enc_blk_nums": [1, 1], "middle_blk_num": 1, "dec_blk_nums": [1, 1]}',
        optim='{"type": "AdamW", "lr": 1e-3, "weight_decay": 1e-3, "betas": [0.9, 0.9]}',
        scheduler='{"type": "TrueCosineAnnealingLR", "T_max": 8, "eta_min": 1e-7}',
        pixel='{"type": "PSNRLoss", "loss_weight": 1, "reduction": "mean"}'),
    "nafnet_baseline": _NAFNET_DRIVER.format(
        network='{"type": "Baseline", "width": 8, "enc_blk_nums": [1, 1], "middle_blk_num": 1, '
                '"dec_blk_nums": [1, 1], "dw_expand": 1, "ffn_expand": 2}',
        optim='{"type": "AdamW", "lr": 1e-3, "weight_decay": 0., "betas": [0.9, 0.9]}',
        scheduler='{"type": "CosineAnnealingRestartLR", "periods": [4, 4], "restart_weights": [1, 0.5], '
                  '"eta_min": 1e-7}',
        pixel='{"type": "L1Loss", "loss_weight": 1, "reduction": "mean"}'),
    "restormer_derain": _RESTORMER_DRIVER.format(layernorm="WithBias", ema_decay=0, mini_batch_sizes=[2, 2],
                                                 gt_sizes=[16, 8]),
    "restormer_ema": _RESTORMER_DRIVER.format(layernorm="BiasFree", ema_decay=0.999, mini_batch_sizes=[2, 1],
                                              gt_sizes=[16, 16]),
    "domainbed_irm": _DOMAINBED_DRIVER.format(algorithm="IRM", extra='{"irm_penalty_anneal_iters": 2}'),
    "domainbed_coral": _DOMAINBED_DRIVER.format(algorithm="CORAL", extra="{}"),
    "domainbed_groupdro": _DOMAINBED_DRIVER.format(algorithm="GroupDRO", extra="{}"),
    "domainbed_mixup": _DOMAINBED_DRIVER.format(algorithm="Mixup", extra="{}"),
}

FILES = {**{name: dict(_STAND_INS) for name, *_ in PROGRAMS if not name.startswith("domainbed")},
         **{name: dict(_TIMM) for name, *_ in PROGRAMS if name.startswith("domainbed")}}
TORCH_FILES = {name: dict(_TORCHVISION) for name, *_ in PROGRAMS}

# basicsr: 4 of the training steps (one backward each); DomainBed: 4 updates (one backward each)
LOSSES = {name: 4 for name, *_ in PROGRAMS}
