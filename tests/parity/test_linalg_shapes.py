"""Parity of the torch.linalg records that go through templates/compat_parts/linalg_shapes.py: empty matrices
(svd, svdvals, pinv, matrix_rank), 0x0 and 1x1 determinants, pinv/matrix_rank tolerances and hermitian=True,
unitriangular solves, eigh of a batch, rectangular lu_factor, lstsq drivers, lu_solve adjoint/left, vecdot of
empty vectors. Values in PyNative and ms.jit, gradients where MindSpore differentiates."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import assert_every_record_cased, case, run_table

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 4)).astype(np.float32)
BA = RNG.standard_normal((2, 4, 4)).astype(np.float32)
B = RNG.standard_normal((4, 2)).astype(np.float32)
R = RNG.standard_normal((5, 3)).astype(np.float32)
ONE = RNG.standard_normal((3, 1, 1)).astype(np.float32)
E00, E50, EB = np.zeros((0, 0), np.float32), np.zeros((5, 0), np.float32), np.zeros((0, 3, 3), np.float32)
# singular values 3, 1, 1e-3: tolerances between them change the rank and the pseudo-inverse
U3, _, V3 = np.linalg.svd(RNG.standard_normal((3, 3)))
GRADED = (U3 @ np.diag([3.0, 1.0, 1e-3]) @ V3).astype(np.float32)
TOL = dict(rtol=1e-4, atol=1e-4)
L = "torch.linalg."

SHAPES = [
    case([L + "det", L + "slogdet", "torch.det", "torch.logdet", "torch.slogdet"],
         "o, e: (torch.linalg.det(o), torch.linalg.slogdet(o), torch.det(o), torch.logdet(o.abs()), torch.slogdet(o),"
         " torch.linalg.det(e), torch.linalg.slogdet(e), torch.logdet(e))", [ONE, E00], grad=True, **TOL),
    case([L + "det", "torch.logdet"], "a: (torch.linalg.det(a), torch.logdet(a @ a.mT))", [BA], grad=True, **TOL),
    case([L + "svd", L + "svdvals", "torch.svd"],
         "e, f: (torch.linalg.svd(e), torch.linalg.svd(f), torch.linalg.svd(f, full_matrices=False), torch.svd(f),"
         " torch.linalg.svdvals(f), torch.linalg.svdvals(e))", [E50, EB]),
    case([L + "svd", "torch.svd"], "a: (lambda u, s, vh: (u @ torch.diag(s) @ vh, torch.svd(a)[1]))"
         "(*torch.linalg.svd(a, full_matrices=False))", [R], **TOL),
    case([L + "pinv", "torch.pinverse"],
         "g, r, e: (torch.linalg.pinv(g), torch.linalg.pinv(g, rtol=0.01), torch.linalg.pinv(g, atol=0.5),"
         " torch.linalg.pinv(g, hermitian=True), torch.linalg.pinv(r, 0.1), torch.linalg.pinv(r, atol=0.1, rtol=0.2), torch.pinverse(g, rcond=0.01),"
         " torch.pinverse(r), torch.linalg.pinv(e), torch.linalg.pinv(g, atol=torch.tensor(0.5)))", [GRADED, R, E50],
         **TOL),
    case(L + "matrix_rank", "g, b, e: (torch.linalg.matrix_rank(g), torch.linalg.matrix_rank(g, rtol=0.01),"
         " torch.linalg.matrix_rank(g, atol=2.0), torch.linalg.matrix_rank(g, hermitian=True),"
         " torch.linalg.matrix_rank(g, atol=0.5, rtol=0.0), torch.linalg.matrix_rank(b), torch.linalg.matrix_rank(e),"
         " torch.linalg.matrix_rank(g, tol=0.01))", [GRADED, BA, EB]),
    case(L + "solve_triangular", "a, b: (torch.linalg.solve_triangular(a, b, upper=True, unitriangular=True),"
         " torch.linalg.solve_triangular(a, b, upper=False, unitriangular=True), torch.linalg.solve_triangular(a, b,"
         " upper=True))", [A + 4 * np.eye(4, dtype=np.float32), B], grad=True, **TOL),
    case(L + "lstsq", "w, t, b4: (torch.linalg.lstsq(w, b4[:2], driver='gels'), torch.linalg.lstsq(t, b4, driver='gels'),"
         " torch.linalg.lstsq(t, b4, driver='gelsd'), torch.linalg.lstsq(t, b4, driver='gelss')[1:],"
         " torch.linalg.lstsq(t, b4)[0], torch.linalg.lstsq(w, b4[:2], driver='gelsd')[0])",
         [R[:2].copy(), R[:4].copy(), RNG.standard_normal((4, 2)).astype(np.float32)], rtol=1e-3, atol=1e-3),
    case([L + "inv", L + "eigh", L + "eigvalsh"], "e, f: (torch.linalg.inv(e), torch.linalg.inv(f), torch.linalg.eigh(e),"
         " torch.linalg.eigvalsh(f))", [E00, EB], graph=False),
    case([L + "lu_factor", L + "lu_solve"], "a, b: (lambda lu, p: (torch.linalg.lu_solve(lu, p, b, adjoint=True),"
         " torch.linalg.lu_solve(lu, p, b.mT, left=False), torch.linalg.lu_solve(lu, p, b.mT, adjoint=True, left=False),"
         " torch.linalg.lu_solve(lu, p, b)))(*torch.linalg.lu_factor(a))", [A, B], graph=False, **TOL),
    case(L + "vander", "x, m: (torch.linalg.vander(x), torch.linalg.vander(x, N=3), torch.linalg.vander(m),"
         " torch.linalg.vander(x[0], N=2))", [R[:, 0].copy(), R[:2].copy()], grad=True),
    case([L + "lu_factor", L + "lu_factor_ex"], "w, t: (torch.linalg.lu_factor(w), torch.linalg.lu_factor(t),"
         " torch.linalg.lu_factor_ex(t), torch.linalg.lu_factor(w.mT), torch.linalg.lu_factor_ex(t[:3, :3]))",
         [R[:3].T.copy(), R.copy()], graph=False, **TOL),
    case([L + "eig", L + "eigvals", L + "cholesky", L + "cholesky_ex"], "e, s: (torch.linalg.eig(e), torch.linalg.eigvals(e),"
         " torch.linalg.cholesky(e), torch.linalg.cholesky_ex(e), torch.linalg.cholesky(s, upper=True))",
         [E00, A @ A.T + 4 * np.eye(4, dtype=np.float32)], graph=False, **TOL),
    case(L + "tensorsolve", "a, b: (torch.linalg.tensorsolve(a, b, dims=(0,)), torch.linalg.tensorsolve(a, b),"
         " torch.linalg.tensorsolve(a, b, dims=[1, 0]))", [A.reshape(2, 2, 2, 2) + 0, B[:, 0].reshape(2, 2) + 0],
         **TOL),
    case(L + "vecdot", "x, y, e: (torch.linalg.vecdot(x, y), torch.linalg.vecdot(x, y[:1], dim=-1),"
         " torch.linalg.vecdot(x, y, dim=0), torch.linalg.vecdot(e, e), torch.linalg.vecdot(e, e, dim=0))",
         [R, R * 2, np.zeros(0, np.float32)], grad=True),
    case([L + "eigh", L + "eigvalsh"], "s: (torch.linalg.eigvalsh(s), torch.linalg.eigvalsh(s, UPLO='U'),"
         " (lambda w, v: (w, v @ torch.diag_embed(w) @ v.mT))(*torch.linalg.eigh(s)), torch.linalg.eigh(s[0])[0])",
         [BA + BA.swapaxes(-1, -2)], **TOL),
]


def test_linalg_shapes():
    failures = run_table(SHAPES)
    assert not failures, "\n".join(failures)


def test_every_linalg_shapes_record_has_a_case():
    assert_every_record_cased("tests/parity/test_linalg_shapes.py", {"test_linalg_shapes": SHAPES})
