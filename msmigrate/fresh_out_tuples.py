"""`out = (torch.empty(2), torch.empty(2)); torch.sort(x, out=out)`: a variable holding a tuple of outputs
(a literal, or tuple()/list() of one).

torch writes into the tensors the tuple holds. Rebinding the variable (`out = <converted torch.sort(x)>`,
msmigrate/out_argument.py) computes the same only where nothing else holds those tensors or the tuple
itself: the tuple/list literal is made of freshly built tensors (torch.empty, torch.tensor...), it is
assigned in the same block as the call, earlier, and the name is not read between the two (an alias
taken there would keep the old tensors). Reads after the call see the rebound name, as they see torch's
written tensors."""
from __future__ import annotations

from typing import Callable, Dict, Optional

import libcst as cst

# torch functions that return a new tensor, never one of their arguments or a view of it
FRESH_BUILDERS = frozenset("torch." + n for n in (
    "empty zeros ones full tensor empty_like zeros_like ones_like full_like rand randn randint arange "
    "linspace eye").split())


class _Blocks(cst.CSTVisitor):
    def __init__(self):
        self.bodies = []

    def visit_Module(self, node):
        self.bodies.append(node.body)

    def visit_IndentedBlock(self, node):
        self.bodies.append(node.body)


def _mentions(node: cst.CSTNode, name: str, skip: Optional[cst.CSTNode] = None) -> bool:
    class _Find(cst.CSTVisitor):
        found = False

        def visit_Arg(self, n):   # the keyword of `out=out` names no variable
            if n.keyword is not None:
                n.value.visit(self)
                return False
            return True

        def visit_Name(self, n):
            if n is not skip and n.value == name:
                self.found = True

    finder = _Find()
    node.visit(finder)
    return finder.found


def _fresh_tuple_name(stmt: cst.CSTNode, torch_qname: Callable) -> Optional[str]:
    """`out = (torch.empty(2), torch.empty(2, dtype=torch.long))` -> 'out'."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)):
        return None
    assign = stmt.body[0]
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return None
    value = assign.value
    if (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in ("tuple", "list")
            and len(value.args) == 1 and not value.args[0].star and value.args[0].keyword is None):
        value = value.args[0].value     # tuple([torch.empty(2), torch.empty(2)]): the same fresh tensors
    if not isinstance(value, (cst.Tuple, cst.List)) or len(value.elements) < 2:
        return None
    if not all(isinstance(e, cst.Element) and isinstance(e.value, cst.Call)
               and torch_qname(e.value.func) in FRESH_BUILDERS for e in value.elements):
        return None
    return assign.targets[0].target.value


def _out_call(stmt: cst.CSTNode, name: str) -> Optional[cst.Call]:
    """The call of `f(..., out=name)` or `r = f(..., out=name)` as the whole statement."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    small = stmt.body[0]
    call = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
    if not isinstance(call, cst.Call):
        return None
    out = next((a for a in call.args if a.keyword is not None and a.keyword.value == "out"), None)
    if out is None or not isinstance(out.value, cst.Name) or out.value.value != name:
        return None
    return call if not _mentions(stmt, name, skip=out.value) else None


def fresh_out_tuples(module: cst.Module, torch_qname: Callable) -> Dict[int, str]:
    """id(call) -> the variable for every `f(..., out=name)` whose name holds fresh tensors only."""
    blocks = _Blocks()
    module.visit(blocks)
    found: Dict[int, str] = {}
    for body in blocks.bodies:
        for i, stmt in enumerate(body):
            name = _fresh_tuple_name(stmt, torch_qname)
            if name is None:
                continue
            for later in body[i + 1:]:
                call = _out_call(later, name)
                if call is not None:
                    found[id(call)] = name
                    break
                if _mentions(later, name):
                    break   # read (an alias?) or rebound before any call writes it
    return found
