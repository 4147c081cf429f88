import mindspore as ms
from mindspore import nn, ops

from .layers import BasicBlock, SqueezeExcite


class TinyResNet(nn.Cell):
    """A small ResNet with a squeeze-excite head and a LayerNorm classifier."""

    def __init__(self, num_classes: int = 10, width: int = 16):
        super().__init__()
        self.stem = nn.SequentialCell(
            nn.Conv2d(3, width, kernel_size=3, has_bias=False, pad_mode='pad', padding=1),
            nn.BatchNorm2d(width, momentum=0.95),
            nn.ReLU(),
            nn.MaxPool2d(2, stride=2, pad_mode='pad'),
        )
        down = nn.SequentialCell(nn.Conv2d(width, 2 * width, 1, stride=2, has_bias=False, pad_mode='valid'), nn.BatchNorm2d(2 * width))
        self.layers = nn.CellList([
            BasicBlock(width, width),
            BasicBlock(width, 2 * width, stride=2, downsample=down),
        ])
        self.se = SqueezeExcite(2 * width)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.norm = nn.LayerNorm((2 * width,), epsilon=1e-05)
        self.head = nn.Dense(2 * width, num_classes)
        self.logit_scale = ms.Parameter(ops.ones(1) * 2.0, name="logit_scale", requires_grad=False)
        for _, m in self.cells_and_names():
            if isinstance(m, nn.Conv2d):
                m.weight.set_data(ms.common.initializer.initializer(ms.common.initializer.HeNormal(negative_slope=0, mode="fan_out", nonlinearity="relu"), m.weight.shape, m.weight.dtype))
            elif isinstance(m, nn.BatchNorm2d):
                m.gamma.set_data(ms.common.initializer.initializer(ms.common.initializer.Constant(1), m.gamma.shape, m.gamma.dtype))
                m.beta.set_data(ms.common.initializer.initializer(ms.common.initializer.Constant(0), m.beta.shape, m.beta.dtype))
        self.set_train(True)  # msmigrate: torch modules start in training mode (MindSpore cells: inference mode)

    def construct(self, x):
        x = self.stem(x)
        for layer in self.layers:
            x = layer(x)
        x = self.se(x)
        x = ops.flatten(self.pool(x), start_dim=1)
        x = self.norm(x)
        return self.head(x) * self.logit_scale


def tiny_resnet() -> TinyResNet:
    return TinyResNet()
