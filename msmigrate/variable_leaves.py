"""`x = Variable(data, requires_grad=True)` as the converter leaves it (`_ms_compat.grad_leaf(data, where)`, a
Parameter; an `_ms_compat.Unconverted` placeholder where the call was not converted; possibly inside a module-level
import guard) and what it becomes where a gradient with respect to x is taken by
mindspore.grad/value_and_grad: `x = data`. Shared by higher_order_grad.py (torch.autograd.grad) and train_loop.py
(a lone backward() whose leaf's .grad is read)."""
from __future__ import annotations

from typing import Dict

import libcst as cst

from .callsite import code_of

VARIABLE = "torch.autograd.Variable"
PLACEHOLDER = "_ms_compat.Unconverted"
LEAF = "_ms_compat.grad_leaf"


def unguarded(stmt: cst.CSTNode) -> cst.CSTNode:
    """The statement inside the import guard of a module-level definition (placeholders.guarded_definition:
    `try: T = ... except Exception as _ms_error: T = _ms_compat.unconverted_definition(...)`), else itself."""
    if (isinstance(stmt, cst.Try) and len(stmt.body.body) == 1 and len(stmt.handlers) == 1
            and not stmt.orelse and not stmt.finalbody
            and "unconverted_definition" in code_of(stmt.handlers[0].body)):
        return stmt.body.body[0].with_changes(leading_lines=stmt.leading_lines)
    return stmt


def variable_data(stmt: cst.CSTNode, x: str, lazy_calls: Dict[str, cst.Call]):
    """`x = Variable(data, requires_grad=True)` (grad_leaf's Parameter, or a placeholder) where a gradient with
    respect to x is taken: `x = data`, the gradient being the function of x above. Returns (the statement, the
    Variable's `module:line`) or None."""
    inner = unguarded(stmt)
    if not (isinstance(inner, cst.SimpleStatementLine) and len(inner.body) == 1
            and isinstance(inner.body[0], cst.Assign) and len(inner.body[0].targets) == 1
            and isinstance(inner.body[0].targets[0].target, cst.Name)
            and inner.body[0].targets[0].target.value == x):
        return None
    value = inner.body[0].value
    if (isinstance(value, cst.Call) and code_of(value.func).strip() == LEAF and len(value.args) == 2
            and isinstance(value.args[1].value, cst.SimpleString)):
        comments = [ln for ln in stmt.leading_lines if not (ln.comment and LEAF in ln.comment.value)]
        return (inner.with_changes(body=[inner.body[0].with_changes(value=value.args[0].value)],
                                   leading_lines=comments), value.args[1].value.evaluated_value)
    ph = value.func if isinstance(value, cst.Call) and isinstance(value.func, cst.Call) else value
    if not (isinstance(ph, cst.Call) and code_of(ph.func).strip() == PLACEHOLDER and len(ph.args) > 1
            and code_of(ph.args[0].value).strip().strip("'\"") == VARIABLE):
        return None
    where = code_of(ph.args[1].value).strip().strip("'\"")
    call = value if ph is not value else lazy_calls.get(where)
    if call is None:
        return None
    data = None
    for k, a in enumerate(call.args):
        key = a.keyword.value if a.keyword is not None else ("data" if k == 0 else None)
        if a.star or key not in ("data", "requires_grad", "volatile"):
            return None
        if key == "data":
            data = a.value
    if data is None:
        return None
    comments = [ln for ln in stmt.leading_lines if not (ln.comment and VARIABLE in ln.comment.value)]
    return inner.with_changes(body=[inner.body[0].with_changes(value=data)], leading_lines=comments), where
