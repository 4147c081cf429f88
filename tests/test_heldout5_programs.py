"""Constructs found by bench/real_world.py --set heldout5 (bench/_rw_heldout5.py: karpathy/ng-video-lecture,
L1aoXingyu/pytorch-beginner, lucidrains' siren, g-mlp, lambda-networks and CoCa) in programs the converter was
never run on, each reduced to a minimal torch snippet of our own run against its conversion."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .parity.harness import load_converted, load_torch  # noqa: E402

ACCUMULATED_ACCURACY = """
import torch

out = torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
label = torch.tensor([1, 0, 0])
lines = []
running_acc = 0.0
for i in range(1, 3):
    _, pred = torch.max(out * i, 1)
    running_acc += (pred == label).float().mean()
    lines.append(f'Acc: {running_acc / i:.6f}')


def fn(out, label):
    acc = 0
    shown = []
    for i in range(1, 3):
        values, pred = torch.max(out, 1)
        acc += (pred == label).float().mean()
        shown.append(f'{acc / i:.3f} {values.sum():.2f}')
    return shown
"""


def test_accumulated_tensor_formatted_with_a_spec():
    """pytorch-beginner's Logistic_Regression.py / neural_network.py: `running_acc = 0.0`, then
    `running_acc += (pred == label).float().mean()` (a 0-d tensor from then on) and
    `f'{running_acc/i:.6f}'`: MindSpore's Tensor has no __format__ (TypeError: unsupported format string passed
    to Tensor.__format__). The augmented name is a tensor from the `+=` on, at a script's top level (with `pred`
    unpacked from torch.max there) and in a function: the field formats through format_value, as torch's
    0-d tensor formats its number."""
    import mindspore as ms
    import numpy as np
    import torch

    mod, code, _ = load_converted(ACCUMULATED_ACCURACY)
    assert "_ms_compat.format_value(running_acc / i):.6f" in code, code
    assert "_ms_compat.format_value(acc / i):.3f" in code, code
    torch_ns = load_torch(ACCUMULATED_ACCURACY)
    assert mod.lines == torch_ns["lines"] == ["Acc: 0.666667", "Acc: 0.666667"]
    out = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]], np.float32)
    label = np.array([1, 0, 1], np.int64)
    assert mod.fn(ms.Tensor(out), ms.Tensor(label)) == torch_ns["fn"](torch.from_numpy(out),
                                                                        torch.from_numpy(label))


TOKEN_SHIFT = """
import torch
import torch.nn as nn
import torch.nn.functional as F


def shift(t, amount):
    if amount == 0:
        return t
    return F.pad(t, (0, 0, amount, -amount), value=0.)


class ShiftTokens(nn.Module):
    def __init__(self, shifts):
        super().__init__()
        self.norm = nn.LayerNorm(6)
        self.shifts = shifts

    def forward(self, x):
        x = self.norm(x)
        parts = x.split(x.shape[-1] // len(self.shifts), dim=-1)
        return torch.cat([shift(p, s) for p, s in zip(parts, self.shifts)], dim=-1)


def make():
    return ShiftTokens((-1, 0, 1))
"""

NEGATIVE_PADS = """
import torch.nn.functional as F


def fn(x, n):
    return F.pad(x, (-1, 2, 1, -1)), F.pad(x, [n, -n], value=2.5), F.pad(x, (0, 0, -n, 0))
"""


@pytest.mark.parametrize("graph", [False, True])
def test_negative_padding_crops(graph):
    """g-mlp-pytorch's PreShiftTokens: each feature slice of a (normalized) sequence shifted by
    `F.pad(t, (0, 0, amount, -amount))`, a negative amount cropping its side. MindSpore's CPU pad kernel given a
    negative amount returned wrong rows (zeros in place of the last kept row: the gMLP with shift_tokens trained
    0.3 away from torch, silently) and, called again, hung. F.pad whose amounts are not all non-negative literals
    becomes _ms_compat.pad_constant, which crops those sides itself: values and gradients as torch's."""
    from .parity.harness import check_function, check_layer, rnd

    code, _ = check_layer(TOKEN_SHIFT, [rnd(2, 5, 6)], train=True, graph=graph, grad=True)
    assert "_ms_compat.pad_constant(t, (0, 0, amount, -amount), 0.)" in code, code
    if not graph:
        for _ in range(3):      # the kernel hung on a later call of the same shape
            check_function(NEGATIVE_PADS, [rnd(2, 4, 5), 1], grad=True, graph=False)


SEQUENTIAL_PER_CALL = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4)])
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        layers = self.layers if not self.training else [layer for layer in self.layers]
        x = nn.Sequential(*layers)(x)
        return self.head(nn.Sequential(nn.Tanh(), nn.Identity())(x))


def make():
    model = Net()
    return {"model": model, "optimizer": torch.optim.Adam(model.parameters(), lr=0.05)}


def train(objs, batches):
    model, optimizer = objs["model"], objs["optimizer"]
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
"""


def test_sequential_built_and_called_in_forward():
    """g-mlp-pytorch's gMLP.forward: `nn.Sequential(*layers)(x)`, a container built at each call. In GRAPH mode a
    SequentialCell built inside the compiled construct is a constant of the graph: the layers' gradients came out
    0 and the losses left torch's from the second step (silently; PYNATIVE matched). The call becomes
    `_ms_compat.run_in_order(layers, x)`: per-step losses and final weights as torch's in both modes."""
    from .test_train_loop import _batches, run_both

    code, sites, results = run_both(SEQUENTIAL_PER_CALL, _batches(n=4))
    assert set(results) == {"graph", "pynative"}
    assert "_ms_compat.run_in_order(layers, x)" in code, code
    assert "_ms_compat.run_in_order((_ms_compat.Tanh(), nn.Identity()), x)" in code, code
