"""In-place changes of an entry whose holder the converter cannot see the kind of: `self.shadow[k].mul_(d)` (an EMA's
dict of shadow weights), `ema_params[name].copy_(v)` (a dict of another model's parameters), `bufs[i].add_(g)` (a
list of tensors), `x[i].mul_(2)` (a tensor's row).

torch changes the entry itself: the tensor a dict or list holds (every other holder sees it), or a view of a tensor's
row. MindSpore's indexing of a tensor returns a copy, and rebinding a dict's entry (`d[k] = v`) leaves the tensor other
holders keep as it was, silently (an EMA model whose weights never move). Outside the code a Cell's construct runs,
such a call becomes `_ms_compat.item_in_place(C, k, <out-of-place form>)`, which decides at run time
(templates/compat_parts/inplace_alias.py): written into a dict's or list's tensor, assigned into a tensor's row (a
tensor of indices selects a copy in torch: nothing changes). In construct an in-place write would change a tensor an op
saved for the backward pass: the rows there are cell_rows.py's.

tests/test_held_items.py."""
from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from .callsite import code_of

HELPER = "item_in_place"
NOTE = ("in place on an entry `C[k]` whose holder's kind is seen at run time (_ms_compat.item_in_place): a dict's or "
        "list's tensor is written into (every holder sees it, as torch), a tensor's row at an integer key assigned "
        "into the tensor")


def _reads_again(node: cst.BaseExpression) -> bool:
    """A name, or an attribute/subscript chain of names and constant or name keys: reading it twice runs nothing."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        if isinstance(node, cst.Subscript) and _key(node) is None:
            return False
        node = node.value
    return isinstance(node, cst.Name)


def _key(sub: cst.Subscript) -> Optional[cst.BaseExpression]:
    """The one plain key of `C[k]`: a name, an attribute chain of names, an integer or integer arithmetic of them, a
    string; None for slices, several indices, calls."""
    if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return None
    k = sub.slice[0].slice.value
    return k if isinstance(k, cst.SimpleString) or _number(k) else None


def _number(v: cst.BaseExpression) -> bool:
    """An integer, a name or attribute chain of names, or integer arithmetic of them (`i + 1`, `-1`, `2 * j`)."""
    if isinstance(v, cst.UnaryOperation) and isinstance(v.operator, cst.Minus):
        return _number(v.expression)
    if isinstance(v, cst.BinaryOperation) and isinstance(v.operator, (cst.Add, cst.Subtract, cst.Multiply,
                                                                      cst.FloorDivide, cst.Modulo)):
        return _number(v.left) and _number(v.right)
    return isinstance(v, cst.Integer) or isinstance(v, (cst.Name, cst.Attribute)) and _reads_again(v)


def item(receiver: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(C, k) of a receiver `C[k]` that reads again without running anything; None otherwise."""
    if not isinstance(receiver, cst.Subscript):
        return None
    k = _key(receiver)
    if k is None or not _reads_again(receiver.value):
        return None
    return receiver.value, k


def wrapped(compat: str, holder: cst.BaseExpression, key: cst.BaseExpression, value: cst.BaseExpression
            ) -> cst.Call:
    """`_ms_compat.item_in_place(C, k, value)` (C and k as converted)."""
    return cst.Call(func=cst.parse_expression(f"{compat}.{HELPER}"),
                    args=[cst.Arg(holder), cst.Arg(key), cst.Arg(value)])


def describe(holder: cst.BaseExpression, key: cst.BaseExpression) -> str:
    return f"{code_of(holder).strip()}[{code_of(key).strip()}]"
