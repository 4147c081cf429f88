"""The `heldout56` set of bench/real_world.py (`--set heldout56`): VainF/DeepLabV3Plus-Pytorch (DeepLabV3 and
DeepLabV3+ over its own ResNet and MobileNetV2 backbones: IntermediateLayerGetter, ASPP with its pooling branch,
atrous convolutions, separable convolutions swapped in by convert_to_separable_conv; FocalLoss and PolyLR),
jeonsworld/ViT-pytorch (VisionTransformer, plain and over the R50 hybrid's StdConv2d ResNetV2, trained as train.py
trains it with WarmupCosineSchedule) and ermongroup/ddim (the UNet of models/diffusion.py, EMAHelper,
noise_estimation_loss, and the samplers generalized_steps and ddpm_steps), converted as a new user would convert
them, through drivers of ours calling their documented entry points.

    python bench/real_world.py --mirrors /work/.mirror --set heldout56 [--only deeplab_mobilenet,vit_plain]

- DeepLabV3Plus-Pytorch (network/ and utils/ as they are): a driver builds a model of network.modeling with
  `num_classes=4, output_stride=8` (`pretrained_backbone=False`: no download), sets the backbone's BatchNorm momentum
  with `utils.set_bn_momentum(model.backbone, momentum=0.01)` as main.py does, and trains it three steps as main.py's
  loop does (SGD over main.py's two parameter groups, backbone at 0.1 * lr, momentum 0.9, weight decay 1e-4; the
  criterion; `utils.PolyLR(optimizer, 30, power=0.9)` stepped after each step) on four 3x32x32 images (torch.randn:
  the runner's matched stream) and labels with a few ignored pixels (255); then the eval-mode
  `outputs.max(dim=1)[1]` as main.py's validate() takes it (printed, not compared: argmax over near ties), and the
  mean |logit| as a VALUE. The images have a brightness each (ASPP's image-pooling BatchNorm normalizes the batch's
  pooled means, within rounding of each other for images of one distribution).
  utils/__init__ imports visualizer.py (visdom, not installed: a stand-in of ours on both sides that nothing here
  calls) and utils.py (torchvision's normalize: on the torch side a stand-in of ours, torchvision not being
  importable beside this torch).
  - deeplab_mobilenet: `deeplabv3plus_mobilenet`, `nn.CrossEntropyLoss(ignore_index=255, reduction='mean')`.
  - deeplab_resnet_focal: `deeplabv3_resnet50` (ASPP on the dilated layer4), `utils.FocalLoss(ignore_index=255,
    size_average=True)` with gamma 2 set on it.
  - deeplab_separable: `deeplabv3plus_mobilenet` with `network.convert_to_separable_conv(model.classifier)` (as
    main.py's --separable_conv), cross entropy.
- ViT-pytorch (models/ and utils/ as they are; train.py imports apex, not installed here, so a driver trains as its
  train() does): configs.py builds ml_collections.ConfigDicts (ml_collections is not installed: a stand-in of ours
  on both sides, an attribute dictionary); the driver takes CONFIGS[name] and makes it small (hidden 16, MLP 32, 2
  heads, 2 layers), builds `VisionTransformer(config, img_size, num_classes=5, zero_head=True)`, trains four steps
  (`loss = model(x, y)`, backward, `clip_grad_norm_(model.parameters(), 1.0)`, SGD momentum 0.9 weight decay 0 as
  train.py, `WarmupCosineSchedule(optimizer, warmup_steps=1, t_total=4)` stepped after each step), then in eval mode
  the logits and the argmax predictions as VALUEs (train.py's valid()), and with `vis=True` the mean of the
  attention weights.
  - vit_plain: 'ViT-B_16' with 4x4 patches on 16x16 images.
  - vit_r50_hybrid: 'R50-ViT-B_16' with `resnet.num_layers = (1, 1, 1)` on 32x32 images (ResNetV2 with
    StdConv2d's weight standardization, GroupNorm, the hybrid's 1x1 patches over its 2x2 grid).
- ddim (models/ and functions/ as they are): a driver builds models.diffusion.Model from a config of namespaces
  shaped as configs/cifar10.yml (ch 32, ch_mult (1, 2), one res block, attention at 8, 8x8 images, 20 timesteps,
  linear betas as runners/diffusion.py's get_beta_schedule computes them), one call of the model under no_grad (the
  runner loads torch's initial weights into the converted model at its first call: an EMA registered before any
  call copies the converted model's own initial values), `functions.get_optimizer` (Adam, lr 2e-4, unless said
  otherwise),
  EMAHelper(mu=0.9) registered, and trains three steps as Diffusion.train() does (torch.randn_like noise,
  antithetic `torch.randint` timesteps, `loss_registry['simple']`, clip_grad_norm_, `ema_helper.update`); then
  `ema_helper.ema(model)` writes the shadow weights into the model, which samples from a torch.randn start: the
  mean |x| of the last sample and of the last x0 prediction as VALUEs.
  - ddim_generalized: `generalized_steps(x, seq, model, betas, eta=0.5)` over a skip-4 sequence (the DDIM sampler;
    eta > 0 draws torch.randn_like noise).
  - ddim_ddpm: `ddpm_steps(x, seq, model, betas)` over every step; get_optimizer's SGD (momentum 0.9, lr 1e-3).
  The samplers call `.to('cuda')` unconditionally; this torch has no CUDA: on the torch side only, after the
  conversion, `.to('cuda')` is written `.to('cpu')` (the converter sees the files as they are).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

DEEPLAB = "VainF+DeepLabV3Plus-Pytorch@4e1087de98bc49d55b9239ae92810ef7368660db"
VIT = "jeonsworld+ViT-pytorch@460a162767de1722a014ed2261463dbbc01196b6"
DDIM = "ermongroup+ddim@e8df66cf02e457719930748b5c26e37e3126dfdd"

_DEEPLAB_DRIVER = '''
import torch
import torch.nn as nn
import network
import utils

model = network.modeling.{factory}(num_classes=4, output_stride=8, pretrained_backbone=False)
{separable}utils.set_bn_momentum(model.backbone, momentum=0.01)
lr = 0.01
optimizer = torch.optim.SGD(params=[
    {{'params': model.backbone.parameters(), 'lr': 0.1 * lr}},
    {{'params': model.classifier.parameters(), 'lr': lr}},
], lr=lr, momentum=0.9, weight_decay=1e-4)
scheduler = utils.PolyLR(optimizer, 30, power=0.9)
{criterion}
# images of their own brightness, as photographs are: ASPP's image pooling branch normalizes over the batch's
# pooled means (BatchNorm of 1x1 maps), which images of one distribution put within rounding of each other
images = torch.randn(4, 3, 32, 32) * 0.5 + torch.tensor([-1.0, -0.3, 0.4, 1.2]).view(4, 1, 1, 1)
labels = torch.tensor([[0, 1, 2, 3] * 8] * 64 + [[3, 2, 1, 0] * 8] * 64).view(4, 32, 32)
labels[0, :2, :3] = 255
model.train()
for step in range(3):
    optimizer.zero_grad()
    outputs = model(images)
    loss = criterion(outputs, labels)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
    scheduler.step()
model.eval()
with torch.no_grad():
    outputs = model(images)
    preds = outputs.detach().max(dim=1)[1].cpu().numpy()
print("predicted classes", sorted(set(preds.reshape(-1).tolist())))
print("VALUE logits", float(outputs.abs().mean()))
'''

_CROSS_ENTROPY = "criterion = nn.CrossEntropyLoss(ignore_index=255, reduction='mean')"
_FOCAL = "criterion = utils.FocalLoss(ignore_index=255, size_average=True)\ncriterion.gamma = 2"

_VISDOM = '''
"""A stand-in written by bench/_rw_heldout56.py: visdom is not installed; utils/visualizer.py imports Visdom, which
nothing here calls."""


class Visdom:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("the stand-in's Visdom is imported, not used")
'''

_TV_FUNCTIONAL = '''
"""A stand-in written by bench/_rw_heldout56.py: torchvision is not importable beside this torch; utils/utils.py
imports normalize, which nothing here calls."""


def normalize(tensor, mean, std, inplace=False):
    raise NotImplementedError("the stand-in's normalize is imported, not used")
'''

_TV_FOR_DEEPLAB = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout56.py."""\n',
    "torchvision/transforms/__init__.py": '"""A stand-in written by bench/_rw_heldout56.py."""\n',
    "torchvision/transforms/functional.py": _TV_FUNCTIONAL,
}

_ML_COLLECTIONS = '''
"""A stand-in written by bench/_rw_heldout56.py: ml_collections is not installed; models/configs.py builds
ConfigDicts, used here as attribute dictionaries."""


class ConfigDict(dict):
    def __init__(self, initial=None):
        super().__init__(initial or {})

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value

    def __delattr__(self, name):
        del self[name]
'''

_VIT_DRIVER = '''
import torch
from models.modeling import VisionTransformer, CONFIGS
from utils.scheduler import WarmupCosineSchedule

config = CONFIGS["{config}"]
config.hidden_size = 16
config.transformer.mlp_dim = 32
config.transformer.num_heads = 2
config.transformer.num_layers = 2
{shape}
model = VisionTransformer(config, {size}, num_classes=5, zero_head=True)
optimizer = torch.optim.SGD(model.parameters(), lr=3e-2, momentum=0.9, weight_decay=0)
scheduler = WarmupCosineSchedule(optimizer, warmup_steps=1, t_total=4)
x = torch.randn(4, 3, {size}, {size})
y = torch.tensor([0, 3, 1, 4])
model.zero_grad()
for step in range(4):
    model.train()
    loss = model(x, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
    print("loss", loss.item())
model.eval()
with torch.no_grad():
    logits = model(x)[0]
    preds = torch.argmax(logits, dim=-1)
print("VALUE logits", float(logits.abs().mean()))
print("VALUE preds", float(preds.sum()))
seen = VisionTransformer(config, {size}, num_classes=5, vis=True)
seen.eval()
with torch.no_grad():
    _, weights = seen(x)
print("VALUE attention", float(sum(w.abs().mean() for w in weights)))
'''

_DDIM_DRIVER = '''
from types import SimpleNamespace as NS

import numpy as np
import torch
from models.diffusion import Model
from models.ema import EMAHelper
from functions import get_optimizer
from functions.losses import loss_registry
from functions.denoising import {sampler}

config = NS(
    data=NS(image_size=8, channels=3),
    model=NS(type="simple", in_channels=3, out_ch=3, ch=32, ch_mult=[1, 2], num_res_blocks=1,
             attn_resolutions=[8], dropout=0.0, var_type="fixedlarge", ema_rate=0.9, ema=True,
             resamp_with_conv=True),
    diffusion=NS(beta_schedule="linear", beta_start=0.0001, beta_end=0.02, num_diffusion_timesteps=20),
    optim=NS(weight_decay=0.0, optimizer="{optimizer}", lr={lr}, beta1=0.9, amsgrad=False, eps=1e-8, grad_clip=1.0),
)
betas = np.linspace(config.diffusion.beta_start, config.diffusion.beta_end,
                    config.diffusion.num_diffusion_timesteps, dtype=np.float64)
b = torch.from_numpy(betas).float()
num_timesteps = b.shape[0]
model = Model(config)
x = torch.rand(4, 3, 8, 8) * 2 - 1
# the runner gives the converted model torch's initial weights at its first call: an EMA registered before any call
# would copy the converted model's own initial values (a call of ours, changing no state: GroupNorm, no dropout)
with torch.no_grad():
    model(x, torch.zeros(4))
optimizer = get_optimizer(config, model.parameters())
ema_helper = EMAHelper(mu=config.model.ema_rate)
ema_helper.register(model)
for step in range(3):
    n = x.size(0)
    model.train()
    e = torch.randn_like(x)
    t = torch.randint(low=0, high=num_timesteps, size=(n // 2 + 1,))
    t = torch.cat([t, num_timesteps - t - 1], dim=0)[:n]
    loss = loss_registry[config.model.type](model, x, t, e, b)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), config.optim.grad_clip)
    optimizer.step()
    ema_helper.update(model)
    print("loss", loss.item())
ema_helper.ema(model)
model.eval()
start = torch.randn(2, 3, 8, 8)
seq = {seq}
xs, x0_preds = {sampler}(start, seq, model, b{eta})
print("VALUE sample", float(xs[-1].abs().mean()))
print("VALUE x0", float(x0_preds[-1].abs().mean()))
print("VALUE steps", float(len(xs)))
'''


def _ddim_on_cpu(proj):
    """The torch side, after converting: the samplers' `.to('cuda')` is `.to('cpu')` (this torch has no CUDA)."""
    f = Path(proj) / "functions" / "denoising.py"
    text = f.read_text()
    if ".to('cuda')" not in text:
        raise RuntimeError(f"{f}: .to('cuda') not found")
    f.write_text(text.replace(".to('cuda')", ".to('cpu')"))


# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("deeplab_mobilenet", DEEPLAB, "network,utils", "driver.py", [], None),
    ("deeplab_resnet_focal", DEEPLAB, "network,utils", "driver.py", [], None),
    ("deeplab_separable", DEEPLAB, "network,utils", "driver.py", [], None),
    ("vit_plain", VIT, "models,utils", "driver.py", [], None),
    ("vit_r50_hybrid", VIT, "models,utils", "driver.py", [], None),
    ("ddim_generalized", DDIM, "models,functions", "driver.py", [], None),
    ("ddim_ddpm", DDIM, "models,functions", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "deeplab_mobilenet": _DEEPLAB_DRIVER.format(factory="deeplabv3plus_mobilenet", separable="",
                                                criterion=_CROSS_ENTROPY),
    "deeplab_resnet_focal": _DEEPLAB_DRIVER.format(factory="deeplabv3_resnet50", separable="", criterion=_FOCAL),
    "deeplab_separable": _DEEPLAB_DRIVER.format(
        factory="deeplabv3plus_mobilenet", separable="network.convert_to_separable_conv(model.classifier)\n",
        criterion=_CROSS_ENTROPY),
    "vit_plain": _VIT_DRIVER.format(config="ViT-B_16", size=16, shape='config.patches["size"] = (4, 4)'),
    "vit_r50_hybrid": _VIT_DRIVER.format(config="R50-ViT-B_16", size=32, shape="config.resnet.num_layers = (1, 1, 1)\nconfig.patches.grid = (2, 2)"),
    "ddim_generalized": _DDIM_DRIVER.format(sampler="generalized_steps", seq="list(range(0, 20, 4))",
                                            eta=", eta=0.5", optimizer="Adam", lr=2e-4),
    "ddim_ddpm": _DDIM_DRIVER.format(sampler="ddpm_steps", seq="list(range(0, 20))", eta="", optimizer="SGD",
                                     lr=1e-3),
}

FILES = {**{name: {"visdom.py": _VISDOM} for name, *_ in PROGRAMS if name.startswith("deeplab_")},
         **{name: {"ml_collections/__init__.py": _ML_COLLECTIONS} for name, *_ in PROGRAMS
            if name.startswith("vit_")}}

TORCH_FILES = {**{name: dict(_TV_FOR_DEEPLAB) for name, *_ in PROGRAMS if name.startswith("deeplab_")},
               **{name: {".cpu": _ddim_on_cpu} for name, *_ in PROGRAMS if name.startswith("ddim_")}}

LOSSES = {name: 4 for name, *_ in PROGRAMS}
