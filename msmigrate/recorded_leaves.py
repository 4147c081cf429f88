"""Leaves of the graph PyNative's recorded autograd runs a backward() on (recorded_backward.py): the tensors a module
marks as needing a gradient and whose `.grad` it reads after a backward() no train step holds (an attack's
perturbation). Three ways real code marks one:

    delta.requires_grad = True                              # _ms_compat.set_requires_grad(delta, True)
    delta = torch.zeros_like(x, requires_grad=True)         # a factory's flag, dropped by the mapping
    delta = torch.zeros_like(x).uniform_(-e, e).requires_grad_()

In a module whose backward() the recorded autograd runs, each becomes `set_requires_grad(..., recorded=True)`, which
marks the tensor a leaf of that graph (the helper's `mark_leaf`); the backward() adds into the marked leaves only.
The two assignment forms are wrapped while the module is converted (`wrap`) and unwrapped at its end where the
module records nothing (`Unwrapped`: its backward() became a value_and_grad, which takes the gradient itself)."""
from __future__ import annotations

import re
from typing import Set

import libcst as cst

from .callsite import code_of

COMPAT = "_ms_compat"
_HELPER = f"{COMPAT}.set_requires_grad"


def marked_names(source: str) -> Set[str]:
    """The names a module marks as needing a gradient, in any of the three forms (by their text)."""
    names = set(re.findall(r"(?<![\w.])(\w+)\.requires_grad(?:\s*=\s*True|_\(\s*(?:True)?\s*\))", source))
    return names | factory_names(source)


def factory_names(source: str) -> Set[str]:
    """`n = ...(..., requires_grad=True)` and `n = ....requires_grad_()` on one line, whose `n.grad` is read."""
    found = set(re.findall(r"^[ \t]*(\w+)\s*=[^=\n][^\n]*(?:requires_grad\s*=\s*True\b|\.requires_grad_\(\s*(?:True)?"
                           r"\s*\)\s*$)", source, re.M))
    # a name updated as a whole (`w -= lr * w.grad`, `w.sub_(...)`: a hand-written optimizer) is a parameter, whose
    # updates the step rewrite takes or refuses, not an input's perturbation (written through `.data`)
    return {n for n in found if re.search(rf"(?<![\w.]){re.escape(n)}\.grad\b", source)
            and not re.search(rf"(?<![\w.]){re.escape(n)}(\s*[-+*/]=|\.(sub|add|mul|div|addcmul|addcdiv)_\()", source)}


def is_leaf_factory(original: cst.Assign, names: Set[str]) -> bool:
    """`n = f(..., requires_grad=True)` or `n = <expr>.requires_grad_()` / `(True)`, n one of `names`."""
    if len(original.targets) != 1 or not isinstance(original.targets[0].target, cst.Name) \
            or original.targets[0].target.value not in names or not isinstance(original.value, cst.Call):
        return False
    call = original.value
    if code_of(call.func).strip().split(".")[-1] == "Variable":
        return False        # its mapping marks it (grad_leaf), which train_loop's own rewrite reads
    if any(a.keyword is not None and a.keyword.value == "requires_grad" and isinstance(a.value, cst.Name)
           and a.value.value == "True" for a in call.args):
        return True
    return (isinstance(call.func, cst.Attribute) and call.func.attr.value == "requires_grad_"
            and [code_of(a.value).strip() for a in call.args] in ([], ["True"]))


def wrap(value: cst.BaseExpression) -> cst.Call:
    """`set_requires_grad(value, True, recorded=True)`: the converted factory, marked a leaf of the recorded graph."""
    return cst.Call(func=cst.parse_expression(_HELPER), args=[cst.Arg(value), cst.Arg(cst.Name("True")),
                                                              _recorded_arg()])


def _recorded_arg() -> cst.Arg:
    """`recorded=True`: set_requires_grad marks its tensor a leaf of the recorded graph."""
    return cst.Arg(keyword=cst.Name("recorded"), value=cst.Name("True"),
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                         whitespace_after=cst.SimpleWhitespace("")))


def _is_wrapped(node: cst.Call) -> bool:
    return (code_of(node.func).strip() == _HELPER and len(node.args) == 3 and node.args[2].keyword is not None
            and node.args[2].keyword.value == "recorded")


class Unwrapped(cst.CSTTransformer):
    """In a module that records nothing: `wrap`'s call is its value again."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        return updated.args[0].value if _is_wrapped(updated) else updated


class RecordedMarks(cst.CSTTransformer):
    """In a module whose backward() PyNative's recorded autograd runs: `x.requires_grad = True`
    (`_ms_compat.set_requires_grad(x, True)`) marks x a leaf of the recorded graph (`recorded=True`), so the
    backward() adds into its gradient, which the module reads as x.grad (an attack's perturbation)."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if code_of(updated.func).strip() != _HELPER or len(updated.args) != 2 \
                or any(a.keyword is not None or a.star for a in updated.args):
            return updated
        return updated.with_changes(args=[*updated.args, _recorded_arg()])


class UnwrappedWithoutBackward(cst.CSTTransformer):
    """In a module that records: a function whose own code runs no recorded backward() keeps its factories
    unmarked (`d = zeros_like(x, requires_grad=True)` whose gradient a value_and_grad there takes)."""

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if f"{COMPAT}.autograd_backward(" in code_of(updated):
            return updated
        return updated.visit(Unwrapped())


_GRAD_FUNCTIONS = re.compile(r"(ms|mindspore)\.(value_and_grad|grad)")


class GradCallsUnmarking(cst.CSTTransformer):
    """In a module that records: `ms.value_and_grad(fn, ...)(x, y)` becomes
    `_ms_compat.unmarking(ms.value_and_grad(fn, ...))(x, y)`, which clears the marks MindSpore leaves on the tensors
    given (recorded_backward.py's unmarking)."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        inner = updated.func
        if not (isinstance(inner, cst.Call) and _GRAD_FUNCTIONS.fullmatch(code_of(inner.func).strip())):
            return updated
        return updated.with_changes(func=cst.Call(func=cst.parse_expression(f"{COMPAT}.unmarking"),
                                                  args=[cst.Arg(inner)]))
