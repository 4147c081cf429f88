'''ResNet in PyTorch, for 32x32 CIFAR images (after kuangliu/pytorch-cifar).

Reference:
[1] Kaiming He, Xiangyu Zhang, Shaoqing Ren, Jian Sun
    Deep Residual Learning for Image Recognition. arXiv:1512.03385
'''
from mindspore import nn, ops
from . import _ms_compat


class BasicBlock(nn.Cell):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super(BasicBlock, self).__init__()
        self.conv1 = nn.Conv2d(
            in_planes, planes, kernel_size=3, stride=stride, has_bias=False, pad_mode='pad', padding=1)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3,
                               stride=1, has_bias=False, pad_mode='pad', padding=1)
        self.bn2 = nn.BatchNorm2d(planes)

        self.shortcut = nn.SequentialCell()
        if stride != 1 or in_planes != self.expansion*planes:
            self.shortcut = nn.SequentialCell(
                nn.Conv2d(in_planes, self.expansion*planes,
                          kernel_size=1, stride=stride, has_bias=False, pad_mode='valid'),
                nn.BatchNorm2d(self.expansion*planes)
            )
        self.set_train(True)  # msmigrate: torch modules start in training mode (MindSpore cells: inference mode)

    def construct(self, x):
        out = ops.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.shortcut(x)
        out = ops.relu(out)
        return out


class ResNet(nn.Cell):
    def __init__(self, block, num_blocks, num_classes=10):
        super(ResNet, self).__init__()
        self.in_planes = 64

        self.conv1 = nn.Conv2d(3, 64, kernel_size=3,
                               stride=1, has_bias=False, pad_mode='pad', padding=1)
        self.bn1 = nn.BatchNorm2d(64)
        self.layer1 = self._make_layer(block, 64, num_blocks[0], stride=1)
        self.layer2 = self._make_layer(block, 128, num_blocks[1], stride=2)
        self.layer3 = self._make_layer(block, 256, num_blocks[2], stride=2)
        self.layer4 = self._make_layer(block, 512, num_blocks[3], stride=2)
        self.linear = nn.Dense(512*block.expansion, num_classes)
        self.set_train(True)  # msmigrate: torch modules start in training mode (MindSpore cells: inference mode)

    def _make_layer(self, block, planes, num_blocks, stride):
        strides = [stride] + [1]*(num_blocks-1)
        layers = []
        for stride in strides:
            layers.append(block(self.in_planes, planes, stride))
            self.in_planes = planes * block.expansion
        # _ms_compat.Sequential (helper): also runs children assigned as attributes, as subclasses of torch's Sequential
        # do
        return _ms_compat.Sequential(*layers)

    def construct(self, x):
        out = ops.relu(self.bn1(self.conv1(x)))
        out = self.layer1(out)
        out = self.layer2(out)
        out = self.layer3(out)
        out = self.layer4(out)
        out = ops.avg_pool2d(out, 4, stride=4)
        out = out.view(out.shape[0], -1)
        out = self.linear(out)
        return out


def ResNet18(num_classes=10):
    return ResNet(BasicBlock, [2, 2, 2, 2], num_classes)


def ResNet34(num_classes=10):
    return ResNet(BasicBlock, [3, 4, 6, 3], num_classes)
