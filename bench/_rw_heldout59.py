"""The `heldout59` set of bench/real_world.py (`--set heldout59`): vision models built on timm:
facebookresearch/DiT (the DiT transformer with adaLN-Zero blocks over timm's PatchEmbed, Attention and Mlp, and
diffusion/'s create_diffusion, training_losses and samplers), facebookresearch/ConvNeXt (ConvNeXt and
ConvNeXtIsotropic, optim_factory's layer-decay parameter groups, trained as engine.py's train_one_epoch trains with
timm's Mixup, losses and ModelEma) and microsoft/Swin-Transformer (SwinTransformer, SwinTransformerV2 and SwinMLP
through config.py's get_config and models' build_model, optimizer.py's build_optimizer and lr_scheduler.py's
build_scheduler, trained as main.py's train_one_epoch trains), converted as a new user would convert them, through
drivers of ours calling their documented entry points. timm itself (1.0.31, the PyPI wheel) is converted with each
program (`msmigrate convert --deps timm`).

    RW_SITE=DIR python bench/real_world.py --mirrors /work/.mirror --set heldout59 [--only dit_train,swin_t]

Extra packages (not in setup.sh), installed apart (`pip download timm==1.0.31 yacs --no-deps -d W;
pip install --no-deps --target DIR W/*.whl`) and put on both sides' path with RW_SITE=DIR (PYTHONPATH=DIR does too):
timm 1.0.31 (all three repositories import it; the torch side imports it beside torchvision, which the runner makes
importable), yacs 0.1.8 (Swin-Transformer's config.py).

- DiT (models.py and diffusion/ as they are; train.py and sample.py import diffusers' AutoencoderKL and torchvision,
  so a driver does what they do, on latent-shaped tensors instead of VAE latents): `torch.manual_seed(0)`, a small
  `DiT(input_size=8, patch_size=2, in_channels=4, hidden_size=32, depth=2, num_heads=2, num_classes=10,
  learn_sigma=...)`, train.py's `ema = deepcopy(model)`, its requires_grad(ema, False) and update_ema (decay 0, then
  0.9999 after each step), `create_diffusion(timestep_respacing="")` (1000 steps), AdamW (lr 1e-3, weight decay 0),
  8 latents (4 x 8 x 8, NumPy's seeded RandomState, times 0.18215) with labels in a shuffled DataLoader of batch 4
  (drop_last), two epochs of train.py's step: `t = torch.randint(0, diffusion.num_timesteps, (N,))`,
  `diffusion.training_losses(model, x, t, dict(y=y))["loss"].mean()`, backward, step, update_ema (the label dropout
  of classifier-free guidance draws torch.rand in train mode); then `model.eval()` and sampling as sample.py
  samples, `torch.set_grad_enabled(False)` and a respaced `create_diffusion("4")`, with the EMA model:
  - dit_cfg: `learn_sigma=True` (MSE plus the variational bound of the learned range, the discretized Gaussian
    likelihood at t = 0), sample.py's classifier-free guidance (`z = torch.cat([z, z])`, null labels 10,
    `diffusion.p_sample_loop(ema.forward_with_cfg, ..., model_kwargs=dict(y=y, cfg_scale=4.0))`, the
    null-class half removed by chunk): the samples' mean |.| as a VALUE.
  - dit_ddim: `learn_sigma=False`, `noise_schedule="squaredcos_cap_v2"` for training and sampling,
    `diffusion.ddim_sample_loop(ema.forward, ..., model_kwargs=dict(y=y), eta=0.0)`: VALUE.
- ConvNeXt (models/ and optim_factory.py as they are; engine.py imports utils.py, which imports `torch._six`, gone
  in torch 2, and tensorboardX: a driver does what main.py and engine.py's train_one_epoch and evaluate do, with
  utils.cosine_scheduler's NumPy schedules written out; optim_factory.py imports timm optimizers that timm 1.0.31
  renamed, `timm.optim.nadam.Nadam` and `timm.optim.radam.RAdam` (now NAdamLegacy, RAdamLegacy), or dropped, the
  module `timm.optim.novograd`: the driver sets stand-ins of ours under those names, which nothing here calls, before
  importing it, on both sides): `torch.manual_seed(0)`, 16 CIFAR-sized images (3 x 32 x
  32) and labels of 10 classes, a shuffled DataLoader of batch 4 (drop_last), main.py's Mixup (mixup 0.8, cutmix
  1.0, switch 0.5, label smoothing 0.1: NumPy's draws, cutmix's box pasted by slice assignment) and
  SoftTargetCrossEntropy, timm's ModelEma (decay 0.9999), create_optimizer (adamw, lr 4e-3, weight decay 0.05, the
  no-decay groups of 1-D parameters), main.py's cosine lr and weight-decay schedules (one warmup epoch), and
  train_one_epoch's full-precision path for two epochs (each group's lr = schedule * lr_scale, weight decay from
  its schedule where > 0, `loss /= update_freq`, backward, step, zero_grad, model_ema.update); then engine.py's
  evaluate (eval mode, CrossEntropyLoss, timm.utils.accuracy top-1 and top-5) of the model and of the EMA: VALUEs.
  - convnext_ld: `ConvNeXt(depths=[1, 1, 2, 1], dims=[8, 16, 32, 64], num_classes=10,
    layer_scale_init_value=1e-6, head_init_scale=1.0)` with main.py's layer decay 0.8
    (LayerDecayValueAssigner over get_num_layer_for_convnext's 14 ids: per-group lr_scale).
  - convnext_iso: `ConvNeXtIsotropic(depth=2, dim=16, num_classes=10)` (a 16 x 16 patchify stem), no layer
    decay, LabelSmoothingCrossEntropy (smoothing 0.1) without Mixup.
- Swin-Transformer (config.py, models/, optimizer.py and lr_scheduler.py as they are; main.py needs CUDA,
  torch.distributed and its data package, and its loss scaler's state_dict has no "scale" where CUDA is missing, so
  a driver does what main.py does with AMP off): a YAML file of ours (the model's type and a small size: 32 x 32
  images, patch 2, window 4, embed dim 24, depths (2, 2), heads (2, 4), 10 classes, drop path 0; TRAIN: 2 epochs,
  1 warmup epoch, base lr 1e-3, clip 5.0, label smoothing 0.1), `get_config(args)` with the argparse Namespace
  main.py's parse_option() gives (LOCAL_RANK=0 in the environment as torch.distributed.launch sets it),
  `build_model(config)`, LabelSmoothingCrossEntropy, `build_optimizer(config, model)` (AdamW over set_weight_decay's
  two groups, the model's no_weight_decay names and keywords), `build_scheduler(config, optimizer, 4)` (timm's
  CosineLRScheduler with warmup, step_update per iteration), 16 images in a shuffled DataLoader of batch 4, and two
  epochs of train_one_epoch's body (loss / ACCUMULATION_STEPS, backward, clip_grad_norm_ of CLIP_GRAD as its
  scaler does, step, zero_grad, `lr_scheduler.step_update(epoch * num_steps + idx)`); then validate()'s loss and
  accuracy (eval mode, CrossEntropyLoss, timm's accuracy) and the learning rate: VALUEs.
  - swin_t: `TYPE: swin` (shifted windows with the attention mask, relative position bias table, PatchMerging).
  - swin_v2: `TYPE: swinv2` (cosine attention with the learned logit scale clamped by torch.log(1 / 0.01), the
    continuous position bias MLP over log-spaced coordinates, post-norm).
  - swin_mlp: `TYPE: swin_mlp` (the spatial MLP as a grouped Conv1d over padded, shifted windows).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

DIT = "facebookresearch+DiT@ed81ce2229091fd4ecc9a223645f95cf379d582b"
CONVNEXT = "facebookresearch+ConvNeXt@048efcea897d999aed302f2639b6270aedf8d4c8"
SWIN = "microsoft+Swin-Transformer@f82860bfb5225915aca09c3227159ee9e1df874d"

_DIT_DRIVER = '''
from collections import OrderedDict
from copy import deepcopy

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

from diffusion import create_diffusion
from models import DiT

torch.manual_seed(0)


# train.py's helpers
@torch.no_grad()
def update_ema(ema_model, model, decay=0.9999):
    ema_params = OrderedDict(ema_model.named_parameters())
    model_params = OrderedDict(model.named_parameters())
    for name, param in model_params.items():
        ema_params[name].mul_(decay).add_(param.data, alpha=1 - decay)


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


latent_size = 8
model = DiT(input_size=latent_size, patch_size=2, in_channels=4, hidden_size=32, depth=2, num_heads=2,
            num_classes=10, learn_sigma={learn_sigma})
ema = deepcopy(model)
requires_grad(ema, False)
diffusion = create_diffusion(timestep_respacing="", noise_schedule="{schedule}", learn_sigma={learn_sigma})
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0)

rng = np.random.RandomState(0)
latents = torch.from_numpy(rng.randn(8, 4, latent_size, latent_size).astype(np.float32)) * 0.18215
labels = torch.from_numpy(rng.randint(0, 10, 8).astype(np.int64))
loader = DataLoader(TensorDataset(latents, labels), batch_size=4, shuffle=True, drop_last=True)

update_ema(ema, model, decay=0)
model.train()
ema.eval()
train_steps = 0
running_loss = 0
for epoch in range(2):
    for x, y in loader:
        t = torch.randint(0, diffusion.num_timesteps, (x.shape[0],))
        model_kwargs = dict(y=y)
        loss_dict = diffusion.training_losses(model, x, t, model_kwargs)
        loss = loss_dict["loss"].mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        update_ema(ema, model)
        running_loss += loss.item()
        train_steps += 1
print("VALUE running_loss", running_loss / train_steps)
model.eval()

# sample.py, with the EMA model and no VAE
torch.set_grad_enabled(False)
sample_diffusion = create_diffusion("4", noise_schedule="{schedule}", learn_sigma={learn_sigma})
class_labels = [1, 3, 5, 7]
n = len(class_labels)
z = torch.randn(n, 4, latent_size, latent_size)
y = torch.tensor(class_labels)
{sampling}
print("VALUE samples", float(samples.abs().mean()))
print("VALUE sample0", float(samples[0].mean()))
'''

_DIT_CFG = '''z = torch.cat([z, z], 0)
y_null = torch.tensor([10] * n)
y = torch.cat([y, y_null], 0)
model_kwargs = dict(y=y, cfg_scale=4.0)
samples = sample_diffusion.p_sample_loop(
    ema.forward_with_cfg, z.shape, z, clip_denoised=False, model_kwargs=model_kwargs, progress=False, device="cpu"
)
samples, _ = samples.chunk(2, dim=0)'''

_DIT_DDIM = '''samples = sample_diffusion.ddim_sample_loop(
    ema.forward, z.shape, z, clip_denoised=False, model_kwargs=dict(y=y), progress=False, device="cpu", eta=0.0
)'''

_CONVNEXT_DRIVER = '''
import importlib
import math
import sys
import types
from argparse import Namespace

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

# optim_factory.py imports optimizers of timm's that timm 1.0.31 renamed (Nadam, RAdam) or dropped (the module
# timm.optim.novograd): stand-ins of ours under those names, which nothing here calls (it trains with AdamW)
def _standin(name):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"the stand-in's {{name}} is imported, not used")
    return type(name, (), {{"__init__": __init__}})


for _module, _name in [("timm.optim.nadam", "Nadam"), ("timm.optim.novograd", "NovoGrad"),
                       ("timm.optim.radam", "RAdam")]:
    try:
        _mod = importlib.import_module(_module)
    except ImportError:
        _mod = sys.modules[_module] = types.ModuleType(_module)
    if not hasattr(_mod, _name):
        setattr(_mod, _name, _standin(_name))

from timm.data.mixup import Mixup
from timm.loss import LabelSmoothingCrossEntropy, SoftTargetCrossEntropy
from timm.utils import ModelEma, accuracy

from optim_factory import create_optimizer, LayerDecayValueAssigner
from models.convnext import ConvNeXt
from models.convnext_isotropic import ConvNeXtIsotropic

torch.manual_seed(0)
np.random.seed(0)


# utils.cosine_scheduler (utils.py imports torch._six, gone in torch 2)
def cosine_scheduler(base_value, final_value, epochs, niter_per_ep, warmup_epochs=0,
                     start_warmup_value=0, warmup_steps=-1):
    warmup_schedule = np.array([])
    warmup_iters = warmup_epochs * niter_per_ep
    if warmup_steps > 0:
        warmup_iters = warmup_steps
    if warmup_epochs > 0:
        warmup_schedule = np.linspace(start_warmup_value, base_value, warmup_iters)
    iters = np.arange(epochs * niter_per_ep - warmup_iters)
    schedule = np.array(
        [final_value + 0.5 * (base_value - final_value) * (1 + math.cos(math.pi * i / (len(iters)))) for i in iters])
    schedule = np.concatenate((warmup_schedule, schedule))
    assert len(schedule) == epochs * niter_per_ep
    return schedule


args = Namespace(opt="adamw", lr=4e-3, weight_decay=0.05, weight_decay_end=None, opt_eps=1e-8, opt_betas=None,
                 momentum=0.9, layer_decay={layer_decay}, epochs=2, warmup_epochs=1, min_lr=1e-6, update_freq=1,
                 smoothing=0.1, mixup={mixup}, cutmix={cutmix}, nb_classes=10)
rng = np.random.RandomState(0)
images = torch.from_numpy(rng.randn(16, 3, 32, 32).astype(np.float32))
targets = torch.from_numpy(rng.randint(0, 10, 16).astype(np.int64))
data_loader_train = DataLoader(TensorDataset(images, targets), batch_size=4, shuffle=True, drop_last=True)
data_loader_val = DataLoader(TensorDataset(images[:8], targets[:8]), batch_size=4, shuffle=False)

mixup_fn = None
mixup_active = args.mixup > 0 or args.cutmix > 0.
if mixup_active:
    mixup_fn = Mixup(mixup_alpha=args.mixup, cutmix_alpha=args.cutmix, cutmix_minmax=None, prob=1.0,
                     switch_prob=0.5, mode="batch", label_smoothing=args.smoothing, num_classes=args.nb_classes)

model = {model}
model_ema = ModelEma(model, decay=0.9999, device="", resume="")

if args.layer_decay < 1.0 or args.layer_decay > 1.0:
    num_layers = 12  # convnext layers divided into 12 parts, each with a different decayed lr value.
    assigner = LayerDecayValueAssigner(list(args.layer_decay ** (num_layers + 1 - i) for i in range(num_layers + 2)))
else:
    assigner = None
optimizer = create_optimizer(
    args, model, skip_list=None,
    get_num_layer=assigner.get_layer_id if assigner is not None else None,
    get_layer_scale=assigner.get_scale if assigner is not None else None)

num_training_steps_per_epoch = len(data_loader_train) // args.update_freq
lr_schedule_values = cosine_scheduler(args.lr, args.min_lr, args.epochs, num_training_steps_per_epoch,
                                      warmup_epochs=args.warmup_epochs)
if args.weight_decay_end is None:
    args.weight_decay_end = args.weight_decay
wd_schedule_values = cosine_scheduler(args.weight_decay, args.weight_decay_end, args.epochs,
                                      num_training_steps_per_epoch)
if mixup_fn is not None:
    criterion = SoftTargetCrossEntropy()
elif args.smoothing > 0.:
    criterion = LabelSmoothingCrossEntropy(smoothing=args.smoothing)
else:
    criterion = torch.nn.CrossEntropyLoss()


# engine.train_one_epoch, full precision
def train_one_epoch(model, criterion, data_loader, optimizer, epoch, model_ema, mixup_fn, start_steps,
                    lr_schedule_values, wd_schedule_values, num_training_steps_per_epoch, update_freq):
    model.train(True)
    optimizer.zero_grad()
    for data_iter_step, (samples, targets) in enumerate(data_loader):
        step = data_iter_step // update_freq
        if step >= num_training_steps_per_epoch:
            continue
        it = start_steps + step
        if lr_schedule_values is not None or wd_schedule_values is not None and data_iter_step % update_freq == 0:
            for i, param_group in enumerate(optimizer.param_groups):
                if lr_schedule_values is not None:
                    param_group["lr"] = lr_schedule_values[it] * param_group["lr_scale"]
                if wd_schedule_values is not None and param_group["weight_decay"] > 0:
                    param_group["weight_decay"] = wd_schedule_values[it]
        if mixup_fn is not None:
            samples, targets = mixup_fn(samples, targets)
        output = model(samples)
        loss = criterion(output, targets)
        loss_value = loss.item()
        assert math.isfinite(loss_value)
        loss /= update_freq
        loss.backward()
        if (data_iter_step + 1) % update_freq == 0:
            optimizer.step()
            optimizer.zero_grad()
            if model_ema is not None:
                model_ema.update(model)


# engine.evaluate
@torch.no_grad()
def evaluate(data_loader, model):
    criterion = torch.nn.CrossEntropyLoss()
    model.eval()
    losses, top1, top5 = [], [], []
    for images, target in data_loader:
        output = model(images)
        loss = criterion(output, target)
        acc1, acc5 = accuracy(output, target, topk=(1, 5))
        losses.append(loss.item())
        top1.append(acc1.item())
        top5.append(acc5.item())
    return sum(losses) / len(losses), sum(top1) / len(top1), sum(top5) / len(top5)


for epoch in range(args.epochs):
    train_one_epoch(model, criterion, data_loader_train, optimizer, epoch, model_ema, mixup_fn,
                    epoch * num_training_steps_per_epoch, lr_schedule_values, wd_schedule_values,
                    num_training_steps_per_epoch, args.update_freq)
loss, acc1, acc5 = evaluate(data_loader_val, model)
print("VALUE val_loss", loss)
print("VALUE val_acc5", acc5)
loss, acc1, acc5 = evaluate(data_loader_val, model_ema.ema)
print("VALUE ema_loss", loss)
print("VALUE lr", optimizer.param_groups[0]["lr"])
'''

_SWIN_DRIVER = '''
import argparse
import os

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset
from timm.loss import LabelSmoothingCrossEntropy
from timm.utils import accuracy, AverageMeter

from config import get_config
from models import build_model
from lr_scheduler import build_scheduler
from optimizer import build_optimizer

os.environ.setdefault("LOCAL_RANK", "0")     # torch.distributed.launch's
# main.py's parse_option(): the arguments a run with --cfg gives
args = argparse.Namespace(cfg="small.yaml", opts=None, batch_size=4, data_path=None, zip=False, cache_mode="part",
                          pretrained=None, resume=None, accumulation_steps=None, use_checkpoint=False,
                          disable_amp=True, amp_opt_level=None, output="output", tag="h59", eval=False,
                          throughput=False, fused_window_process=False, fused_layernorm=False, optim=None)
config = get_config(args)
torch.manual_seed(config.SEED)
np.random.seed(config.SEED)

rng = np.random.RandomState(0)
images = torch.from_numpy(rng.randn(16, 3, config.DATA.IMG_SIZE, config.DATA.IMG_SIZE).astype(np.float32))
targets = torch.from_numpy(rng.randint(0, config.MODEL.NUM_CLASSES, 16).astype(np.int64))
data_loader_train = DataLoader(TensorDataset(images, targets), batch_size=config.DATA.BATCH_SIZE, shuffle=True,
                               drop_last=True)
data_loader_val = DataLoader(TensorDataset(images[:8], targets[:8]), batch_size=config.DATA.BATCH_SIZE,
                             shuffle=False)

model = build_model(config)
optimizer = build_optimizer(config, model)
lr_scheduler = build_scheduler(config, optimizer, len(data_loader_train))
if config.MODEL.LABEL_SMOOTHING > 0.:
    criterion = LabelSmoothingCrossEntropy(smoothing=config.MODEL.LABEL_SMOOTHING)
else:
    criterion = torch.nn.CrossEntropyLoss()


# main.train_one_epoch with AMP off (its scaler: backward, clip_grad_norm_ of CLIP_GRAD, step)
def train_one_epoch(config, model, criterion, data_loader, optimizer, epoch, lr_scheduler):
    model.train()
    optimizer.zero_grad()
    num_steps = len(data_loader)
    loss_meter = AverageMeter()
    norm_meter = AverageMeter()
    for idx, (samples, targets) in enumerate(data_loader):
        outputs = model(samples)
        loss = criterion(outputs, targets)
        loss = loss / config.TRAIN.ACCUMULATION_STEPS
        loss.backward()
        grad_norm = None
        if (idx + 1) % config.TRAIN.ACCUMULATION_STEPS == 0:
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), config.TRAIN.CLIP_GRAD)
            optimizer.step()
            optimizer.zero_grad()
            lr_scheduler.step_update((epoch * num_steps + idx) // config.TRAIN.ACCUMULATION_STEPS)
        loss_meter.update(loss.item(), targets.size(0))
        if grad_norm is not None:
            norm_meter.update(float(grad_norm))
    return loss_meter.avg, norm_meter.avg


# main.validate
@torch.no_grad()
def validate(config, data_loader, model):
    criterion = torch.nn.CrossEntropyLoss()
    model.eval()
    loss_meter = AverageMeter()
    acc1_meter = AverageMeter()
    for idx, (images, target) in enumerate(data_loader):
        output = model(images)
        loss = criterion(output, target)
        acc1, acc5 = accuracy(output, target, topk=(1, 5))
        loss_meter.update(loss.item(), target.size(0))
        acc1_meter.update(acc1.item(), target.size(0))
    return acc1_meter.avg, loss_meter.avg


for epoch in range(config.TRAIN.START_EPOCH, config.TRAIN.EPOCHS):
    avg_loss, avg_norm = train_one_epoch(config, model, criterion, data_loader_train, optimizer, epoch, lr_scheduler)
print("VALUE avg_norm", avg_norm)
acc1, loss = validate(config, data_loader_val, model)
print("VALUE val_loss", loss)
print("VALUE lr", optimizer.param_groups[0]["lr"])
'''

_SWIN_YAML = '''
MODEL:
  TYPE: {type}
  NAME: h59_{type}
  NUM_CLASSES: 10
  DROP_PATH_RATE: 0.0
  LABEL_SMOOTHING: 0.1
  {key}:
    PATCH_SIZE: 2
    EMBED_DIM: 24
    DEPTHS: [ 2, 2 ]
    NUM_HEADS: [ 2, 4 ]
    WINDOW_SIZE: 4
DATA:
  IMG_SIZE: 32
  BATCH_SIZE: 4
TRAIN:
  EPOCHS: 2
  WARMUP_EPOCHS: 1
  BASE_LR: 1e-3
  WARMUP_LR: 1e-5
  MIN_LR: 1e-5
  CLIP_GRAD: 5.0
'''

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("dit_cfg", DIT, "models.py,diffusion", "driver.py", [], None),
    ("dit_ddim", DIT, "models.py,diffusion", "driver.py", [], None),
    ("convnext_ld", CONVNEXT, "models,optim_factory.py", "driver.py", [], None),
    ("convnext_iso", CONVNEXT, "models,optim_factory.py", "driver.py", [], None),
    ("swin_t", SWIN, "config.py,models,optimizer.py,lr_scheduler.py", "driver.py", [], None),
    ("swin_v2", SWIN, "config.py,models,optimizer.py,lr_scheduler.py", "driver.py", [], None),
    ("swin_mlp", SWIN, "config.py,models,optimizer.py,lr_scheduler.py", "driver.py", [], None),
]

# timm, imported by every program, converted with it
DEPS = {name: ["timm"] for name, *_ in PROGRAMS}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "dit_cfg": _DIT_DRIVER.format(learn_sigma="True", schedule="linear", sampling=_DIT_CFG),
    "dit_ddim": _DIT_DRIVER.format(learn_sigma="False", schedule="squaredcos_cap_v2", sampling=_DIT_DDIM),
    "convnext_ld": _CONVNEXT_DRIVER.format(
        layer_decay="0.8", mixup="0.8", cutmix="1.0",
        model="ConvNeXt(depths=[1, 1, 2, 1], dims=[8, 16, 32, 64], num_classes=10, layer_scale_init_value=1e-6, "
              "head_init_scale=1.0)"),
    "convnext_iso": _CONVNEXT_DRIVER.format(
        layer_decay="1.0", mixup="0.0", cutmix="0.0",
        model="ConvNeXtIsotropic(depth=2, dim=16, num_classes=10)"),
    "swin_t": _SWIN_DRIVER,
    "swin_v2": _SWIN_DRIVER,
    "swin_mlp": _SWIN_DRIVER,
}

FILES = {
    "swin_t": {"small.yaml": _SWIN_YAML.format(type="swin", key="SWIN")},
    "swin_v2": {"small.yaml": _SWIN_YAML.format(type="swinv2", key="SWINV2")},
    "swin_mlp": {"small.yaml": _SWIN_YAML.format(type="swin_mlp", key="SWIN_MLP")},
}

# DiT: 4 steps; ConvNeXt and Swin: 8 steps (two epochs of 4 batches)
LOSSES = {"dit_cfg": 4, "dit_ddim": 4, "convnext_ld": 8, "convnext_iso": 8, "swin_t": 8, "swin_v2": 8,
          "swin_mlp": 8}
