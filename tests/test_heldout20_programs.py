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
