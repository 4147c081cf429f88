"""Reads of a tensor through a slice with a step on an axis that has axes after it (`x[:, 1::2]` of a 3-D tensor,
swin's `dots[:, :, k - 1::k] += mask`). MindSpore 2.10 computes the values, but the CPU gradient of such a slice
stops with "For 'StridedSliceGrad, N input memory out of bounds" (no line of the program named; PYNATIVE and GRAPH
alike), while a step on the first axis, or on the last, differentiates. The read becomes
`_ms_compat.every_nth(x[<the index, steps left out>], axis, step)` (templates/compat_parts/stepped_slices.py:
the axis moved last, sliced, moved back). `x[i] op= v` on such an index becomes `x[i] = every_nth(...) op v`:
MindSpore's gradient of the store itself runs.

Only indices whose elements are slices, `...`, None and integer literals are rewritten (their axes are known
from the index alone); a step on the index's first axis, or on the last after `...`, is left as written."""
from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst


def _literal_int(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer)


def _stepped(s: cst.BaseSlice) -> bool:
    """a slice with a step that is not absent, None or the literal 1"""
    if not isinstance(s, cst.Slice) or s.step is None:
        return False
    step = s.step
    if isinstance(step, cst.Name) and step.value == "None":
        return False
    return not (isinstance(step, cst.Integer) and step.evaluated_value == 1)


def plan(sub: cst.Subscript) -> Optional[List[Tuple[int, int, cst.BaseExpression]]]:
    """[(element position, axis of the result, step)] for each stepped slice to rewrite, or None."""
    kinds = []
    for e in sub.slice:
        s = e.slice
        if isinstance(s, cst.Slice):
            kinds.append("slice")
        elif isinstance(s.value, cst.Ellipsis):
            kinds.append("ellipsis")
        elif isinstance(s.value, cst.Name) and s.value.value == "None":
            kinds.append("none")
        elif _literal_int(s.value):
            kinds.append("int")
        else:
            return None     # a name, an expression: perhaps a tensor index, whose axes the index does not tell
    if kinds.count("ellipsis") > 1:
        return None
    out = []
    dots = kinds.index("ellipsis") if "ellipsis" in kinds else len(kinds)
    for j, e in enumerate(sub.slice):
        if not _stepped(e.slice):
            continue
        if j < dots:
            axis = sum(k in ("slice", "none") for k in kinds[:j])
            if axis == 0:
                continue    # the first axis differentiates
        else:
            axis = -1 - sum(k in ("slice", "none") for k in kinds[j + 1:])
            if axis == -1:
                continue    # the last axis differentiates
        out.append((j, axis, e.slice.step))
    return out or None


def read(sub: cst.Subscript, compat: str) -> Optional[cst.BaseExpression]:
    """`x[<index>]` as `compat.every_nth(x[<index without those steps>], axis, step)` (nested per stepped axis)."""
    steps = plan(sub)
    if steps is None:
        return None
    moved = {j for j, _, _ in steps}
    elements = [e.with_changes(slice=e.slice.with_changes(step=None, second_colon=cst.MaybeSentinel.DEFAULT))
                if j in moved else e for j, e in enumerate(sub.slice)]
    full = all(isinstance(e.slice, cst.Slice) and e.slice.lower is None and e.slice.upper is None
               and e.slice.step is None for e in elements)
    out: cst.BaseExpression = sub.value if full else sub.with_changes(slice=elements)
    for _, axis, step in steps:
        out = cst.Call(func=cst.parse_expression(f"{compat}.every_nth"), args=[
            cst.Arg(out), cst.Arg(cst.Integer(str(axis)) if axis >= 0 else cst.UnaryOperation(
                operator=cst.Minus(), expression=cst.Integer(str(-axis)))), cst.Arg(step)])
    return out


def augmented(target: cst.Subscript, operator: cst.BaseAugOp, value: cst.BaseExpression,
              compat: str) -> Optional[cst.Assign]:
    """`x[<index>] op= v` as `x[<index>] = every_nth(...) op v`."""
    current = read(target, compat)
    binary = _BINARY.get(type(operator))
    if current is None or binary is None:
        return None
    return cst.Assign(targets=[cst.AssignTarget(target)],
                      value=cst.BinaryOperation(left=current, operator=binary(), right=value))


_BINARY = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
           cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
           cst.PowerAssign: cst.Power, cst.MatrixMultiplyAssign: cst.MatrixMultiply,
           cst.BitAndAssign: cst.BitAnd, cst.BitOrAssign: cst.BitOr, cst.BitXorAssign: cst.BitXor,
           cst.LeftShiftAssign: cst.LeftShift, cst.RightShiftAssign: cst.RightShift}
