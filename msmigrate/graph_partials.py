"""A functools.partial that a function builds and then only calls, written as the calls themselves.

    make = _ms_compat.partial(kernel, projection=m)      ->   q = kernel(x, projection=m, is_query=True)
    q = make(x, is_query=True)                                k = kernel(k, projection=m)
    k = make(k)

performer-pytorch (dd827c9) builds `partial(softmax_kernel, projection_matrix=projection_matrix, device=device)`
in FastAttention.forward. Compiled (GRAPH mode, ms.jit, msmigrate verify), the jit_class _ms_compat.partial takes
constants only ("When creating an instance of 'partial', all arguments are required to be constants, but input 1
is a variable", naming no line of the program), and a closure is no way out: MindSpore 2.10 compiles a nested
function called with keywords once for all of its calls (measured: `def make(x, is_query=False)` called with
is_query=True then False gave the False result twice). A module-level function called with keywords compiles per
call, so each call of the partial becomes the call of its function, the bound arguments before the call's (a call
keyword replaces a bound one, as functools does), and the assignment goes.

Only where this cannot change what Python computes: the partial is assigned to a plain local by a statement of
its own; every read of that name in the function is a call of it in the statements after the assignment in the
same block (before any rebinding of the name), in no nested function; the function and bound arguments are names,
attributes or literals (read again at each call: so none of the names they read is bound after the assignment);
no `*`/`**` among the bound arguments. Runs over every function of the converted module; in PyNative the calls
compute what the partial's calls computed."""
from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

from .visitor_bases import BindingTargets, NameReads


def might_build_partial(source: str) -> bool:
    return "partial(" in source and "def " in source


# functools.partial as the transformer writes it (a project function named `partial` stays as it is)
_PARTIAL = ("_ms_compat.partial",)


def _dotted(node) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr.value}"
    return None


def _pure(node) -> bool:
    """A name, attribute chain or literal: read again at each call, it reads the same value."""
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.Attribute):
        return _pure(node.value)
    if isinstance(node, cst.UnaryOperation):
        return _pure(node.expression)
    return False


def _root_names(node) -> Set[str]:
    names: Set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

        def visit_Name(self, n: cst.Name) -> None:
            names.add(n.value)
    node.visit(V())
    return names


def _partial_assignment(st) -> Optional[tuple]:
    """(name, call) of `name = partial(func, ...)` alone on its line."""
    if not (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Assign)):
        return None
    assign = st.body[0]
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return None
    call = assign.value
    if not (isinstance(call, cst.Call) and _dotted(call.func) in _PARTIAL and call.args):
        return None
    if any(a.star for a in call.args) or not all(_pure(a.value) for a in call.args):
        return None
    return assign.targets[0].target.value, call


class _Bound(BindingTargets):
    binders = (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.WithItem, cst.ExceptHandler, cst.NamedExpr)

    def __init__(self) -> None:
        self.bound: Set[str] = set()

    def bind(self, target, value) -> None:
        if isinstance(target, cst.Name):
            self.bound.add(target.value)
        elif isinstance(target, cst.Attribute) and _dotted(target) is not None:
            self.bound.add(_dotted(target))   # `self.kernel_fn = ...`: a bound attribute read again changes too


def _bound_in(nodes) -> Set[str]:
    v = _Bound()
    for n in nodes:
        n.visit(v)
    return v.bound


class _Reads(NameReads):
    """Reads of `name`: as the callee of a call (outside nested functions) or otherwise."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls = 0
        self.other = 0
        self.depth = 0

    def visit_FunctionDef(self, node) -> None:
        self.depth += 1

    def leave_FunctionDef(self, node) -> None:
        self.depth -= 1

    visit_Lambda, leave_Lambda = visit_FunctionDef, leave_FunctionDef

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == self.name and not self.depth \
                and not any(a.star for a in node.args):
            self.calls += 1

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name:
            self.other += 1


def _count(nodes, name: str) -> _Reads:
    r = _Reads(name)
    for n in nodes:
        n.visit(r)
    r.other -= r.calls   # each call's callee is a Name too
    return r


class _Inline(cst.CSTTransformer):
    def __init__(self, name: str, partial: cst.Call) -> None:
        super().__init__()
        self.name, self.func = name, partial.args[0].value
        self.positional = [a for a in partial.args[1:] if a.keyword is None]
        self.keywords = [a for a in partial.args[1:] if a.keyword is not None]

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not (isinstance(updated.func, cst.Name) and updated.func.value == self.name):
            return updated
        given = {a.keyword.value for a in updated.args if a.keyword is not None}
        pos = [a for a in updated.args if a.keyword is None]
        kws = [a for a in updated.args if a.keyword is not None]
        bound = [a for a in self.keywords if a.keyword.value not in given]
        args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in self.positional + pos + bound + kws]
        return updated.with_changes(func=self.func, args=args)


def _spans(body: List[cst.BaseStatement]) -> List[tuple]:
    """(index, name, call, end, calls, other reads) of each partial assignment of the block: its span is the
    statements after it up to a rebinding of the name (that statement reads the new value)."""
    found = []
    for i, st in enumerate(body):
        hit = _partial_assignment(st)
        if hit is None:
            continue
        name, call = hit
        rest = body[i + 1:]
        end = next((j for j, later in enumerate(rest) if name in _bound_in([later])), len(rest))
        span = rest[:end]
        reads = _count(span, name)
        names_read = _root_names(call) | {d for a in call.args if (d := _dotted(a.value)) is not None}
        ok = reads.calls > 0 and not reads.other and name not in names_read and not (names_read & _bound_in(span))
        found.append((i, name, call, i + 1 + end, reads.calls if ok else -1))
    return found


class _Collect(cst.CSTVisitor):
    def __init__(self) -> None:
        self.depth = 0
        self.blocks: Dict[int, List[tuple]] = {}

    def visit_FunctionDef(self, node) -> bool:
        self.depth += 1
        return self.depth == 1    # a nested function: its own pass

    def leave_FunctionDef(self, node) -> None:
        self.depth -= 1

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        spans = _spans(list(node.body))
        if spans:
            self.blocks[id(node)] = spans


class _Rewrite(cst.CSTTransformer):
    def __init__(self, blocks: Dict[int, List[tuple]], names: Set[str]) -> None:
        super().__init__()
        self.blocks, self.names = blocks, names
        self.depth = 0

    def visit_FunctionDef(self, node) -> bool:
        self.depth += 1
        return self.depth == 1

    def leave_FunctionDef(self, original, updated):
        self.depth -= 1
        return updated

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        spans = [s for s in self.blocks.get(id(original), ()) if s[1] in self.names]
        if not spans:
            return updated
        body = list(updated.body)
        for i, name, call, end, _ in reversed(spans):
            tr = _Inline(name, call)
            span = [st.visit(tr) for st in body[i + 1:end]]
            span[0] = span[0].with_changes(leading_lines=[*_comments_of(body[i]), *span[0].leading_lines])
            body = body[:i] + span + body[end:]
        return updated.with_changes(body=body or [cst.SimpleStatementLine([cst.Pass()])])


def _comments_of(st: cst.SimpleStatementLine) -> list:
    """The removed assignment's comments (the lines above it, the one after it), kept above the next statement."""
    lines = list(st.leading_lines)
    if st.trailing_whitespace.comment is not None:
        lines.append(cst.EmptyLine(comment=st.trailing_whitespace.comment))
    return lines


class _Functions(cst.CSTTransformer):
    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if "partial" not in cst.Module([]).code_for_node(updated):
            return updated
        collect = _Collect()
        updated.visit(collect)
        by_name: Dict[str, List[tuple]] = {}
        for spans in collect.blocks.values():
            for s in spans:
                by_name.setdefault(s[1], []).append(s)
        names = set()
        for name, spans in by_name.items():
            if any(s[4] < 0 for s in spans):
                continue
            total = _count([updated.body], name)
            # every read of the name is a call in one of its partials' spans, and nothing else binds it
            if total.calls == sum(s[4] for s in spans) and total.other == len(spans):
                names.add(name)
        return updated.visit(_Rewrite(collect.blocks, names)) if names else updated


def inline_graph_partials(module: cst.Module) -> cst.Module:
    return module.visit(_Functions())
