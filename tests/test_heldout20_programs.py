"""Constructs found by bench/real_world.py --set heldout20 (bench/_rw_heldout20.py: lukemelas/EfficientNet-PyTorch,
kenshohara/3D-ResNets-PyTorch) in programs the converter was never run on, each reduced to a minimal torch snippet
of our own run against its conversion."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .parity.harness import program_weights_match_torch  # noqa: E402

# ------------------------------------------------------------------ a convolution's one-value list stride
ONE_VALUE_STRIDE = """
import math
import torch
from torch import nn
import torch.nn.functional as F


class SamePadConv(nn.Conv2d):
    def __init__(self, cin, cout, kernel_size, stride=1, image_size=None, **kwargs):
        super().__init__(cin, cout, kernel_size, stride, **kwargs)
        self.stride = self.stride if len(self.stride) == 2 else [self.stride[0]] * 2
        kh, kw = self.weight.size()[-2:]
        oh = math.ceil(image_size / self.stride[0])
        pad = max((oh - 1) * self.stride[0] + (kh - 1) * self.dilation[0] + 1 - image_size, 0)
        self.static_padding = nn.ZeroPad2d((pad // 2, pad - pad // 2, pad // 2, pad - pad // 2))

    def forward(self, x):
        x = self.static_padding(x)
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


strides = [[2], [1]]
model = nn.Sequential(SamePadConv(3, 4, 3, stride=strides[0], image_size=8, bias=False),
                      nn.Conv2d(4, 4, 3, stride=strides[1], dilation=[1], padding=1),
                      nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + 0.1 * i))
x = torch.linspace(-1, 1, 2 * 3 * 8 * 8).reshape(2, 3, 8, 8)
y = torch.tensor([0, 2])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(3):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
weights = list(model.parameters())
"""


@pytest.mark.parametrize("graph", [False, True])
def test_convolution_with_a_one_value_list_stride(graph):
    """EfficientNet's BlockArgs hold `stride=[2]` (a list of one value, which torch's convolutions apply to both
    dimensions), given to an nn.Conv2d subclass through `super().__init__(..., stride, **kwargs)` and to nn.Conv2d
    itself. Before: MindSpore's Conv2d raised a TypeError ("input type must be integer or tuple[int]") naming no
    line of the program. Now _ms_compat.Conv2d / conv_size take the one value as it: the weights after three SGD
    steps vs torch, both modes."""
    code, _ = program_weights_match_torch(ONE_VALUE_STRIDE, graph)
    assert "class SamePadConv(_ms_compat.Conv2d)" in code, code


# ------------------------------------------------------------------ isinstance of a legacy tensor type, compiled
LEGACY_ISINSTANCE = """
import torch
from functools import partial
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(2, 2, 3, padding=1)
        self.conv = nn.Conv2d(2, 4, 3, stride=2, padding=1)
        self.shortcut = partial(self._pad_shortcut, planes=4, stride=2)
        self.fc = nn.Linear(4, 3)

    def _pad_shortcut(self, x, planes, stride):
        out = F.avg_pool2d(x, kernel_size=1, stride=stride)
        zero_pads = torch.zeros(out.size(0), planes - out.size(1), out.size(2), out.size(3))
        if isinstance(out.data, torch.cuda.FloatTensor):
            zero_pads = zero_pads.cuda()
        return torch.cat([out.data, zero_pads], dim=1)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        y = self.conv(x) + self.shortcut(x)
        return self.fc(y.mean((2, 3)))


model = Net()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + 0.1 * i))
x = torch.linspace(-1, 1, 2 * 2 * 6 * 6).reshape(2, 2, 6, 6).requires_grad_()
y = torch.tensor([0, 2])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(3):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
kinds = [isinstance(x.data, torch.FloatTensor), isinstance(y, (torch.LongTensor, torch.IntTensor)),
         isinstance(y, torch.FloatTensor)]
weights = list(model.parameters()) + [torch.tensor([float(k) for k in kinds])]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_isinstance_of_legacy_tensor_types_in_a_compiled_step(graph):
    """3D-ResNets' shortcut 'A': a `functools.partial` of a method that pads the channels with torch.zeros, tests
    `isinstance(out.data, torch.cuda.FloatTensor)` and concatenates `out.data` (no gradient through the
    shortcut). Before: the legacy type became _ms_compat.FloatTensor, an object a compiled graph's isinstance does
    not take (GRAPH compilation stopped: "isinstance() arg 2 must be a type"). Now
    `_ms_compat.legacy_isinstance(x, T, ...)`: the weights after three SGD steps vs torch in both modes, and the
    isinstance results of float and int tensors against FloatTensor / (LongTensor, IntTensor)."""
    code, _ = program_weights_match_torch(LEGACY_ISINSTANCE, graph)
    assert "_ms_compat.legacy_isinstance(out.data, _ms_compat.FloatTensor)" in code, code


# ------------------------------------------------------------------ `isinstance(m, A) or isinstance(m, B)` of BatchNorms
BATCHNORM_OR_INIT = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv3d(2, 4, 3, padding=1), nn.BatchNorm3d(4), nn.ReLU(),
                                      nn.Conv3d(4, 4, 1), nn.BatchNorm3d(4))
        self.head = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 3)
        for m in self.modules():
            if isinstance(m, nn.Conv3d):
                nn.init.constant_(m.weight, 0.05)
                nn.init.constant_(m.bias, 0.01)
            elif isinstance(m, nn.BatchNorm3d) or isinstance(m, nn.BatchNorm2d):
                m.weight.data.fill_(0.5)
                m.bias.data.fill_(0.25)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0)
        with torch.no_grad():
            self.fc.weight.copy_(torch.linspace(-0.5, 0.5, 12).reshape(3, 4))

    def forward(self, x):
        y = self.features(x).mean(2)
        return self.fc(torch.relu(self.head(y)).mean((2, 3)))


model = Net()
x = torch.linspace(-1, 1, 2 * 2 * 3 * 4 * 4).reshape(2, 2, 3, 4, 4) ** 2
y = torch.tensor([0, 2])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
weights = list(model.parameters())
"""


@pytest.mark.parametrize("graph", [False, True])
def test_batchnorm_parameters_under_isinstance_alternatives(graph):
    """3D-ResNets' DenseNet initialises `elif isinstance(m, nn.BatchNorm3d) or isinstance(m, nn.BatchNorm2d):
    m.weight.data.fill_(1)`. Before: the `or` of two isinstance() tests narrowed nothing, `m.weight` stayed as
    written and the model's construction stopped with "AttributeError: The 'BatchNorm3d' object has no attribute
    'weight'" (the tuple form `isinstance(m, (nn.BatchNorm3d, nn.BatchNorm2d))` chose nothing either: both
    classes name it gamma, but MindSpore's BatchNorm3d keeps its parameters on the BatchNorm2d it runs). Now the `or` narrows
    as the tuple does, and each access chooses by the cell (`m.gamma`, or `m.bn2d.gamma` where the cell has
    a bn2d): the weights after three SGD steps vs torch, both modes."""
    code, _ = program_weights_match_torch(BATCHNORM_OR_INIT, graph)
    assert "m.bn2d.gamma if hasattr(m, 'bn2d')" in code, code
