"""Names bound to Python sequences that torch.tensor() reads and mindspore.Tensor() refuses.

torch.tensor(data) takes any sequence; mindspore.Tensor takes lists, tuples, numbers and arrays, and refuses a
`collections.deque` or a `range` with a TypeError ("the type of 'input_data' should be one of ..."). pytorch/
examples' reinforce.py builds its returns with `returns = deque(); returns.appendleft(R)` and calls
`torch.tensor(returns)`. A name every binding of which in its scope is such a call (`deque(...)`,
`collections.deque(...)`, `range(...)`) up to its conversion in place (`returns = torch.tensor(returns)`; later
bindings are the tensor's), is read through `list(...)` by the torch.tensor mapping."""
from __future__ import annotations

from typing import Dict, Set

import libcst as cst

from .callsite import code_of

_SEQUENCE_CALLS = {"deque", "collections.deque", "range"}


class _Bindings(cst.CSTVisitor):
    """name -> whether every plain assignment of it in this scope (not in nested functions) is such a call."""

    def __init__(self, root: cst.CSTNode) -> None:
        self.root = root
        self.found: Dict[str, bool] = {}
        self.converted: Set[str] = set()    # names converted in place (`returns = torch.tensor(returns)`) so far

    def _nested(self, node) -> bool:
        return node is not self.root

    def visit_FunctionDef(self, node) -> bool:
        return not self._nested(node)

    def visit_ClassDef(self, node) -> bool:
        return not self._nested(node)

    def visit_Lambda(self, node) -> bool:
        return False

    def _bind(self, target: cst.BaseExpression, is_sequence: bool) -> None:
        if isinstance(target, cst.Name):
            if target.value in self.converted:
                return      # bound after its conversion (`returns = (returns - m) / s`): a tensor by then
            self.found[target.value] = self.found.get(target.value, True) and is_sequence
        elif isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._bind(e.value, False)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, False)

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        is_sequence = isinstance(value, cst.Call) and code_of(value.func).strip() in _SEQUENCE_CALLS
        for t in node.targets:
            if _converts_itself(t.target, value):
                # `returns = torch.tensor(returns)`: what it reads is an earlier binding's value
                self.converted.add(t.target.value)
                continue
            self._bind(t.target, is_sequence)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, False)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, False)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, False)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name, False)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, False)


def _converts_itself(target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
    """`name = f(name, ...)`: the name converted in place (the call reads the binding before it)."""
    return isinstance(target, cst.Name) and isinstance(value, cst.Call) and bool(value.args) \
        and value.args[0].keyword is None and not value.args[0].star \
        and isinstance(value.args[0].value, cst.Name) and value.args[0].value.value == target.value


def sequence_names(scope: cst.CSTNode) -> Set[str]:
    """The names the scope (a module or a function) binds only to deque(...) / range(...) calls."""
    found = _Bindings(scope)
    scope.visit(found)
    params: Set[str] = set()
    if isinstance(scope, cst.FunctionDef):
        params = {p.name.value for p in (*scope.params.posonly_params, *scope.params.params,
                                         *scope.params.kwonly_params)}
    return {n for n, only in found.found.items() if only and n not in params}


class _Lists(cst.CSTVisitor):
    """Names the scope (not nested functions or classes) binds to a list display or comprehension that is no literal
    (`s_lst = []` filled by append, `[f(x) for x in xs]`)."""

    def __init__(self, root: cst.CSTNode) -> None:
        self.root = root
        self.found: Set[str] = set()

    def visit_FunctionDef(self, node) -> bool:
        return node is self.root

    def visit_ClassDef(self, node) -> bool:
        return node is self.root

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._bind(t.target, node.value)

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            if isinstance(value, cst.ListComp) or (isinstance(value, cst.List) and not _literal(value)):
                self.found.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) \
                and len(target.elements) == len(value.elements):    # `s_lst, a_lst = [], []`
            for t, v in zip(target.elements, value.elements):
                self._bind(t.value, v.value)


def _literal(node: cst.BaseExpression) -> bool:
    """A display of numbers, booleans and such displays (`[]` is none: it is filled later)."""
    if isinstance(node, (cst.List, cst.Tuple)):
        return bool(node.elements) and all(_literal(e.value) for e in node.elements)
    if isinstance(node, cst.UnaryOperation):
        return _literal(node.expression)
    return isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)) or (
        isinstance(node, cst.Name) and node.value in ("True", "False"))


def list_names(scope: cst.CSTNode) -> Set[str]:
    """The names the scope binds to a list that may hold tensors: torch.tensor(name) reads a one-element tensor in it
    as a number (`_ms_compat.tensor_data`, templates/compat_parts/tensor_data.py)."""
    found = _Lists(scope)
    scope.visit(found)
    return found.found
