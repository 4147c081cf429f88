"""`x.data.op_(...)` as a statement (msmigrate/data_writes.py, helper templates/compat_parts/data_writes.py):
vector-quantize-pytorch's `ema_inplace(old, new, decay)` runs `old.data.lerp_(new, (1. - decay) * weight)` on
a buffer the module passes in; `self.w.data.mul_(d)` in forward. A TODO before (MindSpore's in-place
arithmetic changes nothing on CPU, a rebinding would not reach the caller's tensor). The value is written into
the tensor: buffers, parameters, outputs and input gradients over three calls match torch in PyNative and
GRAPH; a tensor that is no Parameter written in a compiled graph raises MigrationError naming the line."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import load_converted, load_torch  # noqa: E402

SRC = '''
import torch
from torch import nn


def ema_inplace(old, new, decay):
    old.data.lerp_(new, 1. - decay)


class Ema(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("avg", torch.zeros(3))
        self.w = nn.Parameter(torch.tensor([1.0, -2.0, 0.5]))

    def forward(self, x):
        ema_inplace(self.avg, x.mean(0), 0.8)
        self.w.data.mul_(0.5)
        return x * self.avg + x * self.w


def scaled_copy(t):
    u = t * 1.0
    u.data.add_(t, alpha=2.0)
    return u


class Local(nn.Module):
    def forward(self, x):
        u = x * 1.0
        u.data.mul_(3.0)
        return u
'''
X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)


def _torch_run():
    import torch
    net = load_torch(SRC)["Ema"]()
    outs = [net(torch.from_numpy(X * (k + 1))).detach().numpy() for k in range(2)]
    x = torch.from_numpy(X * 3).requires_grad_(True)
    net(x).sum().backward()
    return outs, x.grad.numpy(), net.avg.numpy(), net.w.detach().numpy()


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_data_writes_reach_the_buffer_and_parameter(mode):
    outs, grad, avg, w = _torch_run()
    mod, code, sites = load_converted(SRC)
    # a buffer passed in: write_data; a Parameter's attribute chain: param_data_update.py's one-line assign
    assert "_ms_compat.write_data(old, " in code and "ms.ops.assign(self.w, self.w * (0.5))" in code, code
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        net = mod.Ema()
        got = [net(ms.Tensor(X * (k + 1))).asnumpy() for k in range(2)]

        def total(x):
            return net(x).sum()
        g = ms.grad(total)(ms.Tensor(X * 3)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    for a, b in zip(got, outs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(g, grad, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(net.avg.asnumpy(), avg, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(net.w.asnumpy(), w, rtol=1e-6, atol=1e-6)


def test_data_write_on_a_plain_tensor_in_pynative_and_refused_in_a_graph():
    import torch
    mod, code, _ = load_converted(SRC)
    want = load_torch(SRC)["scaled_copy"](torch.from_numpy(X)).numpy()
    np.testing.assert_allclose(mod.scaled_copy(ms.Tensor(X)).asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(mod.Local()(ms.Tensor(X)).asnumpy(), X * 3, rtol=1e-6)
    from _ms_compat import MigrationError
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(MigrationError, match=r"through `\.data` at \S+:31 "):
            mod.Local()(ms.Tensor(X))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


BUFFER_UPDATES_SRC = '''
import torch
from torch import nn


class RunningStats(nn.Module):
    """An EMA of the batch's mean and mean square (chains), a codebook refreshed from itself through data,
    then read in the same forward."""

    def __init__(self, decay=0.8):
        super().__init__()
        self.decay = decay
        self.lin = nn.Linear(3, 3)
        self.register_buffer("avg", torch.zeros(3))
        self.register_buffer("sq", torch.ones(3))
        self.register_buffer("code", torch.full((2, 3), 0.5))
        self.register_buffer("seen", torch.zeros(()))
        self.register_buffer("mark", torch.ones(3))

    def forward(self, x):
        h = self.lin(x)
        if self.training:
            with torch.no_grad():
                self.avg.mul_(self.decay).add_(h.mean(0), alpha=1 - self.decay)
                self.sq.mul_(self.decay).addcmul_(h.mean(0), h.mean(0), value=1 - self.decay)
                self.code.data.copy_(self.code * 0.5 + h[:2])
                self.code.data.copy_(self.code.sum(0))
                self.seen[...] = self.seen + 1
                self.code[:] = self.code * 0.5
                self.mark.zero_()
                self.mark.data.fill_(2.0)
                self.mark.add_(h[0])
        return (h - self.avg) / (self.sq + 1e-5).sqrt() + self.code.mean(0) * self.seen + self.mark
'''


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_buffer_chains_and_data_copies_read_in_the_same_forward(mode):
    """`self.avg.mul_(d).add_(v, alpha=1 - d)` was a TODO; `self.code.data.copy_(f(self.code))` was kept, and in
    GRAPH mode the forward read the buffer's old value after it (output off by 0.64, silently). Both now write
    through ops.assign (write_data), copy_ broadcasting its value: outputs and buffers are torch's over three
    training forwards. `self.code[:] = v` and `self.seen[...] = v` (under no_grad) left the Parameter unchanged in
    GRAPH mode, silently; they become write_data too. `self.mark.zero_()` / `.data.fill_(v)` in a compiled forward
    failed compiling (an initializer built in the graph): ops.assign there."""
    import torch
    torch.manual_seed(0)
    tnet = load_torch(BUFFER_UPDATES_SRC)["RunningStats"]()
    mod, code, sites = load_converted(BUFFER_UPDATES_SRC)
    assert "TODO" not in code and ".data.copy_" not in code, code
    assert "_ms_compat.write_data(self.avg, _ms_compat.broadcast_as(" in code, code
    from msmigrate.weights import load_torch_state_dict
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        net = mod.RunningStats()
        load_torch_state_dict(net, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
        net.set_train(True)
        for k in range(3):
            x = X * (k + 1) - 0.5 * k
            want = tnet(torch.from_numpy(x)).detach().numpy()
            np.testing.assert_allclose(net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6, err_msg=str(k))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    for name in ("avg", "sq", "code", "seen", "mark"):
        np.testing.assert_allclose(getattr(net, name).asnumpy(), getattr(tnet, name).numpy(), rtol=1e-5, atol=1e-6)


def test_a_whole_store_in_grad_mode_is_refused_when_compiled():
    """`self.code[:] = v` outside no_grad: torch may record a gradient through the store, which ops.assign would
    lose, so it stays a store; in a compiled graph (where the Parameter would stay unchanged) MigrationError
    naming the line, in PyNative torch's values."""
    src = BUFFER_UPDATES_SRC.replace("                self.code[:] = self.code * 0.5\n", "").replace(
        "        return (h - self.avg)", "        self.code[:] = self.code * 0.5  # SITE\n        return (h - self.avg)")
    assert "# SITE" in src
    import torch
    torch.manual_seed(0)
    tnet = load_torch(src)["RunningStats"]()
    mod, code, _ = load_converted(src)
    assert "self.code[:] = _ms_compat.whole_store_value(self.code, " in code, code
    from msmigrate.weights import load_torch_state_dict
    from _ms_compat import MigrationError
    line = next(i for i, t in enumerate(src.splitlines(), 1) if "# SITE" in t)
    for mode in ("pynative", "graph"):
        net = mod.RunningStats()
        load_torch_state_dict(net, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
        ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
        try:
            if mode == "graph":
                with pytest.raises(MigrationError, match=rf"whole of a Parameter .* at \S+:{line} "):
                    net(ms.Tensor(X))
            else:
                want = tnet(torch.from_numpy(X)).detach().numpy()
                np.testing.assert_allclose(net(ms.Tensor(X)).asnumpy(), want, rtol=1e-5, atol=1e-6)
                np.testing.assert_allclose(net.code.asnumpy(), tnet.code.numpy(), rtol=1e-5, atol=1e-6)
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE)


NO_GRAD_PARAMETER_CHANGES = '''
import torch
from torch import nn


class Factor(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.linspace(-1, 1, 12).reshape(4, 3))
        self.lin = nn.Linear(3, 3)
        with torch.no_grad():
            self.lin.weight.copy_(torch.linspace(-0.5, 0.5, 9).reshape(3, 3))
            self.lin.bias.fill_(0.1)

    def forward(self, x):
        return self.lin(x @ self.w.t() @ self.w)

    @torch.no_grad()
    def project(self):
        self.w.clamp_(min=0)
        self.lin.weight.clamp_(-0.3, 0.3)


H = nn.Parameter(torch.linspace(-0.5, 1.0, 6).reshape(3, 2))
model = Factor()
opt = torch.optim.Adam(list(model.parameters()) + [H], lr=0.05)
x = torch.linspace(-1, 1, 15).reshape(5, 3)
for step in range(4):
    loss = ((model(x) @ H - 0.2) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    model.project()
    with torch.no_grad():
        H.clamp_(min=0)
        H.mul_(0.9)
weights = [model.w, model.lin.weight, model.lin.bias, H]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_in_place_changes_of_parameters_under_no_grad(graph):
    """Projected gradient descent: `H.clamp_(min=0)` under no_grad on a name bound to nn.Parameter, and
    `self.w.clamp_(min=0)` in a @torch.no_grad() method. Before: `H = ops.clamp(H, min=0)` rebound the name and
    the optimizer kept stepping the unchanged Parameter (losses 40% off, silently), and the attribute chain was a
    TODO. Now each is written into the Parameter (write_data): the weights after four steps match torch."""
    from .harness import program_weights_match_torch

    code, _ = program_weights_match_torch(NO_GRAD_PARAMETER_CHANGES, graph)
    assert "_ms_compat.write_data(H, ops.clamp(H, min=0)" in code, code
    assert "_ms_compat.write_data(self.w, ops.clamp(self.w, min=0)" in code, code
    assert "TODO" not in code, code


SUBMODULE_BUFFER_UPDATES = '''
import torch
from torch import nn
import torch.nn.functional as F


class Codebook(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(5, 3)
        self.register_buffer("usage", torch.zeros(5))
        self.register_buffer("seen", torch.zeros(()))
        with torch.no_grad():
            self.embed.weight.copy_(torch.linspace(-1, 1, 15).reshape(5, 3))


class Quantizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.book = Codebook()
        self.proj = nn.Linear(4, 3)
        with torch.no_grad():
            self.proj.weight.copy_(torch.linspace(-0.5, 0.7, 12).reshape(3, 4))
            self.proj.bias.fill_(0.05)

    def forward(self, x):
        z = self.proj(x)
        idx = torch.cdist(z, self.book.embed.weight).argmin(-1)
        if self.training:
            # a submodule's buffers, updated from the forward (an EMA of the code usage, a counter)
            self.book.usage.mul_(0.9).add_(F.one_hot(idx, 5).float().sum(0), alpha=0.1)
            self.book.seen.add_(x.shape[0])
        q = self.book.embed(idx)
        return z + (q - z).detach() * self.book.usage[idx].unsqueeze(-1), F.mse_loss(q, z.detach())


model = Quantizer()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 24).reshape(6, 4)
for step in range(3):
    out, commit = model(x)
    loss = (out ** 2).mean() + commit
    opt.zero_grad()
    loss.backward()
    opt.step()
weights = [model.book.usage, model.book.seen, model.proj.weight, model.book.embed.weight]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_in_place_updates_of_a_submodule_buffer_in_forward(graph):
    """`self.book.usage.mul_(0.9).add_(counts, alpha=0.1)` in forward, `usage` a buffer the submodule registers:
    a raising TODO before (only a buffer of the class itself, `self.usage`, was recognised); now written into
    the buffer like `self.usage`'s. Buffers and weights after three steps match torch's."""
    from .harness import program_weights_match_torch

    code, _ = program_weights_match_torch(SUBMODULE_BUFFER_UPDATES, graph)
    assert "_ms_compat.write_data(self.book.usage" in code and "ms.ops.assign(self.book.seen" in code, code


CONTAINER_ELEMENT_CHANGES = '''
import torch
from torch import nn


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(3, 3) for _ in range(2)])
        self.head = nn.Sequential(nn.Linear(3, 2))
        for i in range(2):
            with torch.no_grad():
                self.blocks[i].weight.copy_(torch.linspace(-0.4, 0.6, 9).reshape(3, 3) * (i + 1))
                self.blocks[i].bias.fill_(0.05 * i)
        with torch.no_grad():
            self.head[0].weight.copy_(torch.linspace(-1, 1, 6).reshape(2, 3))
            self.head[0].bias.zero_()
            self.head[-1].bias.add_(0.2)

    def forward(self, x):
        for block in self.blocks:
            x = torch.tanh(block(x))
        return self.head(x)


model = Stack()
with torch.no_grad():
    model.blocks[1].weight.mul_(0.5)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 12).reshape(4, 3)
for step in range(3):
    loss = ((model(x) - 0.3) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        model.blocks[0].weight.clamp_(-0.25, 0.25)
        model.head[0].weight.mul_(0.9)
    model.blocks[-1].bias.data.add_(0.01)
weights = [model.blocks[0].weight, model.blocks[1].weight, model.blocks[1].bias, model.head[0].weight,
           model.head[0].bias]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_in_place_changes_of_a_container_element_parameter(graph):
    """`model.blocks[0].weight.clamp_(...)` under no_grad, `self.head[-1].bias.add_(0.2)` and
    `model.blocks[-1].bias.data.add_(0.01)`: a parameter reached through an element of a ModuleList or Sequential.
    Before: each was a raising TODO ("outside a whole statement on a local tensor name"), as the chain was not a
    plain attribute chain. Now each is written into the Parameter as `self.w.clamp_` is: the weights after three
    steps match torch."""
    from .harness import program_weights_match_torch

    code, _ = program_weights_match_torch(CONTAINER_ELEMENT_CHANGES, graph)
    assert "_ms_compat.write_data(model.blocks[0].weight, ops.clamp(" in code, code
    assert "TODO" not in code, code
