"""Minimal reproductions of what bench/_rw_heldout56.py's programs (VainF/DeepLabV3Plus-Pytorch,
jeonsworld/ViT-pytorch, ermongroup/ddim) met, each run under torch and converted.

- A convolution rebuilt from another one's attributes (DeepLab's convert_to_separable_conv:
  `AtrousSeparableConvolution(..., module.bias)`, whose layers take `bias=bias`): torch's layers test `if bias:`,
  so None (a layer without bias) stands for False; MindSpore's has_bias takes a bool only (TypeError naming no line
  of the original). A value that is not a literal bool is written `bool(value)`.
- An in-place activation assigned back to its own input, a list element (DeepLab's HRNetV2 fuse layer:
  `x_fused[i] = self.relu(x_fused[i])` with nn.ReLU(inplace=True)): the site was a raising TODO ("changes
  `x_fused[i]` in place and the program reads it afterwards"); the place gets the activated tensor on both sides."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

REBUILT_CONV = _FILL + '''
import torch.nn as nn


class Separable(nn.Module):
    def __init__(self, cin, cout, kernel_size, stride, padding, dilation, bias):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(cin, cin, kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation,
                      bias=bias, groups=cin),
            nn.Conv2d(cin, cout, kernel_size=1, stride=1, padding=0, bias=bias))

    def forward(self, x):
        return self.body(x)


def separable(module):
    new = module
    if isinstance(module, nn.Conv2d) and module.kernel_size[0] > 1:
        new = Separable(module.in_channels, module.out_channels, module.kernel_size, module.stride,
                        module.padding, module.dilation, module.bias)
    for name, child in module.named_children():
        new.add_module(name, separable(child))
    return new


net = nn.Sequential(nn.Conv2d(2, 4, 3, padding=2, dilation=2, bias=False), nn.ReLU(), nn.Conv2d(4, 3, 1))
net = separable(net)
fill(net, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
seen = []
for k in range(2):
    x = torch.linspace(-1, 1, 2 * 2 * 5 * 5).reshape(2, 2, 5, 5) * (k + 1)
    loss = net(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_conv_rebuilt_with_another_layers_bias(graph):
    code, _ = program_weights_match_torch(REBUILT_CONV, graph=graph)
    assert "has_bias=bool(bias)" in code


FUSED_BRANCHES = _FILL + '''
import torch.nn as nn


class Fuse(nn.Module):
    def __init__(self):
        super().__init__()
        self.branches = nn.ModuleList([nn.Conv2d(2, 3, 3, padding=1), nn.Conv2d(2, 3, 1)])
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        outs = [branch(x) for branch in self.branches]
        fused = []
        for i in range(2):
            fused.append(outs[i] + outs[1 - i] * 0.5)
        for i in range(2):
            fused[i] = self.relu(fused[i])
        return fused


net = Fuse()
fill(net, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
seen = []
for k in range(2):
    x = torch.linspace(-1, 1, 2 * 2 * 4 * 4).reshape(2, 2, 4, 4) * (k + 1)
    a, b = net(x)
    loss = (a * b).mean() + a.sum() * 0.1
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_in_place_activation_assigned_back_to_a_list_element(graph):
    program_weights_match_torch(FUSED_BRANCHES, graph=graph)
