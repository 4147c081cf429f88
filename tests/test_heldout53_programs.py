"""Minimal reproductions of what bench/_rw_heldout53.py's programs (pclucas14/pixel-cnn-pp,
martinarjovsky/WassersteinGAN) met, each run under torch and converted.

- A transposed convolution whose output_padding exceeds its padding (PixelCNN++'s `nn.ConvTranspose2d(..., stride,
  output_padding=1)`, weight-normalized): torch's extra rows lie past the full transposed convolution, where no
  input reaches, and hold the bias alone; the site was a raising TODO ("MindSpore cannot crop less than
  nothing"). _ms_compat.any_batch's layers add those rows (grow_end).
- Children added under names MindSpore refuses as parameter prefixes (WassersteinGAN's
  `main.add_module('initial:3-8:conv', ...)`): MindSpore's Cell.__setattr__ raised ValueError; _ms_compat.add_module
  keeps torch's name for the child (its state_dict keys) and names the parameters under it.
- A buffer resized to each batch (WassersteinGAN's `input.resize_as_(real_cpu).copy_(real_cpu)`, the last batch
  smaller, and `noise.resize_(b, nz, 1, 1).normal_(0, 1)`): resize_as_ and resize_ were raising TODOs;
  _ms_compat.resize_ / resize_as_ give the tensor itself the new shape; the step takes such a tensor, changed in
  place by its loop, as an argument (a compiled step read it as a global, as it was when compiled).
- A transposed conv's forward (ops.Conv2DBackpropInput) in a loss differentiated op by op was taken for the
  gradient of a gradient (MigrationError); MindSpore's transposed conv layers run ops.Conv2DTranspose instead.
- Two steps in one scope, the first from an inner loop: both named their gradient function `grad_fn`.
- `torch.FloatTensor(x.size())`: a torch.Size gives the shape (MindSpore's plain tuple was taken for data).
- `if self.init_padding is None: self.init_padding = ...` in forward: a cell reading such state runs op by op in
  GRAPH mode (it stopped with MigrationError)."""
import numpy as np
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

GROWN_DECONV = _FILL + '''
import torch.nn as nn
from torch.nn.utils import weight_norm


class Up(nn.Module):
    def __init__(self):
        super().__init__()
        self.up2 = weight_norm(nn.ConvTranspose2d(3, 4, (2, 3), (2, 2), output_padding=1))
        self.up1 = nn.ConvTranspose1d(3, 2, 3, 2, output_padding=1)
        self.up3 = nn.ConvTranspose3d(2, 2, 2, 2, padding=(1, 0, 0), output_padding=(1, 1, 0))

    def forward(self, x):
        a = self.up2(x)
        b = self.up1(x[:, :, 0])
        c = self.up3(x[:, :2].unsqueeze(2).repeat(1, 1, 2, 1, 1))
        return a.sin().sum() + (b * b).sum() + c.tanh().mean()


net = Up()
fill(net, 5)
opt = torch.optim.Adam(net.parameters(), lr=0.05)
seen = []
for k in range(3):
    x = torch.linspace(-1, 1, 2 * 3 * 4 * 5).reshape(2, 3, 4, 5) * (k + 1)
    loss = net(x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
with torch.no_grad():
    shapes = torch.tensor([float(n) for n in net.up2(x).shape + net.up1(x[:, :, 0]).shape])
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen + [shapes]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_transposed_conv_with_output_padding_past_its_padding(graph):
    code, _ = program_weights_match_torch(GROWN_DECONV, graph=graph)
    assert "grow_end=" in code


NAMED_CHILDREN = _FILL + '''
import torch.nn as nn


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        main = nn.Sequential()
        main.add_module('initial:3-4:conv', nn.Conv2d(3, 4, 3, 1, 1, bias=False))
        main.add_module('initial:4:relu', nn.LeakyReLU(0.2))
        main.add_module('final:4-1:conv', nn.Conv2d(4, 1, 3, 1, 1, bias=False))
        self.main = main

    def forward(self, x):
        return self.main(x).mean().view(1)


net = Critic()
fill(net, 6)
opt = torch.optim.RMSprop(net.parameters(), lr=0.01)
seen = []
for k in range(3):
    x = torch.linspace(-1, 1, 2 * 3 * 4 * 4).reshape(2, 3, 4, 4) * (k + 1)
    out = net(x)
    opt.zero_grad()
    out.backward()
    opt.step()
    seen.append(out.detach())
names = sorted(net.state_dict())
assert names == ['main.final:4-1:conv.weight', 'main.initial:3-4:conv.weight'], names
weights = [p.detach() for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_children_named_with_colons(graph):
    program_weights_match_torch(NAMED_CHILDREN, graph=graph)


RESIZED_BUFFERS = _FILL + '''
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
fill(net, 8)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
input = torch.FloatTensor(4, 3)
noise = torch.FloatTensor(4, 1)
seen = []
for k, n in enumerate(SIZES):
    batch = torch.linspace(-1, 1, n * 3).reshape(n, 3) * (k + 1)
    input.resize_as_(batch).copy_(batch)
    noise.resize_(n, 1).fill_(0.5)
    out = net(input + noise)
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
kept = torch.arange(6.).reshape(2, 3)
kept.resize_(3, 2)                                  # the elements kept in storage order
weights = [p.detach() for p in net.parameters()] + seen + [input.clone(), noise.clone(), kept]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_buffer_resized_each_batch(graph):
    """Full batches: the resizes keep the shape (torch keeps the storage: a compiled step reading the buffer sees
    each batch copied in)."""
    code, _ = program_weights_match_torch(RESIZED_BUFFERS.replace("SIZES", "(4, 4, 4)"), graph=graph)
    assert "_ms_compat.resize_as_(" in code and "_ms_compat.resize_(" in code


@pytest.mark.parametrize("graph", [False, True])
def test_buffer_resized_to_a_smaller_last_batch(graph):
    """The last batch smaller: the buffer takes its shape, as in torch. Compiled, a step reading the buffer as a
    global would keep the storage it compiled with (resize_ then stops with MigrationError); a tensor the loop
    changes in place is the step's argument instead (train_loop: per-iteration values), read anew at each call."""
    code, _ = program_weights_match_torch(RESIZED_BUFFERS.replace("SIZES", "(4, 4, 2)"), graph=graph)
    assert "train_step(input, noise)" in code, code


def test_resize_of_a_tensor_a_compiled_step_reads():
    """A tensor a compiled step reads as a global (no loop changes it before the step: the step's closure), resized
    to another shape afterwards: the step would keep reading it as it was; resize_ stops with MigrationError."""
    import mindspore as ms
    from tests.parity.harness import load_converted

    src = _FILL + '''
import torch.nn as nn

net = nn.Linear(3, 1)
fill(net, 12)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
data = torch.ones(4, 3)


def train(k):
    for i in range(k):
        loss = net(data).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


train(2)
data.resize_(2, 3)
train(1)
'''
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(Exception, match="Tensor.resize_ to \\(2, 3\\) .* that a compiled train step reads"):
            load_converted(src + "# GRAPH\n", pynative=False)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


TWO_LOOPS = _FILL + '''
import torch.nn as nn

critic = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
maker = nn.Sequential(nn.Linear(2, 3), nn.Tanh())
fill(critic, 9)
fill(maker, 10)
opt_c = torch.optim.RMSprop(critic.parameters(), lr=0.01)
opt_m = torch.optim.RMSprop(maker.parameters(), lr=0.01)
seen = []
for epoch in range(2):
    for j in range(2):                      # the critic's steps: a loop of their own inside the epoch's
        x = torch.linspace(-1, 1, 12).reshape(4, 3) * (j + 1)
        loss_c = critic(x).mean() - critic(maker(torch.ones(4, 2)).detach()).mean()
        opt_c.zero_grad()
        loss_c.backward()
        opt_c.step()
        seen.append(loss_c.detach())
    loss_m = critic(maker(torch.ones(4, 2) * (epoch + 1))).mean()
    opt_m.zero_grad()
    loss_m.backward()
    opt_m.step()
    seen.append(loss_m.detach())
weights = [p.detach() for p in critic.parameters()] + [p.detach() for p in maker.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_steps_of_an_inner_and_an_outer_loop(graph):
    """Two train steps in one scope, the first converted from an inner loop: the second took `grad_fn` again (the
    first's functions were known as taken, its `grad_fn = ...` assignment not), so the first step called the
    second's gradient function."""
    code, _ = program_weights_match_torch(TWO_LOOPS, graph=graph)
    assert "grad_fn_2" in code


def test_legacy_constructor_of_a_size():
    """`torch.FloatTensor(x.size())` (PixelCNN++'s sampler: `temp = torch.FloatTensor(logit_probs.size())`, then
    uniform_; to_one_hot's `torch.FloatTensor(tensor.size() + (n,)).zero_()`): a torch.Size gives the shape, where
    a tuple of ints gives data. MindSpore's shape is a plain tuple: the conversion made a tensor of the sizes."""
    from tests.parity.harness import load_converted, load_torch

    src = '''
import torch

x = torch.arange(6.).reshape(2, 3)
index = torch.tensor([[0, 2, 1], [1, 1, 0]])
blank = torch.FloatTensor(x.size()).zero_() + x
one_hot = torch.FloatTensor(index.size() + (3,)).zero_()
one_hot.scatter_(len(index.size()), index.unsqueeze(-1), 1.)
rows = torch.FloatTensor(x.size()[:-1]).fill_(2.)
data = torch.FloatTensor((2, 3))
weights = [blank, one_hot, rows, data]
'''
    mod, code, _ = load_converted(src)
    ref = load_torch(src)
    assert "*(x.shape)" in code
    for got, want in zip(mod.weights, ref["weights"]):
        np.testing.assert_allclose(got.asnumpy(), want.numpy())


CACHED_PADDING = _FILL + '''
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 2, 3, padding=1)
        self.init_padding = None

    def forward(self, x):
        if self.init_padding is None:      # built at the first call, kept for the next ones
            self.init_padding = torch.ones(x.size(0), 1, x.size(2), x.size(3))
        return self.conv(torch.cat((x, self.init_padding), 1))


net = Net()
fill(net, 11)
opt = torch.optim.Adam(net.parameters(), lr=0.05)
seen = []
for k in range(3):
    x = torch.linspace(-1, 1, 2 * 2 * 4 * 4).reshape(2, 2, 4, 4) * (k + 1)
    loss = net(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach() for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_state_kept_across_forward_calls_trained(graph):
    """PixelCNN++'s `if self.init_padding is None: self.init_padding = ...` in forward: compiled, MindSpore would
    decide the read once; the step stopped with MigrationError in GRAPH mode. A cell reading such state runs op by
    op, as one reading `.item()` (graph_constants.reads_on_host), and computes torch's values."""
    program_weights_match_torch(CACHED_PADDING, graph=graph)
