"""`torch.linalg.*` (and the matching linear algebra of the torch namespace) -> `mindspore.ops`.

Proven by tests/parity/test_torch_linalg.py (values, gradients where MindSpore differentiates the op; factors
defined only up to signs are compared through their reconstruction and absolute values). Facts (MindSpore 2.10,
CPU, checked there):
  * ops.svd returns (s, u, v) with v not transposed and defaults to full_matrices=False (torch: U, S, Vh; True).
  * ops.matrix_solve needs a matrix right-hand side: a vector b is solved as b[..., None].
  * ops.eig (general, complex results) serves eigh/eigvalsh for symmetric input: real parts, sorted ascending.
  * mint.linalg.inv / mint.linalg.qr and ops.matrix_exp have no CPU kernel; ops.inverse / ops.qr do.
"""
from __future__ import annotations

from ..registry import DIFFERENCE, mapping
from .compose import composed

T = "tests/parity/test_torch_linalg.py"
T_VAL = f"{T}::test_linalg_values"
L = "torch.linalg."

composed(L + "inv", "ops.inverse({A})", ("A",), test=T_VAL)
composed(L + "det", "ops.det({A})", ("A",), test=T_VAL)
composed(L + "slogdet", "ops.slogdet({A})", ("A",), test=T_VAL,
         note="returns a plain (sign, logabsdet) tuple: unpack it or index [0]/[1] (no .sign/.logabsdet attributes)")
composed(L + "cholesky", "ops.cholesky({A}, {upper})", ("A", "upper"), defaults={"upper": "False"}, test=T_VAL,
         status=DIFFERENCE, note="values as torch; no gradient on CPU (CholeskyGrad has no CPU kernel: "
                                 "differentiating it raises)")
composed(L + "cross", "ops.cross({input}, {other}, {dim})", ("input", "other", "dim"), defaults={"dim": "-1"},
         test=T_VAL)
composed(L + "diagonal", "ops.diagonal({A}, {offset}, {dim1}, {dim2})", ("A", "offset", "dim1", "dim2"),
         defaults={"offset": "0", "dim1": "-2", "dim2": "-1"}, test=T_VAL)
composed(L + "householder_product", "ops.orgqr({A}, {tau})", ("A", "tau"), test=T_VAL)
composed(L + "matmul", "ops.matmul({input}, {other})", ("input", "other"), test=T_VAL)
composed(L + "matrix_power", "ops.matrix_power({A}, {n})", ("A", "n"), test=T_VAL)
composed(L + "pinv", "ops.pinv({A})", ("A", "atol", "rtol", "hermitian"),
         defaults={"atol": "None", "rtol": "None", "hermitian": "False"},
         only={"atol": ("None",), "rtol": ("None",), "hermitian": ("False",)},
         note="default tolerances only (atol=/rtol=/hermitian=True are TODO)", test=T_VAL)
composed(L + "qr", "ops.qr({A}, {mode})", ("A", "mode"), defaults={"mode": "'reduced'"}, test=T_VAL,
         note="returns a plain (Q, R) tuple (no .Q/.R attributes); mode 'reduced'/'complete' as in torch")
composed(L + "solve", "(ops.matrix_solve({A}, {B}[..., None])[..., 0] if {B}.ndim == 1 or {B}.shape == "
         "{A}.shape[:-1] else ops.matrix_solve({A}, {B}))", ("A", "B", "left"), defaults={"left": "True"},
         only={"left": ("True",)}, note="a vector (or batch of vectors) B is solved as a one-column matrix, as torch "
         "decides; left=False is a TODO", test=T_VAL)
composed(L + "solve_triangular", "ops.matrix_solve(ops.triu({A}) if {upper} else ops.tril({A}), {B})",
         ("A", "B", "upper", "left", "unitriangular"), defaults={"left": "True", "unitriangular": "False"},
         only={"left": ("True",), "unitriangular": ("False",)},
         note="a general solve of the triangle torch reads (the other triangle is ignored, as in torch); "
              "left=False / unitriangular=True are TODO", test=T_VAL)
composed(L + "svd", "(lambda _ms_s, _ms_u, _ms_v: (_ms_u, _ms_s, _ms_v.swapaxes(-1, -2)))(*ops.svd({A}, "
         "{full_matrices}))", ("A", "full_matrices", "driver"), defaults={"full_matrices": "True", "driver": "None"},
         only={"driver": ("None",)}, target="mindspore.ops.svd",
         note="(U, S, Vh) as torch returns them (ops.svd gives (S, U, V)); full_matrices passed explicitly (torch "
              "defaults to True, ops.svd to False); singular vectors are unique only up to sign, as in torch; a "
              "plain tuple (no .U/.S/.Vh attributes)", test=T_VAL)
composed(L + "svdvals", "ops.svd({A}, compute_uv=False)", ("A", "driver"), defaults={"driver": "None"},
         only={"driver": ("None",)}, test=T_VAL)
composed(L + "cond", "(lambda _ms_s: _ms_s[..., 0] / _ms_s[..., -1])(ops.svd({A}, compute_uv=False))",
         ("A", "p"), defaults={"p": "None"}, only={"p": ("None", "2")}, target="mindspore.ops.svd",
         note="the 2-norm condition number from the singular values; other p are TODO", test=T_VAL)
composed(L + "matrix_rank", "(lambda _ms_s: (_ms_s > _ms_s.max(axis=-1, keepdims=True) * max({A}.shape[-2:]) * "
         "1.1920928955078125e-07).sum(-1).astype(ms.int64))(ops.svd({A}, compute_uv=False))",
         ("A", "atol", "rtol", "hermitian", "tol"),
         defaults={"atol": "None", "rtol": "None", "hermitian": "False", "tol": "None"},
         only={"atol": ("None",), "rtol": ("None",), "hermitian": ("False",), "tol": ("None",)},
         target="mindspore.ops.svd", note="singular values above max(m, n) * eps(float32) * the largest, torch's "
         "default tolerance for float32 input (float64 input uses float32's eps here); tolerances given are TODO",
         test=T_VAL)
composed(L + "eigvalsh", "ops.sort(ops.real(ops.eig({A})[0]))[0]", ("A", "UPLO"), defaults={"UPLO": "'L'"},
         target="mindspore.ops.eig", status=DIFFERENCE,
         note="ops.eig of the whole matrix, real parts sorted ascending: equal to torch for a symmetric matrix "
              "(torch reads only the UPLO triangle, so an unsymmetric input differs); no gradient", test=T_VAL)
composed(L + "eigh", "(lambda _ms_w, _ms_v: (ops.sort(ops.real(_ms_w))[0], ops.gather_elements(ops.real(_ms_v), -1, "
         "ops.broadcast_to(ops.argsort(ops.real(_ms_w)).expand_dims(-2), _ms_v.shape))))(*ops.eig({A}))",
         ("A", "UPLO"), defaults={"UPLO": "'L'"}, target="mindspore.ops.eig", status=DIFFERENCE,
         note="ops.eig of the whole matrix, real parts, sorted by ascending eigenvalue: equal to torch for a "
              "symmetric matrix with distinct eigenvalues (eigenvectors up to sign, as in torch); no gradient; a "
              "plain (eigenvalues, eigenvectors) tuple", test=T_VAL)
composed(L + "vander", "ops.flip(ops.vander({x}, {N}), (-1,))", ("x", "N"), defaults={"N": "None"},
         note="increasing powers, as torch.linalg.vander (ops.vander, like torch.vander, decreases)", test=T_VAL)
composed(L + "vecdot", "ops.vecdot({x}, {y}, axis={dim})", ("x", "y", "dim"), defaults={"dim": "-1"}, test=T_VAL)

_NO = "no MindSpore op with torch's result on CPU: "
# torch.linalg.matrix_exp stays with the census rule (a TODO): ops.matrix_exp has no CPU kernel in MindSpore 2.10
for _name in ("cholesky_ex", "inv_ex", "solve_ex", "lu_factor_ex", "ldl_factor_ex"):
    mapping(L + _name, None, note=_NO + "the *_ex forms return an info tensor instead of raising; use the plain "
            "function (cholesky, inv, solve) and let it raise")
for _name in ("lu", "lu_factor", "lu_solve", "ldl_factor", "ldl_solve"):
    mapping(L + _name, None, note=_NO + "LU/LDL factor layouts differ; solve the system with torch.linalg.solve's "
            "conversion (ops.matrix_solve) instead")
mapping(L + "lstsq", None, note=_NO + "torch returns (solution, residuals, rank, singular_values) with attribute "
        "access: write ops.lstsq(A, B) for the solution (MindSpore's least-squares solve) and check it")
mapping(L + "eig", None, note=_NO + "ops.eig returns complex eigen pairs whose order/normalisation is not "
        "checked against torch: use ops.eig and verify")
mapping(L + "eigvals", None, note=_NO + "ops.eig(A)[0] (order not checked against torch)")
mapping(L + "multi_dot", None, note="write the chain with ops.matmul (a @ b @ c)")
for _name in ("tensorinv", "tensorsolve"):
    mapping(L + _name, None, note="reshape to a matrix and use ops.inverse / ops.matrix_solve")
