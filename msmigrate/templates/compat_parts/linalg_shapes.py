"""torch.linalg results on the matrix shapes MindSpore's kernels refuse, and torch's tolerance arguments
(mappings/torch_linalg.py; proven against torch by tests/parity/test_linalg_shapes.py): empty matrices (ops.svd
raises, torch returns empty or identity factors), 1x1 and 0x0 determinants (MatrixDeterminant needs 2 rows),
pinv/matrix_rank with atol/rtol/hermitian (complex matrices too: ops.svd's singular values come complex, ops.tril
has no complex kernel), slogdet's real logabsdet of a complex matrix, a unit-diagonal triangle, eigh of a batch (mindspore.scipy.linalg.eigh is
2-D only). Shapes are static, so the branches also run inside ms.jit."""
import mindspore as ms
from mindspore import ops


def _la_batch(A):
    return tuple(A.shape[:-2])


def _la_size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _la_eye(batch, n, dtype):
    """Identity matrices of shape batch + (n, n) (zeros when the shape holds nothing)."""
    if _la_size(batch) * n == 0:
        return ops.zeros(batch + (n, n), dtype)
    return ops.broadcast_to(ops.eye(n, n, dtype), batch + (n, n))


def linalg_svd(A, full_matrices=True):
    """torch.linalg.svd: (U, S, Vh). An empty matrix gives torch's factors: no singular values, identity U/Vh when
    full_matrices, else empty ones."""
    if 0 in A.shape:
        batch, (m, n) = _la_batch(A), A.shape[-2:]
        k = min(m, n)
        s = ops.zeros(batch + (k,), A.dtype)
        if full_matrices:
            return _la_eye(batch, m, A.dtype), s, _la_eye(batch, n, A.dtype)
        return ops.zeros(batch + (m, k), A.dtype), s, ops.zeros(batch + (k, n), A.dtype)
    s, u, v = ops.svd(A, full_matrices)
    return u, s, v.swapaxes(-1, -2)


def linalg_svdvals(A):
    """torch.linalg.svdvals: descending singular values (none for an empty matrix)."""
    if 0 in A.shape:
        return ops.zeros(_la_batch(A) + (min(A.shape[-2:]),), A.dtype)
    return ops.svd(A, compute_uv=False)


def _la_complex(A):
    return A.dtype in (ms.complex64, ms.complex128)


def _la_adjoint(A):
    """The conjugate transpose (the transpose of a real matrix)."""
    return (ops.conj(A) if _la_complex(A) else A).swapaxes(-1, -2)


def _la_lower_symmetric(A):
    """The symmetric (Hermitian) matrix torch's hermitian=True reads: the lower triangle mirrored (conjugated),
    the real part of the diagonal. ops.tril has no complex kernel: a complex A is masked by a real triangle."""
    if not _la_complex(A):
        low = ops.tril(A, -1)
        return low + low.swapaxes(-1, -2) + ops.tril(ops.triu(A))
    n = A.shape[-1]
    strict = ops.tril(ops.ones((n, n), ms.float32), -1).astype(A.dtype)
    low = A * strict
    diag = ops.real(A) * ops.eye(n, n, ops.real(A).dtype)
    return low + _la_adjoint(low) + diag.astype(A.dtype)


def _la_tolerance(s, m, n, atol, rtol):
    """torch's cutoff max(atol, rtol * largest singular value), per matrix; rtol defaults to eps * max(m, n), or to 0
    when only atol is given."""
    eps = 1.1920928955078125e-07 if s.dtype != ms.float64 else 2.220446049250313e-16
    if rtol is None:
        rtol = eps * max(m, n) if atol is None else 0.0
    atol = 0.0 if atol is None else atol
    atol = atol[..., None] if isinstance(atol, ms.Tensor) and atol.ndim > 0 else atol
    rtol = rtol[..., None] if isinstance(rtol, ms.Tensor) and rtol.ndim > 0 else rtol
    return ops.maximum(ops.zeros((), s.dtype) + atol, rtol * s[..., :1])


def linalg_pinv(A, atol=None, rtol=None, hermitian=False, rcond=None):
    """torch.linalg.pinv: V diag(1/s) U^T over the singular values above torch's tolerance (rcond: rtol)."""
    m, n = A.shape[-2:]
    if rcond is not None:
        atol, rtol = None, rcond
    if 0 in A.shape:
        return ops.zeros(_la_batch(A) + (n, m), A.dtype)
    if hermitian:
        A = _la_lower_symmetric(A)
    s, u, v = ops.svd(A, False)
    s = ops.real(s) if _la_complex(s) else s    # a complex A: real singular values in a complex tensor
    keep = s > _la_tolerance(s, m, n, atol, rtol)
    s_inv = ops.where(keep, 1 / ops.where(keep, s, ops.ones_like(s)), ops.zeros_like(s))
    return ops.matmul(v * s_inv[..., None, :].astype(A.dtype), _la_adjoint(u))


def linalg_matrix_rank(A, atol=None, rtol=None, hermitian=False, tol=None):
    """torch.linalg.matrix_rank: the number of singular values above torch's tolerance (tol= is atol with rtol 0)."""
    m, n = A.shape[-2:]
    if 0 in A.shape:
        return ops.zeros(_la_batch(A), ms.int64)
    if tol is not None:
        atol, rtol = tol, 0.0
    if hermitian:
        A = _la_lower_symmetric(A)
    s = ops.svd(A, compute_uv=False)
    s = ops.real(s) if _la_complex(s) else s
    return (s > _la_tolerance(s, m, n, atol, rtol)).sum(-1).astype(ms.int64)


def linalg_det(A):
    """torch.linalg.det: 1 for a 0x0 matrix, the entry for 1x1 (ops.det needs two rows)."""
    n = A.shape[-1]
    if n == 0:
        return ops.ones(_la_batch(A), A.dtype)
    if n == 1:
        return A[..., 0, 0]
    return ops.det(A)


def linalg_slogdet(A):
    """torch.linalg.slogdet: (sign, log|det|), with torch's answers for 0x0 and 1x1 matrices."""
    n = A.shape[-1]
    if n == 0:
        return ops.ones(_la_batch(A), A.dtype), ops.zeros(_la_batch(A), A.dtype)
    if n == 1:
        a = A[..., 0, 0]
        return ops.sign(a), ops.log(ops.abs(a))
    sign, logabsdet = ops.slogdet(A)
    return sign, (ops.real(logabsdet) if _la_complex(logabsdet) else logabsdet)   # real, as torch


def linalg_logdet(A):
    """torch.logdet: log(det) (NaN for a negative determinant), 0 for a 0x0 matrix, log of the entry for 1x1."""
    n = A.shape[-1]
    if n == 0:
        return ops.zeros(_la_batch(A), A.dtype)
    if n == 1:
        return ops.log(A[..., 0, 0])
    return ops.logdet(A)


def linalg_triangle(A, upper, unitriangular=False):
    """The triangle solve_triangular reads (the other one ignored), with a unit diagonal when unitriangular."""
    if unitriangular:
        strict = ops.triu(A, 1) if upper else ops.tril(A, -1)
        return strict + _la_eye(_la_batch(A), A.shape[-1], A.dtype)
    return ops.triu(A) if upper else ops.tril(A)


def linalg_eigh(A, lower=True, eigvals_only=False):
    """_la_eigh, with torch's ascending real eigenvalues for a complex Hermitian A (MindSpore's come complex and
    unordered there), the eigenvectors in the same order."""
    out = _la_eigh(A, lower, eigvals_only)
    if A.dtype not in (ms.complex64, ms.complex128):
        return out
    w, order = ops.sort(ops.real(out if eigvals_only else out[0]), -1)
    if eigvals_only:
        return w
    return w, ops.gather_elements(out[1], -1, ops.broadcast_to(order[..., None, :], out[1].shape))


def _la_eigh(A, lower=True, eigvals_only=False):
    """mindspore.scipy.linalg.eigh (2-D only) over every matrix of a batch, stacked back."""
    batch = _la_batch(A)
    if 0 in A.shape:   # no eigenpairs (MindSpore's kernel would crash on an empty matrix)
        w = ops.zeros(batch + A.shape[-1:], A.dtype)
        return w if eigvals_only else (w, A + 0)
    if A.ndim == 2:
        return ms_scipy_linalg.eigh(A, lower=lower, eigvals_only=eigvals_only)
    flat = A.reshape((-1,) + A.shape[-2:])
    parts = [ms_scipy_linalg.eigh(flat[i], lower=lower, eigvals_only=eigvals_only) for i in range(flat.shape[0])]
    if eigvals_only:
        return ops.stack(parts).reshape(batch + A.shape[-1:])
    w = ops.stack([p[0] for p in parts]).reshape(batch + A.shape[-1:])
    return w, ops.stack([p[1] for p in parts]).reshape(A.shape)


def linalg_inv(A):
    """torch.linalg.inv as the solve A X = I (ops.inverse returns finite garbage for a singular matrix, where
    ops.matrix_solve raises as torch does); an empty matrix is its own inverse (MatrixSolve would crash)."""
    if 0 in A.shape:
        return A + 0
    return ops.matrix_solve(A, _la_eye(_la_batch(A), A.shape[-1], A.dtype))


def linalg_lstsq(A, B, rcond=None, driver=None):
    """torch.linalg.lstsq (one matrix): (solution, residuals, rank, singular_values) as the driver fills them.
    gelsy (torch's CPU default): no residuals, no singular values; gels: residuals when m > n, no rank or
    singular values; gelsd/gelss: all four, residuals when m > n and A has full rank."""
    x, res, rank, s = ms_scipy_linalg.lstsq(A, B, rcond)
    if driver in (None, "gelsy"):
        return x, res, rank, s
    m, n = A.shape[-2:]
    full = m > n and (driver == "gels" or int(rank) == n)
    res = ((ops.matmul(A, x) - B) ** 2).sum(-2) if full else ops.zeros((0,), A.dtype)
    if driver == "gels":
        return x, res, ops.zeros((0,), ms.int64), ops.zeros((0,), A.dtype)
    return x, res, rank, ops.svd(A, compute_uv=False)


def _la_lu_matrix(LU, pivots):
    """The matrix A = P L U that lu_factor factored, from the packed LU and torch's 1-based pivots (row i was
    swapped with row pivots[i] - 1, in order)."""
    n = LU.shape[-1]
    M = ops.matmul(ops.tril(LU, -1) + ops.eye(n, n, LU.dtype), ops.triu(LU))
    perm = list(range(n))
    for i, p in enumerate(pivots.asnumpy().tolist()):
        perm[i], perm[p - 1] = perm[p - 1], perm[i]
    rows = [0] * n
    for k, r in enumerate(perm):
        rows[r] = k
    return M[ms.Tensor(rows, ms.int32)]


def linalg_lu_solve(LU, pivots, B, left=True, adjoint=False):
    """torch.linalg.lu_solve (one real matrix) from torch's 1-based pivots: A X = B through lu_solve; A^T X = B
    (adjoint) and X A = B / X A^T = B (left=False) as solves with the factored matrix rebuilt (mindspore.scipy's
    lu_solve(trans=1) does not solve the transposed system)."""
    if left and not adjoint:
        return ms_scipy_linalg.lu_solve((LU, pivots - 1), B)
    A = _la_lu_matrix(LU, pivots)
    if left:
        return ops.matrix_solve(A.swapaxes(-1, -2), B)
    At = A if adjoint else A.swapaxes(-1, -2)
    return ops.matrix_solve(At, B.swapaxes(-1, -2)).swapaxes(-1, -2)


def linalg_lu_factor(A):
    """torch.linalg.lu_factor: (LU, 1-based int32 pivots). A square matrix through
    mindspore.scipy.linalg.lu_factor; a rectangular one (which it refuses) by Gaussian elimination with partial
    pivoting, LAPACK's getrf: the first largest |entry| of each column below the diagonal is the pivot. A batch runs
    matrix by matrix."""
    if A.ndim > 2:
        flat = A.reshape((-1,) + A.shape[-2:])
        parts = [linalg_lu_factor(flat[i]) for i in range(flat.shape[0])]
        return (ops.stack([p[0] for p in parts]).reshape(A.shape),
                ops.stack([p[1] for p in parts]).reshape(A.shape[:-2] + parts[0][1].shape))
    m, n = A.shape[-2:]
    if m == n:
        lu, piv = ms_scipy_linalg.lu_factor(A)
        return lu, piv + 1
    LU, pivots = A, []
    for k in range(min(m, n)):
        p = k + int(ops.argmax(ops.abs(LU[k:, k])))
        pivots.append(p + 1)
        if p != k:
            order = list(range(m))
            order[k], order[p] = p, k
            LU = ops.gather(LU, ms.Tensor(order, ms.int32), 0)
        if k + 1 < m:
            rest = LU[k + 1:]
            low = rest[:, k:k + 1] / LU[k, k]
            rest = ops.concat([rest[:, :k], low, rest[:, k + 1:] - low * LU[k:k + 1, k + 1:]], 1)
            LU = ops.concat([LU[:k + 1], rest], 0)
    return LU, ms.Tensor(pivots, ms.int32)


def legacy_lu(A, get_infos=False):
    """torch.lu / Tensor.lu: linalg_lu_factor's (LU, pivots), a batch included; get_infos adds LAPACK's info per
    matrix: the 1-based index of U's first zero on the diagonal (a singular matrix), else 0."""
    lu, piv = linalg_lu_factor(A)
    if not get_infos:
        return lu, piv
    zero = (ops.diagonal(lu, 0, -2, -1) == 0).astype(ms.int32)
    first = ops.argmax(zero, -1).astype(ms.int32) + 1
    return lu, piv, ops.where(zero.sum(-1) > 0, first, ops.zeros_like(first))


def linalg_eig(A):
    """ops.eig, with no eigenpairs for an empty matrix (the kernel would crash)."""
    if 0 in A.shape:
        ctype = ms.complex128 if A.dtype == ms.float64 else ms.complex64
        return ops.zeros(A.shape[:-1], ctype), ops.zeros(A.shape, ctype)
    return ops.eig(A)


def linalg_cholesky(A, upper=False):
    """ops.cholesky, with an empty matrix returned as it is (the kernel would crash)."""
    if 0 in A.shape:
        return A + 0
    return ops.cholesky(A, upper)


def linalg_vecdot(x, y, dim=-1):
    """torch.linalg.vecdot of real tensors: the sum of the broadcast products along dim; 0 for empty vectors
    (ops.vecdot and ops.sum leave the result of an empty reduction uninitialised)."""
    p = x * y
    axis = dim % p.ndim
    if p.shape[axis] == 0:
        return ops.zeros(p.shape[:axis] + p.shape[axis + 1:], p.dtype)
    return ops.sum(p, axis)
