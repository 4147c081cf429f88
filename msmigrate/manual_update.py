"""Hand-written parameter updates -> an update of the Parameters inside the train step.

torch programs without an optimizer update the parameters themselves after backward():

    with torch.no_grad():
        for p in model.parameters():
            p -= lr * p.grad                 # or p.data.add_(-lr, p.grad), p.data.sub_(lr * p.grad)
            p.grad.zero_()

MindSpore keeps no .grad and in-place arithmetic on a Parameter may change nothing (CPU PyNative).
The train step (train_loop.py) differentiates the loss over those parameters with value_and_grad
and this module rewrites the loop body on the returned gradients, every update an `ops.assign`:

    for p, p_grad in zip(trained_params, grads):
        ms.ops.assign(p, p - lr * p_grad)

The loop arrives converted by the main pass: `torch.no_grad()` is gone, `p.grad.zero_()` is
`_ms_compat.zeros_(p.grad)`, and `p.data.add_(...)` is an `_ms_compat.Unconverted('Tensor.add_', ...)`
placeholder whose TODO comment keeps the original receiver. Anything else that reads `.grad`
leaves the loop unrecognised (the backward() then stays a TODO).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import libcst as cst

from .callsite import code_of

# what `model.parameters()` became, and torch's own spelling (a program-built list reads as a name)
_PARAM_SOURCES = re.compile(r"^[\w.]+\.(get_parameters|trainable_params|parameters)\(\)$|^[\w.]+$"
                            r"|^_ms_compat\.parameters\([\w.]+\)$")   # torch's Module.parameters(), converted
_INPLACE = {"Tensor.add_": "+", "Tensor.sub_": "-", "Tensor.mul_": "*", "Tensor.div_": "/",
            "Tensor.copy_": None}
_ZEROING = ("_ms_compat.zeros_", "_ms_compat.zero_")


@dataclass
class ManualUpdate:
    params: str                       # code of what the loop iterates (model.get_parameters())
    var: str                          # the loop variable (p)
    loop: cst.For                     # the (converted) update loop
    resolved: List[Tuple[str, int]] = field(default_factory=list)   # placeholders it replaces: (api, line)


def _update_loop(stmt: cst.CSTNode) -> Optional[cst.For]:
    """The `for p in ...:` of an update, also inside a `with` (no_grad, when kept)."""
    if isinstance(stmt, cst.With) and isinstance(stmt.body, cst.IndentedBlock) and len(stmt.body.body) == 1:
        stmt = stmt.body.body[0]
    if (isinstance(stmt, cst.For) and isinstance(stmt.target, cst.Name) and stmt.orelse is None
            and isinstance(stmt.body, cst.IndentedBlock)):
        return stmt
    return None


def _reads_grad(node: cst.CSTNode, var: str) -> bool:
    return bool(re.search(rf"\b{re.escape(var)}(\.data)?\.grad\b", code_of(node)))


def find(stmt: cst.CSTNode) -> Optional[ManualUpdate]:
    """A hand-written update after backward(): a loop over parameters that reads `p.grad` and
    changes `p` (zeroing the gradient alone is no update)."""
    loop = _update_loop(stmt)
    if loop is None:
        return None
    params = code_of(loop.iter).strip()
    var = loop.target.value
    if not _PARAM_SOURCES.match(params) or not _reads_grad(loop.body, var):
        return None
    converted = convert_body(loop, var, "grads_unused", "grads_unused")
    if converted is None or not converted[2]:
        return None
    return ManualUpdate(params, var, loop, converted[1])


def only_zeroes_grads(stmt: cst.CSTNode) -> bool:
    """`for p in model.parameters(): p.grad = None` / `p.grad.zero_()` (optionally under `if p.grad
    is not None:`): torch's zero_grad by hand; nothing accumulates in MindSpore."""
    loop = _update_loop(stmt)
    if loop is None or not _PARAM_SOURCES.match(code_of(loop.iter).strip()):
        return False
    var = loop.target.value
    inner = list(loop.body.body)
    if len(inner) == 1 and isinstance(inner[0], cst.If) and inner[0].orelse is None \
            and re.fullmatch(rf"{var}\.grad is not None", code_of(inner[0].test).strip()):
        inner = list(inner[0].body.body)
    return bool(inner) and all(_zeroing(st, var) for st in inner)


def _zeroing(st: cst.CSTNode, var: str) -> bool:
    code = " ".join(code_of(st).split())
    if re.fullmatch(rf"{var}\.grad = None", code):
        return True
    call = _expr_call(st)
    if call is None:
        return False
    f = code_of(call.func).strip()
    if f in _ZEROING and call.args and _reads_grad(call.args[0].value, var):
        return True
    ph = _placeholder(call)
    return ph is not None and ph[0] in ("Tensor.zero_", "Tensor.detach_", "Tensor.requires_grad_") \
        and (_original_receiver(st, ph[0]) or "").startswith(f"{var}.grad")


def _expr_call(st: cst.CSTNode) -> Optional[cst.Call]:
    if (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Expr)
            and isinstance(st.body[0].value, cst.Call)):
        return st.body[0].value
    return None


def _placeholder(call: cst.Call) -> Optional[Tuple[str, int]]:
    """`_ms_compat.Unconverted('Tensor.add_', 'mod:12', why)(...)`: (api, line)."""
    f = call.func
    if not (isinstance(f, cst.Call) and code_of(f.func).strip() == "_ms_compat.Unconverted" and len(f.args) >= 2):
        return None
    api, where = f.args[0].value, f.args[1].value
    if not (isinstance(api, cst.SimpleString) and isinstance(where, cst.SimpleString)):
        return None
    m = re.search(r":(\d+)$", where.evaluated_value)
    return (api.evaluated_value, int(m.group(1))) if m else None


def placeholders_in(stmt: cst.CSTNode) -> List[Tuple[str, int]]:
    """The (api, line) of every `_ms_compat.Unconverted(...)` call in a statement."""
    found: List[Tuple[str, int]] = []

    class _V(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            ph = _placeholder(call)
            if ph is not None:
                found.append(ph)
    stmt.visit(_V())
    return found


def _original_receiver(st: cst.CSTNode, api: str) -> Optional[str]:
    """The receiver of the original call, from the placeholder's TODO comment."""
    method = api.split(".", 1)[1]
    for line in st.leading_lines:
        if line.comment is None:
            continue
        m = re.search(rf"TODO {re.escape(api)}:.*Original: (.*)$", line.comment.value)
        if m is None:
            continue
        try:
            expr = cst.parse_expression(m.group(1))
        except Exception:       # shortened past parsing
            return None
        if (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
                and expr.func.attr.value == method):
            return code_of(expr.func.value).strip()
    return None


class _Grads(cst.CSTTransformer):
    """`p.grad`, `p.grad.data`, `p.data.grad` -> `p_grad`; `p.data` -> `p`."""

    def __init__(self, var: str, gname: str) -> None:
        self.var, self.gname = var, gname

    def leave_Attribute(self, original, updated):
        code = code_of(original).strip()
        if code in (f"{self.var}.grad", f"{self.var}.grad.data", f"{self.var}.data.grad"):
            return cst.Name(self.gname)
        if code == f"{self.var}.data":
            return cst.Name(self.var)
        return updated


def _assign(ms: str, var: str, value: str) -> cst.BaseStatement:
    return cst.parse_statement(f"{ms}.ops.assign({var}, {value})\n")


def _arg(a: cst.Arg) -> str:
    return code_of(a.value).strip()


def convert_body(loop: cst.For, var: str, gname: str, ms: str) -> Optional[Tuple[List[cst.BaseStatement],
                                                                                List[Tuple[str, int]], int]]:
    """The update loop's body on `gname` (the gradient): (statements, placeholders resolved, number
    of parameter updates), or None when a statement does something this does not know."""
    resolved: List[Tuple[str, int]] = []
    updates = 0

    def block(stmts) -> Optional[List[cst.BaseStatement]]:
        nonlocal updates
        out: List[cst.BaseStatement] = []
        for st in stmts:
            if _zeroing(st, var):
                ph = _placeholder(_expr_call(st)) if _expr_call(st) is not None else None
                if ph is not None:
                    resolved.append(ph)
                continue
            if isinstance(st, cst.If) and isinstance(st.body, cst.IndentedBlock):
                body = block(st.body.body)
                orelse = None
                if st.orelse is not None:
                    if not isinstance(st.orelse, cst.Else):
                        return None
                    eb = block(st.orelse.body.body)
                    if eb is None:
                        return None
                    orelse = st.orelse.with_changes(body=st.orelse.body.with_changes(body=eb or [cst.parse_statement("pass\n")]))
                if body is None:
                    return None
                test = st.test.visit(_Grads(var, gname))
                out.append(st.with_changes(test=test, body=st.body.with_changes(body=body or [cst.parse_statement("pass\n")]),
                                           orelse=orelse))
                continue
            new = _update(st)
            if new is None:
                return None
            out.append(new)
        return out

    def _update(st: cst.CSTNode) -> Optional[cst.BaseStatement]:
        nonlocal updates
        lead = st.leading_lines if hasattr(st, "leading_lines") else ()
        if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1:
            small = st.body[0]
            if isinstance(small, cst.AugAssign) and code_of(small.target).strip() in (var, f"{var}.data"):
                op = code_of(small.operator).strip()[:-1]
                value = code_of(small.value.visit(_Grads(var, gname))).strip()
                updates += 1
                return _assign(ms, var, f"{var} {op} ({value})")
            if (isinstance(small, cst.Assign) and len(small.targets) == 1
                    and code_of(small.targets[0].target).strip() == f"{var}.data"):
                updates += 1
                return _assign(ms, var, code_of(small.value.visit(_Grads(var, gname))).strip())
            call = _expr_call(st)
            ph = _placeholder(call) if call is not None else None
            if ph is not None and ph[0] in _INPLACE and _original_receiver(st, ph[0]) in (var, f"{var}.data"):
                op = _INPLACE[ph[0]]
                args = [a.with_changes(value=a.value.visit(_Grads(var, gname))) for a in call.args]
                pos = [_arg(a) for a in args if a.keyword is None]
                kw = {a.keyword.value: _arg(a) for a in args if a.keyword is not None}
                if op is None:                       # p.data.copy_(src)
                    if len(pos) != 1 or kw:
                        return None
                    value = pos[0]
                elif op in "+-" and len(pos) == 2 and not kw:   # add_(alpha, other): torch's old signature
                    value = f"{var} {op} ({pos[0]}) * ({pos[1]})"
                elif op in "+-" and len(pos) == 1 and set(kw) <= {"alpha"}:
                    scale = f"({kw['alpha']}) * " if "alpha" in kw else ""
                    value = f"{var} {op} {scale}({pos[0]})"
                elif len(pos) == 1 and not kw:
                    value = f"{var} {op} ({pos[0]})"
                else:
                    return None
                resolved.append(ph)
                updates += 1
                return _assign(ms, var, value).with_changes(leading_lines=[
                    ln for ln in lead if ln.comment is None or "msmigrate: TODO" not in ln.comment.value])
        if _reads_grad(st, var) or re.search(rf"\b{re.escape(var)}\.data\b", code_of(st)) \
                or "_ms_compat.Unconverted" in code_of(st):
            return None       # some other use of the gradient or the parameter's storage
        return st.visit(_Grads(var, gname))

    body = block(loop.body.body)
    if body is None:
        return None
    return body, resolved, updates


def step_lines(update: ManualUpdate, weights: str, ms: str, grads: str = "grads") -> Optional[List[str]]:
    """The update loop on the gradients of `weights` (the parameters it iterates), as lines of
    the train step's body."""
    gname = f"{update.var}_grad"
    converted = convert_body(update.loop, update.var, gname, ms)
    if converted is None:
        return None
    body, _, _ = converted
    loop = cst.For(target=cst.Tuple([cst.Element(cst.Name(update.var)), cst.Element(cst.Name(gname))], lpar=[], rpar=[]),
                   iter=cst.parse_expression(f"zip({weights}, {grads})"),
                   body=cst.IndentedBlock(body=body))
    return cst.Module(body=[loop]).code.rstrip("\n").split("\n")


# ------------------------------------------------------------------ tensors updated by hand
def tensor_updates(body, last: int) -> Optional[Tuple[List[str], List[int], List[int]]]:
    """`loss.backward(); w -= lr * w.grad; b -= lr * b.grad; w.grad.zero_(); b.grad.zero_()` (the
    from-scratch regression of tutorials; `torch.no_grad()` is already gone): the tensors updated
    right after the backward(), each from its own .grad. Every one must have its .grad cleared in
    the same block (else torch sums the gradients of all iterations, which this does not).
    Returns (tensors, update statement indices, clearing statement indices), or None."""
    names: List[str] = []
    updates: List[int] = []
    clears: List[int] = []
    j = last + 1
    while j < len(body):
        st = body[j]
        small = st.body[0] if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 else None
        if (isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name)
                and _reads_grad(small.value, small.target.value)):
            names.append(small.target.value)
            updates.append(j)
        elif not any(_zeroing(st, n) for n in names):
            break
        j += 1
    if not names:
        return None
    for k, st in enumerate(body):
        if k in updates:
            continue
        hit = [n for n in names if _zeroing(st, n)]
        if hit:
            clears.append(k)
        elif k < last and any(_reads_grad(st, n) for n in names):
            return None     # .grad read before the backward(): the previous iteration's gradient
    cleared = {n for n in names for k in clears if _zeroing(body[k], n)}
    if cleared != set(names):
        return None
    return names, updates, clears


def rebinding(st: cst.CSTNode, grads: dict) -> cst.BaseStatement:
    """`w -= lr * w.grad` -> `w = w - (lr * w_grad)`: a new value (in-place arithmetic on a MindSpore
    tensor may change nothing)."""
    small = st.body[0]
    name = small.target.value
    op = code_of(small.operator).strip()[:-1]
    value = small.value
    for n, g in grads.items():
        value = value.visit(_Grads(n, g))
    return cst.parse_statement(f"{name} = {name} {op} ({code_of(value).strip()})\n")
