"""`torch.special.*` -> `mindspore.ops` special functions, or short compositions of them.

Proven by tests/parity/test_torch_special.py (values over each function's domain, gradients where MindSpore
differentiates the op). Facts (MindSpore 2.10, CPU, checked there):
  * ops.bessel_* / ops.igamma / ops.zeta / ops.polygamma / ops.mvlgamma exist and match torch;
    ops.polygamma takes n as a Tensor.
  * ops.round has no decimals != 0 kernel; ops.erfinv loses the tails (erfinv(2p - 1) is off by >1 near p = 0
    or 1 even in float64), so ndtri stays a TODO.
  * log_ndtr and erfcx are computed in float64 with an asymptotic branch where the plain formula under/overflows.
Integer inputs are not promoted to float as torch does: cast them first.
"""
from __future__ import annotations

from ..records import CONVERTED, DIFFERENCE, mapping
from .compose import composed
from .torch_linalg import BROADCAST_PAIR

T = "tests/parity/test_torch_special.py"
T_VAL = f"{T}::test_special_values"
# the records whose forms the peer per-API suite exercised (dtype=, decimals, precision, ndtri)
T_FORMS = "tests/parity/test_special_linalg_forms.py::test_special_forms"
T_NDTRI = "tests/parity/test_special_linalg_forms.py::test_ndtri_multigammaln"
_INT = "integer tensors are not promoted to float as torch does: cast them first"
# the one-input functions: an integer or bool tensor is promoted to float32 first, as torch does


def _promote_int(ctx):
    b = ctx.bound
    for name in ("input", "x"):
        if b.has(name):
            b.set(name, f"_ms_compat.float_of_int({b.code(name)})")

_ONE = ("input",)
_PROMOTED = "an integer or bool tensor is promoted to float32 first (_ms_compat.float_of_int), as torch"
# the functions whose tensor argument torch binds as `x` (x=...), not `input`
_X_NAMED = ("spherical_bessel_j0", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1")
ERFINV_TAILS = ("ops.erfinv loses precision near -1 and 1 (at |x| = 0.997 the result is off by 0.3%, more "
                "closer to 1)")
# Bessel Y and K are undefined below 0: torch gives NaN there, ops.bessel_y*/k* give -inf/inf (and
# ops.bessel_y1 NaN at 0, where torch gives -inf)
_NEG_NAN = "ops.where({{input}} < 0, float('nan'), ops.{op}({{input}}))"

# ndtr / spherical_bessel_j0 through special_compose.py: a Python float constant (ms.Tensor(c, dtype) too, inside
# ms.jit) is rounded to float32 by MindSpore, which float64 inputs would show
for _name, _template in (
        ("bessel_j0", "ops.bessel_j0({input})"), ("bessel_j1", "ops.bessel_j1({input})"),
        ("bessel_y0", _NEG_NAN.format(op="bessel_y0")), ("bessel_y1", "ops.where({input} == 0, float('-inf'), " + _NEG_NAN.format(op="bessel_y1") + ")"),
        ("modified_bessel_i0", "ops.bessel_i0({input})"), ("modified_bessel_i1", "ops.bessel_i1({input})"),
        ("modified_bessel_k0", _NEG_NAN.format(op="bessel_k0")), ("modified_bessel_k1", _NEG_NAN.format(op="bessel_k1")),
        ("scaled_modified_bessel_k0", _NEG_NAN.format(op="bessel_k0e")),
        ("scaled_modified_bessel_k1", _NEG_NAN.format(op="bessel_k1e")),
        ("i0", "ops.bessel_i0({input})"), ("i0e", "ops.bessel_i0e({input})"), ("i1", "ops.bessel_i1({input})"),
        ("i1e", "ops.bessel_i1e({input})"),
        ("digamma", "_ms_compat.special_digamma({input})"), ("psi", "_ms_compat.special_digamma({input})"), ("gammaln", "ops.lgamma({input})"),
        ("erf", "ops.erf({input})"), ("erfc", "ops.erfc({input})"), ("erfinv", "ops.erfinv({input})"),
        ("exp2", "ops.exp2({input})"), ("expm1", "_ms_compat.precise_expm1({input})"), ("log1p", "_ms_compat.special_log1p({input})"),
        ("expit", "ops.sigmoid({input})"), ("sinc", "ops.sinc({input})"),
        ("ndtr", "_ms_compat.special_ndtr({input})"),
        ("spherical_bessel_j0", "_ms_compat.special_spherical_bessel_j0({input})"),
        ("entr", "ops.where({input} > 0, -ops.xlogy({input}, {input}), "
                 "ops.where({input} == 0, ops.zeros_like({input}), ops.full_like({input}, float('-inf'))))"),
        ("log_ndtr", "_ms_compat.special_log_ndtr({input})"),
        ("erfcx", "ops.where({input} < 25, (ops.exp({input}.astype(ms.float64) ** 2) * ops.erfc({input}.astype("
                  "ms.float64))).astype({input}.dtype), 0.5641895835477563 / {input} * (1 - 0.5 / ({input} * "
                  "{input}) + 0.75 / ({input} ** 4)))"),
):
    _note = _PROMOTED
    if "{input} < 0" in _template:
        _note = "NaN below 0, as torch (ops.bessel_y*/k* give -inf/inf there); " + _PROMOTED
    elif _name in ("entr", "ndtr", "spherical_bessel_j0"):
        _note = "composed from ops (" + {"entr": "-x log x, 0 at 0, -inf below 0", "ndtr": "0.5 erfc(-x / sqrt 2)",
                                        "spherical_bessel_j0": "sin(x) / x = sinc(x / pi)"}[_name] + "); " + _PROMOTED
    elif _name == "log_ndtr":
        _note = ("in float64, cast back: log1p(-ndtr(-x)) above 0, an asymptotic series below -20, log(ndtr) between "
                 "(special_compose.py); " + _PROMOTED)
    elif _name == "erfcx":
        _note = ("composed: the closed form evaluated in float64, an asymptotic series where it would under/"
                 "overflow; " + _PROMOTED)
    elif _name == "log1p":
        _note = ("log(u) x / (u - 1), u = 1 + x (special_compose.py): ops.log1p computes log(1 + x), which loses "
                 "small x (float32: 4.6% off at 1e-6, 0 at 1e-12); " + _PROMOTED)
    if _name == "erfinv":
        _note += "; " + ERFINV_TAILS
    if _name in _X_NAMED:
        _template = _template.replace("{input}", "{x}")
    composed(f"torch.special.{_name}", _template, ("x",) if _name in _X_NAMED else _ONE, note=_note, test=T_VAL,
             prepare=_promote_int,
             status=DIFFERENCE if _name == "erfinv" else CONVERTED)

# ops.logit(x, eps)'s gradient turns NaN once ops.logit ran with another eps in the process (seen on CPU, 2.10):
# log(z / (1 - z)) of the clamped input instead, whose gradient is torch's (0 outside [eps, 1 - eps])
LOGIT = "(lambda _ms_z: ops.log(_ms_z / (1 - _ms_z)))(ops.clamp({input}, {eps}, 1 - {eps}))"
LOGIT_NO_EPS = {"eps": "(lambda _ms_z: ops.log(_ms_z / (1 - _ms_z)))({input})"}
LOGIT_NOTE = ("log(z / (1 - z)), z the input clamped to [eps, 1 - eps] when eps is given, as torch (ops.logit's "
              "gradient is unreliable after a call with another eps)")
# other may be a Python number (x.xlogy(3.0)): its NaN test reads it broadcast to a tensor (as ones * other: GRAPH
# mode folds zeros + nan to 0)
XLOGY = ("ops.where(ops.logical_and({input} == 0, ops.logical_not(ops.isnan(ops.ones_like({input} * {other}) * "
         "{other}))), ops.zeros_like({input} * {other}), ops.xlogy({input}, {other}))")
composed("torch.special.xlogy", XLOGY, ("input", "other"), target="mindspore.ops.xlogy",
         note="0 where x == 0 and y is not NaN, as torch (ops.xlogy gives NaN at x = y = 0); tensors only; " + _INT,
         test=T_VAL)
composed("torch.special.xlog1py", "_ms_compat.special_xlog1py({input}, {other})", ("input", "other"),
         target="mindspore.ops.log1p", test=T_VAL,
         note="composed: x * log1p(y), 0 where x == 0 (NaN y stays NaN, as in torch); either may be a number "
              "(special_compose.py); " + _INT)
composed("torch.special.zeta", BROADCAST_PAIR.format(op="zeta", rest=""), ("input", "other"),
         target="mindspore.ops.zeta",
         note="Hurwitz zeta; the inputs are broadcast first (ops.zeta does not broadcast); tensors only (a number "
              "argument: wrap it in ms.Tensor)", test=T_VAL)
composed("torch.special.gammainc", "ops.igamma({input}, {other})", ("input", "other"),
         note="regularized lower incomplete gamma; no gradient with respect to input (torch has none either)",
         test=T_VAL)
composed("torch.special.gammaincc", "ops.igammac({input}, {other})", ("input", "other"),
         note="regularized upper incomplete gamma", test=T_VAL)
composed("torch.special.polygamma", "ops.polygamma(ms.Tensor({n}), {input})", ("n", "input"),
         note="n wrapped in ms.Tensor (ops.polygamma takes a Tensor order)", test=T_VAL)
composed("torch.special.multigammaln", "_ms_compat.special_multigammaln({input}, {p})", ("input", "p"),
         target="mindspore.ops.lgamma", test=T_NDTRI,
         note="the sum of lgamma(x - j / 2), j < p, plus p (p - 1) / 4 log(pi), as torch (ops.mvlgamma raises for "
              "x <= (p - 1) / 2, where torch returns values); p a Python int, as in torch")
composed("torch.special.logit", LOGIT, ("input", "eps"), absent=LOGIT_NO_EPS, target="mindspore.ops.log",
         note=LOGIT_NOTE, test=T_VAL)
composed("torch.special.logsumexp", "_ms_compat.reduce_logsumexp({input}, {dim}, {keepdim})",
         ("input", "dim", "keepdim"), defaults={"keepdim": "False"}, target="mindspore.ops.logsumexp",
         note="-inf for an input with no elements, as torch (templates/compat_parts/"
         "empty_reductions.py: MindSpore 2.10's kernel leaves that result uninitialised)", test="tests/parity/test_empty_reductions.py::test_functions")
# ops.softmax / ops.log_softmax lose digits on CPU (float32 exp off by 6.5e-6, log_softmax in float64 by 5e-6):
# computed in float64 and cast back (templates/compat_parts/special_compose.py)
_SOFTMAX_NOTE = ("exp(x - max) normalised in float64, cast back to the input's dtype (or dtype=, applied first, as "
                 "torch): ops.{op}'s CPU kernel is off by up to 5e-6; nan for a slice of all -inf, as torch")
for _name in ("softmax", "log_softmax"):
    composed(f"torch.special.{_name}", f"_ms_compat.special_{_name}({{input}}, {{dim}}, {{dtype}})",
             ("input", "dim", "dtype"), absent={"dtype": f"_ms_compat.special_{_name}({{input}}, {{dim}})"},
             target=f"mindspore.ops.{_name}", note=_SOFTMAX_NOTE.format(op=_name), test=T_FORMS)
composed("torch.special.round", "_ms_compat.special_round({input}, {decimals})", ("input", "decimals"),
         absent={"decimals": "ops.round({input})"}, target="mindspore.ops.round", test=T_FORMS,
         note="halves to even, as in torch; decimals: torch's arithmetic in the input's dtype (round(x * 10^d) / "
              "10^d; x / 10^-d for d < 0), as ops.round has no decimals")

# no MindSpore counterpart the converter can emit with torch's values: visible TODOs with what to write instead
_POLY = {"chebyshev_polynomial_t": "chebyshev_t", "chebyshev_polynomial_u": "chebyshev_u",
         "chebyshev_polynomial_v": "chebyshev_v", "chebyshev_polynomial_w": "chebyshev_w",
         "shifted_chebyshev_polynomial_t": "shifted_chebyshev_t", "shifted_chebyshev_polynomial_u": "shifted_chebyshev_u",
         "shifted_chebyshev_polynomial_v": "shifted_chebyshev_v", "shifted_chebyshev_polynomial_w": "shifted_chebyshev_w",
         "hermite_polynomial_h": "hermite_h", "hermite_polynomial_he": "hermite_he",
         "laguerre_polynomial_l": "laguerre", "legendre_polynomial_p": "legendre"}
for _name, _kind in _POLY.items():
    composed(f"torch.special.{_name}", f"_ms_compat.special_orthogonal_polynomial('{_kind}', {{x}}, {{n}})",
             ("x", "n"), test=f"{T}::test_special_polynomials",
             note="the three-term recurrence unrolled over n (a float n is truncated to an integer, as torch; GRAPH mode: a Python int n; a tensor n, one "
                  "degree per element, is read in PyNative); float32 rounding of the recurrence")
mapping("torch.special.airy_ai", None, note="MindSpore has no Airy function: scipy.special.airy on .asnumpy() values")
composed("torch.special.ndtri", "_ms_compat.special_ndtri({input})", ("input",), target="mindspore.ops.erfc",
         test=T_NDTRI, note="in float64, cast back: a rational start (Acklam) refined by two Halley steps on "
         "erfc(-x / sqrt 2) / 2 = min(p, 1 - p) (ops.erfinv loses the tails); -inf at 0, inf at 1, nan outside; the "
         "gradient is torch's 1 / phi(x); an integer p gives float32, as torch")
