"""A lambda called where it is written, `(lambda _ms_index: ops.tensor_scatter_elements(t, _ms_index, ...))(idx)`
(the form many mappings emit), inside a `for` loop of a function.

Compiled (GRAPH mode, ms.jit), MindSpore 2.10 mis-builds a `for` loop whose body defines a lambda: the whole
function returns None with no error, or compiling stops with "Failure: have return node!" (measured:
tests/parity/test_graph_loop_lambdas.py; vector-quantize's kmeans). A lambda defined before the loop and
called in it compiles right, provided every name it reads is bound before the loop. So the lambda moves in
front of the outermost `for` of its function as `_ms_loop_fnN = lambda params, locals...: body`, the
function's own names it reads becoming parameters, passed at the call (`_ms_loop_fnN(idx, t)`): called at
the same place with the same values, as in Python the lambda read them when called. Passed by position:
a lambda called with keywords computes wrong values in a compiled graph (2.10: `f(x, 0.5, w=w, k=k)` of
`lambda t, s, w, k: ...` in a loop, measured). Lambdas inside a nested def, lambda or comprehension (their own
scope) stay; so do those with defaults or star parameters and calls whose arguments are not in the
parameters' order (keywords given in another order, stars): Python would evaluate them in another order.

A lambda handed on as a value in a loop (`_ms_compat.on_tensor(x, lambda _ms_r: _ms_r.mean(), ...)`, which the
untyped-method mappings emit, or `sorted(xs, key=lambda t: ...)`) mis-builds the same way. It moves in front of
the loop as written when the function's names it reads keep one value through the loop. When it reads names the
loop binds and it is a call's argument, what moves is a factory of it, `_ms_loop_fnN = lambda i: (lambda r: r * i)`,
called where the lambda was (`f(x, _ms_loop_fnN(i))`): the callee gets a lambda reading the values of that moment.
One stored in a loop and reading what the loop changes stays (Python reads those names when it is called).
A comprehension inside a loop is the same (`[f(x, lambda t: t * j) for j in ...]`; one outside loops compiles
right and stays): its lambdas move, the names its own `for`s bind counted among those the loop changes."""
from __future__ import annotations

from typing import List, Set

import libcst as cst

from .scope_names import names_read as _names_read, targets as _targets

_PREFIX = "_ms_loop_fn"


def _bound_names(node: cst.CSTNode) -> Set[str]:
    """Names a function binds in its own scope: parameters, assignment/for/with/except/import targets."""
    names: Set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Param(self, n):
            names.add(n.name.value)

        def visit_AssignTarget(self, n):
            _targets(n.target, names)

        def visit_AnnAssign(self, n):
            _targets(n.target, names)

        def visit_AugAssign(self, n):
            _targets(n.target, names)

        def visit_For(self, n):
            _targets(n.target, names)

        def visit_AsName(self, n):
            _targets(n.name, names)

        def visit_NamedExpr(self, n):
            _targets(n.target, names)

        def visit_FunctionDef(self, n):
            names.add(n.name.value)
            return n is node       # a nested def's own names are not this function's

        def visit_ClassDef(self, n):
            names.add(n.name.value)
            return False

        def visit_Lambda(self, n):
            return False

    node.visit(Collect())
    return names


def _simple_params(lam: cst.Lambda) -> bool:
    p = lam.params
    return not (p.posonly_params or p.kwonly_params or p.star_kwarg
                or not isinstance(p.star_arg, cst.MaybeSentinel) or any(x.default is not None for x in p.params))


def _in_parameter_order(lam: cst.Lambda, call: cst.Call) -> bool:
    """The call's arguments fill the lambda's parameters in their order (keywords too: `f(x, k=1)` of
    `lambda t, k`), so passing them all by position evaluates them in the same order; no star arguments."""
    names = [p.name.value for p in lam.params.params]
    if len(call.args) != len(names) or any(a.star for a in call.args):
        return False
    return all(a.keyword is None or a.keyword.value == n for a, n in zip(call.args, names))


class _Hoist(cst.CSTTransformer):
    """Inside one function: replaces each IIFE under a `for` by a call of a hoisted name, collecting
    the assignments to put in front of the outermost loop."""

    def __init__(self, owner: "_Module", local_names: Set[str]):
        self.owner, self.local_names, self.loop_depth, self.hoisted = owner, local_names, 0, []
        # names the top statement holding the loops binds (the loops' headers and bodies among them): a lambda
        # moved in front of that statement must not read them from there
        self.loop_bound: Set[str] = set()
        self.called: Set[int] = set()         # lambdas called where written (leave_Call hoists those)
        self.passed: Set[int] = set()         # lambdas given as a call's argument
        self.comp_bound: List[Set[str]] = []  # the names the comprehensions around the current node bind

    def visit_FunctionDef(self, node):
        return False        # its own scope, handled on its own

    def visit_ClassDef(self, node):
        return False

    def visit_Lambda(self, node):
        return False

    def visit_Call(self, node):
        if isinstance(node.func, cst.Lambda):
            self.called.add(id(node.func))
        self.passed.update(id(a.value) for a in node.args if isinstance(a.value, cst.Lambda))

    def leave_Lambda(self, original: cst.Lambda, updated: cst.Lambda):
        """A lambda handed on as a value in a loop (`on_tensor(x, lambda _ms_r: _ms_r.mean(), ...)`,
        `sorted(xs, key=lambda t: ...)`): defined in front of the loop instead, as written, when the
        function's names it reads keep one value through the loop, so it reads what it read in the loop."""
        if self.loop_depth == 0 or id(original) in self.called or not _simple_params(updated):
            return updated
        params = {p.name.value for p in updated.params.params}
        free = [n for n in _names_read(updated.body) if n in self._visible() and n not in params]
        varying = [n for n in free if n in self.loop_bound or any(n in b for b in self.comp_bound)]
        if varying and id(original) not in self.passed:
            return updated      # stored, it may be called after those names changed: Python reads them then
        name = self.owner.fresh()
        value = updated.with_changes(lpar=[], rpar=[])
        if varying:     # passed on where it is made: a factory taking what the loop changes, called in the loop
            value = cst.Lambda(params=cst.Parameters(params=[cst.Param(cst.Name(n)) for n in varying]),
                               body=updated.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))
        self.hoisted.append(cst.SimpleStatementLine(body=[cst.Assign(
            targets=[cst.AssignTarget(cst.Name(name))], value=_one_expression(value))]))
        if varying:
            return cst.Call(func=cst.Name(name), args=[cst.Arg(cst.Name(n)) for n in varying],
                            lpar=updated.lpar, rpar=updated.rpar)
        return cst.Name(name, lpar=updated.lpar, rpar=updated.rpar)

    # a comprehension in a loop mis-builds the same way with a lambda in it (outside loops it compiles right):
    # its lambdas move too, what its own `for`s bind counted among the names the loop changes
    def _enter_comprehension(self, node) -> bool:
        if self.loop_depth == 0:
            return False
        bound: Set[str] = set()
        comp = node.for_in
        while comp is not None:
            _targets(comp.target, bound)
            comp = comp.inner_for_in
        self.comp_bound.append(bound)
        return True

    def _leave_comprehension(self, original, updated):
        if self.loop_depth and self.comp_bound:
            self.comp_bound.pop()
        return updated

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _enter_comprehension
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave_comprehension

    def _visible(self) -> Set[str]:
        """The function's names and those of the comprehensions around here."""
        return self.local_names.union(*self.comp_bound)

    def visit_For(self, node):
        self.loop_depth += 1

    def leave_For(self, original, updated):
        self.loop_depth -= 1
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        lam = updated.func if isinstance(updated.func, cst.Lambda) else None
        if self.loop_depth == 0 or lam is None or not _simple_params(lam) or not _in_parameter_order(lam, updated):
            return updated
        params = {p.name.value for p in lam.params.params}
        free = [n for n in _names_read(lam.body) if n in self._visible() and n not in params]
        name = self.owner.fresh()
        new_params = list(lam.params.params) + [cst.Param(cst.Name(n)) for n in free]
        new_params = [p.with_changes(comma=cst.MaybeSentinel.DEFAULT) for p in new_params]
        self.hoisted.append(cst.SimpleStatementLine(body=[cst.Assign(
            targets=[cst.AssignTarget(cst.Name(name))],
            value=_one_expression(lam.with_changes(params=lam.params.with_changes(params=new_params), lpar=[],
                                                   rpar=[])))]))
        args = [a.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT, comma=cst.MaybeSentinel.DEFAULT)
                for a in updated.args] + [
            cst.Arg(cst.Name(n)) for n in free]
        return cst.Call(func=cst.Name(name), args=args, lpar=updated.lpar, rpar=updated.rpar)


def _one_expression(value: cst.Lambda) -> cst.Lambda:
    """The lambda in parentheses where its code spans lines: a method chain written across lines inside the
    parentheses of the expression it came from (torchattacks' FAB: `(x - adv)\n.abs()\n.max(1)[0]` in a loop)
    would otherwise end the hoisted statement at the first line break (IndentationError)."""
    if "\n" in cst.Module(body=[]).code_for_node(value):
        return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return value


class _Module(cst.CSTTransformer):
    def __init__(self):
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"{_PREFIX}{self.count}"

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        if not isinstance(updated.body, cst.IndentedBlock):
            return updated
        local_names = _bound_names(updated)
        changed, body = False, []
        for st in updated.body.body:
            hoist = _Hoist(self, local_names)
            hoist.loop_bound = _bound_names(st)
            new = _in_loops(st, hoist)
            if hoist.hoisted:
                changed = True
                first, *rest = hoist.hoisted
                body.append(first.with_changes(leading_lines=new.leading_lines))
                body.extend(rest)
                new = new.with_changes(leading_lines=[])
            body.append(new)
        return updated.with_changes(body=updated.body.with_changes(body=body)) if changed else updated


def _in_loops(st: cst.BaseStatement, hoist: _Hoist) -> cst.BaseStatement:
    """st with the IIFEs under each `for` replaced; their lambdas land in hoist.hoisted, to go in front of st
    (a statement of the function's body: every loop of the function is inside one)."""
    return st.visit(hoist)


def rewrite(module: cst.Module) -> cst.Module:
    """Every function's IIFEs inside `for` loops hoisted in front of the loop's top statement."""
    return module.visit(_Module())
