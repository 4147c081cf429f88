"""Losses with reduction='mean' of an empty batch give torch's nan (its 'sum' 0); the masked-loss idiom too.

MindSpore 2.10's ops.mse_loss / ops.l1_loss / nn.MSELoss average an empty batch to inf or garbage
(templates/compat_parts/losses.py reduces the per-element loss with the empty-safe mean instead). The batch is
selected by a boolean mask (dynamic under ms.jit); each snippet runs with a mask that selects nothing and one that
selects some elements, in PyNative and GRAPH mode, values and gradients.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.parity.harness import check_function
from tests.parity.test_tensor_methods import expect

X = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
NONE = np.zeros((4, 3), bool)
SOME = np.array([[1, 0, 1], [0, 0, 0], [1, 1, 0], [0, 1, 0]], bool)

FUNCTIONS = '''
import torch
import torch.nn.functional as F
def fn(x, m):
    s = x[m]
    p = torch.sigmoid(s)
    rows = x[m[:, 0]]
    y = torch.zeros_like(rows[:, 0]).long()
    return (F.mse_loss(s, s * 0.5), F.l1_loss(s, s * 0.0), F.binary_cross_entropy(p, p * 0.5),
            F.mse_loss(s, s * 0.5, reduction='sum'), F.l1_loss(s, s * 0.5, reduction='sum'),
            F.cross_entropy(rows, y), F.nll_loss(torch.log_softmax(rows, 1), y),
            F.binary_cross_entropy_with_logits(s, s * 0.0), F.smooth_l1_loss(s, s * 0.0))
'''

MODULES = '''
import torch
import torch.nn as nn
mse = nn.MSELoss()
l1 = nn.L1Loss()
bce = nn.BCELoss()
ce = nn.CrossEntropyLoss()
def fn(x, m):
    s = x[m]
    rows = x[m[:, 0]]
    return mse(s, s * 0.5), l1(s, s * 0.0), bce(torch.sigmoid(s), s * 0.0), ce(rows, torch.zeros_like(rows[:, 0]).long())
'''

MASKED = '''
import torch
import torch.nn.functional as F
def fn(x: torch.Tensor, m: torch.Tensor):
    loss = F.mse_loss(x, x * 0.5, reduction='none')
    return loss[m].mean(), loss[m].sum() / m.sum(), (loss * m).sum() / m.sum(), loss[m].sum() / max(1, len(loss[m]))
'''


@pytest.mark.parametrize("mask", [NONE, SOME], ids=["empty", "some"])
def test_functions(mask):
    code, sites = check_function(FUNCTIONS, [X, mask], grad=True, rtol=1e-5, atol=1e-6)
    expect(sites, code, converted=["torch.nn.functional.mse_loss", "torch.nn.functional.l1_loss",
                                   "torch.nn.functional.binary_cross_entropy"])
    assert "_ms_compat.mse_loss(s, s * 0.5)" in code, code


@pytest.mark.parametrize("mask", [NONE, SOME], ids=["empty", "some"])
def test_modules(mask):
    code, sites = check_function(MODULES, [X, mask], grad=True, rtol=1e-5, atol=1e-6)
    expect(sites, code, converted=["torch.nn.MSELoss", "torch.nn.L1Loss", "torch.nn.BCELoss"])


@pytest.mark.parametrize("mask", [NONE, SOME], ids=["empty", "some"])
def test_masked_loss(mask):
    check_function(MASKED, [X, mask], grad=True, rtol=1e-5, atol=1e-6)
