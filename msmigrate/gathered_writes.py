"""A tensor read through an index tensor or a list, then written by subscript: `lab = labels[i][match]`, then
`lab[score < 0.5] = 0` (a detection loss's prior matching).

In torch, indexing by a tensor (or a list) gives a new tensor: writing into it leaves the source as it was.
MindSpore 2.10 (PYNATIVE) keeps such a result tied to its source: a later `t[mask] = v` or `t[a:b] = v`
writes into the source too (measured: `t = s[idx]; t[mask] = 5` set s[0] to 5; under a gradient the values
read back were wrong, silently: a detection loss counted no positive prior). A name bound by a subscript read
whose index holds anything but literals, and written by subscript in the same scope, is bound through
`_ms_compat.own_gathered(<the read>, <the index's non-literal parts>)` (templates/compat_parts/gathered_writes.py):
a copy when a part is a tensor or a list (torch's copy), the read itself otherwise (an int index or a slice
gives a view in torch, and MindSpore's PYNATIVE writes through it as torch does). Parts holding a call are not evaluated
twice: such a read is left as written."""
from __future__ import annotations

import re
from typing import List, Optional, Set, Tuple

import libcst as cst

_LITERALS = (cst.Integer, cst.Float, cst.SimpleString, cst.Ellipsis)
_WRITE = re.compile(r"\][ \t]*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)")


def might_write_gathered(source: str) -> bool:
    """a cheap test: a subscript store somewhere in the source"""
    return bool(_WRITE.search(source))


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, _LITERALS) or isinstance(node, cst.Name) and node.value in ("None", "True", "False")


class _HasCall(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Call(self, node: cst.Call) -> Optional[bool]:
        self.found = True
        return False

    def visit_Lambda(self, node: cst.Lambda) -> Optional[bool]:
        self.found = True
        return False


def _has_call(node: cst.CSTNode) -> bool:
    v = _HasCall()
    node.visit(v)
    return v.found


def index_parts(sub: cst.Subscript) -> Optional[List[cst.BaseExpression]]:
    """The non-literal index expressions of a subscript read; None when there is none (a literal or slice
    index: no tensor can be among them) or when one holds a call (evaluated twice it could differ)."""
    parts = []
    for el in sub.slice:
        if not isinstance(el.slice, cst.Index) or el.slice.star is not None:
            continue
        value = el.slice.value
        if _literal(value):
            continue
        if _has_call(value):
            return None
        parts.append(value)
    return parts or None


class _Scope(cst.CSTVisitor):
    """The names a scope writes by subscript (`t[...] = v`, `t[...] += v`), nested functions and classes apart."""

    def __init__(self) -> None:
        self.written: Set[str] = set()

    def visit_FunctionDef(self, node) -> Optional[bool]:
        return False

    def visit_ClassDef(self, node) -> Optional[bool]:
        return False

    def visit_Lambda(self, node) -> Optional[bool]:
        return False

    def _target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            self.written.add(target.value.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._target(el.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._target(t.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)


def _written(body: cst.CSTNode) -> Set[str]:
    v = _Scope()
    for child in body.children:
        child.visit(v)
    return v.written


class _Reads(cst.CSTTransformer):
    def __init__(self, compat: str) -> None:
        self.compat = compat
        self.stack: List[Set[str]] = []
        self.changed = False

    def visit_Module(self, node: cst.Module) -> None:
        self.stack.append(_written(node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(_written(node.body))

    def leave_FunctionDef(self, original, updated):
        self.stack.pop()
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.stack.append(set())   # a class body's own bindings are attributes

    def leave_ClassDef(self, original, updated):
        self.stack.pop()
        return updated

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if len(updated.targets) != 1 or not isinstance(updated.targets[0].target, cst.Name):
            return updated
        if updated.targets[0].target.value not in self.stack[-1] or not isinstance(updated.value, cst.Subscript):
            return updated
        parts = index_parts(updated.value)
        if parts is None:
            return updated
        self.changed = True
        call = cst.Call(func=cst.Attribute(value=cst.Name(self.compat), attr=cst.Name("own_gathered")),
                        args=[cst.Arg(updated.value)] + [cst.Arg(p) for p in parts])
        return updated.with_changes(value=call)


def own_gathered_reads(module: cst.Module, compat: str) -> Tuple[cst.Module, bool]:
    """The pass over torch code (before the conversion): such reads bound through own_gathered; True when one was."""
    t = _Reads(compat)
    out = module.visit(t)
    return out, t.changed
