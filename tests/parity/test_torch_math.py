"""Parity of torch's elementwise, reduction and matrix functions (msmigrate/mappings/torch_math.py): values and
dtypes in PyNative and ms.jit, gradients where they matter; one converted snippet per table."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import assert_every_record_cased, case, run_table

RNG = np.random.default_rng(0)
X = RNG.uniform(-0.9, 0.9, (3, 4)).astype(np.float32)
Y = RNG.uniform(-3.0, 3.0, (3, 4)).astype(np.float32)
P = RNG.uniform(0.2, 3.0, (3, 4)).astype(np.float32)
U = RNG.uniform(0.05, 0.95, (3, 4)).astype(np.float32)
I = RNG.integers(-9, 9, (3, 4)).astype(np.int64)
J = RNG.integers(1, 5, (3, 4)).astype(np.int64)
NANS = np.array([1.0, np.nan, 3.0, np.nan, -np.inf, np.inf], np.float32)
OTHER = np.array([np.nan, 2.0, 1.0, np.nan, 0.0, 5.0], np.float32)

_UNARY = [("acos", X, True), ("arccos", X, True), ("asin", X, True), ("arcsin", X, True), ("atan", Y, True),
          ("arctan", Y, True), ("acosh", P + 1, True), ("arccosh", P + 1, True), ("asinh", Y, True),
          ("arcsinh", Y, True), ("atanh", X, True), ("arctanh", X, True), ("cosh", Y, True), ("sinh", Y, True),
          ("tan", X, True), ("expm1", Y, True), ("exp2", Y, True), ("log2", P, True), ("log10", P, True),
          ("erfc", Y, True), ("erfinv", X, True), ("lgamma", P, True), ("digamma", P, True),
          ("reciprocal", P, True), ("square", Y, True), ("square", I, False), ("frac", Y, True),
          ("trunc", Y, False), ("fix", Y, False), ("sgn", Y, False), ("signbit", np.array([-0.0, 0.0, -1.5, 2.0, -np.inf], np.float32), False),
          ("rad2deg", Y, True), ("deg2rad", Y, True), ("i0", Y, True),
          ("sinc", np.append(Y, 0.0).astype(np.float32), True), ("positive", Y, True), ("bitwise_not", I, False),
          ("bitwise_not", I % 2 == 0, False),
          ("isneginf", NANS, False), ("isposinf", NANS, False), ("isreal", Y, False), ("real", Y, True)]
ELEMENTWISE = [case("torch." + n, f"x: torch.{n}(x)", [inp], grad=g, rtol=1e-4) for n, inp, g in _UNARY]
ELEMENTWISE += [case("torch." + n, f"x, y: torch.{n}(x, y)", [a, b], grad=g, rtol=1e-4)
                for n, a, b, g in (("logaddexp", Y, X, True), ("logaddexp2", Y, X, True), ("hypot", Y, X, True),
                                   ("copysign", Y, X, False), ("nextafter", Y, X, False), ("ldexp", Y, J, False),
                                   ("gcd", I, J, False), ("lcm", I, J, False), ("bitwise_and", I, J, False),
                                   ("bitwise_or", I, J, False), ("bitwise_xor", I, J, False),
                                   ("bitwise_left_shift", I, J, False), ("bitwise_right_shift", I, J, False),
                                   ("igamma", P, P * 0.7, False), ("igammac", P, P * 0.7, False),
                                   ("fmax", NANS, OTHER, False), ("fmin", NANS, OTHER, False),
                                   ("fmax", Y, X, True), ("fmin", Y, X, True), ("xlogy", Y, P, True),
                                   ("heaviside", np.array([-1.0, 0.0, 2.0, 0.0], np.float32),
                                    np.array([0.5, 0.25, 0.5, 0.75], np.float32), False))]
ELEMENTWISE += [
    # a negative zero's sign bit, tensor or number (ops.copysign reads it as positive); an integer input
    case("torch.copysign", "x, z: (torch.copysign(x, z), torch.copysign(x, -0.0), x.copysign(z * 0),"
         " torch.copysign(torch.tensor([1, -2, 3]), z[:3]))",
         [Y[0, :4], np.array([-0.0, 0.0, -1.5, -0.0], np.float32)], graph=False),
    # an integer input promoted as torch promotes it (MindSpore 2.10's kernels refuse it), float32 with float64
    case(["torch.logaddexp", "torch.logaddexp2"], "x, i: (torch.logaddexp2(x, i), torch.logaddexp(i, x), "
         "torch.logaddexp2(x[:1, :1], i), x.logaddexp2(i), torch.logaddexp(x, x.double()))", [Y, I], grad=True),
    case(["torch.igamma", "torch.igammac"], "x, j: (torch.igamma(x, j), torch.igammac(j, x.double()))", [P, J]),
    case("torch.float_power", "x, y: (torch.float_power(x, y), torch.float_power(x, 2), torch.float_power(x, exponent=y),"
         " torch.float_power(input=x, exponent=3), x.float_power(exponent=2))", [P, X]),
    case("torch.xlogy", "x, y: torch.xlogy(x, y)", [np.array([0.0, 0.0, 1.0, 2.0], np.float32),
                                                    np.array([0.0, np.nan, 0.5, 3.0], np.float32)]),
    # a Python number as other (x.xlogy(3.0)), NaN included
    case("torch.xlogy", "x: (torch.xlogy(x, 3.0), x.xlogy(other=0.5), torch.xlogy(x, float('nan')))",
         [np.array([0.0, 0.0, 1.0, 2.0], np.float32)]),
    case("torch.imag", "x: torch.imag(x)", [(Y + 1j * X).astype(np.complex64)]),
    case("torch.logit", "x: (torch.logit(x), torch.logit(x, 0.1), torch.logit(x, eps=0.2))", [U], grad=True),
    case("torch.polygamma", "x: (torch.polygamma(1, x), torch.polygamma(n=2, input=x))", [P], rtol=1e-4),
    case("torch.mvlgamma", "x: torch.mvlgamma(x, p=2)", [P + 1], grad=True, rtol=1e-4),
    case(["torch.clamp_min", "torch.clamp_max"], "x: (torch.clamp_min(x, -0.5), torch.clamp_max(x, 0.5))", [Y],
         grad=True),
    case("torch.rsub", "x, y: (torch.rsub(x, y), torch.rsub(x, y, alpha=2), torch.rsub(x, 3.0))", [Y, X], grad=True),
    case(["torch.addcmul", "torch.addcdiv"], "x, a, b: (torch.addcmul(x, a, b), torch.addcmul(x, a, b, value=0.5),"
         " torch.addcdiv(x, a, b), torch.addcdiv(x, a, b, value=-2))", [Y, X, P], grad=True),
    case("torch.nan_to_num", "x: (torch.nan_to_num(x), torch.nan_to_num(x, nan=1.5, posinf=9.0, neginf=-9.0),"
         " torch.nan_to_num(x, 2.0))", [NANS]),
]

REDUCTIONS = [
    case("torch.logcumsumexp", "x: (torch.logcumsumexp(x, 0), torch.logcumsumexp(x, dim=1))", [Y], grad=True),
    case(["torch.cummax", "torch.cummin"], "x: (torch.cummax(x, 1), torch.cummin(x, dim=0))", [Y]),
    case(["torch.nansum", "torch.nanmean"], "x: (torch.nansum(x), torch.nansum(x, 0), torch.nanmean(x),"
         " torch.nanmean(x, dim=0, keepdim=True))", [NANS.reshape(2, 3)]),
    case(["torch.nansum", "torch.nanmean"], "x: (torch.nansum(x, 1), torch.nanmean(x, 1))", [Y], grad=True),
    case(["torch.median", "torch.nanmedian"], "x: (torch.median(x), torch.median(x, 1), torch.median(x, 0, True),"
         " torch.nanmedian(x), torch.nanmedian(x, dim=1))", [Y]),
    case("torch.nanmedian", "x: (torch.nanmedian(x), torch.nanmedian(x, 1))",
         [np.array([[1.0, np.nan, 3.0, 0.5], [np.nan, 2.0, 5.0, 4.0]], np.float32)]),
    case("torch.aminmax", "x: (torch.aminmax(x), torch.aminmax(x, dim=1), torch.aminmax(x, dim=0, keepdim=True))",
         [Y]),
    case("torch.histc", "x: (torch.histc(x, bins=4, min=-3, max=3), torch.histc(x, 5))", [Y]),
    case("torch.bincount", "x, w: (torch.bincount(x), torch.bincount(x, w), torch.bincount(x, minlength=9))",
         [J.reshape(-1), P.reshape(-1)]),
    # float64 / int weights sum in float64, float32 ones in float32 (ops.bincount: float32); no elements: zeros
    case("torch.bincount", "x, w, e: (torch.bincount(x, w.double()), torch.bincount(x, (w * 10).int(), 7),"
         " torch.bincount(e), torch.bincount(e, minlength=3), torch.bincount(e, e.double(), 2))",
         [J.reshape(-1), P.reshape(-1), np.zeros(0, np.int64)], graph=False),
    case("torch.bucketize", "x, b: (torch.bucketize(x, b), torch.bucketize(x, b, right=True),"
         " torch.bucketize(x, b, out_int32=True))", [Y, np.array([-1.0, 0.0, 1.0, 2.0], np.float32)]),
    case("torch.searchsorted", "s, v: (torch.searchsorted(s, v), torch.searchsorted(s, v, right=True),"
         " torch.searchsorted(s, v, side='right'), torch.searchsorted(s, v, out_int32=True),"
         " torch.searchsorted(s, input=v, right=True))",
         [np.array([-1.0, 0.0, 1.0, 2.0], np.float32), Y]),
    # sorter=: the sequence unsorted, its sorting indices given (1-D and per row)
    case("torch.searchsorted", "s, m, v, w: (torch.searchsorted(s, v, sorter=torch.argsort(s)), torch.searchsorted(m, w,"
         " right=True, sorter=torch.argsort(m)), torch.searchsorted(m, w, side='left', sorter=torch.argsort(m, dim=-1)))",
         [np.array([2.0, -1.0, 1.0, 0.0], np.float32), np.array([[1, 3, 9, 7, 5], [2, 4, 6, 8, 10]], np.int64), Y,
          np.array([[3, 6, 9], [3, 6, 9]], np.int64)]),
    case("torch.cov", "x, f, a: (torch.cov(x), torch.cov(x, correction=0), torch.cov(x, fweights=f, aweights=a))",
         [Y, J[0], P[0]], rtol=1e-4),
    case(["torch.trapezoid", "torch.trapz"], "y, x: (torch.trapezoid(y), torch.trapezoid(y, x), torch.trapezoid(y,"
         " dx=0.5, dim=0), torch.trapz(y), torch.trapz(y, x, dim=1), torch.trapezoid(y=y, dx=2), torch.trapz(y, dx=2,"
         " dim=0), torch.trapz(dx=0.5, y=y))", [Y, np.sort(X, 1)], grad=True),
    case("torch.renorm", "x: (torch.renorm(x, 2, 0, 1.0), torch.renorm(x, p=1, dim=1, maxnorm=2.0), torch.renorm(x, 1, 1, 2))", [Y],
         grad=True),
    case("torch.msort", "x: torch.msort(x)", [Y]),
]

A = RNG.standard_normal((4, 4)).astype(np.float32)
BA = RNG.standard_normal((2, 4, 4)).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
CH = np.linalg.cholesky(SPD).astype(np.float32)
V = RNG.standard_normal(4).astype(np.float32)
W = RNG.standard_normal(4).astype(np.float32)
R = RNG.standard_normal((5, 3)).astype(np.float32)
MAT = [
    case("torch.trace", "a: torch.trace(a)", [A], grad=True),
    case(["torch.det", "torch.logdet", "torch.slogdet", "torch.inverse"],
         "a, s: (torch.det(a), torch.logdet(s), torch.slogdet(a), torch.inverse(a))", [BA, SPD], grad=True,
         rtol=1e-4, atol=1e-4),
    case("torch.argwhere", "x: torch.argwhere(x > 0)", [Y]),
    case(["torch.kron", "torch.inner", "torch.outer", "torch.ger", "torch.mv", "torch.dot"],
         "a, v, w: (torch.kron(a[:2, :2], a), torch.inner(a, a), torch.outer(v, w), torch.ger(v, w), torch.mv(a, v),"
         " torch.dot(v, w))", [A, V, W], grad=True, rtol=1e-4, atol=1e-5),
    case(["torch.diag_embed", "torch.diagflat", "torch.diagonal"],
         "a, v: (torch.diag_embed(a), torch.diag_embed(a, offset=1, dim1=0, dim2=2), torch.diagflat(v),"
         " torch.diagflat(a, 1), torch.diagonal(a), torch.diagonal(a, 1), torch.diagonal(a, dim1=1, dim2=0))",
         [A, V], grad=True),
    case("torch.take", "a, i: torch.take(a, i)", [A, np.array([[0, 5], [15, -3]], np.int64)], grad=True),
    case("torch.cross", "a, b: (torch.cross(a, b), torch.cross(a.T, b.T, dim=1))", [R[:3], R[1:4]], grad=True),
    # broadcast operands (ops.cross / ops.nextafter alone gave zeros or unrelated rows)
    case("torch.cross", "a, b: (torch.cross(a[:1], b, dim=-1), torch.cross(b, a[:1], dim=1))", [R[:3], R[1:4]], grad=True),
    case("torch.nextafter", "x, y: (torch.nextafter(x[:, :1], y[0]), torch.nextafter(x, y[0]))", [Y, X]),
    case("torch.vander", "x: (torch.vander(x), torch.vander(x, N=3), torch.vander(x, 3, True))", [V]),
    case(["torch.addmv", "torch.addr", "torch.addbmm"],
         "a, v, w, b: (torch.addmv(v, a, w), torch.addmv(v, a, w, beta=0.5, alpha=2), torch.addr(a, v, w),"
         " torch.addr(a, v, w, beta=2, alpha=0.5), torch.addbmm(a, b, b), torch.addbmm(a, b, b, beta=0, alpha=3))",
         [A, V, W, BA], grad=True, rtol=1e-4, atol=1e-4),
    case("torch.matrix_power", "a: (torch.matrix_power(a, 2), torch.matrix_power(a, -1))", [A], rtol=1e-3, atol=1e-3),
    case(["torch.cholesky", "torch.cholesky_solve", "torch.cholesky_inverse"],
         "s, l, b: (torch.cholesky(s), torch.cholesky(s, upper=True), torch.cholesky_solve(b, l),"
         " torch.cholesky_inverse(l), torch.cholesky_solve(input=b, input2=l, upper=False),"
         " torch.cholesky_inverse(input=l))", [SPD, CH, A[:, :2]], rtol=1e-4, atol=1e-4),
    case("torch.svd", "a: [t.abs() for t in torch.svd(a)] + [(lambda u, s, v: u @ torch.diag(s) @ v.T)(*torch.svd(a))]",
         [R], rtol=1e-4, atol=1e-4),
    case("torch.svd", "a: (lambda u, s, v: (u[:, :3].abs(), s, v.abs(), torch.tensor(u.shape)))(*torch.svd(a, some=False))",
         [R], rtol=1e-4, atol=1e-4),
    # compute_uv=False: zero U (m x m) and V (n x n) whatever some says; batched; the singular values' gradient
    case("torch.svd", "a: (torch.svd(a, compute_uv=False), torch.svd(a.T, some=False, compute_uv=False),"
         " torch.svd(torch.stack([a, 2 * a]), compute_uv=False), torch.svd(a, True, False)[1])",
         [R], rtol=1e-4, atol=1e-4, grad=True),
    case("torch.qr", "a: [t.abs() for t in torch.qr(a)] + [t.abs() for t in torch.qr(a, some=False)]", [R],
         rtol=1e-4, atol=1e-4),
    case("torch.pinverse", "a: torch.pinverse(a)", [R], rtol=1e-4, atol=1e-4),
]


def test_elementwise():
    failures = run_table(ELEMENTWISE, graph_every=4)
    assert not failures, "\n".join(failures)


def test_reductions():
    failures = run_table(REDUCTIONS)
    assert not failures, "\n".join(failures)


def test_matrix_functions():
    failures = run_table(MAT)
    assert not failures, "\n".join(failures)


def test_every_math_record_has_a_case():
    assert_every_record_cased("tests/parity/test_torch_math.py", {"test_elementwise": ELEMENTWISE,
                                                                  "test_reductions": REDUCTIONS,
                                                                  "test_matrix_functions": MAT})
