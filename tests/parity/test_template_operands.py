"""An argument that is no single operand (`a if c else b`, `-x`, `a + b`) keeps its meaning where a converted
form puts it next to an operator, an attribute or a comprehension clause: `torch._foreach_sqrt(a if c else b)`
(timm's AdaBelief: the whole file failed to convert and was copied with its torch imports) and
`x.type_as(i if c else x)` (`{other}.dtype` read the dtype of the else branch only)."""
from __future__ import annotations

import numpy as np
import pytest

from msmigrate.registry import TODO
from tests.parity.harness import load_converted, load_torch

pytest.importorskip("torch")
pytest.importorskip("mindspore")

FOREACH_SRC = """
import torch


def fn(first):
    a = [torch.tensor([4.0, 9.0]), torch.tensor([[0.25]])]
    b = [torch.tensor([16.0]), torch.tensor([1.0, 2.25])]
    return torch._foreach_sqrt(a if first else b)
"""

TYPE_AS_SRC = """
import torch


def fn(x, i, first):
    return x.type_as(i if first else x), x.type_as(-i), (x + 0.5).type_as(i + i)
"""


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else t.asnumpy()


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert str(g.dtype).lower() == str(w.dtype).replace("torch.", ""), (g.dtype, w.dtype)
        np.testing.assert_allclose(_np(g), _np(w), rtol=1e-6)


def test_foreach_over_a_conditional_list():
    mod, code, sites = load_converted(FOREACH_SRC)
    assert not [s for s in sites if s.status == TODO], code
    want = load_torch(FOREACH_SRC)["fn"]
    for first in (True, False):
        _same(mod.fn(first), want(first))


def test_template_argument_kept_one_operand():
    import mindspore as ms
    import torch
    mod, code, sites = load_converted(TYPE_AS_SRC)
    assert not [s for s in sites if s.status == TODO], code
    want = load_torch(TYPE_AS_SRC)["fn"]
    x = np.array([[1.25, -2.5], [3.75, 0.5]], np.float32)
    i = np.array([[1, 2], [3, 4]], np.int64)
    for first in (True, False):
        _same(mod.fn(ms.Tensor(x), ms.Tensor(i), first), want(torch.from_numpy(x), torch.from_numpy(i), first))
