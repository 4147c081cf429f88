"""nn.BatchNorm*d(dtype=torch.float64): MindSpore's BatchNorm kernel takes float16/float32 only, so the
conversion is a TODO that raises where the layer is built (keyword form), and _ms_compat's BatchNorm (the
*args form) raises MigrationError, never MindSpore's TypeError at the first forward; float32 still matches."""
from __future__ import annotations

import pytest

from msmigrate.registry import TODO
from tests.parity.harness import check_function, load_converted, rnd

SRC = """
import torch
import torch.nn as nn


def keyword(x):
    m = nn.BatchNorm2d(3, momentum=0.2, dtype=torch.float64)
    return m(x.double())


def starred(x):
    args = (3, 1e-05, 0.2, True, True, None, torch.float64)
    m = nn.BatchNorm2d(*args)
    return m(x.double())


def float32(x):
    args = (3, 1e-05, 0.2, True, True, None, torch.float32)
    m = nn.BatchNorm2d(*args)
    return m(x)
"""


def test_batchnorm_float64_stops_clearly():
    mod, code, sites = load_converted(SRC)
    assert [s.status for s in sites if s.api == "torch.nn.BatchNorm2d"].count(TODO) == 1, code
    x = mod.ms.Tensor(rnd(2, 3, 4, 4))
    with pytest.raises(mod._ms_compat.MigrationError, match="BatchNorm2d at __main__:7.*float64"):
        mod.keyword(x)
    with pytest.raises(mod._ms_compat.MigrationError, match=r"BatchNorm2d\(dtype=float64\)"):
        mod.starred(x)
    check_function(SRC, [rnd(2, 3, 4, 4)], entry="float32", grad=True, graph=False, rtol=1e-4, atol=1e-5)


# F.batch_norm on float64 (PaConvert's nn_functional_batch_norm case 13): MindSpore's BatchNorm kernel refuses it;
# _ms_compat.batch_norm computes torch's formula in float64 (compat_parts/float64_batch_norm.py).
# (running statistics exact in float32 too: a constant compiled into a graph may pass through float32)
FUNCTIONAL = """
import torch
import torch.nn.functional as F


def stats(x):
    return torch.tensor([0.125, -0.25, 0.375], dtype=x.dtype), torch.tensor([0.5, 1.5, 2.0], dtype=x.dtype)


def evaluate(x, w, b):
    rm, rv = stats(x)
    return F.batch_norm(x, rm, rv, w, b, training=False)


def train(x, w, b):
    rm, rv = stats(x)
    y = F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3, eps=1e-3)
    return y, rm, rv


def plain(x):
    rm, rv = stats(x)
    return F.batch_norm(x, rm, rv)
"""


def _inputs(dtype, ndim=4):
    import numpy as np
    x = rnd(*((2, 3, 4, 5)[:ndim]), seed=3).astype(dtype) * 2 + 0.5
    return x, np.array([1.2, 0.7, -0.4], dtype), np.array([0.1, 0.0, -0.3], dtype)


@pytest.mark.parametrize("ndim", [3, 4])
def test_functional_batch_norm_float64_matches_torch(ndim):
    import numpy as np
    x, w, b = _inputs(np.float64, ndim)
    # eval: values and gradients of x, weight, bias, PyNative and ms.jit
    check_function(FUNCTIONAL, [x, w, b], entry="evaluate", grad=True, rtol=1e-12, atol=1e-12)
    check_function(FUNCTIONAL, [x], entry="plain", rtol=1e-12, atol=1e-12)
    # train: batch statistics, gradients, and the running statistics torch updates in place (returned here)
    check_function(FUNCTIONAL, [x, w, b], entry="train", grad=True, graph=False, rtol=1e-10, atol=1e-12)


def test_functional_batch_norm_float64_training_compiled_raises_naming_the_line():
    import mindspore as ms
    import numpy as np
    mod, code, _ = load_converted(FUNCTIONAL)
    line = next(i for i, ln in enumerate(FUNCTIONAL.splitlines(), 1) if "training=True" in ln)
    with pytest.raises(mod._ms_compat.MigrationError, match=rf":{line}\b.*float64"):
        ms.jit(mod.train)(*[ms.Tensor(a) for a in _inputs(np.float64)])


def test_functional_batch_norm_float32_unchanged():
    import numpy as np
    x, w, b = _inputs(np.float32)
    check_function(FUNCTIONAL, [x, w, b], entry="evaluate", grad=True, rtol=1e-5, atol=1e-6)
    check_function(FUNCTIONAL, [x, w, b], entry="train", graph=False, rtol=1e-5, atol=1e-6)
