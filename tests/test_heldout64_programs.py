"""Minimal reproductions of what bench/_rw_heldout64.py's programs (yuqinie98/PatchTST, facebookresearch/encodec,
chennnM/GCNII) met, each run under torch and converted.

- A tensor method whose record renames its arguments, called with `*args` (PatchTST's layers/PatchTST_layers.py
  Transpose: `x.transpose(*self.dims)`): a TODO raising MigrationError ("*args/**kwargs cannot be translated
  argument by argument"). Where the renaming keeps every position (torch's dim0, dim1 are ops.swapaxes' axis0,
  axis1) and the call has one `*args` and nothing by keyword, the starred values pass through as they are.
- torch.nn.ConvTranspose1d called with `*args, **kwargs` (encodec's NormConvTranspose1d:
  `nn.ConvTranspose1d(*args, **kwargs)`): a TODO raising MigrationError; Conv1d had an adapter taking torch's
  arguments at run time, the transposed convolutions had none. _ms_compat.ConvTranspose1d/2d/3d take torch's
  arguments (output_padding included) and build the layer a direct call converts to.
- F.pad in reflect mode with an explicit value of 0 (encodec's pad1d: `F.pad(x, paddings, mode, value)` with
  value=0.): torch ignores a value of 0 there; MindSpore's pad refused it ("the padding mode 'reflect' can not set
  value, but got value 0.0"), naming no line. The helper drops a value of 0 in the other modes.
- torch.zeros used as a value and called elsewhere with torch's arguments (encodec's EuclideanCodebook:
  `init_fn = uniform_init if not kmeans_init else torch.zeros`, `embed = init_fn(codebook_size, dim)`): it became
  ops.zeros, whose second parameter is the dtype ("For 'Zeros', the input 'dtype' should be mindspore dtype, but
  got 16"). torch.zeros/ones/empty as values are _ms_compat's zeros/ones/empty_factory_value, taking torch's
  sizes and keywords.
- A module-level name assigned in a tuple before an import binds it to a torch module (a GCNII driver of ours:
  `N, F, C = 600, 24, 4` for the feature count, then `import torch.nn.functional as F`): the tuple's names were
  read as the import, so the target became `N, ms.ops, C = ...` (MindSpore's ops module replaced by an int, the
  program failing later naming no line of it), and a plain `F = 24` dropped the import for the rest of the file,
  so `F.relu(...)` stayed torch's code (AttributeError on an int). A tuple target's names are stores, and the
  later import binds the name to the module again.
- kernel_size/stride/dilation read on a 1-d convolution whose class the converter does not know (encodec's
  SConv1d: `self.conv.conv.kernel_size[0]`, the Conv1d built through apply_parametrization_norm): MindSpore's
  1-d convolutions hold a 2-d one's (1, k), so [0] gave 1 for torch's k, and the padding computed from it was
  wrong (here a shape error at the residual add; silently different elsewhere). Such reads on a module or an
  attribute chain of unknown type are _ms_compat.conv1d_tuple(layer, name), which drops the leading 1 of a 1-d
  convolution's only.
- An object of a class of the program's own with a backward() method (encodec's loss Balancer:
  `balancer.backward({'l1': l1, 'l2': l2}, out)`, whose body takes torch.autograd.grad of each loss with respect to
  the output and calls `out.backward(out_grad)`): the call was read as torch's Tensor.backward with a gradient, and
  the taped step's loss became `penalty + (balancer * {'l1': l1, 'l2': l2}).sum()` (TypeError here; with another
  object, a wrong loss). Such a receiver is no tensor: the call stays the method's, which stops with MigrationError
  naming its autograd.grad line (not converted there).
- A taped step whose forward returns the loss and one object of a dataclass beside it (encodec_balancer's step:
  `qv = model.quantizer(...)`, `qv.penalty.backward(...)`, qv read after the step): MindSpore's has_aux refused the
  pair ("that forward function should be multi output", naming no line). Op by op, such an object is kept aside
  as host values are, and returned in its place."""
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


REFLECT_PAD_WITH_ZERO_VALUE = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F


def pad1d(x, paddings, mode='constant', value=0.):
    length = x.shape[-1]
    padding_left, padding_right = paddings
    if mode == 'reflect':
        max_pad = max(padding_left, padding_right)
        extra_pad = 0
        if length <= max_pad:
            extra_pad = max_pad - length + 1
            x = F.pad(x, (0, extra_pad))
        padded = F.pad(x, paddings, mode, value)
        end = padded.shape[-1] - extra_pad
        return padded[..., :end]
    return F.pad(x, paddings, mode, value)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 3, 5)

    def forward(self, x, mode):
        return self.conv(pad1d(x, (4, 0), mode)).tanh()


net = Net()
fill(net, 7)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 2 * 2 * 6).reshape(2, 2, 6)
seen = []
for _ in range(2):
    loss = net(x, 'reflect').pow(2).mean() + net(x[..., :3], 'reflect').abs().mean() + net(x, 'constant').mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [q.detach().reshape(-1) for q in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_reflect_pad_given_a_zero_value(graph):
    program_weights_match_torch(REFLECT_PAD_WITH_ZERO_VALUE, graph=graph)


FACTORY_AS_A_VALUE = _FILL + '''
import torch.nn as nn


def uniform_init(*shape):
    t = torch.empty(shape)
    nn.init.constant_(t, 0.25)
    return t


class Codebook(nn.Module):
    def __init__(self, dim, size, kmeans_init):
        super().__init__()
        init_fn = uniform_init if not kmeans_init else torch.zeros
        embed = init_fn(size, dim)
        self.register_buffer("embed", embed)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(x) @ self.embed.t() + self.embed.sum()


make = torch.ones
nets = [Codebook(3, 4, True), Codebook(3, 4, False)]
for i, net in enumerate(nets):
    fill(net, 8 + i)
params = list(nets[0].parameters()) + list(nets[1].parameters())
opt = torch.optim.SGD(params, lr=0.1)
x = torch.linspace(-1, 1, 6).reshape(2, 3)
seen = []
for _ in range(2):
    loss = (nets[0](x) + nets[1](x)).pow(2).mean() + make(2, 3).mul(x).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
blank = torch.empty
weights = ([q.detach().reshape(-1) for q in params] + seen + [nets[0].embed.reshape(-1), nets[1].embed.reshape(-1),
           make((2, 2), dtype=torch.float32).reshape(-1), torch.tensor(float(blank(torch.Size([3, 2])).numel()))])
'''


@pytest.mark.parametrize("graph", [False, True])
def test_factories_used_as_values(graph):
    code, _ = program_weights_match_torch(FACTORY_AS_A_VALUE, graph=graph)
    assert "_ms_compat.zeros_factory_value" in code and "_ms_compat.ones_factory_value" in code, code


NAME_ASSIGNED_THEN_IMPORTED = _FILL + '''
N, F, C = 3, 4, 2     # F the feature count, before the import that makes it torch.nn.functional
rows = np.linspace(-1, 1, N * F).reshape(N, F).astype(np.float32)
K = 5
width = K + 1
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(4, width), nn.Tanh(), nn.Linear(width, C))
fill(net, 11)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.from_numpy(rows)
seen = []
for _ in range(2):
    loss = F.mse_loss(F.relu(net(x)), torch.ones(N, C))
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [q.detach().reshape(-1) for q in net.parameters()] + seen + [torch.tensor([float(N), float(C)])]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_name_assigned_in_a_tuple_then_imported_as_a_torch_module(graph):
    code, _ = program_weights_match_torch(NAME_ASSIGNED_THEN_IMPORTED, graph=graph)
    assert "N, F, C = 3, 4, 2" in code, code


CONV1D_SETTINGS_OF_AN_UNKNOWN_LAYER = _FILL + '''
import math

import torch.nn as nn
import torch.nn.functional as F


def apply_norm(module, norm='none'):
    return module


class NormConv1d(nn.Module):
    def __init__(self, *args, norm='none', **kwargs):
        super().__init__()
        self.conv = apply_norm(nn.Conv1d(*args, **kwargs), norm)

    def forward(self, x):
        return self.conv(x)


class SConv1d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, dilation=1):
        super().__init__()
        self.conv = NormConv1d(in_channels, out_channels, kernel_size, stride, dilation=dilation)

    def forward(self, x):
        kernel_size = self.conv.conv.kernel_size[0]
        stride = self.conv.conv.stride[0]
        dilation = self.conv.conv.dilation[0]
        kernel_size = (kernel_size - 1) * dilation + 1
        padding_total = kernel_size - stride
        n_frames = (x.shape[-1] - kernel_size + padding_total) / stride + 1
        ideal_length = (math.ceil(n_frames) - 1) * stride + (kernel_size - padding_total)
        extra_padding = ideal_length - x.shape[-1]
        return self.conv(F.pad(x, (padding_total, extra_padding)))


net = nn.Sequential(SConv1d(2, 3, 5, stride=2), nn.ELU(), SConv1d(3, 2, 3, dilation=2))
fill(net, 12)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 2 * 2 * 11).reshape(2, 2, 11)
seen = []
for _ in range(2):
    loss = net(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [q.detach().reshape(-1) for q in net.parameters()] + seen + [torch.tensor(net(x).shape).float()]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_conv1d_settings_of_a_layer_of_unknown_class(graph):
    code, _ = program_weights_match_torch(CONV1D_SETTINGS_OF_AN_UNKNOWN_LAYER, graph=graph)
    assert "_ms_compat.conv1d_tuple(self.conv.conv, 'kernel_size')" in code, code


OWN_BACKWARD_METHOD = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd


class Balancer:
    def __init__(self, weights):
        self.weights = weights

    def backward(self, losses, input):
        grads = {}
        for name, loss in losses.items():
            grad, = autograd.grad(loss, [input], retain_graph=True)
            grads[name] = grad * self.weights[name] / (1e-12 + grad.norm())
        out_grad = 0
        for grad in grads.values():
            out_grad += grad
        input.backward(out_grad)


net = nn.Linear(3, 2)
penalty_net = nn.Linear(3, 1)
fill(net, 13)
fill(penalty_net, 14)
opt = torch.optim.SGD(list(net.parameters()) + list(penalty_net.parameters()), lr=0.1)
balancer = Balancer({'l1': 1, 'l2': 2})
x = torch.linspace(-1, 1, 12).reshape(4, 3)
seen = []
for _ in range(2):
    out = net(x)
    penalty = penalty_net(x).pow(2).mean()
    l1 = F.l1_loss(out, torch.zeros(4, 2))
    l2 = F.mse_loss(out, torch.ones(4, 2))
    opt.zero_grad()
    penalty.backward(retain_graph=True)
    balancer.backward({'l1': l1, 'l2': l2}, out)
    opt.step()
    seen.append(penalty.detach())
weights = [q.detach().reshape(-1) for q in net.parameters()] + seen
'''


def test_own_backward_method_is_no_tensor_backward():
    with pytest.raises(Exception) as err:
        program_weights_match_torch(OWN_BACKWARD_METHOD, graph=False)
    assert type(err.value).__name__ == "MigrationError" and "torch.autograd.grad" in str(err.value), err.value


DATACLASS_BESIDE_THE_LOSS = _FILL + '''
from dataclasses import dataclass

import torch.nn as nn


@dataclass
class Result:
    out: torch.Tensor
    penalty: torch.Tensor


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        y = self.fc(x)
        return Result(y, y.pow(2).mean())


net = Net()
fill(net, 15)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 12).reshape(4, 3)
seen = []
for _ in range(2):
    r = net(x)
    opt.zero_grad()
    r.penalty.backward()
    opt.step()
    assert isinstance(r, Result)
    seen.append(r.penalty.detach())
    seen.append(r.out.detach().sum())
weights = [q.detach().reshape(-1) for q in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_dataclass_beside_the_loss_of_a_step(graph):
    # compiled, the network's record is the dict of its fields: the step reads it by key, and the dict the graph
    # returns is the object again (graph_record_class, graph_records_rebuilt)
    program_weights_match_torch(DATACLASS_BESIDE_THE_LOSS, graph=graph)
