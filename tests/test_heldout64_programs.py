"""Minimal reproductions of what bench/_rw_heldout64.py's programs (yuqinie98/PatchTST, facebookresearch/encodec,
chennnM/GCNII) met, each run under torch and converted.

- A tensor method whose record renames its arguments, called with `*args` (PatchTST's layers/PatchTST_layers.py
  Transpose: `x.transpose(*self.dims)`): a TODO raising MigrationError ("*args/**kwargs cannot be translated
  argument by argument"). Where the renaming keeps every position (torch's dim0, dim1 are ops.swapaxes' axis0,
  axis1) and the call has one `*args` and nothing by keyword, the starred values pass through as they are.
- torch.nn.ConvTranspose1d called with `*args, **kwargs` (encodec's NormConvTranspose1d:
  `nn.ConvTranspose1d(*args, **kwargs)`): a TODO raising MigrationError; Conv1d had an adapter taking torch's
  arguments at run time, the transposed convolutions had none. _ms_compat.ConvTranspose1d/2d/3d take torch's
  arguments (output_padding included) and build the layer a direct call converts to."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

STARRED_TRANSPOSE = _FILL + '''
import torch.nn as nn


class Transpose(nn.Module):
    def __init__(self, *dims, contiguous=False):
        super().__init__()
        self.dims, self.contiguous = dims, contiguous

    def forward(self, x):
        if self.contiguous:
            return x.transpose(*self.dims).contiguous()
        return x.transpose(*self.dims)


net = nn.Sequential(nn.Linear(4, 3), Transpose(1, 2), nn.BatchNorm1d(3), Transpose(1, 2, contiguous=True),
                    nn.Linear(3, 2))
fill(net, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 2 * 5 * 4).reshape(2, 5, 4)
seen = []
for _ in range(2):
    loss = net(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
dims = [0, 2]
weights = [q.detach().reshape(-1) for q in net.parameters()] + seen + [x.transpose(*dims).reshape(-1)]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_starred_arguments_of_a_renamed_method(graph):
    code, _ = program_weights_match_torch(STARRED_TRANSPOSE, graph=graph)
    assert "ops.swapaxes(x, *self.dims)" in code, code


STARRED_CONV_TRANSPOSE = _FILL + '''
import torch.nn as nn


class NormConvTranspose1d(nn.Module):
    def __init__(self, *args, norm='none', **kwargs):
        super().__init__()
        self.convtr = nn.ConvTranspose1d(*args, **kwargs)

    def forward(self, x):
        return self.convtr(x)


class NormConvTranspose2d(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.convtr = nn.ConvTranspose2d(*args, **kwargs)

    def forward(self, x):
        return self.convtr(x)


net1 = nn.Sequential(NormConvTranspose1d(3, 2, 4, stride=2), nn.ELU(), NormConvTranspose1d(2, 2, 3, 2, 1, 1))
net2 = NormConvTranspose2d(2, 3, (3, 2), stride=2, padding=1, output_padding=1)
fill(net1, 4)
fill(net2, 5)
opt = torch.optim.Adam(list(net1.parameters()) + list(net2.parameters()), lr=0.01)
x = torch.linspace(-1, 1, 2 * 3 * 5).reshape(2, 3, 5)
y = torch.linspace(-1, 1, 2 * 2 * 4 * 3).reshape(2, 2, 4, 3)
seen = []
for _ in range(2):
    a, b = net1(x), net2(y)
    loss = a.pow(2).mean() + b.abs().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = ([q.detach().reshape(-1) for q in list(net1.parameters()) + list(net2.parameters())] + seen
           + [torch.tensor([float(s) for s in tuple(net1(x).shape) + tuple(net2(y).shape)])])
'''


@pytest.mark.parametrize("graph", [False, True])
def test_conv_transpose_called_with_starred_arguments(graph):
    code, _ = program_weights_match_torch(STARRED_CONV_TRANSPOSE, graph=graph)
    assert "_ms_compat.ConvTranspose1d(*args, **kwargs)" in code, code
