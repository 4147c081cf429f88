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


CONTEXTS_SRC = '''
from contextlib import nullcontext
from functools import partial

import torch.nn as nn
from torch.amp import autocast


class Net(nn.Module):
    def __init__(self, force_f32=True):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.force_f32 = force_f32

    def forward(self, x):
        context = partial(autocast, "cuda", enabled=False) if self.force_f32 else nullcontext
        with context():
            y = self.fc(x)
        return y * 2


def make():
    return Net()


def make_plain():
    return Net(force_f32=False)
'''


@pytest.mark.parametrize("entry", ["make", "make_plain"])
def test_partial_autocast_and_nullcontext_entered_in_graph(entry):
    """`ctx = partial(autocast, 'cuda', enabled=False) if f32 else nullcontext` then `with ctx():` in forward
    (vector-quantize's FSQ): GRAPH mode could not call the class through _ms_compat.partial ("The object is not
    callable") nor enter contextlib's nullcontext; as _ms_compat.autocast / _ms_compat.nullcontext (null
    contexts, jit_class) values and input gradients match torch in GRAPH and PyNative, on both branches."""
    from .test_graph_safety import assert_close, ms_value_and_grad, torch_value_and_grad

    x, weights = rnd(2, 4), rnd(2, 3, seed=3)
    t_out, t_grad, sd = torch_value_and_grad(CONTEXTS_SRC, x, weights, entry)
    for graph in (True, False):
        out, grad, code, _ = ms_value_and_grad(CONTEXTS_SRC, x, weights, sd, graph, entry)
        assert_close(out, t_out, 1e-5, 1e-5, f"graph={graph}")
        assert_close(grad, t_grad, 1e-5, 1e-5, f"graph={graph} gradient")
    assert "context = _ms_compat.autocast if self.force_f32 else _ms_compat.nullcontext" in code, code
