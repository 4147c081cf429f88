"""The `heldout40` set of bench/real_world.py (`--set heldout40`): facebookresearch/simsiam,
facebookresearch/barlowtwins and ritheshkumar95/pytorch-vqvae, each repository's .py files converted as a new user
would convert them, driven by programs of ours that import their modules.

    python bench/real_world.py --mirrors /work/.mirror --set heldout40 [--only simsiam_step,barlow_lars]

torchvision does not import next to this CPU torch. simsiam and barlowtwins take their backbone from
torchvision.models (main_simsiam.py's `models.__dict__[arch]`, main.py's `torchvision.models.resnet50`): those two
programs get a `torchvision` package of ours written before the conversion and converted with the project (so the
same small backbone runs on both sides): a two-stage residual network of BasicBlock-style blocks (8 and 16
channels, BatchNorm, zero_init_residual zeroing each block's last BatchNorm weight, an adaptive average pool and
an `fc` Linear of num_classes outputs) under the names resnet18 and resnet50; the transforms and datasets names
those files read are empty classes (nothing calls them). pytorch-vqvae's scripts import torchvision's transforms,
datasets and utils (converted by msmigrate's records) and tensorboardX (not installed here): the torch side gets a
torchvision stand-in after the conversion, both sides a tensorboardX stand-in whose SummaryWriter records nothing.

- simsiam_step: simsiam.builder.SimSiam(models.__dict__["resnet18"], dim=32, pred_dim=8) (the projector's three
  Linear+BatchNorm1d layers, the frozen fc bias, the predictor), nn.CosineSimilarity(dim=1), SGD (momentum 0.9,
  weight decay 1e-4) over the two parameter groups of --fix-pred-lr (the predictor's `fix_lr`), the learning rate
  set per epoch by main_simsiam.adjust_learning_rate (cosine over 3 epochs), and main_simsiam.train run for 3
  epochs of 2 two-view batches of 4 random 3x16x16 images: 6 losses (the negative cosine similarity, stop-gradient
  on z1/z2). VALUEs: each group's learning rate per epoch, the parameters' sums after training, the fc bias (which
  must not move), the eval-mode outputs on a probe batch.
- barlow_lars: main.py's BarlowTwins (args.projector "32-32", lambd 0.0051, batch size 4) around the stand-in's
  resnet50 (the small network with a 2048-wide Linear, then an `fc` that BarlowTwins replaces by nn.Identity, so
  that its projector sees the 2048 features it expects), the cross-correlation with
  `c.div_`, a one-process all_reduce (torch: gloo with a file store; converted: _ms_compat.init_process_group),
  `torch.diagonal(c).add_(-1).pow_(2)` and off_diagonal; the LARS optimizer built as main() builds it (weights and
  biases in two groups, weight_decay_filter and lars_adaptation_filter: exclude_bias_and_norm), main.py's
  adjust_learning_rate per step (a 6-batch loader: warm-up then cosine), 6 steps. VALUEs: off_diagonal of a 4x4
  matrix, the learning rates, the parameters' sums, LARS's momentum buffers' sums.
- vqvae_train: modules.VectorQuantizedVAE(3, 8, K=16) (its weights_init through `self.apply`), vqvae.train on 3
  batches of 2 random 3x16x16 images (Adam lr 2e-4, beta 1.0: the straight-through vq_st Function whose backward
  copies the gradient to the inputs and index_add_s it into the codebook, the commitment loss), then vqvae.test
  and generate_samples. VALUEs: the test losses, the reconstruction's sum, the codebook's and encoder's sums.
- vq_functions: functions.vq under no_grad (the indices), then two SGD steps (rate 1: each parameter moves by
  its gradient) on a weighted sum of vq_st's codes of an inputs parameter and a codebook parameter (its
  hand-written backward: the inputs' gradient copied, the codebook's index_add_), then two on
  VQEmbedding.straight_through of a 1x1 convolution's output (the straight-through gradient to the convolution,
  the codebook's through index_select, a commitment term). VALUEs: the indices, the parameters after each step.
- pixelcnn_prior: modules.GatedPixelCNN(16, 8, n_layers=3, n_classes=4) (GatedMaskedConv2d: make_causal zeroing
  the mask-A convolutions' last row and column through `weight.data[...]`, the class embedding, the gated
  activation), pixelcnn_prior.train on latents of a VectorQuantizedVAE (eval mode, called once first so that
  the runner gives both sides the weights of the networks built so far) for 3 batches (Adam), pixelcnn_prior.test.
  VALUEs: the validation loss, the prior's parameters' sums, the masked weights' sums.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

SIMSIAM = "facebookresearch+simsiam@a7bc1772896d0dad0806c51f0bb6f3b16d290468"
BARLOW = "facebookresearch+barlowtwins@8e8d284ca0bc02f88b92328e53f9b901e86b4a3c"
VQVAE = "ritheshkumar95+pytorch-vqvae@8d123c0d043bebc8734d37785dd13dd20e7e5e0e"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("simsiam_step", SIMSIAM, "simsiam,main_simsiam.py,main_lincls.py", "driver.py", [], None),
    ("barlow_lars", BARLOW, "main.py,evaluate.py,hubconf.py", "driver.py", [], None),
] + [(name, VQVAE, "modules.py,functions.py,vqvae.py,pixelcnn_prior.py,vae.py,pixelcnn_baseline.py,datasets.py,"
      "test_functions.py", "driver.py", [], None) for name in ("vqvae_train", "vq_functions", "pixelcnn_prior")]

DEPS: dict = {}

# A small backbone of ours under torchvision.models' names, converted with the project on both sides
_MODELS = '''
"""A stand-in written by bench/_rw_heldout40.py: a small residual network under torchvision's model names."""
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        skip = x if self.down is None else self.down(x)
        h = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(h)) + skip)


class TinyResNet(nn.Module):
    def __init__(self, num_classes=1000, zero_init_residual=False, width=16):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.stages = nn.Sequential(Block(8, 8, 1), Block(8, 16, 2))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, Block):
                    nn.init.constant_(m.bn2.weight, 0)

    def forward(self, x):
        h = self.avgpool(self.stages(self.stem(x)))
        return self.fc(h.flatten(1))


def resnet18(**kw):
    return TinyResNet(**kw)


class _Wide(nn.Module):
    """2048 features, as BarlowTwins' projector expects of resnet50 (its fc made the identity)"""

    def __init__(self, zero_init_residual=False):
        super().__init__()
        self.body = TinyResNet(num_classes=2048, zero_init_residual=zero_init_residual)
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(self.body(x))


def resnet50(num_classes=1000, zero_init_residual=False):
    return _Wide(zero_init_residual)
'''

_EMPTY = '"""A stand-in written by bench/_rw_heldout40.py (nothing here is called)."""\n\n\n'

_BACKBONE = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout40.py."""\n'
                               'from . import datasets, models, transforms\n',
    "torchvision/models.py": _MODELS,
    "torchvision/datasets.py": _EMPTY + "class ImageFolder:\n    pass\n",
    "torchvision/transforms.py": _EMPTY + "".join(f"class {n}:\n    pass\n\n\n" for n in (
        "Compose", "RandomResizedCrop", "RandomApply", "ColorJitter", "RandomGrayscale", "RandomHorizontalFlip",
        "ToTensor", "Normalize", "Resize", "CenterCrop", "GaussianBlur")),
}

_TENSORBOARDX = {"tensorboardX/__init__.py": '"""A stand-in written by bench/_rw_heldout40.py: records nothing."""\n'
                 '\n\nclass SummaryWriter:\n    def __init__(self, *args, **kwargs):\n        pass\n\n'
                 '    def add_scalar(self, *args, **kwargs):\n        pass\n\n'
                 '    def add_image(self, *args, **kwargs):\n        pass\n'}

FILES = {"simsiam_step": dict(_BACKBONE), "barlow_lars": dict(_BACKBONE),
         **{name: dict(_TENSORBOARDX) for name in ("vqvae_train", "vq_functions", "pixelcnn_prior")}}

# torchvision does not import next to this CPU torch: a stand-in for the vqvae torch side, after the conversion
_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout40.py."""\nfrom . import datasets, '
                               'transforms, utils\n',
    "torchvision/datasets.py": _EMPTY + "class MNIST:\n    pass\n\n\nclass FashionMNIST:\n    pass\n\n\n"
                                        "class CIFAR10:\n    pass\n",
    "torchvision/transforms.py": _EMPTY + "class Compose:\n    pass\n\n\nclass ToTensor:\n    pass\n\n\n"
                                          "class Normalize:\n    pass\n\n\nclass Resize:\n    pass\n",
    "torchvision/utils.py": _EMPTY + "def save_image(*args, **kwargs):\n    pass\n\n\n"
                                     "def make_grid(*args, **kwargs):\n    pass\n",
}

TORCH_FILES = {name: dict(_TORCHVISION) for name in ("vqvae_train", "vq_functions", "pixelcnn_prior")}

LOSSES = {"simsiam_step": 6, "barlow_lars": 6, "vqvae_train": 3, "vq_functions": 4, "pixelcnn_prior": 3}

_PARAM_SUMS = '''

def sums(tag, net):
    for key, q in net.named_parameters():
        print("VALUE %s_%s" % (tag, key), float(q.detach().abs().sum()))
'''

DRIVERS = {
    "simsiam_step": '''
import argparse

import torch
import torch.nn as nn
import torchvision.models as models

import main_simsiam
import simsiam.builder

torch.manual_seed(0)
''' + _PARAM_SUMS + '''

args = argparse.Namespace(epochs=3, gpu=None, print_freq=100)
model = simsiam.builder.SimSiam(models.__dict__["resnet18"], dim=32, pred_dim=8)
criterion = nn.CosineSimilarity(dim=1)
init_lr = 0.05 * 4 / 256 * 40
groups = [{"params": model.encoder.parameters(), "fix_lr": False},
          {"params": model.predictor.parameters(), "fix_lr": True}]
optimizer = torch.optim.SGD(groups, init_lr, momentum=0.9, weight_decay=1e-4)
for epoch in range(args.epochs):
    batches = [([torch.randn(4, 3, 16, 16), torch.randn(4, 3, 16, 16)], torch.zeros(4)) for _ in range(2)]
    main_simsiam.adjust_learning_rate(optimizer, init_lr, epoch, args)
    for g, group in enumerate(optimizer.param_groups):
        print("VALUE lr%d_%d" % (epoch, g), group["lr"])
    main_simsiam.train(batches, model, criterion, optimizer, epoch, args)
sums("trained", model)
print("VALUE fc_bias", float(model.encoder.fc[6].bias.abs().sum()))
model.eval()
with torch.no_grad():
    p1, p2, z1, z2 = model(torch.randn(4, 3, 16, 16), torch.randn(4, 3, 16, 16))
for name, out in (("p1", p1), ("p2", p2), ("z1", z1), ("z2", z2)):
    print("VALUE eval_%s" % name, float((out * torch.linspace(-1, 1, out.numel()).view(out.shape)).sum()))
''',
    "barlow_lars": '''
import argparse
import os
import tempfile

import torch
import torch.distributed as dist

import main as barlow

torch.manual_seed(0)
''' + _PARAM_SUMS + '''

store = os.path.join(tempfile.mkdtemp(), "group")
dist.init_process_group("gloo", init_method="file://" + store, rank=0, world_size=1)
square = torch.arange(16.0).view(4, 4)
print("VALUE off_diagonal", float((barlow.off_diagonal(square) * torch.arange(12.0)).sum()))

args = argparse.Namespace(projector="32-32", lambd=0.0051, batch_size=4, epochs=1, weight_decay=1e-6,
                          learning_rate_weights=0.2 * 100, learning_rate_biases=0.0048 * 100)
model = barlow.BarlowTwins(args)
weights = [q for q in model.parameters() if q.ndim != 1]
biases = [q for q in model.parameters() if q.ndim == 1]
optimizer = barlow.LARS([{"params": weights}, {"params": biases}], lr=0, weight_decay=args.weight_decay,
                        weight_decay_filter=True, lars_adaptation_filter=True)
loader = list(range(6))
for step in range(len(loader)):
    y1, y2 = torch.randn(4, 3, 16, 16), torch.randn(4, 3, 16, 16)
    barlow.adjust_learning_rate(args, optimizer, loader, step)
    print("VALUE lr_w%d" % step, optimizer.param_groups[0]["lr"])
    print("VALUE lr_b%d" % step, optimizer.param_groups[1]["lr"])
    optimizer.zero_grad()
    loss = model.forward(y1, y2)
    loss.backward()
    optimizer.step()
sums("trained", model)
for i, q in enumerate(weights + biases):
    if q.requires_grad:
        print("VALUE mu%d" % i, float(optimizer.state[q]["mu"].abs().sum()))
''',
    "vqvae_train": '''
import argparse

import torch

import vqvae
from modules import VectorQuantizedVAE
from tensorboardX import SummaryWriter

torch.manual_seed(0)
''' + _PARAM_SUMS + '''

args = argparse.Namespace(device="cpu", beta=1.0, steps=0)
model = VectorQuantizedVAE(3, 8, K=16)
optimizer = torch.optim.Adam(model.parameters(), lr=2e-4 * 10)
loader = [(torch.rand(2, 3, 16, 16) * 2 - 1, torch.zeros(2)) for _ in range(3)]
vqvae.train(loader, model, optimizer, args, SummaryWriter())
print("VALUE steps", args.steps)
held = [(torch.rand(2, 3, 16, 16) * 2 - 1, torch.zeros(2)) for _ in range(2)]
recons, quant = vqvae.test(held, model, args, SummaryWriter())
print("VALUE test_recons", recons)
print("VALUE test_vq", quant)
x_tilde = vqvae.generate_samples(held[0][0], model, args)
print("VALUE sample", float((x_tilde * torch.linspace(0, 1, x_tilde.numel()).view(x_tilde.shape)).sum()))
sums("trained", model)
''',
    "vq_functions": '''
import torch
import torch.nn as nn

from functions import vq, vq_st
from modules import VQEmbedding

torch.manual_seed(0)


class Held(nn.Module):
    """a codebook and inputs as parameters (values of ours, no draw: the module is never called, so the runner
    does not give the converted side torch's weights), SGD at rate 1 moves each by its gradient"""
    def __init__(self):
        super().__init__()
        self.codebook = nn.Parameter(torch.sin(torch.arange(24.0) * 0.7).view(6, 4))
        self.inputs = nn.Parameter(torch.cos(torch.arange(72.0) * 1.3).view(2, 3, 3, 4))
        self.proj = nn.Conv2d(4, 4, 1)
        self.emb = VQEmbedding(6, 4)


held = Held()
opt = torch.optim.SGD(held.parameters(), lr=1.0)
with torch.no_grad():     # a first module call: the runner gives the converted Held torch's weights there
    print("VALUE first_call", float(held.proj(torch.ones(1, 4, 1, 1)).sum()))
with torch.no_grad():
    indices = vq(held.inputs, held.codebook)
print("VALUE indices", float((indices.float() * torch.arange(18.0).view(2, 3, 3)).sum()))
ramp = torch.linspace(-1, 2, 72).view(2, 3, 3, 4)
for step in range(2):
    codes, flat = vq_st(held.inputs, held.codebook)
    print("VALUE flat%d" % step, float((flat.float() * torch.arange(18.0)).sum()))
    loss = (codes * ramp).sum() + (codes ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("VALUE inputs%d" % step, float((held.inputs * ramp).sum()))
    print("VALUE codebook%d" % step, float((held.codebook * torch.arange(24.0).view(6, 4)).sum()))
for step in range(2):
    z = held.proj(torch.randn(2, 4, 3, 3))
    z_st, z_bar = held.emb.straight_through(z)
    loss = ((z_st - 0.5) ** 2).mean() + ((z_bar - z.detach()) ** 2).mean() + 0.25 * ((z - z_bar.detach()) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("VALUE latents%d" % step, float((held.emb(z).float() * torch.arange(18.0).view(2, 3, 3)).sum()))
print("VALUE proj", float((held.proj.weight * torch.linspace(0, 1, 16).view(4, 4, 1, 1)).sum()))
print("VALUE emb", float((held.emb.embedding.weight * torch.arange(24.0).view(6, 4)).sum()))
''',
    "pixelcnn_prior": '''
import argparse

import torch

import pixelcnn_prior
from modules import GatedPixelCNN, VectorQuantizedVAE
from tensorboardX import SummaryWriter

torch.manual_seed(0)
''' + _PARAM_SUMS + '''

args = argparse.Namespace(device="cpu", k=16, steps=0)
model = VectorQuantizedVAE(3, 8, K=16)
model.eval()
prior = GatedPixelCNN(16, 8, n_layers=3, n_classes=4)
with torch.no_grad():     # a first call: the runner gives the converted networks torch's weights there
    x_tilde, z_e_x, z_q_x = model(torch.rand(2, 3, 16, 16) * 2 - 1)
print("VALUE first_call", float(x_tilde.abs().sum()))
optimizer = torch.optim.Adam(prior.parameters(), lr=3e-4 * 10)
loader = [(torch.rand(2, 3, 16, 16) * 2 - 1, torch.tensor([1, 3])) for _ in range(3)]
for i, (images, _) in enumerate(loader):
    print("VALUE batch%d" % i, float((images * torch.linspace(0, 1, images.numel()).view(images.shape)).sum()))
pixelcnn_prior.train(loader, model, prior, optimizer, args, SummaryWriter())
print("VALUE masked_v", float(prior.layers[0].vert_stack.weight.abs().sum()))
print("VALUE masked_h", float(prior.layers[0].horiz_stack.weight.abs().sum()))
held = [(torch.rand(2, 3, 16, 16) * 2 - 1, torch.tensor([0, 2])) for _ in range(2)]
print("VALUE valid", pixelcnn_prior.test(held, model, prior, args, SummaryWriter()))
sums("prior", prior)
''',
}
