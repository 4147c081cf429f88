"""forward storing a tensor on self and reading it back in the same call, the reads made through a local.

    self.cache = h * 2
    return self.cache.sum() + h.mean()
->
    self.cache = cache = h * 2
    return cache.sum() + h.mean()

In MindSpore's GRAPH mode a value stored on self inside construct is a run-time Python object: what is
computed from a read of it runs through the interpreter (PyExecute) and the gradient stops there, with
only a warning. Measured on 2.10 (value_and_grad of a Dense layer, compiled): read back through
`self.cache` the weight gradient is 3.0 where torch's is 39.0; through the local it is 39.0, and the
attribute still holds the value after the call (PyNative and GRAPH), for reads from outside.

Only a statement of the own body (not inside an `if` or a loop) of forward or another method of a class
that defines forward (not __init__ nor weight initialisers), `self.A = value` with one target, where the
method stores `self.A` nowhere else than in such statements. The reads of `self.A` in the statements
after it (up to and including the value of its next store) read the local; the store's own value
(`self.A = self.A * 0.5 + x`) reads the attribute as before. In torch the two forms are the same program (the local and the attribute are one
object), so nothing differs. Runs after graph_attr_casts.py (whose re-casts become locals outright)."""
from __future__ import annotations

from typing import Dict

import libcst as cst

from .graph_attr_casts import GraphMethods, _ReadsAsLocal, _self_attr, _Stores


def might_store_attribute(source: str) -> bool:
    return "def forward" in source and "self." in source


class _Reads(cst.CSTVisitor):
    def __init__(self, attr: str) -> None:
        self.attr, self.found = attr, False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if _self_attr(node) == self.attr:
            self.found = True


def _reads(nodes, attr: str) -> bool:
    v = _Reads(attr)
    for n in nodes:
        n.visit(v)
    return v.found


def _store_attr(st) -> str:
    """A in a statement line `self.A = value` (one target), else ''."""
    if (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Assign)
            and len(st.body[0].targets) == 1):
        return _self_attr(st.body[0].targets[0].target) or ""
    return ""


def _construction(value) -> bool:
    """`nn.Parameter(...)`, `Block(...)`: an object built (a Cell keeps Parameters and Cells in registries of
    its own), no value computed in the graph."""
    if not isinstance(value, cst.Call):
        return False
    f = value.func
    name = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""
    return name[:1].isupper()


class _Methods(GraphMethods):
    def leave_graph_method(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        body = list(updated.body.body)
        top: Dict[str, int] = {}
        for st in body:
            attr = _store_attr(st)
            if attr:
                top[attr] = top.get(attr, 0) + 1
        if not top:
            return updated
        scan = _Stores()
        updated.visit(scan)
        taken = set(scan.names)
        changed = False
        for i, st in enumerate(body):
            attr = _store_attr(st)
            if not attr or scan.stores.get(attr) != top[attr] or _construction(st.body[0].value):
                continue     # also stored inside an `if`/loop, a tuple target, `+=`: left as it is
            end = next((j for j in range(i + 1, len(body)) if _store_attr(body[j]) == attr), len(body))
            if not _reads(body[i + 1:end], attr):
                continue
            local = attr if attr not in taken else next(
                f"{attr}_{k}" for k in range(1, 100) if f"{attr}_{k}" not in taken)
            taken.add(local)
            assign = st.body[0]
            body[i] = st.with_changes(body=[assign.with_changes(
                targets=[assign.targets[0], cst.AssignTarget(target=cst.Name(local))])])
            reads = _ReadsAsLocal(attr, local)
            body[i + 1:end] = [later.visit(reads) for later in body[i + 1:end]]
            if end < len(body):     # the next store's value is read before it stores: the local too
                nxt = body[end].body[0]
                body[end] = body[end].with_changes(body=[nxt.with_changes(value=nxt.value.visit(reads))])
            changed = True
        if not changed:
            return updated
        return updated.with_changes(body=updated.body.with_changes(body=body))


def read_stored_attributes_as_locals(module: cst.Module) -> cst.Module:
    """The pre-pass on the torch source (statement count and order kept: site lines stay right)."""
    return module.visit(_Methods())
