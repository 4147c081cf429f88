"""torch.nn.functional -> classic mindspore.ops (they run on CPU, GPU and Ascend).

`import torch.nn.functional as F; F.relu(x)` resolves to torch.nn.functional.relu,
which is what these records are keyed on. Every record names the parity test in
tests/parity/test_functional.py that runs it against torch (PyNative, GRAPH mode and,
for differentiable ops, gradients).

Rules of the house:
- `inplace=` is dropped (MindSpore has no working in-place arithmetic on CPU); the
  in-place spellings (`F.relu_`) are TODOs, since their callers rely on mutation.
- Where MindSpore's op differs, the emitted code restores torch's semantics (defaults
  passed explicitly, composed expressions), or the site becomes a TODO with the reason.
- Composed expressions that need an argument more than once bind it once through an
  immediately-called lambda (which GRAPH mode compiles) unless it is a plain name.
"""
from __future__ import annotations

import ast
import re
from typing import Dict, Optional, Sequence

import libcst as cst

from ..callsite import UnsupportedSite
from ..records import mapping, rule
from .compose import composed
from .edge_args import KERNEL_ERROR_NOTE, T_PRECISE, precise_note, EMPTY_BATCH_NOTE, LOG_SOFTMAX_NOTE, LOG_SOFTMAX_TEST, T_EDGE, padding_per_side

T = "tests/parity/test_functional.py"
P = "torch.nn.functional."

_SIMPLE = re.compile(r"^(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*|-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|None|True|False)$")


# ----------------------------------------------------------------------------- helpers
def _literal(code: Optional[str]):
    """The Python value of a literal argument, or raise ValueError."""
    if code is None:
        raise ValueError("absent")
    import ast
    return ast.literal_eval(code)


def _lit_or(code: Optional[str], default=None):
    try:
        return _literal(code)
    except (ValueError, SyntaxError, TypeError):
        return default


def _is_literal(code: Optional[str]) -> bool:
    try:
        _literal(code)
        return True
    except (ValueError, SyntaxError, TypeError):
        return False


def _given(b, name: str) -> bool:
    """The argument is present and not the literal None."""
    return b.has(name) and b.code(name) != "None"


def _paren(code: str) -> str:
    """An argument's code, parenthesised unless it is a plain name or number (for operator contexts)."""
    code = code.strip()
    return code if _SIMPLE.match(code) else f"({code})"


def _let(ctx, values: Dict[str, str], body: str) -> cst.BaseExpression:
    """Emit `body` (a template with {name} slots). Values that are plain names or
    literals are inlined; others are evaluated once through `(lambda name_: body)(value)`."""
    params, args, subs = [], [], {}
    everything = body + " " + " ".join(values.values())
    for name, code in values.items():
        if _SIMPLE.match(code.strip()) or _is_literal(code):
            subs[name] = code.strip() if code.strip()[:1] in "([{'\"" else _paren(code)
        else:
            param = name + "_"
            while re.search(rf"\b{param}\b", everything):   # never shadow a name the call uses
                param += "_"
            params.append(param)
            args.append(code)
            subs[name] = param
    text = body
    for name, code in subs.items():
        text = text.replace("{" + name + "}", code)
    if params:
        text = f"(lambda {', '.join(params)}: {text})({', '.join(args)})"
    return ctx.expr(text)


def _need(b, name: str) -> str:
    code = b.code(name)
    if code is None:
        raise UnsupportedSite(f"argument {name} is required")
    return code


def _reject(b, name: str, ok: Sequence[str], why: str) -> None:
    if b.has(name) and b.code(name) not in ok:
        raise UnsupportedSite(f"argument {name}={b.code(name)}: {why}")


_LEGACY = ("size_average", "reduce")
_ABSENT_FLAG = object()


def legacy_reduction(b) -> None:
    """Translate torch's deprecated size_average/reduce flags into reduction=, as torch's
    _Reduction.legacy_get_string does (None counts as True): both true -> 'mean', only
    reduce -> 'sum', reduce false -> 'none'. Non-literal flags raise UnsupportedSite."""
    given = {n: b.code(n) for n in _LEGACY if b.has(n)}
    if all(code == "None" for code in given.values()):
        for n in given:
            b.remove(n)
        return
    flags = {}
    for n in _LEGACY:
        code = given.get(n, "None")
        value = _lit_or(code, _ABSENT_FLAG)
        if value is _ABSENT_FLAG or not (value is None or isinstance(value, (bool, int))):
            raise UnsupportedSite(f"argument {n}={code}: the deprecated size_average/reduce flags are only "
                                  "translated when they are literals; use reduction=")
        flags[n] = True if value is None else bool(value)
    reduction = "'mean'" if flags["size_average"] and flags["reduce"] else "'sum'" if flags["reduce"] else "'none'"
    for n in given:
        b.remove(n)
    b.set("reduction", reduction)


def _deprecated_reduction(b) -> None:
    # literal size_average/reduce flags become reduction= (torch's rule); others make a TODO
    legacy_reduction(b)


def _tuple_elems(code: str, n: int):
    """A literal int or n-tuple -> list of n element codes; None if not literal."""
    v = _lit_or(code)
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return [str(v)] * n
    if isinstance(v, (tuple, list)) and len(v) == n and all(isinstance(e, int) and not isinstance(e, bool) for e in v):
        return [str(e) for e in v]
    if isinstance(v, (tuple, list)) and len(v) == 1 and n == 1:
        return [str(v[0])]
    return None


def _one(code: str) -> str:
    """A 1-d size argument (int or 1-tuple) -> the int's code."""
    v = _lit_or(code)
    if isinstance(v, (tuple, list)) and len(v) == 1:
        return repr(v[0])
    return code


# ----------------------------------------------------------------------------- activations
_ACT = f"{T}::test_activations"


def _simple(name, target, torch_args, ms_args, rename=None, drop=(), test=_ACT, **kw):
    mapping(P + name, target, args=torch_args, target_args=ms_args, rename=rename or {}, drop=drop, test=test, **kw)


_F64 = " (MindSpore's kernel computes it in float32)"
_simple("relu", "mindspore.ops.relu", ("input", "inplace"), ("input",), drop=("inplace",),
        note="inplace dropped (ops.relu's own inplace is never emitted)")
_simple("relu6", "_ms_compat.relu6", ("input", "inplace"), ("input",), drop=("inplace",),
        note="ops.relu6, a clamp for float64 (ReLU6's kernel takes float16/float32 only)")
_simple("celu", "_ms_compat.celu", ("input", "alpha", "inplace"), ("input", "alpha"), drop=("inplace",),
        note="ops.celu, and torch's formula in float64 for a float64 input" + _F64)
_simple("silu", "mindspore.ops.silu", ("input", "inplace"), ("input",), drop=("inplace",),
        note=KERNEL_ERROR_NOTE.format(name="silu", error="2.4e-6"))
_simple("mish", "_ms_compat.mish", ("input", "inplace"), ("input",), drop=("inplace",),
        note="ops.mish, and torch's formula in float64 for a float64 input" + _F64)
_simple("hardswish", "mindspore.ops.hardswish", ("input", "inplace"), ("input",), drop=("inplace",))
_simple("hardsigmoid", "mindspore.ops.hardsigmoid", ("input", "inplace"), ("input",), drop=("inplace",))
_simple("hardtanh", "mindspore.ops.hardtanh", ("input", "min_val", "max_val", "inplace"),
        ("input", "min_val", "max_val"), drop=("inplace",))
_simple("sigmoid", "mindspore.ops.sigmoid", ("input",), ("input",),
        note=KERNEL_ERROR_NOTE.format(name="sigmoid", error="2.3e-6"))
_simple("tanh", "_ms_compat.precise_tanh", ("input",), ("input",), note=precise_note("tanh"), test=T_PRECISE)
_simple("softplus", "_ms_compat.softplus", ("input", "beta", "threshold"), ("input", "beta", "threshold"),
        note="ops.softplus, and torch's formula in float64 for a float64 input" + _F64)
_simple("softsign", "mindspore.ops.softsign", ("input",), ("x",), {"input": "x"})
_simple("logsigmoid", "mindspore.ops.logsigmoid", ("input",), ("x",), {"input": "x"})
# torch's weight may be 0-d (one slope); ops.prelu takes a 1-D weight only, and no input without elements
composed(P + "prelu", "(ops.prelu({input}, ops.reshape({weight}, (-1,))) if {input}.size else {input})",
         ("input", "weight"), test=T_EDGE, target="mindspore.ops.prelu",
         note="the weight is passed 1-D (torch also takes a 0-d slope); an input with no elements is returned as it is")
_simple("glu", "mindspore.ops.glu", ("input", "dim"), ("x", "axis"), {"input": "x", "dim": "axis"})
_simple("gelu", "mindspore.ops.gelu", ("input", "approximate"), ("input", "approximate"),
        note="approximate='none'/'tanh' as in torch")
_simple("leaky_relu", "_ms_compat.leaky_relu", ("input", "negative_slope", "inplace"), ("input", "alpha"),
        {"negative_slope": "alpha"}, ("inplace",), extra={"alpha": "0.01"},
        note="torch's default slope 0.01 passed explicitly; ops.where(x > 0, x, x * slope): torch's gradient (the "
             "slope) at an input of exactly 0, where MindSpore's leaky_relu gives (1 + slope) / 2")
_simple("tanhshrink", "mindspore.ops.tanhshrink", ("input",), ("input",))
_simple("hardshrink", "mindspore.ops.hardshrink", ("input", "lambd"), ("input", "lambd"))
_simple("softshrink", "mindspore.ops.softshrink", ("input", "lambd"), ("input", "lambd"))
_simple("threshold", "mindspore.ops.threshold", ("input", "threshold", "value", "inplace"),
        ("input", "thr", "value"), {"threshold": "thr"}, ("inplace",))


def _elu(ctx):
    b = ctx.bound
    b.remove("inplace")
    alpha = b.code("alpha")
    if alpha is None or _lit_or(alpha) == 1:
        b.remove("alpha")
        b.rename("input", "input_x")
        return None
    # MindSpore's Elu kernel only accepts alpha=1.0: torch's formula (templates/compat_parts/nn_extra.py)
    return ctx.expr(f"_ms_compat.elu({_need(b, 'input')}, {alpha})")


rule(P + "elu", "mindspore.ops.elu", args=("input", "alpha", "inplace"), target_args=("input_x",),
     note="MindSpore's Elu only supports alpha=1.0; other alphas through _ms_compat.elu, "
          "where(x > 0, x, alpha * expm1(x)) with torch's gradient at 0", test=_ACT)(_elu)
mapping(P + "selu", "_ms_compat.selu", args=("input", "inplace"), target_args=("input",), drop=("inplace",),
     note="_ms_compat.selu: scale * elu(x, alpha) with torch's constants and torch's gradient at 0 (that of "
          "MindSpore 2.10's ops.selu is wrong for negative inputs on CPU)", test=_ACT)

# the other in-place activations (F.relu_(x) as a statement) are rebindings: mappings/torch_inplace_functions.py
for _name in ("rrelu_",):
    mapping(P + _name, None, note="in-place activation: MindSpore has no in-place arithmetic; rewrite as "
                                  "x = F." + _name[:-1] + "(x)", test=f"{T}::test_todo_sites")
# F.rrelu: mappings/tensor_nn_extra.py


# ----------------------------------------------------------------------------- softmax family
_SM = f"{T}::test_softmax"


def _softmax_rule(kind):
    def r(ctx):
        b = ctx.bound
        if not _given(b, "dim"):
            if kind == "softmin" or b.has("dtype") or b.starred:
                raise UnsupportedSite("implicit dim: torch picks it from the input's rank (deprecated); pass dim=")
            # torch's rule, applied to the input's rank at run time
            x = _need(b, "input")
            op = f"_ms_compat.{kind}"   # softmax or log_softmax (softmin refused above)
            return ctx.expr(f"{op}({x}, _ms_compat.implicit_softmax_dim({_paren(x)}.ndim))")
        b.remove("_stacklevel")
        dtype = b.code("dtype") if _given(b, "dtype") else None
        b.remove("dtype")
        if dtype:
            b.set("dtype", dtype)
        b.rename("dim", "axis")
        return None
    return r


rule(P + "softmax", "_ms_compat.softmax", args=("input", "dim", "_stacklevel", "dtype"),
     target_args=("input", "axis"), note="dim -> axis; through _ms_compat.softmax (templates/compat_parts/softmax_slices.py): a slice of all -inf gives torch's nan, where MindSpore 2.10's CPU kernel gives 0 and garbage in the slices after it", test=_SM)(_softmax_rule("softmax"))
rule(P + "softmin", "_ms_compat.softmin", args=("input", "dim", "_stacklevel", "dtype"),
     target_args=("input", "axis"), note="dim -> axis; implicit dim is not converted; through _ms_compat.softmin "
     "(templates/compat_parts/softmax_slices.py): a slice of all +inf gives torch's nan, where MindSpore 2.10's "
     "ops.softmin gives 0 and garbage in the slices after it", test=_SM)(_softmax_rule("softmin"))
rule(P + "log_softmax", "_ms_compat.log_softmax", args=("input", "dim", "_stacklevel", "dtype"),
     target_args=("input", "axis", "dtype"), note="dim -> axis; dtype casts the input first; without dim: torch's "
     "rank rule (_ms_compat.implicit_softmax_dim); " + LOG_SOFTMAX_NOTE,
     test=LOG_SOFTMAX_TEST)(_softmax_rule("log_softmax"))


def _normalize(ctx):
    b = ctx.bound
    _reject(b, "out", ("None",), "out= is not supported")
    p = b.code("p") or "2.0"
    dim = b.code("dim") or "1"
    eps = b.code("eps") or "1e-12"
    return _let(ctx, {"input": _need(b, "input")},
                f"{{input}} / ops.clamp(ops.norm({{input}}, {p}, {dim}, keepdim=True), min={eps})")


rule(P + "normalize", None, args=("input", "p", "dim", "eps", "out"),
     note="input / clamp(norm(input, p, dim, keepdim=True), min=eps), torch's formula", test=_SM)(_normalize)


# ----------------------------------------------------------------------------- linear, dropout
_LIN = f"{T}::test_linear_dropout"
_simple("linear", "_ms_compat.dense", ("input", "weight", "bias"), ("input", "weight", "bias"),
        test="tests/parity/test_empty_products.py::test_affine",
        note="weight is (out, in) in both; ops.dense through _ms_compat.dense (templates/compat_parts/"
             "empty_products.py): the bias alone when in_features is 0, as torch (MindSpore 2.10's kernel leaves "
             "that product uninitialised)")
_simple("bilinear", "mindspore.ops.bidense", ("input1", "input2", "weight", "bias"),
        ("input1", "input2", "weight", "bias"), test=_LIN)
for _name in ("dropout",):   # dropout1d/2d/3d: mappings/channel_dropout.py
    _simple(_name, f"mindspore.ops.{_name}", ("input", "p", "training", "inplace"), ("input", "p", "training"),
            drop=("inplace",), test=_LIN,
            note="p is the drop probability in both; the random stream differs from torch's" +
                 ("" if _name == "dropout" else "; batched input only (torch also accepts unbatched)"))
# alpha_dropout, feature_alpha_dropout: mappings/tensor_nn_extra.py


# ----------------------------------------------------------------------------- convolution
_CONV = f"{T}::test_conv"


def _conv_rule(ctx):
    b = ctx.bound
    x = _need(b, "input")
    # float64 has no convolution kernel: a MigrationError naming this line, not MindSpore's TypeError
    where = f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"
    name = (ctx.tr._torch_qname(ctx.original.func) or "conv").rsplit(".", 1)[-1]
    b.set("input", f"_ms_compat.conv_input({x}, {name!r}, {where!r})")
    ctx.tr.uses_compat = True
    p = b.code("padding")
    if p is None or _lit_or(p) == 0:
        b.remove("padding")      # MindSpore's functional conv defaults to pad_mode='valid', padding=0
        return None
    if p[0] in "'\"" and p.strip("'\"") in ("same", "valid"):
        b.remove("padding")
        b.set("pad_mode", p)
        return None
    b.set("pad_mode", "'pad'")   # an int or one value per spatial dim, as in torch
    b.order.remove("padding")
    b.order.append("padding")
    b.positional["padding"] = False
    return None


_CONV_ARGS = ("input", "weight", "bias", "stride", "padding", "dilation", "groups")
for _d in (1, 2, 3):
    rule(f"{P}conv{_d}d", f"mindspore.ops.conv{_d}d", args=_CONV_ARGS,
         target_args=("input", "weight", "bias", "stride", "pad_mode", "padding", "dilation", "groups"),
         note="padding -> pad_mode='pad' + padding (int or one value per spatial dim), or pad_mode='same'/'valid'; "
              "a padding held in a variable must be numeric; a float64 input (no MindSpore convolution kernel takes "
              "it) raises MigrationError naming the line", test=_CONV)(_conv_rule)


def _conv_transpose(nd):
    def r(ctx):
        b = ctx.bound
        x, w = _need(b, "input"), _need(b, "weight")
        vals = {}
        for name, default in (("stride", "1"), ("padding", "0"), ("output_padding", "0"), ("dilation", "1")):
            code = b.code(name) or default
            el = _tuple_elems(code, nd)
            if el is None:
                raise UnsupportedSite(f"{name}={code} must be a literal int or tuple to be converted")
            vals[name] = (["1"] + el if nd == 1 else el) if name in ("stride", "dilation") else (["0"] + el if nd == 1 else el)
        g = _paren(b.code("groups") or "1")
        s, p, op, d = vals["stride"], vals["padding"], vals["output_padding"], vals["dilation"]
        xi, wi = ("ops.expand_dims({x}, 2)", "ops.expand_dims({w}, 2)") if nd == 1 else ("{x}", "{w}")
        xs = lambda i: f"{{x}}.shape[{i}]" if nd == 2 else ("1" if i == 2 else f"{{x}}.shape[{i - 1}]")
        ws = lambda i: f"{{w}}.shape[{i}]" if nd == 2 else ("1" if i == 2 else f"{{w}}.shape[{i - 1}]")
        out_hw = [f"({xs(2 + i)} - 1) * {s[i]} - {2 * int(p[i])} + {d[i]} * ({ws(2 + i)} - 1) + {int(op[i]) + 1}"
                  for i in range(2)]
        ksize = "{w}.shape[2:]" if nd == 2 else "(1, {w}.shape[2])"
        body = (f"ops.Conv2DTranspose(out_channel={{w}}.shape[0], kernel_size={ksize}, pad_mode='pad', "
                f"pad=({p[0]}, {p[0]}, {p[1]}, {p[1]}), stride=({s[0]}, {s[1]}), dilation=({d[0]}, {d[1]}), "
                f"group={g})({xi}, {wi}, ({{x}}.shape[0], {{w}}.shape[1] * {g}, {out_hw[0]}, {out_hw[1]}))")
        where = f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"
        # float64 has no convolution kernel: a MigrationError naming this line, not MindSpore's TypeError
        values = {"x": f"_ms_compat.conv_input({x}, 'conv_transpose{nd}d', {where!r})", "w": w}
        if _given(b, "bias"):
            body = f"ops.bias_add({body}, {{bias}})"
            values["bias"] = b.code("bias")
        if nd == 1:
            body = f"ops.squeeze({body}, 2)"
        return _let(ctx, values, body)
    return r


for _d in (1, 2):
    rule(f"{P}conv_transpose{_d}d", None,
         args=("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation"),
         note="ops.conv_transpose2d has no CPU kernel: emitted as the Conv2DTranspose primitive with torch's "
              "output size (stride/padding/output_padding/dilation must be literals); a float64 input (no "
              "MindSpore convolution kernel takes it) raises MigrationError naming the line" +
              ("; 1-d runs as 2-d with a unit height" if _d == 1 else ""),
         test=_CONV)(_conv_transpose(_d))
def _float64_refused(ctx):
    """A float64 input has no Conv3DTranspose kernel: a MigrationError naming this line (conv_dtypes.py)."""
    b = ctx.bound
    if not b.has("input"):
        return None      # `F.conv_transpose3d(*args)`: the helper as it is
    where = f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"
    b.set("input", f"_ms_compat.conv_input({b.code('input')}, 'conv_transpose3d', {where!r})",
          positional=b.positional.get("input", False))
    ctx.tr.uses_compat = True
    return None


_float64_refused.handles_starred = True   # `F.conv_transpose3d(x, w, **kwargs)`: the helper takes torch's names
for _src in (P + "conv_transpose3d", "torch.conv_transpose3d"):   # torch's top-level copy: the same parameters
    rule(_src, "_ms_compat.conv_transpose3d",
         args=("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation"),
         target_args=("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation"),
         note="the Conv3DTranspose primitive (ops.conv_transpose3d has no CPU kernel) with torch's output size, "
              "output_padding computed as torch (templates/compat_parts/nn_extra.py); a depth dilation of 1 only "
              "(an error saying so otherwise); unbatched input too; a float64 input (no MindSpore convolution "
              "kernel takes it) raises MigrationError naming the line",
         test="tests/parity/test_conv_transpose3d.py::test_conv_transpose3d")(_float64_refused)


# ----------------------------------------------------------------------------- pooling
_POOL = f"{T}::test_pool"
_simple("max_pool2d", "mindspore.ops.max_pool2d",
        ("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"),
        ("x", "kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"), {"input": "x"},
        test=_POOL, note="stride=None means kernel_size in both; indices are int64 flat indices as in torch; "
                         "batched (N, C, H, W) input only")


def _max_pool1d(ctx):
    b = ctx.bound
    k = _one(_need(b, "kernel_size"))
    s = _one(b.code("stride")) if _given(b, "stride") else k
    pad = _one(b.code("padding") or "0")
    dil = _one(b.code("dilation") or "1")
    ceil = b.code("ceil_mode") or "False"
    ri = b.code("return_indices") or "False"
    if ri not in ("True", "False"):
        raise UnsupportedSite("return_indices must be a literal True/False (the result's structure depends on it)")
    call = (f"ops.max_pool2d(ops.expand_dims({{input}}, 2), (1, {k}), (1, {s}), (0, {pad}), (1, {dil}), "
            f"return_indices={ri}, ceil_mode={ceil})")
    if ri == "True":
        return _let(ctx, {"input": _need(b, "input")},
                    f"(lambda out_: (ops.squeeze(out_[0], 2), ops.squeeze(out_[1], 2)))({call})")
    return _let(ctx, {"input": _need(b, "input")}, f"ops.squeeze({call}, 2)")


rule(P + "max_pool1d", None, args=("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode",
                                   "return_indices"),
     note="runs as max_pool2d over a unit height (MindSpore has no functional max_pool1d); batched input only",
     test=_POOL)(_max_pool1d)


def _avg_pool(nd):
    def r(ctx):
        b = ctx.bound
        if nd == 1:   # ops.avg_pool1d takes ints only: torch's 1-tuples (kernel_size=(3,)) unwrapped
            for name in ("kernel_size", "stride", "padding"):
                if _given(b, name) and _one(b.code(name)) != b.code(name):
                    b.set(name, _one(b.code(name)))
        if not _given(b, "stride"):
            k = _need(b, "kernel_size")
            b.remove("stride")
            b.set("stride", k)     # torch's stride defaults to kernel_size, MindSpore's to 1
        if b.has("divisor_override"):
            if b.code("divisor_override") == "None":
                b.remove("divisor_override")
        if nd == 2:
            padding_per_side()(ctx)
        b.rename("input", "input_x")
        return None
    return r


rule(P + "avg_pool1d", "mindspore.ops.avg_pool1d",
     args=("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"),
     target_args=("input_x", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"),
     note="stride defaults to kernel_size in torch and to 1 in MindSpore: always passed", test=_POOL)(_avg_pool(1))
rule(P + "avg_pool2d", "mindspore.ops.avg_pool2d",
     args=("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"),
     target_args=("input_x", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"),
     note="stride defaults to kernel_size in torch and to 1 in MindSpore: always passed; a padding per dim written "
          "out, (ph, pw), is passed per side, (ph, ph, pw, pw); batched (N, C, H, W) input only",
     test=_POOL)(_avg_pool(2))

_simple("adaptive_avg_pool2d", "mindspore.ops.adaptive_avg_pool2d", ("input", "output_size"),
        ("input", "output_size"), test=_POOL)
_simple("adaptive_max_pool2d", "mindspore.ops.adaptive_max_pool2d", ("input", "output_size", "return_indices"),
        ("input", "output_size", "return_indices"), test=_POOL)


def _adaptive_1d(kind):
    def r(ctx):
        b = ctx.bound
        n = _one(_need(b, "output_size"))
        ri = b.code("return_indices") or "False"
        if ri not in ("True", "False"):
            raise UnsupportedSite("return_indices must be a literal True/False")
        # the unit height goes before the length (-2), so unbatched (C, L) input works too
        if kind == "avg":   # AdaptiveAvgPool2D rejects an input with no samples (N = 0): EMPTY_BATCH
            return ctx.expr(f"_ms_compat.on_empty_batch(lambda _ms_x: ops.squeeze(ops.adaptive_avg_pool2d("
                            f"ops.expand_dims(_ms_x, -2), (1, {n})), -2), {_need(b, 'input')})")
        call = f"ops.adaptive_max_pool2d(ops.expand_dims({_need(b, 'input')}, -2), (1, {n}), {ri})"
        if ri == "True":
            return ctx.expr(f"(lambda out_: (ops.squeeze(out_[0], -2), ops.squeeze(out_[1], -2)))({call})")
        return ctx.expr(f"ops.squeeze({call}, -2)")
    return r


rule(P + "adaptive_avg_pool1d", None, args=("input", "output_size"),
     note="runs as adaptive_avg_pool2d over a unit height (MindSpore's adaptive_avg_pool1d needs the length to "
          "divide evenly); " + EMPTY_BATCH_NOTE, test=_POOL)(_adaptive_1d("avg"))
rule(P + "adaptive_max_pool1d", None, args=("input", "output_size", "return_indices"),
     note="runs as adaptive_max_pool2d over a unit height (MindSpore's adaptive_max_pool1d needs the length to "
          "divide evenly)", test=_POOL)(_adaptive_1d("max"))


# ----------------------------------------------------------------------------- resampling, padding
_RES = f"{T}::test_interpolate"
_MODES = ("nearest", "linear", "bilinear", "trilinear", "area", "nearest-exact")


def _interpolate_at_run_time(ctx, mode_code):
    """_ms_compat.interpolate_checked: the mode and factor checked where they are known (also while a graph
    compiles), raising MigrationError naming this site for what is not exact."""
    b = ctx.bound
    args = [_need(b, "input")] + [f"{n}={b.code(n)}" for n in ("size", "scale_factor") if _given(b, n)]
    args += [f"mode={mode_code}"] + [f"{n}={b.code(n)}" for n in ("align_corners", "recompute_scale_factor")
                                     if _given(b, n)]
    where = f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"
    return ctx.expr(f"_ms_compat.interpolate_checked({', '.join(args)}, where={where!r})")


def _int_size_elements(ctx):
    """`size=[rnd, rnd]` of one-element tensors (torchattacks' input diversity: `rnd = torch.randint(...,
    size=(1,))`): torch reads each as an int, MindSpore's interpolate refuses a tensor: `int(rnd)`."""
    size = ctx.bound.value("size")
    if not isinstance(size, (cst.List, cst.Tuple)) or not any(
            ctx.tr._is_tensor_expr(e.value) for e in size.elements if isinstance(e, cst.Element)):
        return
    code = cst.Module([]).code_for_node
    parts = [f"int({code(e.value)})" if isinstance(e, cst.Element) and ctx.tr._is_tensor_expr(e.value)
             else code(e.value) for e in size.elements]
    ctx.bound.set("size", ("[" + ", ".join(parts) + "]") if isinstance(size, cst.List)
                  else "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")")


def _interpolate(ctx, default_mode="'nearest'", default_ac=None):
    b = ctx.bound
    _reject(b, "antialias", ("False",), "antialiased resizing has no MindSpore counterpart")
    b.remove("antialias")
    _int_size_elements(ctx)
    mode_code = b.code("mode") or default_mode
    mode = _lit_or(mode_code)
    if not _is_literal(mode_code) and not b.starred and _is_literal(b.code("recompute_scale_factor") or "None"):
        return _interpolate_at_run_time(ctx, mode_code)   # `mode=self.mode`
    if not isinstance(mode, str):
        raise UnsupportedSite(f"mode={mode_code} is not a literal string (bicubic would not be exact)")
    if mode == "bicubic":   # torch's kernel (coefficient -0.75, its grid) as two matmuls: MindSpore's uses -0.5
        args = [_need(b, "input")] + [f"{n}={b.code(n)}" for n in ("size", "scale_factor", "align_corners",
                                                                    "recompute_scale_factor") if _given(b, n)]
        return ctx.expr(f"_ms_compat.interpolate_bicubic({', '.join(args)})")
    if mode not in _MODES:
        raise UnsupportedSite(f"mode {mode!r} is not converted")
    if mode == "area":   # adaptive average pooling, as torch; ops.interpolate's 1-D area needs an even division
        return ctx.expr(f"_ms_compat.interpolate_area({_need(b, 'input')}, {b.code('size') or 'None'}, "
                        f"{b.code('scale_factor') or 'None'})")
    if default_ac is not None and not b.has("align_corners"):
        b.set("align_corners", default_ac)
    if b.has("mode") or mode_code != "'nearest'":
        b.set("mode", mode_code)
    rc = b.code("recompute_scale_factor")
    if _given(b, "scale_factor"):
        sf = b.code("scale_factor")
        v = _lit_or(sf)
        vals = v if isinstance(v, (tuple, list)) else (v,)
        integral = all(isinstance(e, (int, float)) and not isinstance(e, bool) and float(e).is_integer() and e > 0
                       for e in vals)
        ac = b.code("align_corners")
        if rc == "True" or mode == "area":
            pass   # torch computes the output size first and samples on that grid: what MindSpore does
        elif integral:
            pass   # for integer factors torch's 1/scale_factor grid and the output-size grid coincide
        elif ac == "True" and mode in ("linear", "bilinear", "trilinear"):
            pass   # align_corners=True samples on (in - 1) / (out - 1) whatever the factor
        elif v is None and _is_literal(rc or "None") and not b.starred:
            return _interpolate_at_run_time(ctx, mode_code)   # `scale_factor=self.factor`
        else:
            raise UnsupportedSite(
                f"scale_factor={sf}: MindSpore samples on the output-size grid (torch's recompute_scale_factor=True); "
                "torch by default uses 1/scale_factor, which differs unless the factor is an integer literal. "
                "Pass size=, an integer factor, or recompute_scale_factor=True")
        if isinstance(v, (tuple, list)):
            b.set("scale_factor", "(" + ", ".join(repr(float(e)) for e in v) + ("," if len(v) == 1 else "") + ")")
        elif isinstance(v, (int, float)):
            b.set("scale_factor", repr(float(v)))
        if mode not in ("area",):
            b.set("recompute_scale_factor", "True")
    elif rc is not None and rc != "True":
        b.remove("recompute_scale_factor")
    return None


_INTERP_ARGS = ("input", "size", "scale_factor", "mode", "align_corners", "recompute_scale_factor", "antialias")
_INTERP_MS = ("input", "size", "scale_factor", "mode", "align_corners", "recompute_scale_factor")
_INTERP_NOTE = ("exact for size=, integer scale factors, recompute_scale_factor=True and align_corners=True; "
                "mode='area' is torch's adaptive average pooling (_ms_compat.interpolate_area); "
                "a mode or factor known only at run time is checked there (_ms_compat.interpolate_checked: "
                "MigrationError naming the site where it would differ); bicubic is torch's kernel "
                "(_ms_compat.interpolate_bicubic: coefficient -0.75 on torch's grid, as two matmuls); fractional "
                "literal factors of the other modes and antialias are TODOs")
rule(P + "interpolate", "mindspore.ops.interpolate", args=_INTERP_ARGS, target_args=_INTERP_MS,
     note=_INTERP_NOTE, test=_RES)(_interpolate)
rule(P + "upsample", "mindspore.ops.interpolate", args=_INTERP_ARGS[:5], target_args=_INTERP_MS,
     note=_INTERP_NOTE, test=_RES)(_interpolate)
rule(P + "upsample_nearest", "mindspore.ops.interpolate", args=("input", "size", "scale_factor"),
     target_args=_INTERP_MS, note=_INTERP_NOTE, test=_RES)(lambda ctx: _interpolate(ctx, "'nearest'"))
rule(P + "upsample_bilinear", "mindspore.ops.interpolate", args=("input", "size", "scale_factor"),
     target_args=_INTERP_MS, note=_INTERP_NOTE + "; align_corners=True as in torch",
     test=_RES)(lambda ctx: _interpolate(ctx, "'bilinear'", "True"))


def _pad_rule(ctx):
    """Constant padding: _ms_compat.pad_constant, which crops (negative amounts) and concatenates itself, not
    through MindSpore's CPU pad kernel (given a negative amount, g-mlp's token shift `F.pad(t, (0, 0, amount,
    -amount))`, it returns wrong values and after a few calls hangs; in a compiled train step its gradient goes
    wrong from the second run on, conformer's padded depth-wise convolution). reflect / replicate / circular
    padding (PadV3 rejects an input with no samples, N = 0): EMPTY_BATCH."""
    b = ctx.bound
    mode = b.code("mode")
    if b.starred or not (b.has("input") and b.has("pad")):
        return None
    if mode is None or mode.strip("'\"") == "constant":
        value = f", {b.code('value')}" if b.has("value") else ""
        return ctx.expr(f"_ms_compat.pad_constant({b.code('input')}, {b.code('pad')}{value})")
    args = ", ".join(b.code(n) for n in ("input", "pad", "mode", "value") if b.has(n))
    return ctx.expr(f"_ms_compat.on_empty_batch(_ms_compat.pad_by_mode, {args})")


_simple("pad", "mindspore.ops.pad", ("input", "pad", "mode", "value"), ("input_x", "padding", "mode", "value"),
        {"input": "input_x", "pad": "padding"}, test=f"{T}::test_pad", rule=_pad_rule,
        note="constant padding of any length through _ms_compat.pad_constant (negative amounts crop; not "
             "MindSpore's pad kernel, whose gradient goes wrong in a compiled step); reflect/replicate/circular need "
             "2 values on a 2-3-d input, 4 on "
             "3-4-d, 6 on 4-5-d (torch also takes 2 on a 4-d input; MindSpore raises there; reflect on 5-d through "
             "MirrorPad, _ms_compat.pad_by_mode); in those modes "
             + EMPTY_BATCH_NOTE)
_simple("pixel_shuffle", "mindspore.ops.pixel_shuffle", ("input", "upscale_factor"), ("input", "upscale_factor"),
        test=f"{T}::test_unfold_shuffle")
_simple("pixel_unshuffle", "mindspore.ops.pixel_unshuffle", ("input", "downscale_factor"),
        ("input", "downscale_factor"), test=f"{T}::test_unfold_shuffle")
# unfold / fold: see mappings/patches.py


def _grid_sample(ctx):
    b = ctx.bound
    mode = b.code("mode")
    if mode is not None and _lit_or(mode) not in ("bilinear", "nearest"):
        raise UnsupportedSite(f"mode={mode}: MindSpore's grid_sample has bilinear and nearest only")
    if not _given(b, "align_corners"):
        b.remove("align_corners")
        b.set("align_corners", "False")
    return None


rule(P + "grid_sample", "mindspore.ops.grid_sample", args=("input", "grid", "mode", "padding_mode", "align_corners"),
     target_args=("input", "grid", "mode", "padding_mode", "align_corners"),
     note="4-d and 5-d input, bilinear/nearest with zeros/border/reflection padding; align_corners passed "
          "explicitly (torch's default is False); bicubic is not converted",
     test=f"{T}::test_grid_sample")(_grid_sample)


def _affine_grid(ctx):
    b = ctx.bound
    size = _need(b, "size")
    v = _lit_or(size)
    if isinstance(v, (list, tuple)):
        b.set("size", repr(tuple(v)))           # MindSpore rejects a list
    elif not (size.startswith("(") or ".shape" in size):
        b.set("size", f"tuple({size})")
    if not _given(b, "align_corners"):
        b.remove("align_corners")
        b.set("align_corners", "False")
    return None


rule(P + "affine_grid", "mindspore.ops.affine_grid", args=("theta", "size", "align_corners"),
     target_args=("theta", "size", "align_corners"), note="size is passed as a tuple; align_corners explicitly",
     test=f"{T}::test_grid_sample")(_affine_grid)


# ----------------------------------------------------------------------------- normalisation, embedding
_NORM = f"{T}::test_norms"


def _layer_norm(ctx):
    b = ctx.bound
    shape = _need(b, "normalized_shape")
    v = _lit_or(shape)
    if isinstance(v, int) and not isinstance(v, bool):
        shape, k = f"({v},)", str(1)
    elif isinstance(v, (tuple, list)):
        shape, k = shape, str(len(v))
    else:
        k = f"len({{shape}})"
    eps = b.code("eps") or "1e-05"
    w, bias = "ops.ones({shape}, {input}.dtype)", "ops.zeros({shape}, {input}.dtype)"
    # a weight/bias given as a value may be None at run time (nanoGPT's LayerNorm with bias=False)
    if _given(b, "weight"):
        w = "{weight}" if _is_literal(b.code("weight")) else f"({{weight}} if {{weight}} is not None else {w})"
    if _given(b, "bias"):
        bias = "{bias}" if _is_literal(b.code("bias")) else f"({{bias}} if {{bias}} is not None else {bias})"
    values = {"input": _need(b, "input"), "shape": shape}
    if _given(b, "weight"):
        values["weight"] = b.code("weight")
    if _given(b, "bias"):
        values["bias"] = b.code("bias")
    axis = f"{{input}}.ndim - {k}"
    return _let(ctx, values, f"ops.LayerNorm({axis}, {axis}, {eps})({{input}}, {w}, {bias})[0]")


rule(P + "layer_norm", None, args=("input", "normalized_shape", "weight", "bias", "eps"),
     note="ops.layer_norm has no CPU kernel: the LayerNorm primitive over the last len(normalized_shape) axes, "
          "ones/zeros standing in for a missing weight/bias", test=_NORM)(_layer_norm)
_simple("group_norm", "mindspore.ops.group_norm", ("input", "num_groups", "weight", "bias", "eps"),
        ("input", "num_groups", "weight", "bias", "eps"), test=_NORM)


def _batch_norm(ctx):
    b = ctx.bound
    if not _given(b, "running_mean") and not _given(b, "running_var"):
        # batch statistics only (a weight standardized by F.batch_norm(w, None, None, training=True)): the helper
        # computes them (compat_parts/float64_batch_norm.py's _batch_statistics_norm)
        for name in ("running_mean", "running_var", "weight", "bias"):
            if not b.has(name):
                b.set(name, "None")
    else:
        rv = _need(b, "running_var")
        for name, fill in (("weight", "ones_like"), ("bias", "zeros_like")):
            if not _given(b, name):
                b.remove(name)
                b.set(name, f"ops.{fill}({rv})")
    if b.code("training") in (None, "False") and b.has("momentum"):
        b.remove("momentum")     # unused without training (MindSpore checks it is in (0, 1], torch does not)
    # keep torch's positional order for the arguments that follow
    for name in ("training", "momentum", "eps"):
        if name in b.order:
            b.order.remove(name)
            b.order.append(name)
            b.positional[name] = False
    b.rename("input", "input_x")
    b.set("where", repr(f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"))
    b.positional["where"] = False
    ctx.tr.uses_compat = True
    return None


rule(P + "batch_norm", "_ms_compat.batch_norm",
     args=("input", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps"),
     target_args=("input_x", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps", "where"),
     note="a missing weight/bias becomes ones/zeros (without running statistics, None for both: the batch's "
          "statistics, as torch); momentum has torch's meaning here (and is left out without "
          "training, where torch does not use it); with training=True the running statistics are updated in place "
          "as in torch; a float64 input (MindSpore's BatchNorm kernel refuses it) computes torch's formula in "
          "float64 (templates/compat_parts/float64_batch_norm.py; with training=True in PyNative only, compiling "
          "raises MigrationError naming the line)", test=_NORM)(_batch_norm)


def _literal_flag(b, name: str) -> bool:
    """absent, or a literal (None, a number, True/False)"""
    return not b.has(name) or _lit_or(b.code(name), _ABSENT_FLAG) is not _ABSENT_FLAG


def _embedding(ctx):
    b = ctx.bound
    if not all(_literal_flag(b, n) for n in ("padding_idx", "max_norm", "scale_grad_by_freq")):
        # settings known at run time (awd-lstm-lm's `F.embedding(words, w, padding_idx, embed.max_norm,
        # embed.norm_type, embed.scale_grad_by_freq, embed.sparse)`): decided there (_ms_compat.embedding_by)
        ctx.tr.uses_compat = True
        parts = [_need(b, "input"), _need(b, "weight")] + [b.code(n) or d for n, d in (
            ("padding_idx", "None"), ("max_norm", "None"), ("norm_type", "2.0"), ("scale_grad_by_freq", "False"))]
        where = f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"
        return ctx.expr(f"_ms_compat.embedding_by({', '.join(parts)}, {where!r})")
    _reject(b, "scale_grad_by_freq", ("False",), "gradient scaling by frequency has no MindSpore counterpart")
    idx, w = _need(b, "input"), _need(b, "weight")
    if _given(b, "max_norm"):
        # torch renormalises the rows input reads in place first (embedding_renorm_, no gradient); input is read
        # twice (the renormalisation, the lookup), so bound once
        i = "_ms_i" if not _SIMPLE.match(idx.strip()) else idx
        w = f"_ms_compat.embedding_renorm_({w}, {i}, {b.code('max_norm')}, {b.code('norm_type') or '2.0'})"
        look = f"ops.gather({w}, {i}, 0)"
        if _given(b, "padding_idx"):
            pad = b.code("padding_idx")
            look = (f"(lambda _ms_w: ops.gather(ops.where(ops.expand_dims(ops.arange(_ms_w.shape[0]) == {pad} % "
                    f"_ms_w.shape[0], 1), ops.stop_gradient(_ms_w), _ms_w), {i}, 0))({w})")
        return ctx.expr(look if i == idx else f"(lambda _ms_i: {look})({idx})")
    if not _given(b, "padding_idx"):
        return ctx.expr(f"ops.gather({w}, {idx}, 0)")
    # torch: the padding row receives no gradient
    pad = b.code("padding_idx")
    return _let(ctx, {"weight": w, "pad": pad},
                f"ops.gather(ops.where(ops.expand_dims(ops.arange({{weight}}.shape[0]) == {{pad}} % {{weight}}.shape[0], 1), "
                f"ops.stop_gradient({{weight}}), {{weight}}), {idx}, 0)")


rule(P + "embedding", None,
     args=("input", "weight", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse"),
     note="ops.embedding has no CPU kernel: a gather of weight rows; padding_idx rows get no gradient as in "
          "torch; max_norm renormalises the rows read in place first (_ms_compat.embedding_renorm_); sparse is "
          "ignored; padding_idx, max_norm or scale_grad_by_freq known at run time only: _ms_compat.embedding_by "
          "(scale_grad_by_freq=True raises MigrationError naming the line)", test=_NORM)(_embedding)


def _one_hot(ctx):
    b = ctx.bound
    n = b.code("num_classes")
    if n is None or _lit_or(n) == -1:
        ctx.tr.uses_compat = True
        where = f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"
        return ctx.expr(f"_ms_compat.one_hot_inferred({_need(b, 'input')}, {where!r})")
    return ctx.expr(f"ops.one_hot({_need(b, 'input')}, {n})")


# torch's argument is `input` (its docs say `tensor`, which torch refuses as a keyword)
rule(P + "one_hot", None, args=("input", "num_classes"),
     note="int64 result as in torch; without num_classes (or -1) the class count is the data's max + 1, read on "
          "the host (_ms_compat.one_hot_inferred, templates/compat_parts/host_draws.py: PyNative; inside a "
          "compiled graph MigrationError naming the line)", test=_NORM)(_one_hot)


# ----------------------------------------------------------------------------- losses
_LOSS = f"{T}::test_losses"


def _loss_rule(ms_first=None, extra_checks=None):
    def r(ctx):
        b = ctx.bound
        _deprecated_reduction(b)
        if extra_checks:
            out = extra_checks(ctx)
            if out is not None:
                return out
        if ms_first:
            for old, new in ms_first.items():
                b.rename(old, new)
        return None
    return r


def _float_label_smoothing(b):
    code = b.code("label_smoothing")
    if code is not None and not _is_float_literal(code):
        b.set("label_smoothing", f"float({code})")
    return None


def _is_float_literal(code: str) -> bool:
    try:
        return isinstance(ast.literal_eval(code), float)
    except (ValueError, SyntaxError):
        return False


_CE_ARGS = ("input", "target", "weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing")
rule(P + "cross_entropy", "_ms_compat.cross_entropy", args=_CE_ARGS,
     target_args=("input", "target", "weight", "ignore_index", "reduction", "label_smoothing"),
     note="class indices or probabilities, weight, ignore_index, label_smoothing as in torch (a bool or int "
          "label_smoothing passed as a float: ops.cross_entropy refuses them); class indices gathered, as torch "
          "(ops.cross_entropy's one-hot product gave nan beside a -inf logit)", test=_LOSS)(
    _loss_rule(extra_checks=lambda ctx: _float_label_smoothing(ctx.bound)))
rule(P + "nll_loss", "_ms_compat.nll_loss", args=_CE_ARGS[:-1],
     target_args=("input", "target", "weight", "ignore_index", "reduction"), test=_LOSS,
     note="each target class's log-probability gathered, as torch (ops.nll_loss's one-hot product gave nan "
          "beside a -inf log-probability of another class)")(_loss_rule())


def _no_weight(ctx):
    _reject(ctx.bound, "weight", ("None",), "MindSpore's loss has no weight argument")
    ctx.bound.remove("weight")
    return None


for _name in ("mse_loss", "l1_loss"):
    rule(P + _name, f"_ms_compat.{_name}", args=("input", "target", "size_average", "reduce", "reduction", "weight"),
         target_args=("input", "target", "reduction"), test="tests/parity/test_empty_losses.py::test_functions",
         note="torch's formula per element, reduced as torch (templates/compat_parts/losses.py): float64 kept "
              f"(ops.{_name} computes in float32), nan for the mean of an empty batch (ops' own mean gives inf or "
              "garbage)")(_loss_rule(extra_checks=_no_weight))


def _smooth_l1_checks(ctx):
    b = ctx.bound
    if not b.has("reduction"):
        b.set("reduction", "'mean'")   # MindSpore's smooth_l1_loss defaults to 'none'
    if b.has("beta") and _lit_or(b.code("beta")) == 0:
        # torch falls back to l1_loss; MindSpore's beta=0 path has no CPU kernel
        return ctx.expr(f"ops.l1_loss({_need(b, 'input')}, {_need(b, 'target')}, reduction={b.code('reduction')})")
    return None


rule(P + "smooth_l1_loss", "mindspore.ops.smooth_l1_loss",
     args=("input", "target", "size_average", "reduce", "reduction", "beta"),
     target_args=("input", "target", "beta", "reduction"),
     note="MindSpore defaults to reduction='none': passed explicitly; beta=0 becomes l1_loss", test=_LOSS)(
    _loss_rule(extra_checks=_smooth_l1_checks))
rule(P + "binary_cross_entropy", "_ms_compat.binary_cross_entropy",
     args=("input", "target", "weight", "size_average", "reduce", "reduction"),
     target_args=("input", "target", "weight", "reduction"),
     note="_ms_compat.binary_cross_entropy: the loss per element, reduced after (MindSpore 2.10 doubles the "
          "mean/sum of a one-element input), a weight expanded to the input's shape (it mis-reads a broadcastable "
          "one); float64 by torch's formula (the kernel takes float16/float32 only)", test=_LOSS)(_loss_rule())
rule(P + "binary_cross_entropy_with_logits", "_ms_compat.binary_cross_entropy_with_logits",
     args=("input", "target", "weight", "size_average", "reduce", "reduction", "pos_weight"),
     target_args=("input", "target", "weight", "pos_weight", "reduction"),
     note="ops.binary_cross_entropy_with_logits, and torch's formula for float64 (templates/compat_parts/losses.py: "
          "MindSpore 2.10's kernel raises a TypeError on it)", test=_LOSS)(_loss_rule())


def _kl_div(ctx):
    b = ctx.bound
    _deprecated_reduction(b)
    _reject(b, "log_target", ("False", "True"), "a log_target known only at run time is not converted")
    red = b.code("reduction") or "'mean'"
    r = _lit_or(red)
    branches = {"none": "{l}", "sum": "ops.sum({l})", "mean": "ops.mean({l})", "batchmean": "ops.sum({l}) / {input}.shape[0]"}
    if isinstance(r, str):
        if r not in branches:
            raise UnsupportedSite(f"reduction={red} is not a torch reduction")
        reduce = branches[r]
    else:
        red = _paren(red)
        reduce = (f"(lambda l_: ops.sum(l_) if {red} == 'sum' else ops.mean(l_) if {red} == 'mean' else "
                  f"ops.sum(l_) / {{input}}.shape[0] if {red} == 'batchmean' else l_)({{l}})")
    # torch's xlogy(target, target): 0 where target == 0 (MindSpore's xlogy gives nan there)
    # precise_exp/precise_log: MindSpore's CPU float32 exp and log are 6.5e-6 off (compat_parts/cpu_float32_kernels.py)
    pointwise = ("(ops.where({target} == 0, 0.0, {target} * _ms_compat.precise_log(ops.where({target} == 0, 1.0, "
                 "{target})))"
                 " - {target} * {input})")
    if b.code("log_target") == "True":
        # the target holds log-probabilities
        pointwise = "(_ms_compat.precise_exp({target}) * ({target} - {input}))"
    return _let(ctx, {"input": _need(b, "input"), "target": _need(b, "target")}, reduce.replace("{l}", pointwise))


rule(P + "kl_div", None, args=("input", "target", "size_average", "reduce", "reduction", "log_target"),
     note="composed as torch computes it, xlogy(target, target) - target * input (0 where target == 0), or "
          "exp(target) * (target - input) with log_target=True (log and exp through _ms_compat.precise_log/exp: a "
          "float32 target in float64 on CPU, tests/parity/test_cpu_float32_kernels.py), then the reduction "
          "('batchmean' divides the sum by the batch size): ops.kl_div gives no gradient to the target. "
          "Where a differentiated target is exactly 0 torch's target gradient is nan, this one's is 0",
     test=_LOSS)(_kl_div)


# ----------------------------------------------------------------------------- distances
_DIST = f"{T}::test_distances"


def _cosine_similarity(ctx):
    b = ctx.bound
    dim = b.code("dim") or "1"
    eps = b.code("eps") or "1e-08"
    # torch divides each input by its norm, clamped to eps without recording the clamp for autograd
    norm = ("(ops.norm({v}, 2, %s, keepdim=True) + ops.stop_gradient(ops.relu(%s - ops.norm({v}, 2, %s, keepdim=True))))"
            % (dim, _paren(eps), dim))
    return _let(ctx, {"x1": _need(b, "x1"), "x2": _need(b, "x2")},
                f"ops.sum({{x1}} / {norm.replace('{v}', '{x1}')} * ({{x2}} / {norm.replace('{v}', '{x2}')}), {dim})")


rule(P + "cosine_similarity", None, args=("x1", "x2", "dim", "eps"),
     note="composed as torch computes it: each input divided by its norm clamped to eps, the clamp invisible "
          "to the gradient (ops.cosine_similarity clamps the product of the norms instead)",
     test=_DIST)(_cosine_similarity)


def _pairwise_distance(ctx):
    b = ctx.bound
    p = b.code("p") or "2.0"
    eps = b.code("eps") or "1e-06"
    keep = b.code("keepdim") or "False"
    return ctx.expr(f"ops.norm({_paren(_need(b, 'x1'))} - {_paren(_need(b, 'x2'))} + {_paren(eps)}, {p}, -1, "
                    f"keepdim={keep})")


rule(P + "pairwise_distance", None, args=("x1", "x2", "p", "eps", "keepdim"),
     note="norm(x1 - x2 + eps, p, dim=-1), torch's formula", test=_DIST)(_pairwise_distance)


# torch's private _Reduction.get_enum, which BasicSR-derived loss code calls (basicsr/models/losses/loss_util.py's
# reduce_loss: `reduction_enum = F._Reduction.get_enum(reduction)`)
mapping("torch.nn.functional._Reduction.get_enum", "_ms_compat.reduction_enum", args=("reduction",),
        target_args=("reduction",),
        note="torch's private reduction code: 'none' 0, 'mean' (and the deprecated 'elementwise_mean', with "
             "torch's warning) 1, 'sum' 2, ValueError for anything else",
        test="tests/test_heldout69_programs.py::test_reduction_code_of_a_loss_helper")
