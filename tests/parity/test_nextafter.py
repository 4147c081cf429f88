"""torch.nextafter / Tensor.nextafter through _ms_compat.nextafter (templates/compat_parts/nextafter.py).
Measured on MindSpore 2.10 CPU: ops.nextafter returns a float32 input unchanged, so every float32 case differed
by one float32 step (hidden by a 1e-5 tolerance); here the bits are compared exactly."""
from __future__ import annotations

import numpy as np

from tests.parity.harness import load_converted, load_torch, no_todo

SRC = """
import torch


def fn(a, b, a64, b64):
    return torch.nextafter(a, b), a.nextafter(b), torch.nextafter(a[:3].reshape(1, 3), b[:6].reshape(2, 3)), \\
        torch.nextafter(a64, b64)
"""

# no subnormal inputs: with the CPU's denormals-are-zero mode on (which a process's earlier code may set) torch
# itself reads -1e-45 as 0 and answers +0, else -0; stepping from zero to a subnormal is checked
A = np.array([0., -0., 1., 2., -3., 1.2e-38, -1.2e-38, np.inf, -np.inf, np.nan, 5., 3.4028235e38, 1., 0.1],
             np.float32)
B = np.array([0.5, -1, 1.5, 0., -4., 1., -1., 0., 0., 1., np.nan, np.inf, 1., -7.], np.float32)


def test_nextafter_bits():
    import mindspore as ms
    import torch

    mod, code, sites = load_converted(SRC)
    no_todo(sites)
    assert code.count("_ms_compat.nextafter(") == 4, code
    args = (A, B, A.astype(np.float64), B.astype(np.float64))
    want = load_torch(SRC)["fn"](*[torch.from_numpy(x) for x in args])
    got = mod.fn(*[ms.Tensor(x) for x in args])
    for i, (g, w) in enumerate(zip(got, want)):
        w = w.numpy()
        g = g.asnumpy()
        assert g.dtype == w.dtype and g.shape == w.shape, (i, g.dtype, w.dtype, g.shape, w.shape)
        bits = {4: np.int32, 8: np.int64}[w.itemsize]
        nan = np.isnan(w)
        assert np.array_equal(np.isnan(g), nan), i
        np.testing.assert_array_equal(g[~nan].view(bits), w[~nan].view(bits), err_msg=str(i))
