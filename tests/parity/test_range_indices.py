"""`x[range(n), y]` (msmigrate/range_indices.py): torch indexes with a range as with its numbers; the converted
index is a list of them, reading and assigning, in PyNative and compiled."""
from __future__ import annotations

import numpy as np

from tests.parity.harness import assert_close, load_converted, load_torch

SRC = """
import torch

def fn(x, y):
    out = x.clone()
    out[range(x.shape[0]), y] = x.max()
    return out, x[range(1, 3)], x[range(0, 4, 2), 1:3]
"""


def test_range_index_matches_torch():
    import mindspore as ms
    import torch

    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    y = np.array([1, 4, 0, 2], np.int64)
    want = load_torch(SRC)["fn"](torch.from_numpy(x), torch.from_numpy(y))
    mod, code, _ = load_converted(SRC)
    assert "list(range(" in code, code
    assert_close(mod.fn(ms.Tensor(x), ms.Tensor(y)), want, 0, 0, "pynative")
    assert_close(ms.jit(mod.fn)(ms.Tensor(x), ms.Tensor(y)), want, 0, 0, "graph")



def test_a_range_of_a_string_is_left_alone():
    code = load_converted("import torch\n\ndef fn():\n    return 'abc'[range(3)]\n")[1]
    assert "list(range" not in code, code
