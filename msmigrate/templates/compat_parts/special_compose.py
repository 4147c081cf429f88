"""torch.special functions MindSpore 2.10 has no exact CPU op for, composed from ops that are exact
(mappings/torch_special.py; proven against torch by tests/parity/test_special_linalg_forms.py). Measured on CPU:
ops.exp in float32 is off by up to 6.5e-6 (relative) and ops.log_softmax in float64 by 5e-6 (absolute: a float32
computation), while the float64 exp/log/erfc/lgamma agree with torch to the last bit; ops.erfinv loses the tails;
ops.mvlgamma raises where torch returns values; ops.round has no decimals; ops.log1p is log(1 + x). The softmax family and ndtri therefore
compute in float64 and cast back to the input's dtype. A Python float constant meeting a float64 tensor is
rounded to float32 by MindSpore (ops.full_like and ms.Tensor(c, x.dtype) too, inside ms.jit): the irrational
constants are module-level float64 tensors, cast to the input's dtype."""
import math

import mindspore as ms
from mindspore import ops

_LOG_PI = ms.Tensor(math.log(math.pi), ms.float64)
_SQRT2 = ms.Tensor(math.sqrt(2), ms.float64)
_SQRT_2PI = ms.Tensor(math.sqrt(2 * math.pi), ms.float64)
_PI = ms.Tensor(math.pi, ms.float64)


def special_log1p(x):
    """torch.log1p: ops.log1p is log(1 + x) on CPU (float32: log1p(1e-6) 4.6% off, log1p(1e-12) = 0; float64: 3e-8
    off at -1e-9), and float32 ops.log is off by ~6e-8 near 1: log(u) * x / (u - 1) with u = 1 + x in float64,
    exact to rounding (x itself where u rounds to 1), cast back."""
    out_type, z = x.dtype, x.astype(ms.float64)
    u = 1 + z
    d = u - 1
    tiny = d == 0
    return ops.where(tiny, z, ops.log(u) * (z / ops.where(tiny, ops.ones_like(d), d))).astype(out_type)


def special_ndtr(x):
    """torch.special.ndtr: erfc(-x / sqrt 2) / 2, sqrt 2 in x's dtype (float64 keeps its digits)."""
    return 0.5 * ops.erfc(-x / _SQRT2.astype(x.dtype))


def special_spherical_bessel_j0(x):
    """torch.special.spherical_bessel_j0: sin(x) / x = sinc(x / pi), pi in x's dtype."""
    return ops.sinc(x / _PI.astype(x.dtype))


def _special_float(x, dtype=None):
    """x cast to torch's dtype= when given; the result's dtype and the float64 working copy."""
    if dtype is not None:
        x = x.astype(dtype)
    return x.dtype, x.astype(ms.float64)


def special_log_softmax(x, dim, dtype=None):
    """torch.special.log_softmax: x - max - log(sum(exp(x - max))) in float64 (nan for a slice of all -inf, as
    torch)."""
    out_type, z = _special_float(x, dtype)
    z = z - ops.amax(z, dim, keepdims=True)
    return (z - ops.log(ops.sum(ops.exp(z), dim, keepdim=True))).astype(out_type)


def special_softmax(x, dim, dtype=None):
    """torch.special.softmax: exp(x - max) / sum in float64 (nan for a slice of all -inf, as torch)."""
    out_type, z = _special_float(x, dtype)
    e = ops.exp(z - ops.amax(z, dim, keepdims=True))
    return (e / ops.sum(e, dim, keepdim=True)).astype(out_type)


def special_round(x, decimals=0):
    """torch.special.round(x, decimals): torch's own arithmetic in x's dtype (round half to even of x * 10^d,
    divided back; for d < 0, of x / 10^-d, multiplied back)."""
    if decimals == 0:
        return ops.round(x)
    scale = float(10 ** abs(decimals))
    if decimals > 0:
        return ops.round(x * scale) / scale
    return ops.round(x / scale) * scale


def special_multigammaln(x, p):
    """torch.special.multigammaln: sum over j < p of lgamma(x - j / 2), plus p (p - 1) / 4 log(pi) (ops.mvlgamma
    raises for x <= (p - 1) / 2, where torch returns values)."""
    total = ops.lgamma(x - (p - 1) / 2)
    for j in range(p - 2, -1, -1):
        total = total + ops.lgamma(x - j / 2)
    return total + _LOG_PI.astype(total.dtype) * (p * (p - 1) / 4)   # p (p - 1) / 4: exact in float32


# Rational approximations of the normal quantile (Acklam): a start within 1.2e-9 (relative), which two Halley
# steps on ndtr(x) = p (ops.erfc is exact in float64) bring to float64 rounding
_NDTRI_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
            -3.066479806614716e+01, 2.506628277459239e+00)
_NDTRI_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
            -1.328068155288572e+01)
_NDTRI_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
            4.374664141464968e+00, 2.938163982698783e+00)
_NDTRI_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00)


def _ndtri_poly(coeffs, t):
    out = ops.full_like(t, coeffs[0])
    for c in coeffs[1:]:
        out = out * t + c
    return out


def _ndtri_start(s):
    """Acklam's approximation of ndtri for 0 < s <= 1/2 (central region, then the lower tail)."""
    q = s - 0.5
    r = q * q
    central = q * _ndtri_poly(_NDTRI_A, r) / (_ndtri_poly(_NDTRI_B, r) * r + 1)
    t = ops.sqrt(-2 * ops.log(s))
    tail = _ndtri_poly(_NDTRI_C, t) / (_ndtri_poly(_NDTRI_D, t) * t + 1)
    return ops.where(s >= 0.02425, central, tail)


def special_ndtri(p):
    """torch.special.ndtri: the x with ndtr(x) = p, in float64 (-inf at 0, inf at 1, nan outside [0, 1]). Solved
    for s = min(p, 1 - p) (exact in float64), where ndtr(x) = erfc(-x / sqrt 2) / 2 keeps its relative precision,
    and mirrored. The start carries no gradient: the Halley steps give dx/dp = 1 / phi(x), torch's gradient."""
    out_type = p.dtype if p.dtype in (ms.float16, ms.float32, ms.float64, ms.bfloat16) else ms.float32
    p = p.astype(ms.float64)
    inside = ops.logical_and(p > 0, p < 1)
    lower = p < 0.5
    s = ops.where(inside, ops.where(lower, p, 1 - p), ops.full_like(p, 0.5))
    x = ops.stop_gradient(_ndtri_start(s))
    for _ in range(2):
        u = (0.5 * ops.erfc(-x / _SQRT2) - s) * _SQRT_2PI * ops.exp(x * x / 2)
        x = x - u / (1 + x * u / 2)
    edge = ops.where(p == 0, ops.full_like(p, float("-inf")),
                     ops.where(p == 1, ops.full_like(p, float("inf")), ops.full_like(p, float("nan"))))
    return ops.where(inside, ops.where(lower, x, -x), edge).astype(out_type)


def special_xlog1py(x, y):
    """torch.special.xlog1py: x * log1p(y), 0 where x == 0 and y is not nan; either may be a Python number, which
    takes the other's dtype as torch's scalar promotion does (ops.isnan / ops.log1p take tensors only)."""
    if not isinstance(x, ms.Tensor):
        x = ops.zeros_like(y) + x
    if not isinstance(y, ms.Tensor):
        y = ops.zeros_like(x) + y
    return ops.where(ops.logical_and(x == 0, ops.logical_not(ops.isnan(y))), ops.zeros_like(x * y),
                     x * special_log1p(y))


def float_of_int(x):
    """x, or x as float32 when it holds integers or booleans: torch's promotion for its floating functions
    (MindSpore's special-function kernels refuse integer tensors)."""
    if x.dtype in (ms.bool_, ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8, ms.uint16, ms.uint32, ms.uint64):
        return x.astype(ms.float32)
    return x


_HALF_LOG_2PI = ms.Tensor(0.5 * math.log(2 * math.pi), ms.float64)


def special_log_ndtr(x):
    """torch.special.log_ndtr in float64, cast back: log1p(-ndtr(-x)) above 0 (log(ndtr) would cancel), an
    asymptotic series below -20 (where ndtr underflows), log(ndtr(x)) between; each branch sees safe values only,
    so no NaN reaches the gradient."""
    z = float_of_int(x)
    out_type, z = z.dtype, z.astype(ms.float64)
    zero = ops.zeros_like(z)
    upper = special_log1p(-special_ndtr(-ops.maximum(z, zero)))
    tail = ops.minimum(z, zero - 20)
    series = -0.5 * tail * tail - ops.log(-tail) - _HALF_LOG_2PI + ops.log(1 - 1 / (tail * tail) + 3 / tail ** 4)
    middle = ops.log(special_ndtr(ops.clamp(z, -20.0, 0.0)))
    return ops.where(z > 0, upper, ops.where(z < -20, series, middle)).astype(out_type)


# psi's asymptotic series: -sum B_2n / (2n y^2n), n = 1..7, as coefficients of z = 1 / y^2
_PSI_SERIES = tuple(ms.Tensor(c, ms.float64) for c in (-1 / 12, 1 / 120, -1 / 252, 1 / 240, -1 / 132, 691 / 32760,
                                                       -1 / 12))


def special_digamma(x):
    """torch.digamma; MindSpore's kernel is about 3e-5 off in float64, where torch's value comes from the recurrence
    psi(y) = psi(y + 1) - 1 / y up to y >= 10, the asymptotic series, and the reflection psi(x) = psi(1 - x) -
    pi / tan(pi x) below 0.5; -inf at 0 and NaN at the negative integers, as torch."""
    if x.dtype != ms.float64:
        return ops.digamma(x)
    reflected = x < 0.5
    y = ops.where(reflected, 1 - x, x)
    acc = ops.zeros_like(y)
    for _ in range(10):
        small = y < 10
        acc = acc - ops.where(small, 1 / ops.where(small, y, ops.ones_like(y)), ops.zeros_like(y))
        y = ops.where(small, y + 1, y)
    z = 1 / (y * y)
    series = _PSI_SERIES[6]
    for c in _PSI_SERIES[5::-1]:
        series = c + z * series
    psi = acc + ops.log(y) - 0.5 / y + z * series
    psi = ops.where(reflected, psi - _PI / ops.tan(_PI * x), psi)
    pole = ops.logical_and(x <= 0, x == ops.floor(x))
    return ops.where(pole, ops.where(x == 0, ops.full_like(x, float("-inf")), ops.full_like(x, float("nan"))), psi)
