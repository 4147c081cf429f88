"""A train step's reads of record fields (issue 12). A project record class built in graph code is the dict of its
fields in a compiled graph (graph_records.py), and its reads there go through `_ms_compat.graph_field`. A loop's
body is host code to the transformer, so the reads that train_loop.py moves from it into a step's forward_fn
(`r = net(x); r.penalty.backward()`) were plain attributes, and compiling the step failed on the dict
("'Dictionary' object has no attribute 'penalty'", naming no line)."""
from __future__ import annotations

from typing import List, Set

import libcst as cst


class _StepFieldReads(cst.CSTTransformer):
    """`E.f` read (f a record field, E not a module) -> `_ms_compat.graph_field(E, "f")`; stores stay attributes."""

    def __init__(self, fields: Set[str], modules: Set[str]) -> None:
        self.fields, self.modules = fields, modules
        self.stores: Set[int] = set()

    def _stored(self, target: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._stored(e.value)
        elif isinstance(target, cst.StarredElement):
            self._stored(target.value)
        else:
            self.stores.add(id(target))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._stored(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._stored(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._stored(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._stored(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._stored(node.target)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if original.attr.value not in self.fields or id(original) in self.stores:
            return updated
        root = updated.value
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name) and root.value in self.modules:
            return updated
        return cst.Call(func=cst.parse_expression("_ms_compat.graph_field"),
                        args=[cst.Arg(updated.value), cst.Arg(cst.SimpleString(repr(original.attr.value)))])


def field_reads_of_step(statements: List[cst.CSTNode], fields: Set[str], modules: Set[str]) -> List[cst.CSTNode]:
    """A train step's forward statements, moved out of code the transformer judged host code (a loop's body): the
    reads of record fields go through graph_field, as in graph code (the step is compiled in GRAPH mode, where a
    record the network built is the dict of its fields)."""
    visitor = _StepFieldReads(fields, modules)
    return [st.visit(visitor) for st in statements]
