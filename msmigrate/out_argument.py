"""torch's `out=` keyword: `torch.add(a, b, out=c)` as a whole statement becomes
`c = ops.cast(<converted torch.add(a, b)>, c.dtype)`, and the value of a plain assignment
`r = torch.add(a, b, out=c)` becomes `r = c = ops.cast(...)` (torch returns `out` itself).

MindSpore functions return new tensors and take no output argument. torch writes the result into `out`,
resizing it to the result's shape and casting it to out's dtype; rebinding the name to the cast result
computes the same values. Other references to the same tensor do not see the change, and an `out=` that
is not a plain name (a tuple, a slice, an attribute), or a call whose result is used otherwise, stays a TODO."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from . import records as R
from .callsite import UnsupportedSite, code_of


def out_keyword(call: cst.Call) -> Optional[cst.Arg]:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == "out"), None)


def is_out_statement(call) -> bool:
    """A whole statement `torch.f(..., out=name)` (visit_Expr marks these)."""
    if not isinstance(call, cst.Call):
        return False
    arg = out_keyword(call)
    return arg is not None and isinstance(arg.value, cst.Name) and arg.value.value not in ("None", "True", "False")


def convert(tr, original: cst.Call, updated: cst.Call, qn: str) -> Optional[cst.BaseExpression]:
    """The converted call without out=, cast to out's dtype (the statement becomes the assignment:
    tr._out_targets); None when the site is no such rebinding (the usual path then makes it a TODO)."""
    arg = out_keyword(updated)
    if arg is None or not isinstance(arg.value, cst.Name) or arg.value.value in ("None", "True", "False"):
        return None
    m = R.lookup(qn)
    if m is None or (m.target is None and m.rule is None) or m.target in ("drop", "identity"):
        return None
    rest = [a for a in updated.args if a is not arg]
    if rest:
        rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    try:
        out = tr._apply(original, updated.with_changes(args=rest), m, qn, receiver=None)
    except UnsupportedSite:
        return None
    name = arg.value.value
    site = tr.sites[-1]
    site.status = R.DIFFERENCE
    site.note = (f"out={name} -> rebinding `{name} = ...` cast to {name}'s dtype (MindSpore functions return new "
                 f"tensors); other references to the same tensor do not see the change"
                 + (f"; {site.note}" if site.note else ""))
    result = tr._render_template(f"ops.cast({code_of(out).strip()}, {name}.dtype)")
    tr._out_targets[id(result)] = (name, result)   # the node kept alive: its id stays its own
    return result
