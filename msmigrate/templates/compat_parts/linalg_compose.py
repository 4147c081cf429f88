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
