"""F.conv_transpose3d (-> _ms_compat.conv_transpose3d, the Conv3DTranspose primitive): torch and the conversion on
the same inputs, values and the gradients with respect to input, weight and bias; stride, padding, output_padding
below and above padding, groups, a height/width dilation, an unbatched input; a depth dilation stops with
an error saying so."""
from __future__ import annotations

import mindspore as ms
import pytest

from msmigrate.registry import TODO
from tests.parity.harness import check_function, load_converted, rnd

SRC = """
import torch
import torch.nn.functional as F


def fn(x, w, b, xg, wg):
    return (F.conv_transpose3d(x, w), F.conv_transpose3d(x, w, b, stride=2, padding=1, output_padding=1),
            F.conv_transpose3d(x, w, b, 2, 0, (1, 1, 0)),
            F.conv_transpose3d(x, w, stride=(1, 2, 2), padding=(0, 1, 1), dilation=(1, 2, 2)),
            F.conv_transpose3d(xg, wg, groups=2, stride=2), F.conv_transpose3d(x[0], w, b),
            torch.conv_transpose3d(x, w, b, 1, 1))


def deep(x, w):
    return F.conv_transpose3d(x, w, dilation=2)
"""
X, W, B = rnd(2, 2, 3, 4, 4, seed=1), rnd(2, 3, 2, 3, 3, seed=2), rnd(3, seed=3)
XG, WG = rnd(1, 4, 2, 3, 3, seed=4), rnd(4, 2, 2, 2, 2, seed=5)


def test_conv_transpose3d():
    _, sites = check_function(SRC, [X, W, B, XG, WG], grad=True, rtol=1e-4, atol=1e-4)
    assert {"torch.nn.functional.conv_transpose3d", "torch.conv_transpose3d"} <= {s.api for s in sites}
    assert not [s.api for s in sites if s.status == TODO]
    mod, _, _ = load_converted(SRC)
    with pytest.raises(Exception, match="depth dilation"):
        mod.deep(ms.Tensor(X), ms.Tensor(W))


def test_conv_transpose3d_of_float64_stops():
    """A float64 input: torch computes in float64, MindSpore's Conv3DTranspose takes float16/32 only (a raw
    TypeError from the primitive before): MigrationError saying so."""
    import numpy as np
    import sys

    mod, _, _ = load_converted(SRC)
    with pytest.raises(sys.modules["_ms_compat"].MigrationError, match=r"conv_transpose3d at \S+:7: a float64"):
        mod.fn(*(ms.Tensor(a.astype(np.float64)) for a in (X, W, B, XG, WG)))
