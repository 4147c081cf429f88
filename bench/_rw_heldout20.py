"""The `heldout20` set of bench/real_world.py (`--set heldout20`): two repositories the converter was never run on,
converted as a new user would convert them, their models trained for a few steps by short drivers (our code, the
repositories' own modules, on small synthetic data drawn from fixed seeds).

    python bench/real_world.py --mirrors /work/.mirror --set heldout20 [--only effnet_static,r3d_resnet10]

- lukemelas/EfficientNet-PyTorch (efficientnet_pytorch/model.py, utils.py): `EfficientNet.from_name('efficientnet-b0',
  image_size=..., num_classes=10, width_coefficient=0.5, depth_coefficient=0.5, ...)` (the namedtuple GlobalParams
  `_replace`d by the overrides, BlockDecoder's regular-expression block strings, round_filters/round_repeats),
  trained on eight 64x64 synthetic images (BatchNorm's batch statistics over
  2x2 maps at the last stage, not over one value per image, which parts torch's own float32 and float64 runs):
  - effnet_static: image_size=64, so every convolution is a Conv2dStaticSamePadding (`functools.partial` of the
    class, an nn.ZeroPad2d or nn.Identity computed in __init__, F.conv2d with the module's own stride list),
    the memory-efficient swish (SwishImplementation, a torch.autograd.Function with ctx.save_for_backward and a
    hand-written backward), drop_connect_rate=0, SGD with momentum; then in eval mode extract_features and
    extract_endpoints (a dict filled while `prev_x.size(2) > x.size(2)`) printed.
  - effnet_dynamic: image_size=None: Conv2dDynamicSamePadding (F.pad computed from x.size() in forward), after
    `model.set_swish(memory_efficient=False)` (nn.SiLU), drop_connect_rate=0.2, Adam. MBConvBlock never takes its
    skip connection (nor drop_connect), in torch too: `self._block_args.stride == 1` compares BlockDecoder's list
    `[1]` with an int. The driver applies utils.drop_connect to the logits itself (training mode: `random_tensor
    = keep_prob; random_tensor += torch.rand([batch, 1, 1, 1])`, a float `+=` a tensor, floored), the draws
    aligned by the runner.
  A custom autograd.Function in the import closure makes the converted programs run in PYNATIVE mode (their
  "graph" column is that mode too).
- kenshohara/3D-ResNets-PyTorch (models/, model.py, training.py, utils.py): video models on 4x3x8x32x32 clips,
  trained by training.py's own train_epoch (a DataLoader of ours over a TensorDataset, CrossEntropyLoss, SGD,
  utils.AverageMeter, calculate_accuracy's topk/t()/eq, utils.Logger writing tab-separated logs through csv):
  - r3d_resnet10: model.generate_model(opt) with opt.model='resnet', depth 10, resnet_widen_factor=0.25,
    shortcut 'B' (Conv3d + BatchNorm3d downsample), in-place ReLUs and `out += residual`.
  - r3d_resnet18_a: depth 18 with shortcut 'A': the downsample is a `functools.partial` of
    ResNet._downsample_basic_block (F.avg_pool3d with kernel 1, torch.zeros of the missing channels,
    `isinstance(out.data, torch.cuda.FloatTensor)`, torch.cat of out.data: the shortcut carries no gradient).
  - r3d_resnet2p1d: model.generate_model(opt) with opt.model='resnet2p1d' (the (2+1)D factorised convolutions).
  - r3d_wide: wide_resnet.generate_model(50, k=2, widen_factor=0.125) (WideBottleneck, expansion 2).
  - r3d_resnext: resnext.ResNeXt on small planes: `utils.partialclass` (a class made by a function,
    `__init__ = partialmethod(cls.__init__, cardinality=...)`) of a subclass of ResNeXtBottleneck (the driver's:
    the repository's takes `inplanes` where ResNet passes `in_planes=`, a TypeError in torch), grouped Conv3d;
    ResNeXt passes n_classes positionally into ResNet's widen_factor (the repository's own ordering), which the
    driver's sizes take into account.
  - r3d_densenet: densenet.DenseNet small (an nn.Sequential of an OrderedDict, add_module'd _DenseBlock and
    _Transition sequences, `super().forward(x)` of a Sequential subclass, torch.cat of features,
    nn.init.kaiming_normal (the deprecated alias) and kaiming_normal_, F.adaptive_avg_pool3d).
  utils.py imports sklearn.metrics (not installed on either side): the drivers give it a stand-in module.
  (main.py is not run: its opts, datasets of video frames, and CUDA devices. pre_act_resnet.py is not run: its
  blocks take `inplanes` where resnet.ResNet._make_layer passes `in_planes=`, a TypeError in torch itself.)
  All but r3d_resnet10 run without the max pool (no_max_pool=True): BatchNorm3d over the last layers' 1x2x2 maps
  of four clips, not over four values (whose batch statistics make torch's own float32 and float64 runs part
  at the first loss).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

EFFNET = "lukemelas+EfficientNet-PyTorch@7e8b0d312162f335785fb5dcfa1df29a75a1783a"
R3D = "kenshohara+3D-ResNets-PyTorch@540a0ea1abaee379fa3651d4d5afbd2d667a1f49"
_R3D_PARTS = "models,model.py,training.py,utils.py"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("effnet_static", EFFNET, "efficientnet_pytorch", "driver.py", [], None),
    ("effnet_dynamic", EFFNET, "efficientnet_pytorch", "driver.py", [], None),
    ("r3d_resnet10", R3D, _R3D_PARTS, "driver.py", [], None),
    ("r3d_resnet18_a", R3D, _R3D_PARTS, "driver.py", [], None),
    ("r3d_resnet2p1d", R3D, _R3D_PARTS, "driver.py", [], None),
    ("r3d_wide", R3D, _R3D_PARTS, "driver.py", [], None),
    ("r3d_resnext", R3D, _R3D_PARTS, "driver.py", [], None),
    ("r3d_densenet", R3D, _R3D_PARTS, "driver.py", [], None),
]

DEPS: dict = {}

_EFFNET = '''
import torch
import torch.nn.functional as F
from efficientnet_pytorch import EfficientNet
from efficientnet_pytorch.utils import drop_connect

torch.manual_seed(0)
model = EfficientNet.from_name("efficientnet-b0", image_size={image_size}, num_classes=10, width_coefficient=0.5,
                               depth_coefficient=0.5, dropout_rate=0.0, drop_connect_rate={drop_connect})
if not {memory_efficient}:
    model.set_swish(memory_efficient=False)
optimizer = {optimizer}
images = torch.randn(8, 3, 64, 64)
labels = torch.randint(0, 10, (8,))
model.train()
for step in range(6):
    optimizer.zero_grad()
    loss = F.cross_entropy({logits}, labels)
    loss.backward()
    optimizer.step()
    print("step", step, float(loss))
model.eval()
with torch.no_grad():
    features = model.extract_features(images)
    endpoints = model.extract_endpoints(images)
    logits = model(images)
# sums of magnitudes: a signed sum's cancellation would measure rounding, not the model
print("VALUE features_abs", float(features.abs().sum()))
print("VALUE features_sq", float((features ** 2).sum()))
for name, value in endpoints.items():
    print("VALUE", name, float(value.abs().sum()))
print("VALUE logits_abs", float(logits.abs().sum()))
'''

# utils.py imports sklearn.metrics, which is not installed on either side: a stand-in module
_R3D = '''
import argparse
import sys
import types
from pathlib import Path

_sklearn = types.ModuleType("sklearn")
_sklearn.metrics = types.ModuleType("sklearn.metrics")
_sklearn.metrics.precision_recall_fscore_support = None
sys.modules["sklearn"] = _sklearn
sys.modules["sklearn.metrics"] = _sklearn.metrics

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import model as model_module
from models import resnext, wide_resnet, densenet
from training import train_epoch
from utils import Logger, calculate_accuracy

torch.manual_seed(0)
opt = argparse.Namespace(model="resnet", model_depth=10, n_classes=4, n_input_channels=3, resnet_shortcut="B",
                         conv1_t_size=3, conv1_t_stride=1, no_max_pool=True, resnet_widen_factor=0.25,
                         wide_resnet_k=2, resnext_cardinality=4)
{build}
clips = torch.randn(16, 3, 8, 32, 32)
targets = torch.randint(0, 4, (16,))
loader = DataLoader(TensorDataset(clips, targets), batch_size=4, shuffle=True)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.005, momentum=0.9, weight_decay=1e-3)
out_dir = Path("logs")
out_dir.mkdir(exist_ok=True)
batch_logger = Logger(out_dir / "train_batch.log", ["epoch", "batch", "iter", "loss", "acc", "lr"])
epoch_logger = Logger(out_dir / "train.log", ["epoch", "loss", "acc", "lr"])
for epoch in range(1, 3):
    train_epoch(epoch, loader, net, criterion, optimizer, torch.device("cpu"), 0.005, epoch_logger, batch_logger)
net.eval()
with torch.no_grad():
    outputs = net(clips)
print("VALUE logits", float(outputs.sum()))
print("VALUE logits_abs", float(outputs.abs().sum()))
print("VALUE accuracy", calculate_accuracy(outputs, targets))
'''

_BUILDS = {
    "r3d_resnet10": "opt.no_max_pool = False\nnet = model_module.generate_model(opt)",
    "r3d_resnet18_a": 'opt.model_depth = 18\nopt.resnet_shortcut = "A"\nnet = model_module.generate_model(opt)',
    "r3d_resnet2p1d": 'opt.model = "resnet2p1d"\nnet = model_module.generate_model(opt)',
    "r3d_wide": "net = wide_resnet.generate_model(50, k=2, n_classes=4, conv1_t_size=3, no_max_pool=True, "
                "widen_factor=0.125)",
    # ResNeXtBottleneck takes `inplanes` where ResNet._make_layer passes `in_planes=` (a TypeError in torch): the
    # driver's subclass takes the keyword. ResNeXt hands its n_classes to ResNet's widen_factor: planes
    # [8, 16, 32, 64] * 4 (multiples of 32, as the grouped convolutions need), the fc's cardinality 8 * 32 * 2 = 512
    # inputs
    "r3d_resnext": """
class Block(resnext.ResNeXtBottleneck):
    def __init__(self, in_planes, planes, cardinality, stride=1, downsample=None):
        super().__init__(in_planes, planes, cardinality, stride, downsample)


net = resnext.ResNeXt(Block, [1, 1, 1, 1], [8, 16, 32, 64], conv1_t_size=3, no_max_pool=True, cardinality=8,
                      n_classes=4)""",
    "r3d_densenet": "net = densenet.DenseNet(conv1_t_size=3, no_max_pool=True, growth_rate=8, "
                    "block_config=(2, 2, 2, 2), num_init_features=16, bn_size=2, num_classes=4)",
}

# Drivers: our own code, through the repositories' modules.
DRIVERS = {
    "effnet_static": _EFFNET.format(image_size=64, drop_connect=0.0, memory_efficient=True, logits="model(images)",
                                    optimizer="torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)"),
    # MBConvBlock's skip (and its drop_connect) is never taken, in torch too: BlockArgs.stride is a list ([1] == 1 is
    # False); the driver calls drop_connect on the logits itself
    "effnet_dynamic": _EFFNET.format(image_size=None, drop_connect=0.2, memory_efficient=False,
                                     logits="drop_connect(model(images)[:, :, None, None], p=0.2, "
                                            "training=True).flatten(1)",
                                     optimizer="torch.optim.Adam(model.parameters(), lr=1e-4)"),
    **{name: _R3D.format(build=build) for name, build in _BUILDS.items()},
}
