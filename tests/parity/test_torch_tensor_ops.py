"""Parity of torch's stacking/splitting, indexing/scatter and utility functions
(msmigrate/mappings/torch_tensor_ops.py): values and dtypes in PyNative and ms.jit, gradients where they matter."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import assert_every_record_cased, case, run_table

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal((3, 4)).astype(np.float32)
A3 = RNG.standard_normal((2, 3, 4)).astype(np.float32)
V = RNG.standard_normal(4).astype(np.float32)
T = "torch."

STACK = [
    case([T + "atleast_1d", T + "atleast_2d", T + "atleast_3d"],
         "v, a: (torch.atleast_1d(v), torch.atleast_2d(v), torch.atleast_3d(v), torch.atleast_3d(a),"
         " torch.atleast_1d(a.sum()))", [V, A], grad=True),
    # several tensors give a tuple; a starred one a tensor or a tuple by its length; none ()
    case([T + "atleast_1d", T + "atleast_2d", T + "atleast_3d"],
         "v, a: (torch.atleast_1d(v.sum(), a), torch.atleast_2d(v, a.sum(), a), torch.atleast_3d([v, a]),"
         " torch.atleast_3d(*[v]), torch.atleast_2d(*[v, a]), torch.atleast_1d(a.sum(), *[v]), torch.atleast_1d())",
         [V, A], grad=True),
    case([T + "hstack", T + "vstack", T + "dstack", T + "column_stack", T + "row_stack"],
         "a, b, v: (torch.hstack([a, b]), torch.vstack((a, b)), torch.dstack([a, b]), torch.column_stack([a, b]),"
         " torch.row_stack([a, b]), torch.hstack([v, v]), torch.vstack([v, v]), torch.column_stack([v, v]))",
         [A, B, V], grad=True),
    case([T + "hsplit", T + "vsplit", T + "dsplit"],
         "x: (torch.hsplit(x, [1]), torch.vsplit(x, 2), torch.dsplit(x, [1, 3]), torch.dsplit(x, 2))", [A3],
         grad=True),
    case(T + "tensor_split", "a: (torch.tensor_split(a, 3, dim=1), torch.tensor_split(a, [1, 3]),"
         " torch.tensor_split(a, 2, 1))", [A], grad=True),
    case([T + "rot90", T + "fliplr", T + "flipud", T + "t", T + "ravel"],
         "a, x, v: (torch.rot90(a), torch.rot90(a, -1), torch.rot90(x, 2, (1, 2)), torch.rot90(x, k=3, dims=[0, 2]),"
         " torch.fliplr(a), torch.flipud(a), torch.t(a), torch.t(v), torch.ravel(x))", [A, A3, V], grad=True),
    case([T + "block_diag", T + "cartesian_prod", T + "chain_matmul"],
         "a, b, v: (torch.block_diag(a, b[:2], v[None]), torch.cartesian_prod(v, v[:2]), torch.chain_matmul(a, b.T, a),"
         " torch.block_diag(*[a, b]))", [A, B, V], grad=True, rtol=1e-4),
    case(T + "combinations", "v: (torch.combinations(v), torch.combinations(v, 3), torch.combinations(v, r=2,"
         " with_replacement=True), torch.combinations(v[:1]), torch.combinations(v[:2], 3))", [V], grad=True),
    case([T + "tril_indices", T + "triu_indices"],
         ": (torch.tril_indices(3, 4), torch.tril_indices(3, 4, 1), torch.triu_indices(4, 3, -1),"
         " torch.triu_indices(3, 3, dtype=torch.int32), torch.tril_indices(2, 2, device='cpu'))", []),
    case([T + "unbind", T + "unflatten"], "x: (torch.unbind(x), torch.unbind(x, dim=2), torch.unflatten(x, 2, (2, 2)),"
         " torch.unflatten(x, -1, [2, -1]), torch.unflatten(x, dim=0, sizes=(1, 2)))", [A3], grad=True),
]

IDX = np.array([0, 2, 1], np.int64)
INDEX = [
    case(T + "masked_fill", "a: (torch.masked_fill(a, a > 0, 2.0), torch.masked_fill(a, a < 0, value=-1.0))", [A],
         grad=True),
    case(T + "masked_fill", "a, i: (torch.masked_fill(a, a > 0, 2), torch.masked_fill(i, i > 0, 5),"
         " torch.masked_fill(a > 0, a < 1, True), torch.masked_fill(a, a < 0, a[0, 0]))", [A, IDX]),
    case(T + "index_add", "a, b, i: (torch.index_add(a, 0, i, b), torch.index_add(a, 0, i, b, alpha=2), a * 1,"
         " torch.index_add(a, 1, i * 0, b[:, :3]), torch.index_add(a.T, dim=-1, index=i, source=b.T))",
         [A, B, IDX], grad=True),
    case(T + "index_fill", "a, i: torch.index_fill(a, 1, i[:2], -1.0)", [A, IDX], grad=True),
    case([T + "scatter", T + "scatter_add"],
         "a, b, i: (torch.scatter(a, 1, i, b[:, :2]), torch.scatter_add(a, 1, i, b[:, :2]),"
         " torch.scatter_add(a, 1, i * 0, b[:, :2]))", [A, B, np.array([[0, 1], [2, 3], [1, 0]], np.int64)],
         grad=True),
    # a src larger than the index: torch reads only the index's shape (no gradient: torch's own backward refuses)
    case([T + "scatter", T + "scatter_add"], "a, b, i: (torch.scatter(a, 1, i, b), torch.scatter_add(a, 1, i, b))",
         [A, B, np.array([[0, 1], [2, 3], [1, 0]], np.int64)]),
    # a number value; reduce='add'/'multiply' (repeated indices accumulate into the input's own values)
    case(T + "scatter", "a, b, i: (torch.scatter(a, 1, i, 2.5), torch.scatter(a, 0, i % 3, value=-1),"
         " torch.scatter(a, 1, i, b[:, :2], reduce='add'), torch.scatter(a, 1, i * 0, b, reduce='multiply'),"
         " torch.scatter(a, 1, i, 3, reduce='add'), torch.scatter(a.long(), 1, i * 0, 2, reduce='multiply'))",
         [A, B, np.array([[0, 1], [2, 3], [1, 0]], np.int64)]),
    case([T + "select_scatter", T + "slice_scatter", T + "diagonal_scatter"],
         "a, b: (torch.select_scatter(a, b[0], 0, 1), torch.slice_scatter(a, b[:, :2], 1, 1, 3),"
         " torch.slice_scatter(a, b[:1], start=2), torch.diagonal_scatter(a, b[0, :3]),"
         " torch.diagonal_scatter(a, b[0, :3], 1))", [A, B], grad=True),
    case(T + "isin", "x, t: (torch.isin(x, t), torch.isin(x, t, invert=True))",
         [(A * 3).astype(np.int64), np.array([0, 1, -1], np.int64)]),
    # assume_unique=True: on unique inputs membership; on repeated values torch's sorted-neighbour answer (past
    # its size heuristic) or its elementwise loop (below it); float64 values that float32 would merge
    case(T + "isin", "x, t, u, w: (torch.isin(x, t, assume_unique=True), torch.isin(x, t, assume_unique=True, "
         "invert=True), torch.isin(x[:5], t[:3], assume_unique=True), torch.isin(u, u[:7] + 1, assume_unique=True),"
         " torch.isin(u[:2], t, assume_unique=True, invert=True), torch.isin(w, u, assume_unique=True))",
         [np.tile(np.array([0., 1., 2.], np.float64), 20).reshape(20, 3), np.tile(np.array([0., 1.]), 20),
          np.arange(30, dtype=np.float64), np.arange(30, dtype=np.float64) + 1e-9], graph=False),
    case(T + "nonzero", "x: (torch.nonzero(x > 0), torch.nonzero(x, as_tuple=False))", [A]),
    case([T + "select", T + "take_along_dim"],
         "a, i: (torch.select(a, 0, 1), torch.select(a, 1, -1), torch.select(a, dim=1, index=2),"
         " torch.take_along_dim(a, i, 1), torch.take_along_dim(a, i), torch.take_along_dim(a, i % 3, dim=0))",
         [A, np.array([[0, 1, 2, 3], [3, 2, 1, 0], [1, 1, 0, 0]], np.int64)], grad=True),
    # indices broadcast outside dim: one index row for every row, one input row for many index rows
    case(T + "take_along_dim", "a, i: (torch.take_along_dim(a, i[:1], 1), torch.take_along_dim(a[:1], i, 1),"
         " torch.take_along_dim(a, i[:, :1] % 3, dim=0))", [A, np.array([[0, 1, 2, 3], [3, 2, 1, 0], [1, 1, 0, 0]], np.int64)],
         grad=True),
    case(T + "index_copy", "a, b, i: (torch.index_copy(a, 0, i, b), torch.index_copy(a, 1, i, b[:, :3]))",
         [A, B, IDX], grad=True),
    case(T + "kthvalue", "a: (torch.kthvalue(a, 2), torch.kthvalue(a, 1, 0), torch.kthvalue(a, 3, dim=1, keepdim=True))",
         [A], grad=True),
]

def test_stack_split():
    failures = run_table(STACK)
    assert not failures, "\n".join(failures)


def test_index_scatter():
    failures = run_table(INDEX, graph_every=4)
    assert not failures, "\n".join(failures)


def test_untranslatable_forms_are_todo():
    from msmigrate.registry import TODO
    from tests.parity.harness import convert_snippet

    code, sites = convert_snippet(
        "import torch\ndef f(a, b, i):\n    z = a\n"
        "    return torch.atleast_1d(input=a), torch.chain_matmul(*[a, b]), torch.block_diag(a, out=b), z\n")
    st = {s.api: s.status for s in sites}
    for api in ("atleast_1d", "chain_matmul", "block_diag"):
        assert st[T + api] == TODO, (api, code)



def test_every_tensor_op_record_has_a_case():
    assert_every_record_cased("tests/parity/test_torch_tensor_ops.py",
                              {"test_stack_split": STACK, "test_index_scatter": INDEX})
