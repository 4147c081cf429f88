"""In-place changes of the parameters' values outside a train step -> `ops.assign`.

WGAN's weight clipping, after the optimizer's step:

    for p in discriminator.parameters():
        p.data.clamp_(-clip_value, clip_value)

MindSpore's in-place tensor methods may change nothing on CPU PyNative (or have no kernel), so
the main pass leaves `p.data.clamp_(...)` a raising placeholder. In a loop over parameters each
such change is a new value assigned to the Parameter:

    for p in _ms_compat.parameters(discriminator):
        ms.ops.assign(p, ms.ops.clamp(p, -clip_value, clip_value))

Only loops whose every statement is such a change are rewritten (reading `p.grad` is a
hand-written update: manual_update.py); anything else stays the TODO."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

import libcst as cst

from . import manual_update as MU
from .held_tensor_paths import held_tensor
from .callsite import code_of

# the in-place method -> the new value of `p` from its converted arguments (positional, keyword)
_NEW_VALUE: Dict[str, Callable[[str, List[str], Dict[str, str], str], Optional[str]]] = {}


def _clamp(p: str, pos: List[str], kw: Dict[str, str], ms: str) -> Optional[str]:
    if len(pos) > 2 or set(kw) - {"min", "max"}:
        return None
    bounds = dict(zip(("min", "max"), pos))
    bounds.update(kw)
    return f"{ms}.ops.clamp({p}, {', '.join(f'{k}={v}' for k, v in bounds.items())})" if bounds else None


def _bound(which: str):
    def value(p: str, pos: List[str], kw: Dict[str, str], ms: str) -> Optional[str]:
        args = pos + list(kw.values())
        if len(args) != 1 or set(kw) - {which}:
            return None
        return f"{ms}.ops.clamp({p}, {which}={args[0]})"
    return value


def _arith(op: str):
    def value(p: str, pos: List[str], kw: Dict[str, str], ms: str) -> Optional[str]:
        return f"{p} {op} ({pos[0]})" if len(pos) == 1 and not kw else None
    return value


_NEW_VALUE.update({"Tensor.clamp_": _clamp, "Tensor.clip_": _clamp, "Tensor.clamp_min_": _bound("min"),
                   "Tensor.clamp_max_": _bound("max"), "Tensor.mul_": _arith("*"), "Tensor.div_": _arith("/"),
                   "Tensor.add_": _arith("+"), "Tensor.sub_": _arith("-")})


def rewrite(loop: cst.For, ms: str) -> Optional[Tuple[cst.For, List[Tuple[str, int]]]]:
    """The loop with each `p.data.<op>_(...)` placeholder an `ops.assign` of the new value; returns
    (loop, the placeholders' (api, line) now converted), or None when the loop is not one of these."""
    if not (isinstance(loop.target, cst.Name) and loop.orelse is None and isinstance(loop.body, cst.IndentedBlock)
            and MU._PARAM_SOURCES.match(code_of(loop.iter).strip())):
        return None
    var = loop.target.value
    if MU._reads_grad(loop.body, var):
        return None     # `p.data.add_(-lr * p.grad)`: a hand-written update (manual_update.py), in the step
    out: List[cst.BaseStatement] = []
    resolved: List[Tuple[str, int]] = []
    for st in loop.body.body:
        call = MU._expr_call(st)
        ph = MU._placeholder(call) if call is not None else None
        if ph is None or ph[0] not in _NEW_VALUE or MU._original_receiver(st, ph[0]) not in (var, f"{var}.data"):
            return None
        if any(a.star for a in call.args):
            return None
        assign = _assignment(st, call, ph[0], var, ms)
        if assign is None:
            return None
        out.append(assign)
        resolved.append(ph)
    if not out:
        return None
    return loop.with_changes(body=loop.body.with_changes(body=out)), resolved


def rewrite_statement(st: cst.CSTNode, ms: str) -> Optional[Tuple[cst.SimpleStatementLine, Tuple[str, int]]]:
    """One statement `X.data.<op>_(...)` with X an attribute chain (`module.weight.data.mul_(s)`,
    timm's head init): `ms.ops.assign(X, <new value>)`, which changes the tensor or Parameter X in place,
    so every reference sees it. Returns (statement, the placeholder's (api, line)), or None."""
    call = MU._expr_call(st)
    ph = MU._placeholder(call) if call is not None else None
    if ph is None or ph[0] not in _NEW_VALUE or any(a.star for a in call.args):
        return None
    receiver = MU._original_receiver(st, ph[0])
    if receiver is None or not receiver.endswith(".data"):
        return None
    target = receiver[:-len(".data")]
    try:
        parsed = cst.parse_expression(target)
    except cst.ParserSyntaxError:
        return None
    if not isinstance(parsed, cst.Attribute) or not held_tensor(parsed):
        # a bare name: rewrite() above, in its loop; a call: evaluated twice; a tensor's rows (`x[0]`): a copy
        return None
    assign = _assignment(st, call, ph[0], target, ms)
    return (assign, ph) if assign is not None else None


def _assignment(st: cst.CSTNode, call: cst.Call, api: str, target: str, ms: str) -> Optional[cst.SimpleStatementLine]:
    """`ms.ops.assign(target, <the value api(...) would leave in target>)`, with the statement's comments
    but its TODO line; None where the new value has no expression."""
    pos = [code_of(a.value).strip() for a in call.args if a.keyword is None]
    kw = {a.keyword.value: code_of(a.value).strip() for a in call.args if a.keyword is not None}
    value = _NEW_VALUE[api](target, pos, kw, ms)
    if value is None:
        return None
    lead = [ln for ln in st.leading_lines if ln.comment is None or "msmigrate: TODO" not in ln.comment.value]
    return cst.parse_statement(f"{ms}.ops.assign({target}, {value})\n").with_changes(leading_lines=lead)
