"""A training loop whose update an `if` on a value fixed for the whole loop chooses inside an inner loop, written
once per branch of that test before conversion (loop unswitching).

Gradient accumulation with an AMP switch, as scripts and trainers write it:

    for step in range(n):
        for micro in range(accum):
            loss = crit(model(x), y) / accum
            if use_amp: scaler.scale(loss).backward()
            else: loss.backward()
        if use_amp: scaler.step(opt); scaler.update()
        else: opt.step()

The backward() of the inner loop and the step of the outer one are in branches of the same test, so neither loop
holds a plain update for the converter to make one train step of (a raising TODO before). When the test calls
nothing but a few pure builtins (hasattr, isinstance...) and reads no name the loop binds and no attribute or item
it assigns (_fixed), it has one value for the whole loop, and the loop is written once under each branch:

    if use_amp: for step ...: <every `if use_amp:` of the loop replaced by its body>
    else:       for step ...: <... replaced by its else part (an `elif` stays an `if` there)>

Each copy is then converted as a loop of its own (the accumulation over an inner loop included). Only where such an
`if` holds a backward() inside a loop nested in the loop: the other shapes are step_choice's, which splits the loop
body itself. A function body that clears, accumulates over such a loop and steps after it, with no loop around
them in the function (a trainer's method run once per update: pytorch-lr-finder's `_train_batch`), is split inside
the function the same way. The statements keep their nodes (their lines: `lines`, id -> original line, gets the
new loops and `if`s)."""
from __future__ import annotations

import re
from typing import Dict, List, Optional

import libcst as cst

from . import train_loop as TL
from .callsite import code_of

_BACKWARD = re.compile(r"\.backward\(")
_LOOPS = (cst.For, cst.While)


def might_unswitch(source: str) -> bool:
    return ".backward(" in source


def _test_code(node: cst.If) -> str:
    return " ".join(code_of(node.test).split())


def _nested_updates(stmts, in_inner: bool, found: List[cst.If]) -> None:
    """`if`s holding a backward() inside a loop nested in the loop (in_inner), in order (an `if` choosing only a
    step or a scheduler call, `if scheduler is not None: scheduler.step()`, converts as it is)."""
    for st in stmts:
        if isinstance(st, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(st, cst.If) and in_inner and _BACKWARD.search(code_of(st)):
            found.append(st)
        for block in _blocks(st):
            _nested_updates(block, in_inner or isinstance(st, _LOOPS), found)


def _blocks(st) -> List[List[cst.CSTNode]]:
    out = []
    for name in ("body", "orelse", "finalbody"):
        part = getattr(st, name, None)
        if isinstance(part, cst.IndentedBlock):
            out.append(list(part.body))
        elif isinstance(part, (cst.Else, cst.Finally)) and isinstance(part.body, cst.IndentedBlock):
            out.append(list(part.body.body))
        elif isinstance(part, cst.If):
            out.append([part])
    for handler in getattr(st, "handlers", ()) or ():
        if isinstance(handler.body, cst.IndentedBlock):
            out.append(list(handler.body.body))
    return out


# calls a fixed test may make: they read what they are given
_PURE = frozenset({"hasattr", "isinstance", "getattr", "len", "callable"})


class _Stores(cst.CSTVisitor):
    """The code of every assignment target of the loop (`self.amp_backend`, `cfg["amp"]`, `flag`)."""

    def __init__(self) -> None:
        self.targets: List[str] = []

    def visit_AssignTarget(self, node) -> None:
        self.targets.append(code_of(node.target).strip())

    def visit_AugAssign(self, node) -> None:
        self.targets.append(code_of(node.target).strip())

    def visit_AnnAssign(self, node) -> None:
        self.targets.append(code_of(node.target).strip())


def _chains(test: cst.BaseExpression) -> List[str]:
    found: List[str] = []

    class _V(cst.CSTVisitor):
        def visit_Attribute(self, node) -> None:
            found.append(code_of(node).strip())

    test.visit(_V())
    return found


def _fixed(test: cst.BaseExpression, loop) -> bool:
    """The test has one value for the whole loop: it calls nothing but _PURE builtins, reads no name the loop
    binds, and no attribute or item the loop assigns (`self.amp_backend == "torch"`; the methods the loop calls
    on `self` are taken not to switch such a setting)."""
    calls = TL._CallsAndOps()
    TL.walk(test, calls)
    if any(c not in _PURE for c in calls.calls):
        return False
    # a loop (its target too: `for i in ...` with `if (i + 1) % n == 0:` inside), or a function body's statements
    parts = list(loop) if isinstance(loop, list) else [loop]
    bound = set().union(*(TL.assigns(p) for p in parts))
    if set(TL.reads(test)) & bound:
        return False
    stores = _Stores()
    for p in parts:
        TL.walk(p, stores)
    chains = _chains(test) + list(TL.reads(test))
    return not any(c == t or t.startswith((c + ".", c + "[")) or c.startswith(t + ".")
                   for t in stores.targets for c in chains)


class _Specialise:
    """The loop's statements with every `if <test>` replaced by one of its parts; new compound nodes get their
    original's line."""

    def __init__(self, test: str, branch: bool, lines: Dict[int, int]) -> None:
        self.test, self.branch, self.lines = test, branch, lines

    def stmts(self, stmts) -> List[cst.CSTNode]:
        out: List[cst.CSTNode] = []
        for st in stmts:
            if isinstance(st, cst.If) and _test_code(st) == self.test:
                out.extend(self.stmts(self._part(st)))
            else:
                out.append(self.node(st))
        return out

    def _part(self, st: cst.If) -> List[cst.CSTNode]:
        if self.branch:
            return list(st.body.body)
        if isinstance(st.orelse, cst.Else):
            return list(st.orelse.body.body)
        if isinstance(st.orelse, cst.If):    # an `elif`: an `if` of its own here
            return [st.orelse.with_changes(leading_lines=())]
        return []

    def node(self, st):
        if isinstance(st, (cst.FunctionDef, cst.ClassDef, cst.SimpleStatementLine)) or not _blocks(st):
            return st
        changes = {}
        for name in ("body", "orelse", "finalbody"):
            part = getattr(st, name, None)
            if isinstance(part, cst.IndentedBlock):
                changes[name] = part.with_changes(body=self._block(part.body))
            elif isinstance(part, (cst.Else, cst.Finally)) and isinstance(part.body, cst.IndentedBlock):
                changes[name] = part.with_changes(body=part.body.with_changes(body=self._block(part.body.body)))
            elif isinstance(part, cst.If):
                changes[name] = self.node(part)
        if getattr(st, "handlers", None):
            changes["handlers"] = [h.with_changes(body=h.body.with_changes(body=self._block(h.body.body)))
                                   if isinstance(h.body, cst.IndentedBlock) else h for h in st.handlers]
        new = st.with_changes(**changes)
        if id(st) in self.lines:
            self.lines[id(new)] = self.lines[id(st)]
        return new

    def _block(self, stmts) -> List[cst.CSTNode]:
        return self.stmts(stmts) or [cst.SimpleStatementLine(body=[cst.Pass()])]


def _unswitched(loop, lines: Dict[int, int], depth: int = 0):
    """The loop written once per branch of the first fixed test that chooses an update in an inner loop (and again
    inside each copy, for an `elif`), or None."""
    if depth > 2 or not isinstance(loop.body, cst.IndentedBlock):
        return None
    found: List[cst.If] = []
    _nested_updates(list(loop.body.body), False, found)
    for choice in found:
        if not _fixed(choice.test, loop):
            continue
        test = _test_code(choice)
        copies = []
        for branch in (True, False):
            spec = _Specialise(test, branch, lines)
            copy = spec.node(loop).with_changes(leading_lines=())
            copies.append(_unswitched(copy, lines, depth + 1) or copy)
        split = cst.If(test=choice.test, body=cst.IndentedBlock(body=[copies[0]]),
                       orelse=cst.Else(body=cst.IndentedBlock(body=[copies[1]])), leading_lines=loop.leading_lines)
        if id(loop) in lines:
            lines[id(split)] = lines[id(loop)]
        return split
    return None


def _split_body(stmts: List[cst.CSTNode], lines: Dict[int, int], depth: int = 0) -> Optional[List[cst.CSTNode]]:
    """A function body that accumulates over a loop and steps after it, with no loop around them in the function
    (pytorch-lr-finder's `_train_batch`: the loop's backward() and the step chosen by the same setting), written as
    `if <test>: <body, every such `if` replaced by its body> else: <... by its else part>`; None where no such
    `if` is. Each branch is then a block that clears, accumulates and steps (train_loop.taped_outer_step)."""
    if depth > 2:
        return None
    found: List[cst.If] = []
    _nested_updates(stmts, False, found)
    for choice in found:
        if not _fixed(choice.test, stmts):
            continue
        test = _test_code(choice)
        parts = []
        for branch in (True, False):
            new = _Specialise(test, branch, lines).stmts(stmts) or [cst.SimpleStatementLine(body=[cst.Pass()])]
            parts.append(_split_body(new, lines, depth + 1) or new)
        split = cst.If(test=choice.test, body=cst.IndentedBlock(body=parts[0]),
                       orelse=cst.Else(body=cst.IndentedBlock(body=parts[1])))
        if stmts and id(stmts[0]) in lines:
            lines[id(split)] = lines[id(stmts[0])]
        return [split]
    return None


def _outer_of_update(loop) -> bool:
    """A loop that steps an optimizer itself (the function's loop is the outer loop of the accumulation)."""
    return bool(re.search(r"\.step\(", code_of(loop)))


def _docstring(st) -> bool:
    return isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Expr) \
        and isinstance(st.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


class _Loops(cst.CSTTransformer):
    def __init__(self, lines: Dict[int, int]) -> None:
        self.lines = lines
        self.depth = 0
        self.changed = False

    def visit_For(self, node) -> None:
        self.depth += 1

    def visit_While(self, node) -> None:
        self.depth += 1

    def _leave(self, original, updated):
        self.depth -= 1
        if self.depth or updated is not original:
            return updated      # the outermost loop only (an inner one is part of its copies)
        split = _unswitched(original, self.lines)
        if split is None:
            return updated
        self.changed = True
        return split

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        if result is not original and isinstance(result, cst.CSTNode) and id(original) in self.lines:
            self.lines.setdefault(id(result), self.lines[id(original)])   # an ancestor of a split loop
        return result

    def leave_FunctionDef(self, original, updated):
        if self.depth or not isinstance(updated.body, cst.IndentedBlock) or ".backward(" not in code_of(updated):
            return updated
        body = list(updated.body.body)
        head = body[:1] if body and _docstring(body[0]) else []
        if not body[len(head):] or any(isinstance(st, (cst.For, cst.While)) and _outer_of_update(st)
                                       for st in body[len(head):]):
            return updated      # a loop that is itself the outer loop: _leave's
        split = _split_body(body[len(head):], self.lines)
        if split is None:
            return updated
        self.changed = True
        split[0] = split[0].with_changes(leading_lines=body[len(head)].leading_lines)
        return updated.with_changes(body=updated.body.with_changes(body=head + split))

    def leave_For(self, original, updated):
        return self._leave(original, updated)

    def leave_While(self, original, updated):
        return self._leave(original, updated)


def unswitch_loops(module: cst.Module, lines: Dict[int, int]) -> Optional[cst.Module]:
    """The module with such loops written once per branch (lines extended in place), or None where none is."""
    v = _Loops(lines)
    new = module.visit(v)
    return new if v.changed else None
