"""`it = iter(xs)` ... `next(it, None)` in a Module's methods (x-transformers' AttentionLayers:
`iter_attn_cache = iter(attn_cache)`, then `cache = next(iter_attn_cache, None)` once per layer).

Compiled, MindSpore's `next(it)` gives (item, rest of the iterator) instead of the item (measured on
2.10: `a = next(it); b = next(it); a + b` returns a tuple), and `next(it, default)` does not compile
("For 'Next', the number of input should be 1, but got 2"). Indexing and slicing of a list, a tuple or
a tensor compile right, so the iterator becomes the sequence itself (_ms_compat.graph_iter: a list,
tuple or tensor as it is, anything else as a tuple) and each `next(it, d)` becomes, before its
statement, `it_next = it[0] if len(it) else d; it = it[1:]`, the call reading it_next.

Only for a name the function binds to `iter(...)` alone and reads nowhere but as the iterator of
`next(...)` calls that its statement evaluates unconditionally (not under `if`-expressions, `and`/`or`,
lambdas, comprehensions), one per statement: anything else keeps the iterator as written."""
from __future__ import annotations

from typing import Dict, Set

import libcst as cst

from .inplace_values import _STATEMENTS, _Scan
from .visitor_bases import BindingTargets, NameReads, ScopeLocalVisitor


def _is_iter_call(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "iter"
            and len(node.args) == 1 and not node.args[0].keyword and not node.args[0].star)


def _is_next_call(node: cst.CSTNode) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "next"
            and 1 <= len(node.args) <= 2 and not any(a.keyword or a.star for a in node.args)
            and isinstance(node.args[0].value, cst.Name))


class _Uses(BindingTargets, ScopeLocalVisitor):
    """Bindings of each name (iter(...) or not) and the `next(name, ...)` calls, per statement."""

    binders = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.WithItem, cst.CompFor)

    def __init__(self) -> None:
        self.iter_bound: Dict[str, bool] = {}     # name: every binding is `name = iter(...)`
        self.iter_calls: Dict[str, list] = {}
        self.next_reads: Dict[str, int] = {}      # reads of a name as next()'s iterator, hoistable
        self.next_calls: Dict[str, list] = {}

    def bind(self, target, value) -> None:
        if isinstance(target, cst.Name):
            ok = value is not None and _is_iter_call(value)
            self.iter_bound[target.value] = self.iter_bound.get(target.value, True) and ok
            if ok:
                self.iter_calls.setdefault(target.value, []).append(value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.unpack(node.target)                  # `(it := iter(xs))`: an iterator kept as written

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if len(node.body) != 1 or not isinstance(node.body[0], _STATEMENTS):
            return
        scan = _Scan(_is_next_call)
        node.body[0].visit(scan)
        per_name: Dict[str, list] = {}
        for call in scan.calls:
            per_name.setdefault(call.args[0].value.value, []).append(call)
        for name, calls in per_name.items():
            if len(calls) == 1:                   # two in one statement: their order is the statement's
                self.next_reads[name] = self.next_reads.get(name, 0) + 1
                self.next_calls.setdefault(name, []).extend(calls)


def _all_name_reads(function: cst.FunctionDef) -> Dict[str, int]:
    """Every occurrence of each name in the function body, nested scopes included, not counting
    attribute names and keyword names."""
    counts: Dict[str, int] = {}

    class V(NameReads):
        def visit_Name(self, node: cst.Name) -> None:
            counts[node.value] = counts.get(node.value, 0) + 1

    function.body.visit(V())
    return counts


def training_loop(function: cst.FunctionDef) -> bool:
    """A function calling `.backward(...)` (StarGAN's Solver.train: `x, y = next(data_iter)`, a fresh iter() on
    StopIteration): its loop runs in Python, only the step train_loop.py takes out of it is compiled, so its
    iterators stay iterators. As a sequence, a DataLoader would be read whole at the iter() call: every batch of
    the epoch in memory at once, and their random augmentations drawn before the draws the loop makes between
    them (torch draws each batch's at its next())."""
    found = []

    class _Backward(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward":
                found.append(node)
    function.body.visit(_Backward())
    return bool(found)


def graph_iterators(function: cst.FunctionDef, params: Set[str]):
    """(ids of the `iter(...)` calls to rewrite, ids of the `next(...)` calls to hoist) of this function."""
    uses = _Uses()
    function.body.visit(uses)
    counts = _all_name_reads(function)
    iters: Set[int] = set()
    nexts: Set[int] = set()
    for name, ok in uses.iter_bound.items():
        if not ok or name in params or not uses.next_reads.get(name):
            continue
        bindings = len(uses.iter_calls[name])
        # every occurrence of the name: its bindings and its hoistable next() calls
        if counts.get(name, 0) != bindings + uses.next_reads[name]:
            continue
        iters |= {id(c) for c in uses.iter_calls[name]}
        nexts |= {id(c) for c in uses.next_calls[name]}
    return iters, nexts


def next_rebindings(call: cst.Call, default, taken):
    """(temp name, [(name, value code)]) for `next(it)` / `next(it, default)`; default: its converted code."""
    receiver = call.args[0].value.value
    name = f"{receiver}_next"
    i = 2
    while name in taken:
        name = f"{receiver}_next{i}"
        i += 1
    item = f"{receiver}[0]" if default is None else f"{receiver}[0] if len({receiver}) else {default}"
    return name, [(name, item), (receiver, f"{receiver}[1:]")]
