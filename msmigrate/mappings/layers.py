"""torch.nn layer classes -> classic mindspore.nn layers (they run on CPU, GPU and Ascend)."""
from __future__ import annotations

import libcst as cst

from ..callsite import UnsupportedSite, code_of
from ..records import DIFFERENCE, TYPE_TARGETS, mapping, rule
from .edge_args import T_PRECISE, precise_note, LOG_SOFTMAX_NOTE, LOG_SOFTMAX_TEST

T = "tests/parity/test_layers.py"
_NO_DEVICE = ("device", "dtype")


# ------------------------------------------------------------------ conv
def _literal_int(code: str) -> bool:
    try:
        return isinstance(eval(code, {"__builtins__": {}}, {}), int)
    except Exception:
        return False


def _conv_padding(ctx, ndim: int) -> None:
    """torch `padding` -> MindSpore `pad_mode` + `padding` (pitfall 1: MS defaults to 'same')."""
    b = ctx.bound
    pm = b.code("padding_mode")
    if pm is not None:
        if pm.strip("'\"") != "zeros":
            raise UnsupportedSite(f"padding_mode={pm}: pad explicitly with nn.Pad before the conv")
        b.remove("padding_mode")
    p = b.code("padding")
    if p is None or p == "0":
        b.remove("padding")
        b.set("pad_mode", "'valid'")
        return
    if p.strip("'\"") in ("same", "valid") and p[0] in "'\"":
        b.remove("padding")
        b.set("pad_mode", p)
        return
    b.set("pad_mode", "'pad'")
    value = b.value("padding")
    if isinstance(value, cst.Tuple) and len(value.elements) == ndim:
        parts = [ctx.tr_code(e.value) for e in value.elements]
        if ndim == 1:
            b.set("padding", parts[0])
        else:
            b.set("padding", "(" + ", ".join(x for x in parts for _ in (0, 1)) + ")")
    elif _literal_int(p) or isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Integer)):
        pass  # an int: same meaning once pad_mode='pad'
    else:
        # only known at run time: an int, a tuple, or 'same'/'valid'
        b.set("pad_mode", f"_ms_compat.conv_pad_mode({p})")
        b.set("padding", f"_ms_compat.conv_padding({p}, {ndim})")
        ctx.tr.uses_compat = True
    # padding must follow pad_mode in the emitted call
    b.order.remove("padding")
    b.order.append("padding")
    b.positional["padding"] = False


def _literal(code):
    try:
        return eval(code, {"__builtins__": {}}, {})
    except Exception:
        return None


def _per_dim(v, ndim):
    if isinstance(v, int):
        return [v] * ndim
    if isinstance(v, (tuple, list)) and len(v) == ndim and all(isinstance(x, int) for x in v):
        return list(v)
    return None


def _output_padding(ctx, ndim: int) -> bool:
    """torch output_padding on a transposed conv. MindSpore's output_padding fills the extra
    rows with zeros, while torch computes them: the same result is a smaller crop at the end,
    i.e. asymmetric padding (p, p - output_padding) per dim. Returns True when handled."""
    b = ctx.bound
    op = b.code("output_padding")
    if op is None:
        return False
    b.remove("output_padding")
    if _literal(op) == 0:
        return False
    p = b.code("padding")
    if p is not None and p.strip("'\"") in ("same", "valid") and p[0] in "'\"":
        raise UnsupportedSite("output_padding together with string padding")
    p_val = 0 if p is None else _literal(p)
    if ndim == 1:
        # Conv1dTranspose takes one symmetric padding: _ms_compat.any_batch.Conv1dTranspose's output_padding
        # crops less at the end (the same asymmetric padding)
        v = b.value("padding")
        if isinstance(v, cst.Tuple) and len(v.elements) == 1:
            b.set("padding", ctx.tr_code(v.elements[0].value))
        b.set("pad_mode", "'pad'")
        if not b.has("padding"):
            b.set("padding", "0")
        b.order.remove("padding")
        b.order.append("padding")
        b.positional["padding"] = False
        b.set("output_padding", op)
        return True
    ps, ops_ = _per_dim(p_val, ndim), _per_dim(_literal(op), ndim)
    b.set("pad_mode", "'pad'")
    if ps is not None and ops_ is not None:
        if any(o > q for o, q in zip(ops_, ps)):
            # rows past the full transposed convolution (only the bias in torch): no crop at the end, and
            # _ms_compat.any_batch's layer adds them (its grow_end)
            b.set("grow_end", "(" + "".join(f"{max(o - q, 0)}, " for q, o in zip(ps, ops_)) + ")")
        b.set("padding", "(" + ", ".join(f"{q}, {max(q - o, 0)}" for q, o in zip(ps, ops_)) + ")")
    else:
        b.set("padding", f"_ms_compat.conv_transpose_padding({p or 0}, {op}, {ndim})")
        ctx.tr.uses_compat = True
    b.order.remove("padding")
    b.order.append("padding")
    b.positional["padding"] = False
    return True


def _sizes_as_tuples(ctx, names, code) -> None:
    """Size arguments as MindSpore's layers take them (an int or a tuple; torch's also a list): a list literal
    written as a tuple; a value known at run time through _ms_compat.conv_size, except a parameter of the
    enclosing function whose default is an int or None (a ResNet block's `stride=1`)."""
    b = ctx.bound
    for n in names:
        v = b.value(n)
        if isinstance(v, (cst.List, cst.Tuple)) and len(v.elements) == 1 and not isinstance(
                v.elements[0], cst.StarredElement):
            b.set(n, code(v.elements[0].value))     # `stride=[2]`: torch applies the one value to every dimension
        elif isinstance(v, cst.List):
            b.set(n, "(" + "".join(code(e.value) + ", " for e in v.elements) + ")")
        elif isinstance(v, (cst.Attribute, cst.Subscript)) or (isinstance(v, cst.Name) and not _int_parameter(
                ctx, v.value)) or (isinstance(v, cst.Call) and isinstance(v.func, cst.Name) and v.func.value == "list"):
            if b.code(n) in ("None", "True", "False"):
                continue
            b.set(n, f"_ms_compat.conv_size({ctx.tr_code(v)})")
            ctx.tr.uses_compat = True


def _int_parameter(ctx, name: str) -> bool:
    """`name` is a parameter of the innermost function defining it, with an int or None default."""
    for scope in reversed(getattr(ctx.tr, "_scopes", [])):
        fn = scope.get("function")
        if fn is None:
            continue
        params = fn.params
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            if p.name.value == name:
                d = p.default
                return isinstance(d, cst.Integer) or (isinstance(d, cst.Name) and d.value == "None") or (
                    isinstance(d, cst.UnaryOperation) and isinstance(d.expression, cst.Integer))
        if name in scope.get("params", ()):
            return False
    return False


def _bias_as_flag(b) -> None:
    """torch's conv layers test `if bias:`, so any value stands (DeepLab's convert_to_separable_conv passes
    `module.bias`: None where the layer has none); MindSpore's has_bias takes a bool only (a TypeError naming no
    line of the original). A value that is not a literal bool is written `bool(value)`."""
    code = b.code("bias")
    if code == "None":
        b.set("bias", "False")
    elif code is not None and code not in ("True", "False"):
        b.set("bias", f"bool({code})")


def _conv_rule(ndim: int, ms_name: str, transpose: bool = False):
    def conv(ctx):
        if any(t in (ctx.code("dtype") or "") for t in ("float64", "double")):
            raise UnsupportedSite("dtype float64: MindSpore's convolution kernels take float16/float32 only "
                                  "(torch computes in float64)")
        mode = ctx.bound.code("padding_mode")
        if not transpose and mode is not None and mode.strip("'\"") != "zeros":
            # reflect/replicate/circular (or a mode known at run time): the adapter taking torch's own arguments
            # pads with the mode before a 'valid' convolution (templates/_ms_compat.py _conv_mode_pads)
            return f"_ms_compat.Conv{ndim}d"
        if not (transpose and _output_padding(ctx, ndim)):
            _conv_padding(ctx, ndim)
        b = ctx.bound
        if ndim == 1:
            # classic 1d layers take ints only: torch's one-element tuples are unpacked
            for n in ("kernel_size", "stride", "dilation"):
                v = b.value(n)
                if isinstance(v, cst.Tuple) and len(v.elements) == 1:
                    b.set(n, ctx.tr_code(v.elements[0].value))
        else:
            # MindSpore's layers take an int or a tuple, torch's a list too (TypeError naming no line): a list
            # written here becomes a tuple; a size known at run time only (pixelsnail's `kernel_size`, a
            # parameter its callers give as `[kernel // 2, kernel]`; a stride read from a YAML config) goes
            # through _ms_compat.conv_size
            _sizes_as_tuples(ctx, ("kernel_size", "stride", "dilation"), ctx.tr_code)
        for n in _NO_DEVICE:
            b.remove(n)
        if not b.has("bias"):
            b.set("has_bias", "True")
        _bias_as_flag(b)
        b.rename("bias", "has_bias")
        b.rename("groups", "group")
        if id(ctx.original) in ctx.tr.batched_convs and not b.has("output_padding") and not b.has("grow_end"):
            return None
        # the input may be one unbatched sample, which torch takes and MindSpore's layer does not
        return f"_ms_compat.any_batch.{ms_name}"
    return conv


_CONV_ARGS = ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
              "groups", "bias", "padding_mode", "device", "dtype")
_MS_CONV_ARGS = ("in_channels", "out_channels", "kernel_size", "stride", "pad_mode", "padding",
                 "dilation", "group", "has_bias")
_CONV_NOTE = ("padding -> pad_mode='pad'/'valid'/'same' + padding (MindSpore defaults to 'same'); "
              "bias -> has_bias (MindSpore defaults to False); groups -> group; the native layer where its input is "
              "provably batched (msmigrate/batched_convs.py), else _ms_compat.any_batch.<layer>, the same layer "
              "also taking torch's unbatched sample as a batch of one; dtype float64 is not converted; "
              "padding_mode reflect/replicate/circular: _ms_compat.Conv<n>d with torch's arguments, the input "
              "padded in that mode (ops.pad; reflect on a 5-d input through MirrorPad) before a 'valid' convolution")
for _nd, _name in ((1, "Conv1d"), (2, "Conv2d"), (3, "Conv3d")):
    rule(f"torch.nn.{_name}", f"mindspore.nn.{_name}", args=_CONV_ARGS, target_args=_MS_CONV_ARGS,
         note=_CONV_NOTE + ("; weight is stored (out, in, 1, k)" if _nd == 1 else ""),
         test=f"{T}::test_conv")(_conv_rule(_nd, _name))

_TCONV_ARGS = ("in_channels", "out_channels", "kernel_size", "stride", "padding", "output_padding",
               "groups", "bias", "dilation", "padding_mode", "device", "dtype")
_MS_TCONV_ARGS = ("in_channels", "out_channels", "kernel_size", "stride", "pad_mode", "padding")
for _nd, _name, _ms in ((1, "ConvTranspose1d", "Conv1dTranspose"), (2, "ConvTranspose2d", "Conv2dTranspose"),
                        (3, "ConvTranspose3d", "Conv3dTranspose")):
    rule(f"torch.nn.{_name}", f"mindspore.nn.{_ms}", args=_TCONV_ARGS, target_args=_MS_TCONV_ARGS,
         note=_CONV_NOTE + "; output_padding -> asymmetric padding (p, p - output_padding) per dim "
         "(MindSpore's own output_padding zero-fills instead of computing those rows; 1-d: "
         "_ms_compat.any_batch.Conv1dTranspose(output_padding=) sets that padding on its op); output_padding past "
         "the padding (literal ints): no crop at the end and _ms_compat.any_batch's grow_end= adds the rows past "
         "the full output, which hold the bias alone in torch; 2-d/3-d paddings known only at run time: "
         "MigrationError there",
         test=f"{T}::test_conv_transpose")(_conv_rule(_nd, _ms, transpose=True))


# ------------------------------------------------------------------ pooling
def _pool_rule(has_dilation: bool):
    def pool(ctx):
        b = ctx.bound
        if not b.has("stride") or b.code("stride") == "None":
            # torch's stride defaults to kernel_size, MindSpore's to 1 (pitfall 7)
            k = b.code("kernel_size")
            if k is None:
                raise UnsupportedSite("kernel_size is required")
            b.set("stride", k)
        b.set("pad_mode", "'pad'")
        # MindSpore's pools take an int or a tuple only (a list: TypeError naming no line)
        _sizes_as_tuples(ctx, ("kernel_size", "stride", "padding", "dilation"), code_of)
        for n in ("padding", "dilation", "return_indices", "ceil_mode", "count_include_pad", "divisor_override"):
            if n in b.order:
                b.order.remove(n)
                b.order.append(n)
                b.positional[n] = False
        return None
    return pool


_MAXPOOL_ARGS = ("kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode")
_AVGPOOL_ARGS = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override")
_POOL_NOTE = "stride defaults to kernel_size in torch and to 1 in MindSpore: always passed; pad_mode='pad'"
for _d in ("1d", "2d", "3d"):
    rule(f"torch.nn.MaxPool{_d}", f"mindspore.nn.MaxPool{_d}", args=_MAXPOOL_ARGS,
         target_args=("kernel_size", "stride", "pad_mode", "padding", "dilation", "return_indices", "ceil_mode"),
         note=_POOL_NOTE, test=f"{T}::test_pool")(_pool_rule(True))
    rule(f"torch.nn.AvgPool{_d}", f"mindspore.nn.AvgPool{_d}", args=_AVGPOOL_ARGS,
         target_args=("kernel_size", "stride", "pad_mode", "padding", "ceil_mode", "count_include_pad"),
         note=_POOL_NOTE, test=f"{T}::test_pool")(_pool_rule(False))
    # MindSpore's 1d adaptive pools only accept lengths divisible by output_size: the helpers
    # pool a (N, C, 1, L) view with the 2d layers, which take any size
    _where = "_ms_compat" if _d == "1d" else "mindspore.nn"
    _why = "; 1d: _ms_compat pools through the 2d layer (MindSpore's 1d layer needs L divisible by output_size)"
    mapping(f"torch.nn.AdaptiveAvgPool{_d}", f"{_where}.AdaptiveAvgPool{_d}", args=("output_size",),
            target_args=("output_size",), note=_why if _d == "1d" else "", test=f"{T}::test_pool")
    mapping(f"torch.nn.AdaptiveMaxPool{_d}", f"{'mindspore.nn' if _d == '2d' else '_ms_compat'}.AdaptiveMaxPool{_d}",
            args=("output_size", "return_indices"), target_args=("output_size", "return_indices"),
            note=_why if _d == "1d" else "3d: _ms_compat's layer keeps the input's size where output_size says None "
            "and returns int64 indices (MindSpore's refuses None and returns int32)" if _d == "3d" else "",
            test=f"{T}::test_pool")


# ------------------------------------------------------------------ linear & norm
def _linear(ctx):
    """torch's Linear tests `if bias:` too (`bias=None`, or a flag a constructor passes on): _bias_as_flag."""
    _bias_as_flag(ctx.bound)
    return None


rule("torch.nn.Linear", "mindspore.nn.Dense",
     args=("in_features", "out_features", "bias", "device", "dtype"),
     target_args=("in_channels", "out_channels"),
     rename={"in_features": "in_channels", "out_features": "out_channels", "bias": "has_bias"},
     drop=_NO_DEVICE, note="Linear -> Dense; bias -> has_bias (a value that is not True/False as bool(value), as "
                           "torch tests it); weight (out, in) in both",
     test=f"{T}::test_linear")(_linear)
def _identity(ctx):
    """torch's nn.Identity takes any arguments and ignores them (a stand-in for a layer's constructor); MindSpore's
    takes none."""
    ctx.bound.order   # every argument is read: ignored, as torch ignores them (argument_check.py)
    return ctx.expr("nn.Identity()")


rule("torch.nn.Identity", "mindspore.nn.Identity", note="its arguments are ignored, as torch ignores them",
     test="tests/parity/test_declared_arguments.py::test_identity_ignores_its_arguments")(_identity)
mapping("torch.nn.Flatten", "mindspore.nn.Flatten", args=("start_dim", "end_dim"),
        target_args=("start_dim", "end_dim"), test=f"{T}::test_activations")

_BN_ARGS = ("num_features", "eps", "momentum", "affine", "track_running_stats", "device", "dtype")


def _batch_norm(dims):
    def batch_norm(ctx):
        if any(t in (ctx.code("dtype") or "") for t in ("float64", "double")):
            raise UnsupportedSite("dtype float64: MindSpore's BatchNorm kernel takes float16/float32 only "
                                  "(torch computes in float64)")
        if ctx.code("momentum") == "None":
            # torch's cumulative moving average: _ms_compat's layer takes torch's arguments and counts batches
            return ctx.bound.call.with_changes(func=ctx.render(f"_ms_compat.CumulativeBatchNorm{dims}"))
        if ctx.code("affine") not in (None, "True"):
            # MindSpore keeps no affine flag (only frozen gamma/beta, which a later freeze leaves too): _ms_compat's
            # layer takes torch's arguments and records it, so parameters()/state_dict() leave them out as torch
            return ctx.bound.call.with_changes(func=ctx.render(f"_ms_compat.BatchNorm{dims}"))
        # track_running_stats known only at run time: False means batch statistics in eval too
        trs = ctx.bound.code("track_running_stats")
        if trs is not None and trs not in ("True", "False"):
            ctx.bound.set("track_running_stats", f"None if {trs} else True")
        return None
    return batch_norm


for _d in ("1d", "2d", "3d"):
    rule(f"torch.nn.BatchNorm{_d}", f"mindspore.nn.BatchNorm{_d}", args=_BN_ARGS,
         target_args=("num_features", "eps", "momentum", "affine"),
         transforms={"momentum": "1 - {v}"},
         values={"track_running_stats": {"False": "True", "True": "None"}},
         rename={"track_running_stats": "use_batch_statistics"}, drop=_NO_DEVICE,
         status=DIFFERENCE,
         note="momentum is 1 - torch momentum (MindSpore weights the old value); momentum=None (torch's "
              "cumulative average) -> _ms_compat.CumulativeBatchNorm*d, which counts the training batches; "
              "params gamma/beta/moving_mean/moving_variance",
         test=f"{T}::test_batchnorm")(_batch_norm(_d))


def _int_arithmetic(node) -> bool:
    """`2 * width`, `d_model // 2 + 1`: arithmetic with an int literal is an int (a size). Only `*` could
    give a tuple (`2 * shape`), and nn.LayerNorm((that,)) then raises at construction: never silent."""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, (cst.Multiply, cst.FloorDivide, cst.Add, cst.Subtract)):
        sides = (node.left, node.right)
        if any(isinstance(x, (cst.Tuple, cst.List, cst.SimpleString, cst.FormattedString, cst.ConcatenatedString,
                              cst.Float)) for x in sides):
            return False
        return any(_int_arithmetic(x) for x in sides)
    return False


def _layer_norm(ctx):
    b = ctx.bound
    for n in _NO_DEVICE:
        b.remove(n)
    shape = b.value("normalized_shape")
    if shape is None:
        raise UnsupportedSite("normalized_shape is required")
    eps = b.code("eps") or "1e-05"
    affine = b.code("elementwise_affine")
    bias = b.code("bias")
    one_dim = isinstance(shape, cst.Integer) or _literal_int(ctx.code("normalized_shape")) or (
        isinstance(shape, (cst.Tuple, cst.List)) and len(shape.elements) == 1) or _int_arithmetic(shape)
    if one_dim and affine in (None, "True") and bias in (None, "True"):
        dims = f"({ctx.code('normalized_shape')},)" if not isinstance(shape, (cst.Tuple, cst.List)) \
            else ctx.code("normalized_shape")
        return ctx.expr(f"nn.LayerNorm({dims}, epsilon={eps})")
    extra = "".join(f", {n}={b.code(n)}" for n in ("elementwise_affine", "bias") if b.has(n))
    return ctx.expr(f"_ms_compat.LayerNorm({ctx.code('normalized_shape')}, eps={eps}{extra})")


rule("torch.nn.LayerNorm", "mindspore.nn.LayerNorm",
     args=("normalized_shape", "eps", "elementwise_affine", "bias", "device", "dtype"),
     note="epsilon default differs (MindSpore 1e-7, torch 1e-5): passed explicitly; one normalised dim -> "
          "nn.LayerNorm((n,), epsilon=eps) (n a literal or arithmetic with one: 2 * width); several dims, a shape "
          "known only at run time, or no affine/bias "
          "-> _ms_compat.LayerNorm (an nn.LayerNorm subclass with torch's arguments); params gamma/beta",
     test=f"{T}::test_norms")(_layer_norm)
def _group_norm(ctx):
    bias = ctx.code("bias")
    if bias not in (None, "True"):
        # a weight and no bias: _ms_compat's GroupNorm freezes beta at zero
        return ctx.bound.call.with_changes(func=ctx.render("_ms_compat.GroupNorm"))
    ctx.bound.remove("bias")
    return None


rule("torch.nn.GroupNorm", "mindspore.nn.GroupNorm",
     args=("num_groups", "num_channels", "eps", "affine", "device", "dtype", "bias"),
     target_args=("num_groups", "num_channels", "eps", "affine"), drop=_NO_DEVICE,
     note="params gamma/beta; bias=False (or not known to be True) -> _ms_compat.GroupNorm, beta frozen at zero "
          "(not trainable, not in torch's state_dict)", test=f"{T}::test_norms")(_group_norm)


for _d in ("1d", "2d", "3d"):
    mapping(f"torch.nn.InstanceNorm{_d}", f"_ms_compat.InstanceNorm{_d}",
            args=("num_features", "eps", "momentum", "affine", "track_running_stats", "device", "dtype"),
            target_args=("num_features", "eps", "momentum", "affine", "track_running_stats"), drop=_NO_DEVICE,
            unsupported_values={"momentum": ("None",)},
            note="MindSpore's InstanceNorm has no CPU kernel: torch's formula (templates/_ms_compat.py), with torch's "
                 "arguments and defaults (affine=False); track_running_stats=True updates and reads "
                 "moving_mean/moving_variance as torch's running_mean/running_var; unbatched input too; "
                 "params gamma/beta", test="tests/parity/test_instance_norm.py::test_instance_norm")


# ------------------------------------------------------------------ dropout
for _name in ("Dropout",):   # Dropout1d/2d/3d: mappings/channel_dropout.py
    mapping(f"torch.nn.{_name}", f"mindspore.nn.{_name}", args=("p", "inplace"), target_args=(),
            drop=("inplace",), extra={"p": "0.5"},
            note="p is the drop probability in both when passed as p= (the old keep_prob is the opposite)",
            test=f"{T}::test_dropout")
# AlphaDropout: mappings/tensor_nn_extra.py

# ------------------------------------------------------------------ activations
mapping("torch.nn.Mish", "_ms_compat.Mish", args=("inplace",), target_args=(), test=f"{T}::test_activations",
        note="nn.Mish's kernel computes a float64 input in float32: a Cell around _ms_compat.mish (torch's formula "
             "in float64 then)")
mapping("torch.nn.ReLU6", "_ms_compat.ReLU6", args=("inplace",), target_args=(), test=f"{T}::test_activations",
        note="ReLU6's kernel takes float16/float32 only: a Cell around _ms_compat.relu6 (a clamp for float64); "
             "inplace taken and unused")
for _name, _ms in (("ReLU", "ReLU"), ("SiLU", "SiLU"), ("Hardswish", "HSwish"), ("Hardsigmoid", "HSigmoid")):
    mapping(f"torch.nn.{_name}", f"mindspore.nn.{_ms}", args=("inplace",), drop=("inplace",),
            note="no inplace argument in MindSpore", test=f"{T}::test_activations")
mapping("torch.nn.Tanh", "_ms_compat.Tanh", test=T_PRECISE,
        note="a subclass of mindspore.nn.Tanh; " + precise_note("tanh"))
for _name in ("Sigmoid", "Softsign", "Tanhshrink", "LogSigmoid"):
    mapping(f"torch.nn.{_name}", f"mindspore.nn.{_name}", test=f"{T}::test_activations")
_GELU_VALUES = {"'none'": "False", '"none"': "False", "'tanh'": "True", '"tanh"': "True"}


def _gelu(ctx):
    # a string known only at run time: MindSpore takes a bool (any non-empty string would mean tanh)
    a = ctx.bound.code("approximate")
    if a is not None and a not in _GELU_VALUES:
        ctx.bound.set("approximate", f"{a} == 'tanh'")
    return None


rule("torch.nn.GELU", "mindspore.nn.GELU", args=("approximate",), target_args=(),
     values={"approximate": _GELU_VALUES}, extra={"approximate": "False"},
     note="MindSpore defaults to the tanh approximation; torch to the exact erf form: passed explicitly",
     test=f"{T}::test_activations")(_gelu)
mapping("torch.nn.LeakyReLU", "_ms_compat.LeakyReLU", args=("negative_slope", "inplace"),
        target_args=("negative_slope",), drop=("inplace",),
        note="an nn.LeakyReLU with torch's default slope 0.01 and torch's gradient (the slope) at an input of exactly "
             "0 (MindSpore's: (1 + slope) / 2); _ms_compat.leaky_relu",
        test=f"{T}::test_activations")


def _elu(ctx):
    b = ctx.bound
    b.remove("inplace")
    alpha = b.code("alpha")
    if alpha is None or _literal(alpha) == 1:
        return ctx.expr("nn.ELU()")
    return ctx.expr(f"_ms_compat.ELU({alpha})")


rule("torch.nn.ELU", "mindspore.nn.ELU", args=("alpha", "inplace"),
     note="MindSpore's ELU kernel only accepts alpha=1.0: other slopes use _ms_compat.ELU",
     test=f"{T}::test_activations")(_elu)
mapping("torch.nn.Hardtanh", "mindspore.nn.Hardtanh", args=("min_val", "max_val", "inplace"),
        target_args=("min_val", "max_val"), drop=("inplace",), test=f"{T}::test_activations")
mapping("torch.nn.PReLU", "mindspore.nn.PReLU", args=("num_parameters", "init", "device", "dtype"),
        target_args=("channel", "w"), rename={"num_parameters": "channel", "init": "w"}, drop=_NO_DEVICE,
        note="parameter is named w", test=f"{T}::test_activations")


def _softmax(ms_name):
    def r(ctx):
        b = ctx.bound
        if not b.has("dim") or b.code("dim") == "None":
            # torch picks the dim from the input's rank at each call: so does the adapter
            return ctx.expr(f"_ms_compat.ImplicitDimSoftmax(log={ms_name == 'LogSoftmax'})")
        b.rename("dim", "axis")
        return None
    return r


_SOFTMAX_NOTES = {"Softmax": "through _ms_compat.softmax (templates/compat_parts/softmax_slices.py): a slice of all -inf "
                             "gives torch's nan, where MindSpore 2.10's CPU kernel gives 0 and garbage in the slices "
                             "after it",
                  "LogSoftmax": LOG_SOFTMAX_NOTE}
for _name in ("Softmax", "LogSoftmax"):
    rule(f"torch.nn.{_name}", f"_ms_compat.{_name}", args=("dim",), target_args=("axis",),
         note="dim -> axis; without dim: _ms_compat.ImplicitDimSoftmax, torch's rule (dim 0 for 0-, 1-, 3-D "
              "inputs, else 1); " + _SOFTMAX_NOTES[_name],
         test=LOG_SOFTMAX_TEST if _name == "LogSoftmax" else f"{T}::test_activations")(_softmax(_name))

# ------------------------------------------------------------------ containers
mapping("torch.nn.Sequential", "mindspore.nn.SequentialCell",
        note="SequentialCell takes cells, a list or an OrderedDict; children keep their names",
        test=f"{T}::test_containers")


def _positional_modules(ctx):
    # CellList/CellDict take the cells positionally only (a modules= keyword is silently ignored)
    if not ctx.bound.has("modules"):
        return ctx.expr("_ms_compat.ModuleList()")   # grown later, perhaps with None
    if ctx.bound.has("modules"):
        ctx.bound.positional["modules"] = True
        if not isinstance(ctx.bound.value("modules"), (cst.List, cst.ListComp)):
            # CellList takes a list only (torch any iterable: a generator, a tuple, map(...))
            ctx.bound.set("modules", f"list({ctx.bound.code('modules')})", positional=True)
        elif _may_hold_none(ctx.bound.value("modules")):
            return ctx.expr(f"_ms_compat.ModuleList({ctx.bound.code('modules')})")
    return None


def _may_hold_none(modules: cst.BaseExpression) -> bool:
    """An empty list literal (grown later: x-transformers appends None to `skip_combines`) or one with an
    entry that is not a constructor call (`[pre_norm, post_norm]`, `x if c else None`): torch's ModuleList
    keeps a None entry, MindSpore's CellList refuses it."""
    return isinstance(modules, cst.List) and (not modules.elements or any(
        not isinstance(e.value, cst.Call) for e in modules.elements if isinstance(e, cst.Element)))


rule("torch.nn.ModuleList", "mindspore.nn.CellList", args=("modules",), target_args=("modules",),
     note="the cells are passed positionally, as a list (any iterable in torch)",
     test=f"{T}::test_containers")(_positional_modules)
mapping("torch.nn.ModuleDict", "_ms_compat.ModuleDict", args=("modules",), target_args=("modules",),
        note="a Cell holding the modules as attributes under their keys: MindSpore's CellDict refuses a CellList, "
             "SequentialCell or CellDict as a value (GPT-2's transformer.h) and cannot be called in GRAPH mode",
        test="tests/parity/test_idioms.py::test_gpt_layout")
for _name in ("ParameterList", "ParameterDict"):
    mapping(f"torch.nn.{_name}", f"_ms_compat.{_name}", args=("values" if _name == "ParameterList" else "parameters",),
            note="Parameters registered under torch's names (plist.0, pdict.key); inside a Module's methods "
                 "converted code reads them through their .params ParameterTuple so that GRAPH mode differentiates "
                 "them (other reads while a graph compiles raise MigrationError)",
            test="tests/parity/test_idioms.py::test_parameter_containers")


# ------------------------------------------------------------------ embedding, attention, recurrent
def _sizes_as_ints(b, names) -> None:
    """MindSpore's Embedding takes Python ints only for its sizes (a TypeError naming no line of the original), torch
    any integer: a size computed by a call or read from an array (pytorch-fm's `nn.Embedding(sum(field_dims), d)`,
    a NumPy int64) is written `int(value)`."""
    for n in names:
        v = b.value(n)
        if isinstance(v, cst.Subscript) or isinstance(v, cst.Call) and not (
                isinstance(v.func, cst.Name) and v.func.value in ("int", "len")):
            b.set(n, f"int({b.code(n)})", positional=b.positional.get(n, False))


def _embedding(ctx):
    b = ctx.bound
    _sizes_as_ints(b, ("num_embeddings", "embedding_dim"))
    pad, max_norm = b.code("padding_idx"), b.code("max_norm")
    if (pad is None or pad == "None") and (max_norm is None or max_norm == "None"):
        return None  # the declarative part of the record does the rest
    if b.has("_weight") and b.code("_weight") != "None":
        raise UnsupportedSite(f"argument _weight={b.code('_weight')} has no MindSpore counterpart (torch's table "
                              "shares its storage: pass the weights through the checkpoint instead)")
    # the helper has torch's signature: the arguments are kept as written
    parts = [ctx.tr_code(b.args[n].value) if b.positional.get(n) else f"{n}={ctx.tr_code(b.args[n].value)}"
             for n in b.order]
    return ctx.expr(f"_ms_compat.Embedding({', '.join(parts)})")


rule("torch.nn.Embedding", "mindspore.nn.Embedding",
        args=("num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
              "scale_grad_by_freq", "sparse", "_weight", "_freeze", "device", "dtype"),
        target_args=("vocab_size", "embedding_size"),
        rename={"num_embeddings": "vocab_size", "embedding_dim": "embedding_size"},
        drop=_NO_DEVICE + ("sparse", "scale_grad_by_freq"),
        extra={"embedding_table": "ms.common.initializer.Normal(1.0)"},
        unsupported={"_weight": "pass the weights through the checkpoint instead",
                     "scale_grad_by_freq": "gradient scaling by frequency has no MindSpore counterpart"},
        unsupported_ok={"_weight": ("None",), "scale_grad_by_freq": ("False",)},
        note="MindSpore initialises N(0, 0.01) by default, torch N(0, 1): initializer passed explicitly; "
             "parameter embedding_table; with padding_idx or max_norm -> _ms_compat.Embedding (MindSpore's "
             "Embedding still trains the padding row, torch gives it no gradient; max_norm renormalises the rows a "
             "call reads in place, with no gradient, as torch does)",
        test=f"{T}::test_embedding")(_embedding)
mapping("torch.nn.Embedding.from_pretrained", "_ms_compat.Embedding.from_pretrained",
        args=("embeddings", "freeze", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse"),
        target_args=("embeddings", "freeze", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq",
                     "sparse"),
        note="a table holding the given rows (the padding row as given, no gradient to it), frozen by default as "
             "in torch: requires_grad False keeps it out of trainable_params; max_norm renormalises read rows as torch",
        test=f"{T}::test_embedding_from_pretrained")
mapping("torch.nn.MultiheadAttention", "_ms_compat.MultiheadAttention",
        args=("embed_dim", "num_heads", "dropout", "bias", "add_bias_kv", "add_zero_attn", "kdim", "vdim",
              "batch_first", "device", "dtype"),
        target_args=("embed_dim", "num_heads", "dropout", "bias"), drop=_NO_DEVICE,
        note="a subclass of nn.MultiheadAttention that returns torch's (output, weights or None): "
             "MindSpore returns a 1-tuple when need_weights=False", test=f"{T}::test_attention")
def _projected_lstm(ctx):
    """proj_size given (not 0): _ms_compat.ProjectedLSTM, which has torch's signature (arguments as written);
    proj_size=0 / None: the declarative part of the record (MindSpore's LSTM)."""
    b = ctx.bound
    if not b.has("proj_size") or b.code("proj_size") in ("0", "None"):
        return None     # the declarative part of the record does the rest
    parts = [ctx.tr_code(b.args[n].value) if b.positional.get(n) else f"{n}={ctx.tr_code(b.args[n].value)}"
             for n in b.order]
    proj = b.code("proj_size")
    # a proj_size known only at run time: the class chosen then (both take torch's signature)
    cls = "_ms_compat.ProjectedLSTM" if proj.isdigit() else f"(_ms_compat.ProjectedLSTM if {proj} else _ms_compat.LSTM)"
    return ctx.expr(f"{cls}({', '.join(parts)})")


_RECURRENT_NOTE = ("MindSpore's layer with torch's arguments (a subclass): same gate layout and parameter names; an "
                   "unbatched input (seq, features) with states (layers, hidden) is a batch of one, as in torch")
rule("torch.nn.LSTM", "_ms_compat.LSTM",
     args=("input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout", "bidirectional", "proj_size",
           "device", "dtype"),
     target_args=("input_size", "hidden_size", "num_layers"), drop=_NO_DEVICE,
     note=_RECURRENT_NOTE + "; proj_size > 0: _ms_compat.ProjectedLSTM (templates/compat_parts/projected_lstm.py: "
          "torch's parameters weight_ih/weight_hh/bias_ih/bias_hh/weight_hr per layer and direction, steps run "
          "one by one)",
     test=f"{T}::test_recurrent")(_projected_lstm)
for _name in ("GRU", "RNN"):
    mapping(f"torch.nn.{_name}", f"_ms_compat.{_name}",
            args=("input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout", "bidirectional",
                  "proj_size", "device", "dtype") if _name != "RNN" else
            ("input_size", "hidden_size", "num_layers", "nonlinearity", "bias", "batch_first", "dropout",
             "bidirectional", "device", "dtype"),
            target_args=("input_size", "hidden_size", "num_layers"), drop=_NO_DEVICE,
            unsupported={"proj_size": "projections are LSTM's only (torch raises for GRU)"},
            unsupported_ok={"proj_size": ("0",)}, note=_RECURRENT_NOTE, test=f"{T}::test_recurrent")

# torch.nn.RNNBase(mode, ...) builds the layer its mode names (torch's LSTM/GRU/RNN are RNNBase with a fixed mode)
_RNN_BASE_MODES = {"LSTM": ("torch.nn.LSTM", None), "GRU": ("torch.nn.GRU", None),
                   "RNN_TANH": ("torch.nn.RNN", "tanh"), "RNN_RELU": ("torch.nn.RNN", "relu")}


def _rnn_base(ctx):
    """The call of the mode's class with the other arguments by name (torch.nn.RNN's positions differ: its
    fourth is nonlinearity), converted by that class's record; a mode known only at run time stays a TODO."""
    from ..records import REGISTRY
    b = ctx.bound
    mode = _literal(b.code("mode")) if b.has("mode") else None
    if mode not in _RNN_BASE_MODES:
        raise UnsupportedSite(f"mode={b.code('mode')}: the layer is chosen only from a literal 'LSTM', 'GRU', "
                              "'RNN_TANH' or 'RNN_RELU' (write that class instead)")
    api, nonlinearity = _RNN_BASE_MODES[mode]
    args = [cst.Arg(keyword=cst.Name(n), value=b.args[n].value) for n in b.order if n != "mode"]
    if nonlinearity is not None:
        args.append(cst.Arg(keyword=cst.Name("nonlinearity"), value=cst.SimpleString(repr(nonlinearity))))
    call = cst.Call(func=cst.Name(api.rsplit(".", 1)[-1]), args=args)
    tr = ctx.tr
    before = len(tr.sites)
    built = tr._apply(call, call, REGISTRY.get(api), api, receiver=None)
    del tr.sites[before:]   # reported once, as torch.nn.RNNBase
    return built


rule("torch.nn.RNNBase", None,
     args=("mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout", "bidirectional",
           "proj_size", "device", "dtype"),
     note="the layer its literal mode names: 'LSTM' -> torch.nn.LSTM's conversion, 'GRU' -> GRU's, 'RNN_TANH' / "
          "'RNN_RELU' -> RNN's with that nonlinearity (the other arguments passed by name)",
     test=f"{T}::test_recurrent_base")(_rnn_base)
# as a type (awd-lstm-lm's `issubclass(type(self.module), torch.nn.RNNBase)`): MindSpore's base of LSTM/GRU/RNN,
# which the converted torch.nn.LSTM/GRU/RNN derive from
TYPE_TARGETS["torch.nn.RNNBase"] = (
    "mindspore.nn.layer.rnns._RNNBase",
    "as a type (isinstance/issubclass): MindSpore's base of LSTM, GRU and RNN, which the converted torch.nn.LSTM, "
    "GRU and RNN derive from")

# ------------------------------------------------------------------ resampling & padding
def _upsample(ctx):
    b = ctx.bound
    mode = b.code("mode")
    mode_val = _literal(mode) if mode is not None else "nearest"
    if not isinstance(mode_val, str):
        # only known at run time: the helper refuses bicubic without align_corners
        b.set("mode", f"_ms_compat.upsample_mode({mode}, {b.code('align_corners') or 'None'})")
        ctx.tr.uses_compat = True
    elif mode_val == "bicubic" and _literal(b.code("align_corners") or "None") is not True:
        raise UnsupportedSite("bicubic with align_corners=False: MindSpore's kernel differs from torch's "
                              "(max diff 0.27 on N(0,1) input)")
    sf = b.code("scale_factor")
    if sf is not None and sf != "None":
        # MindSpore's interpolate only takes scale_factor together with recompute_scale_factor=True
        # (output size floor(in * s), coordinates mapped by the size ratio). torch without
        # recompute maps coordinates by 1/s: the same whenever in * s is an integer.
        recompute = _literal(b.code("recompute_scale_factor") or "None") is True
        val = _literal(sf)
        vals = val if isinstance(val, (tuple, list)) else (val,)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            if not recompute and any(float(v) != int(v) for v in vals):
                raise UnsupportedSite(f"scale_factor={sf} is not an integer: MindSpore maps coordinates by the "
                                      "output/input size ratio (torch's recompute_scale_factor=True)")
            floats = [repr(float(v)) for v in vals]
            b.set("scale_factor", floats[0] if not isinstance(val, (tuple, list))
                  else "(" + ", ".join(floats) + ("," if len(floats) == 1 else "") + ")")
        else:
            b.set("scale_factor", f"_ms_compat.upsample_scale({sf}, {'True' if recompute else 'False'})")
            ctx.tr.uses_compat = True
        b.set("recompute_scale_factor", "True")
    return None


rule("torch.nn.Upsample", "mindspore.nn.Upsample",
     args=("size", "scale_factor", "mode", "align_corners", "recompute_scale_factor"),
     target_args=("size", "scale_factor", "mode", "align_corners"),
     note="scale_factor is passed as a float with recompute_scale_factor=True (MindSpore's interpolate "
          "rejects it otherwise): exact for integer scale factors; bicubic needs align_corners=True",
     test=f"{T}::test_upsample")(_upsample)
for _name in ("ReplicationPad1d", "ReplicationPad2d"):
    mapping(f"torch.nn.{_name}", f"mindspore.nn.{_name}", args=("padding", "value"),
            target_args=("padding", "value"), test=f"{T}::test_padding")
_CONSTANT_PAD_NOTE = ("_ms_compat.pad_constant (concatenation), not MindSpore's pad kernel, whose gradient in a "
                      "compiled train step goes wrong from the step's second run on; torch's flat tuple as .padding")
mapping("torch.nn.ZeroPad2d", "_ms_compat.ZeroPad2d", args=("padding",), target_args=("padding",),
        note=_CONSTANT_PAD_NOTE, test=f"{T}::test_padding")
for _name in ("ConstantPad1d", "ConstantPad2d", "ConstantPad3d"):
    mapping(f"torch.nn.{_name}", f"_ms_compat.{_name}", args=("padding", "value"), target_args=("padding", "value"),
            note=_CONSTANT_PAD_NOTE, test=f"{T}::test_padding")
for _name in ("ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d"):
    mapping(f"torch.nn.{_name}", f"_ms_compat.{_name}", args=("padding",), target_args=("padding",),
            note="MirrorPad, with torch's flat tuple as .padding (MindSpore's layer holds nested pairs there)",
            test=f"{T}::test_padding")

# ------------------------------------------------------------------ lazy layers
_LAZY_NOTE = ("built at the first call from the input's size, as torch (templates/compat_parts/lazy_layers.py); "
              "that call must be a direct one, not inside a compiled graph (MigrationError there); parameters under "
              "torch's names")
_LAZY_T = "tests/parity/test_lazy_layers.py::test_lazy_layers"
mapping("torch.nn.LazyLinear", "_ms_compat.LazyLinear", args=("out_features", "bias", "device", "dtype"),
        target_args=("out_features", "bias"), drop=_NO_DEVICE, note=_LAZY_NOTE, test=_LAZY_T)
for _d in ("1d", "2d", "3d"):
    mapping(f"torch.nn.LazyConv{_d}", f"_ms_compat.LazyConv{_d}",
            args=("out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "bias", "padding_mode",
                  "device", "dtype"),
            target_args=("out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "bias",
                         "padding_mode"), drop=_NO_DEVICE, unsupported_ok={"padding_mode": ("'zeros'", '"zeros"')},
            unsupported={"padding_mode": "only zero padding"}, note=_LAZY_NOTE, test=_LAZY_T)
    mapping(f"torch.nn.LazyConvTranspose{_d}", f"_ms_compat.LazyConvTranspose{_d}",
            args=("out_channels", "kernel_size", "stride", "padding", "output_padding", "groups", "bias", "dilation",
                  "padding_mode", "device", "dtype"),
            target_args=("out_channels", "kernel_size", "stride", "padding", "output_padding", "groups", "bias",
                         "dilation", "padding_mode"), drop=_NO_DEVICE,
            unsupported_ok={"padding_mode": ("'zeros'", '"zeros"')}, unsupported={"padding_mode": "only zero padding"},
            note=_LAZY_NOTE + "; output_padding as the ConvTranspose layers (not in 1-d)", test=_LAZY_T)
    mapping(f"torch.nn.LazyBatchNorm{_d}", f"_ms_compat.LazyBatchNorm{_d}",
            args=("eps", "momentum", "affine", "track_running_stats", "device", "dtype"),
            target_args=("eps", "momentum", "affine", "track_running_stats"), drop=_NO_DEVICE,
            note=_LAZY_NOTE + "; momentum=None builds _ms_compat.CumulativeBatchNorm" + _d + " (torch's cumulative "
                 "average; tests/parity/test_batchnorm_cumulative.py::test_lazy_cumulative)", test=_LAZY_T)
    mapping(f"torch.nn.LazyInstanceNorm{_d}", f"_ms_compat.LazyInstanceNorm{_d}",
            args=("eps", "momentum", "affine", "track_running_stats", "device", "dtype"),
            target_args=("eps", "momentum", "affine", "track_running_stats"), drop=_NO_DEVICE,
            unsupported_values={"momentum": ("None",)}, note=_LAZY_NOTE + "; momentum=None as nn.InstanceNorm*d: "
                                                                          "not converted", test=_LAZY_T)
