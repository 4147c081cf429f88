"""A train step's reads of record fields (issue 12). A project record class built in graph code is the dict of its
fields in a compiled graph (graph_records.py), and its reads there go through `_ms_compat.graph_field`. A loop's
body is host code to the transformer, so the reads that train_loop.py moves from it into a step's forward_fn
(`r = net(x); r.penalty.backward()`) were plain attributes, and compiling the step failed on the dict
("'Dictionary' object has no attribute 'penalty'", naming no line)."""
from __future__ import annotations

from typing import List, Set

import libcst as cst

from .visitor_bases import BindingTargets


class _Stores(BindingTargets):
    """The attribute targets statements store into or delete (`r.f = v`, `a.f, b = ...`, `for r.f in ...`)."""
    binders = (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.Del)

    def __init__(self) -> None:
        self.ids: Set[int] = set()

    def bind(self, target: cst.CSTNode, value) -> None:
        self.ids.add(id(target))


class _StepFieldReads(cst.CSTTransformer):
    """`E.f` read (f a record field, E not a module) -> `_ms_compat.graph_field(E, "f")`; stores stay attributes."""

    def __init__(self, fields: Set[str], modules: Set[str], stores: Set[int]) -> None:
        self.fields, self.modules, self.stores = fields, modules, stores

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
    stores = _Stores()
    for st in statements:
        st.visit(stores)
    visitor = _StepFieldReads(fields, modules, stores.ids)
    return [st.visit(visitor) for st in statements]
