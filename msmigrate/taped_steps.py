"""A backward() whose loss no train step can hold becomes a taped backward instead of a TODO.

The train-step rewrite (train_loop.py) moves the statements from the parameters to the loss into a function
that mindspore.value_and_grad differentiates. Where the loss was built elsewhere (REINFORCE's log-probabilities
saved during the rollout and summed in `finish_episode()`, a loss from a loop or a host value), that function
would see a constant (train_loop._unsound says why). Such a group is written as it stands, with its backward()
and step() calls replaced:

    loss.backward()      ->  _ms_compat.tape_backward(loss)
    optimizer.step()     ->  _ms_compat.tape_step(optimizer)

and the program runs in PYNATIVE mode with `_ms_compat.open_tape()` in its run header: MindSpore's PyNative
executor records every operation from there and tape_step() differentiates the losses kept since the last step
(templates/compat_parts/taped_backward.py). The forward runs once, as in torch; a compiled graph records
nothing, so GRAPH mode raises MigrationError at the backward.

Only plain groups are taped: one optimizer (or several stepped together) whose gradients nothing reads or
changes between the backward() and the step (no clipping, GradScaler, wrapper method, hand-written update or
`.grad` read), and no zero_grad() after the first backward() (it would have to drop losses already kept)."""
from __future__ import annotations

from typing import List, Sequence

import libcst as cst

from .callsite import code_of

COMPAT = "_ms_compat"
NOTE = ("the loss was built before this train step's statements (a rollout, another function, a loop): "
        "PyNative's record of the operations since the last step is differentiated (_ms_compat.tape_step); "
        "PYNATIVE mode only")
NO_GRAD_NOTE = ("mindspore._no_grad(): this file's backward() is differentiated from PyNative's record of the "
                "operations, which must not hold what runs here (weights written in place)")
MODE_WHY = ("PYNATIVE_MODE: a backward() differentiates a loss built before its train step (a rollout, "
            "another function), from PyNative's record of the operations (_ms_compat.open_tape); a compiled "
            "graph records none")


def tapeable(group, body: Sequence[cst.CSTNode], zero_grads: Sequence[int], distributed: bool) -> bool:
    """The group (train_loop.StepGroup) steps plain optimizers on the gradients of its backward()s alone."""
    if (not group.optimizer or group.manual is not None or group.leaves or group.closure or group.wrapper_call
            or group.grad_method or group.scaler or group.clips or group.held or group.outer or group.edited
            or group.accumulate or group.tensor_updates or distributed):
        return False
    first = group.backwards[0]
    if any(first < z < group.step for z in zero_grads):
        return False
    return all(isinstance(body[i], cst.SimpleStatementLine) and len(body[i].body) == 1
               for i in [*group.backwards, group.step, *(c for c, _ in group.co_steps)])


def _with_call(stmt: cst.SimpleStatementLine, code: str) -> cst.SimpleStatementLine:
    """The statement with its one expression replaced (its comments and line marker kept)."""
    return stmt.with_changes(body=[cst.Expr(cst.parse_expression(code))])


def taped_statements(group, body: List[cst.CSTNode], step: bool = True) -> List[int]:
    """Rewrites the group's backward() and (step: its own) step() statements in `body` in place; returns the
    indices of the co-steps folded into the first step (to be dropped)."""
    for b, loss in zip(group.backwards, group.losses):
        body[b] = _with_call(body[b], f"{COMPAT}.tape_backward({code_of(loss).strip()})")
    if not step:
        return []
    optimizers = [group.optimizer] + [o for _, o in group.co_steps]
    body[group.step] = _with_call(body[group.step], f"{COMPAT}.tape_step({', '.join(optimizers)})")
    return [c for c, _ in group.co_steps]


def taped_step_in(block: cst.CSTNode, optimizer: str) -> cst.CSTNode:
    """The enclosing function or loop of a loop of taped backward()s (train_loop.taped_outer_step) with its
    `optimizer.step()` written `_ms_compat.tape_step(optimizer)`."""
    body = list(block.body.body)
    for k, st in enumerate(body):
        if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Expr) \
                and code_of(st.body[0].value).strip() == f"{optimizer}.step()":
            body[k] = _with_call(st, f"{COMPAT}.tape_step({optimizer})")
            return block.with_changes(body=block.body.with_changes(body=body))
    # a function written once per branch of a setting (loop_unswitch.py): the step of each branch that has one
    changed = False
    for k, st in enumerate(body):
        if isinstance(st, cst.If):
            new = _taped_branches(st, optimizer)
            changed |= new is not st
            body[k] = new
    return block.with_changes(body=block.body.with_changes(body=body)) if changed else block


def _taped_branches(st: cst.If, optimizer: str) -> cst.If:
    body = taped_step_in(st, optimizer)
    orelse = st.orelse
    if isinstance(orelse, cst.Else):
        orelse = taped_step_in(orelse, optimizer)
    elif isinstance(orelse, cst.If):
        orelse = _taped_branches(orelse, optimizer)
    return st.with_changes(body=body.body, orelse=orelse) if body is not st or orelse is not st.orelse else st
