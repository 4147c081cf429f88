"""torch's unary `_foreach_OP` functions (one elementwise op over a list of tensors, as torch's optimizers
use them): `torch._foreach_abs(tensors)` becomes `[<converted torch.abs(_ms_t)> for _ms_t in tensors]`, a
new list of new tensors as torch returns.

The in-place form `torch._foreach_abs_(tensors)` on a list name writes each tensor with its new value
(`_ms_compat.foreach_write(...)`, whose value is the list, as torch returns it (torch 2.13; older versions
returned None)): torch changes the tensors themselves, so a parameter or an optimizer's state tensor in the
list sees the change; a list of tensors made in place (`torch._foreach_abs_([torch.tensor(..), ..])`) is
seen by nothing else: the new list; a display of names (`torch._foreach_abs_([a, b])`) writes into a and b.
The functions with operands after the list (`torch._foreach_add_(params, updates, alpha=-lr)`, lerp, addcmul...)
call templates/compat_parts/foreach_lists.py: a loop with torch's per-tensor semantics, in place or not.
Proven by tests/parity/test_foreach_ops.py.
"""
from __future__ import annotations

import ast

import libcst as cst

from ..callsite import UnsupportedSite, code_of
from ..records import REGISTRY, rule

T = "tests/parity/test_foreach_ops.py::test_foreach_ops"
UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
         "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "sigmoid", "sign", "sin", "sinh",
         "sqrt", "tan", "tanh", "trunc")
_ITEM = "_ms_t"
# the functions with operands after the list, torch's argument names (templates/compat_parts/foreach_lists.py)
OPERANDS = {"add": ("self", "other", "alpha"), "sub": ("self", "other", "alpha"), "mul": ("self", "other"),
            "div": ("self", "other"), "maximum": ("self", "other"), "minimum": ("self", "other"),
            "clamp_min": ("self", "other"), "clamp_max": ("self", "other"), "pow": ("self", "exponent"),
            "lerp": ("self", "tensors1", "weight"), "addcmul": ("self", "tensor1", "tensor2", "value"),
            "addcdiv": ("self", "tensor1", "tensor2", "value"), "copy": ("self", "src", "non_blocking")}
T_OPERANDS = "tests/parity/test_foreach_ops.py::test_foreach_with_operands"


# items computed at torch's float32 precision by a helper where the base record keeps MindSpore's CPU float32 kernel
# (torch.sigmoid: 2.3e-6 off, noted; its helper would take the example project's helper past its bound)
PRECISE_ITEMS = {"torch.sigmoid": "_ms_compat.precise_sigmoid"}


def _each(ctx, base) -> str:
    """The list comprehension applying the converted `base` record to every tensor of the call's list."""
    b = ctx.bound
    if b.starred or len(b.order) != 1 or not b.has("self"):
        raise UnsupportedSite("a _foreach function takes one list of tensors here")
    if base.source in PRECISE_ITEMS:
        return f"[{PRECISE_ITEMS[base.source]}({_ITEM}) for {_ITEM} in {b.operand('self')}]"
    tr = ctx.tr
    call = cst.Call(func=cst.Name(base.source.rsplit(".", 1)[-1]), args=[cst.Arg(cst.Name(_ITEM))])
    before = len(tr.sites)
    one = tr._apply(call, call, base, base.source, receiver=None)
    del tr.sites[before:]   # reported once, as the _foreach function
    return f"[{code_of(one).strip()} for {_ITEM} in {b.operand('self')}]"


def _fresh_display(code: str) -> bool:
    """A list/tuple display of calls (`[torch.tensor(..), torch.ones(2)]`): tensors made here, seen by nothing else."""
    try:
        node = ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, (ast.List, ast.Tuple)) and bool(node.elts) and all(isinstance(e, ast.Call) for e in node.elts)


def _read_twice_safely(code: str) -> bool:
    """A name, an attribute chain or a list/tuple display of such (the list is read for the values and written
    into): reading it again has no effect of its own."""
    try:
        node = ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        return False

    def plain(n) -> bool:
        return isinstance(n, ast.Name) or isinstance(n, ast.Attribute) and plain(n.value)
    return plain(node) or isinstance(node, (ast.List, ast.Tuple)) and all(plain(e) for e in node.elts)


def _out_of_place(base):
    def convert(ctx):
        return ctx.expr(_each(ctx, base))
    return convert


def _in_place(base, name: str):
    def convert(ctx):
        target = ctx.bound.code("self")
        if target is not None and _fresh_display(target):   # no other name sees these tensors: the new list
            return ctx.expr(_each(ctx, base))
        if target is None or not _read_twice_safely(target):
            raise UnsupportedSite(f"torch.{name} on a list that is no name, attribute or display of names: write "
                                  f"`tensors = <the list>; torch.{name}(tensors)`")
        return ctx.expr(f"_ms_compat.foreach_write({name[len('_foreach_'):-1]!r}, {_where(ctx)!r}, {target}, "
                        f"{_each(ctx, base)})")
    return convert


def _where(ctx) -> str:
    return f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"


def _operands(ctx, args) -> str:
    """The call's arguments in torch's order: the list and the operands by position, the options (alpha=,
    value=) by keyword."""
    b = ctx.bound
    if b.starred or any(n not in args for n in b.order):
        raise UnsupportedSite("a _foreach function's arguments are bound by torch's names here")
    operands = [n for n in args if n not in _OPTIONS]
    given = [n for n in operands if b.has(n)]
    if given != operands[:len(given)]:
        raise UnsupportedSite("a _foreach function's operands are given in order here")
    return ", ".join([b.code(n) for n in given] + [f"{n}={b.code(n)}" for n in args if n in _OPTIONS and b.has(n)])


_OPTIONS = ("alpha", "value", "non_blocking")


def _listed(op: str, args):
    def convert(ctx):
        return ctx.expr(f"_ms_compat.foreach_list({op!r}, {_operands(ctx, args)})")
    return convert


def _listed_in_place(op: str, args):
    def convert(ctx):
        return ctx.expr(f"_ms_compat.foreach_list_({op!r}, {_where(ctx)!r}, {_operands(ctx, args)})")
    return convert


def _register() -> None:
    for op in UNARY + ("zero",):
        base = REGISTRY.get("torch.zeros_like" if op == "zero" else f"torch.{op}")
        if base is None or (base.target is None and base.rule is None):
            continue
        if op != "zero":
            rule(f"torch._foreach_{op}", PRECISE_ITEMS.get(base.source, base.target), args=("self",), test=T,
                 note=f"a list of the converted torch.{op} of each tensor")(_out_of_place(base))
        rule(f"torch._foreach_{op}_", PRECISE_ITEMS.get(base.source, base.target), args=("self",), test=T,
             note=f"in place on a list name: each tensor is written with the converted torch."
                  f"{'zeros_like' if op == 'zero' else op} of it (the result is the list, as in torch); a tensor "
                  f"that is no Parameter cannot be written inside a compiled graph (MigrationError naming the "
                  f"line)")(_in_place(base, f"_foreach_{op}_"))
    for op, args in OPERANDS.items():
        what = f"torch.{op}" if op not in ("copy",) else "Tensor.copy_"
        rule(f"torch._foreach_{op}", "_ms_compat.foreach_list", args=args, test=T_OPERANDS,
             note=f"a tuple of {what} of each tensor with its item of each list operand (a number or a tensor "
                  f"stands for every item)")(_listed(op, args))
        rule(f"torch._foreach_{op}_", "_ms_compat.foreach_list_", args=args, test=T_OPERANDS,
             note=f"{what} of each tensor with its item of each list operand, written into the tensor itself "
                  f"as torch does (the result is the list); a tensor that is no Parameter cannot be written "
                  f"inside a compiled graph (MigrationError naming the line)")(_listed_in_place(op, args))


_register()
