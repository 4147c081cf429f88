"""torch modules start in training mode, MindSpore cells in inference mode (msmigrate/default_mode.py):
a program that never calls train()/eval() must compute torch's values (BatchNorm's batch statistics)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.parity.harness import assert_close, load_converted, load_torch, program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

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


NESTED_SRC = '''
import torch
import torch.nn as nn


class Holder(nn.Module):                   # builds no mode-dependent layer itself: it is handed one
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x)


def make_stack():
    return nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Dropout(0.0))


class Grower(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def add_norm(self):                    # a layer built in a method other than __init__
        self.norm = nn.BatchNorm1d(4)
        return self


wrapped = Holder(nn.BatchNorm1d(4))
'''


def test_layers_built_outside_init_start_in_training_mode():
    """A BatchNorm built inside an expression (`return nn.Sequential(..., nn.BatchNorm1d(3))` in a function,
    `Holder(nn.BatchNorm1d(4))`, a method other than __init__) starts in torch's training mode too: it is
    converted with `.set_train()` appended. Values in that starting mode compared with torch."""
    import mindspore as ms
    import torch

    from msmigrate.weights import load_torch_state_dict

    mod, code, _ = load_converted(NESTED_SRC)
    assert code.count("nn.BatchNorm1d(3).set_train()") == 1 and code.count("nn.BatchNorm1d(4).set_train()") == 2, code
    assert code.split("def make_stack")[1].split("\n\n")[0].count(".set_train()") == 2, code   # BatchNorm, Dropout
    ns = load_torch(NESTED_SRC)
    x = np.random.default_rng(2).normal(2.0, 3.0, (8, 4)).astype(np.float32)
    t_stack, m_stack = ns["make_stack"](), mod.make_stack()
    load_torch_state_dict(m_stack, t_stack.state_dict())
    t_grow, m_grow = ns["Grower"]().add_norm(), mod.Grower().add_norm()
    load_torch_state_dict(m_grow, t_grow.state_dict())
    # the layers' own modes (a container's own flag is read by no layer: SequentialCell's stays False)
    modes = [(mod.wrapped.inner, ns["wrapped"].inner), (m_stack[1], t_stack[1]), (m_stack[2], t_stack[2]),
             (m_grow.norm, t_grow.norm)]
    assert all(m.training and t.training for m, t in modes)
    pairs = [(mod.wrapped.inner, ns["wrapped"].inner), (m_stack, t_stack), (m_grow.norm, t_grow.norm)]
    for i, (m, t) in enumerate(pairs):
        assert_close(m(ms.Tensor(x)), t(torch.tensor(x)), what=f"layer {i} in its starting mode")


CONTAINER_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x):
        return self.bn(self.fc(x))


class Half(nn.Module):
    def forward(self, x):
        return x * 0.5


def wrap(first, model):
    return nn.Sequential(first, model)


net = Net()
net.eval()
pair = wrap(Half(), net)
listed = nn.ModuleList([Half()])
keyed = nn.ModuleDict({"a": Half()})
was_training = pair.training          # the attack-library idiom: switch to eval, then back if it trained
pair.eval()
if was_training:
    pair.train()
'''


def test_new_containers_train_and_keep_their_childrens_modes():
    """A torch container built outside a class trains (its own flag), whatever its children's modes:
    `nn.Sequential(first, model)` of a model in eval mode reads `.training` True, and a program that puts it back
    in training mode when it was training (torchattacks' _recover_model_mode) leaves the model training, as in
    torch. Converted with `.add_flags(training=True)` (the container's own flag; set_train would switch the
    model too)."""
    mod, code, _ = load_converted(CONTAINER_SRC)
    assert code.count(".add_flags(training=True)") == 3, code
    ns = load_torch(CONTAINER_SRC)
    for name in ("listed", "keyed"):
        assert getattr(mod, name).training and ns[name].training, name
    assert ns["was_training"] is True and mod.was_training is True
    assert mod.net.training and mod.net.bn.training and ns["net"].bn.training


STEP_SRC = _FILL + '''
import torch.nn as nn


def build(norm_layer=nn.BatchNorm1d):      # the norm layer passed as a class: built unseen by the converter
    return nn.Sequential(nn.Linear(4, 3), norm_layer(3), nn.Linear(3, 1))


model = build()
fill(model, 0)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.arange(24, dtype=torch.float32).reshape(6, 4) / 10
y = torch.ones(6, 1)
for i in range(3):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
weights = list(model.parameters())   # the BatchNorm in eval mode would give other gradients
'''


@pytest.mark.parametrize("graph", [False, True])
def test_step_trains_the_layers_a_new_container_holds(graph):
    """A new container's own flag is set (above), but the BatchNorm it holds, built from a class passed as a
    value, was never switched: the training step still puts it in training mode (batch statistics, running
    statistics updated), as torch's new modules are."""
    program_weights_match_torch(STEP_SRC, graph)
