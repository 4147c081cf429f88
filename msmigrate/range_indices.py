"""`x[range(n), y]`: torch indexes with a range as with the list of its numbers; MindSpore's tensor indexing
refuses a range (IndexError), so a `range(...)` written as an index becomes `list(range(...))` (the same
numbers; a list index is MindSpore's advanced indexing, in PyNative and in a graph)."""
from __future__ import annotations

from typing import Optional

import libcst as cst


def _is_range_call(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range"


def listed(subscript: cst.Subscript) -> Optional[cst.Subscript]:
    """The subscript with each range index written as a list (None when it has none)."""
    changed = False
    elements = []
    for el in subscript.slice:
        if isinstance(el.slice, cst.Index) and _is_range_call(el.slice.value):
            listed_range = cst.Call(func=cst.Name("list"), args=[cst.Arg(value=el.slice.value)])
            el = el.with_changes(slice=el.slice.with_changes(value=listed_range))
            changed = True
        elements.append(el)
    return subscript.with_changes(slice=elements) if changed else None
