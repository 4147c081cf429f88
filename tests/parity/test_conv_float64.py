"""F.conv_transpose1d/2d with a float64 input: MindSpore has no float64 convolution kernel (Conv2D,
Conv2DTranspose, Conv3D take float16/32), so the conversion stops with a MigrationError naming the torch line
instead of MindSpore's TypeError; float32 inputs still compute torch's values and input gradient, in PyNative and
GRAPH mode (the dtype check folds at compile time)."""
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
