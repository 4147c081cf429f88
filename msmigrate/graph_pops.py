"""`h.pop()` on a local list in a Module's methods (lucidrains' Unet: `x = torch.cat((x, h.pop()), dim=1)`).

MindSpore's GRAPH mode mishandles list.pop: nested in an expression it gives the value (new list,
item), so Concat fails on the tuple; as a statement of its own (`item = h.pop()`) it compiles, but the
gradient reaching the popped tensor is wrong (measured on 2.10: 2.80 where PyNative and torch give
7.60). Indexing and slicing are right in both modes, so `h.pop()` becomes `h_popped = h[-1]` and
`h = h[:-1]` before its statement and the call reads h_popped. A rebinding, so only for a list the
function itself binds (a parameter's caller would not see the pop), read nowhere else in the
statement, popped unconditionally, with no argument."""
from __future__ import annotations

from typing import Set

import libcst as cst

from .inplace_values import _STATEMENTS, _Scan


def _is_pop(node: cst.CSTNode) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and isinstance(node.func.value, cst.Name) and node.func.attr.value == "pop" and not node.args)


class _Lines(cst.CSTVisitor):
    def __init__(self, local_lists) -> None:
        self.local_lists = local_lists
        self.calls = []

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        if len(node.body) != 1 or not isinstance(node.body[0], _STATEMENTS):
            return False
        scan = _Scan(_is_pop)
        node.body[0].visit(scan)
        for call in scan.calls:
            name = call.func.value.value
            if name in self.local_lists and scan.reads.get(name) == 1:
                self.calls.append(call)
        return False


def list_pops(function: cst.FunctionDef, local_names) -> Set[int]:
    """ids of the `name.pop()` calls of this function (not its nested ones) to rewrite; local_names:
    the names the function binds other than as parameters."""
    lines = _Lines(local_names)
    function.body.visit(lines)
    return {id(c) for c in lines.calls}


def rebindings(receiver: str, taken):
    """(temp name, [(name, value code)]) for `receiver.pop()`."""
    name = f"{receiver}_popped"
    i = 2
    while name in taken:
        name = f"{receiver}_popped{i}"
        i += 1
    return name, [(name, f"{receiver}[-1]"), (receiver, f"{receiver}[:-1]")]
