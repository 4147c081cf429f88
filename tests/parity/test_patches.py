"""Parity of F.unfold / F.fold and nn.Unfold / nn.Fold, batched and unbatched
(records in msmigrate/mappings/patches.py)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")


from .harness import check_function, check_layer, rnd, no_todo  # noqa: E402


FN_SRC = '''
import torch.nn.functional as F


def fn(x, x3, u, u2):
    a = F.unfold(x, 3)
    b = F.unfold(x, (2, 3), (1, 2), 1, (2, 1))
    c = F.unfold(x3, kernel_size=2, stride=2)
    d = F.fold(u, (6, 7), (2, 3), 1, 1, 2)
    e = F.fold(u2, 5, 2, stride=1)
    f = F.fold(u2[0], output_size=(5, 5), kernel_size=2)
    return a, b, c, d, e, f
'''


def test_unfold_fold_functions():
    inputs = [rnd(2, 3, 6, 7), rnd(3, 6, 6, seed=4), rnd(2, 18, 16, seed=1), rnd(2, 12, 16, seed=2)]
    code, sites = check_function(FN_SRC, inputs, grad=True)
    no_todo(sites)


LAYER_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    """Patch embedding round trip: im2col, a linear map per patch, col2im."""

    def __init__(self):
        super().__init__()
        self.unfold = nn.Unfold(kernel_size=2, stride=2)
        self.unfold_pad = nn.Unfold(3, 1, 1, 1)
        self.proj = nn.Linear(12, 12)
        self.fold = nn.Fold(output_size=(6, 8), kernel_size=2, stride=2)
        self.fold_sq = nn.Fold(6, 3, padding=1)

    def forward(self, x):
        p = self.unfold(x)                                  # (N, 12, 12)
        y = self.fold(self.proj(p.transpose(1, 2)).transpose(1, 2))
        z = self.fold_sq(self.unfold_pad(x[..., :6]))
        return y, z, self.unfold(x[0])


def make():
    return Net()
'''


def test_unfold_fold_layers():
    code, sites = check_layer(LAYER_SRC, [rnd(2, 3, 6, 8)], grad=True)
    no_todo(sites)
    assert "_ms_compat.Unfold(kernel_size=2, stride=2)" in code and "_ms_compat.Fold(" in code


TENSOR_SIZES_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    """nn.Unfold's sizes given as tensors (torch reads their values; ops.unfold takes ints only)."""

    def __init__(self):
        super().__init__()
        self.unfold = nn.Unfold(torch.LongTensor([2, 3]), torch.tensor([1, 2]), torch.tensor([1, 0]),
                                stride=torch.LongTensor([2, 1]))

    def forward(self, x):
        return self.unfold(x)


def make():
    return Net()
'''


def test_unfold_layer_with_tensor_sizes():
    code, sites = check_layer(TENSOR_SIZES_SRC, [rnd(2, 3, 6, 8)])
    no_todo(sites)
