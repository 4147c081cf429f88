"""Python idioms inside construct that run in PyNative but not in GRAPH mode, rewritten to an
equivalent form GRAPH mode compiles.

`q, k, v = map(lambda t: rearrange(t, ...), qkv)` (the usual einops idiom): MindSpore's GRAPH
mode refuses `map` over a lambda that reads a free variable ("The Map operator don't support
Closure with free variable yet"); a generator expression compiles (and is lazy, like map).

`k, v = map(partial(ops.cat, axis=-1), ((mk, k), (mv, v)))`: GRAPH mode compiles the forward, but
its gradient of map over a partial concatenates the tuple of zero gradients of the int shapes
("For Operator[Concat], tensors's type 'Tuple[Int64*2]' does not match"); the generator
`(ops.cat(item, axis=-1) for item in ...)` differentiates.

`callable(d)` (lucidrains' `default(val, d)`: `d() if callable(d) else d`): in GRAPH mode a function
passed as an argument is a function graph, and callable() on it fails ("KeyError: 'd'");
_ms_compat.is_callable answers for it too, and as callable() everywhere else.

`all([f(d) for d in x.shape])` / `any(...)` inside construct: GRAPH mode evaluates the builtin by its
Python fallback at run time, without the module's functions ("name 'f' is not defined");
_ms_compat.all_true / any_true are the same loop written where GRAPH mode compiles it.

`a ^ b` inside construct (x-transformers: `assert not (self.cross_attend ^ exists(context))`): GRAPH mode
compiles `^` to BitXor, which refuses two bools; _ms_compat.xor is `!=` on two bools, `^` on anything
else (ints, tensors), decided per call on the values' types."""
from __future__ import annotations

from typing import Optional

import libcst as cst


def map_lambda_as_generator(call: cst.Call) -> Optional[cst.GeneratorExp]:
    """`map(lambda t: EXPR, SEQ)` -> `(EXPR for t in SEQ)` (lazy, as map is), or None when the call
    is not of that form (several iterables, default arguments, *args, keywords)."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "map" and len(call.args) == 2):
        return None
    fn, seq = call.args
    if fn.keyword is not None or seq.keyword is not None or fn.star or seq.star:
        return None
    lam = fn.value
    if not isinstance(lam, cst.Lambda):
        return None
    params = lam.params
    if (len(params.params) != 1 or params.posonly_params or params.kwonly_params or params.star_kwarg
            or not isinstance(params.star_arg, cst.MaybeSentinel) or params.params[0].default is not None):
        return None
    return cst.GeneratorExp(elt=lam.body, for_in=cst.CompFor(target=params.params[0].name, iter=seq.value))


def map_partial_as_generator(call: cst.Call, item: str) -> Optional[cst.GeneratorExp]:
    """`map(functools.partial(F, *A, **K), SEQ)` -> `(F(*A, item, **K) for item in SEQ)`, or None when the call is
    not of that form (several iterables, starred or keyword arguments to map or partial)."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "map" and len(call.args) == 2):
        return None
    fn, seq = call.args
    if fn.keyword is not None or seq.keyword is not None or fn.star or seq.star:
        return None
    part = fn.value     # the caller has resolved part.func to functools.partial
    if not (isinstance(part, cst.Call) and part.args):
        return None
    target, *bound = part.args
    if target.keyword is not None or target.star or any(a.star for a in bound):
        return None
    positional = [a for a in bound if a.keyword is None]
    keywords = [a for a in bound if a.keyword is not None]
    if [a.keyword is None for a in bound] != [True] * len(positional) + [False] * len(keywords):
        return None
    args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in positional] + [cst.Arg(cst.Name(item))] + \
        [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in keywords]
    return cst.GeneratorExp(elt=cst.Call(func=target.value, args=args),
                            for_in=cst.CompFor(target=cst.Name(item), iter=seq.value))


def callable_graph_safe(call: cst.Call, compat: str) -> Optional[cst.Call]:
    """`callable(x)` -> `<compat>.is_callable(x)`, or None when the call is not of that form."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "callable" and len(call.args) == 1):
        return None
    if call.args[0].keyword is not None or call.args[0].star:
        return None
    return call.with_changes(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name("is_callable")))


_GRAPH_SAFE_REDUCTIONS = {"all": "all_true", "any": "any_true"}


def all_any_graph_safe(call: cst.Call, compat: str) -> Optional[cst.Call]:
    """`all(x)` / `any(x)` -> `<compat>.all_true(x)` / `any_true(x)`, or None when the call is not of
    that form (the builtin with one positional argument)."""
    if not (isinstance(call.func, cst.Name) and call.func.value in _GRAPH_SAFE_REDUCTIONS
            and len(call.args) == 1):
        return None
    if call.args[0].keyword is not None or call.args[0].star:
        return None
    target = _GRAPH_SAFE_REDUCTIONS[call.func.value]
    return call.with_changes(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name(target)))


def xor_graph_safe(node: cst.BinaryOperation, compat: str) -> Optional[cst.Call]:
    """`a ^ b` -> `<compat>.xor(a, b)`, or None when the operation is not `^`."""
    if not isinstance(node.operator, cst.BitXor):
        return None
    return cst.Call(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name("xor")),
                    args=[cst.Arg(node.left, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                          cst.Arg(node.right)],
                    lpar=node.lpar, rpar=node.rpar)
