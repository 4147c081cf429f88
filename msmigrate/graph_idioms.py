"""Python idioms inside construct that run in PyNative but not in GRAPH mode, rewritten to an
equivalent form GRAPH mode compiles.

`q, k, v = map(lambda t: rearrange(t, ...), qkv)` (the usual einops idiom): MindSpore's GRAPH
mode refuses `map` over a lambda that reads a free variable ("The Map operator don't support
Closure with free variable yet"); a generator expression compiles (and is lazy, like map)."""
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
