"""forward re-casting a tensor attribute of its own, kept as a local of forward.

    self.attn_mask = self.attn_mask.to(dtype=x.dtype, device=x.device) if self.attn_mask is not None else None
    return self.attn(x, x, x, attn_mask=self.attn_mask)[0]
->
    attn_mask = self.attn_mask.to(dtype=x.dtype, device=x.device) if self.attn_mask is not None else None
    return self.attn(x, x, x, attn_mask=attn_mask)[0]

(CLIP's ResidualAttentionBlock.) In MindSpore's GRAPH mode a tensor stored on self inside construct is
a run-time Python object: every value computed from it runs through the interpreter (PyExecute), and
the gradient stops there. Measured on 2.10: `self.m = self.m.astype(x.dtype); return self.fc(x) + self.m`
gives all-zero input gradients, with only a warning. As a local of forward it is an ordinary graph
value.

Only a statement of the own body (not inside an `if` or a loop) of forward or another method of the
class that defines forward (CLIP's is in `attention`, which forward calls; not __init__ nor weight
initialisers) that stores on `self.A` a device/dtype move of `self.A` itself (`.to`, `.type`, `.type_as`, `.float`, `.half`, `.double`,
`.bfloat16`, `.cpu`, `.cuda`, `.contiguous`, chained, optionally under `... if self.A is not None else
None`), where that method stores nothing else on `self.A`. The reads of `self.A` after the statement read
the local. What differs: the attribute keeps the value it had (torch's holds the cast one). Each call
casts it again to that call's dtype, so forward computes the same values unless calls alternate
dtypes through a narrowing cast; the site is reported as a difference."""
from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

from .records import DIFFERENCE
from .sites import Site, shorten
from .visitor_bases import BindingTargets, ClassScopes

_MOVES = {"to", "type", "type_as", "float", "half", "double", "bfloat16", "cpu", "cuda", "contiguous"}
NOTE = ("GRAPH mode: a tensor stored on self in construct stops the gradient (PyExecute); the re-cast "
        "attribute is a local of construct, the attribute itself keeps its value")


def might_recast_attribute(source: str) -> bool:
    return "def forward" in source and "= self." in source


def _self_attr(node) -> Optional[str]:
    if (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"):
        return node.attr.value
    return None


def _is_move_of(node, attr: str) -> bool:
    """`self.<attr>` followed by one or more device/dtype moves."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _MOVES):
        return False
    inner = node.func.value
    return _self_attr(inner) == attr or _is_move_of(inner, attr)


def _is_none_test(test, attr: str, negated: bool) -> bool:
    """`self.<attr> is not None` (negated) / `self.<attr> is None`."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and _self_attr(test.left) == attr):
        return False
    comp = test.comparisons[0]
    op = cst.IsNot if negated else cst.Is
    return isinstance(comp.operator, op) and isinstance(comp.comparator, cst.Name) \
        and comp.comparator.value == "None"


def _recast_value(value, attr: str) -> bool:
    if _is_move_of(value, attr):
        return True
    if isinstance(value, cst.IfExp):
        none = (lambda n: isinstance(n, cst.Name) and n.value == "None")
        return ((_is_move_of(value.body, attr) and none(value.orelse) and _is_none_test(value.test, attr, True))
                or (none(value.body) and _is_move_of(value.orelse, attr) and _is_none_test(value.test, attr, False)))
    return False


class _Stores(BindingTargets):
    """Attributes of self stored anywhere in a function (assignment, augmented, annotated, del), and all
    Names seen."""

    binders = (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Del, cst.For)

    def __init__(self) -> None:
        self.stores: Dict[str, int] = {}
        self.names: Set[str] = set()

    def bind(self, target, value) -> None:
        attr = _self_attr(target)
        if attr is not None:
            self.stores[attr] = self.stores.get(attr, 0) + 1

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)       # `.attr` names no local
        return False


class _ReadsAsLocal(cst.CSTTransformer):
    def __init__(self, attr: str, local: str) -> None:
        self.attr, self.local = attr, local

    def leave_Attribute(self, original, updated):
        if _self_attr(original) == self.attr:
            return cst.Name(self.local)
        return updated


_NOT_GRAPH = {"__init__", "reset_parameters", "_init_weights", "init_weights"}


def _defines_forward(node: cst.ClassDef) -> bool:
    return isinstance(node.body, cst.IndentedBlock) and any(
        isinstance(st, cst.FunctionDef) and st.name.value == "forward" for st in node.body.body)


class GraphMethods(ClassScopes):
    """Rewrites, in leave_graph_method, each method that may run in a Module's graph: forward, or
    another method of a class that defines forward (forward may call it: `self.attention(x)`)."""

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        if not (self.classes and _defines_forward(self.classes[-1])) or original.name.value in _NOT_GRAPH \
                or not isinstance(original.body, cst.IndentedBlock):
            return updated
        return self.leave_graph_method(original, updated)

    def leave_graph_method(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        raise NotImplementedError


class _Forwards(GraphMethods):
    def __init__(self, lines: Dict[int, int]) -> None:
        super().__init__()
        self.lines = lines
        self.sites: List[Site] = []

    def leave_graph_method(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        scan = _Stores()
        original.visit(scan)
        taken = set(scan.names)
        body = list(original.body.body)
        changed = False
        for i, st in enumerate(body):
            if not (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1
                    and isinstance(st.body[0], cst.Assign) and len(st.body[0].targets) == 1):
                continue
            assign = st.body[0]
            attr = _self_attr(assign.targets[0].target)
            if attr is None or scan.stores.get(attr) != 1 or not _recast_value(assign.value, attr):
                continue
            local = attr if attr not in taken else next(
                f"{attr}_{k}" for k in range(1, 100) if f"{attr}_{k}" not in taken)
            taken.add(local)
            body[i] = st.with_changes(body=[assign.with_changes(
                targets=[assign.targets[0].with_changes(target=cst.Name(local))])])
            reads = _ReadsAsLocal(attr, local)
            body[i + 1:] = [later.visit(reads) for later in body[i + 1:]]
            self.sites.append(Site(self.lines.get(id(st), 0), "Module.__setattr__ (in forward)",
                                   f"{local} = ...", DIFFERENCE, NOTE,
                                   shorten(cst.Module(body=[st]).code)))
            changed = True
        if not changed:
            return updated
        # the statements keep their count and order: the statement lines of sites stay right
        return updated.with_changes(body=updated.body.with_changes(body=body))


def recast_attributes_as_locals(module: cst.Module, lines: Dict[int, int]):
    """(module, sites): the pre-pass on the torch source."""
    tr = _Forwards(lines)
    return module.visit(tr), tr.sites
