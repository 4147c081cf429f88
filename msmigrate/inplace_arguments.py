"""An in-place tensor method on a parameter the function uses for nothing else
(`def mask_out(x, m): x.masked_fill_(m, 0)`): in torch its only effect is on the caller's tensor.

The converter rewrites a whole-statement `x.op_(...)` as the rebinding `x = <out-of-place x.op(...)>`
(inplace_forms.py; MindSpore's own in-place arithmetic leaves the tensor unchanged on CPU). For such a
parameter that rebinding is a dead store and the caller's tensor stays as it was: silently different.
Writing through (`x[...] = value`) is no cure: MindSpore's autograd keeps a reference to an op's input,
so overwriting it afterwards corrupts that op's gradient (measured on 2.10: the gradient of
`x[...] = ops.clamp(x, 0, 2)` passes where clamp clipped). So the statement becomes a TODO that raises
when reached, naming its line. A parameter the function also reads or returns keeps the rebinding
(its local uses are right; the report marks the site as a difference)."""
from __future__ import annotations

from typing import Dict, Set

import libcst as cst

WHY = ("in place on a parameter the function uses for nothing else: in torch the change reaches the "
       "caller's tensor, which a MindSpore rebinding would leave unchanged; return the new tensor and "
       "assign it in the caller")


def _inplace_receiver(stmt: cst.BaseSmallStatement):
    """The Name `x` of a whole statement `x.op_(...)`, else None."""
    if isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call):
        func = stmt.value.func
        if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.attr.value.endswith("_") and not func.attr.value.endswith("__")):
            return func.value
    return None


class _Uses(cst.CSTVisitor):
    def __init__(self, names: Set[str]) -> None:
        self.names = names
        self.uses: Dict[str, int] = {}
        self.receivers: Dict[str, int] = {}

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.names:
            self.uses[node.value] = self.uses.get(node.value, 0) + 1

    def visit_Expr(self, node: cst.Expr) -> None:
        recv = _inplace_receiver(node)
        if recv is not None and recv.value in self.names:
            self.receivers[recv.value] = self.receivers.get(recv.value, 0) + 1


def mutated_only(function: cst.FunctionDef, params: Set[str]) -> Set[str]:
    """The parameters whose every use in the function is as the receiver of a whole-statement
    in-place method call."""
    v = _Uses(set(params) - {"self", "cls"})
    function.body.visit(v)
    return {n for n, k in v.receivers.items() if v.uses.get(n, 0) == k}


def rebinds(name: str) -> bool:
    """Whether the statement `x.<name>(...)` becomes a rebinding `x = ...` (the out-of-place form that
    inplace_forms.py finds, or fill_/zero_/fill_diagonal_), not a write into the tensor itself."""
    from .inplace_forms import out_of_place

    return name in ("fill_", "zero_", "fill_diagonal_") or out_of_place(name) is not None
