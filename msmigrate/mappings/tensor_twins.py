"""torch.Tensor methods that are a converted torch function with the receiver as its first argument
(`x.erfinv()` is `torch.erfinv(x)`, `x.index_add(0, i, s)` is `torch.index_add(x, 0, i, s)`).

Each record converts the method call as the call `torch.NAME(receiver, *args, **kwargs)` through the torch
function's own record (same conversion, same notes, same TODOs for arguments it cannot translate), so a fix to
the function reaches its method. Only names whose method signature is the function's less its first parameter
are listed; the proof is a parity case of the method itself in tests/parity/test_tensor_twins.py.
"""
from __future__ import annotations

import libcst as cst

from ..records import REGISTRY, rule

T = "tests/parity/test_tensor_twins.py"

# method == torch.NAME(self, ...) with the same parameters after the first
TWINS = (
    "absolute acos acosh addbmm addcdiv addcmul addmm addmv addr allclose aminmax arccos arccosh arcsin arcsinh "
    "arctan arctan2 arctanh argwhere asin asinh atan2 atanh baddbmm bincount bitwise_and bitwise_left_shift "
    "bitwise_not bitwise_or bitwise_right_shift bitwise_xor broadcast_to cholesky cholesky_inverse cholesky_solve "
    "copysign corrcoef count_nonzero cov cross cummax cummin cumprod deg2rad det diag diag_embed diagflat diagonal "
    "diagonal_scatter diff digamma dist divide dot dsplit equal erf erfc erfinv exp2 fix fliplr flipud float_power "
    "fmax fmin frac frexp gcd geqrf ger greater greater_equal hardshrink heaviside histc hsplit hypot i0 igamma igammac "
    "index_add index_copy index_fill inner inverse is_nonzero is_same_size isclose isfinite isinf isnan isneginf "
    "isposinf isreal kron kthvalue lcm ldexp lerp less less_equal lgamma log10 log2 logaddexp logaddexp2 "
    "logcumsumexp logdet logical_and logical_not logical_or logical_xor logit logsumexp matrix_power maximum median "
    "minimum moveaxis movedim msort multiply mv mvlgamma nan_to_num nanmean nanmedian nansum narrow_copy nextafter "
    "not_equal orgqr ormqr outer pinverse polygamma positive prelu qr rad2deg ravel renorm repeat_interleave rot90 scatter_add "
    "select select_scatter sgn signbit sinc slice_scatter slogdet split_with_sizes subtract svd swapdims take "
    "take_along_dim tensor_split tile trace triangular_solve true_divide trunc unique unique_consecutive "
    "unsafe_chunk unsafe_split unsafe_split_with_sizes vdot vsplit xlogy").split()
# twins of the records of mappings/torch_functions_more.py and torch_complex.py: their parity cases sit in the
# function's own table (the record names the function's test)
TWINS_CASED_WITH_FUNCTION = ("masked_scatter put is_signed unfold histogram quantile scatter_reduce nonzero_static mode "
                             "conj conj_physical resolve_conj resolve_neg angle "
                             "adjoint is_complex as_strided istft stft "
                             # index results cast to torch's int64: tests/parity/test_index_dtypes.py
                             "argmin topk sort argsort").split()
# random draws: proven by statistics (tests/parity/test_torch_functions_more.py::test_random_copies)
RANDOM_TWINS = ("bernoulli", "multinomial")
# method -> the torch function of another name it is (x.unfold(d, size, step) is torch.unfold_copy(x, ...))
TWIN_OF = {"unfold": "unfold_copy"}
# the receiver is not the function's first parameter: torch.polygamma(n, input) is x.polygamma(n)
RECEIVER_KEYWORD = {"polygamma": "input"}
# Tensor.tile(*dims) also takes the sizes as separate arguments: they become one tuple
VARARG_SIZES = frozenset({"tile"})
# names that numpy arrays, pandas objects, sympy matrices or selectors also have: converted only on a receiver
# known to be a tensor
SHARED_NAMES = frozenset({"cumprod", "diagonal", "dot", "ravel", "take", "trace", "cummax", "cummin", "diff",
                          "median", "multiply", "divide", "subtract", "unique", "cov", "det", "cross", "inverse",
                          "select", "equal", "qr", "svd", "diag", "outer", "inner", "kron", "tile", "put", "unfold",
                          "mode", "quantile", "histogram", "bernoulli", "multinomial", "argmin", "sort",
                          "argsort"})


def _pack_sizes(call: cst.Call) -> cst.Call:
    """`x.tile(2, 3)` / `x.tile(2)` -> the sizes as one tuple argument, as torch.tile(x, (2, 3)) takes them."""
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args) or not positional:
        return call
    if len(positional) == 1 and not isinstance(positional[0].value, cst.Integer):
        return call     # one tuple, list or name holding the sizes
    elements = [cst.Element(a.value) for a in positional]
    sizes = cst.Arg(cst.Tuple(elements if len(elements) > 1 else [cst.Element(elements[0].value,
                                                                              comma=cst.Comma())]))
    return call.with_changes(args=[sizes] + [a for a in call.args if a.keyword is not None])


def _as_function_call(fn_record, name: str):
    receiver_keyword = RECEIVER_KEYWORD.get(name)

    def convert(ctx):
        """Rewrite `recv.NAME(args)` as `NAME(recv, args)` and apply the torch function's record to it."""
        def with_receiver(call: cst.Call, receiver) -> cst.Call:
            if receiver_keyword:
                arg = cst.Arg(receiver, keyword=cst.Name(receiver_keyword), equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
                return call.with_changes(func=cst.Name(name), args=list(call.args) + [arg])
            return call.with_changes(func=cst.Name(name), args=[cst.Arg(receiver)] + list(call.args))

        tr = ctx.tr
        call = ctx.bound.call
        if name in VARARG_SIZES:
            call = _pack_sizes(call)
        receiver = ctx.receiver
        if getattr(receiver, "lpar", None) and not isinstance(receiver, (cst.Tuple, cst.GeneratorExp)):
            receiver = receiver.with_changes(lpar=[], rpar=[])   # an argument needs no parentheses
        plain = with_receiver(call, receiver)
        original = with_receiver(ctx.original, ctx.original.func.value)
        before = len(tr.sites)
        out = tr._apply(original, plain, fn_record, fn_record.source, receiver=None)
        del tr.sites[before:]   # the site is reported once, as the method
        return out

    return convert


def _register() -> None:
    for name in TWINS + TWINS_CASED_WITH_FUNCTION + list(RANDOM_TWINS):
        if "Tensor." + name in REGISTRY:
            continue
        fn = REGISTRY.get("torch." + TWIN_OF.get(name, name))
        if fn is None or (fn.target is None and fn.rule is None):
            continue
        params = tuple(p for p in fn.args if p != RECEIVER_KEYWORD.get(name, fn.args[0] if fn.args else None))
        note = f"as {fn.source}(x, ...)" + (f": {fn.note}" if fn.note else "")
        rule(f"Tensor.{name}", fn.target, args=params, note=note, status=fn.status, tensor_only=name in SHARED_NAMES,
             test=fn.test if name in TWINS_CASED_WITH_FUNCTION else
             "tests/parity/test_torch_functions_more.py::test_random_copies" if name in RANDOM_TWINS else
             f"{T}::test_tensor_twins")(
            _as_function_call(fn, name))


_register()
