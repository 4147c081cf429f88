import torch
import torch.nn as nn

from .layers import BasicBlock, SqueezeExcite


class TinyResNet(nn.Module):
    """A small ResNet with a squeeze-excite head and a LayerNorm classifier."""

    def __init__(self, num_classes: int = 10, width: int = 16):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(width, momentum=0.05),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
        )
        down = nn.Sequential(nn.Conv2d(width, 2 * width, 1, stride=2, bias=False), nn.BatchNorm2d(2 * width))
        self.layers = nn.ModuleList([
            BasicBlock(width, width),
            BasicBlock(width, 2 * width, stride=2, downsample=down),
        ])
        self.se = SqueezeExcite(2 * width)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.norm = nn.LayerNorm(2 * width)
        self.head = nn.Linear(2 * width, num_classes)
        self.register_buffer("logit_scale", torch.ones(1) * 2.0)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.stem(x)
        for layer in self.layers:
            x = layer(x)
        x = self.se(x)
        x = torch.flatten(self.pool(x), 1)
        x = self.norm(x)
        return self.head(x) * self.logit_scale


def tiny_resnet() -> TinyResNet:
    return TinyResNet()
