"""Gradients torch leaves in `.grad` after one loop, read by the first step of the next one.

torch's backward() adds to `.grad`, which stays on the parameters until something clears it. A
converted step applies the gradients value_and_grad returns, so what matters is what a loop's
first step adds to. A loop that clears nothing (no zero_grad()) applies the sum of every backward()
since the last zero_grad() of its optimizer: `_ms_compat.grad_sum(optimizer, grads)` holds that sum
per optimizer, so two such loops in a row (or the next call of a per-epoch function) keep summing
and `optimizer.zero_grad()` between them empties it, as in torch (train_loop.py).

What the held sum cannot carry is left to this module, judged on the original code of each scope
(the module body, each function body): a loop whose first step reads what was there before it (it
clears nothing, or clears only after its first backward()) while another backward() of the scope
(a loop that clears at the top of its iterations, a straight-line step) may have left gradients:

    for x in warmup: opt.zero_grad(); loss(x).backward(); opt.step()   # leaves the last gradient
    for x in data: loss(x).backward(); opt.step()     # torch's first step applies warm-up's last + its own

Such a loop's backward() becomes a raising TODO naming the line that left the gradients, unless a
clearing statement stands between them in a block around the loop (`opt.zero_grad()` before it),
or both loops clear nothing and step the same optimizer (the held sum). A loop clearing nothing
whose scope clears gradients other than by its optimizer's zero_grad() (`model.zero_grad()`, which
converts to nothing, `p.grad = None`) is a TODO too: that would not empty the held sum.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from . import train_loop as TL
from .callsite import code_of

# what clears gradients (train_loop._CLEARS_GRADS)
_CLEARS = TL._CLEARS_GRADS
_LOOPS = (cst.For, cst.While)


class _Scope(cst.CSTVisitor):
    """One scope's backward() calls and clearing statements, each with its enclosing loops and blocks
    (innermost last) and its preorder position; nested functions and classes are scopes of their own."""

    def __init__(self) -> None:
        self.order = 0
        self.pos: Dict[int, Tuple[int, int]] = {}      # id(node) -> (first, last) preorder index
        self.stack: List[cst.CSTNode] = []
        self.backwards: List[Tuple[cst.CSTNode, List[cst.CSTNode]]] = []   # (statement, enclosing nodes)
        self.clears: List[Tuple[cst.CSTNode, List[cst.CSTNode]]] = []
        self.inner: List[cst.CSTNode] = []             # nested scopes, analysed separately
        self.started = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and self.started:
            self.inner.append(node)
            return False
        self.started = True
        self.order += 1
        self.pos[id(node)] = (self.order, self.order)
        if isinstance(node, cst.SimpleStatementLine):
            stmt_code = code_of(node)
            if TL._calls_method(node, "backward"):
                self.backwards.append((node, list(self.stack)))
            if _CLEARS.search(stmt_code):
                self.clears.append((node, list(self.stack)))
        self.stack.append(node)
        return True

    def on_leave(self, node: cst.CSTNode) -> None:
        if self.stack and self.stack[-1] is node:
            self.stack.pop()
            self.pos[id(node)] = (self.pos[id(node)][0], self.order)


def _loop_of(enclosing: List[cst.CSTNode]) -> Optional[cst.CSTNode]:
    """The training loop of a statement: the innermost loop around it that steps (nanoGPT's micro steps: the loop
    around the loop of backward()s), else the innermost loop."""
    loops = [n for n in enclosing if isinstance(n, _LOOPS)]
    stepping = [n for n in loops if TL._calls_method(n, "step")]
    return stepping[-1] if stepping else loops[-1] if loops else None


def _reads_earlier_gradients(loop: cst.CSTNode) -> bool:
    """The loop's first step adds to what .grad held before it: its body clears nothing, or clears only in
    or after the statement of its first backward()."""
    body = list(loop.body.body) if isinstance(loop.body, cst.IndentedBlock) else []
    first_back = next((i for i, st in enumerate(body) if TL._calls_method(st, "backward")), None)
    first_clear = next((i for i, st in enumerate(body) if _CLEARS.search(code_of(st))), None)
    return first_back is not None and (first_clear is None or first_clear >= first_back)


def _clears_nothing(loop: cst.CSTNode) -> bool:
    return not _CLEARS.search(code_of(loop))


def _optimizer_clear(stmt: cst.CSTNode, optimizers: Set[str]) -> bool:
    """`opt.zero_grad()` of one of the loop's optimizers: the converted program keeps it (it empties the sum)."""
    return bool(optimizers) and set(TL._calls_method(stmt, "zero_grad")) <= optimizers \
        and not re.search(r"\.grad\s*=\s*None\b|\.grad(\.data)?\.zero_\(", code_of(stmt))


def _scope_problems(scope_node: cst.CSTNode, lines: Dict[int, int], out: Dict[int, str],
                    kept: Dict[int, cst.CSTNode], held: Dict[int, str]) -> List[cst.CSTNode]:
    sc = _Scope()
    TL.walk(scope_node, sc)
    step_loops: Dict[int, cst.CSTNode] = {}
    for st, enclosing in sc.backwards:
        lp = _loop_of(enclosing)
        if lp is not None:
            step_loops[id(lp)] = lp
    for loop in step_loops.values():
        if not _reads_earlier_gradients(loop):
            continue
        first, last = sc.pos[id(loop)]
        uncleared = _clears_nothing(loop)
        # a loop whose sum another method's step() applies (held_steps.py) steps that optimizer
        optimizers = set(TL._calls_method(loop, "step")) | ({held[id(loop)]} if id(loop) in held else set())
        why = None
        for st, enclosing in sc.backwards:
            s_first, _ = sc.pos[id(st)]
            if first <= s_first <= last:
                continue            # the loop's own
            other = _loop_of(enclosing)
            if uncleared and other is not None and _clears_nothing(other) \
                    and set(TL._calls_method(other, "step")) == optimizers:
                continue            # both sum into the optimizer's held gradients
            anchor = other or st
            a_last = sc.pos[id(anchor)][1]
            around = {id(n) for n in [scope_node] + _enclosing_of(sc, loop)}
            if s_first < first and any(a_last < sc.pos[id(c)][0] < first and id(cenc[-1]) in around
                                       for c, cenc in sc.clears if cenc):
                continue            # cleared in between, in a block around the loop
            why = (f"the backward() at line {lines.get(id(st), '?')} leaves gradients in .grad that this loop's "
                   "first step adds to (it clears them only after its first backward(), or never); msmigrate "
                   "carries no gradient from another step into this one: call optimizer.zero_grad() before the "
                   "loop (as the program computes now), or sum the gradients by hand")
            break
        emptying: List[cst.CSTNode] = []
        if why is None and uncleared:
            for c, cenc in sc.clears:
                if _loop_of(cenc) is not None and id(_loop_of(cenc)) in step_loops:
                    continue        # a clear inside another training loop: judged as that loop's backward()
                if not _optimizer_clear(c, optimizers):
                    why = (f"this loop clears no gradients, so each step applies their sum since the optimizer's "
                           f"last zero_grad(), which the converted program holds per optimizer; line "
                           f"{lines.get(id(c), '?')} clears them another way ({code_of(c).strip()[:60]}), which "
                           "would not empty that sum: write optimizer.zero_grad() there")
                    break
                emptying.append(c)
        if why is not None:
            out[id(loop)] = why
        else:
            kept.update((id(c), c) for c in emptying)
    return sc.inner


def _enclosing_of(sc: _Scope, loop: cst.CSTNode) -> List[cst.CSTNode]:
    """The nodes around `loop` in its scope (its blocks' owners), from the recorded statements' stacks."""
    first, last = sc.pos[id(loop)]
    for st, enclosing in sc.backwards:
        if first <= sc.pos[id(st)][0] <= last:
            idx = next(i for i, n in enumerate(enclosing) if n is loop)
            return enclosing[:idx + 1]
    return []


def leftover_gradients(module: cst.Module, lines: Dict[int, int], held: Optional[Dict[int, str]] = None
                       ) -> Tuple[Dict[int, str], Set[int]]:
    """(id(loop as written) -> why its train step would miss gradients another step left (a raising TODO),
    ids of the `optimizer.zero_grad()` statements that empty the sum of a loop clearing nothing: kept in the
    converted program, where zero_grad() outside a train step otherwise goes)."""
    out: Dict[int, str] = {}
    kept: Dict[int, cst.CSTNode] = {}
    if ".backward(" not in module.code:
        return out, set()
    pending: List[cst.CSTNode] = [module]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.ClassDef):
            sc = _Scope()
            sc.started = True
            TL.walk(node.body, sc)
            pending.extend(sc.inner)
            continue
        pending.extend(_scope_problems(node.body if isinstance(node, cst.FunctionDef) else node, lines, out, kept,
                                       held or {}))
    return out, set(kept)
