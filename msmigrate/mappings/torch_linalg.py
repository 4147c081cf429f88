"""`torch.linalg.*` (and the matching linear algebra of the torch namespace) -> `mindspore.ops`.

Proven by tests/parity/test_torch_linalg.py (values, gradients where MindSpore differentiates the op; factors
defined only up to signs are compared through their reconstruction and absolute values). Facts (MindSpore 2.10,
CPU, checked there):
  * ops.svd returns (s, u, v) with v not transposed and defaults to full_matrices=False (torch: U, S, Vh; True).
  * ops.matrix_solve needs a matrix right-hand side: a vector b is solved as b[..., None].
  * mindspore.scipy.linalg (eigh with gradients, lu_factor with 0-based pivots, lu_solve, lu, lstsq) is 2-D
    only and not loaded by `import mindspore`: the emitted helper imports it (compat part scipy_linalg).
  * mint.linalg.inv / mint.linalg.qr and ops.matrix_exp have no CPU kernel; ops.inverse / ops.qr do.
"""
from __future__ import annotations

import libcst as cst

from ..callsite import UnsupportedSite, code_of
from ..records import DIFFERENCE, mapping, rule
from .compose import composed

T = "tests/parity/test_torch_linalg.py"
T_VAL = f"{T}::test_linalg_values"
# the records whose shapes or arguments go through templates/compat_parts/linalg_shapes.py
T_SHAPES = "tests/parity/test_linalg_shapes.py::test_linalg_shapes"
# the records whose forms the peer per-API suite exercised (keyword names, left=False, cond's p, batches)
T_FORMS = "tests/parity/test_special_linalg_forms.py::test_linalg_forms"
L = "torch.linalg."

# ops.inverse returns finite garbage for a singular matrix where torch raises: solve A X = I instead (raises too)
INVERSE = "_ms_compat.linalg_inv({A})"
_INV_NOTE = ("A X = I solved with ops.matrix_solve, which raises for a singular matrix as torch does (ops.inverse "
             "returns finite wrong values there); an empty matrix is returned as is")
composed(L + "inv", INVERSE, ("A",), target="mindspore.ops.matrix_solve", note=_INV_NOTE, test=T_VAL)
_EX = ("with info always 0: MindSpore raises where torch would return info > 0 (as torch does with "
       "check_errors=True); a plain tuple")
composed(L + "inv_ex", "(" + INVERSE + ", ops.zeros({A}.shape[:-2], ms.int32))", ("A", "check_errors"),
         defaults={"check_errors": "False"}, target="mindspore.ops.matrix_solve", status=DIFFERENCE,
         note="(inverse, info) " + _EX, test=T_VAL)
composed(L + "cholesky_ex", "(_ms_compat.linalg_cholesky({input}, {upper}), ops.zeros({input}.shape[:-2], ms.int32))",
         ("input", "upper", "check_errors"), defaults={"upper": "False", "check_errors": "False"},
         target="mindspore.ops.cholesky", status=DIFFERENCE, note="(L, info) " + _EX + "; no gradient on CPU",
         test=T_VAL)
composed(L + "det", "_ms_compat.linalg_det({A})", ("A",), target="mindspore.ops.det", test=T_SHAPES,
         note="ops.det; 0x0 and 1x1 matrices (which ops.det refuses) as torch: 1 and the entry")
composed(L + "slogdet", "_ms_compat.linalg_slogdet({A})", ("A",), target="mindspore.ops.slogdet", test=T_SHAPES,
         note="returns a plain (sign, logabsdet) tuple: unpack it or index [0]/[1] (no .sign/.logabsdet attributes); "
              "0x0 and 1x1 matrices (which ops.slogdet refuses) as torch")
composed(L + "cholesky", "_ms_compat.linalg_cholesky({input}, {upper})", ("input", "upper"), defaults={"upper": "False"},
         test=T_SHAPES, target="mindspore.ops.cholesky", status=DIFFERENCE,
         note="values as torch (an empty matrix too); no gradient on CPU (CholeskyGrad has no CPU kernel: "
              "differentiating it raises)")
# ops.cross does not broadcast (shapes (1, 3) and (5, 3) gave zeros or unrelated values): both
# inputs are broadcast to their common shape first (found by adding zero tensors, which also works in GRAPH mode)
BROADCAST_PAIR = ("(lambda _ms_s: ops.{op}(ops.broadcast_to({{input}}, _ms_s), ops.broadcast_to({{other}}, _ms_s){rest}))"
                  "((ops.zeros_like({{input}}) + ops.zeros_like({{other}})).shape)")
composed(L + "cross", BROADCAST_PAIR.format(op="cross", rest=", {dim}"), ("input", "other", "dim"),
         defaults={"dim": "-1"}, target="mindspore.ops.cross",
         note="the inputs are broadcast first (ops.cross does not broadcast)", test=T_VAL)
composed(L + "diagonal", "ops.diagonal({A}, {offset}, {dim1}, {dim2})", ("A", "offset", "dim1", "dim2"),
         defaults={"offset": "0", "dim1": "-2", "dim2": "-1"}, test=T_VAL)
composed(L + "householder_product", "ops.orgqr({input}, {tau})", ("input", "tau"), test=T_VAL)
composed(L + "matmul", "ops.matmul({input}, {other})", ("input", "other"), test=T_VAL)
composed(L + "matrix_power", "ops.matrix_power({input}, {n})", ("input", "n"), test=T_VAL)
# torch's positional form is pinv(A, rcond, hermitian) (rcond: rtol); atol/rtol are keyword-only
composed(L + "pinv", "_ms_compat.linalg_pinv({input}, {atol}, {rtol}, {hermitian}, {rcond})",
         ("input", "rcond", "hermitian", "atol", "rtol"),
         defaults={"atol": "None", "rtol": "None", "hermitian": "False", "rcond": "None"}, target="mindspore.ops.svd",
         test=T_SHAPES,
         note="V diag(1/s) U^T over the singular values above torch's tolerance max(atol, rtol * largest) (rtol "
              "defaulting to eps * max(m, n), or 0 when only atol is given); hermitian=True reads the lower triangle, "
              "as torch; an empty matrix gives an empty result; complex matrices as torch (the conjugate transpose, "
              "the Hermitian lower triangle)")
composed(L + "qr", "_ms_compat.linalg_qr({A}, {mode})", ("A", "mode"), absent={"mode": "ops.qr({A}, 'reduced')"},
         target="mindspore.ops.qr", test=T_FORMS,
         note="returns a plain (Q, R) tuple (no .Q/.R attributes); mode 'reduced'/'complete' as in torch, 'r' an empty "
              "Q and R")
_SOLVE = ("(ops.matrix_solve({A}, {B}[..., None])[..., 0] if {B}.ndim == 1 or {B}.shape == {A}.shape[:-1] else "
          "ops.matrix_solve({A}, {B}))")
composed(L + "solve", "_ms_compat.linalg_solve({A}, {B}, {left})", ("A", "B", "left"), absent={"left": _SOLVE},
         target="mindspore.ops.matrix_solve", test=T_FORMS,
         note="a vector (or batch of vectors) B is solved as a one-column matrix, as torch decides; left=False "
              "solves the transposed system A^T X^T = B^T")
composed(L + "solve_triangular", "_ms_compat.linalg_solve_triangular({input}, {B}, {upper}, {left}, {unitriangular})",
         ("input", "B", "upper", "left", "unitriangular"), defaults={"unitriangular": "False"},
         absent={"left": "ops.matrix_solve(_ms_compat.linalg_triangle({input}, {upper}, {unitriangular}), {B})"},
         target="mindspore.ops.matrix_solve", test=T_FORMS,
         note="a general solve of the triangle torch reads (the other triangle is ignored, as in torch; a unit "
              "diagonal with unitriangular=True); left=False solves the transposed system")
composed(L + "svd", "_ms_compat.linalg_svd({A}, {full_matrices})", ("A", "full_matrices", "driver"),
         defaults={"full_matrices": "True", "driver": "None"}, only={"driver": ("None",)}, target="mindspore.ops.svd",
         note="(U, S, Vh) as torch returns them (ops.svd gives (S, U, V)); full_matrices passed explicitly (torch "
              "defaults to True, ops.svd to False); singular vectors are unique only up to sign, as in torch; a "
              "plain tuple (no .U/.S/.Vh attributes); an empty matrix gives torch's empty/identity factors",
         test=T_SHAPES)
composed(L + "svdvals", "_ms_compat.linalg_svdvals({A})", ("A", "driver"), defaults={"driver": "None"},
         only={"driver": ("None",)}, target="mindspore.ops.svd", test=T_SHAPES,
         note="ops.svd(compute_uv=False); an empty matrix has no singular values, as in torch")
composed(L + "cond", "_ms_compat.linalg_cond({input}, {p})", ("input", "p"), target="mindspore.ops.svd",
         absent={"p": "(lambda _ms_s: _ms_s[..., 0] / _ms_s[..., -1])(ops.svd({input}, compute_uv=False))"},
         status=DIFFERENCE, test=T_FORMS,
         note="the 2-norm condition number from the singular values (p=-2: their inverse ratio); p='fro', 'nuc', "
              "inf, -inf, 1, -1: ops.matrix_norm of A times that of its inverse, where a singular A raises (torch "
              "returns inf)")
# torch's positional form is matrix_rank(A, tol, hermitian); atol/rtol are keyword-only
composed(L + "matrix_rank", "_ms_compat.linalg_matrix_rank({input}, {atol}, {rtol}, {hermitian}, {tol})",
         ("input", "tol", "hermitian", "atol", "rtol"),
         defaults={"atol": "None", "rtol": "None", "hermitian": "False", "tol": "None"},
         target="mindspore.ops.svd", note="the singular values above torch's tolerance max(atol, rtol * largest) "
         "(rtol defaulting to eps * max(m, n), or 0 when only atol is given; tol= is atol with rtol 0); "
         "hermitian=True reads the lower triangle, as torch; int64", test=T_SHAPES)
_ONE_MATRIX = "one matrix (mindspore.scipy.linalg is 2-D only: a batch raises ValueError)"
_EIGH_GRAD = ("the gradient with respect to A differs from torch's: MindSpore's flows only into the triangle it reads, "
              "torch's is symmetric (the same for the eigenvalues' sum, not for general losses)")
_BATCH_LOOP = "a batch runs matrix by matrix (mindspore.scipy.linalg.eigh is 2-D only)"
composed(L + "eigvalsh", "_ms_compat.linalg_eigh({input}, lower={UPLO} != 'U', eigvals_only=True)", ("input", "UPLO"),
         defaults={"UPLO": "'L'"}, target="mindspore.scipy.linalg.eigh", status=DIFFERENCE,
         note="ascending eigenvalues from the UPLO triangle, as torch; " + _EIGH_GRAD + "; " + _BATCH_LOOP,
         test=T_SHAPES)
composed(L + "eigh", "_ms_compat.linalg_eigh({input}, lower={UPLO} != 'U')", ("input", "UPLO"), defaults={"UPLO": "'L'"},
         target="mindspore.scipy.linalg.eigh", status=DIFFERENCE,
         note="(eigenvalues ascending, eigenvectors) from the UPLO triangle; " + _EIGH_GRAD + "; eigenvectors are "
              "unique only up to sign, as in torch; a plain tuple (no .eigenvalues/.eigenvectors); " + _BATCH_LOOP,
         test=T_SHAPES)
_RECT = "a rectangular matrix by partial-pivot elimination (mindspore.scipy.linalg.lu_factor is square only)"
composed(L + "lu_factor", "_ms_compat.linalg_lu_factor({A})", ("A", "pivot"),
         defaults={"pivot": "True"}, only={"pivot": ("True",)}, target="mindspore.scipy.linalg.lu_factor",
         note="(LU, pivots) with torch's 1-based int32 pivots (scipy's are 0-based); a plain tuple; " + _RECT + "; " +
              "a batch runs matrix by matrix", test=T_SHAPES)
composed(L + "lu_solve", "_ms_compat.linalg_lu_solve({LU}, {pivots}, {B}, {left}, {adjoint})",
         ("LU", "pivots", "B", "left", "adjoint"), defaults={"left": "True", "adjoint": "False"},
         target="mindspore.scipy.linalg.lu_solve",
         note="torch's 1-based pivots made 0-based; adjoint=True (real matrices: the transpose) and left=False "
              "solve with the factored matrix rebuilt from LU and the pivots; PyNative only (it does not compile in GRAPH "
              "mode: TensorScatterUpdate rejects its indices there); " + _ONE_MATRIX, test=T_SHAPES)
composed(L + "lu", "_ms_compat.linalg_lu({A})", ("A", "pivot"), defaults={"pivot": "True"},
         only={"pivot": ("True",)}, target="mindspore.scipy.linalg.lu", test=T_FORMS,
         note="(P, L, U) with A = P @ L @ U, as torch; a plain tuple; a batch runs matrix by matrix "
              "(mindspore.scipy.linalg.lu is 2-D only); a tall matrix (more rows than columns, which it refuses) by "
              "partial-pivot elimination, PyNative only")
composed(L + "lstsq", "_ms_compat.linalg_lstsq({input}, {b}, {rcond}, {driver})", ("input", "b", "rcond", "driver"),
         defaults={"rcond": "None", "driver": "None"}, target="mindspore.scipy.linalg.lstsq",
         note="(solution, residuals, rank, singular_values) filled as torch's driver fills them (gelsy, the CPU "
              "default: no residuals or singular values; gels: residuals when m > n; gelsd/gelss: all four), but a "
              "plain tuple: write [0] for .solution (attribute access raises AttributeError); " + _ONE_MATRIX,
         test=T_SHAPES)
composed(L + "tensorinv", "(lambda _ms_a: ops.reshape(ops.inverse(ops.flatten(ops.flatten(_ms_a, start_dim={ind}), "
         "start_dim=0, end_dim={ind} - 1)), _ms_a.shape[{ind}:] + _ms_a.shape[:{ind}]))({input})", ("input", "ind"),
         defaults={"ind": "2"}, target="mindspore.ops.inverse",
         note="the inverse of A seen as a (prod(shape[:ind]), prod(shape[ind:])) matrix, reshaped back", test=T_VAL)
_TENSORSOLVE = ("(lambda _ms_a, _ms_b: ops.reshape(ops.matrix_solve(ops.reshape(_ms_a, (_ms_b.size, -1)), "
                "ops.reshape(_ms_b, (-1, 1))), _ms_a.shape[_ms_b.ndim:]))({input}, {other})")
composed(L + "tensorsolve", _TENSORSOLVE.replace("({input}, {other})", "(ops.movedim({input}, tuple({dims}), tuple(range(-len({dims}), "
         "0))), {other})"), ("input", "other", "dims"), defaults={"dims": "None"}, absent={"dims": _TENSORSOLVE},
         target="mindspore.ops.matrix_solve", note="A seen as a (B.numel(), rest) matrix; dims= moves those axes "
         "of A last first, as torch", test=T_SHAPES)
# ops.vander takes one 1-D vector: a batch (or a 0-d x) is flattened and its rows reshaped back, as torch's
composed(L + "vander", "ops.flip(ops.vander({x}.reshape(-1), {x}.shape[-1] if {N} is None else {N}), (-1,))"
         ".reshape(({x}.shape or (1,)) + (-1,))", ("x", "N"), defaults={"N": "None"}, target="mindspore.ops.vander",
         note="increasing powers, as torch.linalg.vander (ops.vander, like torch.vander, decreases); batches of "
              "vectors as torch", test=T_SHAPES)
# ops.vecdot of empty vectors returns uninitialised memory where torch returns 0
composed(L + "vecdot", "_ms_compat.linalg_vecdot({x}, {y}, {dim})", ("x", "y", "dim"), defaults={"dim": "-1"},
         target="mindspore.ops.sum",
         note="the sum of the broadcast products along dim (0 for empty vectors, as torch); real tensors (complex x "
              "would need its conjugate)", test=T_SHAPES)

composed(L + "solve_ex", "(_ms_compat.linalg_solve({A}, {B}, {left}), ops.zeros({A}.shape[:-2], ms.int32))",
         ("A", "B", "left", "check_errors"), defaults={"left": "True", "check_errors": "False"},
         target="mindspore.ops.matrix_solve", status=DIFFERENCE,
         note="(result, info) " + _EX + "; left=False solves the transposed system", test=T_FORMS)
composed(L + "lu_factor_ex", "(lambda _ms_lu, _ms_p: (_ms_lu, _ms_p, ops.zeros(_ms_lu.shape[:-2], ms.int32)))(*"
         "_ms_compat.linalg_lu_factor({A}))", ("A", "pivot", "check_errors"), defaults={"pivot": "True", "check_errors": "False"},
         only={"pivot": ("True",)}, target="mindspore.scipy.linalg.lu_factor", status=DIFFERENCE,
         note="(LU, pivots, info) with torch's 1-based int32 pivots; info " + _EX + "; " + _RECT + "; a batch runs "
              "matrix by matrix", test=T_SHAPES)
composed(L + "matrix_exp", "_ms_compat.linalg_matrix_exp({input})", ("input",), target="_ms_compat.linalg_matrix_exp",
         note="ops.matrix_exp has no CPU kernel: scaling and squaring with a degree-13 Pade approximant (ops.matmul, "
              "ops.matrix_solve), as scipy.linalg.expm; agrees with torch to float rounding, gradients included",
         test=T_VAL)
_EIG = ("ops.eig computes the same eigenvalues, but LAPACK (torch) and MindSpore order them differently, and each "
        "eigenvector is unique only up to a complex phase: sort them (e.g. by real part) where order matters")
composed(L + "eigvals", "_ms_compat.linalg_eig({input})[0]", ("input",), target="mindspore.ops.eig",
         status=DIFFERENCE, note="complex eigenvalues (none for an empty matrix); " + _EIG, test=T_SHAPES)
composed(L + "eig", "_ms_compat.linalg_eig({input})", ("input",), target="mindspore.ops.eig", status=DIFFERENCE,
         note="(eigenvalues, eigenvectors), complex (none for an empty matrix); " + _EIG + "; a plain tuple (no "
              ".eigenvalues/.eigenvectors)", test=T_SHAPES)
mapping(L + "LinAlgError", "_ms_compat.LinAlgError", status=DIFFERENCE,
        test=f"{T}::test_singular_and_indefinite_inputs_raise",
        note="MindSpore raises ValueError (a singular solve/inverse) or RuntimeError (Cholesky) where torch raises "
             "LinAlgError, and only when the result is first read (asnumpy, float(), print): `except` catches both "
             "when the try block reads the result; raise LinAlgError(msg) raises a RuntimeError; no subclassing")
_NO = "no MindSpore op with torch's result on CPU: "
# torch.linalg.ldl_factor_ex stays with the census rule (a TODO pointing at mindspore.ops), as ldl_factor below
for _name in ("ldl_factor", "ldl_solve"):
    mapping(L + _name, None, note=_NO + "MindSpore has no LDL (Bunch-Kaufman) factorization; solve the system "
            "with torch.linalg.solve's conversion (ops.matrix_solve) instead")

def _multi_dot(ctx):
    """A literal list of matrices: multiplied left to right (torch picks the cheapest order; same values); any other
    sequence through _ms_compat.linalg_multi_dot, which does the same at run time."""
    b = ctx.bound
    node = b.value("tensors")
    if b.starred or node is None or set(b.order) - {"tensors", "out"}:
        raise UnsupportedSite("tensors must be a list or tuple of matrices, passed as one argument")
    if b.has("out") and b.code("out") != "None":
        raise UnsupportedSite("out= has no MindSpore counterpart: assign the result")
    if not isinstance(node, (cst.List, cst.Tuple)):
        return ctx.expr(f"_ms_compat.linalg_multi_dot({b.code('tensors')})")
    items = [code_of(e.value).strip() for e in node.elements]
    if len(items) < 2 or any(isinstance(e, cst.StarredElement) for e in node.elements):
        raise UnsupportedSite("at least two matrices, none starred")
    text = items[0]
    for item in items[1:]:
        text = f"ops.matmul({text}, {item})"
    return ctx.expr(text)


rule(L + "multi_dot", "mindspore.ops.matmul", args=("tensors",), test=T_FORMS,
     note="ops.matmul left to right, written out for a literal list, else through _ms_compat.linalg_multi_dot (torch "
          "chooses the cheapest order; the values agree to rounding); 1-D first/last tensors act as row/column "
          "vectors, as in torch")(_multi_dot)
