"""A train step chosen by an `if` on a value fixed for the iteration: one train step per branch.

pytorch/examples word_language_model picks its network's call by a command-line flag:

    if args.model == 'Transformer':
        output = model(data)
    else:
        hidden = repackage_hidden(hidden)        # data for the step: the state carried across steps, detached
        output, hidden = model(data, hidden)
    loss = criterion(output, targets); loss.backward(); ...; optimizer.step()

One train step cannot hold that `if` (a branch makes data, `hidden` exists in one branch only), and a
step that left it outside would take the network's output as a constant. When the test calls nothing
and reads nothing that the statements before it change, it has the same value at the top of the
loop body, so the body from its start to the end of the step is written once per branch, each with
its branch inlined, under the same test (decided at run time, as in torch):

    if args.model == 'Transformer': <statements before>; output = model(data); loss = ...; loss.backward(); ...
    else: <statements before>; hidden = repackage_hidden(hidden); output, hidden = model(data, hidden); ...

Each branch is then rewritten as a loop body of its own (train_loop.rewrite_loop): the hidden state an
input of its step and one of its outputs. The statements after the step stay after the `if`.
"""
from __future__ import annotations

import re
from typing import List, Optional, Sequence, Set

import libcst as cst

from . import train_loop as TL
from .callsite import code_of

# what belongs to the update: backward(), step(), clipping, .grad reads (converted: tensor_grad)
_STEP_PART = re.compile(r"\.(backward|step)\(|clip_grad|tensor_grad|\.grad\b")


def _changed_objects(stmts: Sequence[cst.CSTNode]) -> Set[str]:
    """Names that statements bind, call (`model.train()` may change `model.training`) or assign into
    (`args.model = ...`, `cfg[k] = ...`)."""
    found: Set[str] = set()
    for st in stmts:
        found |= TL.assigns(st) | set(TL.call_roots(st))

    class _Targets(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and TL._root(node.target):
                found.add(TL._root(node.target))
            return True

    for st in stmts:
        TL.walk(st, _Targets())
    return found


def fixed_test(test: cst.BaseExpression, before: Sequence[cst.CSTNode]) -> bool:
    """The test calls nothing and reads nothing the statements `before` it change: evaluated at the
    top of the loop body it has the value it has where it stands."""
    calls = TL._CallsAndOps()
    TL.walk(test, calls)
    return not calls.calls and not set(TL.reads(test)) & _changed_objects(before)


def network_choice(block: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The block (a loop, or a branch of a split made before) split on the first `if` before its first
    backward() whose test is fixed (fixed_test), that holds no part of the update and binds a name the
    statements after it up to the update read: `[if test: <before> <if's body> <to the update>
    else: <before> <else's body> <to the update>] + <the rest>`. An `elif` stays an `if` in the else
    branch (split again there). None: no such `if`."""
    if not isinstance(block.body, cst.IndentedBlock):
        return None
    body = list(block.body.body)
    backs = [j for j, st in enumerate(body) if TL._method(TL._stmt_call(st), "backward") is not None]
    if not backs:
        return None
    end = 1 + max(j for j, st in enumerate(body) if j in backs or _STEP_PART.search(code_of(st)))
    for k in range(backs[0]):
        st = body[k]
        if not isinstance(st, cst.If) or not isinstance(st.body, cst.IndentedBlock) or \
                _STEP_PART.search(code_of(st)):
            continue
        later: Set[str] = set()
        for x in body[k + 1:end]:
            later |= set(TL.reads(x))
        if not TL.assigns(st) & later or not fixed_test(st.test, body[:k]):
            continue
        other: List[cst.BaseStatement]
        if isinstance(st.orelse, cst.Else):
            other = list(st.orelse.body.body)
        elif isinstance(st.orelse, cst.If):
            other = [st.orelse.with_changes(leading_lines=())]
        else:
            other = []
        before, after = list(body[:k]), list(body[k + 1:end])
        split = st.with_changes(
            leading_lines=st.leading_lines if k == 0 else (),
            body=st.body.with_changes(body=before + list(st.body.body) + after),
            orelse=cst.Else(body=cst.IndentedBlock(body=before + other + after)))
        return block.with_changes(body=block.body.with_changes(body=[split] + body[end:]))
    return None


def _has_backward(stmts: Sequence[cst.CSTNode]) -> bool:
    return any(TL._method(TL._stmt_call(st), "backward") is not None for st in stmts)


def branch_updates(st: cst.CSTNode) -> bool:
    """An `if`/`else` whose two branches each hold a backward() at their top (DINO's fp16 choice)."""
    return (isinstance(st, cst.If) and isinstance(st.body, cst.IndentedBlock) and isinstance(st.orelse, cst.Else)
            and isinstance(st.orelse.body, cst.IndentedBlock)
            and _has_backward(st.body.body) and _has_backward(st.orelse.body.body))


def update_branches(block: cst.CSTNode) -> Optional[cst.CSTNode]:
    """DINO's update chosen by a fixed flag after the loss is computed once:

        loss = crit(model(x), y); ...
        if fp16_scaler is None: loss.backward(); <clip>; optimizer.step()
        else: fp16_scaler.scale(loss).backward(); ...; fp16_scaler.step(optimizer); fp16_scaler.update()

    Each branch's step would take `loss` as a constant (computed outside it). When the test calls
    nothing and reads nothing the statements before it change (fixed_test), both branches hold a
    backward() at their top (branch_updates) and no update precedes the `if`, the statements before it
    are copied into both branches: `[if test: <before> <if's body> else: <before> <else's body>] + <the
    rest>`; each branch is then rewritten as a loop body (every one must get a sound step, or the loop
    stays as it was). None: not this shape."""
    if not isinstance(block.body, cst.IndentedBlock):
        return None
    body = list(block.body.body)
    for k, st in enumerate(body):
        if _has_backward([st]) or TL._method(TL._stmt_call(st), "step") is not None:
            return None     # an update before any such `if`
        if not branch_updates(st):
            continue
        if not fixed_test(st.test, body[:k]):
            return None
        rest = body[k + 1:]
        if any(_STEP_PART.search(code_of(x)) for x in rest):
            return None     # another update, or a .grad read, after the chosen ones
        before = list(body[:k])
        split = st.with_changes(
            leading_lines=st.leading_lines if k == 0 else (),
            body=st.body.with_changes(body=before + list(st.body.body)),
            orelse=st.orelse.with_changes(body=st.orelse.body.with_changes(body=before + list(st.orelse.body.body))))
        return block.with_changes(body=block.body.with_changes(body=[split] + rest))
    return None


def declaration(st: cst.CSTNode) -> bool:
    """A docstring or a `global`/`nonlocal` statement: nothing to run twice when statements are copied into both
    branches of a split."""
    if not isinstance(st, cst.SimpleStatementLine):
        return False
    return all(isinstance(x, (cst.Global, cst.Nonlocal)) or (isinstance(x, cst.Expr) and isinstance(
        x.value, (cst.SimpleString, cst.ConcatenatedString))) for x in st.body)


def guarded_update(block: cst.CSTNode, deferred: Set[int]) -> Optional[cst.CSTNode]:
    """karpathy/pytorch-made's update taken only in training, after the loss is computed for both splits:

        xbhat = model(x); loss = crit(xbhat, x); losses.append(loss.item())
        if split == 'train': opt.zero_grad(); loss.backward(); opt.step()

    A step of the `if` alone would take `loss` as a constant (computed outside it). `deferred`: the `if`s
    (train_loop.step_reading_outer_network_values's shape) left for this split. When the test is fixed
    (fixed_test), no update precedes the `if` and none follows, the statements before it are copied into
    both branches: `[if test: <before> <if's body> else: <before> <else's body>] + <the rest>`; the first
    branch is then a loop body with its step, the other holds no update. None: not this shape."""
    if not isinstance(block.body, cst.IndentedBlock):
        return None
    body = list(block.body.body)
    for k, st in enumerate(body):
        if id(st) not in deferred:
            if _STEP_PART.search(code_of(st)):
                return None     # an update before the `if`
            continue
        if not k or isinstance(st.orelse, cst.If) or not fixed_test(st.test, body[:k]):
            return None
        other = list(st.orelse.body.body) if isinstance(st.orelse, cst.Else) else []
        rest = body[k + 1:]
        if any(_STEP_PART.search(code_of(x)) for x in other + rest):
            return None
        before = list(body[:k])
        split = st.with_changes(
            leading_lines=body[0].leading_lines,
            body=st.body.with_changes(body=[before[0].with_changes(leading_lines=())] + before[1:]
                                      + list(st.body.body)),
            orelse=cst.Else(body=cst.IndentedBlock(body=before + other)))
        return block.with_changes(body=block.body.with_changes(body=[split] + rest))
    return None
