"""torch.special's orthogonal polynomials of degree n (Chebyshev, Hermite, Laguerre, Legendre).

MindSpore has no op for them: the three-term recurrence torch documents, unrolled over an integer n. A tensor n
(one degree per element, broadcast with x) is read in PyNative: every degree up to its largest is built and each
element takes its own. A negative degree gives 0, as in torch."""
from mindspore import ops


def _special_poly_start(kind, x):
    if kind in ("chebyshev_t", "legendre", "hermite_he"):
        return x
    if kind in ("chebyshev_u", "hermite_h"):
        return 2 * x
    if kind == "chebyshev_v":
        return 2 * x - 1
    if kind == "chebyshev_w":
        return 2 * x + 1
    return 1 - x  # laguerre


def _special_poly_next(kind, x, prev, cur, k):
    """P_{k+1} from P_{k-1} and P_k."""
    if kind.startswith("chebyshev"):
        return 2 * x * cur - prev
    if kind == "hermite_h":
        return 2 * x * cur - 2 * k * prev
    if kind == "hermite_he":
        return x * cur - k * prev
    if kind == "laguerre":
        return ((2 * k + 1 - x) * cur - k * prev) / (k + 1)
    return ((2 * k + 1) * x * cur - k * prev) / (k + 1)  # legendre


def special_orthogonal_polynomial(kind, x, n):
    """P_n(x) for torch.special.<kind>_polynomial_*(x, n)."""
    if kind.startswith("shifted_"):
        kind, x = kind[len("shifted_"):], 2 * x - 1
    if isinstance(n, float) or type(n).__module__ == "numpy":
        n = int(n)   # torch truncates a float degree to an integer
    if isinstance(n, int):
        if n < 0:
            return ops.zeros_like(x)
        prev, cur = ops.ones_like(x), _special_poly_start(kind, x)
        if n == 0:
            return prev
        for k in range(1, n):
            prev, cur = cur, _special_poly_next(kind, x, prev, cur, k)
        return cur
    degree = ops.trunc(n.astype(x.dtype)) if n.is_floating_point() else n.astype(x.dtype)
    out = x * 0 + degree * 0
    prev, cur = ops.ones_like(x), _special_poly_start(kind, x)
    out = ops.where(degree == 0, prev + out, out)
    for k in range(1, int(n.max().asnumpy()) + 1):
        out = ops.where(degree == k, cur + out, out)
        prev, cur = cur, _special_poly_next(kind, x, prev, cur, k)
    return out
