"""The `heldout41` set of bench/real_world.py (`--set heldout41`): sgrvinod's a-PyTorch-Tutorial-to-Super-Resolution
and a-PyTorch-Tutorial-to-Object-Detection, each repository's .py files converted as a new user would convert them,
driven by programs of ours that import their modules.

    python bench/real_world.py --mirrors /work/.mirror --set heldout41 [--only sr_srresnet,od_ssd]

torchvision does not import next to this CPU torch, and both repositories read pretrained weights from it
(Super-Resolution's TruncatedVGG19 asks torchvision for a pretrained vgg19; Object-Detection's
VGGBase.load_pretrained_layers copies the state_dict of a pretrained vgg16 by position and decimates its two
fully connected layers into conv6/conv7). Every program gets a `torchvision` package of ours,
written before the conversion and converted with the project (the same code on both sides, nothing downloaded):
models.vgg16 is VGG-16's layout with its real sizes (13 convolutions of 64..512 channels, a classifier of
Linear(25088, 4096), Linear(4096, 4096), Linear(4096, 1000)), randomly initialised whatever `pretrained` says;
models.vgg19 is VGG-19's layout (convolutions, in-place ReLUs, max pools in its order) with narrow channels (8 to
32); transforms.functional holds the names utils.py imports, none of them called here.

- sr_srresnet: models.SRResNet (kernels 9 and 3, 16 channels, 2 blocks, scaling 4) trained by train_srresnet.train
  (nn.MSELoss, Adam over the parameters that require a gradient, as main() filters them, the module's grad_clip
  set to 0.01 so that utils.clip_gradient clamps every gradient in place) for 3 batches of 2 random 8x8 inputs and
  32x32 targets: 3 losses. VALUEs: the trained parameters' sums, the eval-mode output of a probe batch, and
  utils.convert_image on tensors ('[-1, 1]' to '[0, 255]', '[0, 1]' to 'imagenet-norm' on a 3-D and a 4-D image,
  '[-1, 1]' to 'y-channel': the border crop and the matmul with the RGB weights).
- sr_srgan: models.Generator (16 channels, 2 blocks), models.Discriminator(3, 8, n_blocks=4, fc_size=1024) (an
  adaptive pool from 8x8 to 6x6), models.TruncatedVGG19(5, 4) over the stand-in's vgg19 in eval mode,
  utils.adjust_learning_rate(0.1) on both Adam optimizers as main() does at its decay epoch, then
  train_srgan.train for 2 batches (the generator's perceptual loss: MSE between the truncated VGG's features of the
  super-resolved and the target images plus beta times BCEWithLogits against ones, then the discriminator's
  loss on the detached output and the targets; grad_clip 0.5): 4 losses. VALUEs: both networks' parameter sums,
  the learning rates, the discriminator's eval logits.
- od_ssd: model.SSD300(n_classes=3) (VGGBase filled by load_pretrained_layers from the stand-in's vgg16, the
  L2-normalised conv4_3 rescaled by a learned factor, the 8732 prior boxes), model.MultiBoxLoss(priors) (the
  jaccard matching of utils.find_jaccard_overlap, hard negative mining by sort, the L1 and cross-entropy sums),
  SGD with the biases at twice the rate, momentum 0.9, weight decay 5e-4, as train.py's main() builds it, and
  train.train for 2 batches of one random 300x300 image with two and one boxes: 2 losses. VALUEs: the parameters'
  sums after training, then model.detect_objects (softmax, per-class NMS written in torch with a uint8 suppress
  mask, top_k) on the eval outputs of a probe image: the number of boxes, their coordinates' and scores' weighted
  sums, the labels weighted by their positions (an exact integer).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

SR = "sgrvinod+a-PyTorch-Tutorial-to-Super-Resolution@c30556bc79a9d43539f2d658722bcb7ff5011ddb"
OD = "sgrvinod+a-PyTorch-Tutorial-to-Object-Detection@5d5b75968c3cf1ffd2718bf828a7560b7ee8e8b5"

_SR_FILES = "models.py,utils.py,datasets.py,train_srresnet.py,train_srgan.py,eval.py,super_resolve.py"
_OD_FILES = "model.py,utils.py,datasets.py,train.py,eval.py,detect.py"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("sr_srresnet", SR, _SR_FILES, "driver.py", [], None),
    ("sr_srgan", SR, _SR_FILES, "driver.py", [], None),
    ("od_ssd", OD, _OD_FILES, "driver.py", [], None),
]

DEPS: dict = {}

_MODELS = '''
"""A stand-in written by bench/_rw_heldout41.py: VGG layouts under torchvision's names, random weights."""
import torch.nn as nn


def _layers(plan):
    out, cin = [], 3
    for width in plan:
        if width == "M":
            out.append(nn.MaxPool2d(2, 2))
        else:
            out += [nn.Conv2d(cin, width, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
            cin = width
    return nn.Sequential(*out)


class VGG(nn.Module):
    def __init__(self, plan, last, hidden):
        super().__init__()
        self.features = _layers(plan)
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(nn.Linear(last * 49, hidden), nn.ReLU(True), nn.Dropout(),
                                        nn.Linear(hidden, hidden), nn.ReLU(True), nn.Dropout(),
                                        nn.Linear(hidden, 1000))

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


def vgg16(pretrained=False, **kwargs):
    """VGG-16's sizes (what load_pretrained_layers reshapes), random weights"""
    plan = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]
    return VGG(plan, 512, 4096)


def vgg19(pretrained=False, **kwargs):
    """VGG-19's order of layers with narrow channels"""
    plan = [8, 8, "M", 16, 16, "M", 16, 16, 16, 16, "M", 32, 32, 32, 32, "M", 32, 32, 32, 32, "M"]
    return VGG(plan, 32, 64)
'''

_FUNCTIONAL = '''
"""A stand-in written by bench/_rw_heldout41.py (the PIL conversions; nothing here is called)."""


def _absent(*args, **kwargs):
    raise NotImplementedError("torchvision stand-in")


to_tensor = to_pil_image = resize = normalize = adjust_brightness = adjust_contrast = _absent
adjust_saturation = adjust_hue = hflip = _absent
'''

_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout41.py."""\n'
                               'from . import models, transforms\n',
    "torchvision/models.py": _MODELS,
    "torchvision/transforms/__init__.py": '"""A stand-in written by bench/_rw_heldout41.py."""\n'
                                          'from . import functional\n\n\nclass Compose:\n    pass\n\n\n'
                                          'class ToTensor:\n    pass\n\n\nclass Normalize:\n    pass\n\n\n'
                                          'class Resize:\n    pass\n',
    "torchvision/transforms/functional.py": _FUNCTIONAL,
}

FILES = {name: dict(_TORCHVISION) for name, *_ in PROGRAMS}

LOSSES = {"sr_srresnet": 3, "sr_srgan": 4, "od_ssd": 2}

_SUMS = '''

def sums(tag, net):
    for key, q in net.named_parameters():
        print("VALUE %s_%s" % (tag, key), float(q.detach().abs().sum()))


def weighted(t):
    t = t.float()
    return float((t * torch.linspace(-1, 1, t.numel()).view(t.shape)).sum())
'''

DRIVERS = {
    "sr_srresnet": '''
import torch
from torch import nn

import train_srresnet
import utils
from models import SRResNet

torch.manual_seed(0)
''' + _SUMS + '''

net = SRResNet(9, 3, 16, 2, 4)
opt = torch.optim.Adam([q for q in net.parameters() if q.requires_grad], lr=1e-3)
batches = [(torch.randn(2, 3, 8, 8), torch.rand(2, 3, 32, 32) * 2 - 1) for _ in range(3)]
train_srresnet.grad_clip = 0.01
train_srresnet.train(train_loader=batches, model=net, criterion=nn.MSELoss(), optimizer=opt, epoch=0)
sums("trained", net)
net.eval()
with torch.no_grad():
    out = net(torch.randn(2, 3, 8, 8))
print("VALUE probe", weighted(out))
pic = torch.rand(2, 3, 12, 12) * 2 - 1
print("VALUE to255", weighted(utils.convert_image(pic, source="[-1, 1]", target="[0, 255]")))
print("VALUE norm3", weighted(utils.convert_image(pic[0] * 0.5 + 0.5, source="[0, 1]", target="imagenet-norm")))
print("VALUE norm4", weighted(utils.convert_image(pic * 0.5 + 0.5, source="[0, 1]", target="imagenet-norm")))
luma = utils.convert_image(pic, source="[-1, 1]", target="y-channel")
print("VALUE luma_shape", float(luma.numel()))
print("VALUE luma", weighted(luma))
''',
    "sr_srgan": '''
import torch
from torch import nn

import train_srgan
import utils
from models import Discriminator, Generator, TruncatedVGG19

torch.manual_seed(0)
''' + _SUMS + '''

gen = Generator(9, 3, 16, 2, 4)
disc = Discriminator(kernel_size=3, n_channels=8, n_blocks=4, fc_size=1024)
features = TruncatedVGG19(i=5, j=4)
features.eval()
opt_g = torch.optim.Adam([q for q in gen.parameters() if q.requires_grad], lr=1e-3)
opt_d = torch.optim.Adam([q for q in disc.parameters() if q.requires_grad], lr=1e-3)
utils.adjust_learning_rate(opt_g, 0.1)
utils.adjust_learning_rate(opt_d, 0.1)
print("VALUE lr_g", opt_g.param_groups[0]["lr"])
print("VALUE lr_d", opt_d.param_groups[0]["lr"])
batches = [(torch.randn(2, 3, 8, 8), torch.randn(2, 3, 32, 32)) for _ in range(2)]
train_srgan.grad_clip = 0.5
train_srgan.train(train_loader=batches, generator=gen, discriminator=disc, truncated_vgg19=features,
                  content_loss_criterion=nn.MSELoss(), adversarial_loss_criterion=nn.BCEWithLogitsLoss(),
                  optimizer_g=opt_g, optimizer_d=opt_d, epoch=0)
sums("gen", gen)
sums("disc", disc)
disc.eval()
with torch.no_grad():
    print("VALUE logits", weighted(disc(torch.randn(3, 3, 32, 32))))
''',
    "od_ssd": '''
import torch

import train
from model import MultiBoxLoss, SSD300

torch.manual_seed(0)
''' + _SUMS + '''

net = SSD300(n_classes=3)
loss_fn = MultiBoxLoss(priors_cxcy=net.priors_cxcy)
slopes, offsets = [], []
for key, q in net.named_parameters():
    if q.requires_grad:
        (offsets if key.endswith(".bias") else slopes).append(q)
rate = 1e-3
opt = torch.optim.SGD(params=[{"params": offsets, "lr": 2 * rate}, {"params": slopes}], lr=rate, momentum=0.9,
                      weight_decay=5e-4)
batches = [
    (torch.rand(1, 3, 300, 300), [torch.tensor([[0.1, 0.2, 0.5, 0.6], [0.4, 0.3, 0.9, 0.95]])],
     [torch.tensor([1, 2])], [torch.tensor([0, 0])]),
    (torch.rand(1, 3, 300, 300), [torch.tensor([[0.25, 0.25, 0.7, 0.8]])], [torch.tensor([2])],
     [torch.tensor([0])]),
]
train.train(train_loader=batches, model=net, criterion=loss_fn, optimizer=opt, epoch=0)
sums("trained", net)
net.eval()
with torch.no_grad():
    locs, scores = net(torch.rand(1, 3, 300, 300))
print("VALUE locs", weighted(locs))
print("VALUE scores", weighted(scores))
boxes, labels, confidences = net.detect_objects(locs, scores * 3, min_score=0.5, max_overlap=0.45, top_k=50)
print("VALUE n_boxes", float(boxes[0].size(0)))
print("VALUE boxes", weighted(boxes[0]))
print("VALUE labels", float((labels[0] * torch.arange(1, labels[0].numel() + 1)).sum()))
print("VALUE confidences", weighted(confidences[0]))
''',
}
