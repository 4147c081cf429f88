"""torch's argument parser takes NumPy's names for four parameters (axis for dim, keepdims for keepdim,
x/a/x1 for input, x2 for other), in torch functions and Tensor methods alike. The converter binds them to
torch's names before translating (callsite.NUMPY_ARGUMENT_NAMES); before, `x.mean(axis=1, keepdims=True)`
silently lost keepdims and `torch.sum(x, axis=0)` became a TODO. Values, dtypes, shapes and gradients
against torch."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import case, run_table

RNG = np.random.default_rng(5)
M = RNG.standard_normal((3, 4)).astype(np.float32)
N = RNG.standard_normal((3, 4)).astype(np.float32)
T = "torch."

NUMPY_NAMES = [
    case([T + "sum", "Tensor.sum", T + "mean", "Tensor.mean"],
         "m: (torch.sum(m, keepdim=True, axis=0), m.sum(axis=1), m.mean(axis=1, keepdims=True),"
         " torch.mean(m, axis=0, keepdims=False), torch.sum(m, axis=(0, 1), keepdims=True))", [M], grad=True,
         typed=True),
    case([T + "max", "Tensor.max", T + "argmax", "Tensor.argmax", T + "amin"],
         "m: (torch.max(m, axis=1)[0], m.max(axis=0, keepdims=True).values, m.argmax(axis=1),"
         " torch.argmax(m, axis=0, keepdims=True), torch.amin(m, axis=1, keepdims=True))", [M], grad=True,
         typed=True),
    case([T + "cat", T + "stack", T + "std", "Tensor.softmax", T + "cumsum"],
         "m, n: (torch.cat([m, n], axis=1), torch.stack([m, n], axis=0), torch.std(m, axis=1, keepdims=True),"
         " m.softmax(axis=1), torch.cumsum(m, axis=1))", [M, N], grad=True, typed=True),
    case([T + "add", T + "mul", T + "abs", T + "maximum"],
         "m, n: (torch.add(m, x2=n), torch.mul(x1=m, other=n), torch.abs(x=m), torch.maximum(m, x2=n))",
         [M, N], grad=True, typed=True),
]


def test_numpy_argument_names():
    failures = run_table(NUMPY_NAMES, graph_every=2)
    assert not failures, "\n".join(failures)
