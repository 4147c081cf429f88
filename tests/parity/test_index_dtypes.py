"""Index results come back as torch's int64: argmin/argmax, sort/topk/argsort indices, nonzero, max/min(dim),
kthvalue/mode/median(dim), cummax/cummin, unique(return_inverse/return_counts), unique_consecutive, both as
torch.X and as the Tensor.X method. MindSpore's ops.sort/topk/argsort/argmin give int32, so a converted program
that fed them to torch-typed code (an int64 buffer, a dtype check, an index_put) would differ silently: the
records cast. Values and dtypes are compared (tests/parity/table_harness.py), in PyNative and inside ms.jit."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import assert_every_record_cased, case, run_table

RNG = np.random.default_rng(7)
# distinct values: the order (and so every index) is defined
X = RNG.permutation(20).reshape(4, 5).astype(np.float32) / 4 - 2
X3 = RNG.permutation(24).reshape(2, 3, 4).astype(np.float32)
TIES = RNG.integers(0, 3, (3, 8)).astype(np.float32)   # stable sorts keep the order of equal values
MASK = RNG.random((3, 4)) > 0.5
INTS = RNG.integers(0, 5, (3, 6)).astype(np.int64)
RUNS = np.array([1, 1, 2, 2, 3, 1, 1, 2, 2, 2], np.int64)
FLOATS = np.array([[2.5, -1.0, 2.5], [0.0, -1.0, 7.0]], np.float32)

# ms.jit compiles every sixth case (0, 6, 12): the int64 casts of sort, argsort, topk, their methods and
# unique's inverse/counts (data-dependent shapes) are proven inside GRAPH mode too
CASES = [
    case(["torch.sort", "torch.argsort"],
         "x, t: (torch.sort(x), torch.sort(x, 0, True), torch.sort(x, dim=1, descending=True),"
         " torch.sort(t, stable=True), torch.sort(t, dim=0, descending=True, stable=True)[1],"
         " torch.argsort(x), torch.argsort(x, dim=0, descending=True), torch.argsort(t, stable=True))", [X, TIES]),
    case(["torch.argmin", "torch.argmax"],
         "x, y: (torch.argmin(x), torch.argmin(x, 1), torch.argmin(x, dim=0, keepdim=True), torch.argmin(y, -1),"
         " torch.argmax(x), torch.argmax(x, 1, True), torch.argmax(y, dim=2))", [X, X3]),
    case(["torch.max", "torch.min", "torch.kthvalue", "torch.median", "torch.cummax", "torch.cummin"],
         "x: (torch.max(x, 1), torch.min(x, dim=0, keepdim=True), torch.kthvalue(x, 2, 1), torch.median(x, 0),"
         " torch.cummax(x, 1), torch.cummin(x, 0))", [X]),
    case(["torch.topk"],
         "x, y: (torch.topk(x, 2), torch.topk(x, 3, dim=0, largest=False), torch.topk(y, 2, 1, True, True),"
         " torch.topk(x, k=1, dim=-1)[1])", [X, X3]),
    case(["torch.mode"], "i: torch.mode(i, 1)", [INTS]),
    case(["torch.nonzero"],
         "m, i: (torch.nonzero(m), torch.nonzero(m, as_tuple=True), torch.nonzero(i, as_tuple=False),"
         " torch.nonzero(input=m, as_tuple=True))", [MASK, INTS]),
    case(["Tensor.sort", "Tensor.argsort", "Tensor.topk"],
         "x, t: (x.sort(), x.sort(0, True), x.sort(dim=1, descending=True), t.sort(stable=True), x.argsort(),"
         " x.argsort(dim=0, descending=True), t.argsort(stable=True), x.topk(2), x.topk(3, dim=0, largest=False))",
         [X, TIES], typed=True),
    case(["torch.unique"],
         "i, f: (torch.unique(i, return_inverse=True), torch.unique(i, return_counts=True),"
         " torch.unique(f, sorted=True, return_inverse=True, return_counts=True),"
         " torch.unique(i.flatten(), return_inverse=False, return_counts=True))", [INTS, FLOATS], graph=False),
    # float64 values 0.39 apart (MindSpore's sort compared them as float32 and rounded them) and dim=: the
    # distinct rows/columns, their inverse and counts
    case(["torch.unique"],
         "d, i: (torch.unique(input=d, sorted=True, return_inverse=True, return_counts=True), torch.unique(i, dim=0),"
         " torch.unique(i, sorted=False, return_inverse=True, dim=1), torch.unique(i, return_counts=True, dim=0),"
         " torch.unique(i, True, True, True, 0), i.unique(dim=1, return_inverse=True))",
         [np.linspace(-2.5, 5.0, 20), np.array([[2, 0, 2], [1, 1, 0], [2, 0, 2]], np.int64)], graph=False),
    case(["torch.unique_consecutive"],
         "r, f: (torch.unique_consecutive(r, return_inverse=True), torch.unique_consecutive(r, return_counts=True),"
         " torch.unique_consecutive(f.flatten(), return_inverse=True, return_counts=True),"
         " torch.unique_consecutive(r))", [RUNS, FLOATS], graph=False),
    # dim=: runs of equal slices along dim (rows, columns, the last dim), values and int64 inverse/counts
    case(["torch.unique_consecutive", "Tensor.unique_consecutive"],
         "r, m: (torch.unique_consecutive(r, dim=0), torch.unique_consecutive(m, return_inverse=True,"
         " return_counts=True, dim=0), torch.unique_consecutive(m, True, True, 1), m.unique_consecutive(dim=-1),"
         " m.unique_consecutive(return_counts=True, dim=0))",
         [RUNS, np.array([[1., 2, 2, 3], [1., 2, 2, 3], [0, 5, 5, 1], [1., 2, 2, 3]], np.float32)], typed=True,
         graph=False),
    case(["Tensor.unique", "Tensor.unique_consecutive"],
         "i, r: (i.unique(return_inverse=True, return_counts=True), r.unique_consecutive(return_inverse=True))",
         [INTS, RUNS], typed=True, graph=False),
    case(["Tensor.argmin", "Tensor.argmax", "Tensor.max", "Tensor.min"],
         "x: (x.argmin(), x.argmin(1), x.argmin(dim=0, keepdim=True), x.argmax(1), x.max(1), x.min(dim=0))", [X],
         typed=True),
    case(["Tensor.nonzero", "Tensor.kthvalue", "Tensor.median", "Tensor.cummax"],
         "m, x: (m.nonzero(), m.nonzero(as_tuple=True), x.kthvalue(3, 0), x.median(1), x.cummax(0))", [MASK, X],
         typed=True),
    case(["torch.unique", "torch.unique_consecutive"],
         "i, r: (torch.unique(i, return_inverse=True, return_counts=True),"
         " torch.unique_consecutive(r, return_inverse=True, return_counts=True))", [INTS, RUNS]),
    # every SearchSorted the records emit runs in int32, then casts: MindSpore's CPU kernel keeps the output dtype
    # of its first run and fails on the other (an int64 ops.searchsorted then ops.bucketize raised)
    case(["torch.searchsorted", "torch.bucketize", "torch.unique"],
         "s, v, b, i: (torch.searchsorted(s, v), torch.bucketize(v, b), torch.unique(i, return_inverse=True),"
         " torch.searchsorted(s, v, out_int32=True), torch.bucketize(v, b, right=True), torch.searchsorted(b, v))",
         [np.sort(X, 1), X, np.sort(X[0]), INTS], graph=False),
    # torch's named-tuple fields on the converted (values, int64 indices) tuples
    case(["torch.sort", "torch.topk", "torch.median", "Tensor.kthvalue", "torch.cummax", "Tensor.sort", "Tensor.max"],
         "x: (torch.sort(x, 1).indices, torch.topk(x, 2).values, torch.median(x, 1).values, x.kthvalue(2, 1).indices,"
         " torch.cummax(x, 0).indices, x.sort(0).indices, x.max(1).indices)", [X], typed=True),
]


def test_index_dtypes():
    failures = run_table(CASES, graph_every=6)
    assert not failures, "\n".join(failures)


def test_every_index_record_cased():
    assert_every_record_cased("tests/parity/test_index_dtypes.py", {"test_index_dtypes": CASES})


def test_every_emitted_searchsorted_runs_in_int32():
    """MindSpore 2.10's CPU SearchSorted keeps the output dtype of its first run in the process and fails on the
    other ("the dimension of `v` and output must be equal"): the histogram helper's int64 ops.searchsorted made
    the searchsorted case above fail whenever the two ran in one worker (CI). Every ops.searchsorted the runtime
    and the records emit asks for int32."""
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parents[2] / "msmigrate"
    calls = []
    for path in list((root / "templates").rglob("*.py")) + list((root / "mappings").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"ops\.searchsorted\(", text):
            depth, end = 0, m.end() - 1
            for end in range(m.end() - 1, len(text)):
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                if depth == 0:
                    break
            calls.append((path.name, text[m.start():end + 1]))
    assert calls
    assert [c for c in calls if "out_int32=True" not in c[1]] == []
