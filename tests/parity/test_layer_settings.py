"""Settings of torch layers read (and BatchNorm's momentum set) on a layer the converter knows, that MindSpore's
layers hold in another form or not at all (msmigrate/layer_settings.py), against torch. Before: an RNN's input_size
and LSTM's proj_size a raw AttributeError; a convolution's padding 1 or (0, 0, 2, 2) for torch's (1, 1) and (2,);
momentum 0.30000000000000004; `bn.momentum = 0.5` silently changed nothing (the running mean kept moving at the
constructor's rate); affine, elementwise_affine, padding_mode and the like a raw AttributeError, now a
MigrationError naming the line."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import assert_close, check_layer, load_converted, load_torch, rnd  # noqa: E402

SRC = '''
import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 5, num_layers=2, batch_first=True)
        self.gru = nn.GRU(3, 6)
        self.rnn = nn.RNN(2, 3)
        self.conv = nn.Conv2d(2, 4, 3, padding=(1, 2))
        self.conv1 = nn.Conv1d(2, 4, 3, padding=2)
        self.up = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)
        self.bn = nn.BatchNorm1d(3, momentum=0.3)

    def settings(self):
        return (self.lstm.input_size, self.lstm.proj_size, self.gru.input_size, self.rnn.input_size,
                self.conv.padding, self.conv1.padding, self.up.output_padding, self.up.padding, self.bn.momentum,
                self.conv.transposed, self.up.transposed)


def momentum_set(x):
    net = Net()
    for m in net.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.momentum = 0.5
    net.train()
    net.bn(x)
    return net.bn.running_mean, net.bn.momentum


def affine():
    bn = nn.BatchNorm2d(3)
    return bn.affine


class Normed(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)
        self.bn.eps = 0.02
        self.ln = nn.LayerNorm(4)
        self.ln.eps = 0.03


def eps_set(x):
    net = Normed()
    other = nn.Sequential(nn.BatchNorm2d(3), nn.LayerNorm(4))
    for m in other.modules():
        if type(m) is nn.BatchNorm2d or isinstance(m, nn.LayerNorm):
            m.eps = 1e-3
    outs = [net.bn(x), other(x), net.ln(x)]
    net.eval()
    other.eval()
    return outs + [net.bn(x), other(x), other[1].eps, net.ln.eps]


class Padded(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 3, 3, padding=1)

    def forward(self, x):
        return F.pad(self.conv(x), (self.conv.padding[0], 0)) * self.conv.padding[0]


def make():
    return Padded()
'''


def test_layer_settings_read_as_torch():
    want = load_torch(SRC)["Net"]().settings()
    mod, code, _ = load_converted(SRC)
    got = mod.Net().settings()
    assert got == want == (4, 0, 3, 2, (1, 2), (2,), (1, 1), (1, 1), 0.3, False, True), (got, want)


def test_batchnorm_momentum_set_after_construction_trains_at_torchs_rate():
    import torch
    x = rnd(4, 3, seed=6)
    want = load_torch(SRC)["momentum_set"](torch.from_numpy(x))
    mod, code, _ = load_converted(SRC)
    assert "_ms_compat.set_momentum(m, 0.5, '__main__:" in code, code
    got = mod.momentum_set(ms.Tensor(x))
    assert got[1] == want[1] == 0.5
    assert_close(got[0], want[0].numpy(), what="running mean")


def test_batchnorm_eps_set_after_construction():
    """`bn.eps = v` on a BatchNorm (a known layer, and a loop's `m` whose type only run time knows): MindSpore's
    layer trains and infers with primitives built with eps at construction, so setting it changed nothing (the
    outputs off by the eps's share of the variance); LayerNorm's the same (its `epsilon`). Train and eval mode
    against torch."""
    import torch
    x = rnd(2, 3, 2, 4, seed=8) * 0.05      # a variance near eps, where the two eps differ
    want = load_torch(SRC)["eps_set"](torch.from_numpy(x))
    mod, code, _ = load_converted(SRC)
    assert "_ms_compat.set_eps(self.bn, 0.02, '__main__:" in code, code
    assert "_ms_compat.set_eps(self.ln, 0.03, '__main__:" in code, code
    assert "_ms_compat.set_eps_if_norm(m, 1e-3, '__main__:" in code, code
    got = mod.eps_set(ms.Tensor(x))
    assert got[-2:] == want[-2:] == [1e-3, 0.03]
    assert_close(got[:-2], [w.detach().numpy() for w in want[:-2]], 1e-5, 1e-6, what="outputs")


DROPOUT_SRC = '''
import torch
from torch import nn


def dropped(x):
    net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    for m in net.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.125
    drop = nn.Dropout(0.25)
    drop.p = 0.875
    return (net[1](x) == 0).float().mean(), (drop(x) == 0).float().mean(), net[1].p, drop.p
'''


def test_dropout_p_set_after_construction():
    """`m.p = v` on a known Dropout: MindSpore's draws with a primitive built with the keep rate (it read p only to
    skip p=0), so the old rate went on, silently; the fraction dropped is the new p's, as torch's."""
    import torch
    x = np.ones((200, 100), np.float32)
    want = load_torch(DROPOUT_SRC)["dropped"](torch.from_numpy(x))
    mod, code, _ = load_converted(DROPOUT_SRC)
    assert code.count("_ms_compat.set_dropout_p(") == 2, code
    got = mod.dropped(ms.Tensor(x))
    assert got[2:] == want[2:] == (0.125, 0.875)
    for g, w, p in zip(got[:2], want[:2], (0.125, 0.875)):
        assert abs(float(w) - p) < 0.02 and abs(float(g) - p) < 0.02, (float(g), float(w), p)


INHERITED_DROPOUT_SRC = '''
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.fc(x))


class Scheduled(Block):
    def set_rate(self, p):
        self.drop.p = p


def dropped(x):
    block = Scheduled()
    block.set_rate(0.875)
    return (block.drop(x) == 0).float().mean(), block.drop.p
'''


def test_dropout_p_set_on_an_inherited_layer():
    """`self.drop.p = v` in a subclass whose base class built the Dropout: the subclass now knows the attributes its
    base class of the same file binds (transformer.visit_ClassDef), so the setting is set_dropout_p; before, it was
    a plain attribute and the layer went on dropping half."""
    import torch
    x = np.ones((200, 100), np.float32)
    want = load_torch(INHERITED_DROPOUT_SRC)["dropped"](torch.from_numpy(x))
    mod, code, _ = load_converted(INHERITED_DROPOUT_SRC)
    assert "_ms_compat.set_dropout_p(self.drop, p, '__main__:" in code, code
    got = mod.dropped(ms.Tensor(x))
    assert got[1] == want[1] == 0.875
    assert abs(float(want[0]) - 0.875) < 0.02 and abs(float(got[0]) - 0.875) < 0.02, (float(got[0]), float(want[0]))


def test_settings_mindspore_does_not_keep_raise_naming_the_line():
    mod, code, _ = load_converted(SRC)
    with pytest.raises(Exception, match=r"BatchNorm2d\.affine at __main__:\d+") as err:
        mod.affine()
    assert type(err.value).__name__ == "MigrationError"


def test_padding_read_in_construct_graph():
    check_layer(SRC, [rnd(2, 2, 5, seed=7)], graph=True, grad=True)
