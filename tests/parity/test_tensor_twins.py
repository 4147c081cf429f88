"""Parity of the torch.Tensor methods converted as their torch function with the receiver first
(msmigrate/mappings/tensor_twins.py: `x.erfinv()` as `torch.erfinv(x)`): values and dtypes in PyNative and
ms.jit, gradients where they matter; every case calls the method form on a receiver known to be a tensor."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import assert_every_record_cased, case, run_table

RNG = np.random.default_rng(0)
X = RNG.uniform(-0.9, 0.9, (3, 4)).astype(np.float32)
Y = RNG.standard_normal((3, 4)).astype(np.float32)
Z = RNG.standard_normal((3, 4)).astype(np.float32)
P = RNG.uniform(0.2, 3.0, (3, 4)).astype(np.float32)
P1 = (P + 1).astype(np.float32)
U = RNG.uniform(0.05, 0.95, (3, 4)).astype(np.float32)
I = RNG.integers(-9, 9, (3, 4)).astype(np.int64)
J = RNG.integers(1, 5, (3, 4)).astype(np.int64)
NANS = np.array([1.0, np.nan, 3.0, np.nan, -np.inf, np.inf], np.float32)
OTHER = np.array([np.nan, 2.0, 1.0, np.nan, 0.0, 5.0], np.float32)
Q = RNG.standard_normal((3, 3)).astype(np.float32) + 3 * np.eye(3, dtype=np.float32)
Q2 = RNG.standard_normal((3, 3)).astype(np.float32)
SPD = (Q @ Q.T + np.eye(3)).astype(np.float32)
L = np.linalg.cholesky(SPD).astype(np.float32)
V = RNG.standard_normal(3).astype(np.float32)
B1 = RNG.standard_normal((2, 3, 3)).astype(np.float32)
B2 = RNG.standard_normal((2, 3, 3)).astype(np.float32)
A3 = RNG.standard_normal((2, 3, 4)).astype(np.float32)
IDX = np.array([0, 2, 1], np.int64)
IDX2 = np.array([[0, 1], [2, 3], [1, 0]], np.int64)
TAKE = np.array([[0, 1, 2, 3], [3, 2, 1, 0], [1, 1, 0, 0]], np.int64)
COUNTS = np.array([0, 3, 1, 1, 5, 3], np.int64)
REPEATED = np.array([1, 1, 2, 2, 3, 1, 1, 2], np.int64)
IMG = RNG.standard_normal((2, 4, 3, 3)).astype(np.float32)
SLOPE = np.array([0.25, 0.1, 0.5, 0.3], np.float32)
T = "Tensor."


def _apis(*names):
    return [T + n for n in names]


TWINS = [
    case(_apis("acos", "arccos", "asin", "arcsin", "atanh", "arctanh", "arctan", "asinh", "arcsinh", "acosh",
               "arccosh"),
         "x, y, p: (x.acos(), x.arccos(), x.asin(), x.arcsin(), x.atanh(), x.arctanh(), y.arctan(), y.asinh(),"
         " y.arcsinh(), p.acosh(), p.arccosh())", [X, Y, P1], grad=True, rtol=1e-4, typed=True),
    case(_apis("erf", "erfc", "erfinv", "exp2", "log2", "log10", "lgamma", "digamma", "i0", "sinc", "deg2rad",
               "rad2deg", "frac", "positive", "absolute"),
         "x, y, p: (y.erf(), y.erfc(), x.erfinv(), y.exp2(), p.log2(), p.log10(), p.lgamma(), p.digamma(), y.i0(),"
         " y.sinc(), y.deg2rad(), y.rad2deg(), y.frac(), y.positive(), y.absolute())", [X, Y, P],
         rtol=1e-4, typed=True, graph=False),
    case(_apis("fix", "trunc", "sgn", "signbit", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "isreal",
               "nan_to_num"),
         "y, n: (y.fix(), y.trunc(), y.sgn(), y.signbit(), n.isfinite(), n.isinf(), n.isnan(), n.isneginf(),"
         " n.isposinf(), y.isreal(), n.nan_to_num(), n.nan_to_num(1.5, posinf=9.0, neginf=-9.0))", [Y * 3, NANS],
         typed=True, graph=False),
    case(_apis("arctan2", "atan2", "hypot", "logaddexp", "logaddexp2", "maximum", "minimum", "xlogy", "float_power",
               "fmax", "fmin", "divide", "multiply", "subtract", "true_divide"),
         "y, x, p: (y.arctan2(x), y.atan2(x), y.hypot(x), y.logaddexp(x), y.logaddexp2(x), y.maximum(x),"
         " y.minimum(x), y.xlogy(p), p.float_power(2), y.fmax(x), y.fmin(x), y.divide(p), y.multiply(x),"
         " y.subtract(x), y.subtract(x, alpha=2), y.true_divide(p))", [Y, X, P], rtol=1e-4, typed=True, graph=False),
    case(_apis("copysign", "nextafter", "heaviside", "fmax", "fmin", "divide"),
         "y, x, n, o: (y.copysign(x), y.nextafter(x), y.heaviside(x), n.fmax(o), n.fmin(o),"
         " y.divide(x, rounding_mode='floor'), y.divide(x, rounding_mode='trunc'))", [Y, X, NANS, OTHER], typed=True, graph=False),
    case(_apis("greater", "greater_equal", "less", "less_equal", "not_equal", "isclose", "allclose", "equal",
               "is_same_size", "logical_and", "logical_or", "logical_xor", "logical_not"),
         "y, x: (y.greater(x), y.greater_equal(x), y.less(x), y.less_equal(x), y.not_equal(x), y.isclose(x),"
         " y.isclose(y + 1e-7), y.allclose(x), y.allclose(y), y.equal(y), y.equal(x), y.is_same_size(x),"
         " y.logical_and(x > 0), y.logical_or(x > 0), y.logical_xor(x > 0), y.logical_not())", [Y, X], typed=True, graph=False),
    case(_apis("gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
               "bitwise_right_shift", "ldexp"),
         "i, j, y: (i.gcd(j), i.lcm(j), i.bitwise_and(j), i.bitwise_or(j), i.bitwise_xor(j), i.bitwise_not(),"
         " i.bitwise_left_shift(j), i.bitwise_right_shift(j), y.ldexp(j))", [I, J, Y], typed=True),
    case(_apis("frexp"), "y, x: (y.frexp(), (x * 1e5).frexp())", [Y, X], typed=True),
    case(_apis("igamma", "igammac", "logit", "polygamma", "mvlgamma"),
         "p, q, u: (p.igamma(q), p.igammac(q), u.logit(), u.logit(0.1), u.logit(eps=0.2), p.polygamma(1),"
         " q.mvlgamma(2))", [P, P1, U], rtol=1e-4, typed=True),
    case(_apis("addmm", "addmv", "addr", "addbmm", "baddbmm", "addcmul", "addcdiv"),
         "q, r, v, b, c, p: (q.addmm(r, q), q.addmm(r, q, beta=0.5, alpha=2), v.addmv(q, v), q.addr(v, v),"
         " q.addbmm(b, c), b.baddbmm(b, c, alpha=0.5), p.addcmul(p, p, value=0.5), p.addcdiv(p, p + 1))",
         [Q, Q2, V, B1, B2, P], rtol=1e-4, atol=1e-4, typed=True, graph=False),
    case(_apis("dot", "vdot", "inner", "outer", "ger", "mv", "kron", "matrix_power", "cross", "dist"),
         "q, r, v: (v.dot(v), v.vdot(v), v.inner(v), v.outer(v), v.ger(v), q.mv(v), q.kron(r), q.matrix_power(2),"
         " q.cross(r, dim=1), q.dist(r), q.dist(r, 1))", [Q, Q2, V], rtol=1e-4, atol=1e-4, typed=True, graph=False),
    case(_apis("trace", "diag", "diagflat", "diagonal", "diag_embed"),
         "q, v, b: (q.trace(), q.diag(), v.diag(), v.diag(1), v.diagflat(), q.diagonal(), q.diagonal(1),"
         " b.diagonal(0, 1, 2), b.diag_embed())", [Q, V, B1], typed=True, graph=False),
    case(_apis("cholesky", "cholesky_inverse", "cholesky_solve", "det", "logdet", "slogdet", "inverse", "pinverse"),
         "s, l, q: (s.cholesky(), l.cholesky_inverse(), q.cholesky_solve(l), q.det(), s.logdet(), q.slogdet(),"
         " q.inverse(), q.pinverse())", [SPD, L, Q], rtol=1e-3, atol=1e-4, typed=True, graph=False),
    case(_apis("qr", "svd"), "q: (q.qr(), q.svd())", [Q], rtol=1e-3, atol=1e-4, post="abs", typed=True),
    case(_apis("ormqr"), "a, c: (lambda q, tau: (q.ormqr(tau, c), q.ormqr(input2=tau, transpose=True, input3=c),"
         " q.ormqr(tau, c.T, False, True)))(*a.geqrf())",
         [np.random.default_rng(6).standard_normal((5, 3)).astype(np.float32),
          np.random.default_rng(7).standard_normal((5, 2)).astype(np.float32)], rtol=1e-4, atol=1e-4),
    case(_apis("triangular_solve", "geqrf", "orgqr"),
         "q, l: (q.triangular_solve(l, upper=False), q.geqrf()[0].orgqr(q.geqrf()[1]))", [Q, L], rtol=1e-3,
         atol=1e-4, post="abs", typed=True),
    case(_apis("cumprod", "cummax", "cummin", "logcumsumexp", "logsumexp", "msort", "nansum", "nanmean", "diff"),
         "y: (y.cumprod(1), y.cummax(0), y.cummin(dim=1), y.logcumsumexp(0), y.logsumexp(1),"
         " y.logsumexp(0, keepdim=True), y.msort(), y.nansum(), y.nanmean(1), y.diff(), y.diff(dim=0))", [Y],
         rtol=1e-4, typed=True, graph=False),
    case(_apis("median", "nanmedian", "kthvalue", "aminmax", "count_nonzero", "argwhere"),
         "y, n: (y.median(), y.median(1), y.nanmedian(), n.nanmedian(), y.kthvalue(2, 1), y.aminmax(),"
         " y.aminmax(dim=0), y.count_nonzero(), (y > 0).count_nonzero(1), y.argwhere())", [Y, NANS], typed=True, graph=False),
    case(_apis("cov", "corrcoef", "bincount", "histc"),
         "y, c: (y.cov(), y.cov(correction=0), y.corrcoef(), c.bincount(), c.bincount(minlength=8),"
         " y.histc(bins=4, min=-2, max=2))", [Y, COUNTS], rtol=1e-4, atol=1e-5, typed=True, graph=False),
    case(_apis("fliplr", "flipud", "rot90", "ravel", "movedim", "moveaxis", "swapdims", "broadcast_to", "tile"),
         "y, a: (y.fliplr(), y.flipud(), y.rot90(), y.rot90(-1, (0, 1)), y.ravel(), a.movedim(0, 2),"
         " a.moveaxis(1, 0), a.swapdims(0, 1), y.broadcast_to((2, 3, 4)), y.tile((2, 1)), y.tile(2, 1), y.tile(2))",
         [Y, A3], typed=True, graph=False),
    case(_apis("hsplit", "vsplit", "dsplit", "tensor_split", "split_with_sizes", "unsafe_split", "unsafe_chunk",
               "unsafe_split_with_sizes", "narrow_copy", "select", "repeat_interleave"),
         "y, a: (y.hsplit(2), y.vsplit([1]), a.dsplit(2), y.tensor_split(3, dim=1), y.split_with_sizes([1, 2]),"
         " y.unsafe_split(2, 1), y.unsafe_chunk(2, 1), y.unsafe_split_with_sizes([3, 1], 1), y.narrow_copy(1, 1, 2),"
         " y.select(1, 2), y.repeat_interleave(2), y.repeat_interleave(2, dim=0))", [Y, A3], typed=True, graph=False),
    case(_apis("index_add", "index_copy", "index_fill", "scatter_add", "take", "take_along_dim"),
         "a, b, i, j, t: (a.index_add(0, i, b), a.index_add(0, i, b, alpha=2), a.index_copy(0, i, b),"
         " a.index_fill(1, i[:2], -1.0), a.scatter_add(1, j, b[:, :2]), a.take(i), a.take_along_dim(t, 1))",
         [Y, Z, IDX, IDX2, TAKE], typed=True, graph=False),
    case(_apis("select_scatter", "slice_scatter", "diagonal_scatter"),
         "a, b: (a.select_scatter(b[0], 0, 1), a.slice_scatter(b[:, :2], 1, 1, 3), a.diagonal_scatter(b[0, :3]))",
         [Y, Z], typed=True, graph=False),
    case(_apis("prelu", "hardshrink", "renorm", "lerp", "is_nonzero"),
         "m, w, y, x: (m.prelu(w), y.hardshrink(0.5), y.renorm(2, 0, 1.0), y.lerp(x, 0.3), y.lerp(x, x),"
         " y[0, 0].is_nonzero())", [IMG, SLOPE, Y, X], typed=True),
    case(_apis("unique", "unique_consecutive"),
         "r: (r.unique(), r.unique(sorted=True), r.unique_consecutive())", [REPEATED], typed=True),
]


def test_tensor_twins():
    # each method converts to its torch function's expression, whose gradients and GRAPH-mode runs the
    # function's own parity tests prove: here values everywhere, ms.jit and gradients on a few cheap cases
    failures = run_table(TWINS, graph_every=1)
    assert not failures, "\n".join(failures)


def test_every_twin_record_has_a_case():
    assert_every_record_cased("tests/parity/test_tensor_twins.py", {"test_tensor_twins": TWINS})
