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
(a loop that clears at the top of its iterations, a straight-line step) may have left gradients (one that
comes after the loop counts where a loop around both, or another call of the function, runs it first: a
backward() further down the module body, outside any loop around the loop, never does):

    for x in warmup: opt.zero_grad(); loss(x).backward(); opt.step()   # leaves the last gradient
    for x in data: loss(x).backward(); opt.step()     # torch's first step applies warm-up's last + its own

Such a loop's backward() becomes a raising TODO naming the line that left the gradients, unless a
clearing statement stands between them in a block around the loop (`opt.zero_grad()` before it),
or both loops clear nothing and step the same optimizer (the held sum). A loop clearing nothing
whose scope clears gradients other than by its optimizer's zero_grad() or a module's (`model.zero_grad()`
becomes `_ms_compat.clear_module_grads(model, where)`: the held sums' entries of that module's parameters
dropped, as torch clears only their .grad) is a TODO too (`p.grad = None`): that would not empty the held sum.
"""
from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Set, Tuple

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
    if first_back is not None and _clears_before_first_step(body):
        return False        # an input gradient's backward() first (an attack), then `opt.zero_grad(); ...; opt.step()`
    return first_back is not None and (first_clear is None or first_clear >= first_back)


def _clears_before_first_step(body: List[cst.CSTNode]) -> bool:
    """A statement `opt.zero_grad()` of the body comes before its first statement stepping anything, which steps
    `opt`: what the backward()s before the clear added is emptied before any step applies it (train_loop's
    _split_cleared makes those of the same block a group of their own; a nested loop's are its own)."""
    first_step = next((i for i, st in enumerate(body) if TL._calls_method(st, "step")), None)
    if first_step is None:
        return False
    stepped = set(TL._calls_method(body[first_step], "step"))
    for st in body[:first_step]:
        cleared = TL._method(TL._stmt_call(st), "zero_grad")
        if cleared is not None and code_of(cleared).strip() in stepped:
            return True
    return False


def _ends_cleared(loop: cst.CSTNode) -> bool:
    """Every iteration of the loop ends with its gradients cleared: a statement of its body's top level that
    clears (`optimizer.zero_grad()` after the step, PaLM's train.py) follows the last one holding a backward(),
    and nothing in the loop leaves an iteration early (break, continue, return, raise): after the loop, .grad
    holds nothing its backward()s added (the gradients a following loop's first step would add to)."""
    body = list(loop.body.body) if isinstance(loop.body, cst.IndentedBlock) else []
    if getattr(loop, "orelse", None) is not None or re.search(r"\b(break|continue|return|raise|yield)\b",
                                                              code_of(loop)):
        return False
    last_back = max((i for i, st in enumerate(body) if TL._calls_method(st, "backward")), default=None)
    return last_back is not None and any(isinstance(st, cst.SimpleStatementLine) and _CLEARS.search(code_of(st))
                                         for st in body[last_back + 1:])


def _clears_nothing(loop: cst.CSTNode) -> bool:
    return not _CLEARS.search(code_of(loop))


def module_clear(stmt: cst.CSTNode) -> Optional[str]:
    """The receiver of `model.zero_grad()` alone in its statement (`set_to_none=` or not), a name or an attribute
    or subscript chain: torch clears the .grad of that module's parameters, `_ms_compat.clear_module_grads` drops
    their entries of the held sums (it raises where the receiver turns out to be no module)."""
    call = TL._stmt_call(stmt)
    receiver = TL._method(call, "zero_grad") if call is not None else None
    if receiver is None or not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 \
            or not isinstance(stmt.body[0], cst.Expr) or len(call.args) > 1 \
            or any(a.keyword is not None and a.keyword.value != "set_to_none" or a.star for a in call.args):
        return None
    node = receiver
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return code_of(receiver).strip() if isinstance(node, cst.Name) else None


def _optimizer_clear(stmt: cst.CSTNode, optimizers: Set[str]) -> bool:
    """`opt.zero_grad()` of one of the loop's optimizers: the converted program keeps it (it empties the sum)."""
    return bool(optimizers) and set(TL._calls_method(stmt, "zero_grad")) <= optimizers \
        and not re.search(r"\.grad\s*=\s*None\b|\.grad(\.data)?\.zero_\(", code_of(stmt))


def _fresh_step_clears(sc: _Scope, scope_node: cst.CSTNode, checks: Dict[int, Tuple[str, str]]) -> None:
    """`model.zero_grad()` in a training loop (or a step function's body) stepping one optimizer that it clears
    no other way: the converted step applies fresh gradients, which is torch's sum only where the module owns
    every parameter of the optimizer; id -> (module, optimizer) for `_ms_compat.clears_all_gradients`."""
    for c, cenc in sc.clears:
        receiver = module_clear(c)
        if receiver is not None and TL.OPTIMIZER_NAME.search(receiver.rsplit(".", 1)[-1]) \
                and not TL.SCHEDULER_NAME.search(receiver):
            continue        # another optimizer's zero_grad() (trades_loss's `optimizer`): no module's clear
        unit = _loop_of(cenc) or scope_node
        stepped = set(TL._calls_method(unit, "step"))
        if receiver is None or len(stepped) != 1 or not TL._calls_method(unit, "backward") \
                or _optimizer_clear(c, stepped) or any(_optimizer_clear(o, stepped) for o, oenc in sc.clears
                                                         if (_loop_of(oenc) or scope_node) is unit):
            continue
        optimizer = next(iter(stepped))
        if not TL.OPTIMIZER_NAME.search(optimizer.rsplit(".", 1)[-1]) or TL.SCHEDULER_NAME.search(optimizer):
            continue        # a scheduler's or wrapper's step(): not known to be the optimizer
        checks[id(c)] = (receiver, optimizer)


def _scope_problems(scope_node: cst.CSTNode, lines: Dict[int, int], out: Dict[int, str],
                    kept: Dict[int, cst.CSTNode], held: Dict[int, str], modules: Dict[int, str],
                    checks: Optional[Dict[int, Tuple[str, str]]] = None) -> List[cst.CSTNode]:
    sc = _Scope()
    TL.walk(scope_node, sc)
    if checks is not None:
        _fresh_step_clears(sc, scope_node, checks)
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
            if s_first > last and isinstance(scope_node, cst.Module) and not any(
                    isinstance(n, _LOOPS) and id(n) in around for n in enclosing):
                continue            # runs after the loop, once: the module body is not entered again
            if s_first < first and any(a_last < sc.pos[id(c)][0] < first and id(cenc[-1]) in around
                                       for c, cenc in sc.clears if cenc):
                continue            # cleared in between, in a block around the loop
            if other is not None and _ends_cleared(other):
                continue            # the other loop clears after its last backward() in every iteration
            why = (f"the backward() at line {lines.get(id(st), '?')} leaves gradients in .grad that this loop's "
                   "first step adds to (it clears them only after its first backward(), or never); msmigrate "
                   "carries no gradient from another step into this one: call optimizer.zero_grad() before the "
                   "loop (as the program computes now), or sum the gradients by hand")
            break
        emptying: List[cst.CSTNode] = []
        cleared: Dict[int, str] = {}
        if why is None and uncleared:
            for c, cenc in sc.clears:
                if _loop_of(cenc) is not None and id(_loop_of(cenc)) in step_loops:
                    continue        # a clear inside another training loop: judged as that loop's backward()
                if not _optimizer_clear(c, optimizers):
                    receiver = module_clear(c)
                    if receiver is not None:
                        cleared[id(c)] = receiver
                        emptying.append(c)
                        continue
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
            modules.update(cleared)
    return sc.inner


def _enclosing_of(sc: _Scope, loop: cst.CSTNode) -> List[cst.CSTNode]:
    """The nodes around `loop` in its scope (its blocks' owners), from the recorded statements' stacks."""
    first, last = sc.pos[id(loop)]
    for st, enclosing in sc.backwards:
        # (a backward() written on the loop's lines may stand outside it: after it, on its last line)
        idx = next((i for i, n in enumerate(enclosing) if n is loop), None) \
            if first <= sc.pos[id(st)][0] <= last else None
        if idx is not None:
            return enclosing[:idx + 1]
    return []


def leftover_gradients(module: cst.Module, lines: Dict[int, int], held: Optional[Dict[int, str]] = None,
                       modules: Optional[Dict[int, str]] = None, checks: Optional[Dict[int, Tuple[str, str]]] = None
                       ) -> Tuple[Dict[int, str], Set[int]]:
    """(id(loop as written) -> why its train step would miss gradients another step left (a raising TODO),
    ids of the `optimizer.zero_grad()` statements that empty the sum of a loop clearing nothing: kept in the
    converted program, where zero_grad() outside a train step otherwise goes). `modules` receives, for the kept
    `model.zero_grad()` statements, id -> the module's code (`_ms_compat.clear_module_grads`); `checks`, for the
    `model.zero_grad()` of a step applying fresh gradients, id -> (module, optimizer) (clears_all_gradients)."""
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
                                       held or {}, modules if modules is not None else {}, checks))
    return out, set(kept)


# ------------------------------------------------------------------ step functions clearing nothing
# A per-batch step function (`def train_step(x, y): loss.backward(); opt.step()`) whose body clears nothing
# applies, in torch, every gradient since the last clear: its callers' zero_grad() (in some callers, or in
# none). Converted, it sums through `_ms_compat.grad_sum` as a loop clearing nothing does, and the module's
# `opt.zero_grad()` calls are kept (they empty the sum), `model.zero_grad()` empties the entries of that module's
# parameters (clear_module_grads). What would not empty the sum makes it a raising TODO:
# another clear (`p.grad = None`, `model.zero_grad()` inside an expression), a clear in another module calling it (its zero_grad()
# goes there), or a backward() elsewhere in the module whose step applies fresh gradients (torch's .grad keeps
# them for this function's first step).


class _Functions(cst.CSTVisitor):
    def __init__(self) -> None:
        self.functions: List[cst.FunctionDef] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node)


def _top_backward(fn: cst.FunctionDef) -> bool:
    """backward() at the top level of the body: the shape train_loop.rewrite_function converts."""
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ()
    return any(TL._method(TL._stmt_call(st), "backward") is not None for st in body)


def _strip_self(code: str) -> str:
    return code[5:] if code.startswith("self.") else code


def _summing_functions(module: cst.Module) -> List[cst.FunctionDef]:
    """Functions whose body steps an optimizer after a backward() and clears no gradients: a step function (a
    top-level backward()) or a per-epoch function whose loops clear none (a closure stepped by
    `opt.step(closure)` has no step() of its own: step_closure.py's)."""
    v = _Functions()
    TL.walk(module, v)
    return [fn for fn in v.functions if TL._calls_method(fn.body, "backward") and TL._calls_method(fn.body, "step")
            and not _CLEARS.search(code_of(fn.body))]


def _step_loops(fn: cst.FunctionDef) -> List[cst.CSTNode]:
    """The training loops of a per-epoch function (none for a step function's top-level backward())."""
    sc = _Scope()
    TL.walk(fn.body, sc)
    loops = [_loop_of(enclosing) for _, enclosing in sc.backwards]
    return list({id(lp): lp for lp in loops if lp is not None}.values())


def _clears_optimizer(stmt: cst.CSTNode, stepped: Set[str]) -> bool:
    """`opt.zero_grad()` alone in its statement, on the optimizer the function steps (by name) or on a name
    that says optimizer: kept, it empties the held sum (`_TorchOptimizer.zero_grad`)."""
    receivers = TL._calls_method(stmt, "zero_grad")
    if len(receivers) != 1 or TL._stmt_call(stmt) is None or re.search(r"\.grad\b", code_of(stmt)):
        return False
    r = _strip_self(receivers[0])
    return r in stepped or (bool(TL.OPTIMIZER_NAME.search(r.rsplit(".", 1)[-1]))
                            and not TL.SCHEDULER_NAME.search(r.rsplit(".", 1)[-1]))


def summing_step_functions(module: cst.Module, lines: Dict[int, int], clearing_callers: Callable[[str], List[str]],
                           modules: Optional[Dict[int, str]] = None
                           ) -> Tuple[Dict[int, Optional[str]], Dict[int, str], Set[int]]:
    """(id(step function as written) -> None where its step sums the gradients since the optimizer's last
    zero_grad() (`_ms_compat.grad_sum`), or why it is a raising TODO; id(loop of a per-epoch function clearing
    none) -> why it is a raising TODO; ids of the `opt.zero_grad()` statements kept to empty the sum).
    clearing_callers(name): other project modules that call `name` and clear gradients. `modules` receives, for
    the kept `model.zero_grad()` statements, id -> the module's code (`_ms_compat.clear_module_grads`)."""
    out: Dict[int, Optional[str]] = {}
    loops_out: Dict[int, str] = {}
    kept: Set[int] = set()
    functions = _summing_functions(module) if ".backward(" in module.code else []
    if not functions:
        return out, loops_out, kept
    inside = {id(f) for f in functions}
    sc = _Everything(inside)
    TL.walk(module, sc)
    for fn in functions:
        stepped = {_strip_self(r) for r in TL._calls_method(fn.body, "step")}
        why = None
        for st, enclosing in sc.backwards:
            scope = next((n for n in reversed(enclosing) if isinstance(n, (cst.FunctionDef,) + _LOOPS)), None)
            if scope is None or _CLEARS.search(code_of(scope)):
                why = (f"the backward() at line {lines.get(id(st), '?')} leaves gradients in .grad that this "
                       "function's step adds to (it clears none): msmigrate carries no gradient from that step "
                       "into this one; call optimizer.zero_grad() in this function (as the program computes now), "
                       "or sum the gradients by hand")
                break
        cleared: Dict[int, str] = {}
        for c, _ in sc.clears if why is None else ():
            if not _clears_optimizer(c, stepped) and module_clear(c) is not None:
                cleared[id(c)] = module_clear(c)
            elif not _clears_optimizer(c, stepped):
                why = (f"this function clears no gradients, so each step applies their sum since the optimizer's "
                       f"last zero_grad(), which the converted program holds per optimizer; line "
                       f"{lines.get(id(c), '?')} clears them another way ({code_of(c).strip()[:60]}), which "
                       "would not empty that sum: write optimizer.zero_grad() there")
                break
        others = clearing_callers(fn.name.value) if why is None else []
        if others:
            why = (f"this function clears no gradients and {others[0]} calls it and clears them: msmigrate "
                   "cannot carry that module's zero_grad() into the sum this step applies; call "
                   "optimizer.zero_grad() in this function, or sum the gradients by hand")
        loops = _step_loops(fn)
        if loops:       # a per-epoch function: its loops sum (train_loop._uncleared_steps) or raise
            loops_out.update((id(lp), why.replace("this function's step", "this loop's first step"))
                             for lp in loops if why is not None)
        elif _top_backward(fn):
            out[id(fn)] = why
        if why is None:
            kept |= {id(c) for c, _ in sc.clears}
            if modules is not None:
                modules.update(cleared)
    return out, loops_out, kept


class _Everything(_Scope):
    """The module's backward() calls and clearing statements outside the summing step functions (a summing
    function clears nothing), nested scopes included, each with its enclosing nodes."""

    def __init__(self, summing: Set[int]) -> None:
        super().__init__()
        self.summing = summing

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.FunctionDef) and id(node) in self.summing:
            return False
        self.started = False        # into functions and classes: the whole module is one scope here
        return super().on_visit(node)
