"""`a * b` and `a / b` (and `*=`, `/=`) in a module that makes complex tensors.

MindSpore 2.10's Mul and Div take a complex tensor only with the same complex dtype: a complex tensor times a
real tensor or a Python number raises a raw TypeError ("Select CPU operator[Mul] fail! Unsupported data type",
measured for `*` and `/` in both orders; `+` and `-` promote as torch does). torch.mul/div already go to
_ms_compat.mul/div (compat_parts/complex_operands.py). An operator's operand dtypes are known only at run time,
so the operators become _ms_compat.times/over, which cast as torch promotes and otherwise compute `a * b`
itself, but only in a module whose source makes complex values (a complex dtype, torch.complex, polar,
view_as_complex, fft, an imaginary literal): other modules keep their operators as written, and so does an
operation whose two operands are known not to be tensors. An augmented assignment becomes a plain one on a
name or an attribute, or on a subscript without calls (evaluated twice, as it has no side effect)."""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst

_COMPLEX_SOURCE = re.compile(
    r"\b(complex(32|64|128)|cfloat|cdouble|chalf|view_as_complex\w*|polar|fft|stft)\b|\bcomplex\(|\b\d+(\.\d*)?[jJ]\b")

_HELPERS = {cst.Multiply: "times", cst.Divide: "over"}
_AUG_HELPERS = {cst.MultiplyAssign: "times", cst.DivideAssign: "over"}


def makes_complex(source: str) -> bool:
    return bool(_COMPLEX_SOURCE.search(source))


# operands whose parentheses are part of them as an argument (`(val,) * depth`: a bare `val,` is no argument)
_KEEP_PARENS = (cst.Tuple, cst.GeneratorExp, cst.NamedExpr, cst.Yield)


def _unparenthesized(node):
    return node if isinstance(node, _KEEP_PARENS) else node.with_changes(lpar=[], rpar=[])


def _call(helper: str, left, right, compat: str) -> cst.Call:
    return cst.Call(func=cst.Attribute(cst.Name(compat), cst.Name(helper)),
                    args=[cst.Arg(_unparenthesized(left)), cst.Arg(_unparenthesized(right))])


def operator(updated: cst.BinaryOperation, compat: str, in_cell: bool = False) -> Optional[cst.BaseExpression]:
    """in_cell: in code a Cell's construct runs, an imaginary literal operand (S4D's `1j * self.A_imag`) becomes
    _ms_compat.imaginary_tensor(1.0): MindSpore's graph parser refuses a complex constant ("Unsupported Constant
    type : 1j", naming no line), and the operation is a tensor's there."""
    helper = _HELPERS.get(type(updated.operator))
    if helper is None:
        return None
    left, right = updated.left, updated.right
    if in_cell and isinstance(left, cst.Imaginary) != isinstance(right, cst.Imaginary):
        left, right = (_imaginary(e, compat) if isinstance(e, cst.Imaginary) else e for e in (left, right))
    return _call(helper, left, right, compat).with_changes(lpar=updated.lpar, rpar=updated.rpar)


def _imaginary(literal: cst.Imaginary, compat: str) -> cst.Call:
    return cst.Call(func=cst.Attribute(cst.Name(compat), cst.Name("imaginary_tensor")),
                    args=[cst.Arg(cst.Float(repr(float(complex(literal.value).imag))))])


def augmented(updated: cst.AugAssign, compat: str) -> Optional[cst.Assign]:
    helper = _AUG_HELPERS.get(type(updated.operator))
    target = updated.target
    if helper is None or not isinstance(target, (cst.Name, cst.Attribute, cst.Subscript)):
        return None
    if isinstance(target, cst.Subscript) and _has_call(target):
        return None
    return cst.Assign(targets=[cst.AssignTarget(target)], value=_call(helper, target, updated.value, compat),
                      semicolon=updated.semicolon)


def _has_call(node: cst.CSTNode) -> bool:
    found = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, n) -> None:
            found.append(n)

    node.visit(_Calls())
    return bool(found)
