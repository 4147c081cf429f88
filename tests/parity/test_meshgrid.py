"""torch.meshgrid through _ms_compat.meshgrid (templates/compat_parts/meshgrid.py): one tensor (`*[t]`, a starred
list or comprehension holding one), two and three tensors, indexing 'ij' and 'xy', a 0-d tensor, a list held by
a name. MindSpore's ops.meshgrid raised its own error on one tensor in a compiled graph ("the number of input
tensors must be greater than 1") and on a 0-d tensor; torch takes both. Values and input gradients against
torch, in GRAPH and PyNative (a Cell's forward)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .test_graph_safety import check_graph, rnd  # noqa: E402

SRC = '''
import torch
import torch.nn as nn


class Grids(nn.Module):
    def forward(self, x):
        a, b, s = x[:3], x[3:7], x[0]
        ts = [a, b]
        grids = (torch.meshgrid(*[a]) + torch.meshgrid(*[a], indexing="xy")
                 + torch.meshgrid(*[t * 2 for t in (a,)], indexing="ij")
                 + torch.meshgrid(a, b) + torch.meshgrid(*[a, b], indexing="xy")
                 + torch.meshgrid(a, b, a, indexing="xy") + torch.meshgrid((b, a, b), indexing="ij")
                 + torch.meshgrid(s, b, indexing="ij") + torch.meshgrid(ts) + torch.meshgrid(*ts, indexing="xy"))
        return torch.cat([g.flatten() for g in grids])


def make():
    return Grids()
'''
OUT = 3 * 3 + 2 * 12 + 2 * 12 + 3 * 36 + 3 * 48 + 2 * 4 + 2 * 12 + 2 * 12


def test_meshgrid_every_form_in_graph_and_pynative():
    code, _ = check_graph(SRC, rnd(7), (OUT,))
    assert "ops.meshgrid" not in code and code.count("_ms_compat.meshgrid(") == 10, code


def test_meshgrid_of_a_2d_tensor_raises_as_torch():
    """torch refuses a 2-D input; flattening it would build another grid silently."""
    import mindspore as ms
    import numpy as np
    import torch

    from .harness import load_converted
    src = "import torch\n\ndef grid(a, b):\n    return torch.meshgrid(a, b, indexing='ij')\n"
    with pytest.raises(RuntimeError, match="0D or 1D"):
        torch.meshgrid(torch.ones(2, 2), torch.ones(3), indexing="ij")
    mod, _, _ = load_converted(src)
    with pytest.raises(ValueError, match="0D or 1D"):
        mod.grid(ms.Tensor(np.ones((2, 2), np.float32)), ms.Tensor(np.ones(3, np.float32)))
