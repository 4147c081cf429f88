"""torch's unary `_foreach_OP` functions (one elementwise op over a list of tensors, as torch's optimizers
use them): `torch._foreach_abs(tensors)` becomes `[<converted torch.abs(_ms_t)> for _ms_t in tensors]`, a
new list of new tensors as torch returns.

The in-place form `torch._foreach_abs_(tensors)` on a list name replaces the list's items:
`(tensors.__setitem__(slice(None), [...]) or tensors)`, an expression whose value is the list, as torch
returns it (torch 2.13; older versions returned None). torch changes
the tensors themselves, so other references to them do not see the change (a difference, stated); a list
of tensors made in place (`torch._foreach_abs_([torch.tensor(..), ..])`) is seen by nothing else: the new list;
any other (`torch._foreach_abs_([a, b])`, which changes a and b) stays a TODO.
Proven by tests/parity/test_foreach_ops.py.
"""
from __future__ import annotations

import ast

import libcst as cst

from ..callsite import UnsupportedSite, code_of
from ..records import DIFFERENCE, REGISTRY, rule

T = "tests/parity/test_foreach_ops.py::test_foreach_ops"
UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
         "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "sigmoid", "sign", "sin", "sinh",
         "sqrt", "tan", "tanh", "trunc")
_ITEM = "_ms_t"


def _each(ctx, base) -> str:
    """The list comprehension applying the converted `base` record to every tensor of the call's list."""
    b = ctx.bound
    if b.starred or len(b.order) != 1 or not b.has("self"):
        raise UnsupportedSite("a _foreach function takes one list of tensors here")
    tr = ctx.tr
    call = cst.Call(func=cst.Name(base.source.rsplit(".", 1)[-1]), args=[cst.Arg(cst.Name(_ITEM))])
    before = len(tr.sites)
    one = tr._apply(call, call, base, base.source, receiver=None)
    del tr.sites[before:]   # reported once, as the _foreach function
    return f"[{code_of(one).strip()} for {_ITEM} in {b.code('self')}]"


def _fresh_display(code: str) -> bool:
    """A list/tuple display of calls (`[torch.tensor(..), torch.ones(2)]`): tensors made here, seen by nothing else."""
    try:
        node = ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, (ast.List, ast.Tuple)) and bool(node.elts) and all(isinstance(e, ast.Call) for e in node.elts)


def _out_of_place(base):
    def convert(ctx):
        return ctx.expr(_each(ctx, base))
    return convert


def _in_place(base, name: str):
    def convert(ctx):
        target = ctx.bound.code("self")
        if target is not None and _fresh_display(target):   # no other name sees these tensors: the new list
            return ctx.expr(_each(ctx, base))
        if target is None or not target.isidentifier():
            raise UnsupportedSite(f"torch.{name} on a list that is no plain name changes the tensors in it, which a "
                                  f"MindSpore list cannot: write `tensors = torch.{name[:-1]}(tensors)`")
        return ctx.expr(f"({target}.__setitem__(slice(None), {_each(ctx, base)}) or {target})")
    return convert


def _register() -> None:
    for op in UNARY + ("zero",):
        base = REGISTRY.get("torch.zeros_like" if op == "zero" else f"torch.{op}")
        if base is None or (base.target is None and base.rule is None):
            continue
        if op != "zero":
            rule(f"torch._foreach_{op}", base.target, args=("self",), test=T,
                 note=f"a list of the converted torch.{op} of each tensor")(_out_of_place(base))
        rule(f"torch._foreach_{op}_", base.target, args=("self",), status=DIFFERENCE, test=T,
             note=f"in place on a list name: its items are replaced by the converted torch."
                  f"{'zeros_like' if op == 'zero' else op} of each (the result is the list, as in torch); other "
                  f"references to the same tensors do not see the change")(_in_place(base, f"_foreach_{op}_"))


_register()
