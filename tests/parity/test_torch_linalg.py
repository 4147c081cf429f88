"""Parity of torch.linalg (msmigrate/mappings/torch_linalg.py): values in PyNative and ms.jit, gradients where
MindSpore differentiates the op; factors unique only up to sign (svd, qr, eigh) are compared through their
reconstruction and absolute values. One converted snippet for all cases."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import assert_every_record_cased, case, run_table

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 4)).astype(np.float32)
BA = RNG.standard_normal((2, 4, 4)).astype(np.float32)
B = RNG.standard_normal((4, 2)).astype(np.float32)
b = RNG.standard_normal(4).astype(np.float32)
R = RNG.standard_normal((5, 3)).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
BSPD = (BA @ BA.swapaxes(-1, -2) + 4 * np.eye(4)).astype(np.float32)
V3 = RNG.standard_normal((4, 3)).astype(np.float32)
W3 = RNG.standard_normal((4, 3)).astype(np.float32)
RANK2 = (R[:, :2] @ RNG.standard_normal((2, 3))).astype(np.float32)
TOL = dict(rtol=1e-4, atol=1e-4)
L = "torch.linalg."

LINALG = [
    case(L + "inv", "a: torch.linalg.inv(a)", [A], grad=True, **TOL),
    case(L + "inv", "a: torch.linalg.inv(A=a)", [BA], **TOL),
    case([L + "inv_ex", L + "cholesky_ex"], "a, s: (torch.linalg.inv_ex(a), torch.linalg.cholesky_ex(s),"
         " torch.linalg.cholesky_ex(s, upper=True))", [BA, BSPD], **TOL),
    case(L + "det", "a: (torch.linalg.det(a), torch.linalg.det(a * 2))", [BA], grad=True, **TOL),
    case(L + "slogdet", "a: torch.linalg.slogdet(a)", [A], **TOL),
    case(L + "slogdet", "a: torch.linalg.slogdet(a)[1]", [BSPD], grad=True, **TOL),
    case(L + "cholesky", "a: (torch.linalg.cholesky(a), torch.linalg.cholesky(a, upper=True))", [BSPD], **TOL),
    case(L + "cross", "x, y: (torch.linalg.cross(x, y), torch.linalg.cross(x[:3].T, y[:3].T, dim=0))", [V3, W3],
         grad=True),
    case(L + "cross", "x, y: torch.linalg.cross(x[:1], y)", [V3, W3], grad=True),
    case(L + "diagonal", "a: (torch.linalg.diagonal(a), torch.linalg.diagonal(a, offset=1),"
         " torch.linalg.diagonal(a, dim1=0, dim2=2))", [BA], grad=True),
    case(L + "householder_product", "a, t: torch.linalg.householder_product(a, t)",
         [R, RNG.standard_normal(3).astype(np.float32)], **TOL),
    case(L + "matmul", "a, b: torch.linalg.matmul(a, b)", [BA, B], grad=True, **TOL),
    case(L + "matrix_power", "a: (torch.linalg.matrix_power(a, 3), torch.linalg.matrix_power(a, 0),"
         " torch.linalg.matrix_power(a, -2))", [A], rtol=1e-3, atol=1e-3),
    case(L + "pinv", "a: (torch.linalg.pinv(a), torch.linalg.pinv(a.T))", [R], **TOL),
    case(L + "qr", "a: [t.abs() for t in torch.linalg.qr(a)] + [torch.matmul(*torch.linalg.qr(a))]", [R], **TOL),
    case(L + "qr", "a: [t.abs() for t in torch.linalg.qr(a, mode='complete')]", [R], **TOL),
    case(L + "qr", "a: [t.abs() for t in torch.linalg.qr(a, 'reduced')]", [BA], **TOL),
    case(L + "solve", "a, b: torch.linalg.solve(a, b)", [A, B], grad=True, **TOL),
    case(L + "solve", "a, b: (torch.linalg.solve(a, b), torch.linalg.solve(a, b, left=True))", [A, b], **TOL),
    case(L + "solve", "a, b: torch.linalg.solve(a, b)", [BA, B[None].repeat(2, 0)], **TOL),
    case(L + "solve_triangular", "a, b: (torch.linalg.solve_triangular(a, b, upper=False),"
         " torch.linalg.solve_triangular(a, b, upper=True))", [SPD, B], **TOL),
    # full U: the columns past the rank span the null space in no unique basis, so its shape and the first k
    case(L + "svd", "a: (lambda u, s, vh: (u[:, :3].abs(), s, vh.abs(), torch.tensor(u.shape)))(*torch.linalg.svd(a))",
         [R], **TOL),
    case(L + "svd", "a: [t.abs() for t in torch.linalg.svd(a, full_matrices=False)]", [R], **TOL),
    case(L + "svd", "a: (lambda u, s, vh: u @ torch.diag(s) @ vh)(*torch.linalg.svd(a, False))", [R], **TOL),
    case(L + "svdvals", "a: torch.linalg.svdvals(a)", [BA], grad=True, **TOL),
    case(L + "cond", "a: (torch.linalg.cond(a), torch.linalg.cond(a, 2))", [BSPD], rtol=1e-3, atol=1e-3),
    case(L + "matrix_rank", "a, r: (torch.linalg.matrix_rank(a), torch.linalg.matrix_rank(r),"
         " torch.linalg.matrix_rank(a.T))", [R, RANK2]),
    case(L + "eigvalsh", "a: (torch.linalg.eigvalsh(a), torch.linalg.eigvalsh(a, UPLO='U'))", [A], **TOL),
    case(L + "eigvalsh", "a: torch.linalg.eigvalsh(a)", [SPD], **TOL),
    case(L + "eigh", "a: (torch.linalg.eigh(a)[0], torch.linalg.eigh(a)[1].abs(), torch.linalg.eigh(a, 'U')[0])",
         [A], **TOL),
    case(L + "eigh", "a: (lambda w, v: v @ torch.diag(w) @ v.T)(*torch.linalg.eigh(a))", [SPD], **TOL),
    case(L + "lu_factor", "a: torch.linalg.lu_factor(a)", [A], **TOL),
    case([L + "lu_factor", L + "lu_solve"], "a, b: (lambda lu, p: (torch.linalg.lu_solve(lu, p, b),"
         " torch.linalg.lu_solve(lu, p, B=b, left=True)))(*torch.linalg.lu_factor(a))", [A, B], graph=False, **TOL),
    case(L + "lu", "a: torch.linalg.lu(a)", [A], **TOL),
    case(L + "lstsq", "a, b: (torch.linalg.lstsq(a, b)[0], torch.linalg.lstsq(a, b, driver='gelsy')[2])",
         [R, RNG.standard_normal((5, 2)).astype(np.float32)], **TOL),
    case([L + "tensorinv", L + "tensorsolve"], "a, b: (torch.linalg.tensorinv(a.reshape(4, 2, 2), ind=1),"
         " torch.linalg.tensorinv(a.reshape(2, 2, 2, 2)), torch.linalg.tensorsolve(a.reshape(2, 2, 4), b.reshape(2, 2)))",
         [A, b], **TOL),
    case(L + "multi_dot", "a, b, v: (torch.linalg.multi_dot([a, a, b]), torch.linalg.multi_dot((v, a, a, v)))",
         [A, B, b], grad=True, **TOL),
    case(L + "vander", "x: (torch.linalg.vander(x), torch.linalg.vander(x, N=3))", [V3[:, 0]], grad=True),
    case(L + "solve_ex", "a, b: (torch.linalg.solve_ex(a, b), torch.linalg.solve_ex(a, b[..., 0], check_errors=True))",
         [BA, B[None].repeat(2, 0)], **TOL),
    case(L + "lu_factor_ex", "a: torch.linalg.lu_factor_ex(a)", [A], graph=False, **TOL),
    # PyNative only here: compiling its squaring loop takes seconds (ms.jit runs it too)
    case(L + "matrix_exp", "a: torch.linalg.matrix_exp(a)", [A], grad=True, graph=False, **TOL),
    case(L + "matrix_exp", "b, d: (torch.linalg.matrix_exp(b * 4), torch.linalg.matrix_exp(input=d))",
         [BA, RNG.standard_normal((3, 3))], graph=False, rtol=1e-5, atol=1e-4),
    # the eigen pairs come in another order (the records' DIFFERENCE): compare sorted parts and per-pair residuals
    case(L + "eigvals", "a: (lambda w: (torch.real(w), torch.imag(w).abs()))(torch.linalg.eigvals(a))", [BA], post="sorted", **TOL),
    case(L + "eig", "a: (lambda w, v: (lambda r: (torch.real(r), torch.imag(r), (torch.real(v) ** 2 + torch.imag(v) ** 2).sum(-2),"
         " torch.real(w)))(a.to(v.dtype) @ v - v * w.unsqueeze(-2)))(*torch.linalg.eig(input=a))", [A], post="sorted", **TOL),
    case(L + "vecdot", "x, y: (torch.linalg.vecdot(x, y), torch.linalg.vecdot(x, y, dim=0))", [V3, W3], grad=True),
]


def test_linalg_values():
    failures = run_table(LINALG)
    assert not failures, "\n".join(failures)


def test_linalg_untranslatable_forms_are_todo():
    from msmigrate.registry import TODO
    from tests.parity.harness import convert_snippet

    code, sites = convert_snippet(
        "import torch\ndef f(a, b):\n    z = torch.linalg.ldl_factor(a)\n"
        "    return torch.linalg.multi_dot(*a), z, torch.linalg.inv(a, out=b), torch.linalg.cholesky(A=a)\n")
    st = {s.api: s.status for s in sites}
    for api in ("ldl_factor", "multi_dot", "inv", "cholesky"):   # cholesky: torch binds `input`, not `A`
        assert st[L + api] == TODO, (api, code)


def test_every_linalg_record_has_a_case():
    raising = [case(L + "LinAlgError", "", [])]   # test_singular_and_indefinite_inputs_raise catches it
    assert_every_record_cased("tests/parity/test_torch_linalg.py", {"test_linalg_values": LINALG,
                                                                     "test_singular_and_indefinite_inputs_raise": raising})


def test_singular_and_indefinite_inputs_raise():
    """torch raises for a singular inverse and a non positive definite Cholesky; the converted forms must raise
    too (ops.inverse alone would return finite wrong values), the *_ex forms included (their stated difference)."""
    import mindspore as ms
    import pytest
    import torch

    from tests.parity.harness import load_converted, load_torch

    src = ("import torch\ndef inv(a):\n    return torch.linalg.inv(a)\ndef inverse(a):\n    return torch.inverse(a)\n"
           "def inv_ex(a):\n    return torch.linalg.inv_ex(a)[0]\ndef chol_ex(a):\n    return torch.linalg.cholesky_ex(a)[0]\n")
    mod, _, _ = load_converted(src)
    singular = ms.Tensor(np.array([[1.0, 2.0], [2.0, 4.0]], np.float32))
    for fn in (mod.inv, mod.inverse, mod.inv_ex):
        with pytest.raises((RuntimeError, ValueError)):
            fn(singular).asnumpy()
    with pytest.raises((RuntimeError, ValueError)):
        mod.chol_ex(ms.Tensor(np.array([[1.0, 2.0], [2.0, 1.0]], np.float32))).asnumpy()
    # torch.linalg.LinAlgError catches what the converted forms raise (once the value is read, the record's
    # DIFFERENCE); raising it gives a RuntimeError it catches
    src = ("import torch\ndef caught(a):\n    try:\n        return float(torch.linalg.inv(a).sum())\n"
           "    except torch.linalg.LinAlgError:\n        return 'singular'\n"
           "def caught_chol(a):\n    try:\n        return float(torch.linalg.cholesky(a).sum())\n"
           "    except torch.linalg.LinAlgError:\n        return 'not positive definite'\n"
           "def raised():\n    try:\n        raise torch.linalg.LinAlgError('singular')\n"
           "    except torch.linalg.LinAlgError as e:\n        return isinstance(e, (RuntimeError, torch.linalg.LinAlgError))\n")
    mod, _, sites = load_converted(src)
    t = load_torch(src)
    indefinite = np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)
    for arr in (singular.asnumpy(), indefinite, SPD):
        for fn in ("caught", "caught_chol"):
            got, want = getattr(mod, fn)(ms.Tensor(arr)), t[fn](torch.from_numpy(arr))
            assert got == want if isinstance(want, str) else abs(got - want) < 1e-3 * abs(want), (fn, arr, got, want)
    assert mod.raised() is True is t["raised"]()
    assert {s.api for s in sites} >= {"torch.linalg.LinAlgError"}


def test_eigh_gradient_difference_is_real():
    """The eigh records state that MindSpore's gradient differs from torch's for a general loss: check it still does
    (if MindSpore changes, the records can drop the DIFFERENCE) and that the eigenvalue sum agrees."""
    import mindspore as ms
    import torch

    from msmigrate.registry import DIFFERENCE, lookup
    from tests.parity.harness import load_converted

    src = "import torch\ndef f(a, w):\n    return (torch.linalg.eigvalsh(a) * w).sum()\n"
    mod, _, _ = load_converted(src)
    w = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    t = torch.from_numpy(SPD).requires_grad_(True)
    (torch.linalg.eigvalsh(t) * torch.from_numpy(w)).sum().backward()
    g = ms.grad(mod.f)(ms.Tensor(SPD), ms.Tensor(w)).asnumpy()
    assert not np.allclose(g, t.grad.numpy(), atol=1e-3)
    ones = ms.grad(mod.f)(ms.Tensor(SPD), ms.Tensor(np.ones(4, np.float32))).asnumpy()
    np.testing.assert_allclose(ones, np.eye(4), atol=1e-4)
    assert lookup("torch.linalg.eigh").status == lookup("torch.linalg.eigvalsh").status == DIFFERENCE
