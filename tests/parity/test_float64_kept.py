"""float64 asked for stays float64: factories whose MindSpore form computed in float32 and cast the result
(ops.linspace from Python numbers is float32; the window formulas ran over a float32 ops.arange). Compared with
torch at 1e-13, and the dtype."""
from __future__ import annotations

import numpy as np

from tests.parity.harness import load_converted, load_torch, no_todo

SRC = """
import torch


def fn():
    return (torch.linspace(-1.5, 1.5, steps=19, dtype=torch.float64), torch.linspace(0.1, 7, 1000, dtype=torch.float64),
            torch.logspace(-2, 2, 9, dtype=torch.float64), torch.logspace(0, 1, 5, base=2.0, dtype=torch.float64),
            torch.special.sinc(torch.linspace(-1.5, 1.5, 19, dtype=torch.float64)), torch.linspace(0, 1, 5))
"""


def _check(src, n64):
    mod, code, sites = load_converted(src)
    no_todo(sites)
    want = load_torch(src)["fn"]()
    got = mod.fn()
    for i, (g, w) in enumerate(zip(got, want)):
        w = w.detach().numpy()
        g = g.asnumpy()
        assert g.dtype == w.dtype, (i, g.dtype, w.dtype)
        tol = 1e-13 if i < n64 else 1e-5
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=f"{i}: {code}")


def test_linspace_logspace_float64():
    _check(SRC, 5)


WINDOWS = """
import torch


def fn():
    return (torch.signal.windows.exponential(M=10, sym=True, dtype=torch.float64),
            torch.signal.windows.gaussian(M=10, sym=True, dtype=torch.float64),
            torch.signal.windows.exponential(8, center=2.0, tau=0.5, sym=False, dtype=torch.float64),
            torch.signal.windows.gaussian(9, std=2.5), torch.signal.windows.exponential(6))
"""


def test_formula_windows_float64():
    _check(WINDOWS, 3)


LAYER_NORM = """
import torch
import torch.nn as nn


def fn():
    x = torch.arange(24, dtype=torch.float64).reshape(2, 3, 4) / 5.0 + 0.3
    plain = nn.LayerNorm(4, eps=1e-04, elementwise_affine=False, bias=False, dtype=torch.float64)
    two = nn.LayerNorm([3, 4], dtype=torch.float64)
    return plain(x), two(x), nn.LayerNorm(4)(x.float())
"""


def test_layer_norm_float64():
    """nn.LayerNorm of a float64 input: torch's formula in float64 (MindSpore's kernel: 1e-6 off)."""
    _check(LAYER_NORM, 2)
