"""Parity of torch's small utility and numeric functions (torch.corrcoef, torch.clone, window functions, geqrf...)
recorded in msmigrate/mappings/torch_tensor_ops.py: values and dtypes in PyNative and ms.jit, gradients where they
matter."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import assert_every_record_cased, case, run_table

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal((3, 4)).astype(np.float32)
A3 = RNG.standard_normal((2, 3, 4)).astype(np.float32)
V = RNG.standard_normal(4).astype(np.float32)
T = "torch."

MISC = [
    case(T + "corrcoef", "a: torch.corrcoef(a)", [A], grad=True, rtol=1e-4),
    case(T + "cumulative_trapezoid", "a, x: (torch.cumulative_trapezoid(a), torch.cumulative_trapezoid(a, dim=0),"
         " torch.cumulative_trapezoid(x, dx=0.5, dim=1), torch.cumulative_trapezoid(a, a.cumsum(1).exp()),"
         " torch.cumulative_trapezoid(y=x, x=torch.arange(3.0) ** 2, dim=1),"
         " torch.cumulative_trapezoid(a, torch.arange(3.0) * 0.5, dim=0))", [A, A3], grad=True),
    case([T + "clone", T + "detach"], "a: (torch.clone(a) * 2, torch.detach(a) * a)", [A], grad=True),
    case([T + "numel", T + "is_nonzero", T + "is_same_size"],
         "a, b, v: torch.tensor([torch.numel(a), torch.is_nonzero(v[:1] + 10), torch.is_same_size(a, b),"
         " torch.is_same_size(a, v)])", [A, B, V], graph=False),
    case([T + "frobenius_norm", T + "nuclear_norm"],
         "a, x: (torch.frobenius_norm(a, (0, 1)), torch.frobenius_norm(x, dim=(1, 2)), torch.frobenius_norm(x, (0, 1), True),"
         " torch.nuclear_norm(a), torch.nuclear_norm(x, (1, 2)))", [A, A3], grad=True, rtol=1e-4, atol=1e-4),
    case([T + "selu", T + "celu", T + "hardshrink"],
         "a: (torch.selu(a), torch.celu(a), torch.celu(a, 1.5), torch.hardshrink(a), torch.hardshrink(a, lambd=0.8))",
         [A], grad=True),
    case([T + "cosine_similarity", T + "pdist"],
         "a, b: (torch.cosine_similarity(a, b), torch.cosine_similarity(a, b, dim=0, eps=1e-6), torch.pdist(a),"
         " torch.pdist(a, p=1.0), torch.pdist(a, p=3))", [A, B], grad=True, rtol=1e-4),
    case([T + "floor_divide", T + "vdot"], "a, b, i, j: (torch.floor_divide(a, b), torch.floor_divide(i, j),"
         " torch.floor_divide(i, 3), torch.vdot(a[0], b[0]))",
         [A, B + 2, np.array([7, -7, 5, -5], np.int64), np.array([2, 2, -3, -3], np.int64)]),
    case([T + "scalar_tensor", T + "range"], ": (torch.scalar_tensor(2), torch.scalar_tensor(1.5, dtype=torch.float64),"
         " torch.range(1, 4), torch.range(0, 1, 0.25), torch.range(0, 5, 2, dtype=torch.int64))", []),
    case([T + "hann_window", T + "hamming_window", T + "blackman_window", T + "bartlett_window", T + "kaiser_window"],
         ": (torch.hann_window(8), torch.hann_window(7, periodic=False), torch.hamming_window(8),"
         " torch.hamming_window(8, False, 0.5, 0.5), torch.blackman_window(6), torch.bartlett_window(7),"
         " torch.kaiser_window(8), torch.kaiser_window(8, True, 5.0), torch.hann_window(4, dtype=torch.float64))", [],
         rtol=1e-5, atol=1e-6),
    # dtype=None is torch's default dtype (float32), dtypes compared
    case([T + "kaiser_window", T + "hann_window"], ": (torch.kaiser_window(7, dtype=None), torch.hann_window(5, dtype=None))",
         [], rtol=1e-5, atol=1e-6, typed=True),
    # length 0 and 1: MindSpore's window is float64 there whatever dtype says (dtypes compared)
    case([T + "kaiser_window", T + "hann_window", T + "hamming_window"],
         ": (torch.kaiser_window(0), torch.kaiser_window(1), torch.hann_window(1, dtype=torch.float32),"
         " torch.hamming_window(0), torch.hann_window(1, dtype=torch.float64))", [], typed=True),
    case([T + "geqrf", T + "orgqr"],
         "a, c: (lambda q, tau: (q, tau, torch.orgqr(q, tau)))(*torch.geqrf(a))", [np.vstack([A, B[:2]]).astype(np.float32), RNG.standard_normal((5, 2)).astype(
             np.float32)], rtol=1e-4, atol=1e-4),
    # Q of 3 reflectors in R^5 applied from either side, transposed or not
    case(T + "ormqr", "a, c: (lambda q, tau: (torch.ormqr(q, tau, c), torch.ormqr(q, tau, c, transpose=True),"
         " torch.ormqr(input=q, input2=tau, input3=c.T, left=False), torch.ormqr(q, tau, c.T, False, True)))"
         "(*torch.geqrf(a))", [np.vstack([A, B[:2]])[:, :3].astype(np.float32),
                              np.random.default_rng(5).standard_normal((5, 2)).astype(np.float32)], rtol=1e-4,
         atol=1e-4),
    case(T + "triangular_solve", "b, a: (torch.triangular_solve(b, a), torch.triangular_solve(b, a, upper=False),"
         " torch.triangular_solve(input=b, A=a))",
         [B[:, :2], (np.triu(A[:, :3]) + 3 * np.eye(3)).astype(np.float32)], rtol=1e-4, atol=1e-4),
    case(T + "unique_consecutive", "x: torch.unique_consecutive(x)", [np.array([1, 1, 2, 2, 3, 1, 1], np.int64)]),
]


def test_misc():
    failures = run_table(MISC)
    assert not failures, "\n".join(failures)



def test_every_misc_record_has_a_case():
    assert_every_record_cased("tests/parity/test_torch_misc_ops.py", {"test_misc": MISC})
