"""A loop body's `if` whose branch leaves the iteration and whose `else` holds the iteration's training work, the
`else` written as the statements that follow the `if` (before conversion).

rosinality/glow-pytorch's train.py initializes its ActNorm layers on the first batch:

    for i in pbar:
        image = ...
        if i == 0:
            with torch.no_grad():
                log_p, logdet, _ = model.module(image + noise)
                continue
        else:
            log_p, logdet, _ = model(image + noise)
        loss, ... = calc_loss(log_p, logdet, ...)
        model.zero_grad(); loss.backward(); optimizer.step()

The loss is computed from the `if` statement as a whole, which the train step cannot hold (its first branch leaves
the iteration), so the backward() was left unconverted (a raising TODO). Where the `if`'s branch ends in a jump out
of the iteration (`continue`, `break`, `return`, `raise`; or a `with` block ending in `continue`, `break` or
`return`, which no context manager can undo), the code after the `if` runs only when the test is false: the
`else` part is the same as its statements written after the `if`, dedented:

        if i == 0:
            with torch.no_grad():
                log_p, logdet, _ = model.module(image + noise)
                continue
        log_p, logdet, _ = model(image + noise)

(an `elif` becomes an `if` there). The loop body then holds the forward, the loss and the update as plain
statements, which the training-loop conversion makes a train step of. Only loops of a source that calls
backward(). The statements keep their nodes (their lines: `lines`, id -> original line, gets the new `if`s and
their ancestors)."""
from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from .callsite import code_of

_JUMPS = (cst.Continue, cst.Break, cst.Return, cst.Raise)


def might_exit_branch(source: str) -> bool:
    return ".backward(" in source and ("continue" in source or "break" in source or "return" in source
                                        or "raise" in source)


def _last_simple(block) -> Optional[cst.BaseSmallStatement]:
    if not isinstance(block, cst.IndentedBlock) or not block.body:
        return None
    last = block.body[-1]
    if isinstance(last, cst.SimpleStatementLine) and last.body:
        return last.body[-1]
    if isinstance(last, cst.With):      # `with torch.no_grad(): ...; continue`: no context manager undoes a jump
        inner = _last_simple(last.body)
        return inner if isinstance(inner, (cst.Continue, cst.Break, cst.Return)) else None
    return None


def _leaves(block) -> bool:
    return isinstance(_last_simple(block), _JUMPS)


class _Hoist(cst.CSTTransformer):
    def __init__(self, lines: Dict[int, int]) -> None:
        self.lines = lines
        self.changed = False

    def _body(self, updated):
        block = updated.body
        if not isinstance(block, cst.IndentedBlock) or ".backward(" not in code_of(block):
            return updated
        out: List[cst.BaseStatement] = []
        hoisted = False
        for st in block.body:
            while isinstance(st, cst.If) and st.orelse is not None and _leaves(st.body):
                alone = st.with_changes(orelse=None)
                if id(st) in self.lines:
                    self.lines.setdefault(id(alone), self.lines[id(st)])
                out.append(alone)
                hoisted = True
                rest = st.orelse
                if isinstance(rest, cst.If):    # `elif`: an `if` of its own after it (itself maybe leaving too)
                    st = rest
                    continue
                out.extend(rest.body.body)
                st = None
                break
            if st is not None:
                out.append(st)
        if not hoisted:
            return updated
        self.changed = True
        return updated.with_changes(body=block.with_changes(body=out))

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        if result is not original and isinstance(result, cst.CSTNode) and id(original) in self.lines:
            self.lines.setdefault(id(result), self.lines[id(original)])     # an ancestor of a rewritten `if`
        return result

    def leave_For(self, original, updated):
        return self._body(updated)

    def leave_While(self, original, updated):
        return self._body(updated)


def hoist_exit_else(module: cst.Module, lines: Dict[int, int]) -> Optional[cst.Module]:
    """The module with such `else`s written after their `if` in loops that hold a backward() (lines extended in
    place), or None where there is none."""
    if ".backward(" not in code_of(module):
        return None
    v = _Hoist(lines)
    new = module.visit(v)
    return new if v.changed else None
