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
