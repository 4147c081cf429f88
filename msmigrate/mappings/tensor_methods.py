"""torch.Tensor methods -> MindSpore (classic `mindspore.ops` functions and the Tensor
methods that run on CPU in both PyNative and GRAPH mode).

Sources are "Tensor.NAME". A method is rewritten when its receiver is known to be a
tensor, or, for names that only torch tensors have (tensor_only=False), when the
receiver is unknown. Names that lists, dicts, sets, str, numpy or pandas also have
(add, sum, max, split, sort, round, ...) are tensor_only=True.

Everything here is proven by tests/parity/test_tensor_methods.py. Facts found while
proving it on MindSpore 2.10 CPU (why some targets are not the same-named method):
  - Tensor.clone / Tensor.repeat / Tensor.new_full / ops.roll: no CPU kernel.
  - ops.identity aliases its input (a later `y[i] = v` writes through): clone uses ops.deepcopy.
  - Tensor.transpose(a, b), Tensor.expand(*sizes), Tensor.argsort(dim=..), Tensor.cumsum(dim=..)
    and Tensor.max(dim) fail or change meaning inside GRAPH mode / ms.jit.
  - Tensor.std/var default to ddof=0 (numpy's overload); torch's default is the unbiased estimate.
  - Tensor.flip(int) is rejected: ops.flip takes a tuple.
  - ops.scatter requires src to have index's shape; torch only reads src[:index.shape].
  - ops.nonzero(as_tuple=True) has no PyNative CPU kernel.
  - the CPU Round kernel accepts decimals=0 only.
  - In-place arithmetic (add_, mul_, ...) silently leaves the tensor unchanged on CPU PyNative and
    zero_/fill_/clamp_ have no CPU kernel; copy_ is truly in place (PyNative and GRAPH). So in-place
    arithmetic sites are TODOs saying how to rewrite them, copy_ stays, and zero_/fill_/normal_/uniform_
    go through the _ms_compat nn.init helpers (Parameter.set_data / Tensor.copy_).
"""
from __future__ import annotations

import ast
import re
from typing import List, Optional

import libcst as cst

from ..callsite import BoundCall, UnsupportedSite, code_of
from ..records import DIFFERENCE, mapping, rule
from .edge_args import (mixed_clamp_bounds, PRECISE, PRECISE_NOTE, PRECISE_TEST, float_function_note, PRECISE_ON_CPU, T_PRECISE, precise_note, AS_VECTOR_NOTE, round_decimals_code, CLAMP_MAX, CLAMP_MIN, CLAMP_NOTE, FLOAT_INPUT_NOTE, INDEX_SELECT, LOG1P_NOTE,
                        LOG_SOFTMAX_NOTE, LOG_SOFTMAX_TEST,
                        NARROW_NOTE, T_EDGE, T_LOG1P, dims_tuple, empty_dims_keep, float_input_code, narrow_from_end, nonzero_code)

T = "tests/parity/test_tensor_methods.py"

_INT = re.compile(r"^-?\s*\d+$")
_DTYPE_NAMES = {"float32", "float", "float64", "double", "float16", "half", "bfloat16", "int8", "int16",
                "short", "int32", "int", "int64", "long", "uint8", "bool", "complex64", "complex128",
                "cfloat", "cdouble", "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2"}
_ATOMIC = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.SimpleString)


# ------------------------------------------------------------------ helpers
def _self(ctx) -> str:
    """The receiver's code, parenthesised (once) when it is not an atom."""
    node = ctx.receiver
    if node is None:
        raise UnsupportedSite("no receiver")
    if getattr(node, "lpar", None):
        node = node.with_changes(lpar=[], rpar=[])
    rc = ctx.tr_code(node)
    if not isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        rc = f"({rc})"
    return rc


def _arg(ctx) -> str:
    """The receiver's code as a function argument (no parentheses needed)."""
    node = ctx.receiver
    if node is None:
        raise UnsupportedSite("no receiver")
    if getattr(node, "lpar", None) and not isinstance(node, (cst.Tuple, cst.GeneratorExp)):
        node = node.with_changes(lpar=[], rpar=[])
    return ctx.tr_code(node)


def _paren(ctx, name: str) -> str:
    v = ctx.bound.value(name)
    c = ctx.code(name)
    return c if isinstance(v, _ATOMIC) else f"({c})"


def _is_int(code: Optional[str]) -> bool:
    return code is not None and bool(_INT.match(code.strip()))


def _positional(ctx) -> List[str]:
    """Codes of the positional arguments in order; starred ones keep their `*`."""
    out = []
    for n in ctx.bound.order:
        arg = ctx.bound.args[n]
        if arg.star == "*":
            out.append("*" + ctx.tr_code(arg.value))
        elif ctx.bound.positional.get(n):
            out.append(ctx.tr_code(arg.value))
    return out


def _sizes(ctx, keyword: str = "size") -> str:
    """torch's `*sizes` (varargs, one tuple/list/Size, or size=...) as one tuple expression."""
    if ctx.bound.has(keyword) and not ctx.bound.positional.get(keyword):
        return ctx.code(keyword)
    pos = _positional(ctx)
    if not pos:
        raise UnsupportedSite("no size given")
    if len(pos) == 1 and not pos[0].startswith("*") and not _is_int(pos[0]):
        return pos[0]          # a tuple, list, torch.Size or a name holding one
    return "(" + ", ".join(pos) + ("," if len(pos) == 1 else "") + ")"


def _original(ctx, params) -> BoundCall:
    """The call's arguments before conversion (to resolve torch names and tensor-ness)."""
    return BoundCall(ctx.original, params)


def _is_torch_dtype(ctx, node) -> bool:
    if node is None:
        return False
    qn = ctx.tr._torch_qname(node)
    if qn and qn.startswith("torch.") and qn[6:] in _DTYPE_NAMES:
        return True
    code = ctx.tr_code(node)
    return code.endswith(".dtype") or code in ("dtype",) or code.endswith("_dtype")


def _is_device(ctx, node) -> bool:
    if node is None:
        return False
    if isinstance(node, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString, cst.Integer)):
        return True
    qn = ctx.tr._torch_qname(node.func if isinstance(node, cst.Call) else node)
    if qn in ("torch.device", "torch.cuda.current_device"):
        return True
    code = ctx.tr_code(node)
    last = code.rsplit(".", 1)[-1].lower()
    return "device" in last or last in ("dev", "cuda", "cpu", "gpu", "rank", "local_rank")


def _is_tensor(ctx, node) -> bool:
    return node is not None and ctx.tr._is_tensor_expr(node)


def _starred(fn):
    fn.handles_starred = True
    return fn


# ------------------------------------------------------------------ shape and layout
def _view(ctx):
    """torch's `x.view(size=shape)`: MindSpore's keyword is shape=; positional forms (starred too) as written."""
    ctx.bound.rename("size", "shape")
    return None


_view.handles_starred = True
rule("Tensor.view", "method:view",
     note="MindSpore's Tensor.view(*shape) reshapes like torch's (torch's size= keyword is MindSpore's shape=); "
          "view(dtype) (bit reinterpretation) works only in PyNative", test=f"{T}::test_shape_methods")(_view)
mapping("Tensor.reshape", "method:reshape", tensor_only=True, kwonly=("shape",), test=f"{T}::test_shape_methods")


def _size(ctx):
    b = ctx.bound
    dim = b.code("dim")
    if dim is None:
        return ctx.expr(f"{_self(ctx)}.shape")
    return ctx.expr(f"{_self(ctx)}.shape[{dim}]")


rule("Tensor.size", None, args=("dim",), note="x.size() -> x.shape; x.size(i) -> x.shape[i] (a tuple, "
     "not torch.Size; graph-safe)", test=f"{T}::test_shape_methods")(_size)
mapping("Tensor.dim", "expr:{self}.ndim", test=f"{T}::test_shape_methods")
mapping("Tensor.ndimension", "expr:{self}.ndim", test=f"{T}::test_shape_methods")
mapping("Tensor.numel", "method:numel", test=f"{T}::test_shape_methods")
mapping("Tensor.nelement", "method:numel", test=f"{T}::test_shape_methods")
mapping("Tensor.element_size", "expr:{self}.itemsize", test=f"{T}::test_shape_methods")
def _stride(ctx):
    x, d = _self(ctx), ctx.code("dim")
    if d in (None, "None"):
        return ctx.expr(f"tuple({x}.stride())")
    return ctx.expr(f"(lambda _ms_s, _ms_d: tuple(_ms_s) if _ms_d is None else _ms_s[_ms_d])({x}.stride(), {d})")


rule("Tensor.stride", "mindspore.Tensor.stride", args=("dim",), status=DIFFERENCE,
     test=f"{T}::test_stride",
     note="the strides of MindSpore's PyNative views, as a tuple (an int for dim): permute, expand, narrow and "
          "slicing give torch's; an op that copies in MindSpore where torch makes a view gives contiguous strides, "
          "and a compiled graph has none (MindSpore raises)")(_stride)
mapping("Tensor.is_contiguous", "expr:True", args=("memory_format",),
        note="MindSpore tensors have no user-visible strides", test=f"{T}::test_shape_methods")
mapping("Tensor.contiguous", "identity", args=("memory_format",),
        note="MindSpore has no strided views to compact", test=f"{T}::test_shape_methods")
mapping("Tensor.permute", "method:permute", kwonly=("dims",), test=f"{T}::test_shape_methods")
mapping("Tensor.transpose", "mindspore.ops.swapaxes", args=("dim0", "dim1"),
        target_args=("input", "axis0", "axis1"), rename={"dim0": "axis0", "dim1": "axis1"}, tensor_only=True,
        note="MindSpore's Tensor.transpose(a, b) means a permutation inside GRAPH mode: ops.swapaxes swaps",
        test=f"{T}::test_shape_methods")
mapping("Tensor.swapaxes", "mindspore.ops.swapaxes", args=("axis0", "axis1"),
        target_args=("input", "axis0", "axis1"), tensor_only=True, test=f"{T}::test_shape_methods")
mapping("Tensor.t", "mindspore.ops.t", target_args=("input",), test=f"{T}::test_shape_methods")
mapping("Tensor.flatten", "mindspore.ops.flatten", args=("start_dim", "end_dim"), target_args=("input", "order"),
        extra={"start_dim": "0"}, tensor_only=True,
        note="ops.flatten's second positional is `order` and start_dim defaults to 1: passed by keyword",
        test=f"{T}::test_shape_methods")


def _unflatten(ctx):
    b = ctx.bound
    dim, sizes = b.code("dim"), b.code("sizes")
    if dim is None or sizes is None:
        raise UnsupportedSite("unflatten needs dim and sizes")
    x = _self(ctx)
    if _is_int(dim):
        d = int(dim.replace(" ", ""))
        head = f"{x}.shape[:{d}]"
        tail = f" + {x}.shape[{d + 1}:]" if d != -1 else ""
    else:
        d = f"{_paren(ctx, 'dim')} % {x}.ndim"
        head, tail = f"{x}.shape[:{d}]", f" + {x}.shape[{d} + 1:]"
    return ctx.expr(f"ops.reshape({x}, {head} + tuple({sizes}){tail})")


rule("Tensor.unflatten", None, args=("dim", "sizes"), note="a reshape that splits one axis",
     test=f"{T}::test_shape_methods")(_unflatten)
mapping("Tensor.squeeze", "mindspore.ops.squeeze", args=("dim",), target_args=("input", "axis"),
        rename={"dim": "axis"}, tensor_only=True, rule=empty_dims_keep(_arg), test=T_EDGE,
        note="dim=() squeezes nothing, as in torch")
mapping("Tensor.unsqueeze", "mindspore.ops.unsqueeze", args=("dim",), target_args=("input", "dim"),
        test=f"{T}::test_shape_methods")


@_starred
def _expand(ctx):
    return ctx.expr(f"ops.broadcast_to({_arg(ctx)}, {_sizes(ctx)})")


rule("Tensor.expand", None, args=("size",), note="ops.broadcast_to (-1 keeps a dimension, as in torch)",
     test=f"{T}::test_shape_methods")(_expand)
mapping("Tensor.expand_as", "expr:ops.broadcast_to({self}, {other}.shape)", args=("other",),
        test=f"{T}::test_shape_methods")


@_starred
def _repeat(ctx):
    return ctx.expr(f"_ms_compat.repeat_tile({_arg(ctx)}, {dims_tuple(_sizes(ctx, 'repeats'))})")


rule("Tensor.repeat", None, args=("repeats",), tensor_only=True,
     note="ops.tile (Tensor.repeat has no CPU kernel; numpy's repeat means repeat_interleave), through "
          "_ms_compat.repeat_tile: an input with no elements gives torch's empty result (MindSpore's CPU Tile kernel "
          "fails on it)",
     test=f"{T}::test_shape_methods")(_repeat)
mapping("Tensor.chunk", "mindspore.ops.chunk", args=("chunks", "dim"), target_args=("input", "chunks", "axis"),
        rename={"dim": "axis"}, test=f"{T}::test_split_methods")
mapping("Tensor.split", "mindspore.ops.split", args=("split_size", "dim"),
        target_args=("tensor", "split_size_or_sections", "axis"),
        rename={"split_size": "split_size_or_sections", "dim": "axis"}, tensor_only=True,
        test=f"{T}::test_split_methods")
mapping("Tensor.unbind", "mindspore.ops.unbind", args=("dim",), target_args=("input", "dim"),
        test=f"{T}::test_split_methods")
mapping("Tensor.narrow", "mindspore.ops.narrow", args=("dim", "start", "length"),
        target_args=("input", "axis", "start", "length"), rename={"dim": "axis"}, rule=narrow_from_end(_arg),
        note=NARROW_NOTE, test=T_EDGE)


# ------------------------------------------------------------------ indexing
# ops.masked_fill has CPU kernels for a float value of the input's float dtype only: an int value (x.masked_fill(m,
# 0)), an int/bool input or a value tensor of another dtype fail. The value is cast to the input's dtype, which is
# what torch does with it (a float literal too: an int input's x.masked_fill(m, 0.5) fills 0, as torch).


def _masked_fill(ctx):
    b = ctx.bound
    if b.starred or not b.has("mask") or not b.has("value"):
        raise UnsupportedSite("mask and value must be given")
    x, mask, value = _arg(ctx), ctx.code("mask"), ctx.code("value")
    if re.match(r"^[A-Za-z_]\w*$", x):
        return ctx.expr(f"ops.masked_fill({x}, {mask}, ops.cast({value}, {x}.dtype))")
    return ctx.expr(f"(lambda _ms_x: ops.masked_fill(_ms_x, {mask}, ops.cast({value}, _ms_x.dtype)))({x})")


rule("Tensor.masked_fill", "mindspore.ops.masked_fill", args=("mask", "value"),
     note="the value is cast to the input's dtype, as torch (ops.masked_fill has kernels for a float value of a "
          "float input only)", test=T_EDGE)(_masked_fill)
mapping("Tensor.index_select", "expr:" + INDEX_SELECT.replace("{input}", "{self}"), args=("dim", "index"),
        tensor_only=True, note=AS_VECTOR_NOTE, test=f"{T}::test_index_methods")
mapping("Tensor.gather", "mindspore.ops.gather_elements", args=("dim", "index", "sparse_grad"),
        target_args=("input", "dim", "index"),
        unsupported={"sparse_grad": "sparse gradients are not available"}, unsupported_ok={"sparse_grad": ("False",)},
        drop=("sparse_grad",), note="torch's gather is MindSpore's gather_elements (ops.gather is index_select-like)",
        test=f"{T}::test_index_methods")


def _scatter(ctx):
    """Tensor.scatter and torch.scatter (input first): a tensor src or a number value; reduce='add'/'multiply'
    is scatter_reduce's 'sum'/'prod' with the input's own values (_ms_compat.scatter_with)."""
    b = ctx.bound
    if b.starred:
        raise UnsupportedSite("*args/**kwargs cannot be translated argument by argument")
    if b.code("out") not in (None, "None"):
        raise UnsupportedSite(f"argument out={b.code('out')}: not translated")
    dim, index = b.code("dim"), b.code("index")
    src = b.code("src") if b.has("src") else b.code("value")
    x = _self(ctx) if ctx.receiver is not None else b.code("input")
    if dim is None or index is None or src is None or x is None:
        raise UnsupportedSite("scatter needs input, dim, index and src/value")
    if b.code("reduce") not in (None, "None"):
        return ctx.expr(f"_ms_compat.scatter_with({x}, {dim}, {index}, {src}, {b.code('reduce')})")
    if ctx.receiver is None and not isinstance(b.value("input"), _ATOMIC):
        x = f"({x})"
    srcv = b.value("src") if b.has("src") else b.value("value")
    number = srcv.expression if isinstance(srcv, cst.UnaryOperation) else srcv
    if isinstance(number, (cst.Integer, cst.Float)):
        # ScatterValue's CPU kernels take a float value whatever the input's dtype (an int 1, a one-hot's, fails)
        if isinstance(number, cst.Integer):
            src = repr(float(ast.literal_eval(src.replace(" ", ""))))
        return ctx.expr(f"ops.scatter({x}, {dim}, {index}, {src})")
    if not b.has("src"):
        # value= is a number (sam's smooth_crossentropy: `value=1.0 - smoothing`), a float for ScatterValue
        return ctx.expr(f"ops.scatter({x}, {dim}, {index}, float({src}))")
    # a positional third argument is torch's src or value overload by its type at run time (`scatter_(1, idx,
    # self.confidence)` with a float attribute): _ms_compat.scatter_src slices a tensor, floats a number
    return ctx.expr(f"_ms_compat.scatter_src({x}, {dim}, {index}, {src})")


_SCATTER_NOTE = ("ops.scatter needs src of index's shape: torch reads only src[:index.shape], so it is sliced to "
                 "that (_ms_compat.scatter_src, which takes a positional src that is a number at run time as "
                 "torch's value overload); a number value (a literal, or value=) is a float (ScatterValue's CPU "
                 "kernels); "
                 "reduce='add'/'multiply' is "
                 "_ms_compat.scatter_with (scatter_reduce's 'sum'/'prod' with the input's values)")
rule("Tensor.scatter", None, args=("dim", "index", "src", "reduce"), note=_SCATTER_NOTE,
     test=f"{T}::test_index_methods")(_scatter)
mapping("Tensor.masked_select", "mindspore.ops.masked_select", args=("mask",), target_args=("input", "mask"),
        test=f"{T}::test_index_methods")


def _nonzero(ctx):
    as_tuple = ctx.code("as_tuple")
    x = _self(ctx)
    if as_tuple in (None, "False", "True"):
        return ctx.expr(nonzero_code(x, as_tuple == "True"))
    raise UnsupportedSite("as_tuple must be a literal True/False")


rule("Tensor.nonzero", None, args=("as_tuple",), tensor_only=True,
     note="as_tuple=True unbinds the (n, ndim) result, since ops.nonzero(as_tuple=True) has no CPU kernel; a 0-d "
          "input gives torch's (n, 0) rows",
     test=f"{T}::test_index_methods")(_nonzero)


def _where(ctx):
    cond, other = ctx.code("condition"), ctx.code("other")
    if cond is None or other is None:
        raise UnsupportedSite("where needs condition and other")
    return ctx.expr(f"ops.where({cond}, {_arg(ctx)}, {other})")


rule("Tensor.where", None, args=("condition", "other"), tensor_only=True,
     test=f"{T}::test_index_methods")(_where)
for _n in ("triu", "tril"):
    mapping(f"Tensor.{_n}", f"mindspore.ops.{_n}", args=("diagonal",), target_args=("input", "diagonal"),
            test=f"{T}::test_index_methods")


# ------------------------------------------------------------------ dtype, device, autograd
_CASTS = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16", "long": "int64",
          "int": "int32", "short": "int16", "char": "int8", "byte": "uint8", "bool": "bool_"}
# torch's cast to an integer or boolean dtype gives a tensor that carries no gradient; MindSpore's Cast passes
# the gradient through (cast to the integer dtype and back), so `(x.bool().float() * y).sum()` would give x the
# gradient y (or 1 wherever it is nonzero) where torch gives it none: MixtureOfExperts' dispatch tensor,
# `combine_tensor.bool().to(combine_tensor)`. The cast stops the gradient, as torch's does
_INTEGRAL = {"int64", "int32", "int16", "int8", "uint8", "bool_"}
_INTEGRAL_TORCH = {f"torch.{n}" for n in ("int64", "long", "int32", "int", "int16", "short", "int8", "uint8",
                                          "uint16", "uint32", "uint64", "bool")}
for _n, _dt in _CASTS.items():
    mapping(f"Tensor.{_n}", f"expr:ops.stop_gradient({{self}}.astype(ms.{_dt}))" if _dt in _INTEGRAL
            else f"expr:{{self}}.astype(ms.{_dt})", args=("memory_format",),
            note="a cast to an integer or boolean dtype stops the gradient, as torch's does" if _dt in _INTEGRAL
            else "", test=f"{T}::test_dtype_methods")


def _cast(ctx, x: str, dtype_code: str, dtype_node) -> cst.BaseExpression:
    """`x.astype(dtype)`; a dtype that is surely torch's integer or boolean one stops the gradient (_INTEGRAL)."""
    qn = ctx.tr._torch_qname(dtype_node) if dtype_node is not None else None
    if qn in _INTEGRAL_TORCH:
        return ctx.expr(f"ops.stop_gradient({x}.astype({dtype_code}))")
    return ctx.expr(f"{x}.astype({dtype_code})")
mapping("Tensor.type_as", "expr:{self}.astype({other}.dtype)", args=("other",), test=f"{T}::test_dtype_methods")


def _type(ctx):
    dt = ctx.code("dtype")
    f8 = _float8_cast(ctx, _self(ctx), _original(ctx, ("dtype", "non_blocking")).value("dtype") if dt else None)
    if f8 is not None:
        return f8
    if dt is not None and _is_torch_dtype(ctx, _original(ctx, ("dtype", "non_blocking")).value("dtype")):
        return _cast(ctx, _self(ctx), dt, _original(ctx, ("dtype", "non_blocking")).value("dtype"))
    # a legacy tensor type (`Tensor = torch.FloatTensor`, then x.type(Tensor)), a type name, or no
    # argument (the type's name): decided at run time, and a receiver that is no tensor keeps its type()
    return ctx.expr(f"_ms_compat.tensor_type({_self(ctx)}{', ' + dt if dt is not None else ''})")


rule("Tensor.type", None, args=("dtype", "non_blocking"),
     note="x.type(T) with a legacy tensor type, a dtype or a type name casts; x.type() gives torch's type name",
     test="tests/parity/test_real_programs.py::test_tensor_type")(_type)


def _float8_cast(ctx, x: str, dtype_node) -> Optional[cst.BaseExpression]:
    """x.to(torch.float8_*) / x.type(...): _ms_compat.float8_cast, which raises MigrationError naming the site
    where the device has no float8 kernels (MindSpore 2.10's CPU)."""
    qn = ctx.tr._torch_qname(dtype_node) if dtype_node is not None else None
    if not (qn or "").startswith("torch.float8_"):
        return None
    where = f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"
    return ctx.expr(f"_ms_compat.float8_cast({x}, ms.{qn[6:]}, {where!r})")


def _to(ctx):
    b = ctx.bound
    ob = _original(ctx, ("arg0", "arg1", "non_blocking", "copy"))
    x = _self(ctx)
    for k in ("dtype", "arg0", "arg1"):
        f8 = _float8_cast(ctx, x, ob.value(k) if ob.has(k) else None)
        if f8 is not None:
            return f8
    if b.has("dtype"):
        node = ob.value("dtype") if ob.has("dtype") else None
        qn = ctx.tr._torch_qname(node) if node is not None else None
        if node is not None and not (qn and qn.startswith("torch.") and qn[6:] in _DTYPE_NAMES) \
                and not ctx.tr_code(node).endswith(".dtype"):
            # `bands.to(device=device, dtype=dtype)` with a parameter that may be None (timm's rotary embeddings):
            # torch keeps the dtype for None, astype refuses it: decided at run time
            return ctx.expr(f"_ms_compat.to_value({x}, dtype={ctx.code('dtype')})")
        return _cast(ctx, x, ctx.code('dtype'), node)
    if b.has("other"):
        return ctx.expr(f"{x}.astype({ctx.code('other')}.dtype)")
    a0, a1 = ob.value("arg0"), ob.value("arg1")
    if a1 is not None and not ob.positional.get("arg1"):
        a1 = None
    if a0 is not None and ob.positional.get("arg0"):
        if _is_torch_dtype(ctx, a0):
            return _cast(ctx, x, ctx.code('arg0'), a0)
        if _is_device(ctx, a0):
            if a1 is not None and _is_torch_dtype(ctx, a1):
                return _cast(ctx, x, ctx.code('arg1'), a1)
            if a1 is not None:   # decided at run time
                return ctx.expr(f"_ms_compat.to_value({x}, {ctx.code('arg0')}, {ctx.code('arg1')})")
            return ctx.receiver
        if _is_tensor(ctx, a0):
            return ctx.expr(f"{x}.astype({_paren(ctx, 'arg0')}.dtype)")
        # a device, a dtype or a tensor the converter cannot tell apart (`x.to(get_device())`): at run time
        rest = f", {ctx.code('arg1')}" if a1 is not None else ""
        return ctx.expr(f"_ms_compat.to_value({x}, {ctx.code('arg0')}{rest})")
    if b.has("device") or b.has("non_blocking") or b.has("memory_format") or b.has("copy") or not b.order:
        return ctx.receiver
    raise UnsupportedSite("unrecognised arguments of to()")


rule("Tensor.to", None, args=("arg0", "arg1", "non_blocking", "copy"), kwonly=("dtype", "other", "device", "memory_format"),
     note="to(dtype)/to(other) -> astype; to(device) is dropped: MindSpore places tensors by "
          "ms.set_context(device_target=...); an argument the converter cannot type is decided at run time "
          "(_ms_compat.to_value)", test=f"{T}::test_dtype_methods")(_to)
mapping("Tensor.cuda", "identity", args=("device", "non_blocking", "memory_format"),
        note="MindSpore places tensors by ms.set_context(device_target=...)", test=f"{T}::test_dtype_methods")
mapping("Tensor.cpu", "identity", args=("memory_format",),
        note="MindSpore returns results on the host when asked (asnumpy)", test=f"{T}::test_dtype_methods")
mapping("Tensor.detach", "mindspore.ops.stop_gradient", target_args=("value",), test=f"{T}::test_dtype_methods")
mapping("Tensor.clone", "mindspore.ops.deepcopy", args=("memory_format",), target_args=("input_x",),
        drop=("memory_format",),
        note="Tensor.clone has no CPU kernel and ops.identity aliases its input; ops.deepcopy copies and "
             "passes gradients", test=f"{T}::test_dtype_methods")
mapping("Tensor.item", "method:item", tensor_only=True, status=DIFFERENCE,
        note="a host round-trip: not graph-safe (inside construct/ms.jit keep it a tensor)",
        test=f"{T}::test_host_methods")
mapping("Tensor.tolist", "method:tolist", tensor_only=True, status=DIFFERENCE,
        note="a host round-trip: not graph-safe (inside construct/ms.jit keep it a tensor)",
        test=f"{T}::test_host_methods")
mapping("Tensor.numpy", "method:asnumpy", args=("force",), drop=("force",), status=DIFFERENCE,
        note="asnumpy() copies to the host: not graph-safe, and it cuts the gradient",
        test=f"{T}::test_host_methods")


def _requires_grad_(ctx):
    flag = ctx.code("requires_grad")
    if flag not in (None, "True", "False"):
        raise UnsupportedSite("requires_grad_ with a computed flag")
    source = ctx.original.func.value
    held = isinstance(source, cst.Attribute) and isinstance(source.value, cst.Name) and source.value.value == "self"
    if not held and (ctx.tr._is_tensor_expr(ctx.receiver) or ctx.tr._is_tensor_expr(source)):
        return ctx.receiver      # a computed tensor: what gets a gradient is chosen by ms.grad
    if id(ctx.original) in ctx.tr._stmt_calls and ctx.tr._receiver_kind(source) == "tensor":
        return ctx.expr(f"{_self(ctx)}.requires_grad_({flag or 'True'})")
    # its value is used, or the receiver may be a module (`self.backbone.requires_grad_(False)`): the helper takes both
    # (MindSpore's requires_grad_ returns None; templates/compat_parts/requires_grad.py)
    return ctx.expr(f"_ms_compat.requires_grad_({_self(ctx)}, {flag or 'True'})")


rule("Tensor.requires_grad_", None, args=("requires_grad",), status=DIFFERENCE,
     note="on a Parameter (self.<name>, a name not known to hold a computed tensor), requires_grad_ sets the flag, "
          "through _ms_compat.requires_grad_ where its value is used (MindSpore's returns None); on a computed "
          "tensor it is dropped, since MindSpore differentiates w.r.t. what ms.grad/value_and_grad are given "
          "(grad_position/weights)", test=f"{T}::test_host_methods")(_requires_grad_)


# ------------------------------------------------------------------ reductions
def _empty_safe(helper: str):
    """`x.sum()` / `x.mean(d)` -> `_ms_compat.reduce_<helper>(x, ...)` (templates/compat_parts/
    empty_reductions.py: torch's value for an input with no elements)."""
    def fn(ctx):
        b = ctx.bound
        dim = next((ctx.code(n) for n in ("dim", "axis") if b.has(n)), None)
        keep = next((ctx.code(n) for n in ("keepdim", "keep_dims") if b.has(n)), None)
        dtype = ctx.code("dtype") if b.has("dtype") and ctx.code("dtype") != "None" else None
        if b.starred or (dtype and helper not in ("sum", "mean")):
            return None
        x = _arg(ctx)
        if dtype and helper == "mean":     # torch casts the input first
            x, dtype = f"({x}).astype({dtype})", None
        parts = [x] + ([dim] if dim is not None and dim != "None" else [])
        parts += [f"keepdim={keep}"] if keep is not None else []
        parts += [f"dtype={dtype}"] if dtype else []
        return ctx.expr(f"_ms_compat.reduce_{helper}({', '.join(parts)})")
    fn.__name__ = f"_{helper}_empty_safe"
    return fn


T_EMPTY = "tests/parity/test_empty_reductions.py::test_methods"
_EMPTY_NOTE = ("through _ms_compat.reduce_{0} (templates/compat_parts/empty_reductions.py): MindSpore 2.10's "
               "kernel leaves the result uninitialised for an input with no elements; torch gives {1}")
mapping("Tensor.sum", "mindspore.ops.sum", args=("dim", "keepdim"), target_args=("input", "dim", "keepdim"),
        tensor_only=True, test=T_EMPTY, rule=_empty_safe("sum"),
        note=_EMPTY_NOTE.format("sum", "0") + " (also with a dim: a 1-D input summed over its dim is one)")
mapping("Tensor.mean", "mindspore.ops.mean", args=("dim", "keepdim"), target_args=("x", "axis", "keep_dims"),
        rename={"dim": "axis", "keepdim": "keep_dims"}, tensor_only=True,
        drop=("dtype",), test=T_EMPTY, rule=_empty_safe("mean"),
        note=_EMPTY_NOTE.format("mean", "nan") + " (also when a dim is reduced); dtype casts the input first, as in "
             "torch")
mapping("Tensor.prod", "_ms_compat.reduce_prod", args=("dim", "keepdim"), target_args=("input", "axis", "keep_dims"),
        kwonly=("dtype",),
        rename={"dim": "axis", "keepdim": "keep_dims"}, tensor_only=True, test=T_EMPTY.replace("methods", "more_methods"),
        note=_EMPTY_NOTE.format("prod", "1"))
for _n in ("amax", "amin"):
    mapping(f"Tensor.{_n}", f"_ms_compat.reduce_{_n}", args=("dim", "keepdim"),
            target_args=("input", "axis", "keepdims"), rename={"dim": "axis", "keepdim": "keepdims"},
            test="tests/parity/test_empty_reductions.py::test_refused_reductions_raise",
            note="torch's error when the reduced dim is empty (templates/compat_parts/empty_reductions.py: "
                 "MindSpore 2.10 gives uninitialised values)")
mapping("Tensor.argmax", "mindspore.ops.argmax", args=("dim", "keepdim"), target_args=("input", "dim", "keepdim"),
        tensor_only=True, test=f"{T}::test_reductions")
# Tensor.argmin: a twin of torch.argmin (int64 indices), mappings/tensor_twins.py
mapping("Tensor.all", "mindspore.ops.all", args=("dim", "keepdim"),
        target_args=("input", "axis", "keep_dims"), rename={"dim": "axis", "keepdim": "keep_dims"},
        tensor_only=True, test=f"{T}::test_reductions")


@rule("Tensor.any", None, args=("dim", "keepdim"), tensor_only=True, test=T_EMPTY.replace("methods", "any"),
     
      note="the input is cast to bool first: MindSpore 2.10's any of a float or int tensor is wrong on CPU "
           "(any([[0., 2., .5]], 1) is False); " + _EMPTY_NOTE.format("any", "False") + " (also when a dim is "
           "reduced)")
def _any(ctx):
    b = ctx.bound
    receiver = ctx.receiver
    while isinstance(receiver, cst.Subscript):
        receiver = receiver.value
    boolean = isinstance(ctx.receiver, cst.Comparison) or isinstance(receiver, cst.Comparison)  # `(y > 0).any()`
    parts = [_arg(ctx) if boolean else f"{_self(ctx)}.astype(ms.bool_)"]
    if b.has("dim") and ctx.code("dim") != "None":
        parts.append(ctx.code("dim"))
    if b.has("keepdim"):
        parts.append(f"keepdim={ctx.code('keepdim')}")
    return ctx.expr(f"_ms_compat.reduce_any({', '.join(parts)})")


def _looks_like_dim(ctx, node, code: str) -> Optional[bool]:
    """True: a dimension; False: a tensor; None: cannot tell."""
    if _is_int(code):
        return True
    if _is_tensor(ctx, node):
        return False
    last = code.rsplit(".", 1)[-1].lower()
    if "dim" in last or "axis" in last:
        return True
    return None


def _max_min(op: str, elementwise: str):
    def fn(ctx):
        b = ctx.bound
        x = _self(ctx)
        if b.has("other"):
            return ctx.expr(f"ops.{elementwise}({x}, {ctx.code('other')})")
        if not b.has("dim"):
            if b.has("keepdim"):
                raise UnsupportedSite("keepdim without dim")
            return ctx.expr(f"_ms_compat.reduce_a{op}({_arg(ctx)})")    # torch's error for an empty input
        dim = ctx.code("dim")
        if b.positional.get("dim"):
            kind = _looks_like_dim(ctx, _original(ctx, ("dim", "keepdim")).value("dim"), dim)
            if kind is None:
                raise UnsupportedSite(f"cannot tell whether {dim} is a dimension or a tensor")
            if kind is False:
                return ctx.expr(f"ops.{elementwise}({x}, {dim})")
        keep = ctx.code("keepdim")
        keep_s = f", keepdims={keep}" if keep is not None else ""
        return ctx.expr(f"ops.{op}({x}, {dim}{keep_s})")
    return fn


rule("Tensor.max", None, args=("dim", "keepdim"), tensor_only=True,
     note="max(dim) returns a plain (values, indices) tuple: use [0]/[1] instead of .values/.indices; "
          "max(other) -> ops.maximum", test=f"{T}::test_reductions")(_max_min("max", "maximum"))
rule("Tensor.min", None, args=("dim", "keepdim"), tensor_only=True,
     note="min(dim) returns a plain (values, indices) tuple: use [0]/[1] instead of .values/.indices; "
          "min(other) -> ops.minimum", test=f"{T}::test_reductions")(_max_min("min", "minimum"))


def _std_var(op: str):
    def fn(ctx):
        b = ctx.bound
        x = _self(ctx)
        dim, unbiased = b.code("dim"), b.code("unbiased")
        if dim in ("True", "False") and b.positional.get("dim"):     # legacy std(unbiased)
            dim, unbiased = None, dim
        if b.has("correction"):
            ddof = ctx.code("correction")
        elif unbiased is None or unbiased == "True":
            ddof = "1"
        elif unbiased == "False":
            ddof = "0"
        else:
            ddof = f"(1 if {_paren(ctx, 'unbiased')} else 0)"
        parts = [x] + ([dim] if dim not in (None, "None") else [])
        parts.append(f"ddof={ddof}")
        if b.has("keepdim"):
            parts.append(f"keepdims={ctx.code('keepdim')}")
        return ctx.expr(f"_ms_compat.reduce_{op}({', '.join(parts)})")     # nan for an empty input
    return fn


for _n in ("std", "var"):
    rule(f"Tensor.{_n}", None, args=("dim", "unbiased", "keepdim"), tensor_only=True,
         note="ddof passed explicitly: MindSpore's default is 0, torch's is the unbiased estimate (1)",
         test=f"{T}::test_reductions")(_std_var(_n))


def _norm(ctx):
    b = ctx.bound
    if b.has("dtype"):
        raise UnsupportedSite("norm(dtype=...) has no exact counterpart")
    p = b.code("p")
    if p in ("'nuc'", '"nuc"'):
        raise UnsupportedSite("the nuclear norm is not mapped")
    if p in (None, "'fro'", '"fro"', "2", "2.0"):
        ordc = None
    else:
        ordc = p
    parts = [_arg(ctx)]
    if ordc is not None:
        parts.append(f"ord={ordc}")
    if b.has("dim") and b.code("dim") != "None":
        dim = ctx.code("dim")
        if dim.startswith("[") and dim.endswith("]"):   # ops.vector_norm takes an int or a tuple, not a list
            inner = dim[1:-1].strip().rstrip(",")
            dim = f"({inner},)" if inner else "()"
        parts.append(f"axis={dim}")
    if b.has("keepdim"):
        parts.append(f"keepdims={ctx.code('keepdim')}")
    return ctx.expr(f"_ms_compat.reduce_vector_norm({', '.join(parts)})")     # 0 for an empty input


rule("Tensor.norm", None, args=("p", "dim", "keepdim", "dtype"), tensor_only=True,
     note="torch's Tensor.norm is a vector norm over dim (all elements when dim is None): ops.vector_norm "
          "(ops.norm would take a matrix norm of 2-D input)", test=f"{T}::test_reductions")(_norm)


def _cumsum(ctx):
    b = ctx.bound
    dim = ctx.code("dim")
    if dim is None:
        raise UnsupportedSite("cumsum needs dim")
    dt = f", dtype={ctx.code('dtype')}" if b.has("dtype") else ""
    return ctx.expr(f"_ms_compat.as_vector(lambda _ms_x: _ms_x.cumsum({dim}{dt}), {_self(ctx)})")


rule("Tensor.cumsum", None, args=("dim",), tensor_only=True,
     note="dim passed positionally (the keyword fails in GRAPH mode); a bool/int32 input sums to int32 "
          "(torch: int64); " + AS_VECTOR_NOTE, test=f"{T}::test_reductions")(_cumsum)

# ------------------------------------------------------------------ activations and elementwise
mapping("Tensor.softmax", "_ms_compat.softmax", args=("dim", "dtype"), target_args=("input", "axis", "dtype"),
        rename={"dim": "axis"}, note="dim -> axis; through _ms_compat.softmax (templates/compat_parts/softmax_slices.py): a slice of all -inf gives torch's nan, where MindSpore 2.10's CPU kernel gives 0 and garbage in the slices after it", test="tests/parity/test_softmax_slices.py::test_softmax_forms")
mapping("Tensor.log_softmax", "_ms_compat.log_softmax", args=("dim", "dtype"), target_args=("input", "axis", "dtype"),
        rename={"dim": "axis"}, note="dim -> axis; dtype casts the input first, as in torch; " + LOG_SOFTMAX_NOTE,
        test=LOG_SOFTMAX_TEST)
_UNARY_TORCH_ONLY = ("sigmoid", "tanh", "relu", "rsqrt", "neg")
_UNARY_GENERIC = ("exp", "log", "sqrt", "floor", "ceil", "sign")
_FLOAT_FUNCTIONS = ("sigmoid", "tanh", "rsqrt", "exp", "log", "sqrt", "sin", "cos", "tan", "atan", "sinh", "cosh",
                    "log1p", "expm1")


def _float_function(name: str, target: str = ""):
    """x.NAME() of a float function: ops.NAME(x) (or `target`(x)), an integer or bool x promoted to float32 as
    torch does."""
    def fn(ctx):
        return ctx.expr(f"{target or 'ops.' + name}({float_input_code(_arg(ctx), ctx, ctx.receiver)})")
    return fn


for _n in _UNARY_TORCH_ONLY + _UNARY_GENERIC:
    if _n in PRECISE_ON_CPU:
        rule(f"Tensor.{_n}", f"_ms_compat.precise_{_n}", tensor_only=_n in _UNARY_GENERIC,
             note=precise_note(_n) + "; " + FLOAT_INPUT_NOTE, test=T_PRECISE)(
            _float_function(_n, f"_ms_compat.precise_{_n}"))
    elif _n in PRECISE:
        rule(f"Tensor.{_n}", PRECISE[_n], tensor_only=_n in _UNARY_GENERIC, note=FLOAT_INPUT_NOTE + "; " + PRECISE_NOTE,
             test=PRECISE_TEST)(_float_function(_n, PRECISE[_n]))
    elif _n in _FLOAT_FUNCTIONS:
        rule(f"Tensor.{_n}", f"mindspore.ops.{_n}", tensor_only=_n in _UNARY_GENERIC, note=float_function_note(_n),
             test=f"{T}::test_elementwise")(_float_function(_n))
    else:
        mapping(f"Tensor.{_n}", f"mindspore.ops.{_n}", target_args=("input",), tensor_only=_n in _UNARY_GENERIC,
                test=f"{T}::test_elementwise")
for _n in ("abs", "absolute"):     # of a complex tensor, the real magnitude (ops.abs keeps the complex dtype)
    mapping(f"Tensor.{_n}", "_ms_compat.magnitude", target_args=("value",), tensor_only=True,
            test="tests/test_first_rule_gaps.py::test_complex_magnitude_and_parts_are_real_as_in_torch",
            note="ops.abs; of a complex tensor, its real magnitude (ops.abs keeps the complex dtype)")
mapping("Tensor.negative", "mindspore.ops.neg", target_args=("input",), test=f"{T}::test_elementwise")
mapping("Tensor.is_floating_point", "mindspore.ops.is_floating_point", target_args=("input",), tensor_only=True,
        test=f"{T}::test_unary_math_methods")
for _n in ("sin", "cos", "tan", "atan", "sinh", "cosh"):
    rule(f"Tensor.{_n}", f"mindspore.ops.{_n}", tensor_only=True, note=FLOAT_INPUT_NOTE,
         test=f"{T}::test_unary_math_methods")(_float_function(_n))
rule("Tensor.expm1", "_ms_compat.precise_expm1", tensor_only=True, note=precise_note("expm1") + "; " + FLOAT_INPUT_NOTE,
     test=T_PRECISE)(_float_function("expm1", "_ms_compat.precise_expm1"))
rule("Tensor.log1p", "_ms_compat.special_log1p", tensor_only=True, note=LOG1P_NOTE + "; " + FLOAT_INPUT_NOTE,
     test=T_LOG1P)(_float_function("log1p", "_ms_compat.special_log1p"))
for _n in ("reciprocal", "square"):
    mapping(f"Tensor.{_n}", f"mindspore.ops.{_n}", target_args=("input",), tensor_only=True,
            test=f"{T}::test_unary_math_methods")


def _round(ctx):
    x = _self(ctx)
    d = ctx.code("decimals")
    if d in (None, "0"):
        return ctx.expr(f"ops.round({_arg(ctx)})")
    return ctx.expr(round_decimals_code(x, d))


rule("Tensor.round", None, args=("decimals",), tensor_only=True,
     note="rounds half to even, like torch; decimals=d is computed as torch does, round(x * 10^d) / 10^d "
          "(the CPU Round kernel accepts decimals=0 only)", test=f"{T}::test_elementwise")(_round)
mapping("Tensor.pow", "mindspore.ops.pow", args=("exponent",), target_args=("input", "exponent"), tensor_only=True,
        test=f"{T}::test_elementwise")
mapping("Tensor.clamp", "mindspore.ops.clamp", args=("min", "max"), target_args=("input", "min", "max"),
        rule=mixed_clamp_bounds(_arg), test=f"{T}::test_elementwise")
mapping("Tensor.clip", "mindspore.ops.clamp", args=("min", "max"), target_args=("input", "min", "max"),
        rule=mixed_clamp_bounds(_arg), tensor_only=True, test=f"{T}::test_elementwise")
mapping("Tensor.clamp_min", "expr:" + CLAMP_MIN.format(x="{self}", bound="{min}"), args=("min",), test=T_EDGE,
        note=CLAMP_NOTE)
mapping("Tensor.clamp_max", "expr:" + CLAMP_MAX.format(x="{self}", bound="{max}"), args=("max",), test=T_EDGE,
        note=CLAMP_NOTE)


def _add_sub(op: str):
    def fn(ctx):
        b = ctx.bound
        other = ctx.code("other")
        if other is None:
            raise UnsupportedSite("needs other")
        if b.has("alpha") and ctx.code("alpha") not in ("1",):
            other = f"{_paren(ctx, 'other')} * {_paren(ctx, 'alpha')}"
        return ctx.expr(f"ops.{op}({_arg(ctx)}, {other})")
    return fn


rule("Tensor.add", None, args=("other", "alpha"), tensor_only=True, note="alpha multiplies other",
     test=f"{T}::test_arithmetic")(_add_sub("add"))
rule("Tensor.sub", None, args=("other", "alpha"), tensor_only=True, note="alpha multiplies other",
     test=f"{T}::test_arithmetic")(_add_sub("sub"))
# a complex operand with another dtype: MindSpore 2.10 CPU Mul/Div refuse the pair (compat_parts/complex_operands.py)
mapping("Tensor.mul", "_ms_compat.mul", args=("other",), target_args=("input", "other"), tensor_only=True,
        test="tests/parity/test_torch_complex.py::test_mixed_complex_products_match_torch")
mapping("Tensor.div", "_ms_compat.div", args=("other",), target_args=("input", "other"), tensor_only=True,
        kwonly=("rounding_mode",),
        test="tests/parity/test_torch_complex.py::test_mixed_complex_products_match_torch")
_PRODUCT_NOTE = ("through _ms_compat.{0} (templates/compat_parts/empty_products.py): torch's zeros when the "
                 "contracted dim is empty (MindSpore 2.10's kernel leaves that result uninitialised)")
mapping("Tensor.matmul", "_ms_compat.matmul", args=("other",), target_args=("input", "other"),
        note=_PRODUCT_NOTE.format("matmul"), test="tests/parity/test_empty_products.py::test_methods")
mapping("Tensor.mm", "_ms_compat.mm", args=("mat2",), target_args=("input", "mat2"),
        note=_PRODUCT_NOTE.format("mm"), test="tests/parity/test_empty_products.py::test_methods")
mapping("Tensor.bmm", "_ms_compat.bmm", args=("mat2",), target_args=("input_x", "mat2"),
        note=_PRODUCT_NOTE.format("bmm"), test="tests/parity/test_empty_products.py::test_methods")
for _n, _ms in (("eq", "equal"), ("ne", "ne"), ("gt", "gt"), ("ge", "ge"), ("lt", "lt"), ("le", "le")):
    mapping(f"Tensor.{_n}", f"mindspore.ops.{_ms}", args=("other",), target_args=("input", "other"),
            tensor_only=True, test=f"{T}::test_arithmetic")


# ------------------------------------------------------------------ creation from a tensor
_NEW_DROP = ("device", "requires_grad", "layout", "pin_memory", "memory_format")


def _new(kind: str):
    @_starred
    def fn(ctx):
        b = ctx.bound
        x = _self(ctx)
        for n in _NEW_DROP:     # requires_grad= as for torch.zeros: MindSpore differentiates what ms.grad is given
            b.remove(n)
        dtype = ctx.code("dtype") or f"{x}.dtype"
        if kind == "tensor":
            data = ctx.code("data")
            if data is None:
                raise UnsupportedSite("new_tensor needs data")
            return ctx.expr(f"ms.Tensor({data}, {dtype})")
        if kind == "full":
            fill = ctx.code("fill_value")
            if fill is None or ctx.bound.starred:
                raise UnsupportedSite("new_full(size, fill_value) with unpacked arguments")
            return ctx.expr(f"ops.full({ctx.code('size')}, {fill}, dtype={dtype})")
        b.remove("dtype")
        return ctx.expr(f"ops.{kind}({_sizes(ctx)}, {dtype})")
    return fn


rule("Tensor.new_zeros", None, args=("size",), note="dtype follows the receiver, as in torch; requires_grad= is dropped (MindSpore differentiates what ms.grad is given)",
     test=f"{T}::test_creation_methods")(_new("zeros"))
rule("Tensor.new_ones", None, args=("size",), note="dtype follows the receiver, as in torch; requires_grad= is dropped (MindSpore differentiates what ms.grad is given)",
     test=f"{T}::test_creation_methods")(_new("ones"))
rule("Tensor.new_empty", None, args=("size",),
     note="filled with zeros (torch leaves it uninitialised); dtype follows the receiver; requires_grad= is dropped",
     test=f"{T}::test_creation_methods")(_new("zeros"))
def _here(ctx) -> str:
    return f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"


@_starred
def _resize(ctx):
    return ctx.expr(f"_ms_compat.resize_({_arg(ctx)}, {_sizes(ctx)}, {_here(ctx)!r})")


def _resize_as(ctx):
    return ctx.expr(f"_ms_compat.resize_as_({_arg(ctx)}, {ctx.code('the_template')}, {_here(ctx)!r})")


_RESIZE_NOTE = ("the tensor itself takes the new shape (Tensor.set_: every name holding it sees it, as in "
                "torch); the elements kept are torch's, in storage order, those it adds zeros (torch leaves them "
                "uninitialised); in compiled code a MigrationError")
rule("Tensor.resize_", None, args=("size",), note=_RESIZE_NOTE,
     test="tests/test_heldout53_programs.py::test_buffer_resized_each_batch")(_resize)
rule("Tensor.resize_as_", None, args=("the_template",), note=_RESIZE_NOTE,
     test="tests/test_heldout53_programs.py::test_buffer_resized_each_batch")(_resize_as)
rule("Tensor.new_full", None, args=("size", "fill_value"),
     note="ops.full (Tensor.new_full is Ascend-only); dtype follows the receiver; requires_grad= is dropped",
     test=f"{T}::test_creation_methods")(_new("full"))
rule("Tensor.new_tensor", None, args=("data",), note="a constant tensor; dtype follows the receiver",
     test=f"{T}::test_creation_methods")(_new("tensor"))


# ------------------------------------------------------------------ order and selection
@_starred
def _flip(ctx):
    b = ctx.bound
    if b.has("dims") and not b.positional.get("dims"):
        dims = ctx.code("dims")
        v = b.value("dims")
        if not isinstance(v, (cst.Tuple, cst.List)) and _is_int(dims):
            dims = f"({dims},)"
        return ctx.expr(f"ops.flip({_arg(ctx)}, {dims})")
    return ctx.expr(f"ops.flip({_arg(ctx)}, {_sizes(ctx, 'dims')})")


rule("Tensor.flip", None, args=("dims",), note="ops.flip takes a tuple of dims",
     test=f"{T}::test_order_methods")(_flip)


def _literal_list(node) -> Optional[List[str]]:
    if isinstance(node, (cst.Tuple, cst.List)):
        return [cst.Module(body=[]).code_for_node(e.value).strip() for e in node.elements]
    return None


def _roll(ctx):
    b = ctx.bound
    shifts, dims = b.value("shifts"), b.value("dims")
    if shifts is None:
        raise UnsupportedSite("roll needs shifts")
    x = _self(ctx)
    if not isinstance(ctx.receiver, (cst.Name, cst.Attribute)):
        raise UnsupportedSite("roll of a computed expression: assign it to a name first")
    sl, dl = _literal_list(shifts), _literal_list(dims) if dims is not None else None
    if dims is None or ctx.code("dims") == "None":
        if sl is not None:
            raise UnsupportedSite("roll with several shifts and no dims")
        s = ctx.code("shifts")
        flat = f"ops.reshape({x}, (-1,))"
        return ctx.expr(_unless_empty(f"ops.reshape({_roll_one(flat, s, '0', n=f'{x}.size')}, {x}.shape)", x))
    if (sl is None) != (dl is None) or (sl is not None and len(sl) != len(dl)):
        raise UnsupportedSite("roll shifts and dims must both be ints or both tuples of one length")
    pairs = list(zip(sl, dl)) if sl is not None else [(ctx.code("shifts"), ctx.code("dims"))]
    out = x
    for s, d in pairs:
        out = _roll_one(out, s, d, n=f"{x}.shape[{d}]")
    return ctx.expr(_unless_empty(out, x))


def _unless_empty(rolled: str, x: str) -> str:
    """A tensor with no elements rolls to itself, as torch (the `% n` of an empty dimension divides by zero)."""
    return f"({rolled} if {x}.size else {x})"


def _roll_one(x: str, s: str, d: str, n: str) -> str:
    s = s if _is_int(s) and not s.strip().startswith("-") else f"({s})"
    return f"ops.narrow(ops.cat(({x}, {x}), {d}), {d}, {n} - {s} % {n}, {n})"


rule("Tensor.roll", None, args=("shifts", "dims"),
     note="built from cat + narrow: MindSpore's Roll has no CPU kernel; a tensor with no elements is returned as it "
          "is, as torch", test=f"{T}::test_order_methods")(_roll)
# Tensor.topk / sort / argsort: twins of the torch functions (int64 indices), mappings/tensor_twins.py


# out-of-place forms the converter also uses to rebind `x.floor_divide_(y)` / `x.remainder_(y)`
# statements on a local tensor (MindSpore's own in-place forms leave the tensor unchanged)
mapping("Tensor.floor_divide", "expr:ops.floor_divide({self}, {other})", args=("other",),
        note="rounds toward negative infinity, as torch >= 1.13", test=f"{T}::test_inplace")
mapping("Tensor.remainder", "expr:ops.remainder({self}, {other})", args=("other",),
        note="the sign of the divisor (Python %), as in torch", test=f"{T}::test_inplace")
mapping("Tensor.fmod", "expr:ops.fmod({self}, {other})", args=("other",),
        note="the sign of the dividend, as in torch", test=f"{T}::test_inplace")

mapping("Tensor.__matmul__", "_ms_compat.matmul", args=("other",), target_args=("input", "other"),
        note="a @ b of tensors, or of values the converter cannot type (`@` itself for anything but a tensor), "
             + _PRODUCT_NOTE.format("matmul"),
        test="tests/parity/test_empty_products.py::test_methods")
mapping("Tensor.__invert__", "_ms_compat.invert", target_args=("x",),
        note="~x on a tensor: bitwise not on integer tensors (MindSpore's ~ is a logical not there), "
             "logical not on bool tensors", test="tests/parity/test_real_programs.py::test_inplace_rebinds")


# ------------------------------------------------------------------ in-place
mapping("Tensor.copy_", "method:copy_", args=("src", "non_blocking"), target_args=("src",),
        drop=("non_blocking",), rename={"other": "src"},   # torch's parser also takes src as other=
        note="truly in place on CPU in PyNative and GRAPH mode (broadcasts and casts like torch)",
        test=f"{T}::test_inplace")

# Filling a tensor in place: the nn.init helpers write through Parameter.set_data or, for a
# plain tensor such as `param.data`, Tensor.copy_ (truly in place). That is what weight-init code
# (`m.weight.data.normal_(0, 0.02)`, `m.bias.data.zero_()`) needs; inside construct under GRAPH
# mode the helpers cannot run (initializers are Python objects), which fails loudly at compile.
_FILL_NOTE = ("fills in place through Parameter.set_data / Tensor.copy_ (the nn.init helpers): works where "
              "weights are initialised (PyNative, outside construct); not inside construct under GRAPH mode")
mapping("Tensor.zero_", "_ms_compat.zeros_", target_args=("param",), status=DIFFERENCE, note=_FILL_NOTE,
        test=f"{T}::test_fill_in_place")
mapping("Tensor.fill_", "_ms_compat.constant_", args=("value",), target_args=("param", "val"),
        rename={"value": "val"}, status=DIFFERENCE, note=_FILL_NOTE, test=f"{T}::test_fill_in_place")
mapping("Tensor.normal_", "_ms_compat.normal_", args=("mean", "std", "generator"), target_args=("param", "mean", "std"),
        drop=("generator",), status=DIFFERENCE,
        note=_FILL_NOTE + "; the random stream differs from torch's", test=f"{T}::test_fill_in_place")
mapping("Tensor.uniform_", "_ms_compat.uniform_", args=("from", "to", "generator"), target_args=("param", "a", "b"),
        rename={"from": "a", "to": "b"}, drop=("generator",), status=DIFFERENCE,
        note=_FILL_NOTE + "; the random stream differs from torch's", test=f"{T}::test_fill_in_place")

_INPLACE_FN = {
    "add_": "x = x + y (or ops.add)", "sub_": "x = x - y", "mul_": "x = x * y", "div_": "x = x / y",
    "pow_": "x = ops.pow(x, p)", "clamp_": "x = ops.clamp(x, lo, hi)", "clamp_min_": "x = ops.clamp(x, min=lo)",
    "clamp_max_": "x = ops.clamp(x, max=hi)", "clip_": "x = ops.clamp(x, lo, hi)",
    "masked_fill_": "x = ops.masked_fill(x, mask, v)", "exp_": "x = ops.exp(x)", "log_": "x = ops.log(x)",
    "sqrt_": "x = ops.sqrt(x)", "abs_": "x = ops.abs(x)", "neg_": "x = -x", "relu_": "x = ops.relu(x)",
    "sigmoid_": "x = ops.sigmoid(x)", "tanh_": "x = ops.tanh(x)", "floor_": "x = ops.floor(x)",
    "ceil_": "x = ops.ceil(x)", "round_": "x = ops.round(x)", "sign_": "x = ops.sign(x)",
    "unsqueeze_": "x = ops.unsqueeze(x, d)", "squeeze_": "x = ops.squeeze(x, d)", "t_": "x = ops.t(x)",
    "transpose_": "x = ops.swapaxes(x, a, b)", "index_fill_": "x = x.index_fill(...)",
    "index_add_": "x = ops.index_add(...)", "scatter_": "x = ops.scatter(...)",
    "scatter_add_": "x = ops.tensor_scatter_elements(..., reduction='add')",
    "addcmul_": "x = x + v * a * b", "addcdiv_": "x = x + v * a / b", "lerp_": "x = ops.lerp(x, end, w)",
    "addmm_": "x = b * x + a * (m1 @ m2)", "detach_": "x = ops.stop_gradient(x)",
    "bernoulli_": "x = ops.bernoulli(x, p)", "exponential_": "a sampled tensor", "random_": "a sampled tensor",
    "resize_": "x = ops.reshape(...) (resize_ may reallocate)", "set_": "rebind the name",
    # measured on MindSpore 2.10 CPU: in PyNative add_/sub_/mul_/div_/exp_/floor_divide_/remainder_
    # run and leave the tensor unchanged (copy_ works; fill_/zero_/clamp_/masked_fill_/index_fill_/
    # uniform_/normal_/sigmoid_/tanh_/floor_/log_/sign_/scatter_ have no kernel; triu_/tril_/abs_/neg_/
    # sqrt_/pow_/relu_/ceil_/round_/fmod_/... do not exist); inside construct under GRAPH mode
    # add_/mul_/div_/copy_/floor_divide_/remainder_ change it, sub_ does not, fill_/zero_/exp_/clamp_ fail
    "floor_divide_": "x = ops.floor_divide(x, y)", "remainder_": "x = ops.remainder(x, y)",
    "fmod_": "x = ops.fmod(x, y)",
}
# the records of these (and of every other in-place method) are made by mappings/inplace.py, imported
# last: a rebinding where the out-of-place form has a record, else a TODO saying how to rewrite it


def _module_to(ctx):
    """Module.to(device) moves parameters: nothing to do in MindSpore. Module.to(dtype)
    casts every parameter, which has no one-call MindSpore counterpart."""
    b = ctx.bound
    positional = [b.value(n) for n in b.order if b.positional.get(n)]
    module = code_of(ctx.receiver).strip()
    if b.has("dtype"):
        return ctx.expr(f"_ms_compat.module_cast({module}, {b.code('dtype')})")
    ob = _original(ctx, ("arg0", "arg1", "non_blocking", "dtype"))
    dtypes = [n for n in ("arg0", "arg1") if ob.positional.get(n) and _is_torch_dtype(ctx, ob.value(n))]
    if dtypes:
        return ctx.expr(f"_ms_compat.module_cast({module}, {b.code(dtypes[0])})")
    if not all(_is_device(ctx, v) for v in positional):
        # a device or a dtype the converter cannot tell apart (`model.to(dist_util.dev())`): at run time
        return ctx.expr(f"_ms_compat.to_value({module}, {', '.join(code_of(v).strip() for v in positional)})")
    return ctx.receiver


rule("Module.to", None, args=("arg0", "arg1", "non_blocking", "dtype"),
     note="to(device) is dropped: MindSpore places cells by ms.set_context(device_target=...); to(dtype) casts the "
          "floating-point parameters and buffers in place (_ms_compat.module_cast); an argument the converter "
          "cannot type is decided at run time (_ms_compat.to_value)",
     test=f"{T}::test_module_device_calls")(_module_to)
mapping("Module.cuda", "identity", args=("device",),
        note="MindSpore places cells by ms.set_context(device_target=...)", test=f"{T}::test_module_device_calls")
mapping("Module.cpu", "identity", note="MindSpore places cells by ms.set_context(device_target=...)",
        test=f"{T}::test_module_device_calls")
# module.float()/.half()/...: cast every floating parameter and buffer in place; a Cell has no such
# method (Cell.to_float only sets the compute precision). On a receiver known to be a module; on the
# result of an untyped call outside a class (`build_model(sd).float()`) msmigrate/module_cast.py decides
# at run time; elsewhere x.float() stays the tensor cast.
for _n in ("float", "half", "bfloat16"):
    mapping(f"Module.{_n}", f"expr:_ms_compat.module_cast({{self}}, ms.{_CASTS[_n]})",
            test="tests/parity/test_module_api.py::test_module_dtype_cast",
            note="every floating-point parameter and buffer cast in place (Parameter.set_dtype); returns the "
                 "cell")


@rule("Module.type", args=("dst_type",), test="tests/parity/test_module_api.py::test_module_type_cast",
      note="module.type(dtype): every parameter and buffer cast in place, integer ones too, as torch "
           "(_ms_compat.module_cast with every=True); a dst_type that is no torch dtype (a tensor type name) "
           "stays a TODO")
def _module_type(ctx):
    node = _original(ctx, ("dst_type",)).value("dst_type")
    if not _is_torch_dtype(ctx, node):
        raise UnsupportedSite("module.type() with a dst_type that is no torch dtype (a type name string or class)")
    where = f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"
    return ctx.expr(f"_ms_compat.module_cast({ctx.receiver_code()}, {ctx.bound.code('dst_type')}, {where!r}, "
                    "every=True)")


@rule("Module.double", test="tests/parity/test_module_api.py::test_module_dtype_cast",
      note="every floating-point parameter and buffer cast in place (Parameter.set_dtype); returns the cell; a "
           "cell holding a convolution layer (no MindSpore kernel takes float64) raises MigrationError naming "
           "the line")
def _module_double(ctx):
    where = f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"
    return ctx.expr(f"_ms_compat.module_cast({ctx.receiver_code()}, ms.float64, {where!r})")

