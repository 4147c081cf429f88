"""Parity of the torch.special / torch.linalg forms the peer per-API suite (bench/peer_api_suite.py) exercises:
torch's own keyword names (`input=`, `x=`, `b=`, `other=`), left=False solves, cond's p, multi_dot of a list held
in a name, batched lu, complex eigh, list dims of the norms, and the special functions composed in float64
(softmax family, ndtri, multigammaln, round with decimals). Values and dtypes against real torch, gradients where
torch has them; one converted snippet per table."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import assert_every_record_cased, case, run_table

RNG = np.random.default_rng(3)
S, L = "torch.special.", "torch.linalg."
F32, F64 = np.float32, np.float64
Y = RNG.uniform(-6.0, 6.0, (3, 5))
ROWS = np.array([[1.4907, 1.0593, 1.5696], [-np.inf, -np.inf, -np.inf], [30.0, -2.0, 0.5]])
PROB = np.array([0.0, 1e-300, 1e-12, 1e-5, 0.02, 0.024, 0.2, 0.5, 0.75, 0.97, 0.999999, 1 - 1e-12, 1.0, 1.5, -0.1])
PROB_GRAD = np.array([0.003, 0.02, 0.3, 0.5, 0.8, 0.9995])
HALVES = np.array([0.25, 0.35, -1.25, 2.5, -0.05, 1234.5678, -0.0149, 0.125])
MVL = np.array([0.34, 1.5, 0.73, 3.2, 2.05])
TIGHT = dict(rtol=1e-6, atol=1e-7)

SPECIAL = [
    case([S + "softmax", S + "log_softmax"], "x: (torch.special.softmax(x, -1), torch.special.log_softmax(x, 1),"
         " torch.special.softmax(x, 0, dtype=torch.float64), torch.special.log_softmax(input=x, dim=0,"
         " dtype=torch.float64))", [Y.astype(F32)], grad=True, **TIGHT),
    case([S + "softmax", S + "log_softmax"], "x: (torch.special.softmax(x, dim=1), torch.special.log_softmax(x, 1))",
         [Y], grad=True, rtol=1e-12, atol=1e-14),
    # a slice of all -inf: nan, as torch; a large spread keeps its digits
    case([S + "softmax", S + "log_softmax"], "x: (torch.special.softmax(x, 1), torch.special.log_softmax(x, -1))",
         [ROWS.astype(F32)], **TIGHT),
    case(S + "round", "x: (torch.special.round(x, decimals=1), torch.special.round(input=x, decimals=2),"
         " torch.special.round(x, decimals=-1), torch.special.round(x, decimals=3), torch.special.round(x, decimals=0))",
         [HALVES.astype(F32)], rtol=0, atol=0),
    case(S + "round", "x: (torch.special.round(x, decimals=2), torch.special.round(x, decimals=-2))", [HALVES],
         rtol=0, atol=0),
]

# ndtri's Halley steps and multigammaln's sum, float64 first (its constants proven inside ms.jit too)
NDTRI_MVL = [
    case(S + "ndtri", "p: torch.special.ndtri(p)", [PROB], rtol=1e-14, atol=0),
    case(S + "multigammaln", "x: torch.special.multigammaln(x, 3)", [MVL + 1], grad=True, rtol=1e-13, atol=0),
    case(S + "ndtri", "p: torch.special.ndtri(input=p)", [PROB.astype(F32)], rtol=3e-7, atol=0),
    case(S + "ndtri", "p: torch.special.ndtri(p)", [PROB_GRAD], grad=True, rtol=1e-13, atol=0),
    case(S + "multigammaln", "x: (torch.special.multigammaln(x, 2), torch.special.multigammaln(input=x, p=1),"
         " torch.special.multigammaln(x, p=4))", [MVL.astype(F32)], grad=True, rtol=1e-5, atol=1e-6),
    case(S + "multigammaln", "x, p: torch.special.multigammaln(x, p)", [MVL.astype(F32), 2], rtol=1e-5, atol=1e-6),
]

# numbers for either xlog1py argument, torch's `x=` keyword, float64 digits behind the composed forms
SPECIAL_MORE = [
    # a Python float constant would be rounded to float32 (1e-6 off at -5); further out torch's own ndtr loses
    # relative precision (-8: 6.106e-16 where it is 6.221e-16; -30: 0)
    case([S + "ndtr", S + "spherical_bessel_j0"], "x: (torch.special.ndtr(x), torch.special.spherical_bessel_j0(x))",
         [np.array([-5.0, -2.0, -0.3, 0.0, 0.7, 3.0, 9.0])], rtol=1e-9, atol=1e-15),
    # ops.log1p is log(1 + x): small arguments lose every digit without the special_log1p form
    case([S + "log1p", S + "xlog1py"], "x: (torch.special.log1p(x), torch.special.log1p(x.double()),"
         " torch.special.xlog1py(x * 0 + 2, x))", [np.array([1e-12, -1e-9, 1e-6, -1e-4, 0.3, 5.0, -0.99], F32)],
         grad=True, rtol=2e-7, atol=0),
    # integer and bool tensors: float32 results, as torch's promotion
    case([S + n for n in ("expit", "expm1", "entr", "erf", "i0e", "ndtr", "log_ndtr", "exp2", "gammaln")],
         "i, b: (torch.special.expit(i), torch.special.expm1(input=i), torch.special.entr(i), torch.special.erf(b),"
         " torch.special.i0e(i), torch.special.ndtr(i), torch.special.log_ndtr(i), torch.special.exp2(i),"
         " torch.special.gammaln(i + 3))", [np.array([-3, -1, 0, 2, 5], np.int64), np.array([True, False])],
         rtol=1e-6, atol=1e-6),
    case(S + "log_ndtr", "x: torch.special.log_ndtr(x)", [np.array([-8.0, -3.0, -0.5, 0.0, 2.0, 6.0])], rtol=1e-12,
         atol=0),
    # a number on either side takes the tensor's dtype, as torch's scalar promotion
    case(S + "xlog1py", "x, i: (torch.special.xlog1py(x, 1.), torch.special.xlog1py(input=x, other=2.5),"
         " torch.special.xlog1py(1., x), torch.special.xlog1py(0, x), torch.special.xlog1py(2, x.double()),"
         " torch.special.xlog1py(i, 0.5), torch.special.xlog1py(i, x))",
         [np.array([0.0, 1.0, -0.5, 3.0], F32), np.array([0, 1, 2, 3], np.int64)], **TIGHT),
    case([S + "spherical_bessel_j0", S + "scaled_modified_bessel_k0", S + "chebyshev_polynomial_t"],
         "x: (torch.special.spherical_bessel_j0(x=x), torch.special.scaled_modified_bessel_k0(x=x),"
         " torch.special.chebyshev_polynomial_t(x=x * 0.1, n=3))", [np.array([0.5, 1.0, 2.5, 7.0], F32)],
         rtol=1e-5, atol=1e-6),
]

A = RNG.standard_normal((3, 3))
BA = RNG.standard_normal((2, 3, 3)).astype(F32)
B = RNG.standard_normal((2, 3)).astype(F32)
SPD = (A @ A.T + 3 * np.eye(3)).astype(F32)
R = RNG.standard_normal((4, 3)).astype(F32)
H = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
HERM = (H + H.conj().T).astype(np.complex128)
TOL = dict(rtol=1e-4, atol=1e-4)

# torch binds these as `input` (b, other), not the documented A (B): the keyword forms
LINALG_KEYWORDS = [
    case([L + "cholesky", L + "cholesky_ex"], "s: (torch.linalg.cholesky(input=s, upper=True),"
         " torch.linalg.cholesky_ex(input=s)[0])", [SPD], **TOL),
    case([L + "eigh", L + "eigvalsh"], "a: (torch.linalg.eigvalsh(input=a), torch.linalg.eigh(input=a, UPLO='U')[0])",
         [SPD], **TOL),
    # complex Hermitian: real ascending eigenvalues, as torch; eigenvectors compared by modulus (unique up to a
    # phase); MindSpore's complex eigh agrees to ~1e-7 in float64
    case([L + "eigh", L + "eigvalsh"], "a: (torch.linalg.eigvalsh(a), torch.linalg.eigh(a)[0],"
         " torch.linalg.eigh(a)[1].abs())", [HERM], rtol=1e-6, atol=1e-6),
    case(L + "householder_product", "a, t: torch.linalg.householder_product(input=a, tau=t)",
         [R, RNG.standard_normal(3).astype(F32)], **TOL),
    case(L + "matrix_power", "a: torch.linalg.matrix_power(input=a, n=3)", [BA], **TOL),
    case(L + "pinv", "a: (torch.linalg.pinv(input=a), torch.linalg.pinv(rtol=1e-8, atol=1e-10, input=a.double()))",
         [R], **TOL),
    case(L + "matrix_rank", "a: (torch.linalg.matrix_rank(input=a), torch.linalg.matrix_rank(input=a, atol=1.0,"
         " rtol=0.0, hermitian=True))", [BA]),
    # complex matrices: real singular values, the conjugate transpose, a Hermitian lower triangle; slogdet's real
    # logabsdet
    case([L + "pinv", L + "matrix_rank", L + "slogdet"], "h, c: (torch.linalg.pinv(h), torch.linalg.pinv(h,"
         " hermitian=True), torch.linalg.pinv(c[:, :2], rtol=1e-6), torch.linalg.matrix_rank(h, hermitian=True),"
         " torch.linalg.slogdet(h))", [H.astype(np.complex64), HERM], rtol=1e-5, atol=1e-5),
    case([L + "lstsq", L + "tensorinv", L + "tensorsolve"], "a, b: (torch.linalg.lstsq(b=b.T, input=a)[0],"
         " torch.linalg.tensorinv(input=a.reshape(3, 3), ind=1), torch.linalg.tensorsolve(input=a, other=b[0]))",
         [A.astype(F32), B], **TOL),
    case(L + "matrix_norm", "a: (torch.linalg.matrix_norm(input=a), torch.linalg.matrix_norm(input=a, ord='nuc'))",
         [BA], **TOL),
    case([L + "norm", L + "vector_norm"], "a: (torch.linalg.norm(input=a, ord='fro', dim=[1, 2]),"
         " torch.linalg.norm(a, dim=[0, 2]), torch.linalg.vector_norm(a, dim=[0, 1]))", [BA], grad=True, **TOL),
]

LINALG = [
    case(L + "cond", "a: (torch.linalg.cond(a), torch.linalg.cond(input=a, p='fro'), torch.linalg.cond(a, 'nuc'),"
         " torch.linalg.cond(a, float('inf')), torch.linalg.cond(a, -float('inf')), torch.linalg.cond(p=1, input=a),"
         " torch.linalg.cond(a, -1), torch.linalg.cond(a, 2), torch.linalg.cond(a, -2))", [BA], **TOL),
    case(L + "cond", "a: (torch.linalg.cond(a, 'fro'), torch.linalg.cond(a, 1))", [A], rtol=1e-10, atol=0),
    case(L + "multi_dot", "a, v: (lambda ts, vs: (torch.linalg.multi_dot(ts), torch.linalg.multi_dot(vs),"
         " torch.linalg.multi_dot(tuple(ts))))([a[0], a[1], a[0]], [v, a[1], v])", [BA, B[0]], grad=True, **TOL),
    case([L + "solve", L + "solve_ex"], "a, b: (torch.linalg.solve(a, b, left=False), torch.linalg.solve(B=b,"
         " left=False, A=a), torch.linalg.solve_ex(a, b, left=False)[0], torch.linalg.solve(a, b.T, left=True))",
         [A.astype(F32), B], grad=True, **TOL),
    case(L + "solve_triangular", "a, b: (torch.linalg.solve_triangular(input=a, B=b, upper=True, left=False),"
         " torch.linalg.solve_triangular(a, b.T, upper=False), torch.linalg.solve_triangular(a, b, upper=False,"
         " left=False, unitriangular=True))", [SPD, B], grad=True, **TOL),
    case(L + "lu", "a: torch.linalg.lu(a)", [BA], **TOL),
    case(L + "qr", "a: (torch.linalg.qr(a, mode='r'), [t.abs() for t in torch.linalg.qr(A=a, mode='complete')])",
         [R], **TOL),
    # a batch of square and of wide matrices, matrix by matrix; torch's info of the batch's shape
    case([L + "lu_factor", L + "lu_factor_ex"], "a, w: (torch.linalg.lu_factor(a), torch.linalg.lu_factor_ex(w))",
         [BA, RNG.standard_normal((2, 2, 3)).astype(F32)], graph=False, **TOL),
    # a tall matrix: eliminated row by row in PyNative (the record's note; it does not compile)
    case(L + "lu", "a: torch.linalg.lu(A=a)", [R], graph=False, **TOL),
]


def _all_agree(table, graph_every=3):
    failures = run_table(table, graph_every)
    assert not failures, "\n".join(failures)


def test_special_forms():
    _all_agree(SPECIAL)


def test_ndtri_multigammaln():
    _all_agree(NDTRI_MVL)


def test_special_numbers_keywords_and_digits():
    _all_agree(SPECIAL_MORE, graph_every=1)


def test_linalg_forms():
    _all_agree(LINALG)


def test_linalg_keywords():
    _all_agree(LINALG_KEYWORDS)


def test_every_record_of_these_tables_has_a_case():
    assert_every_record_cased("tests/parity/test_special_linalg_forms.py",
                              {"test_special_forms": SPECIAL, "test_ndtri_multigammaln": NDTRI_MVL,
                               "test_linalg_forms": LINALG})


def test_multi_dot_of_a_tensor_raises_as_torch():
    """torch refuses a tensor where the sequence of matrices goes; iterating its rows would compute something."""
    import mindspore as ms
    import pytest

    from tests.parity.harness import load_converted

    mod, _, _ = load_converted("import torch\ndef f(a):\n    return torch.linalg.multi_dot(a)\n")
    with pytest.raises(TypeError):
        mod.f(ms.Tensor(BA))
