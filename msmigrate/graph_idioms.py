"""Python idioms inside construct that run in PyNative but not in GRAPH mode, rewritten to an
equivalent form GRAPH mode compiles.

`q, k, v = map(lambda t: rearrange(t, ...), qkv)` (the usual einops idiom): MindSpore's GRAPH
mode refuses `map` over a lambda that reads a free variable ("The Map operator don't support
Closure with free variable yet"); a generator expression compiles (and is lazy, like map).

`callable(d)` (lucidrains' `default(val, d)`: `d() if callable(d) else d`): in GRAPH mode a function
passed as an argument is a function graph, and callable() on it fails ("KeyError: 'd'");
_ms_compat.is_callable answers for it too, and as callable() everywhere else."""
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


def callable_graph_safe(call: cst.Call, compat: str) -> Optional[cst.Call]:
    """`callable(x)` -> `<compat>.is_callable(x)`, or None when the call is not of that form."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "callable" and len(call.args) == 1):
        return None
    if call.args[0].keyword is not None or call.args[0].star:
        return None
    return call.with_changes(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name("is_callable")))
