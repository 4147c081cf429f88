"""A SciPy call on a tensor in code a graph compiles (DETR's HungarianMatcher: `linear_sum_assignment(c[i])` in
forward, the losses then built from its indices): compiled, MindSpore 2.10 ran the call through its JIT fallback
when the graph ran, and what the graph built from the result broke without naming a line (measured before the
fix on the program below: "TypeError: tuple indices must be integers or slices, not str" at `losses["match"]`;
on DETR's SetCriterion: "The pointer[dict] is null" at `losses.update(self.get_loss(...))`). The call is now
`_ms_compat.host_result(...)` (msmigrate/host_draws.py): PyNative computes as torch, compiling stops with
MigrationError naming the line."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("scipy")
ms = pytest.importorskip("mindspore")

from .harness import assert_close, load_converted, load_torch  # noqa: E402

SRC = '''
import torch
from torch import nn
from scipy.optimize import linear_sum_assignment


class Matcher(nn.Module):
    @torch.no_grad()
    def forward(self, cost):
        rows, cols = linear_sum_assignment(cost.cpu())
        return torch.as_tensor(rows, dtype=torch.int64), torch.as_tensor(cols, dtype=torch.int64)


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.matcher = Matcher()

    def forward(self, x):
        cost = x.sin() * 3
        rows, cols = self.matcher(cost)
        losses = {}
        losses.update({"match": cost[rows, cols].sum()})
        return losses["match"]
'''


def _x():
    return np.array([[0.3, -1.2, 2.0], [1.5, 0.1, -0.7], [-0.4, 0.9, 0.2]], np.float32)


def test_a_scipy_call_in_forward_runs_op_by_op():
    import torch
    tx = torch.from_numpy(_x()).requires_grad_(True)
    want = load_torch(SRC)["Loss"]()(tx)
    want.backward()
    mod, code, _ = load_converted(SRC)
    assert "_ms_compat.host_result(linear_sum_assignment(" in code, code
    value, grad = ms.value_and_grad(lambda v: mod.Loss()(v))(ms.Tensor(_x()))
    assert_close(value, want, what="value")
    assert_close(grad, tx.grad, what="gradient")


@pytest.mark.parametrize("mode", ["jit", "graph_mode"])
def test_a_scipy_call_in_a_compiled_forward_names_its_line(mode):
    mod, _, _ = load_converted(SRC)
    line = SRC.splitlines().index("        rows, cols = linear_sum_assignment(cost.cpu())") + 1
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph_mode" else ms.PYNATIVE_MODE)
    try:
        with pytest.raises(Exception) as err:
            (ms.jit(mod.Loss()) if mode == "jit" else mod.Loss())(ms.Tensor(_x()))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert type(err.value).__name__ == "MigrationError", f"{type(err.value).__name__}: {err.value}"
    assert f"scipy.optimize.linear_sum_assignment at " in str(err.value) and f":{line} " in str(err.value), err.value
