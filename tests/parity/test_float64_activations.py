"""softplus, mish, celu and selu (functional, torch.*, and the nn layers), and digamma, on float64 input: torch computes them in
float64; MindSpore's kernels compute them in float32 (relative errors 1e-8 .. 1, the latter where log1p(exp(x))
is tiny), and a Python float constant multiplies a float64 tensor rounded to float32. The converted helpers use
torch's formulas in float64 then: values and input gradients to ~1e-15, in PyNative and GRAPH mode; float32
inputs keep MindSpore's kernels (values; ops.mish's float32 input gradient is off by up to 3%: not compared).
celu's alphas are float32-exact: torch's own celu gradient uses 1 / alpha rounded to float32 (derivatives.yaml's
`1.0/alpha.toFloat()`), 1e-9 off the float64 value this helper differentiates for alpha=0.7."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .harness import check_function  # noqa: E402

SRC = """
import torch
import torch.nn as nn
import torch.nn.functional as F


def fn(x):
    return (F.softplus(x), F.softplus(x, beta=2, threshold=5), F.mish(x), F.selu(x), F.celu(x, alpha=0.5),
            torch.celu(x, 2.0), torch.selu(x), nn.Softplus(beta=0.5)(x), nn.Mish()(x), nn.SELU()(x), nn.CELU(0.75)(x))
"""


def _x(dtype):
    x = np.random.default_rng(0).standard_normal(200) * 4
    x[:6] = [25.0, -30.0, 0.0, 19.5, 2.5, -45.0]   # past the threshold, tiny softplus, the kink
    return x.astype(dtype)


def test_float64_in_float64():
    check_function(SRC, [_x(np.float64)], grad=True, rtol=1e-12, atol=1e-14)


def test_float32_values():
    check_function(SRC, [_x(np.float32)], rtol=1e-5, atol=1e-6)
    check_function(SRC.replace("F.mish(x), ", "").replace("nn.Mish()(x), ", ""), [_x(np.float32)], grad=True,
                   rtol=1e-5, atol=1e-6)


def test_float64_constants_not_rounded():
    """alpha/beta that float32 cannot hold (0.7, 0.3): the values stay float64-exact, in GRAPH mode too."""
    src = ("import torch.nn as nn\nimport torch.nn.functional as F\n\n\ndef fn(x):\n"
           "    return F.celu(x, 0.7), F.softplus(x, beta=0.3), nn.CELU(0.3)(x), F.selu(x)\n")
    check_function(src, [_x(np.float64)], rtol=1e-13, atol=1e-15)


DIGAMMA_SRC = """
import torch


def fn(x):
    return torch.digamma(x), x.digamma(), torch.special.psi(x)
"""


def test_digamma_float64():
    """torch.digamma in float64 (MindSpore's kernel: about 3e-5 relative off): values over positive, negative and
    near-pole inputs, -inf at 0 and NaN at the negative integers, and the input gradient (torch's trigamma)."""
    x = np.concatenate([np.random.default_rng(3).uniform(-6, 30, 300), [1e-3, 0.5, 1.0, 9.99, 10.0, 1e4, -2.5]])
    check_function(DIGAMMA_SRC, [x], rtol=1e-12, atol=1e-13)
    # the gradient against torch's trigamma, itself a shorter series (5e-10 relative apart)
    check_function(DIGAMMA_SRC, [x], grad=True, graph=False, rtol=1e-8, atol=1e-10)
    check_function(DIGAMMA_SRC, [np.array([0.0, -1.0, -3.0, 2.0])], rtol=1e-12, atol=1e-14)
    check_function(DIGAMMA_SRC, [x.astype(np.float32)], rtol=1e-3, atol=1e-4)   # float32: MindSpore's kernel
