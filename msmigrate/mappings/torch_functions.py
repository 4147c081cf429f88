"""`torch.*` tensor functions and creation functions -> classic `mindspore.ops` / `mindspore.Tensor`.

Every record here is proven by tests/parity/test_torch_functions.py, in PyNative and inside
`ms.jit`. Facts that shaped the records (MindSpore 2.10, CPU, all verified there):
  * `ops.full(size, 1.5)` infers int64 (and fills 1): the dtype is always passed explicitly.
  * `ops.flatten` defaults start_dim=1 (torch 0); torch.meshgrid goes through _ms_compat.meshgrid (ops.meshgrid: 'xy', no one-tensor graph).
  * `ops.diag` of a 2-D tensor builds a 4-D tensor (torch extracts the diagonal).
  * `ops.roll` has no CPU kernel: `mindspore.numpy.roll` is used. `ops.einsum` has none either.
  * `ops.randperm` uses a fixed seed (same permutation on every call): shuffled arange instead.
  * `ops.argmin`, `ops.argsort`, `ops.sort`, `ops.topk` return int32 indices (torch int64).
  * `ops.unique` keeps first-appearance order (torch sorts); `ops.multinomial` defaults to
    replacement=True (torch False) and returns int32.
  * NaN: `ops.max/min/amax/amin/maximum/minimum/argmax/argmin/sort/topk/clamp` ignore NaN where torch
    propagates it.
"""
from __future__ import annotations

import ast
import re
from typing import List, Optional, Sequence, Tuple

import libcst as cst

from ..callsite import UnsupportedSite, code_of
from ..records import CONVERTED, DIFFERENCE, mapping, rule
from .compose import OUT_NOTE, composed, fill
from .edge_args import (mixed_clamp_bounds, PRECISE, PRECISE_NOTE, PRECISE_TEST, float_function_note, PRECISE_ON_CPU, T_PRECISE, precise_note, AS_VECTOR_NOTE, FLOAT_INPUT_NOTE, INDEX_SELECT, LOG1P_NOTE, LOG_SOFTMAX_NOTE, LOG_SOFTMAX_TEST, T_LOG1P, NARROW_NOTE, T_EDGE, dims_as_tuple,
                        empty_dims_keep, float_function, narrow_from_end, round_decimals_code)

T = "tests/parity/test_torch_functions.py"
T_CREATE, T_TENSOR, T_RANDOM, T_SHAPE, T_MATH, T_RED, T_CMP, T_NORM, T_TODO = (f"{T}::{name}" for name in (
    "test_creation", "test_tensor_constructors", "test_random", "test_shape_ops", "test_math", "test_reductions",
    "test_comparison", "test_norms", "test_todo_sites"))
# index results in torch's int64 (values and dtypes compared)
T_IDX = "tests/parity/test_index_dtypes.py::test_index_dtypes"

# Arguments of torch's factory functions that mean nothing in MindSpore.
_FACTORY_DROP = ("device", "layout", "requires_grad", "pin_memory", "memory_format", "generator",
                 "non_blocking", "names")
_KEEP_GENERATOR = tuple(a for a in _FACTORY_DROP if a != "generator")     # a rule that reads generator=
_OUT = {"out": "out= has no MindSpore counterpart (MindSpore functions return new tensors): assign the result"}
_OUT_OK = {"out": ("None",)}
_GRAD_NOTE = ("requires_grad= is dropped: MindSpore differentiates with ms.grad/value_and_grad over "
              "function inputs and Parameters (make a trainable leaf a Parameter)")
_FACTORY_NOTE = "device= is dropped (MindSpore places tensors by context); " + _GRAD_NOTE
_RANDOM_NOTE = ("random: MindSpore's random stream differs from torch's (the same seed gives different "
                "numbers); a generator= draws from that generator's own stream (NumPy's, seeded from its seed and "
                "offset: the same seed gives the same draws, as torch's)")
_NAN_NOTE = "NaN inputs: MindSpore ignores NaN here where torch propagates it"
_TUPLE_NOTE = ("returns a plain (values, indices) tuple: unpack it or index [0]/[1] "
               "(torch's .values/.indices attributes do not exist)")

_SIMPLE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*$|^-?\d+(\.\d*)?([eE][-+]?\d+)?$")


# ----------------------------------------------------------------- helpers
def _lit(code: Optional[str]):
    """The Python value of a literal argument, or raise ValueError."""
    if code is None:
        raise ValueError("absent")
    return ast.literal_eval(code)


def _is_lit(code: Optional[str], types) -> bool:
    try:
        v = _lit(code)
    except Exception:
        return False
    allowed = types if isinstance(types, tuple) else (types,)
    if isinstance(v, bool) and bool not in allowed:
        return False
    return isinstance(v, allowed)


def _given(b, name: str) -> bool:
    """The argument is given with a value other than None."""
    return b.has(name) and b.code(name) != "None"


def _generator_draw(ctx, b, kind: str, size: str, dtype: Optional[str], params: Sequence[str] = ()) -> Optional[str]:
    """A draw given `generator=g` (not None): `_ms_compat.generator_draw(g, kind, size, dtype, params, where)`, from
    the generator's own stream (as torch's: the same seed gives the same draws, apart from the global stream); None
    where no generator is given. MindSpore's generator= ops (mint.randn, mint.randperm...) have no CPU kernels."""
    if not _given(b, "generator"):
        return None
    where = f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"
    return ctx.expr(f"_ms_compat.generator_draw({b.code('generator')}, {kind!r}, {size}, {dtype or 'None'}, "
                    f"({''.join(p + ', ' for p in params).rstrip()}), {where!r})")


def _once(code: str, body) -> str:
    """`body(v)` for an expression that it uses more than once: inline when the code is a
    plain name/number, else bound once through a lambda (works inside ms.jit too)."""
    if _SIMPLE.match(code):
        return body(code)
    return f"(lambda _ms_v: {body('_ms_v')})({code})"


def _check_args(b, known: Sequence[str], drop: Sequence[str] = _FACTORY_DROP) -> None:
    """out= makes the site a TODO; dropped arguments disappear; anything unknown is a TODO."""
    if _given(b, "out"):
        raise UnsupportedSite(f"argument out={b.code('out')}: {_OUT['out']}")
    for name in list(b.order):
        if name == "out" or name in drop:
            b.remove(name)
        elif name not in known:
            raise UnsupportedSite(f"argument {name} is not translated")
    if any(a.star == "**" for a in b.starred):
        raise UnsupportedSite("**kwargs cannot be translated argument by argument")


def _call(ctx, func: str, pos: Sequence[str] = (), kw: Sequence[Tuple[str, Optional[str]]] = ()):
    parts = [p for p in pos]
    parts += [f"{k}={v}" for k, v in kw if v is not None]
    return ctx.expr(f"{func}({', '.join(parts)})")


def _dtype(b) -> Optional[str]:
    return b.code("dtype") if _given(b, "dtype") else None


def _size_from_call(ctx, first_keyword: str = "size", kwargs_ok: bool = False) -> Tuple[str, List[str]]:
    """torch's `*size` (ints, one sequence, or starred) -> one size expression.
    Returns (size code, names of the keyword arguments). `kwargs_ok`: the caller translates `**kw`."""
    positional: List[str] = []
    keywords: List[str] = []
    for arg in ctx.bound.call.args:
        c = code_of(arg.value).strip()
        if arg.star == "**":
            if kwargs_ok:
                continue
            raise UnsupportedSite("**kwargs cannot be translated argument by argument")
        if arg.star == "*":
            positional.append("*" + c)
        elif arg.keyword is None:
            positional.append(c)
        else:
            keywords.append(arg.keyword.value)
    if first_keyword in keywords:
        if positional:
            raise UnsupportedSite("size given both positionally and by keyword")
        return ctx.bound.code(first_keyword), keywords
    if not positional:
        raise UnsupportedSite("no size given")
    if len(positional) == 1 and not positional[0].startswith("*"):
        return positional[0], keywords
    if len(positional) == 1:
        return f"tuple({positional[0][1:]})", keywords
    return "(" + ", ".join(positional) + ")", keywords


def _kw_bound(ctx, keywords: Sequence[str]):
    """Bind a size-style call's keywords by name (their positional slots are the size)."""
    b = ctx.bound
    for name in list(b.order):
        if name.startswith("__pos") or name not in keywords:
            b.order.remove(name)
            b.args.pop(name, None)
    b.starred = [a for a in b.starred if a.star == "**"]
    return b


def _starred_rule(fn):
    fn.handles_starred = True
    return fn


def _no_starred(b) -> None:
    if b.starred:
        raise UnsupportedSite("*args/**kwargs cannot be translated argument by argument")


def _checked(ctx, known: Sequence[str], drop: Sequence[str] = _FACTORY_DROP):
    """The site's bound arguments: no *args/**kwargs, and only `known` ones (_check_args)."""
    b = ctx.bound
    _no_starred(b)
    _check_args(b, known, drop)
    return b


# ================================================================= creation
@_starred_rule
def _tensor(ctx):
    spread = [a for a in ctx.bound.starred if a.star == "**"]
    if len(spread) == 1 and len(ctx.bound.starred) == 1 and not ctx.bound.has("dtype"):
        # `torch.tensor([scale], **dd)` with dd = {'device': .., 'dtype': ..} (timm): the dict's dtype read when the
        # call runs (None: inferred from the data, as torch), its placement keys dropped, any other key raising
        b = ctx.bound
        for name in [n for n in b.order if n.startswith("__star")]:
            b.order.remove(name)    # the dict, read below
        starred, b.starred = b.starred, []
        _check_args(b, ("data",))
        b.starred = starred
        if not b.has("data"):
            raise UnsupportedSite("no data given")
        where = f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"
        kw = code_of(spread[0].value).strip()
        return _call(ctx, "ms.Tensor", [_tensor_data(ctx, b.code("data"))],
                     [("dtype", f"_ms_compat.factory_dtype({kw}, {where!r})")])
    b = _checked(ctx, ("data", "dtype"))
    if not b.has("data"):
        raise UnsupportedSite("no data given")
    dtype = _dtype(b)
    if dtype is None and _complex_literal(b.code("data")):
        dtype = "ms.complex64"   # torch's default complex dtype; MindSpore would infer complex128
    return _call(ctx, "ms.Tensor", [_tensor_data(ctx, b.code("data"))], [("dtype", dtype)])


def _tensor_data(ctx, data: str) -> str:
    if re.fullmatch(r"((collections\.)?deque|range)\(.*\)", data, re.S) or (
            re.fullmatch(r"\w+", data) and getattr(ctx.tr, "python_sequence", lambda n: False)(data)):
        return f"list({data})"      # a deque or range, which ms.Tensor refuses (python_sequences.py)
    if re.fullmatch(r"\w+", data) and getattr(ctx.tr, "python_list", lambda n: False)(data):
        # a list filled here, maybe with one-element tensors that torch reads as numbers (python_sequences.py)
        return f"_ms_compat.tensor_data({data})"
    return data


def _complex_literal(code: str) -> bool:
    """Whether the data is a literal (nested lists/tuples of numbers) holding a Python complex number."""
    try:
        value = ast.literal_eval(code)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, complex):
            return True
    return False


_TENSOR_NOTE = ("python floats -> float32, ints -> int64, bools -> bool, complex -> complex64, numpy arrays keep "
                "their dtype "
                "(as in torch); " + _FACTORY_NOTE)
rule("torch.tensor", "mindspore.Tensor", args=("data",), note=_TENSOR_NOTE, test=T_TENSOR)(_tensor)
rule("torch.as_tensor", "mindspore.Tensor", args=("data", "dtype", "device"),
     note="always a new tensor (torch may share memory with the input); gradients still flow; "
          + _FACTORY_NOTE, test=T_TENSOR)(_tensor)
def _asarray(ctx):
    ctx.bound.rename("obj", "data")
    if ctx.bound.has("copy") and ctx.bound.code("copy") in ("True", "None"):
        ctx.bound.remove("copy")  # ms.Tensor always copies
    return _tensor(ctx)


rule("torch.asarray", "mindspore.Tensor", args=("obj",), note=_TENSOR_NOTE, test=T_TENSOR)(_asarray)
mapping("torch.from_numpy", "mindspore.Tensor.from_numpy", args=("ndarray",), target_args=("array",),
        rename={"ndarray": "array"},
        note="shares memory with the numpy array, as in torch; host-side code (not inside a compiled graph)",
        test=T_TENSOR)


_GENERATOR_KINDS = {"ops.rand": "random", "ops.randn": "standard_normal"}     # the NumPy draw of generator_draw


def _size_factory(target: str):
    """torch.zeros/ones/empty/rand/randn(*size, dtype=..., device=...) -> target(size, dtype=...)."""
    @_starred_rule
    def fn(ctx):
        size, keywords = _size_from_call(ctx, kwargs_ok=True)
        b = _kw_bound(ctx, keywords)
        b.remove("size")
        mapped = _factory_mapping(ctx, b, target, size)
        if mapped is not None:
            return mapped
        kind = _GENERATOR_KINDS.get(target)
        _check_args(b, ("dtype", "generator") if kind else ("dtype",), _KEEP_GENERATOR if kind else _FACTORY_DROP)
        dtype = _dtype(b)
        drawn = _generator_draw(ctx, b, kind, size, dtype) if kind else None
        if drawn is not None:
            return drawn
        if dtype is None and not _nonempty_size(size):
            dtype = "ms.float32"  # MindSpore's Ones/Zeros kernels refuse an empty shape without a dtype
        return _call(ctx, target, [size], [("dtype", dtype)])
    return fn


def _factory_mapping(ctx, b, target: str, size: str) -> Optional[str]:
    """`torch.zeros(n, **dd)` (a dict of factory arguments, timm's dd = {'device': .., 'dtype': ..}): the
    dict is translated when the call runs (_ms_compat.factory_kwargs: device= and the other placement
    arguments go, dtype= stays, any other key raises MigrationError naming the site). None when the call
    has no `**`."""
    mapping_args = [a for a in b.starred if a.star == "**"]
    if not mapping_args:
        return None
    if len(mapping_args) > 1 or any(n != "dtype" and n not in _FACTORY_DROP for n in b.order):
        raise UnsupportedSite("**kwargs cannot be translated argument by argument")
    given = {n: b.code(n) for n in b.order if n == "dtype"}
    where = f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"
    explicit = "".join(f", {k}={v}" for k, v in given.items())
    kw = code_of(mapping_args[0].value).strip()
    return ctx.expr(f"{target}({size}, **_ms_compat.factory_kwargs({kw}, {where!r}{explicit}))")


def _nonempty_size(code: str) -> bool:
    """Whether a size expression surely names at least one dimension (an int, or a display holding an
    element that is not unpacked); a name or () may be the empty shape of a 0-d tensor."""
    try:
        node = ast.parse(code, mode="eval").body
    except SyntaxError:
        return False
    if isinstance(node, (ast.Tuple, ast.List)):
        return any(not isinstance(e, ast.Starred) for e in node.elts)
    return isinstance(node, ast.Constant) and isinstance(node.value, int)


for _name, _target in (("zeros", "ops.zeros"), ("ones", "ops.ones"), ("empty", "ops.zeros")):
    rule(f"torch.{_name}", f"mindspore.{_target}", args=("size",),
         note=("values are zeros (torch leaves them uninitialised); " if _name == "empty" else "")
         + "size as ints, a sequence or *unpacked; float32 by default; " + _FACTORY_NOTE,
         test=T_CREATE)(_size_factory(_target))


def _fill_dtype(code: str) -> str:
    """torch.full's default dtype from its fill value (ops.full would infer int64 for 1.5)."""
    try:
        v = _lit(code)
    except Exception:
        if re.match(r"^-?(float\(|math\.(pi|e|inf|nan|tau)$)", code):
            return "ms.float32"
        return f"ms.Tensor({code}).dtype"
    if isinstance(v, bool):
        return "ms.bool_"
    if isinstance(v, int):
        return "ms.int64"
    if isinstance(v, float):
        return "ms.float32"
    if isinstance(v, complex):
        return "ms.complex64"
    raise UnsupportedSite(f"fill value {code}")


def _full(ctx):
    b = _checked(ctx, ("size", "fill_value", "dtype"))
    if not (b.has("size") and b.has("fill_value")):
        raise UnsupportedSite("size and fill_value are required")
    fill = b.code("fill_value")
    dtype = _dtype(b)
    if dtype is None:
        dtype = _fill_dtype(fill)
        if dtype.startswith("ms.Tensor(") and not _SIMPLE.match(fill):
            return ctx.expr(f"(lambda _ms_v: ops.full({b.code('size')}, _ms_v, dtype=ms.Tensor(_ms_v).dtype))({fill})")
    return _call(ctx, "ops.full", [b.code("size"), fill], [("dtype", dtype)])


rule("torch.full", "mindspore.ops.full", args=("size", "fill_value"),
     note="dtype follows the fill value as in torch (float -> float32, int -> int64, bool -> bool; "
          "a non-literal fill takes the dtype ms.Tensor(fill) has); " + _FACTORY_NOTE,
     test=T_CREATE)(_full)

for _name, _target in (("zeros_like", "zeros_like"), ("ones_like", "ones_like"), ("empty_like", "zeros_like")):
    mapping(f"torch.{_name}", f"mindspore.ops.{_target}", args=("input",), target_args=("input",),
            kwonly=("dtype",), drop=_FACTORY_DROP, unsupported=_OUT, unsupported_ok=_OUT_OK,
            note=("values are zeros (torch leaves them uninitialised); " if _name == "empty_like" else "")
            + "keeps the input's dtype unless dtype= is given; " + _FACTORY_NOTE, test=T_CREATE)
mapping("torch.full_like", "mindspore.ops.full_like", args=("input", "fill_value"),
        target_args=("input", "fill_value"), kwonly=("dtype",), drop=_FACTORY_DROP, unsupported=_OUT, unsupported_ok=_OUT_OK,
        note="keeps the input's dtype (the fill value is cast) unless dtype= is given; " + _FACTORY_NOTE,
        test=T_CREATE)
mapping("torch.arange", "mindspore.ops.arange", args=("start", "end", "step"),
        target_args=("start", "end", "step"), kwonly=("dtype",), drop=_FACTORY_DROP, unsupported=_OUT, unsupported_ok=_OUT_OK,
        note="int arguments -> int64, any float -> float32, as in torch; " + _FACTORY_NOTE, test=T_CREATE)
mapping("torch.eye", "mindspore.ops.eye", args=("n", "m"), target_args=("n", "m"), kwonly=("dtype",),
        drop=_FACTORY_DROP, unsupported=_OUT, unsupported_ok=_OUT_OK, note="float32 by default; " + _FACTORY_NOTE,
        test=T_CREATE)


def _spaced(ctx, b, text: str):
    """linspace/logspace's expression: torch's empty result for a literal steps=0 (ops.linspace refuses 0
    steps), cast to dtype= when given."""
    if b.code("steps") == "0":
        text = "ops.zeros((0,), ms.float32)"
    if _dtype(b):
        text += f".astype({_dtype(b)})"
    return ctx.expr(text)


def _span(b) -> str:
    """ops.linspace's arguments: float64 ends when dtype=float64 is asked (from Python numbers ops.linspace
    computes in float32, 1e-7 off; torch computes in the dtype)."""
    start, end = b.code("start"), b.code("end")
    if _dtype(b) == "ms.float64":
        start, end = f"ms.Tensor({start}, ms.float64)", f"ms.Tensor({end}, ms.float64)"
    return f"{start}, {end}, {b.code('steps')}"


def _linspace(ctx):
    b = _checked(ctx, ("start", "end", "steps", "dtype"))
    return _spaced(ctx, b, f"ops.linspace({_span(b)})")


rule("torch.linspace", "mindspore.ops.linspace", args=("start", "end", "steps"),
     note="float32; dtype= casts the result (float64: computed in float64); steps=0 (a literal) is torch's empty "
          "tensor; " + _FACTORY_NOTE,
     test=T_CREATE)(_linspace)


def _logspace(ctx):
    b = _checked(ctx, ("start", "end", "steps", "base", "dtype"))
    base = b.code("base") if _given(b, "base") else "10.0"
    # ops.logspace only takes an int base and float start/end: build base ** linspace instead
    return _spaced(ctx, b, f"ops.pow({base}, ops.linspace({_span(b)}))")


rule("torch.logspace", "mindspore.ops.pow", args=("start", "end", "steps", "base"),
     note="base ** linspace(start, end, steps) (ops.logspace takes only an int base); " + _FACTORY_NOTE,
     test=T_CREATE)(_logspace)


# ----------------------------------------------------------------- random
for _name in ("rand", "randn"):
    rule(f"torch.{_name}", f"mindspore.ops.{_name}", args=("size",), status=DIFFERENCE,
         note=("uniform [0, 1)" if _name == "rand" else "standard normal") + "; float32; " + _RANDOM_NOTE
         + "; " + _FACTORY_NOTE, test=T_RANDOM)(_size_factory(f"ops.{_name}"))
for _name in ("rand_like", "randn_like"):
    mapping(f"torch.{_name}", f"mindspore.ops.{_name}", args=("input",), target_args=("input",),
            kwonly=("dtype",), drop=_FACTORY_DROP, unsupported=_OUT, unsupported_ok=_OUT_OK, status=DIFFERENCE,
            note="the input's shape and dtype; " + _RANDOM_NOTE, test=T_RANDOM)


def _bound_without_low(ctx, names: Sequence[str]):
    """The bound arguments of randint(high, size) / randint_like(input, high), torch's overloads without
    `low`: with two positional arguments and no `names[-1]`, or `low` positional and no `high` (randint(10,
    size=(2,))), each of `names` (low first) moves to the next."""
    b = ctx.bound
    _no_starred(b)
    pos = [n for n in b.order if b.positional.get(n)]
    if (len(pos) == 2 and not b.has(names[-1])) or (b.positional.get(names[0]) and not b.has(names[1])):
        for old, new in reversed(list(zip(names, names[1:]))):
            b.rename(old, new)
    return b


def _randint(ctx):
    b = _bound_without_low(ctx, ("low", "high", "size"))
    _check_args(b, ("low", "high", "size", "dtype", "generator"), _KEEP_GENERATOR)
    if not (b.has("high") and b.has("size")):
        raise UnsupportedSite("high and size are required")
    low = b.code("low") if b.has("low") else "0"
    drawn = _generator_draw(ctx, b, "integers", b.code("size"), _dtype(b), (low, b.code("high")))
    return drawn or _call(ctx, "ops.randint", [low, b.code("high"), b.code("size")], [("dtype", _dtype(b))])


rule("torch.randint", "mindspore.ops.randint", args=("low", "high", "size"), status=DIFFERENCE,
     note="int64 in [low, high); " + _RANDOM_NOTE + "; " + _FACTORY_NOTE, test=T_RANDOM)(_randint)


def _randint_like(ctx):
    b = _bound_without_low(ctx, ("low", "high"))
    _check_args(b, ("input", "low", "high", "dtype"))
    low = b.code("low") if b.has("low") else "0"
    dtype, high = _dtype(b), b.code("high")
    # MindSpore draws integer dtypes only; torch's result has the input's (or dtype=) dtype, floats included
    return ctx.expr(_once(b.code("input"), lambda v: f"ops.randint_like({v}, {low}, {high}, dtype=ms.int64)"
                                                      f".astype({dtype or v + '.dtype'})"))


rule("torch.randint_like", "mindspore.ops.randint_like", args=("input", "low", "high"), status=DIFFERENCE,
     note="the input's shape and dtype (a float input gives whole numbers as floats, as torch's); " + _RANDOM_NOTE,
     test=T_RANDOM)(_randint_like)


def _randperm(ctx):
    b = _checked(ctx, ("n", "dtype", "generator"), _KEEP_GENERATOR)
    dtype = _dtype(b) or "ms.int64"
    return _generator_draw(ctx, b, "permutation", b.code("n"), dtype) \
        or ctx.expr(f"ops.shuffle(ops.arange({b.code('n')}, dtype={dtype}))")


rule("torch.randperm", "mindspore.ops.shuffle", args=("n",), status=DIFFERENCE,
     note="a shuffled arange (ops.randperm uses a fixed seed and returns the same permutation on every "
          "call); int64; " + _RANDOM_NOTE + "; " + _FACTORY_NOTE, test=T_RANDOM)(_randperm)


def _normal(ctx):
    b = _checked(ctx, ("mean", "std", "size", "dtype", "generator"), _KEEP_GENERATOR)
    mean = b.code("mean") if b.has("mean") else "0.0"
    std = b.code("std") if b.has("std") else "1.0"
    if _dtype(b):
        raise UnsupportedSite("dtype= of torch.normal is not translated")
    drawn = _generator_draw(ctx, b, "normal", b.code("size") if _given(b, "size") else "None", None, (mean, std))
    if drawn is not None:
        return drawn
    if _given(b, "size"):
        return _call(ctx, "ops.normal", [b.code("size"), mean, std])
    number = (int, float)
    if _is_lit(mean, number) and _is_lit(std, number):
        raise UnsupportedSite("torch.normal of two numbers needs size=")
    # the sample's shape is the broadcast of the tensor arguments' shapes
    if _is_lit(mean, number):
        return ctx.expr(_once(std, lambda s: f"ops.normal({s}.shape, {mean}, {s})"))
    if _is_lit(std, number):
        return ctx.expr(_once(mean, lambda m: f"ops.normal({m}.shape, {m}, {std})"))
    if _SIMPLE.match(mean) and _SIMPLE.match(std):
        return ctx.expr(f"ops.normal(({mean} + {std}).shape, {mean}, {std})")
    # expressions (`torch.normal(torch.zeros(n, 1), torch.ones(n, 1))`): each evaluated once, through a lambda
    return ctx.expr(f"(lambda _ms_m, _ms_s: ops.normal((_ms_m + _ms_s).shape, _ms_m, _ms_s))({mean}, {std})")


rule("torch.normal", "mindspore.ops.normal", args=("mean", "std", "size"), status=DIFFERENCE,
     note="mean/std tensors or numbers (+size); " + _RANDOM_NOTE, test=T_RANDOM)(_normal)


def _bernoulli(ctx):
    b = _checked(ctx, ("input", "p", "generator"), _KEEP_GENERATOR)
    x = b.code("input")
    drawn = _generator_draw(ctx, b, "bernoulli", "None", None, (x, b.code("p") if _given(b, "p") else "None"))
    if drawn is not None:
        return drawn
    if _given(b, "p"):
        return _call(ctx, "ops.bernoulli", [x], [("p", b.code("p"))])
    return ctx.expr(_once(x, lambda v: f"ops.bernoulli({v}, p={v})"))


rule("torch.bernoulli", "mindspore.ops.bernoulli", args=("input", "p"), status=DIFFERENCE,
     note="draws 1 with the probability given by each element of input (or p); the input's dtype; "
          + _RANDOM_NOTE, test=T_RANDOM)(_bernoulli)


def _multinomial(ctx):
    b = _checked(ctx, ("input", "num_samples", "replacement", "generator"), _KEEP_GENERATOR)
    repl = b.code("replacement") if b.has("replacement") else "False"
    drawn = _generator_draw(ctx, b, "multinomial", b.code("num_samples"), None, (b.code("input"), repl))
    return drawn or ctx.expr(f"ops.multinomial({b.code('input')}, {b.code('num_samples')}, {repl}).astype(ms.int64)")


rule("torch.multinomial", "mindspore.ops.multinomial", args=("input", "num_samples", "replacement"),
     status=DIFFERENCE,
     note="replacement passed explicitly (MindSpore defaults to True, torch to False); int64; " + _RANDOM_NOTE,
     test=T_RANDOM)(_multinomial)


# ================================================================= shape ops
def _simple(source, target, args, target_args, rename=None, test=T_SHAPE, note="", status=CONVERTED,
            drop=(), extra=None, unsupported=None, unsupported_ok=None, rule_fn=None, kwonly=()):
    unsup = dict(_OUT)
    unsup.update(unsupported or {})
    ok = dict(_OUT_OK)
    ok.update(unsupported_ok or {})
    mapping(source, target, args=args, target_args=target_args, rename=rename or {}, drop=tuple(drop),
            extra=extra or {}, unsupported=unsup, unsupported_ok=ok, note=note, status=status, test=test, rule=rule_fn,
            kwonly=tuple(kwonly))


for _name in ("cat", "concat", "concatenate"):
    _simple(f"torch.{_name}", "_ms_compat.cat", ("tensors", "axis" if _name == "concatenate" else "dim"),
            ("tensors", "axis"), rename={"dim": "axis"},
            note="ops.cat (dim -> axis); a 1-D empty tensor beside tensors of another rank is left out, as torch "
                 "does (templates/compat_parts/legacy_cat.py)")
_simple("torch.stack", "mindspore.ops.stack", ("tensors", "dim"), ("tensors", "axis"), rename={"dim": "axis"},
        note="dim -> axis")
_simple("torch.split", "mindspore.ops.split", ("tensor", "split_size_or_sections", "dim"),
        ("tensor", "split_size_or_sections", "axis"), rename={"dim": "axis"},
        note="an int is the chunk size (the last chunk may be smaller), a list the sizes; returns a tuple")
_simple("torch.chunk", "mindspore.ops.chunk", ("input", "chunks", "dim"), ("input", "chunks", "axis"),
        rename={"dim": "axis"}, note="chunk size ceil(n / chunks), possibly fewer chunks, as in torch")
_simple("torch.flatten", "mindspore.ops.flatten", ("input", "start_dim", "end_dim"), ("input",),
        extra={"start_dim": "0"}, note="start_dim is always passed: torch defaults to 0, ops.flatten to 1")
_simple("torch.reshape", "mindspore.ops.reshape", ("input", "shape"), ("input", "shape"))
_simple("torch.squeeze", "mindspore.ops.squeeze", ("input", "dim"), ("input", "axis"), rename={"dim": "axis"},
        note="a dim whose size is not 1 is left alone, as in torch; dim=() squeezes nothing, as in torch",
        rule_fn=empty_dims_keep(lambda ctx: ctx.code("input")), test=T_EDGE)
_simple("torch.unsqueeze", "mindspore.ops.unsqueeze", ("input", "dim"), ("input", "dim"))
for _name, _a in (("transpose", ("dim0", "dim1")), ("swapdims", ("dim0", "dim1")), ("swapaxes", ("axis0", "axis1"))):
    _simple(f"torch.{_name}", "mindspore.ops.swapaxes", ("input",) + _a, ("input", "axis0", "axis1"),
            rename={"dim0": "axis0", "dim1": "axis1"},
            note="ops.swapaxes (Tensor.transpose inside ms.jit would be a full permutation)")
_simple("torch.permute", "mindspore.ops.permute", ("input", "dims"), ("input", "axis"), rename={"dims": "axis"})
for _name in ("movedim", "moveaxis"):
    _simple(f"torch.{_name}", "mindspore.ops.movedim", ("input", "source", "destination"),
            ("x", "source", "destination"), rename={"input": "x"})
_simple("torch.narrow", "mindspore.ops.narrow", ("input", "dim", "start", "length"),
        ("input", "axis", "start", "length"), rename={"dim": "axis"},
        rule_fn=narrow_from_end(lambda ctx: ctx.code("input")),
        note=NARROW_NOTE, test=T_EDGE)
_simple("torch.gather", "mindspore.ops.gather_elements", ("input", "dim", "index"), ("input", "dim", "index"),
        drop=("sparse_grad",), note="ops.gather_elements (ops.gather is index_select-like)")
composed("torch.index_select", INDEX_SELECT, ("input", "dim", "index"), target="mindspore.ops.index_select",
         note=AS_VECTOR_NOTE, test=T_SHAPE)
_simple("torch.masked_select", "mindspore.ops.masked_select", ("input", "mask"), ("input", "mask"))
_simple("torch.flip", "mindspore.ops.flip", ("input", "dims"), ("input", "dims"))
_simple("torch.tile", "mindspore.ops.tile", ("input", "dims"), ("input", "dims"), rule_fn=dims_as_tuple("dims"),
        note="fewer dims than the input prepend ones, as in torch; an int or a list of counts as a tuple",
        test="tests/parity/test_script_level_forms.py::test_tile_counts")
_simple("torch.broadcast_to", "mindspore.ops.broadcast_to", ("input", "size"), ("input", "shape"),
        rename={"size": "shape"})
_simple("torch.tril", "mindspore.ops.tril", ("input", "diagonal"), ("input", "diagonal"))
_simple("torch.triu", "mindspore.ops.triu", ("input", "diagonal"), ("input", "diagonal"))


def _value_read(node: cst.BaseExpression) -> bool:
    """`int(index[i])`, `-int(t.max())`, `t.item()`: a number read from a tensor (a variable in a compiled graph)."""
    if isinstance(node, cst.UnaryOperation):
        return _value_read(node.expression)
    if not isinstance(node, cst.Call):
        return False
    if isinstance(node.func, cst.Name) and node.func.value == "int" and len(node.args) == 1:
        return isinstance(node.args[0].value, (cst.Subscript, cst.Call))
    return isinstance(node.func, cst.Attribute) and node.func.attr.value == "item" and not node.args


def _roll(ctx):
    """The record's template, but a shift read from a tensor over one dim (`torch.roll(x, -int(index[i]), -1)`,
    Autoformer's) -> _ms_compat.roll_by, a gather (templates/compat_parts/value_rolls.py): in GRAPH mode
    mindspore.numpy.roll takes constant shifts only."""
    b = ctx.bound
    if b.starred:
        raise UnsupportedSite("*args/**kwargs cannot be translated argument by argument")
    extra = [n for n in b.order if n not in ("input", "shifts", "dims", "out")]
    if extra:
        raise UnsupportedSite(f"argument {extra[0].lstrip('_')} is not translated")
    if b.has("out") and b.code("out") != "None":
        raise UnsupportedSite(f"argument out={b.code('out')}: {OUT_NOTE}")
    if not b.has("shifts"):
        raise UnsupportedSite("argument shifts is required")
    x, shifts, dims = b.code("input"), b.code("shifts"), b.code("dims") if b.has("dims") else "None"
    if _value_read(b.value("shifts")) and re.match(r"^-?\d+$", dims.strip()):
        return ctx.expr(f"_ms_compat.roll_by({x}, {shifts}, {dims})")
    return ctx.expr(fill("(ms.numpy.roll({input}, {shifts}, {dims}) if {input}.size else {input})",
                         {"input": x, "shifts": shifts, "dims": dims}))


_roll.checks_arguments = True
rule("torch.roll", "mindspore.numpy.roll", args=("input", "shifts", "dims"), test=T_SHAPE,
     note="mindspore.numpy.roll (ops.roll has no CPU kernel); dims=None rolls the flattened tensor as in torch; "
          "a tensor with no elements is returned as it is, as torch (mindspore.numpy.roll divides by its size); a "
          "shift read from a tensor (`-int(index[i])`) over one dim -> _ms_compat.roll_by, a gather (GRAPH mode's "
          "roll takes constant shifts only)")(_roll)
_simple("torch.tensordot", "_ms_compat.tensor_dot", ("a", "b", "dims", "out"), ("x1", "x2", "axes"),
        rename={"a": "x1", "b": "x2", "dims": "axes"}, extra={"axes": "2"},
        test="tests/parity/test_empty_products.py::test_static_shapes",
        note="dims (int or two lists) -> axes; torch's default dims=2 is passed; ops.tensor_dot through "
             "_ms_compat.tensor_dot (templates/compat_parts/empty_products.py): torch's zeros when the contracted "
             "dims are empty (MindSpore 2.10's kernel leaves that result uninitialised)")


def _where(ctx):
    b = _checked(ctx, ("condition", "input", "other"))
    if b.has("input") or b.has("other"):
        if not (b.has("input") and b.has("other")):
            raise UnsupportedSite("where needs both input and other")
        return _call(ctx, "ops.where", [b.code("condition"), b.code("input"), b.code("other")])
    # torch.where(cond) == torch.nonzero(cond, as_tuple=True) (that form has no PyNative CPU kernel)
    return ctx.expr(f"ops.unbind(ops.nonzero({b.code('condition')}), 1)")


rule("torch.where", "mindspore.ops.where", args=("condition", "input", "other"),
     note="3 arguments: ops.where (numbers allowed); 1 argument: a tuple of index tensors (int64) "
          "from ops.nonzero", test=T_SHAPE)(_where)


def _repeat_interleave(ctx):
    b = _checked(ctx, ("input", "repeats", "dim"), drop=("output_size",))
    if not b.has("repeats"):
        raise UnsupportedSite("torch.repeat_interleave(repeats) (the index form) is not translated")
    x = b.code("input")
    if _given(b, "dim"):
        return _call(ctx, "ops.repeat_interleave", [x, b.code("repeats"), b.code("dim")])
    return ctx.expr(f"ops.repeat_interleave(ops.flatten({x}, start_dim=0), {b.code('repeats')}, 0)")


rule("torch.repeat_interleave", "mindspore.ops.repeat_interleave", args=("input", "repeats", "dim"),
     note="dim=None repeats the flattened input, as in torch (flattened explicitly); output_size is dropped",
     test=T_SHAPE)(_repeat_interleave)


@_starred_rule
def _meshgrid(ctx):
    b = ctx.bound
    indexing = b.code("indexing") if _given(b, "indexing") else "'ij'"
    items: List[str] = []
    positional = [a for a in b.call.args if a.keyword is None]
    if any(a.star == "**" for a in positional):
        raise UnsupportedSite("**kwargs cannot be translated argument by argument")
    for name in b.order:
        if not name.startswith(("__pos", "__star")) and name not in ("tensors", "indexing"):
            raise UnsupportedSite(f"argument {name} is not translated")
    if len(positional) == 1 and not positional[0].star:
        v = positional[0].value
        if isinstance(v, (cst.List, cst.Tuple)):
            items = [code_of(e).strip().rstrip(",") for e in v.elements]
        else:       # one tensor or a list of them: the helper tells them apart when it runs
            items = [code_of(v).strip()]
    else:
        items = [("*" if a.star == "*" else "") + code_of(a.value).strip() for a in positional]
    return ctx.expr(f"_ms_compat.meshgrid({', '.join(items)}, indexing={indexing})")


rule("torch.meshgrid", "_ms_compat.meshgrid", args=("tensors",),
     note="through _ms_compat.meshgrid (templates/compat_parts/meshgrid.py): ops.meshgrid rejects one tensor in a "
          "compiled graph (`*[t]`) and 0-d tensors; indexing is always passed (torch's default 'ij'); a list "
          "argument is unpacked (one name: a tensor or a list, told apart when it runs)",
     test=T_SHAPE)(_meshgrid)


def _diag(ctx):
    b = _checked(ctx, ("input", "diagonal"))
    k = b.code("diagonal") if _given(b, "diagonal") else "0"
    return ctx.expr(_once(b.code("input"),
                          lambda v: f"(ops.diagflat({v}, {k}) if {v}.ndim == 1 else ops.diagonal({v}, {k}))"))


rule("torch.diag", "mindspore.ops.diagflat", args=("input", "diagonal"),
     note="1-D input -> ops.diagflat (a matrix), 2-D -> ops.diagonal (ops.diag of a matrix would be 4-D)",
     test=T_SHAPE)(_diag)

def _literal_text(node) -> Optional[str]:
    """The text of a string literal, also an f-string without placeholders (f"b i d, b j d -> b i j")."""
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.FormattedString) and all(isinstance(p, cst.FormattedStringText) for p in node.parts):
        if "b" in node.prefix.lower():
            return None
        return "".join(p.value for p in node.parts).replace("{{", "{").replace("}}", "}")
    return None


def _einsum(ctx):
    """ops.einsum has no CPU kernel: a literal equation is expanded at conversion time
    into permute/expand_dims, a broadcast product and a sum over the contracted
    letters, which run on every backend and in GRAPH mode."""
    b = ctx.bound
    eq = _literal_text(b.value("equation"))
    rest = [n for n in b.order if n != "equation"]
    listed = b.value(rest[0]) if len(rest) == 1 and not b.starred else None
    if isinstance(listed, (cst.List, cst.Tuple)) and listed.elements \
            and not any(isinstance(e, cst.StarredElement) for e in listed.elements):
        # torch's older form `torch.einsum("nc,ck->nk", [q, k])` (MoCo): the operands written out
        operands = [code_of(e.value).strip() for e in listed.elements]
    else:
        operands = [b.code(n) for n in rest]
    if eq is None and not b.starred:
        # f"b h i d, {kv_eq} -> b h i j" (x-transformers), a name holding one of two literals
        # (`eq = 'bnd,bne->bde' if one_kv_head else 'bhnd,bhne->bhde'`): the equation is known at run time only
        if operands and not (len(operands) == 1 and operands[0].startswith(("[", "("))):
            return ctx.expr(f"_ms_compat.torch_einsum({b.code('equation')}, {', '.join(operands)})")
    if eq is None:
        raise UnsupportedSite("the equation is not a string literal")
    eq = eq.replace(" ", "")
    if b.starred or not operands:
        raise UnsupportedSite("operands passed as *args or a list")
    if len(operands) == 1 and operands[0].startswith(("[", "(")):
        raise UnsupportedSite("operands passed as a list")
    if "." in eq:
        # the ellipsis' dimensions are known from the operands' shapes only: the run-time helper (einops_einsum)
        return ctx.expr(f"_ms_compat.torch_einsum({b.code('equation')}, {', '.join(operands)})")
    lhs, _, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise UnsupportedSite("the number of operands does not match the equation")
    if any(len(set(t)) != len(t) for t in terms):
        raise UnsupportedSite("a repeated letter inside one operand (diagonal) is not expanded")
    if "->" not in eq:
        letters = "".join(terms)
        rhs = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    contracted = []
    for t in terms:
        for c in t:
            if c not in rhs and c not in contracted:
                contracted.append(c)
    order = list(rhs) + contracted          # the letters of the broadcast product
    parts = []
    for term, code in zip(terms, operands):
        present = sorted(term, key=order.index)
        perm = tuple(term.index(c) for c in present)
        expr = code if _SIMPLE.match(code) else f"({code})"
        if perm != tuple(range(len(term))):
            expr = f"ops.permute({expr}, {perm})"
        for axis, c in enumerate(order):
            if c not in term:
                expr = f"ops.expand_dims({expr}, {axis})"
        parts.append(expr)
    product = " * ".join(parts)
    if getattr(ctx.tr, "complex_operators", False) and len(parts) > 1:
        # a module making complex values (S4D's `torch.einsum('hn, hnl -> hl', C, torch.exp(K))`): the product goes
        # through _ms_compat.times as the module's own `*` does (complex_operators.py: a complex Mul has no gradient
        # in MindSpore 2.10, a complex operand with a real one no kernel)
        product = parts[0]
        for part in parts[1:]:
            product = f"_ms_compat.times({product}, {part})"
    if contracted:
        dims = tuple(range(len(rhs), len(order)))
        # the empty-safe sum: a contracted letter of length 0 sums to torch's 0 (empty_reductions.py)
        product = f"_ms_compat.reduce_sum({product}, dim={dims if len(dims) > 1 else dims[0]})"
    return ctx.expr(product)


# bound to a name (s4's `contract = torch.einsum`): the run-time helper, which takes torch's arguments
_einsum.value_form = lambda: "_ms_compat.torch_einsum"

rule("torch.einsum", None, args=("equation",), status=DIFFERENCE,
     note="ops.einsum has no CPU kernel in MindSpore 2.10: the literal equation is expanded into "
          "permute/expand_dims, a broadcast product and a sum (same values; the product is materialised, "
          "so memory grows with all letters' sizes); an equation with '...' goes to _ms_compat.torch_einsum (the "
          "ellipsis' dimensions come from the shapes)", test=f"{T_MATH.split('::')[0]}::test_einsum")(_einsum)


# ================================================================= math
def _alpha_op(op: str):
    def fn(ctx):
        b = _checked(ctx, ("input", "other", "alpha"))
        other = b.code("other")
        if _given(b, "alpha") and b.code("alpha") != "1":
            alpha = b.code("alpha") if _SIMPLE.match(b.code("alpha")) else f"({b.code('alpha')})"
            other = f"{alpha} * {other}" if _SIMPLE.match(other) else f"{alpha} * ({other})"
        return _call(ctx, f"ops.{op}", [b.code("input"), other])
    return fn


rule("torch.add", "mindspore.ops.add", args=("input", "other"), note="alpha: input + alpha * other",
     test=T_MATH)(_alpha_op("add"))
rule("torch.sub", "mindspore.ops.sub", args=("input", "other"), note="alpha: input - alpha * other",
     test=T_MATH)(_alpha_op("sub"))
rule("torch.subtract", "mindspore.ops.sub", args=("input", "other"), note="alpha: input - alpha * other",
     test=T_MATH)(_alpha_op("sub"))
COMPLEX_NOTE = ("through _ms_compat.{0} (templates/compat_parts/complex_operands.py): a real tensor with a complex "
                "one computes in the complex dtype, as torch (MindSpore 2.10's CPU kernel refuses the mixed pair)")
T_COMPLEX = "tests/parity/test_torch_complex.py::test_mixed_complex_products_match_torch"
for _name in ("mul", "multiply"):
    _simple(f"torch.{_name}", "_ms_compat.mul", ("input", "other"), ("input", "other"), test=T_COMPLEX,
            note=COMPLEX_NOTE.format("mul"))
for _name in ("div", "divide"):
    _simple(f"torch.{_name}", "_ms_compat.div", ("input", "other"), ("input", "other"), test=T_COMPLEX,
            kwonly=("rounding_mode",),
            note="true division (ints give float32); rounding_mode 'trunc'/'floor' as in torch; "
                 + COMPLEX_NOTE.format("div"))
_simple("torch.true_divide", "mindspore.ops.div", ("input", "other"), ("input", "other"), test=T_MATH)
T_PRODUCTS = "tests/parity/test_empty_products.py"
# MindSpore 2.10's matmul kernels leave the result uninitialised when the contracted dim is empty
EMPTY_PRODUCT_NOTE = ("through _ms_compat.{0} (templates/compat_parts/empty_products.py): torch's zeros when the "
                      "contracted dim is empty (MindSpore 2.10's kernel leaves that result uninitialised)")
_simple("torch.matmul", "_ms_compat.matmul", ("input", "other"), ("input", "other"), test=f"{T_PRODUCTS}::test_functions",
        note=EMPTY_PRODUCT_NOTE.format("matmul"))
_simple("torch.mm", "_ms_compat.mm", ("input", "mat2"), ("input", "mat2"), test=f"{T_PRODUCTS}::test_functions",
        note=EMPTY_PRODUCT_NOTE.format("mm"))
_simple("torch.bmm", "_ms_compat.bmm", ("input", "mat2"), ("input_x", "mat2"), rename={"input": "input_x"},
        test=f"{T_PRODUCTS}::test_functions", note=EMPTY_PRODUCT_NOTE.format("bmm"))
_simple("torch.addmm", "_ms_compat.addmm", ("input", "mat1", "mat2"), ("input", "mat1", "mat2"),
        kwonly=("beta", "alpha"), test=f"{T_PRODUCTS}::test_affine",
        note="beta * input + alpha * (mat1 @ mat2); " + EMPTY_PRODUCT_NOTE.format("addmm"))
_simple("torch.baddbmm", "_ms_compat.baddbmm", ("input", "batch1", "batch2"), ("input", "batch1", "batch2"),
        kwonly=("beta", "alpha"), test=f"{T_PRODUCTS}::test_affine",
        note="beta * input + alpha * (batch1 @ batch2); " + EMPTY_PRODUCT_NOTE.format("baddbmm"))
_simple("torch.pow", "mindspore.ops.pow", ("input", "exponent"), ("input", "exponent"), test=T_MATH,
        note="a number base is allowed, as in torch")
for _name in ("exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "erf", "sin", "cos"):
    if _name in PRECISE_ON_CPU:
        rule(f"torch.{_name}", f"_ms_compat.precise_{_name}", args=("input",),
             note=precise_note(_name) + "; " + FLOAT_INPUT_NOTE, test=T_PRECISE)(
            float_function(_name, f"_ms_compat.precise_{_name}"))
        continue
    if _name in PRECISE:
        rule(f"torch.{_name}", PRECISE[_name], args=("input",), note=FLOAT_INPUT_NOTE + "; " + PRECISE_NOTE,
             test=PRECISE_TEST)(float_function(_name, PRECISE[_name]))
        continue
    rule(f"torch.{_name}", f"mindspore.ops.{_name}", args=("input",), note=float_function_note(_name),
         test=T_MATH)(float_function(_name))
rule("torch.log1p", "_ms_compat.special_log1p", args=("input",), note=LOG1P_NOTE + "; " + FLOAT_INPUT_NOTE,
     test=T_LOG1P)(float_function("log1p", "_ms_compat.special_log1p"))
# abs of a complex tensor: its real magnitude, as torch (ops.abs keeps the complex dtype)
for _name in ("abs", "absolute"):
    _simple(f"torch.{_name}", "_ms_compat.magnitude", ("input",), ("value",), rename={"input": "value"},
            test="tests/test_first_rule_gaps.py::test_complex_magnitude_and_parts_are_real_as_in_torch",
            note="ops.abs; of a complex tensor, its real magnitude (ops.abs keeps the complex dtype)")
for _name, _target in (("neg", "neg"), ("negative", "neg"),
                       ("sign", "sign"), ("floor", "floor"), ("ceil", "ceil"), ("relu", "relu")):
    _simple(f"torch.{_name}", f"mindspore.ops.{_target}", ("input",), ("input",), test=T_MATH)
def _round(ctx):
    b = ctx.bound
    d = b.code("decimals")
    if d in (None, "0"):
        return None     # ops.round as declared
    if b.code("out") not in (None, "None"):
        raise UnsupportedSite("out= has no MindSpore counterpart (MindSpore functions return new tensors)")
    if b.code("input") is None:
        raise UnsupportedSite("argument input is required")
    return ctx.expr(round_decimals_code(b.code("input"), d))


_simple("torch.round", "mindspore.ops.round", ("input", "decimals"), ("input",), test=T_MATH,
        unsupported={"decimals": "ops.round only supports decimals=0 on CPU"}, unsupported_ok={"decimals": ("0",)},
        note="halves round to even, as in torch; decimals=d is computed as torch does, round(x * 10^d) / 10^d",
        rule_fn=_round)
for _name in ("clamp", "clip"):
    _simple(f"torch.{_name}", "mindspore.ops.clamp", ("input", "min", "max"), ("input", "min", "max"),
            test=T_MATH, status=DIFFERENCE, rule_fn=mixed_clamp_bounds(lambda ctx: ctx.code("input")),
            note="numbers or tensors as bounds (a number written out beside a bound that is not: the bounds one "
                 "after the other, ops.maximum then ops.minimum); " + _NAN_NOTE + " (NaN -> bound)")
for _name in ("maximum", "minimum"):
    _simple(f"torch.{_name}", f"mindspore.ops.{_name}", ("input", "other"), ("input", "other"), test=T_MATH,
            status=DIFFERENCE, note=_NAN_NOTE + " (returns the other value)")
for _name in ("atan2", "arctan2"):
    _simple(f"torch.{_name}", "mindspore.ops.atan2", ("input", "other"), ("input", "other"), test=T_MATH)
_simple("torch.lerp", "mindspore.ops.lerp", ("input", "end", "weight"), ("input", "end", "weight"), test=T_MATH)
_simple("torch.fmod", "mindspore.ops.fmod", ("input", "other"), ("input", "other"), test=T_MATH,
        note="the sign of the dividend, as in torch")
_simple("torch.remainder", "mindspore.ops.remainder", ("input", "other"), ("input", "other"), test=T_MATH,
        note="the sign of the divisor (Python %), as in torch")
_simple("torch.softmax", "_ms_compat.softmax", ("input", "dim", "dtype"), ("input", "axis"),
        rename={"dim": "axis"}, test="tests/parity/test_softmax_slices.py::test_softmax_forms",
        note="dim -> axis; dtype casts the input first, as in torch; through _ms_compat.softmax (templates/compat_parts/softmax_slices.py): a slice of all -inf gives torch's nan, where MindSpore 2.10's CPU kernel gives 0 and garbage in the slices after it")


def _log_softmax(ctx):
    b = _checked(ctx, ("input", "dim", "dtype"))
    x = b.code("input")
    if _dtype(b):
        x = f"{x}.astype({_dtype(b)})" if _SIMPLE.match(x) else f"({x}).astype({_dtype(b)})"
    return _call(ctx, "_ms_compat.log_softmax", [x], [("axis", b.code("dim") if _given(b, "dim") else None)])


rule("torch.log_softmax", "_ms_compat.log_softmax", args=("input", "dim", "dtype"),
     note="dim -> axis; dtype casts the input first; " + LOG_SOFTMAX_NOTE, test=LOG_SOFTMAX_TEST)(_log_softmax)

_INT_ACC = ("integer/bool inputs keep their dtype (torch accumulates them in int64): "
            "pass dtype=ms.int64 for long sums")
composed("torch.cumsum", "_ms_compat.as_vector(lambda _ms_x: ops.cumsum(_ms_x, {dim}, dtype={dtype}), {input})",
         ("input", "dim", "dtype"), absent={"dtype": "_ms_compat.as_vector(lambda _ms_x: ops.cumsum(_ms_x, {dim}), "
                                            "{input})"}, target="mindspore.ops.cumsum", test=T_MATH, status=DIFFERENCE, note=_INT_ACC + "; " + AS_VECTOR_NOTE)
_simple("torch.cumprod", "mindspore.ops.cumprod", ("input", "dim"), ("input", "dim"), test=T_MATH, kwonly=("dtype",),
        status=DIFFERENCE, note=_INT_ACC)
T_EMPTY = "tests/parity/test_empty_reductions.py::test_functions"
T_EMPTY_ANY = "tests/parity/test_empty_reductions.py::test_any"
T_EMPTY_MORE = "tests/parity/test_empty_reductions.py::test_more_functions"
_EMPTY_NOTE = ("through _ms_compat.reduce_{0} (templates/compat_parts/empty_reductions.py): MindSpore 2.10's "
               "kernel leaves the result uninitialised for an input with no elements; torch gives {1}")


def _logsumexp(ctx):
    b = _checked(ctx, ("input", "dim", "keepdim"))
    return _call(ctx, "_ms_compat.reduce_logsumexp", [b.code("input"), b.code("dim")],
                 [("keepdim", b.code("keepdim") if b.has("keepdim") else None)])


rule("torch.logsumexp", "mindspore.ops.logsumexp", args=("input", "dim", "keepdim"),
     note=_EMPTY_NOTE.format("logsumexp", "-inf"), test=T_EMPTY)(_logsumexp)
def _dist(ctx):
    b = _checked(ctx, ("input", "other", "p"))
    p = b.code("p") if _given(b, "p") else "2"
    return ctx.expr(f"ops.vector_norm(ops.sub({b.code('input')}, {b.code('other')}), {p})")


rule("torch.dist", "mindspore.ops.vector_norm", args=("input", "other", "p"),
     note="the p-norm of input - other (ops.dist only takes an int p)", test=T_NORM)(_dist)
def _cdist(ctx):
    b = ctx.bound
    if _given(b, "p"):   # MindSpore's Cdist takes a float p only (DETR's matcher: p=1)
        p = b.code("p")
        b.set("p", p + ".0" if re.fullmatch(r"\d+", p) else p if re.fullmatch(r"\d*\.\d*(e-?\d+)?", p)
              else f"float({p})", positional=bool(b.positional.get("p")))
    return None


rule("torch.cdist", "mindspore.ops.cdist", args=("x1", "x2", "p", "compute_mode"), target_args=("x1", "x2", "p"),
     drop=("compute_mode",), test=T_NORM, note="compute_mode (a speed hint) is dropped; p as a float")(_cdist)


def _norm(ctx):
    b = _checked(ctx, ("input", "p", "dim", "keepdim", "dtype"))
    x = b.code("input")
    p = b.code("p") if _given(b, "p") else "'fro'"
    dim = b.code("dim") if _given(b, "dim") else None
    if dim and dim.startswith("[") and dim.endswith("]"):   # ops.vector_norm takes an int or a tuple dim
        inner = dim[1:-1].strip().rstrip(",")
        dim = f"({inner},)" if "," not in inner else f"({inner})"
    keep = b.code("keepdim") if b.has("keepdim") else None
    try:
        pv = _lit(p)
    except Exception:
        pv = None
    if pv == "fro":
        return _call(ctx, "_ms_compat.reduce_vector_norm", [x, "2"],
                     [("axis", dim), ("keepdims", keep), ("dtype", _dtype(b))])
    if pv == "nuc":
        return _call(ctx, "ops.matrix_norm", [x, "'nuc'"],
                     [("axis", dim), ("keepdims", keep), ("dtype", _dtype(b))])
    if isinstance(pv, str):
        raise UnsupportedSite(f"p={p}")
    return _call(ctx, "_ms_compat.reduce_vector_norm", [x, p],
                 [("axis", dim), ("keepdims", keep), ("dtype", _dtype(b))])


rule("torch.norm", "mindspore.ops.vector_norm", args=("input", "p", "dim", "keepdim", "out", "dtype"),
     note="p='fro'/number -> ops.vector_norm over dim (all elements when dim is None), 'nuc' -> "
          "ops.matrix_norm, as torch.norm computes them; a p held in a variable must be a number",
     test=T_NORM)(_norm)
_simple("torch.linalg.norm", "_ms_compat.reduce_norm", ("input", "ord", "dim", "keepdim"),
        ("A", "ord", "dim", "keepdim"), rename={"input": "A"}, test=T_EMPTY_MORE, kwonly=("dtype",),
        note="ops.norm: same ord/dim rules (vector or matrix norm) as torch.linalg.norm; 0 for an input with no "
             "elements, as torch (templates/compat_parts/empty_reductions.py: MindSpore 2.10 gives uninitialised "
             "values)")
_simple("torch.linalg.vector_norm", "_ms_compat.reduce_vector_norm", ("x", "ord", "dim", "keepdim"),
        ("x", "ord", "axis", "keepdims"), kwonly=("dtype",), rename={"dim": "axis", "keepdim": "keepdims"}, test=T_EMPTY_MORE,
        note="0 for an input with no elements, as torch (its error for the inf norms); " +
             "templates/compat_parts/empty_reductions.py: MindSpore 2.10 gives uninitialised values")
_simple("torch.linalg.matrix_norm", "mindspore.ops.matrix_norm", ("input", "ord", "dim", "keepdim"),
        ("A", "ord", "axis", "keepdims"), rename={"input": "A", "dim": "axis", "keepdim": "keepdims"}, test=T_NORM,
        kwonly=("dtype",))


# ================================================================= reductions
def _sum(ctx):
    b = _checked(ctx, ("input", "dim", "keepdim", "dtype"))
    pos = [b.code("input")] + ([b.code("dim")] if _given(b, "dim") else [])
    return _call(ctx, "_ms_compat.reduce_sum", pos,
                 [("keepdim", b.code("keepdim") if b.has("keepdim") else None), ("dtype", _dtype(b))])


rule("torch.sum", "mindspore.ops.sum", args=("input", "dim", "keepdim"), test=T_EMPTY,
     note="ints and bools sum to int64, as in torch; " + _EMPTY_NOTE.format("sum", "0") + " (also with a dim: "
          "a 1-D input summed over its dim is one)")(_sum)


def _mean(ctx):
    b = _checked(ctx, ("input", "dim", "keepdim", "dtype"))
    x = b.code("input")
    if _dtype(b):
        x = f"{x}.astype({_dtype(b)})" if _SIMPLE.match(x) else f"({x}).astype({_dtype(b)})"
    pos = [x]
    if _given(b, "dim"):
        pos.append(b.code("dim"))
    return _call(ctx, "_ms_compat.reduce_mean", pos, [("keepdim", b.code("keepdim") if b.has("keepdim") else None)])


rule("torch.mean", "mindspore.ops.mean", args=("input", "dim", "keepdim"),
     note="dtype casts the input first, as in torch; " + _EMPTY_NOTE.format("mean", "nan") + " (also when a "
          "dim is reduced)", test=T_EMPTY)(_mean)
_simple("torch.prod", "_ms_compat.reduce_prod", ("input", "dim", "keepdim"), ("input", "axis", "keep_dims"),
        rename={"dim": "axis", "keepdim": "keep_dims"}, test=T_EMPTY_MORE, note=_EMPTY_NOTE.format("prod", "1"),
        kwonly=("dtype",))
for _name in ("amax", "amin"):
    _simple(f"torch.{_name}", f"_ms_compat.reduce_{_name}", ("input", "dim", "keepdim"), ("input", "axis", "keepdims"),
            rename={"dim": "axis", "keepdim": "keepdims"}, test=T_EMPTY_MORE, status=DIFFERENCE,
            note=_NAN_NOTE + "; torch's error when the reduced dim is empty (MindSpore 2.10 gives uninitialised "
                 "values; templates/compat_parts/empty_reductions.py)")


def _std_var(target: str):
    def fn(ctx):
        b = ctx.bound
        _no_starred(b)
        if b.has("dim") and b.positional.get("dim") and b.code("dim") in ("True", "False"):
            # torch.std(input, unbiased): the overload without dim
            b.rename("dim", "unbiased")
        _check_args(b, ("input", "dim", "unbiased", "keepdim", "correction"))
        if _given(b, "correction"):
            ddof = b.code("correction")
        elif b.has("unbiased"):
            u = b.code("unbiased")
            ddof = {"True": "1", "False": "0"}.get(u, f"int({u})")
        else:
            ddof = "1"
        pos = [b.code("input")]
        if _given(b, "dim"):
            pos.append(b.code("dim"))
        return _call(ctx, target, pos, [("ddof", ddof), ("keepdims", b.code("keepdim") if b.has("keepdim") else None)])
    return fn


_STD_NOTE = ("ddof passed explicitly: torch's default is unbiased (correction=1); unbiased=False -> ddof=0, "
             "correction=c -> ddof=c")
for _name in ("std", "var", "std_mean", "var_mean"):
    rule(f"torch.{_name}", f"mindspore.ops.{_name}", args=("input", "dim", "unbiased", "keepdim"),
         note=_STD_NOTE + ("; returns (std/var, mean) as torch" if "mean" in _name else ""),
         test=T_EMPTY_MORE)(_std_var(f"_ms_compat.reduce_{_name}"))


def _max_min(kind: str):
    elementwise = "maximum" if kind == "max" else "minimum"

    def fn(ctx):
        b = _checked(ctx, ("input", "dim", "keepdim", "other"))
        x = b.code("input")
        if b.has("other"):
            return _call(ctx, f"ops.{elementwise}", [x, b.code("other")])
        if not b.has("dim"):
            if b.has("keepdim"):
                raise UnsupportedSite("keepdim without dim")
            return _call(ctx, f"_ms_compat.reduce_a{kind}", [x])     # torch's error for an empty input
        d = b.code("dim")
        keep = b.code("keepdim") if b.has("keepdim") else None
        value = b.value("dim")
        is_dim = not b.positional.get("dim") or keep is not None or _is_lit(d, int)
        if is_dim:
            return _call(ctx, f"ops.{kind}", [x, d], [("keepdims", keep)])
        if ctx.tr._is_tensor_expr(value) or _sliced(value):
            return _call(ctx, f"ops.{elementwise}", [x, d])
        # torch.max(x, y): y may be a dim or a tensor -- decide at run time (a constant under ms.jit)
        if not (_SIMPLE.match(x) and _SIMPLE.match(d)):
            return _call(ctx, f"_ms_compat.{kind}_or_{elementwise}", [x, d])
        return ctx.expr(f"(ops.{elementwise}({x}, {d}) if isinstance({d}, ms.Tensor) else ops.{kind}({x}, {d}))")
    return fn


def _sliced(node) -> bool:
    """y[..., :2] / y[:, None]: a slice, None or Ellipsis in a subscript never gives an int, so as
    torch.max/min's second argument it is the tensor of the elementwise overload (a dim is an int)."""
    if not isinstance(node, cst.Subscript):
        return False
    for element in node.slice:
        part = element.slice
        if isinstance(part, cst.Slice):
            return True
        if isinstance(part.value, cst.Ellipsis) or (isinstance(part.value, cst.Name) and part.value.value == "None"):
            return True
    return False


for _kind in ("max", "min"):
    rule(f"torch.{_kind}", f"mindspore.ops.{_kind}", args=("input", "dim", "keepdim"), status=DIFFERENCE,
         note=f"no dim -> ops.a{_kind} (the value); dim -> ops.{_kind} (values, int64 indices) "
              + _TUPLE_NOTE + f"; a tensor -> ops.{'maximum' if _kind == 'max' else 'minimum'}; a second argument "
              f"that may be either -> _ms_compat.{_kind}_or_{'maximum' if _kind == 'max' else 'minimum'} "
              "(decided at run time); " + _NAN_NOTE,
         test=T_RED)(_max_min(_kind))

_simple("torch.argmax", "mindspore.ops.argmax", ("input", "dim", "keepdim"), ("input", "dim", "keepdim"),
        test=T_RED, status=DIFFERENCE, note="int64; " + _NAN_NOTE)


def _argmin(ctx):
    b = _checked(ctx, ("input", "dim", "keepdim"))
    pos = [b.code("input")]
    if _given(b, "dim"):
        pos.append(b.code("dim"))
    return ctx.expr(f"ops.argmin({', '.join(pos)}"
                    + (f", keepdims={b.code('keepdim')}" if b.has("keepdim") else "") + ").astype(ms.int64)")


rule("torch.argmin", "mindspore.ops.argmin", args=("input", "dim", "keepdim"), status=DIFFERENCE,
     note="cast to int64 (ops.argmin returns int32); " + _NAN_NOTE, test=T_IDX)(_argmin)
_simple("torch.all", "mindspore.ops.all", ("input", "dim", "keepdim"), ("input", "axis", "keep_dims"),
        rename={"dim": "axis", "keepdim": "keep_dims"}, test=T_RED, note="bool result for any input dtype")


@rule("torch.any", None, args=("input", "dim", "keepdim"), test=T_EMPTY_ANY,
      note="the input is cast to bool first: MindSpore 2.10's any of a float or int tensor is wrong on CPU; "
           + _EMPTY_NOTE.format("any", "False") + " (also when a dim is reduced)")
def _any(ctx):
    b = _checked(ctx, ("input", "dim", "keepdim", "out"))
    x = b.code("input")
    if not isinstance(b.value("input"), cst.Comparison):     # `torch.any(x > 0)` is bool already
        x = (x if re.fullmatch(r"[\w.]+", x) else f"({x})") + ".astype(ms.bool_)"
    return _call(ctx, "_ms_compat.reduce_any", [x],
                 [("dim", b.code("dim") if _given(b, "dim") else None),
                  ("keepdim", b.code("keepdim") if b.has("keepdim") else None)])


def _int64_indices(call: str) -> str:
    """A MindSpore (values, int32 indices) call with its indices cast to torch's int64 (also inside ms.jit)."""
    return f"(lambda _ms_v, _ms_i: (_ms_v, _ms_i.astype(ms.int64)))(*{call})"


def _topk(ctx):
    b = _checked(ctx, ("input", "k", "dim", "largest", "sorted"))
    pos = [b.code("input"), b.code("k")]
    kw = [(n, b.code(n)) for n in ("dim", "largest", "sorted") if _given(b, n)]
    return ctx.expr(_int64_indices(f"ops.topk({', '.join(pos + [f'{k}={v}' for k, v in kw])})"))


rule("torch.topk", "mindspore.ops.topk", args=("input", "k", "dim", "largest", "sorted"), status=DIFFERENCE,
     note=_TUPLE_NOTE + "; indices cast to int64 (ops.topk gives int32); " + _NAN_NOTE, test=T_IDX)(_topk)


def _sort(ctx):
    b = _checked(ctx, ("input", "dim", "descending", "stable"))
    b.remove("stable")  # ops.sort is stable (verified with ties, ascending and descending)
    kw = [("axis", b.code("dim") if _given(b, "dim") else None),
          ("descending", b.code("descending") if b.has("descending") else None)]
    args = ", ".join([b.code("input")] + [f"{k}={v}" for k, v in kw if v is not None])
    return ctx.expr(_int64_indices(f"ops.sort({args})"))


rule("torch.sort", "mindspore.ops.sort", args=("input", "dim", "descending"), status=DIFFERENCE,
     note="dim -> axis; stable (ties keep their order, so stable=True holds); " + _TUPLE_NOTE + "; "
          "indices cast to int64 (ops.sort gives int32); " + _NAN_NOTE, test=T_IDX)(_sort)


def _argsort(ctx):
    b = _checked(ctx, ("input", "dim", "descending", "stable"))
    b.remove("stable")
    kw = [("axis", b.code("dim") if _given(b, "dim") else None),
          ("descending", b.code("descending") if b.has("descending") else None)]
    args = ", ".join([b.code("input")] + [f"{k}={v}" for k, v in kw if v is not None])
    return ctx.expr(f"ops.argsort({args}).astype(ms.int64)")


rule("torch.argsort", "mindspore.ops.argsort", args=("input", "dim", "descending"),
     note="cast to int64 (ops.argsort returns int32); stable, so stable=True holds", test=T_IDX)(_argsort)


def _unique(ctx):
    b = _checked(ctx, ("input", "sorted", "return_inverse", "return_counts", "dim"))
    flags = {}
    for name in ("return_inverse", "return_counts"):
        flags[name] = b.code(name) if b.has(name) else "False"
        if flags[name] not in ("True", "False"):
            raise UnsupportedSite(f"{name}={flags[name]} must be a literal True/False (it decides what is returned)")
    parts = [b.code("input"), flags["return_inverse"], flags["return_counts"]]
    if _given(b, "dim"):
        parts.append(b.code("dim"))
    return ctx.expr(f"_ms_compat.unique({', '.join(parts)})")


rule("torch.unique", "mindspore.ops.unique", args=("input", "sorted", "return_inverse", "return_counts", "dim"),
     note="the sorted distinct values (sorted=False too, as torch's CPU kernel), each element's position among them "
          "(int64), their counts (int64), through _ms_compat.unique (templates/compat_parts/unique_values.py): "
          "ops.unique's inverse mapped through the sort's ranks; float64 and dim= on the host (MindSpore 2.10's "
          "sort compares float64 as float32), PyNative only there", test=T_IDX)(_unique)


def _count_nonzero(ctx):
    b = _checked(ctx, ("input", "dim"))
    pos = [f"ops.ne({b.code('input')}, 0)"]
    if _given(b, "dim"):
        pos.append(b.code("dim"))
    return _call(ctx, "_ms_compat.reduce_sum", pos)     # 0 for an empty input (empty_reductions.py)


rule("torch.count_nonzero", "mindspore.ops.sum", args=("input", "dim"),
     note="ops.sum(ops.ne(input, 0), dim): int64 like torch, any input dtype (ops.count_nonzero returns int32 "
          "and rejects bool tensors)", test=T_RED)(_count_nonzero)


# ================================================================= comparison
for _name, _target in (("eq", "eq"), ("ne", "ne"), ("not_equal", "ne"), ("gt", "gt"), ("greater", "gt"),
                       ("ge", "ge"), ("greater_equal", "ge"), ("lt", "lt"), ("less", "lt"), ("le", "le"),
                       ("less_equal", "le")):
    _simple(f"torch.{_name}", f"mindspore.ops.{_target}", ("input", "other"), ("input", "other"), test=T_CMP)
_simple("torch.isclose", "mindspore.ops.isclose", ("input", "other", "rtol", "atol", "equal_nan"),
        ("input", "other", "rtol", "atol", "equal_nan"), test=T_CMP, note="same defaults (rtol 1e-5, atol 1e-8)")
for _name in ("isnan", "isinf", "isfinite"):
    _simple(f"torch.{_name}", f"mindspore.ops.{_name}", ("input",), ("input",), test=T_CMP,
            note="float inputs (ops.isinf has no integer kernel)" if _name == "isinf" else "")
for _name in ("logical_and", "logical_or", "logical_xor"):
    _simple(f"torch.{_name}", f"mindspore.ops.{_name}", ("input", "other"), ("input", "other"), test=T_CMP,
            note="bool result for any input dtype")
_simple("torch.logical_not", "mindspore.ops.logical_not", ("input",), ("input",), test=T_CMP)


def _allclose(ctx):
    b = _checked(ctx, ("input", "other", "rtol", "atol", "equal_nan"))
    kw = [(n, b.code(n)) for n in ("rtol", "atol", "equal_nan") if b.has(n)]
    args = ", ".join([b.code("input"), b.code("other")] + [f"{k}={v}" for k, v in kw])
    return ctx.expr(f"bool(ops.isclose({args}).all())")


rule("torch.allclose", "mindspore.ops.isclose", args=("input", "other", "rtol", "atol", "equal_nan"),
     note="bool(ops.isclose(...).all()): a Python bool as in torch", test=T_CMP)(_allclose)


def _equal(ctx):
    b = _checked(ctx, ("input", "other"))
    a, o = b.code("input"), b.code("other")
    if _SIMPLE.match(a) and _SIMPLE.match(o):
        return ctx.expr(f"({a}.shape == {o}.shape and bool(ops.equal({a}, {o}).all()))")
    return ctx.expr(f"(lambda _ms_a, _ms_b: _ms_a.shape == _ms_b.shape and bool(ops.equal(_ms_a, _ms_b).all()))"
                    f"({a}, {o})")


rule("torch.equal", "mindspore.ops.equal", args=("input", "other"),
     note="same shape and all elements equal, a Python bool (ops.equal alone is elementwise)",
     test=T_CMP)(_equal)

def _diff(ctx):
    """ops.diff only takes n=1: a literal n nests it."""
    b = ctx.bound
    n = b.code("n") or "1"
    if not n.isdigit():
        raise UnsupportedSite(f"n={n} is not a literal (MindSpore's diff takes n=1 only)")
    axis = f", axis={b.code('dim')}" if b.has("dim") else ""
    ends = "".join(f", {k}={b.code(k)}" for k in ("prepend", "append") if b.has(k))
    expr = b.code("input")
    for i in range(int(n)):     # torch joins prepend/append once, before the first difference
        expr = f"ops.diff({expr}{axis}{ends if i == 0 else ''})"
    return ctx.expr(expr)


rule("torch.diff", "mindspore.ops.diff", args=("input", "n", "dim", "prepend", "append"),
     note="MindSpore's diff takes n=1 only: a literal n nests it (prepend/append joined at the first, as torch)",
     test=f"{T}::test_diff")(_diff)
