"""Losses with reduction='mean' of an empty batch give torch's nan (its 'sum' 0); the masked-loss idiom too.

MindSpore 2.10's ops.mse_loss / ops.l1_loss / nn.MSELoss average an empty batch to inf or garbage
(templates/compat_parts/losses.py reduces the per-element loss with the empty-safe mean instead). The batch is
selected by a boolean mask (dynamic under ms.jit); each snippet runs with a mask that selects nothing and one that
selects some elements, in PyNative and GRAPH mode, values and gradients.
"""
from __future__ import annotations


from tests.parity.test_empty_reductions import MASKS, check_masked    # the same inputs and masks

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


@MASKS
def test_functions(mask):
    code = check_masked(FUNCTIONS, mask, ["torch.nn.functional.mse_loss", "torch.nn.functional.l1_loss",
                                          "torch.nn.functional.binary_cross_entropy"])
    assert "_ms_compat.mse_loss(s, s * 0.5)" in code, code


@MASKS
def test_modules(mask):
    check_masked(MODULES, mask, ["torch.nn.MSELoss", "torch.nn.L1Loss", "torch.nn.BCELoss"])


@MASKS
def test_masked_loss(mask):
    check_masked(MASKED, mask)
