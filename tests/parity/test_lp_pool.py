"""Lp pooling (nn.LPPool1d/2d/3d, F.lp_pool1d/2d/3d -> _ms_compat, templates/compat_parts/nn_extra.py): torch and
the conversion on the same inputs, values and input gradient. A non-integer norm_type (torch's ModuleInfo samples
use 1.5) makes x^p NaN for a negative x: torch's output is NaN for that window, and MindSpore's own LPPool gave 0."""
from __future__ import annotations

import numpy as np

from msmigrate.registry import TODO
from tests.parity.harness import check_function, rnd

SRC = """
import torch
import torch.nn as nn
import torch.nn.functional as F


def layers(s, i, v):
    return (nn.LPPool1d(1.5, 3, 2)(s), nn.LPPool1d(2, 2)(s), nn.LPPool2d(1.5, (2, 3), stride=1)(i),
            nn.LPPool2d(3, 2, ceil_mode=True)(i), nn.LPPool3d(1.5, 2)(v))


def functional(s, i, v):
    return (F.lp_pool1d(s, 1.5, 2, stride=1), F.lp_pool2d(i, 2.5, 2), F.lp_pool3d(v, 1.5, (1, 2, 2)))


def infinite(s, i, v):
    # norm_type +-inf: torch takes the window's largest (smallest) |x| (x^inf would be 0 or inf)
    return (F.lp_pool1d(s, float("inf"), 3, stride=2), nn.LPPool2d(float("inf"), 3, stride=2, ceil_mode=True)(i),
            F.lp_pool2d(i, -float("inf"), 2), F.lp_pool3d(v, float("inf"), (1, 2, 2)), F.lp_pool2d(i[0], float("inf"), 2))


def unbatched(s, i):
    return nn.LPPool1d(1.5, 3, 2)(s[0]), nn.LPPool2d(2, 2)(i[0]), F.lp_pool2d(i[1], 1.5, 2)
"""
SEQ, IMG, VOL = rnd(2, 3, 9, seed=1), rnd(2, 3, 4, 6, seed=2), rnd(1, 2, 4, 4, 6, seed=3)


def test_lp_pool():
    for entry, inputs in (("layers", [SEQ, IMG, VOL]), ("functional", [SEQ, IMG, VOL]),
                          ("infinite", [SEQ, IMG, VOL]),
                          ("unbatched", [SEQ, IMG])):
        _, sites = check_function(SRC, inputs, entry=entry, grad=True, rtol=1e-4, atol=1e-5)
        assert not [s.api for s in sites if s.status == TODO]
    # the inputs have negative entries, so a non-integer p must give NaN somewhere (else the case proves nothing)
    import torch
    assert np.isnan(torch.nn.LPPool1d(1.5, 3, 2)(torch.from_numpy(SEQ)).numpy()).any()
    assert not np.isnan(torch.nn.LPPool1d(1.5, 3, 2)(torch.from_numpy(SEQ)).numpy()).all()
