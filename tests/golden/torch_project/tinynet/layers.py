"""Building blocks, written the way PyTorch projects usually are."""
from typing import Optional

import mindspore as ms
from mindspore import nn, ops
from . import _ms_compat


def conv3x3(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    """3x3 convolution with padding"""
    # _ms_compat.any_batch (helper): MindSpore's conv layers also taking torch's unbatched sample (C, *spatial), as a
    # batch of one
    return _ms_compat.any_batch.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, has_bias=False, pad_mode='pad', padding=1)


class BasicBlock(nn.Cell):
    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1,
                 downsample: Optional[nn.Cell] = None, norm_layer=None) -> None:
        super().__init__()
        if norm_layer is None:
            # _ms_compat.BatchNorm2d (helper): the class as a value: torch's momentum (MindSpore's is 1 - momentum),
            # isinstance() works
            norm_layer = _ms_compat.BatchNorm2d
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU()
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return ops.relu(out + identity)


class SqueezeExcite(nn.Cell):
    def __init__(self, channels: int, reduction: int = 4):
        super().__init__()
        self.fc1 = nn.Dense(channels, channels // reduction)
        self.fc2 = nn.Dense(channels // reduction, channels)

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        s = _ms_compat.reduce_mean(x, (2, 3))
        s = ops.sigmoid(self.fc2(ops.relu(self.fc1(s))))
        return x * s.view(s.shape[0], -1, 1, 1)
