"""log_softmax in every converted form through _ms_compat.log_softmax, x - logsumexp(x)
(templates/compat_parts/softmax_slices.py). Measured on MindSpore 2.10 CPU: ops.log_softmax computes a float64
input in float32 (off by ~3e-6, gradient by ~2e-5) and is ~30 ulp off in float32. Values and gradients against
torch in float32 and float64, PyNative and GRAPH, with a row of all -inf (torch's nan) and rows partly -inf."""
from __future__ import annotations

import numpy as np
import pytest

from tests.parity.harness import assert_close, load_converted, load_torch

SRC = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.LogSoftmax(dim=1)
        self.implicit = nn.LogSoftmax()

    def forward(self, x):
        return (torch.log_softmax(x, 1), F.log_softmax(x, dim=-1), x.log_softmax(-1), self.layer(x),
                self.implicit(x), torch.special.log_softmax(x, 1), F.log_softmax(x * 2, 1, dtype=x.dtype))


def make():
    return Net()
"""

RNG = np.random.default_rng(5)
X = RNG.standard_normal((5, 7)) * 5
X[1] = -np.inf           # a row of all -inf: torch's nan
X[2, :3] = -np.inf       # a masked row: -inf there, the rest exact
X[3, 4:] = X[3].max()    # ties at the maximum


# float32 gradients sum seven outputs weighted up to 7 (|grad| ~ 200): a few float32 ulps of that
@pytest.mark.parametrize("dtype, tol, grad_tol", [("float32", 1e-6, 1e-5), ("float64", 1e-12, 1e-12)])
def test_log_softmax_forms(dtype, tol, grad_tol):
    import mindspore as ms
    import torch
    from mindspore import ops

    mod, code, _ = load_converted(SRC)
    assert "ops.log_softmax" not in code and code.count("_ms_compat.log_softmax(") == 4, code
    assert "_ms_compat.special_log_softmax(" in code, code    # in float64 (special_compose.py)
    assert "_ms_compat.LogSoftmax(" in code and "_ms_compat.ImplicitDimSoftmax(log=True)" in code, code
    x = X.astype(dtype)
    t_x = torch.from_numpy(x.copy()).requires_grad_(True)
    want = load_torch(SRC)["make"]()(t_x)
    sum((torch.where(w.isfinite(), w, 0) * (i + 1)).sum() for i, w in enumerate(want)).backward()
    net = mod.make()

    def total(a):
        return sum((ops.where(ops.isfinite(o), o, ops.zeros_like(o)) * (i + 1)).sum() for i, o in enumerate(net(a)))
    for mode, run, grad in (("pynative", net, ms.grad(total)), ("graph", ms.jit(net.construct), ms.jit(ms.grad(total)))):
        got = run(ms.Tensor(x))
        assert all(o.dtype == getattr(ms, dtype) for o in got), (mode, [o.dtype for o in got])
        assert_close(got, want, tol, tol, mode)       # the nan row and the -inf entries included
        assert_close(grad(ms.Tensor(x)), t_x.grad, grad_tol, grad_tol, mode + " gradient")

