"""Python builtins in forward code that PyNative runs and GRAPH mode does not, as converted
(msmigrate/graph_idioms.py): values and input gradients in GRAPH mode against torch.

- all()/any() over values computed by a module-level function (lucidrains' Unet:
  `assert all([divisible_by(d, f) for d in x.shape[-2:]])`): GRAPH mode evaluates the builtin by its
  Python fallback at run time, where that function is not defined (NameError).
- `map(functools.partial(torch.cat, dim=...), pairs)` (lucidrains' memory key/values): in the diffusion
  Unet (bench/real_world.py) GRAPH mode compiled the forward but not its gradient (a Concat of the
  int zeros of the shapes); this small net compiles either way, so here only the rewritten form
  (a generator) is checked against torch, values and gradients."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .test_graph_safety import check_graph, rnd  # noqa: E402

SRC = '''
import functools
from functools import partial

import torch
import torch.nn as nn


def divisible_by(numer, denom):
    return (numer % denom) == 0


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.mem = nn.Parameter(torch.randn(2, 4))

    def forward(self, x):
        assert all([divisible_by(d, 2) for d in x.shape]), f"sizes {x.shape} must be even"
        assert not any(divisible_by(d, 3) for d in x.shape)
        h = self.fc(x)
        a, b = map(partial(torch.cat, dim=0), ((self.mem, h), (h, self.mem)))
        c, d = map(functools.partial(torch.mul, 2.0), (a, b))
        return c * d + a


def make():
    return Net()
'''


def test_all_any_and_map_partial_in_graph():
    code, _ = check_graph(SRC, rnd(2, 4), (4, 4))
    assert "_ms_compat.all_true([divisible_by(d, 2)" in code and "_ms_compat.any_true(" in code, code
    assert "map(" not in code, code


def test_all_any_keep_python_semantics():
    """The GRAPH-safe forms answer as the builtins on what forward code passes them."""
    import importlib
    from .harness import load_converted
    load_converted(SRC)
    compat = importlib.import_module("_ms_compat")
    for values in ([], [1, 2], [1, 0], (0, 0), iter([True, False]), [[], [1]]):
        as_list = list(values) if not isinstance(values, (list, tuple)) else values
        assert compat.all_true(as_list) is all(as_list) and compat.any_true(as_list) is any(as_list), values
