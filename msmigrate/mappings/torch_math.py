"""torch's elementwise, reduction and matrix functions (torch.acos, torch.nansum, torch.det...) -> `mindspore.ops`.

Proven by tests/parity/test_torch_math.py (values and dtypes in PyNative and ms.jit, gradients where they matter).
Facts (MindSpore 2.10, CPU, checked there): ops.xlogy gives NaN at x = y = 0 (torch 0); ops.fmin has no CPU
kernel; ops.polygamma takes a Tensor order; ops.svd returns (s, u, v); ops.dot needs 2-D inputs (torch.dot is
the 1-D inner product); ops.cholesky has no gradient on CPU. Integer inputs of float functions are computed in
float32, as torch promotes them (MindSpore's CPU kernels refuse them).
"""
from __future__ import annotations

from ..records import CONVERTED, DIFFERENCE, mapping, rule
from .edge_args import PRECISE_ON_CPU, T_PRECISE, precise_note, AS_VECTOR_NOTE, CLAMP_MAX, CLAMP_MIN, CLAMP_NOTE, FLOAT_INPUT_NOTE, T_EDGE, float_function
from .compose import composed
from .torch_linalg import _INV_NOTE, BROADCAST_PAIR, INVERSE, T_SHAPES
from .torch_special import ERFINV_TAILS, LOGIT, LOGIT_NO_EPS, LOGIT_NOTE, XLOGY

T = "tests/parity/test_torch_math.py"
T_EW = f"{T}::test_elementwise"
T_RED = f"{T}::test_reductions"
T_MAT = f"{T}::test_matrix_functions"
_INT = FLOAT_INPUT_NOTE

# ---------------------------------------------------------------- elementwise, one tensor
for _name, _op, _note in (
        ("acos", "acos", _INT), ("arccos", "acos", _INT), ("asin", "asin", _INT), ("arcsin", "asin", _INT),
        ("atan", "atan", _INT), ("arctan", "atan", _INT), ("acosh", "acosh", _INT), ("arccosh", "acosh", _INT),
        ("asinh", "asinh", _INT), ("arcsinh", "asinh", _INT), ("atanh", "atanh", _INT), ("arctanh", "atanh", _INT),
        ("cosh", "cosh", _INT), ("sinh", "sinh", _INT), ("tan", "tan", _INT), ("expm1", "expm1", _INT),
        ("exp2", "exp2", _INT), ("log2", "log2", _INT), ("log10", "log10", _INT), ("erfc", "erfc", _INT),
        ("erfinv", "erfinv", _INT), ("lgamma", "lgamma", _INT), ("digamma", "digamma", _INT),
        ("reciprocal", "reciprocal", ""), ("square", "square", ""), ("frac", "frac", ""),
        ("trunc", "trunc", ""), ("fix", "trunc", ""), ("sgn", "sgn", ""),
        ("rad2deg", "rad2deg", _INT), ("deg2rad", "deg2rad", _INT), ("i0", "bessel_i0", _INT), ("sinc", "sinc", ""),
        ("positive", "positive", ""),
        ("isneginf", "isneginf", ""), ("isposinf", "isposinf", ""), ("isreal", "isreal", ""),
        ("msort", "msort", ""),
        ("argwhere", "argwhere", "int64 indices of the non-zero elements, one row each"),
        ("trace", "trace", "")):
    _test = T_EW if _name not in ("trace", "det", "logdet", "msort", "argwhere") else T_MAT if _name != "msort" \
        else T_RED
    if _name in PRECISE_ON_CPU:
        rule(f"torch.{_name}", f"_ms_compat.precise_{_name}", args=("input",), test=T_PRECISE,
             note=precise_note(_name) + "; " + _note)(float_function(_op, f"_ms_compat.precise_{_name}"))
    elif _note == _INT:
        rule(f"torch.{_name}", f"mindspore.ops.{_op}", args=("input",), test=_test,
             note=_note + ("; " + ERFINV_TAILS if _name == "erfinv" else ""),
             status=DIFFERENCE if _name == "erfinv" else CONVERTED)(
            float_function(_op, "_ms_compat.special_digamma" if _name == "digamma" else ""))
    else:
        composed(f"torch.{_name}", f"ops.{_op}({{input}})", ("input",), note=_note, test=_test)
# ops.signbit compares with 0, so -0.0 reads False: torch reads the sign bit (1 / -0.0 is -inf)
composed("torch.signbit", "ops.where({input} == 0, ops.reciprocal({input} * 1.0) < 0, ops.signbit({input}))",
         ("input",), target="mindspore.ops.signbit", note="the sign bit: True for -0.0 as in torch", test=T_EW)
# Invert has integer kernels only: a bool tensor is logical_not
composed("torch.bitwise_not", "(ops.logical_not({input}) if {input}.dtype == ms.bool_ else ops.invert({input}))",
         ("input",), target="mindspore.ops.invert", note="integer tensors; a bool tensor through ops.logical_not",
         test=T_EW)
mapping("torch.matrix_exp", None, note="ops.matrix_exp has no CPU kernel in MindSpore 2.10: a truncated series or "
        "scipy.linalg.expm on .asnumpy() values")
composed("torch.inverse", INVERSE.replace("{A}", "{input}"), ("input",), target="mindspore.ops.matrix_solve",
         note=_INV_NOTE, test=T_MAT)
composed("torch.imag", "ops.imag({input})", ("input",), note="complex input only, as in torch", test=T_EW)
# a real tensor is itself (the Real kernel also rejects an empty one)
composed("torch.real", "(ops.real({input}) if ops.is_complex({input}) else {input})", ("input",), test=T_EW,
         target="mindspore.ops.real", note="the real part (a real tensor is returned as is)")
# ops.det/logdet/slogdet refuse 0x0 and 1x1 matrices: templates/compat_parts/linalg_shapes.py answers those as torch
composed("torch.det", "_ms_compat.linalg_det({input})", ("input",), target="mindspore.ops.det", test=T_SHAPES,
         note="ops.det; 0x0 and 1x1 matrices as torch")
composed("torch.logdet", "_ms_compat.linalg_logdet({input})", ("input",), target="mindspore.ops.logdet",
         test=T_SHAPES, note="ops.logdet (NaN for a negative determinant, as torch); 0x0 and 1x1 matrices as torch")
composed("torch.slogdet", "_ms_compat.linalg_slogdet({input})", ("input",), target="mindspore.ops.slogdet",
         test=T_SHAPES, note="returns a plain (sign, logabsdet) tuple: unpack it or index [0]/[1]; 0x0 and 1x1 "
                             "matrices as torch")

# ---------------------------------------------------------------- elementwise, two tensors (or a number)
for _name, _op in (("logaddexp", "logaddexp"), ("logaddexp2", "logaddexp2"), ("hypot", "hypot"),
                   ("copysign", "copysign"), ("nextafter", "nextafter"), ("float_power", "float_power"),
                   ("ldexp", "ldexp"), ("gcd", "gcd"), ("lcm", "lcm"), ("bitwise_and", "bitwise_and"),
                   ("bitwise_or", "bitwise_or"), ("bitwise_xor", "bitwise_xor"),
                   ("bitwise_left_shift", "bitwise_left_shift"), ("bitwise_right_shift", "bitwise_right_shift"),
                   ("igamma", "igamma"), ("igammac", "igammac"), ("fmax", "fmax"), ("kron", "kron"),
                   ("inner", "inner"), ("outer", "outer"), ("ger", "outer"), ("mv", "mv")):
    _second = {"mv": "vec", "outer": "vec2", "ger": "vec2", "float_power": "exponent"}.get(_name, "other")
    _guarded = _name in ("inner", "mv")     # torch's zeros over an empty contracted dim (empty_products.py)
    _paired = _name in ("logaddexp", "logaddexp2", "igamma", "igammac")   # int / mixed inputs: float_pair
    composed(f"torch.{_name}", f"ops.{_op}(*_ms_compat.float_pair({{input}}, {{other}}))" if _paired else
             f"{'_ms_compat' if _guarded else 'ops'}.{_op}({{input}}, {{{_second}}})"
             if _name not in ("nextafter", "copysign") else f"_ms_compat.{_name}({{input}}, {{other}})",
             ("input", _second),
             target=f"mindspore.ops.{_op}" if _paired else
             f"mindspore.ops.{_name}" if _name in ("nextafter", "copysign") else
             f"mindspore.ops.{_op}" if _guarded else None,
             note="float64 result, as torch" if _name == "float_power" else
             "an integer or bool input in the other's float dtype (float32 for two), float32 with float64 as "
             "float64, as torch promotes them (_ms_compat.float_pair; MindSpore 2.10 refuses both)" if _paired else
             "through _ms_compat." + _op + " (templates/compat_parts/empty_products.py): torch's zeros when the "
             "contracted dim is empty (MindSpore 2.10's kernel leaves that result uninitialised)" if _guarded else
             "through _ms_compat.nextafter (templates/compat_parts/nextafter.py): broadcast first, float32 stepped "
             "on its bits (MindSpore 2.10's CPU kernel returns a float32 input unchanged)" if _name == "nextafter" else
             "NaN: the other value is taken, as in torch" if _name == "fmax" else
             "through _ms_compat.copysign (templates/compat_parts/nextafter.py): a negative zero's sign too "
             "(ops.copysign reads -0.0 as positive)" if _name == "copysign" else "",
             test=f"tests/parity/test_empty_products.py::{'test_functions' if _name == 'mv' else 'test_static_shapes'}"
             if _guarded else
             T_MAT if _name in ("kron", "outer", "ger") else T_EW)
composed("torch.heaviside", "ops.heaviside({input}, {values})", ("input", "values"), test=T_EW)
composed("torch.xlogy", XLOGY, ("input", "other"), target="mindspore.ops.xlogy",
         note="0 where x == 0 and y is not NaN, as torch (ops.xlogy gives NaN at x = y = 0); tensors only", test=T_EW)
composed("torch.dot", "_ms_compat.dot({input}, {tensor})", ("input", "tensor"), target="mindspore.ops.sum",
         note="the 1-D inner product as a sum of products (ops.dot is a matrix product of >= 2-D inputs), 0 for "
         "empty vectors as torch (the empty-safe sum, templates/compat_parts/empty_reductions.py); torch's "
         "RuntimeError for inputs that are not 1-D, differ in length or in dtype (templates/compat_parts/"
         "empty_products.py dot), which the sum would flatten, broadcast or promote", test=T_MAT)
composed("torch.logit", LOGIT, ("input", "eps"), absent=LOGIT_NO_EPS, target="mindspore.ops.log",
         note=LOGIT_NOTE, test=T_EW)
composed("torch.polygamma", "ops.polygamma(ms.Tensor({n}), {input})", ("n", "input"),
         note="n wrapped in ms.Tensor (ops.polygamma takes a Tensor order)", test=T_EW)
composed("torch.mvlgamma", "ops.mvlgamma({input}, {p})", ("input", "p"), test=T_EW)
composed("torch.clamp_min", CLAMP_MIN.format(x="{input}", bound="{min}"), ("input", "min"), test=T_EDGE,
         target="mindspore.ops.maximum", note=CLAMP_NOTE)
composed("torch.clamp_max", CLAMP_MAX.format(x="{input}", bound="{max}"), ("input", "max"), test=T_EDGE,
         target="mindspore.ops.minimum", note=CLAMP_NOTE)
composed("torch.rsub", "({other} - {alpha} * {input})", ("input", "other", "alpha"), defaults={"alpha": "1"},
         target="mindspore.ops.sub", note="other - alpha * input", test=T_EW)
composed("torch.addcmul", "ops.addcmul({input}, {tensor1}, {tensor2}, {value})", ("input", "tensor1", "tensor2", "value"),
         defaults={"value": "1"}, test=T_EW)
# MindSpore 2.10's ops.addcdiv gives nan / -inf where tensor2 is below about 1e-5 (measured on CPU: 1 + -0.01 * 0 /
# 1e-8 is nan), an Adam denominator's eps where the gradient is 0: torch's formula, written out
composed("torch.addcdiv", "({input} + {value} * {tensor1} / {tensor2})", ("input", "tensor1", "tensor2", "value"),
         defaults={"value": "1"}, target="mindspore.ops.addcdiv", test=T_EW,
         note="input + value * tensor1 / tensor2 written out (MindSpore's ops.addcdiv gives nan where tensor2 is "
              "small)")
composed("torch.nan_to_num", "ops.nan_to_num({input}, {nan}, {posinf}, {neginf})", ("input", "nan", "posinf", "neginf"),
         defaults={"nan": "0.0", "posinf": "None", "neginf": "None"},
         note="nan passed explicitly (torch's default 0.0); infinities become the dtype's extremes", test=T_EW)

# ---------------------------------------------------------------- reductions and scans
composed("torch.logcumsumexp", "_ms_compat.as_vector(lambda _ms_x: ops.logcumsumexp(_ms_x, {dim}), {input})",
         ("input", "dim"), target="mindspore.ops.logcumsumexp", note=AS_VECTOR_NOTE, test=T_RED)
for _name in ("cummax", "cummin"):
    composed(f"torch.{_name}", f"(lambda _ms_v, _ms_i: (_ms_v, _ms_i.astype(ms.int64)))(*_ms_compat.as_vector("
             f"ops.{_name}, {{input}}, {{dim}}))", ("input", "dim"),
             target=f"mindspore.ops.{_name}", test=T_RED,
             note="a plain (values, indices) tuple with int64 indices (no .values/.indices attributes); " + AS_VECTOR_NOTE)
_EMPTY = ("; {0} for an input with no elements, as torch (templates/compat_parts/empty_reductions.py: MindSpore "
          "2.10's kernel leaves that result uninitialised)")
composed("torch.nansum", "_ms_compat.reduce_nansum({input}, {dim}, {keepdim}, dtype={dtype})",
         ("input", "dim", "keepdim", "dtype"), defaults={"dim": "None", "keepdim": "False", "dtype": "None"},
         target="mindspore.ops.nansum", note=_EMPTY.format("0")[2:],
         test="tests/parity/test_empty_reductions.py::test_more_functions")
composed("torch.nanmean", "_ms_compat.reduce_nanmean({input}, {dim}, {keepdim}, dtype={dtype})",
         ("input", "dim", "keepdim", "dtype"), defaults={"dim": "None", "keepdim": "False", "dtype": "None"},
         target="mindspore.ops.nanmean", note=_EMPTY.format("nan")[2:],
         test="tests/parity/test_empty_reductions.py::test_more_functions")
composed("torch.median", "(lambda _ms_v, _ms_i: (_ms_v, _ms_i.astype(ms.int64)))(*_ms_compat.median_dim({input}, "
         "{dim}, {keepdim}))", ("input", "dim", "keepdim"), defaults={"keepdim": "False"},
         absent={"dim": "_ms_compat.median_all({input})"}, target="mindspore.ops.median",
         note="no dim: the lower median of all elements (nan when there is none, as torch); dim: a plain (values, "
              "int64 indices) tuple (no .values/.indices attributes), torch's error for an empty dim "
              "(templates/compat_parts/empty_reductions.py: MindSpore 2.10 gives uninitialised values)",
         test="tests/parity/test_empty_reductions.py::test_more_functions")
composed("torch.nanmedian", "(lambda _ms_v, _ms_i: (_ms_v, _ms_i.astype(ms.int64)))(*ops.nanmedian({input}, {dim}, "
         "{keepdim}))", ("input", "dim", "keepdim"), defaults={"keepdim": "False"},
         absent={"dim": "ops.nanmedian(ops.reshape({input}, (-1,)), 0)[0]"}, target="mindspore.ops.nanmedian",
         note="no dim: the lower median of all elements; dim: a plain (values, int64 indices) tuple "
              "(no .values/.indices attributes)", test=T_RED)
# torch.quantile: mappings/torch_functions_more.py; torch.nanquantile: mappings/tensor_nn_extra.py
composed("torch.aminmax", "(ops.amin({input}, {dim}, {keepdim}), ops.amax({input}, {dim}, {keepdim}))",
         ("input", "dim", "keepdim"), defaults={"dim": "None", "keepdim": "False"}, target="mindspore.ops.amin",
         status=DIFFERENCE, note="a plain (min, max) tuple (no .min/.max attributes); NaN inputs: MindSpore ignores "
                                 "NaN where torch propagates it", test=T_RED)
composed("torch.histc", "ops.histc({input}, {bins}, {min}, {max})", ("input", "bins", "min", "max"),
         defaults={"bins": "100", "min": "0", "max": "0"}, test=T_RED)
mapping("torch.bincount", "_ms_compat.bincount", args=("input", "weights", "minlength"),
        target_args=("input", "weights", "minlength"), test=T_RED,
        note="counts are int64 as in torch (ops.bincount gives float32 counts); weighted sums float32 for float32 "
             "weights, else float64, as torch (ops.unsorted_segment_sum); an empty input gives minlength zeros "
             "(templates/compat_parts/empty_reductions.py)")
composed("torch.bucketize", "ops.bucketize({input}, {boundaries}, right={right}).astype(ms.int32 if {out_int32} else "
         "ms.int64)", ("input", "boundaries", "out_int32", "right"), defaults={"out_int32": "False", "right": "False"},
         literal=("out_int32",), target="mindspore.ops.bucketize", test=T_RED)
composed("torch.searchsorted", "(lambda _ms_s: (ops.bucketize({values}, _ms_s, right={right} or {side} == 'right') if "
         "_ms_s.ndim == 1 else ops.searchsorted(_ms_s, {values}, out_int32=True, right={right}, side={side}))"
         ".astype(ms.int32 if {out_int32} else ms.int64))({sorted_sequence} if {sorter} is None else "
         "ops.gather_elements({sorted_sequence}, -1, {sorter}))",
         ("sorted_sequence", "values", "out_int32", "right", "side", "sorter"),
         defaults={"out_int32": "False", "right": "False", "side": "None", "sorter": "None"},
         literal=("out_int32",), target="mindspore.ops.searchsorted",
         keywords={"input": "values"},   # torch's keyword (its docs say values, which torch refuses)
         note="1-D boundaries with values of any shape go through ops.bucketize (ops.searchsorted wants matching "
              "leading dims); with sorter= the sequence is first put in that order (ops.gather_elements). Every SearchSorted here computes int32 (cast after): MindSpore 2.10's "
              "CPU kernel keeps the output dtype of its first run and fails on the other", test=T_RED)
composed("torch.cov", "ops.cov({input}, correction={correction}, fweights={fweights}, aweights={aweights})",
         ("input", "correction", "fweights", "aweights"),
         defaults={"correction": "1", "fweights": "None", "aweights": "None"}, test=T_RED)
# torch.trapz is torch.trapezoid (dx= too)
for _name in ("trapezoid", "trapz"):
    composed(f"torch.{_name}", "ops.trapz({y}, {x}, dx=float({dx}), dim={dim})", ("y", "x", "dx", "dim"),
             defaults={"x": "None", "dx": "1.0", "dim": "-1"}, note="dx passed as a float (ops.trapz refuses an int)",
             test=T_RED)
composed("torch.renorm", "ops.renorm({input}, {p}, {dim}, float({maxnorm}))", ("input", "p", "dim", "maxnorm"),
         target="mindspore.ops.renorm", note="maxnorm passed as a float (ops.renorm refuses an int)", test=T_RED)

# ---------------------------------------------------------------- matrix functions of the torch namespace
composed("torch.diag_embed", "_ms_compat.diag_embed({input}, {offset}, {dim1}, {dim2})", ("input", "offset", "dim1", "dim2"),
         defaults={"offset": "0", "dim1": "-2", "dim2": "-1"}, target="mindspore.ops.diag_embed", test=T_MAT,
         note="a complex input on its real and imaginary parts (ops.diag_embed has no complex kernel)")
composed("torch.diagflat", "ops.diagflat({input}, {offset})", ("input", "offset"), defaults={"offset": "0"}, test=T_MAT)
composed("torch.diagonal", "ops.diagonal({input}, {offset}, {dim1}, {dim2})", ("input", "offset", "dim1", "dim2"),
         defaults={"offset": "0", "dim1": "0", "dim2": "1"}, test=T_MAT)
composed("torch.take", "ops.gather(ops.reshape({input}, (-1,)), ops.where({index} < 0, {index} + {input}.size, "
         "{index}), 0)", ("input", "index"), target="mindspore.ops.gather",
         note="gather from the flattened input (ops.take has no CPU kernel); negative indices count from the end",
         test=T_MAT)
composed("torch.cross", BROADCAST_PAIR.format(op="cross", rest=", {dim}"), ("input", "other", "dim"),
         defaults={"dim": "None"}, target="mindspore.ops.cross",
         note="dim=None: the first dimension of size 3, as torch (which warns about it); the inputs are broadcast "
              "first (ops.cross does not broadcast)", test=T_MAT)
composed("torch.vander", "(ops.flip(ops.vander({x}, {N}), (-1,)) if {increasing} else ops.vander({x}, {N}))",
         ("x", "N", "increasing"), defaults={"N": "None", "increasing": "False"}, target="mindspore.ops.vander",
         test=T_MAT)
for _name in ("addmv", "addr", "addbmm"):
    _a = {"addmv": ("input", "mat", "vec"), "addr": ("input", "vec1", "vec2"),
          "addbmm": ("input", "batch1", "batch2")}[_name]
    composed(f"torch.{_name}", f"ops.{_name}({{{_a[0]}}}, {{{_a[1]}}}, {{{_a[2]}}}, beta={{beta}}, alpha={{alpha}})",
             _a + ("beta", "alpha"), defaults={"beta": "1", "alpha": "1"}, test=T_MAT)
composed("torch.matrix_power", "ops.matrix_power({input}, {n})", ("input", "n"), test=T_MAT)
composed("torch.cholesky", "ops.cholesky({input}, {upper})", ("input", "upper"), defaults={"upper": "False"},
         status=DIFFERENCE, note="no gradient on CPU (CholeskyGrad has no CPU kernel: differentiating it raises)",
         test=T_MAT)
# torch's keywords are input/input2 (its docs name them B/L, which torch refuses)
composed("torch.cholesky_solve", "ops.cholesky_solve({B}, {L}, {upper})", ("B", "L", "upper"),
         defaults={"upper": "False"}, test=T_MAT, keywords={"input": "B", "input2": "L"})
composed("torch.cholesky_inverse", "ops.cholesky_inverse({L}, {upper})", ("L", "upper"), defaults={"upper": "False"},
         test=T_MAT, keywords={"input": "L"})
composed("torch.svd", "(lambda _ms_x: (lambda _ms_u, _ms_s, _ms_vh: (_ms_u, _ms_s, _ms_vh.swapaxes(-1, -2)) if "
         "{compute_uv} else (ops.zeros(_ms_x.shape[:-1] + _ms_x.shape[-2:-1], _ms_x.dtype), _ms_s, "
         "ops.zeros(_ms_x.shape[:-2] + _ms_x.shape[-1:] * 2, _ms_x.dtype)))(*_ms_compat.linalg_svd(_ms_x, not {some} and {compute_uv})))"
         "({input})",
         ("input", "some", "compute_uv"), defaults={"some": "True", "compute_uv": "True"},
         target="mindspore.ops.svd",
         note="(U, S, V) as torch.svd returns them (V not transposed); some=True is the reduced form; singular "
              "vectors are unique only up to sign; compute_uv=False: U and V zero-filled, square (m x m, n x n) "
              "whatever some says, as torch (S from the reduced factorisation, whose gradient MindSpore has)", test=T_MAT)
composed("torch.qr", "ops.qr({input}, 'reduced' if {some} else 'complete')", ("input", "some"),
         defaults={"some": "True"}, note="a plain (Q, R) tuple; some=False is mode 'complete'", test=T_MAT)
composed("torch.pinverse", "_ms_compat.linalg_pinv({input}, rtol={rcond})", ("input", "rcond"),
         defaults={"rcond": "1e-15"}, target="mindspore.ops.svd", test=T_SHAPES,
         note="torch.linalg.pinv with rtol=rcond: V diag(1/s) U^T over the singular values above rcond * the largest")
composed("torch.fmin", "ops.where(ops.isnan({other}), {input}, ops.where(ops.isnan({input}), {other}, "
         "ops.minimum({input}, {other})))", ("input", "other"), target="mindspore.ops.minimum",
         note="composed (ops.fmin has no CPU kernel): a NaN operand yields the other value, as in torch", test=T_EW)
