"""A lambda handed to a Cell's constructor as an argument, `self.shortcut = LambdaLayer(lambda x: F.pad(...))` (the
option-A shortcut of the CIFAR ResNets), and called in the Cell's construct.

Compiled (GRAPH mode), MindSpore 2.10 finds a lambda's code by its source line and parses that line expecting the
lambda itself: a lambda written inside a call stops the compile with "Parse Lambda Function Fail. Node type must be
Lambda, but got Call" (tests/test_heldout52_programs.py). Bound to a name on a line of its own, the lambda compiles.
So the lambda moves into an assignment right before its statement, `_ms_cell_fnN = (lambda x: ...)`, and the call
gets the name: the same function object, made in the same scope (making a lambda runs nothing and reads no name),
only earlier in the statement. Lambdas inside a nested lambda or comprehension (their own scope) stay, as do
those of statements that are not simple lines (an `if` test)."""
from __future__ import annotations

from typing import Callable, List

import libcst as cst

_PREFIX = "_ms_cell_fn"


class _Collect(cst.CSTTransformer):
    """Within one simple statement line: the lambdas passed to calls of Cell classes, replaced by fresh names."""

    def __init__(self, is_cell: Callable[[str], bool], fresh: Callable[[], str]):
        self.is_cell, self.fresh = is_cell, fresh
        self.moved: List[cst.SimpleStatementLine] = []
        self.depth = 0     # inside a lambda or comprehension of the statement: its own scope

    def _enter(self, node) -> bool:
        self.depth += 1
        return True

    def _leave(self, original, updated):
        self.depth -= 1
        return updated

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _enter
    leave_Lambda = leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if self.depth or not (isinstance(updated.func, cst.Name) and self.is_cell(updated.func.value)):
            return updated
        args = []
        for a in updated.args:
            if isinstance(a.value, cst.Lambda) and not a.star:
                name = self.fresh()
                self.moved.append(cst.SimpleStatementLine(body=[cst.Assign(
                    targets=[cst.AssignTarget(target=cst.Name(name))],
                    value=a.value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))]))
                a = a.with_changes(value=cst.Name(name))
            args.append(a)
        return updated.with_changes(args=args)


class _Hoist(cst.CSTTransformer):
    def __init__(self, is_cell: Callable[[str], bool]):
        self.is_cell, self.count = is_cell, 0

    def _fresh(self) -> str:
        self.count += 1
        return f"{_PREFIX}{self.count}"

    def _body(self, body):
        out, changed = [], False
        for st in body:
            if isinstance(st, cst.SimpleStatementLine):
                collect = _Collect(self.is_cell, self._fresh)
                new = st.visit(collect)
                if collect.moved:
                    moved = list(collect.moved)
                    moved[0] = moved[0].with_changes(leading_lines=st.leading_lines)
                    out += moved + [new.with_changes(leading_lines=[])]
                    changed = True
                    continue
            out.append(st)
        return out if changed else None

    def leave_IndentedBlock(self, original, updated):
        body = self._body(updated.body)
        return updated if body is None else updated.with_changes(body=body)

    def leave_Module(self, original, updated):
        body = self._body(updated.body)
        return updated if body is None else updated.with_changes(body=body)


def rewrite(module: cst.Module, is_cell: Callable[[str], bool]) -> cst.Module:
    """`module` with each lambda passed to a call of a Cell class (is_cell: by the callee's name) bound on a line
    of its own before its statement."""
    return module.visit(_Hoist(is_cell))
