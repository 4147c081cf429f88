"""The `heldout54` set of bench/real_world.py (`--set heldout54`): rwightman/gen-efficientnet-pytorch (geffnet: the
EfficientNet / MixNet / MobileNetV3 family built from block-definition strings, with its own activations, whose
in-place forms an `inplace` flag chooses, and its memory-efficient custom autograd Functions) and
gpleiss/efficient_densenet_pytorch (a DenseNet-BC whose layers concatenate the features so far through
`torch.utils.checkpoint.checkpoint(fn, *prev_features)`, initialized by `param.data.normal_().mul_(s)`), converted as
a new user would convert them, through drivers of ours calling their documented entry points.

    python bench/real_world.py --mirrors /work/.mirror --set heldout54 [--only geffnet_b0,densenet_efficient]

- geffnet (the package as it is): a driver builds the model with `num_classes=5`, trains it three SGD steps (lr
  1e-3: at 1e-2 with momentum the third loss fell to 1.4e-03, where float32 rounding alone moves it by 1e-02 of
  itself) on four 3x64x64 images (drawn by torch.randn: the runner's matched stream), prints each loss, then the
  mean |logit| in eval mode as a VALUE.
  - geffnet_b0: `geffnet.efficientnet_b0` (swish through activations_me's custom autograd Function, squeeze-excite,
    depthwise convolutions with "same" padding).
  - geffnet_mixnet: `geffnet.mixnet_s` (mixed depthwise kernel sizes split over channel groups).
  - geffnet_mnv3: `geffnet.mobilenetv3_large_100` (hard swish and hard sigmoid of activations_me: custom autograd
    Functions, PYNATIVE mode only: GRAPH stops with MigrationError naming activations_me's line).
  - geffnet_b0_plain_act: `geffnet.config.set_exportable(True)` first, so the activations are activations.py's
    plain functions (`return x.mul_(x.sigmoid()) if inplace else x.mul(x.sigmoid())`).
- efficient_densenet_pytorch (models/ as it is): a driver builds `DenseNet(growth_rate=4, block_config=(2, 2, 2),
  num_init_features=8, bn_size=2, small_inputs=True, num_classes=5)`, trains three SGD steps on four 3x16x16
  images, prints the losses, then the mean |logit| in eval mode (reading the BatchNorm running statistics the
  training left) as a VALUE.
  - densenet_efficient: `efficient=True`: each layer's bottleneck through checkpoint, whose backward recomputes it
    (its BatchNorm updates its running statistics twice per step).
  - densenet_plain: `efficient=False`.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

GEFFNET = "rwightman+gen-efficientnet-pytorch@771ce082b2ce6d033f55b3d47c1f77389ad3c180"
DENSENET = "gpleiss+efficient_densenet_pytorch@d2d0629dae2912ec4f0444fab5e3df4c375c44fd"

# both drivers: build `model`, train it three steps on `images`, print the losses, then the eval-mode logits
_DRIVER = '''
import torch
import torch.nn.functional as F
{build}
images = torch.randn(4, 3, {size}, {size})
labels = torch.tensor([0, 3, 1, 4])
optimizer = torch.optim.SGD(model.parameters(), {optimizer})
model.train()
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
model.eval()
with torch.no_grad():
    print("VALUE eval_logits", float(model(images).abs().mean()))
'''


def _geffnet(factory, setup=""):
    return _DRIVER.format(build=f"import geffnet\n{setup}\nmodel = geffnet.{factory}(num_classes=5)", size=64,
                          optimizer="lr=0.001")


def _densenet(efficient):
    return _DRIVER.format(build="from models import DenseNet\n\nmodel = DenseNet(growth_rate=4, block_config=(2, 2, "
                                "2), num_init_features=8, bn_size=2, small_inputs=True,\n                 "
                                f"num_classes=5, efficient={efficient})", size=16, optimizer="lr=0.05, momentum=0.9")


# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("geffnet_b0", GEFFNET, "geffnet", "driver.py", [], None),
    ("geffnet_mixnet", GEFFNET, "geffnet", "driver.py", [], None),
    ("geffnet_mnv3", GEFFNET, "geffnet", "driver.py", [], None),
    ("geffnet_b0_plain_act", GEFFNET, "geffnet", "driver.py", [], None),
    ("densenet_efficient", DENSENET, "models", "driver.py", [], None),
    ("densenet_plain", DENSENET, "models", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "geffnet_b0": _geffnet("efficientnet_b0"),
    "geffnet_mixnet": _geffnet("mixnet_s"),
    "geffnet_mnv3": _geffnet("mobilenetv3_large_100"),
    "geffnet_b0_plain_act": _geffnet("efficientnet_b0", setup="geffnet.config.set_exportable(True)"),
    "densenet_efficient": _densenet(True),
    "densenet_plain": _densenet(False),
}
