"""F.conv1d/2d/3d (torch.conv2d) and F.conv_transpose1d/2d with a float64 input: MindSpore has no float64
convolution kernel (Conv2D, Conv2DTranspose, Conv3D take float16/32), so the conversion stops with a
MigrationError naming the torch line instead of MindSpore's TypeError; float32 inputs still compute torch's values
and input gradient, in PyNative and GRAPH mode (the dtype check folds at compile time)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.parity.harness import _to_ms, check_function, load_converted, rnd

SRC = """
import torch
import torch.nn.functional as F


def fn(x1, w1, x2, w2, b2):
    return F.conv_transpose1d(x1, w1, stride=2), F.conv_transpose2d(x2, w2, b2, stride=2, padding=1)
"""
ARGS = [rnd(2, 3, 5, seed=1), rnd(3, 4, 3, seed=2), rnd(2, 3, 4, 5, seed=3), rnd(3, 4, 3, 3, seed=4), rnd(4, seed=5)]


def test_conv_transpose_float32_values():
    check_function(SRC, ARGS, grad=True, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("which", [0, 2])
def test_conv_transpose_float64_names_the_line(which):
    mod, code, _ = load_converted(SRC)
    assert "_ms_compat.conv_input(x1, 'conv_transpose1d', '__main__:7')" in code, code
    args = [_to_ms(a.astype(np.float64) if i in (which, which + 1) else a) for i, a in enumerate(ARGS)]
    api = "conv_transpose1d" if which == 0 else "conv_transpose2d"
    with pytest.raises(mod._ms_compat.MigrationError, match=f"{api} at __main__:7: a float64 input"):
        mod.fn(*args)


def test_conv_transpose_float64_compiled():
    import mindspore as ms
    mod, _, _ = load_converted(SRC)
    args = [_to_ms(a.astype(np.float64) if i in (2, 3) else a) for i, a in enumerate(ARGS)]
    with pytest.raises(mod._ms_compat.MigrationError, match="conv_transpose2d at __main__:7: a float64 input"):
        ms.jit(mod.fn)(*args)


CONV_SRC = """
import torch
import torch.nn.functional as F


def fn(x1, w1, x2, w2, b2, x3, w3):
    a = F.conv1d(x1, w1, padding=1)
    b = torch.conv2d(x2, w2, b2, stride=2, padding=1)
    return a, b, F.conv3d(x3, w3, padding='same')
"""
CONV_ARGS = [rnd(2, 3, 7, seed=1), rnd(4, 3, 3, seed=2), rnd(2, 3, 6, 5, seed=3), rnd(4, 3, 3, 3, seed=4),
             rnd(4, seed=5), rnd(1, 2, 4, 4, 4, seed=6), rnd(3, 2, 3, 3, 3, seed=7)]


def test_conv_float32_values():
    check_function(CONV_SRC, CONV_ARGS, grad=True, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("graph", [False, True], ids=["pynative", "graph"])
@pytest.mark.parametrize("which,api,line", [(0, "conv1d", 7), (2, "conv2d", 8), (5, "conv3d", 9)])
def test_conv_float64_names_the_line(which, api, line, graph):
    """torch computes these in float64; MindSpore's kernels have no float64: MigrationError naming the torch
    line (in a compiled graph too), never MindSpore's TypeError nor a float32 result."""
    import mindspore as ms
    mod, code, _ = load_converted(CONV_SRC)
    assert f"_ms_compat.conv_input(x1, 'conv1d', '__main__:7')" in code, code
    args = [_to_ms(a.astype(np.float64) if i in (which, which + 1) else a) for i, a in enumerate(CONV_ARGS)]
    with pytest.raises(mod._ms_compat.MigrationError, match=f"{api} at __main__:{line}: a float64 input"):
        (ms.jit(mod.fn) if graph else mod.fn)(*args)


DOUBLE_SRC = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.body = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU())


def make_net():
    return Net()


def layer_double():
    return nn.Conv2d(3, 4, 3).double()


def net_double():
    net = Net()
    return net.double()


def untyped_double():
    return make_net().double()


def linear_double(x):
    return nn.Linear(3, 2).double()(x).dtype
"""


@pytest.mark.parametrize("fn,line,what", [("layer_double", 18, "Conv2d \\(the module\\)"),
                                          ("net_double", 23, "Conv2d body.0"),
                                          ("untyped_double", 27, "Conv2d body.0")])
def test_module_double_with_a_conv_names_the_line(fn, line, what):
    """`.double()` of a module holding a conv layer: torch then convolves in float64, which MindSpore cannot; the
    cast raises MigrationError naming the torch line (before: AttributeError on nn.Conv2d(...).double())."""
    mod, code, sites = load_converted(DOUBLE_SRC)
    assert not [s for s in sites if s.status == "todo"], code
    with pytest.raises(mod._ms_compat.MigrationError, match=f"__main__:{line}: .double\\(\\) of {what}: MindSpore"):
        getattr(mod, fn)()


def test_module_double_without_a_conv_computes_in_float64():
    import mindspore as ms
    mod, _, _ = load_converted(DOUBLE_SRC)
    assert mod.linear_double(_to_ms(rnd(2, 3).astype(np.float64))) == ms.float64
