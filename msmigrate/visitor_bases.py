"""Skeletons of the libcst visitors that the converter's analyses share.

Many passes ask the same questions of a piece of code: which targets it binds, which Names it reads,
in which order its statements and loops come, which classes enclose a function. Each base here
answers one of them once, so that a pass only says what it does with the answer:
- ScopeLocalVisitor: one function body, nested functions, classes and lambdas left out;
- BindingTargets: every target the chosen statement kinds bind, tuples unpacked (bind hook);
- NameReads: the Names of an expression that name variables (not `a.b`'s b, not `f(k=v)`'s k);
- StatementOrder: one scope's statement lines numbered, the loops around each node, its reads;
- ClassScopes: a transformer that knows the classes enclosing the node it visits."""
from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst


class ScopeLocalVisitor(cst.CSTVisitor):
    """Visits one function body: nested functions, classes and lambdas are scopes of their own."""

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False


def _bound_by(node: cst.CSTNode) -> List[Tuple[cst.CSTNode, Optional[cst.BaseExpression]]]:
    """(target, the value bound to it or None) for what one node binds or deletes."""
    if isinstance(node, cst.Assign):          # `a = b = v`: v is no plain value of a chain
        value = node.value if len(node.targets) == 1 else None
        return [(t.target, value) for t in node.targets]
    if isinstance(node, (cst.AnnAssign, cst.NamedExpr)):
        return [(node.target, node.value)]
    if isinstance(node, (cst.AugAssign, cst.For, cst.CompFor, cst.Del)):
        return [(node.target, None)]
    if isinstance(node, cst.AsName):          # with / except / import ... as x
        return [(node.name, None)]
    if isinstance(node, cst.WithItem):
        return [] if node.asname is None else [(node.asname.name, None)]
    if isinstance(node, cst.ExceptHandler):
        return [] if node.name is None else [(node.name.name, None)]
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Param, cst.NameItem)):
        return [(node.name, None)]            # def, class, parameter, global/nonlocal
    return []


def single_targets(target: cst.CSTNode) -> List[cst.CSTNode]:
    """The single targets of a binding target, in source order: itself, or the parts of a tuple, list
    or starred target (`a, (b, *c) = v`: a, b, c), unpacked."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [part for el in target.elements for part in single_targets(el.value)]
    if isinstance(target, cst.StarredElement):
        return single_targets(target.value)
    return [target]


class BindingTargets(cst.CSTVisitor):
    """Calls bind(target, value) for each target that a node of the kinds in `binders` binds: a
    Name, an attribute or a subscript, the parts of a tuple, list or starred target one at a time
    (value None: an unpacked part). `binders` says which kinds a pass counts as binding (with its
    `as` names or not, comprehension variables or not...), since the passes differ there."""

    binders: Tuple[type, ...] = ()

    def bind(self, target: cst.CSTNode, value: Optional[cst.BaseExpression]) -> None:
        raise NotImplementedError

    def unpack(self, target: cst.CSTNode, value: Optional[cst.BaseExpression] = None) -> None:
        for part in single_targets(target):
            self.bind(part, value if part is target else None)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, self.binders):
            for target, value in _bound_by(node):
                self.unpack(target, value)
        return super().on_visit(node)


class NameReads(cst.CSTVisitor):
    """Visits the Names that name variables: an attribute's name (`a.b`: b) and a keyword's
    (`f(k=v)`: k) are no names of the scope, only their values are visited."""

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False


class StatementOrder(NameReads, ScopeLocalVisitor):
    """One scope's statements in order: `pos` numbers the statement lines, `loops` holds the ids of
    the loops around the node visited, `reads` every Name read as (pos, name, loops, id). A pass
    records its own events in event(node), which sees pos and loops already updated."""

    def __init__(self) -> None:
        self.pos = 0
        self.loops: List[int] = []
        self.reads: List[Tuple[int, str, Tuple[int, ...], int]] = []
        self._loop_ids = 0

    def event(self, node: cst.CSTNode) -> None:
        pass

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.For, cst.While)):
            self._loop_ids += 1
            self.loops.append(self._loop_ids)
        if isinstance(node, cst.SimpleStatementLine):
            self.pos += 1
        self.event(node)
        if isinstance(node, cst.Name):
            self.reads.append((self.pos, node.value, tuple(self.loops), id(node)))
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, (cst.For, cst.While)):
            self.loops.pop()
        super().on_leave(original_node)


class ClassScopes(cst.CSTTransformer):
    """A transformer that knows the classes enclosing the node it visits: `classes`, innermost last
    (the original ClassDef nodes)."""

    def __init__(self) -> None:
        self.classes: List[cst.ClassDef] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.CSTNode:
        self.classes.pop()
        return updated
