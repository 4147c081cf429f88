"""torch.linalg functions MindSpore 2.10 has no CPU kernel for, composed from ops that have one:
matrix_exp (ops.matrix_exp has no CPU kernel) by scaling and squaring with a degree-13 Pade approximant
(Higham 2005, the method scipy.linalg.expm uses), and torch.linalg.LinAlgError, the error the converted
linear algebra raises."""
import mindspore as ms
from mindspore import ops

# Higham's degree-13 Pade coefficients and the 1-norm up to which that approximant is exact to double rounding
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152
_PADE13_COEFFS = ms.Tensor(_PADE13, ms.float64)


def linalg_matrix_exp(A):
    """torch.linalg.matrix_exp: exp(A) of a square matrix (or a batch: every matrix scaled by the batch's largest
    1-norm, which stays within the approximant's range)."""
    n = A.shape[-1]
    if n == 0:
        return A
    norm1 = ops.abs(A).sum(-2).max()
    # squarings needed so that the scaled matrix's 1-norm is within _THETA13 (0 when it already is)
    s = ops.ceil(ops.log2(ops.maximum(norm1 / _THETA13, ops.ones((), norm1.dtype)))).astype(ms.int32)
    X = A / ops.exp2(s.astype(A.dtype))
    b = _PADE13_COEFFS.astype(A.dtype)   # a Python float would be rounded to float32 by MindSpore
    eye = ops.broadcast_to(ops.eye(n, n, A.dtype), X.shape)
    X2 = ops.matmul(X, X)
    X4 = ops.matmul(X2, X2)
    X6 = ops.matmul(X4, X2)
    U = ops.matmul(X, ops.matmul(X6, b[13] * X6 + b[11] * X4 + b[9] * X2)
                   + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye)
    V = ops.matmul(X6, b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * eye
    E = ops.matrix_solve(V - U, V + U)
    i = ops.zeros((), ms.int32)
    while i < s:
        E = ops.matmul(E, E)
        i = i + 1
    return E


class _LinAlgError(RuntimeError):
    """What `raise torch.linalg.LinAlgError(...)` raises (a RuntimeError, as torch's)."""


class _LinAlgErrors(tuple):
    """torch.linalg.LinAlgError: MindSpore's linear algebra raises ValueError (MatrixSolve: not invertible) or
    RuntimeError (Cholesky: not positive definite) where torch raises LinAlgError, so `except`/isinstance
    see the tuple of both; calling it (raise LinAlgError(msg)) builds a RuntimeError subclass in it."""

    def __call__(self, *args):
        return _LinAlgError(*args)


LinAlgError = _LinAlgErrors((ValueError, RuntimeError))


def linalg_cond(A, p=None):
    """torch.linalg.cond: the ratio of extreme singular values for p None/2/-2; for 'fro', 'nuc', inf, -inf, 1 and
    -1 the norm of A times the norm of its inverse (a singular A raises there, where torch returns inf)."""
    if p is None or p in (2, -2):
        s = ops.svd(A, compute_uv=False)
        return s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    return ops.matrix_norm(A, p) * ops.matrix_norm(linalg_inv(A), p)


def linalg_multi_dot(tensors):
    """torch.linalg.multi_dot of any sequence: ops.matmul left to right (a 1-D first or last tensor is a row or
    column vector whose dimension leaves the result, as torch; torch picks the cheapest order, same values)."""
    if isinstance(tensors, ms.Tensor):
        raise TypeError("linalg_multi_dot(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    tensors = list(tensors)
    out = tensors[0]
    for t in tensors[1:]:
        out = ops.matmul(out, t)
    return out


def linalg_solve(A, B, left=True):
    """torch.linalg.solve: A X = B, or X A = B when left=False (the transposed system); a vector B (or a batch of
    vectors, B.shape == A.shape[:-1]) is solved as a one-column matrix, as torch decides, when left=True."""
    if not left:
        return ops.matrix_solve(A.swapaxes(-1, -2), B.swapaxes(-1, -2)).swapaxes(-1, -2)
    if B.ndim == 1 or B.shape == A.shape[:-1]:
        return ops.matrix_solve(A, B[..., None])[..., 0]
    return ops.matrix_solve(A, B)


def linalg_solve_triangular(A, B, upper, left=True, unitriangular=False):
    """torch.linalg.solve_triangular: a general solve of the triangle torch reads, X A = B when left=False."""
    T = linalg_triangle(A, upper, unitriangular)
    if left:
        return ops.matrix_solve(T, B)
    return ops.matrix_solve(T.swapaxes(-1, -2), B.swapaxes(-1, -2)).swapaxes(-1, -2)


def _la_lu_unpack(LU, pivots):
    """(P, L, U) of one packed m x n LU and its 1-based pivots (row i swapped with row pivots[i] - 1, in order)."""
    m, n = LU.shape
    k = min(m, n)
    perm = list(range(m))
    for i, p in enumerate(pivots.asnumpy().tolist()):
        perm[i], perm[p - 1] = perm[p - 1], perm[i]
    P = ops.eye(m, m, LU.dtype)[:, ms.Tensor(perm, ms.int32)]   # P @ L @ U: row perm[j] of A is row j of L U
    low = ops.tril(LU[:, :k], -1) + ops.eye(m, k, LU.dtype)
    return P, low, ops.triu(LU[:k])


def linalg_lu(A):
    """torch.linalg.lu: (P, L, U) with A = P L U, P in A's dtype; mindspore.scipy.linalg.lu (2-D only) over every
    matrix of a batch, stacked back."""
    if A.ndim == 2 and A.shape[0] > A.shape[1]:   # tall: mindspore.scipy.linalg.lu refuses it
        return _la_lu_unpack(*linalg_lu_factor(A))
    if A.ndim == 2:
        p, low, up = ms_scipy_linalg.lu(A)
        return p.astype(A.dtype), low, up
    flat = A.reshape((-1,) + A.shape[-2:])
    parts = [linalg_lu(flat[i]) for i in range(flat.shape[0])]
    return tuple(ops.stack([part[k] for part in parts]).reshape(A.shape[:-2] + parts[0][k].shape) for k in range(3))


def linalg_qr(A, mode="reduced"):
    """torch.linalg.qr: ops.qr for 'reduced'/'complete'; mode='r' gives torch's empty Q and the reduced R."""
    if mode == "r":
        return ops.zeros((0,), A.dtype), ops.qr(A, "reduced")[1]
    return ops.qr(A, mode)


def ormqr(input, tau, other, left=True, transpose=False):
    """torch.ormqr (ops.ormqr has no CPU kernel): `other` multiplied by the full Q of the Householder reflectors
    (input, tau), formed by ops.orgqr with the reflectors padded to a square (a zero tau reflects nothing); Q^H with
    transpose, Q on the right with left=False."""
    m = input.shape[-2]
    pad_a = pad_constant(input, (0, m - input.shape[-1]))     # concatenation, not the pad kernel (its gradient)
    pad_t = pad_constant(tau, (0, m - tau.shape[-1]))
    q = ops.orgqr(pad_a, pad_t)
    if transpose:
        q = ops.swapaxes(q, -1, -2)
        q = ops.conj(q) if q.is_complex() else q
    return ops.matmul(q, other) if left else ops.matmul(other, q)
