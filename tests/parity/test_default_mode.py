"""torch modules start in training mode, MindSpore cells in inference mode (msmigrate/default_mode.py):
a program that never calls train()/eval() must compute torch's values (BatchNorm's batch statistics)."""
from __future__ import annotations

import numpy as np

from tests.parity.harness import assert_close, load_converted, load_torch

SRC = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.bn = nn.BatchNorm1d(6)

    def forward(self, x):
        return self.bn(self.fc(x))


class Net(nn.Module):                      # no mode-dependent layer of its own: its Block sets itself
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        return self.head(self.block(x))


class Gate(nn.Module):                     # reads self.training
    def forward(self, x):
        return x * 2 if self.training else x


class Frozen(nn.Module):                   # sets its own mode while building: left as written
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(6)
        self.eval()

    def forward(self, x):
        return self.bn(x)
'''


def test_cells_start_in_training_mode():
    import mindspore as ms
    import torch

    from msmigrate.weights import load_torch_state_dict

    mod, code, _ = load_converted(SRC)
    assert code.count("self.set_train(True)") == 2, code     # Block and Gate; not Net, not Frozen
    ns = load_torch(SRC)
    x = np.random.default_rng(0).normal(2.0, 3.0, (8, 4)).astype(np.float32)
    t_net, m_net = ns["Net"](), mod.Net()
    load_torch_state_dict(m_net, t_net.state_dict())
    assert t_net.training and m_net.block.training and m_net.block.bn.training
    assert_close(m_net(ms.Tensor(x)), t_net(torch.tensor(x)), what="Net in its starting mode")
    t_net.eval()
    m_net.set_train(False)
    assert_close(m_net(ms.Tensor(x)), t_net(torch.tensor(x)), what="Net after eval()")
    assert mod.Gate().training and float(mod.Gate()(ms.Tensor(1.0))) == 2.0
    assert not mod.Frozen().training and not ns["Frozen"]().training


SCRIPT_SRC = '''
import torch
import torch.nn as nn

bn = nn.BatchNorm1d(4)
seq = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
lin = nn.Linear(4, 3)


def build():
    layer = torch.nn.BatchNorm1d(4)
    frozen = nn.BatchNorm1d(4)
    frozen.eval()
    return layer, frozen
'''


def test_script_level_layers_start_in_training_mode():
    """A layer built outside a class (at a script's top level or in a function) starts in torch's training
    mode: BatchNorm's batch statistics, the same values; a later eval() still wins."""
    import mindspore as ms
    import torch

    from msmigrate.weights import load_torch_state_dict

    mod, code, _ = load_converted(SCRIPT_SRC)
    assert code.count(".set_train(True)") == 4, code       # bn, seq, layer, frozen; not lin
    ns = load_torch(SCRIPT_SRC)
    x = np.random.default_rng(1).normal(2.0, 3.0, (8, 4)).astype(np.float32)
    load_torch_state_dict(mod.seq, ns["seq"].state_dict())
    pairs = [(mod.bn, ns["bn"]), (mod.seq, ns["seq"])] + list(zip(mod.build(), ns["build"]()))
    for i, (m, t) in enumerate(pairs):
        assert m.training == t.training, i
        assert_close(m(ms.Tensor(x)), t(torch.tensor(x)), what=f"layer {i} in its starting mode")
