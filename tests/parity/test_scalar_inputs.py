"""torch takes a 0-d tensor as a one-element vector in its ops along a dim (dim 0 or -1): index_select,
index_add, index_copy, index_fill, index_reduce, cumsum, cummax, cummin, logcumsumexp, quantile, nanquantile,
nonzero, nonzero_static, unfold. The MindSpore ops reject a 0-d input; the records run it as shape (1,)
(templates/compat_parts/scalar_as_vector.py). Each case gives a 0-d input and an ordinary one: values, dtypes and
shapes against torch, gradients where they flow."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import case, run_table

RNG = np.random.default_rng(3)
S = np.array(1.5, np.float32)
SRC = np.array(-2.0, np.float32)
I1 = np.array([0], np.int64)
I0 = np.array(0, np.int64)
M = RNG.standard_normal((3, 4)).astype(np.float32)
T = "torch."

SCALARS = [
    case([T + "index_select", "Tensor.index_select", T + "index_fill", "Tensor.index_fill"],
         "s, i, j, m: (torch.index_select(s, 0, i), s.index_select(0, j), torch.index_fill(s, 0, i, 2.0),"
         " s.index_fill(-1, j, -1.0), m.index_select(1, i), torch.index_fill(m, 1, i, 0.5))",
         [S, I1, I0, M], grad=True, typed=True),
    case([T + "index_add", "Tensor.index_add", T + "index_copy", "Tensor.index_copy"],
         "s, i, v, m: (torch.index_add(s, 0, i, v, alpha=2), s.index_add(0, i, v), torch.index_copy(s, 0, i, v),"
         " s.index_copy(0, i, v), torch.index_add(m, 1, i, m[:, :1]), m.index_copy(0, i, m[:1]))",
         [S, I1, SRC, M], grad=True, typed=True),
    case(["Tensor.index_reduce"],
         "s, i, v, m: (s.index_reduce(0, i, v, 'prod'), s.index_reduce(0, i, v, 'amax', include_self=False),"
         " s.index_reduce(0, i, v, 'mean'), m.index_reduce(0, i, m[:1] * 2, 'amin'))", [S, I1, SRC, M], typed=True),
    case([T + "cumsum", "Tensor.cumsum", T + "logcumsumexp", "Tensor.logcumsumexp"],
         "s, m: (torch.cumsum(s, 0), s.cumsum(-1), torch.logcumsumexp(s, 0), s.logcumsumexp(0), m.cumsum(1),"
         " torch.logcumsumexp(m, 1))", [S, M], grad=True, typed=True),
    # no gradients: cummax/cummin's backward (InplaceScatterAdd) has no CPU kernel
    case([T + "cummax", "Tensor.cummax", T + "cummin", "Tensor.cummin"],
         "s, m: (torch.cummax(s, 0), s.cummax(0), torch.cummin(s, 0), s.cummin(-1), torch.cummax(m, 0))", [S, M],
         typed=True),
    case([T + "quantile", "Tensor.quantile", "Tensor.nanquantile"],
         "s, m: (torch.quantile(s, 0.5, dim=0), s.quantile(0.3, 0, True), s.nanquantile(0.5, dim=0),"
         " torch.quantile(m, 0.25, dim=1), m.nanquantile(0.5, 0))", [S, M], grad=True, typed=True),
    case([T + "nonzero", "Tensor.nonzero", T + "nonzero_static", "Tensor.nonzero_static"],
         "s, m: (torch.nonzero(s), s.nonzero(), torch.nonzero(s, as_tuple=True), (s * 0).nonzero(as_tuple=True),"
         " torch.nonzero(s * 0), torch.nonzero_static(s, size=3), s.nonzero_static(size=1), torch.nonzero(m > 0),"
         " m.nonzero(as_tuple=True))", [S, M], typed=True, graph=False),
    case(["Tensor.unfold", T + "unfold_copy"],
         "s, m: (s.unfold(0, 1, 1), torch.unfold_copy(s, 0, 1, 1), m.unfold(1, 2, 1))", [S, M], grad=True, typed=True),
]


def test_scalar_inputs():
    failures = run_table(SCALARS, graph_every=2)
    assert not failures, "\n".join(failures)
