"""`del mask` in a forward (lucidrains' linear-attention-transformer at ab7693e, LocalAttention frees its masks
after masked_fill_): MindSpore's GRAPH parser refused the statement ("RuntimeError: Unsupported statement
'Delete'", naming no line of the program). In Cell code a `del` of local names is now `name = None`
(transformer.py leave_Del): values and gradients against torch in PyNative and GRAPH; a `del` of a subscript
is left as written."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .harness import check_layer  # noqa: E402

SRC = '''
import torch
from torch import nn


class Local(nn.Module):
    def __init__(self, causal=True):
        super().__init__()
        self.causal = causal
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        x = self.fc(x)
        if self.causal:
            mask = x < 0
            x = x.masked_fill(mask, -5.0)
            del mask
        for _ in range(2):
            step, keep = x * 0.5, x > 1
            x = torch.where(keep, step, x)
            del step, keep
        mask = x > 2
        return x.masked_fill(mask, 0.0)


def helper(d):
    del d["a"]
    return d


def causal():
    return Local()


def plain():
    return Local(False)
'''


@pytest.mark.parametrize("entry", ["causal", "plain"])
def test_del_of_locals_in_forward_computes_in_graph(entry):
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(4, 3)
    code, _ = check_layer(SRC, [x], entry=entry, graph=True, grad=True)
    assert "mask = None" in code and "step = keep = None" in code and 'del d["a"]' in code, code
