"""ATen op -> MindSpore code: the converter registry of the graph-capture route.

Each converter is a small function `fn(e)` registered for one or more ATen op overloads (the keys of
the registry are `str(overload)`, e.g. "aten.convolution.default"). `e` is an `Emit` (see codegen):
`e.a` holds the node's arguments by schema name (torch values: Nodes, numbers, lists), `e.c(v)`
renders a value as code, `e.cell(...)` declares a MindSpore cell for the torch module owning a
parameter, `e.in_shape(v)` / `e.out_shape()` give the traced static shapes. A converter returns the
code of one expression computing the node's value (a tuple for multi-output ops), or `Alias(code)`
for ops that are the identity at inference time.

Ops whose keys are here are kept whole when the exported program is decomposed (capture.py removes
them from torch's decomposition table), so conv, linear, layer_norm, attention and LSTM arrive as
one node each."""
from __future__ import annotations

import operator
import re
from typing import Callable, Dict

from ..records import name_registry

CONVERTERS: Dict[str, Callable] = {}


class NotConverted(Exception):
    """The node's arguments are outside what the converter supports (the reason says which)."""


class Alias(str):
    """The node's value is this existing value (clone, detach, eval-mode dropout...)."""


class First(str):
    """The node's value is the first item of a tuple-returning op, which this expression computes
    (batch_norm returns (y, mean, rstd); only y is used at inference)."""


op = name_registry(CONVERTERS, "trace op converter")   # @op("aten.add.Tensor", ...): raises on a duplicate


def _binary(sym):
    def fn(e):
        a, b = e.c(e.a["self"]), e.c(e.a["other"])
        alpha = e.a.get("alpha", 1)
        if alpha not in (1, None):
            b = f"({b} * {e.c(alpha)})"
        return f"{a} {sym} {b}"
    return fn


for _n, _s in (("add", "+"), ("sub", "-"), ("mul", "*"), ("div", "/")):
    op(f"aten.{_n}.Tensor", f"aten.{_n}.Scalar")(_binary(_s))


@op("aten.rsub.Scalar", "aten.rsub.Tensor")
def _rsub(e):
    alpha = e.a.get("alpha", 1)
    a = e.c(e.a["self"]) if alpha in (1, None) else f"({e.c(e.a['self'])} * {e.c(alpha)})"
    return f"{e.c(e.a['other'])} - {a}"


@op("aten.div.Tensor_mode", "aten.div.Scalar_mode")
def _div_mode(e):
    a, b, mode = e.c(e.a["self"]), e.c(e.a["other"]), e.a["rounding_mode"]
    if mode is None:
        return f"{a} / {b}"
    if mode == "floor":
        return f"ops.floor_divide({a}, {b})"
    return f"ops.trunc({a} / {b})" if e.is_float() else f"ops.cast(ops.trunc(ops.cast({a}, ms.float64) / {b}), {e.dtype_code()})"


@op("aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor")
def _pow(e):
    ex = e.a["exponent"]
    if ex == 2:
        return f"ops.square({e.c(e.a['self'])})"
    if ex == 0.5:
        return f"ops.sqrt({e.c(e.a['self'])})"
    return f"ops.pow({e.c(e.a['self'])}, {e.c(ex)})"


for _n, _f in (("maximum", "ops.maximum"), ("minimum", "ops.minimum"), ("logical_and", "ops.logical_and"),
               ("logical_or", "ops.logical_or"), ("logical_xor", "ops.logical_xor"), ("atan2", "ops.atan2")):
    op(f"aten.{_n}.default")(lambda e, _f=_f: f"{_f}({e.c(e.a['self'])}, {e.c(e.a['other'])})")

for _n, _s in (("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">=")):
    op(f"aten.{_n}.Tensor", f"aten.{_n}.Scalar")(lambda e, _s=_s: f"{e.c(e.a['self'])} {_s} {e.c(e.a['other'])}")

for _n, _s in (("bitwise_and", "&"), ("bitwise_or", "|")):
    op(f"aten.{_n}.Tensor")(lambda e, _s=_s: f"{e.c(e.a['self'])} {_s} {e.c(e.a['other'])}")

_UNARY = {"relu": "ops.relu", "sigmoid": "ops.sigmoid", "tanh": "ops.tanh", "exp": "ops.exp", "log": "ops.log",
          "sqrt": "ops.sqrt", "rsqrt": "ops.rsqrt", "abs": "ops.abs", "neg": "ops.neg", "sin": "ops.sin",
          "cos": "ops.cos", "erf": "ops.erf", "floor": "ops.floor", "ceil": "ops.ceil", "round": "ops.round",
          "sign": "ops.sign", "reciprocal": "ops.reciprocal", "log1p": "ops.log1p", "expm1": "ops.expm1",
          "logical_not": "ops.logical_not", "bitwise_not": "ops.logical_not", "isnan": "ops.isnan",
          "trunc": "ops.trunc", "log2": "ops.log2", "square": "ops.square"}
for _n, _f in _UNARY.items():
    op(f"aten.{_n}.default")(lambda e, _f=_f: f"{_f}({e.c(e.a['self'])})")


# Converters that are one expression over the node's arguments: {name} is the code of the argument `name`.
_TEMPLATES = {
    ("aten.floor_divide.default", "aten.floor_divide.Scalar"): "ops.floor_divide({self}, {other})",
    ("aten.remainder.Tensor", "aten.remainder.Scalar"): "ops.remainder({self}, {other})",
    ("aten.pow.Scalar",): "ops.pow({self}, {exponent})",
    ("aten.silu.default",): "{self} * ops.sigmoid({self})",
    ("aten.hardtanh.default",): "ops.clamp({self}, {min_val}, {max_val})",
    ("aten.hardswish.default",): "{self} * ops.clamp({self} + 3.0, 0.0, 6.0) / 6.0",
    ("aten.hardsigmoid.default",): "ops.clamp({self} + 3.0, 0.0, 6.0) / 6.0",
    ("aten.leaky_relu.default",): "ops.where({self} > 0, {self}, {self} * {negative_slope})",
    ("aten.clamp_min.default",): "ops.clamp({self}, {min}, None)",
    ("aten.clamp_max.default",): "ops.clamp({self}, None, {max})",
    ("aten.expand_as.default",): "ops.broadcast_to({self}, {other}.shape)",
    ("aten.t.default", "aten.numpy_T.default"): "ops.transpose({self}, (1, 0))",
}


def _template(text: str) -> Callable:
    names = set(re.findall(r"\{(\w+)\}", text))
    return lambda e: text.format(**{n: e.c(e.a[n]) for n in names})


for _names, _text in _TEMPLATES.items():
    op(*_names)(_template(_text))


@op("aten.gelu.default")
def _gelu(e):
    approx = e.a.get("approximate", "none")
    return f"gelu({e.c(e.a['self'])})" if approx == "none" else f"gelu({e.c(e.a['self'])}, {approx!r})"


@op("aten.elu.default")
def _elu(e):
    x, alpha = e.c(e.a["self"]), e.c(e.a["alpha"])
    if e.a.get("scale", 1) != 1 or e.a.get("input_scale", 1) != 1:
        raise NotConverted("elu with scale/input_scale")
    return f"ops.where({x} > 0, {x}, {alpha} * ops.expm1({x}))"


@op("aten.softplus.default")
def _softplus(e):
    x, beta, th = e.c(e.a["self"]), e.a["beta"], e.a["threshold"]
    return f"ops.where({x} * {beta} > {th}, {x}, ops.log1p(ops.exp({x} * {beta})) / {beta})"


@op("aten.clamp.default", "aten.clamp.Tensor")
def _clamp(e):
    return f"ops.clamp({e.c(e.a['self'])}, {e.c(e.a.get('min'))}, {e.c(e.a.get('max'))})"


@op("aten._softmax.default", "aten.softmax.int")
def _softmax(e):
    return f"softmax({e.c(e.a['self'])}, {e.a['dim']})"   # runtime_src.py: torch's nan for a slice of all -inf


@op("aten._log_softmax.default", "aten.log_softmax.int")
def _log_softmax(e):
    return f"log_softmax({e.c(e.a['self'])}, {e.a['dim']})"   # runtime_src.py: float64 kept


# ------------------------------------------------------------------ reductions
def _dims(v):
    if v is None or v == []:
        return "()"
    if isinstance(v, int):
        return f"{v}"
    return repr(tuple(v))


@op("aten.mean.dim", "aten.mean.default")
def _mean(e):
    x = e.c(e.a["self"])
    if e.a.get("dtype") is not None:
        x = f"ops.cast({x}, {e.dtype_code(e.a['dtype'])})"
    return f"ops.mean({x}, {_dims(e.a.get('dim'))}, {bool(e.a.get('keepdim', False))})"


@op("aten.sum.dim_IntList", "aten.sum.default")
def _sum(e):
    x = e.c(e.a["self"])
    if e.a.get("dtype") is not None or not e.is_float(e.a["self"]):
        x = f"ops.cast({x}, {e.dtype_code()})"
    return f"ops.sum({x}, {_dims(e.a.get('dim'))}, {bool(e.a.get('keepdim', False))})"


@op("aten.amax.default", "aten.amin.default")
def _amax(e):
    f = "ops.amax" if "amax" in e.name else "ops.amin"
    return f"{f}({e.c(e.a['self'])}, {_dims(e.a.get('dim'))}, {bool(e.a.get('keepdim', False))})"


@op("aten.max.dim", "aten.min.dim")
def _max_dim(e):
    f = "ops.max" if ".max." in e.name else "ops.min"
    return f"{f}({e.c(e.a['self'])}, {e.a['dim']}, {bool(e.a.get('keepdim', False))})"


@op("aten.max.default", "aten.min.default")
def _max_all(e):
    f = "ops.amax" if ".max." in e.name else "ops.amin"
    return f"{f}({e.c(e.a['self'])})"


@op("aten.argmax.default", "aten.argmin.default")
def _argmax(e):
    f = "ops.argmax" if "argmax" in e.name else "ops.argmin"
    return f"{f}({e.c(e.a['self'])}, {e.c(e.a.get('dim'))}, {bool(e.a.get('keepdim', False))})"


@op("aten.var.correction", "aten.std.correction")
def _var(e):
    x = e.c(e.a["self"])
    corr = e.a.get("correction")
    corr = 1 if corr is None else corr
    dims = _dims(e.a.get("dim"))
    keep = bool(e.a.get("keepdim", False))
    n = e.count(e.a["self"], e.a.get("dim"))
    var = f"ops.sum(ops.square({x} - ops.mean({x}, {dims}, True)), {dims}, {keep}) / {float(n - corr)}"
    return var if "var" in e.name else f"ops.sqrt({var})"


@op("aten.cumsum.default")
def _cumsum(e):
    x = e.c(e.a["self"])
    if e.in_dtype(e.a["self"]) != e.out_dtype():  # torch sums booleans/ints as int64; MindSpore refuses bool
        x = f"ops.cast({x}, {e.dtype_code()})"
    return f"ops.cumsum({x}, {e.a['dim']})"


@op("aten.topk.default")
def _topk(e):
    x, k, dim = e.c(e.a["self"]), e.c(e.a["k"]), e.a.get("dim", -1)
    if not e.a.get("sorted", True):
        raise NotConverted("topk with sorted=False (torch's order is unspecified)")
    return f"ops.topk({x}, {k}, {dim}, largest={bool(e.a.get('largest', True))}, sorted=True)"


@op("aten.sort.default", "aten.sort.stable")
def _sort(e):
    x, dim = e.c(e.a["self"]), e.a.get("dim", -1)
    return f"sort({x}, {dim}, {bool(e.a.get('descending', False))})"


@op("aten.any.dim", "aten.any.default", "aten.all.dim", "aten.all.default")
def _any(e):
    f = "ops.any" if ".any." in e.name else "ops.all"
    d = e.a.get("dim")
    return f"{f}({e.c(e.a['self'])}, {_dims(d) if d is not None else '()'}, {bool(e.a.get('keepdim', False))})"


@op("aten.linalg_vector_norm.default")
def _vnorm(e):
    x, o = e.c(e.a["self"]), e.a.get("ord", 2)
    if o != 2:
        raise NotConverted(f"vector norm of order {o}")
    return f"ops.sqrt(ops.sum(ops.square({x}), {_dims(e.a.get('dim'))}, {bool(e.a.get('keepdim', False))}))"


# ------------------------------------------------------------------ shapes and views
@op("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default")
def _view(e):
    return f"ops.reshape({e.c(e.a['self'])}, {e.shape_code(e.a['size'])})"


@op("aten.permute.default")
def _permute(e):
    return f"ops.transpose({e.c(e.a['self'])}, {tuple(e.a['dims'])!r})"


@op("aten.transpose.int")
def _transpose(e):
    return f"ops.swapaxes({e.c(e.a['self'])}, {e.a['dim0']}, {e.a['dim1']})"


@op("aten.unsqueeze.default")
def _unsqueeze(e):
    return f"ops.expand_dims({e.c(e.a['self'])}, {e.a['dim']})"


@op("aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default")
def _squeeze(e):
    shape = e.in_shape(e.a["self"])
    dims = e.a.get("dim", e.a.get("dims"))
    if dims is None:
        dims = list(range(len(shape)))
    dims = [dims] if isinstance(dims, int) else list(dims)
    dims = tuple(sorted({d % len(shape) for d in dims if shape[d] == 1}))
    if not dims:
        return Alias(e.c(e.a["self"]))
    return f"ops.squeeze({e.c(e.a['self'])}, {dims!r})"


@op("aten.flatten.using_ints")
def _flatten(e):
    return f"ops.flatten({e.c(e.a['self'])}, start_dim={e.a['start_dim']}, end_dim={e.a['end_dim']})"


@op("aten.expand.default")
def _expand(e):
    shape = e.in_shape(e.a["self"])
    size = list(e.a["size"])
    lead = len(size) - len(shape)
    size = [(-1 if (isinstance(s, int) and s == -1) else s) for s in size]
    # -1 keeps the input's size; write it out (MindSpore's broadcast_to wants it in the input's rank)
    parts = []
    for i, s in enumerate(size):
        if isinstance(s, int) and s == -1:
            parts.append(f"{e.c(e.a['self'])}.shape[{i - lead}]")
        else:
            parts.append(e.c(s))
    return f"ops.broadcast_to({e.c(e.a['self'])}, ({', '.join(parts)},))"


@op("aten.repeat.default")
def _repeat(e):
    return f"ops.tile({e.c(e.a['self'])}, {e.shape_code(e.a['repeats'])})"


@op("aten.cat.default", "aten.concat.default")
def _cat(e):
    parts = list(e.a["tensors"])
    # torch skips empty operands (a KV cache's first update concatenates onto a (0,) tensor of another rank)
    full = [t for t in parts if not _statically_empty(e, t)]
    if full and len(full) < len(parts):
        parts = full
        if len(parts) == 1:
            return Alias(e.c(parts[0]))
    return f"ops.cat({e.list_code(parts)}, {e.a.get('dim', 0)})"


def _statically_empty(e, v) -> bool:
    val = e._val(v)
    shape = getattr(val, "shape", None)
    return shape is not None and any(isinstance(s, int) and s == 0 for s in shape)


@op("aten.stack.default")
def _stack(e):
    return f"ops.stack({e.list_code(e.a['tensors'])}, {e.a.get('dim', 0)})"


@op("aten.split.Tensor", "aten.split_with_sizes.default")
def _split(e):
    size = e.a.get("split_size", e.a.get("split_sizes"))
    return f"ops.split({e.c(e.a['self'])}, {e.c(size)}, {e.a.get('dim', 0)})"


@op("aten.chunk.default")
def _chunk(e):
    return f"ops.chunk({e.c(e.a['self'])}, {e.a['chunks']}, {e.a.get('dim', 0)})"


@op("aten.unbind.int")
def _unbind(e):
    return f"ops.unbind({e.c(e.a['self'])}, {e.a.get('dim', 0)})"


def _index_code(ndim, dim, item):
    dim = dim % ndim
    return "[" + ", ".join([":"] * dim + [item]) + "]"


@op("aten.slice.Tensor")
def _slice(e):
    x = e.a["self"]
    shape = e.in_shape(x)
    dim = e.a.get("dim", 0) % len(shape)
    start, end, step = e.a.get("start"), e.a.get("end"), e.a.get("step", 1)
    big = 2 ** 62
    s = "" if start in (None, 0) else e.c(start)
    t = "" if (end is None or (isinstance(end, int) and end >= big)) else e.c(end)
    item = f"{s}:{t}" + (f":{e.c(step)}" if step not in (1, None) else "")
    if item == ":":
        return Alias(e.c(x))
    return e.c(x) + _index_code(len(shape), dim, item)


@op("aten.select.int")
def _select(e):
    x = e.a["self"]
    return e.c(x) + _index_code(len(e.in_shape(x)), e.a["dim"], e.c(e.a["index"]))


@op("aten.narrow.default")
def _narrow(e):
    x = e.a["self"]
    st, ln = e.a["start"], e.a["length"]
    return e.c(x) + _index_code(len(e.in_shape(x)), e.a["dim"], f"{e.c(st)}:{e.c(st)} + {e.c(ln)}")


@op("aten.index.Tensor")
def _index(e):
    return f"index({e.c(e.a['self'])}, {e.list_code(e.a['indices'])})"


@op("aten.index_select.default")
def _index_select(e):
    return f"ops.gather({e.c(e.a['self'])}, {e.c(e.a['index'])}, {e.a['dim']})"


@op("aten.gather.default")
def _gather(e):
    return f"ops.gather_elements({e.c(e.a['self'])}, {e.a['dim']}, {e.c(e.a['index'])})"


@op("aten.slice_scatter.default")
def _slice_scatter(e):
    end = e.a.get("end")
    end = None if end is None or (isinstance(end, int) and end >= 2 ** 62) else end
    n = e.in_shape(e.a["self"])[e.a.get("dim", 0)]
    return (f"slice_scatter({e.c(e.a['self'])}, {e.c(e.a['src'])}, {e.a.get('dim', 0)}, "
            f"{e.c(e.a.get('start') or 0)}, {e.c(end if end is not None else n)}, {e.c(e.a.get('step', 1))})")


@op("aten.select_scatter.default")
def _select_scatter(e):
    return f"select_scatter({e.c(e.a['self'])}, {e.c(e.a['src'])}, {e.a['dim']}, {e.c(e.a['index'])})"


@op("aten.roll.default")
def _roll(e):
    shifts, dims = e.a["shifts"], e.a.get("dims")
    if not dims:
        raise NotConverted("roll without dims")
    shape = e.in_shape(e.a["self"])
    code = e.c(e.a["self"])
    for shift, dim in zip(shifts, dims):
        if not isinstance(shape[dim], int):
            raise NotConverted("roll along a dynamic dimension")
        shift = shift % shape[dim]
        if shift:
            code = f"roll({code}, {shift}, {dim})"
    return code if code != e.c(e.a["self"]) else Alias(code)


@op("aten.flip.default")
def _flip(e):
    x = e.a["self"]
    nd = len(e.in_shape(x))
    dims = {d % nd for d in e.a["dims"]}
    return e.c(x) + "[" + ", ".join("::-1" if i in dims else ":" for i in range(nd)) + "]"


@op("aten.constant_pad_nd.default")
def _pad(e):
    pad = list(e.a["pad"])
    if any(isinstance(p, int) and p < 0 for p in pad):
        raise NotConverted("negative padding")
    # concatenation (runtime constant_pad), not the pad kernel: its gradient in a compiled train step goes wrong
    return f"constant_pad({e.c(e.a['self'])}, {tuple(pad)!r}, {e.c(float(e.a.get('value', 0) or 0))})"


_TRAIN_DROPOUT = ("dropout with p > 0 in a training-mode trace: its random masks cannot match torch's; set the "
                  "model's dropout probabilities to 0 to fine-tune the traced model")


@op("aten.native_dropout.default")
def _native_dropout(e):
    if e.a.get("train") and e.a.get("p"):
        raise NotConverted(_TRAIN_DROPOUT)
    return First(e.c(e.a["input"]))


@op("aten.clone.default", "aten.alias.default", "aten.detach.default", "aten.lift_fresh_copy.default",
    "aten.contiguous.default", "aten.dropout.default", "aten.feature_dropout.default", "aten.alpha_dropout.default",
    "aten.view_as.default")
def _identity(e):
    x = e.a.get("input", e.a.get("self"))
    if "dropout" in e.name and e.a.get("train") and e.a.get("p"):
        raise NotConverted(_TRAIN_DROPOUT)
    if "view_as" in e.name:
        return f"ops.reshape({e.c(x)}, {e.c(e.a['other'])}.shape)"
    return Alias(e.c(x))


@op("aten._to_copy.default", "aten.to.dtype", "aten.to.dtype_layout", "aten.type_as.default")
def _to(e):
    x = e.a["self"]
    if e.out_dtype() == e.in_dtype(x):
        return Alias(e.c(x))
    return f"ops.cast({e.c(x)}, {e.dtype_code()})"


@op("aten.copy.default")
def _copy(e):
    """Functional copy: src broadcast to self's shape, in self's dtype."""
    src = e.c(e.a["src"])
    if e.in_dtype(e.a["self"]) != e.in_dtype(e.a["src"]):
        src = f"ops.cast({src}, {e.dtype_code()})"
    if e.in_shape(e.a["self"]) == e.in_shape(e.a["src"]):
        return Alias(src) if src == e.c(e.a["src"]) else src
    return f"ops.broadcast_to({src}, {e.c(e.a['self'])}.shape)"


# ------------------------------------------------------------------ creation
@op("aten.zeros.default", "aten.ones.default", "aten.empty.memory_format",
    "aten.new_zeros.default", "aten.new_ones.default", "aten.new_empty.default")
def _zeros(e):
    f = "ops.ones" if "ones" in e.name else "ops.zeros"
    return f"{f}({e.shape_code(e.a['size'])}, {e.dtype_code()})"


@op("aten.full.default", "aten.new_full.default")
def _full(e):
    return f"ops.full({e.shape_code(e.a['size'])}, {e.c(e.a['fill_value'])}, dtype={e.dtype_code()})"


@op("aten.zeros_like.default", "aten.ones_like.default", "aten.empty_like.default")
def _zeros_like(e):
    f = "ops.ones" if "ones" in e.name else "ops.zeros"
    return f"{f}({e.c(e.a['self'])}.shape, {e.dtype_code()})"


@op("aten.full_like.default")
def _full_like(e):
    return f"ops.full({e.c(e.a['self'])}.shape, {e.c(e.a['fill_value'])}, dtype={e.dtype_code()})"


@op("aten.arange.default", "aten.arange.start", "aten.arange.start_step")
def _arange(e):
    start, end, step = e.a.get("start", 0), e.a["end"], e.a.get("step", 1)
    return f"ops.arange({e.c(start)}, {e.c(end)}, {e.c(step)}, dtype={e.dtype_code()})"


@op("aten.scalar_tensor.default")
def _scalar_tensor(e):
    return f"Tensor({e.c(e.a['s'])}, {e.dtype_code()})"


@op("aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther", "aten.where.Scalar")
def _where(e):
    a, b = e.a["self"], e.a["other"]
    return f"ops.where({e.c(e.a['condition'])}, {e.tensor_code(a)}, {e.tensor_code(b)})"


@op("aten.masked_fill.Scalar", "aten.masked_fill.Tensor")
def _masked_fill(e):
    v = e.a["value"]
    return f"ops.masked_fill({e.c(e.a['self'])}, {e.c(e.a['mask'])}, {e.tensor_code(v)})"


@op("aten.triu.default", "aten.tril.default")
def _triu(e):
    f = "ops.triu" if "triu" in e.name else "ops.tril"
    return f"{f}({e.c(e.a['self'])}, {e.a.get('diagonal', 0)})"


# ------------------------------------------------------------------ linear algebra
@op("aten.matmul.default", "aten.mm.default", "aten.bmm.default")
def _matmul(e):
    a, b = e.a["self"], e.a.get("other", e.a.get("mat2"))
    if len(e.in_shape(b)) == 2 and len(e.in_shape(a)) > 2:
        return f"matmul({e.c(a)}, {e.c(b)})"
    return f"ops.matmul({e.c(a)}, {e.c(b)})"


@op("aten.addmm.default", "aten.baddbmm.default")
def _addmm(e):
    m1 = e.a.get("mat1", e.a.get("batch1"))
    m2 = e.a.get("mat2", e.a.get("batch2"))
    beta, alpha = e.a.get("beta", 1), e.a.get("alpha", 1)
    prod = f"ops.matmul({e.c(m1)}, {e.c(m2)})"
    if alpha != 1:
        prod = f"{prod} * {alpha}"
    base = e.c(e.a["self"]) if beta == 1 else f"{e.c(e.a['self'])} * {beta}"
    return prod if beta == 0 else f"{base} + {prod}"


@op("aten.linear.default")
def _linear(e):
    w, b = e.a["weight"], e.a.get("bias")
    path = e.owner(w, "Linear", {"weight"} | ({"bias"} if b is not None else set()), b)
    if path:
        shape = e.in_shape(w)
        cell = e.cell(path, f"Linear({shape[1]}, {shape[0]}, bias={b is not None})")
        return f"{cell}({e.c(e.a['input'])})"
    return f"linear({e.c(e.a['input'])}, {e.c(w)}, {e.c(b)})"


@op("aten.conv1d.default", "aten.conv2d.default", "aten.conv3d.default", "aten.convolution.default")
def _conv(e):
    x, w, b = e.a["input"], e.a["weight"], e.a.get("bias")
    nd = len(e.in_shape(w)) - 2
    stride = _tup(e.a.get("stride", 1), nd)
    padding = _tup(e.a.get("padding", 0), nd)
    dilation = _tup(e.a.get("dilation", 1), nd)
    groups = e.a.get("groups", 1)
    if e.a.get("transposed"):
        raise NotConverted("transposed convolution")
    if isinstance(e.a.get("padding"), str):
        raise NotConverted("string padding")
    path = e.owner(w, "Conv2d", {"weight"} | ({"bias"} if b is not None else set()), b) if nd == 2 else None
    if path:
        shape = e.in_shape(w)
        args = [f"{shape[1] * groups}", f"{shape[0]}", repr(tuple(shape[2:]))]
        if stride != (1, 1):
            args.append(f"stride={stride!r}")
        if any(padding):
            args += ["pad_mode=\"pad\"", f"padding={(padding[0], padding[0], padding[1], padding[1])!r}"]
        else:
            args.append("pad_mode=\"valid\"")
        if dilation != (1, 1):
            args.append(f"dilation={dilation!r}")
        if groups != 1:
            args.append(f"group={groups}")
        args.append(f"has_bias={b is not None}")
        cell = e.cell(path, f"nn.Conv2d({', '.join(args)})")
        return f"{cell}({e.c(x)})"
    return (f"conv({e.c(x)}, {e.c(w)}, {e.c(b)}, {stride!r}, {padding!r}, {dilation!r}, {groups})")


def _tup(v, n):
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    return v * n if len(v) == 1 else v


@op("aten._native_batch_norm_legit_no_training.default", "aten.batch_norm.default",
    "aten._native_batch_norm_legit.default", "aten.native_batch_norm.default")
def _batch_norm(e):
    x, w, b = e.a["input"], e.a.get("weight"), e.a.get("bias")
    mean, var = e.a.get("running_mean"), e.a.get("running_var")
    if e.a.get("training") and "no_training" not in e.name:
        raise NotConverted("batch norm in training mode (call model.eval() before tracing; a training-mode trace, "
                           "for fine-tuning, does not convert batch statistics: freeze the norm layers in eval mode)")
    if mean is None:
        raise NotConverted("batch norm without running statistics")
    eps = e.a["eps"]
    keys = {"running_mean", "running_var", "num_batches_tracked"} | ({"weight", "bias"} if w is not None else set())
    path = e.owner(mean, "BatchNorm", keys, None, param_name="running_mean")
    if path and (w is None or e.param_path(w) == path + ".weight"):
        cell = e.cell(path, f"BatchNorm({e.in_shape(mean)[0]}, eps={eps!r}" + (", affine=False)" if w is None else ")"))
        code = f"{cell}({e.c(x)})"
    else:
        code = f"batch_norm({e.c(x)}, {e.c(w)}, {e.c(b)}, {e.c(mean)}, {e.c(var)}, {eps!r})"
    return code if e.name == "aten.batch_norm.default" else First(code)


@op("aten.layer_norm.default", "aten.native_layer_norm.default")
def _layer_norm(e):
    x, w, b = e.a["input"], e.a.get("weight"), e.a.get("bias")
    shape, eps = tuple(e.a["normalized_shape"]), e.a["eps"]
    keys = ({"weight"} if w is not None else set()) | ({"bias"} if b is not None else set())
    path = e.owner(w, "LayerNorm", keys, b) if w is not None else None
    if path:
        extra = ("" if b is not None else ", bias=False")
        cell = e.cell(path, f"LayerNorm({shape!r}, eps={eps!r}{extra})")
        code = f"{cell}({e.c(x)})"
    else:
        code = f"layer_norm({e.c(x)}, {shape!r}, {e.c(w)}, {e.c(b)}, {eps!r})"
    return code if e.name == "aten.layer_norm.default" else First(code)


@op("aten.group_norm.default", "aten.native_group_norm.default")
def _group_norm(e):
    x, w, b = e.a["input"], e.a.get("weight"), e.a.get("bias")
    g = e.a.get("num_groups", e.a.get("group"))
    code = f"group_norm({e.c(x)}, {g}, {e.c(w)}, {e.c(b)}, {e.a['eps']!r})"
    return code if e.name == "aten.group_norm.default" else First(code)


@op("aten.embedding.default")
def _embedding(e):
    w, ids = e.a["weight"], e.a["indices"]
    pad = e.a.get("padding_idx")
    pad = None if pad is None or pad < 0 else int(pad)   # torch: the padding row gets no gradient
    path = e.owner(w, "Embedding", {"weight"}, None)
    if path:
        shape = e.in_shape(w)
        cell = e.cell(path, f"Embedding({shape[0]}, {shape[1]}" + (f", padding_idx={pad})" if pad is not None
                                                                     else ")"))
        return f"{cell}({e.c(ids)})"
    if pad is not None:
        return f"embedding_lookup({e.c(w)}, {e.c(ids)}, {pad})"
    return f"ops.gather({e.c(w)}, {e.c(ids)}, 0)"


@op("aten.scaled_dot_product_attention.default")
def _sdpa(e):
    if e.a.get("dropout_p", 0.0) not in (0, 0.0, None):
        raise NotConverted("attention dropout > 0 (trace in eval mode)")
    if e.a.get("enable_gqa"):
        raise NotConverted("grouped-query attention")
    args = [e.c(e.a["query"]), e.c(e.a["key"]), e.c(e.a["value"])]
    if e.a.get("attn_mask") is not None:
        args.append(f"mask={e.c(e.a['attn_mask'])}")
    if e.a.get("is_causal"):
        args.append("is_causal=True")
    if e.a.get("scale") is not None:
        args.append(f"scale={e.a['scale']!r}")
    return f"sdpa({', '.join(args)})"


@op("aten.max_pool2d.default", "aten.max_pool2d_with_indices.default")
def _max_pool(e):
    x = e.a["self"]
    k = _tup(e.a["kernel_size"], 2)
    s = _tup(e.a.get("stride") or k, 2)
    p = _tup(e.a.get("padding", 0), 2)
    if _tup(e.a.get("dilation", 1), 2) != (1, 1):
        raise NotConverted("dilated max pooling")
    h, w = e.in_shape(x)[2:]
    ceil = bool(e.a.get("ceil_mode", False))
    pads = _pool_pads(h, k[0], s[0], p[0], ceil) + _pool_pads(w, k[1], s[1], p[1], ceil)
    code = f"max_pool2d({e.c(x)}, {k!r}, {s!r}, {pads!r})"
    return code if e.name == "aten.max_pool2d.default" else First(code)


def _pool_pads(size, kernel, stride, padding, ceil_mode):
    span = size + 2 * padding - kernel
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return padding, (out - 1) * stride + kernel - size - padding


@op("aten.avg_pool2d.default")
def _avg_pool(e):
    x = e.a["self"]
    k = _tup(e.a["kernel_size"], 2)
    s = _tup(e.a.get("stride") or k, 2)
    p = _tup(e.a.get("padding", 0), 2)
    h, w = e.in_shape(x)[2:]
    ceil = bool(e.a.get("ceil_mode", False))
    pads = _pool_pads(h, k[0], s[0], p[0], ceil) + _pool_pads(w, k[1], s[1], p[1], ceil)
    cip = bool(e.a.get("count_include_pad", True))
    div = e.a.get("divisor_override")
    if not any(pads) and div is None:
        return f"ops.AvgPool(kernel_size={k!r}, strides={s!r}, pad_mode=\"VALID\")({e.c(x)})"
    return f"avg_pool2d({e.c(x)}, {k!r}, {s!r}, {pads!r}, {p!r}, {cip}, {e.c(div)})"


@op("aten.adaptive_avg_pool2d.default", "aten._adaptive_avg_pool2d.default")
def _adaptive_avg(e):
    x = e.a["self"]
    size = _tup(e.a["output_size"], 2)
    h, w = e.in_shape(x)[2:]
    size = tuple(h if o is None else o for o in size)
    return f"adaptive_avg_pool2d({e.c(x)}, {size!r})"


@op("aten.adaptive_avg_pool1d.default")
def _adaptive_avg1d(e):
    x = e.a["self"]
    o = _tup(e.a["output_size"], 1)[0]
    return f"ops.squeeze(adaptive_avg_pool2d(ops.expand_dims({e.c(x)}, 2), (1, {o})), 2)"


@op("aten.lstm.input", "aten.gru.input", "aten.rnn_tanh.input", "aten.rnn_relu.input")
def _rnn(e):
    mode = {"lstm": "LSTM", "gru": "GRU", "rnn_tanh": "RNN_TANH", "rnn_relu": "RNN_RELU"}[e.name.split(".")[1]]
    hx = e.a["hx"]
    hx = hx if isinstance(hx, (list, tuple)) else [hx]
    return (f"rnn({e.c(e.a['input'])}, {e.list_code(hx)}, {e.list_code(e.a['params'])}, {mode!r}, "
            f"{bool(e.a['has_biases'])}, {e.a['num_layers']}, {bool(e.a['bidirectional'])}, "
            f"{bool(e.a['batch_first'])})")


# ------------------------------------------------------------------ Python-level nodes
_PY = {operator.add: "+", operator.sub: "-", operator.mul: "*",
       operator.floordiv: "//", operator.truediv: "/", operator.mod: "%", operator.neg: None}


def python_op(e, target):
    """Python functions in the graph: getitem on multi-output ops, arithmetic on symbolic sizes."""
    if target is operator.getitem:
        return None  # handled by codegen
    if target is operator.neg:
        return f"-{e.c(e.args[0])}"
    sym = _PY.get(target)
    if sym:
        return f"{e.c(e.args[0])} {sym} {e.c(e.args[1])}"
    name = getattr(target, "__name__", str(target))
    if name in ("sym_size", "sym_size.int") or str(target) == "aten.sym_size.int":
        return f"{e.c(e.args[0])}.shape[{e.args[1]}]"
    raise NotConverted(f"python function {name}")


@op("aten.sym_size.int")
def _sym_size(e):
    return f"{e.c(e.a['self'])}.shape[{e.a['dim']}]"


# ops that only assert facts about shapes at export time: nothing to emit
SKIP = {"aten._assert_scalar.default", "aten.sym_constrain_range_for_size.default", "aten._assert_async.msg",
        "aten.sym_constrain_range.default", "aten._assert_tensor_metadata.default"}

# high-level ops kept whole in the decomposition (they have converters above)
KEEP = [k for k in CONVERTERS]
