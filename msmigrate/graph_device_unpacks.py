"""A tuple assignment whose values hold a tensor's device, inside code GRAPH mode compiles, split into one
assignment per target.

    b, *axis, _, device, dtype = *data.shape, data.device, data.dtype     (perceiver's forward)
->
    b, *axis, _ = data.shape; device = _ms_compat.device_of(data); dtype = data.dtype

Compiled, a device (a string made at run time: `x.device`, `_ms_compat.device_of(x)`) makes the whole tuple
display a run-time Python object, and every value unpacked from it one too: `dtype` then reaches
`astype(dtype)` as no type, and compiling stops, naming no line of the program ("For Tensor.astype, the input
type must be one of ...", "negative dimensions are not allowed"; measured on 2.10, also for
`device, dtype = x.device, x.dtype`). Each value assigned on its own compiles, the unpacking of a shape too.

The same assignments in Python when no target is read by a value (every value is computed before any target
is set, in the same order): only for targets that are names (one of them starred) and values that read none
of them; counts that cannot match (a ValueError in Python) are left as written."""
from __future__ import annotations

from typing import List, Optional, Set

import libcst as cst

from .visitor_bases import NameReads


class _Reads(NameReads):
    def __init__(self) -> None:
        self.names: Set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


class _DeviceReads(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in ("device", "device_of"):     # x.device, or its converted _ms_compat.device_of(x)
            self.found = True


def _starred(el: cst.BaseElement) -> bool:
    return isinstance(el, cst.StarredElement)


def _target_names(target: cst.BaseExpression) -> Optional[List[str]]:
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    names = []
    for el in target.elements:
        inner = el.value
        if not isinstance(inner, cst.Name):
            return None
        names.append(inner.value)
    return names


def _tuple(elements: List[cst.BaseElement], parenthesized: bool) -> cst.Tuple:
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    last = cst.Comma() if len(elements) == 1 else cst.MaybeSentinel.DEFAULT     # `*axis, = ...`
    return cst.Tuple(elements=[e.with_changes(comma=comma) for e in elements[:-1]] +
                     [elements[-1].with_changes(comma=last)], **({} if parenthesized else {"lpar": [], "rpar": []}))


def _assign(targets: List[cst.BaseElement], values: List[cst.BaseElement]) -> cst.Assign:
    """`targets = values`: one name and one value as they are, else a tuple target (the unpacking kept) and
    a single starred value as its iterable (`b, *axis = x.shape`)."""
    if len(targets) == 1 and len(values) == 1 and not _starred(targets[0]) and not _starred(values[0]):
        target, value = targets[0].value, values[0].value
    else:
        target = _tuple(targets, False)
        value = values[0].value if len(values) == 1 and _starred(values[0]) else _tuple(values, True)
    return cst.Assign(targets=[cst.AssignTarget(target=target)], value=value)


def split_device_unpack(assign: cst.Assign) -> Optional[cst.FlattenSentinel]:
    """`a, b = x.device, x.dtype` -> `a = x.device; b = x.dtype` (module docstring), or None when the
    assignment is not of that form."""
    if len(assign.targets) != 1 or not isinstance(assign.value, cst.Tuple):
        return None
    names = _target_names(assign.targets[0].target)
    if names is None:
        return None
    devices = _DeviceReads()
    assign.value.visit(devices)
    reads = _Reads()
    assign.value.visit(reads)
    if not devices.found or reads.names & set(names):
        return None
    targets, values = list(assign.targets[0].target.elements), list(assign.value.elements)
    front = 0
    while front < min(len(targets), len(values)) and not _starred(targets[front]) and not _starred(values[front]):
        front += 1
    back = 0
    while back < min(len(targets), len(values)) - front and not _starred(targets[-1 - back]) \
            and not _starred(values[-1 - back]):
        back += 1
    mid_targets, mid_values = targets[front:len(targets) - back], values[front:len(values) - back]
    if bool(mid_targets) != bool(mid_values):
        return None             # counts that cannot match: Python's ValueError, kept
    parts = [_assign([t], [v]) for t, v in zip(targets[:front], values[:front])]
    if mid_targets:
        parts.append(_assign(mid_targets, mid_values))
    parts += [_assign([t], [v]) for t, v in zip(targets[len(targets) - back:], values[len(values) - back:])]
    if len(parts) < 2:
        return None
    parts[-1] = parts[-1].with_changes(semicolon=assign.semicolon)
    return cst.FlattenSentinel(parts)
