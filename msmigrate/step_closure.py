"""`optimizer.step(closure)`: an optimizer that evaluates the loss itself (torch.optim.LBFGS; SGD, Adam
and the others accept a closure too) calls the closure, which clears the gradients, computes the loss,
calls backward() and returns the loss. MindSpore keeps no .grad, so the converted closure hands the
gradients back with the loss (the optimizers' step(closure) in templates/compat_parts/optim.py and
optim_lbfgs.py take that pair):

    def closure():                           def closure():
        optimizer.zero_grad()                    def forward_fn():
        out = model(x)                               out = model(x)
        loss = crit(out, y)                          loss = crit(out, y)
        print(loss.item())          ->               return loss
        loss.backward()                          grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)
        return loss                              def grad_step(): ...       (compiled in GRAPH mode)
    optimizer.step(closure)                      loss, grads = grad_step()
                                                 print(loss.item())
                                                 return loss, grads
                                             optimizer.step(closure)

The body is rewritten by train_loop.rewrite_loop (what the loss depends on goes into forward_fn, the
statements that only read it, prints and appends, stay after the step, once per evaluation as in
torch). Only a closure whose shape proves this is rewritten; otherwise its backward() becomes a TODO
that raises MigrationError naming the line (never a closure returning a loss without gradients):
- it is a `def` taking no arguments, and the statements after it in its block use it only as the
  argument of `OPT.step(...)` (a closure also called directly would now return a pair);
- `OPT.zero_grad()` comes before its backward() (without it torch adds up the gradients of every
  evaluation, which the converted closure does not);
- it ends with its only `return VALUE`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set

import libcst as cst

from . import train_loop as TL
from .callsite import code_of
from .visitor_bases import ScopeLocalVisitor


@dataclass
class SteppedClosure:
    """A `def` of a block that a later statement of the block passes to OPTIMIZER.step()."""
    optimizer: str
    refusal: Optional[str] = None     # why the closure cannot be converted (its uses outside step())


class _StepCalls(cst.CSTVisitor):
    """`X.step(name)` / `X.step(closure=name)` calls: the receiver's code for each."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.receivers: List[str] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        arg = node.args[0] if len(node.args) == 1 else None
        if (isinstance(func, cst.Attribute) and func.attr.value == "step" and arg is not None
                and (arg.keyword is None or arg.keyword.value == "closure")
                and isinstance(arg.value, cst.Name) and arg.value.value == self.name):
            self.receivers.append(code_of(func.value).strip())


class _SteppedNames(cst.CSTVisitor):
    """Every name passed as `X.step(name)` / `X.step(closure=name)` anywhere in the module."""

    def __init__(self) -> None:
        self.names: Set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        arg = node.args[0] if len(node.args) == 1 else None
        if (isinstance(func, cst.Attribute) and func.attr.value == "step" and arg is not None
                and (arg.keyword is None or arg.keyword.value == "closure") and isinstance(arg.value, cst.Name)):
            self.names.add(arg.value.value)


def _block_closures(stmts, found: Dict[int, SteppedClosure], stepped: Set[str]) -> None:
    for i, st in enumerate(stmts):
        if not isinstance(st, cst.FunctionDef) or st.name.value not in stepped:
            continue    # (a def no step() call receives: the walks over the later statements below find nothing)
        name = st.name.value
        later = []
        for other in stmts[i + 1:]:
            if name in TL.assigns(other) or isinstance(other, (cst.FunctionDef, cst.ClassDef)) \
                    and getattr(other.name, "value", None) == name:
                break       # rebound: later uses are of another value
            later.append(other)
        calls = _StepCalls(name)
        uses = 0
        for other in later:
            TL.walk(other, calls)
            uses += TL.reads(other).count(name)
        if not calls.receivers:
            continue
        refusal = None
        if len(set(calls.receivers)) > 1 or uses > len(calls.receivers):
            refusal = (f"the closure `{name}` is used besides `{calls.receivers[0]}.step({name})` (called or passed "
                       "elsewhere): converted, it returns (loss, gradients); write that use with "
                       "mindspore.value_and_grad by hand")
        found[id(st)] = SteppedClosure(calls.receivers[0], refusal)


class _Blocks(cst.CSTVisitor):
    def __init__(self, stepped: Set[str]) -> None:
        self.found: Dict[int, SteppedClosure] = {}
        self.stepped = stepped

    def visit_Module(self, node: cst.Module) -> None:
        _block_closures(node.body, self.found, self.stepped)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        _block_closures(node.body, self.found, self.stepped)


def stepped_closures(module: cst.Module) -> Dict[int, SteppedClosure]:
    """id(def node of the original tree) -> SteppedClosure for every closure passed to X.step()."""
    names = _SteppedNames()
    TL.walk(module, names)
    if not names.names:
        return {}
    blocks = _Blocks(names.names)
    TL.walk(module, blocks)
    return blocks.found


class _Returns(ScopeLocalVisitor):
    """The closure's own return statements (not those of functions defined in it)."""

    def __init__(self) -> None:
        self.count = 0

    def visit_Return(self, node) -> None:
        self.count += 1


def _final_return(body) -> Optional[cst.Return]:
    """The closure's only return, when it is its last statement and returns a value."""
    returns = _Returns()
    for st in body:
        TL.walk(st, returns)
    last = body[-1] if body else None
    if returns.count != 1 or not isinstance(last, cst.SimpleStatementLine) or len(last.body) != 1:
        return None
    ret = last.body[0]
    return ret if isinstance(ret, cst.Return) and ret.value is not None else None


def _first_backward(body) -> Optional[int]:
    for i, st in enumerate(body):
        if TL._method(TL._stmt_call(st), "backward") is not None:
            return i
    return None


def _clears_before(body, optimizer: str, end: int) -> bool:
    for st in body[:end]:
        recv = TL._method(TL._stmt_call(st), "zero_grad")
        if recv is not None and code_of(recv).strip() == optimizer:
            return True
    return False


def _body(fn: cst.FunctionDef) -> list:
    return list(fn.body.body) if isinstance(fn.body, cst.IndentedBlock) else []


def _refusal(original: cst.FunctionDef, fn: cst.FunctionDef, closure: SteppedClosure) -> Optional[str]:
    p = fn.params
    if p.params or p.posonly_params or p.kwonly_params or isinstance(p.star_arg, cst.Param) or p.star_kwarg:
        return "the closure takes arguments; torch's optimizers call closure() with none"
    if closure.refusal:
        return closure.refusal
    source = _body(original)       # the torch code: the conversion has already dropped zero_grad()
    backward = _first_backward(source)
    if backward is not None and not _clears_before(source, closure.optimizer, backward):
        return (f"no {closure.optimizer}.zero_grad() before backward() in the closure: torch adds the gradients of "
                "every evaluation to those already there, the converted closure returns each evaluation's own")
    if _final_return(_body(fn)) is None:
        return "the closure does not end with its only `return VALUE` (the loss the optimizer reads)"
    return None


def rewrite(original: cst.FunctionDef, fn: cst.FunctionDef, closure: SteppedClosure,
            info: TL.LoopInfo) -> Optional[TL.Rewrite]:
    """The closure's rewrite (its `return VALUE` now `return VALUE, grads`), or a Rewrite whose problems
    are its backward()s (TODOs that raise) when its shape is not provable; None without backward()
    (then optimizer.step(closure) raises at run time: the closure returned no gradients)."""
    body = _body(fn)
    if _first_backward(body) is None or not TL._is_optimizer(closure.optimizer, info):
        return None
    why = _refusal(original, fn, closure)
    rw = None
    if why is None:
        rw = TL.rewrite_loop(fn, info, inline_defs=True, closure_of=closure.optimizer)
        if rw is not None and rw.steps == 1 and not rw.problems:
            new_body = list(rw.loop.body.body)
            ret = _final_return(new_body)
            if ret is not None:
                value = f"{code_of(ret.value).strip()}, grads"
                new_body[-1] = new_body[-1].with_changes(body=[ret.with_changes(value=cst.parse_expression(value))])
                rw.loop = rw.loop.with_changes(body=rw.loop.body.with_changes(body=new_body))
                return rw
        if rw is not None and rw.problems:
            return rw
        why = "the closure's loss and backward() fit no train step msmigrate can write"
    backwards = [i for i, st in enumerate(body) if TL._method(TL._stmt_call(st), "backward") is not None]
    return TL.Rewrite(fn, [], set(), [], [(b, f"{why}: write it with mindspore.value_and_grad by hand")
                                          for b in backwards])
