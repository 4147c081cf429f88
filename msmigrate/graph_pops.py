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

from .inplace_values import _STATEMENTS, ScopeLocalVisitor, _Scan


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


# ---------------------------------------------------------------- outside a Module's methods
# A module function can run inside a compiled graph too: a helper that construct calls, a loss
# function of a compiled train step. There the same rewrite applies, to lists the function builds
# itself (a list display, list(...) or a comprehension: no set or deque, whose pop has no slicing
# counterpart, and no alias of a list the caller holds).

_FRESH = (cst.List, cst.ListComp)


def _fresh_value(node: cst.BaseExpression) -> bool:
    if isinstance(node, _FRESH):
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
        return isinstance(node.left, cst.List)                      # `[None] * n`
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "list")


class _Bindings(ScopeLocalVisitor):
    """Per name of one function (not its nested ones): are all its bindings fresh lists?"""

    def __init__(self) -> None:
        self.fresh: dict = {}

    def _bind(self, target, value) -> None:
        if isinstance(target, cst.Name):
            ok = value is not None and _fresh_value(value)
            self.fresh[target.value] = self.fresh.get(target.value, True) and ok
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._bind(el.value, None)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, None)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._bind(t.target, node.value if len(node.targets) == 1 else None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        # `h += [x]` keeps h a list; `h += other` could make nothing else of a list either
        if isinstance(node.target, cst.Name) and not isinstance(node.value, _FRESH):
            self.fresh[node.target.value] = False

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, None)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name, None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, node.value)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target, None)


def fresh_lists(function: cst.FunctionDef) -> Set[str]:
    """Names the function binds only to lists it builds (`h = []`, `h = list(xs)`, `[f(x) for x in xs]`)."""
    v = _Bindings()
    function.body.visit(v)
    params = {p.name.value for p in list(function.params.params) + list(function.params.kwonly_params)
              + list(function.params.posonly_params)}
    return {n for n, ok in v.fresh.items() if ok and n not in params and n not in _globals(function)}


def _globals(function: cst.FunctionDef) -> Set[str]:
    names = set()
    for node in _walk(function.body):
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            names |= {n.name.value for n in node.names}
    return names


def _walk(node: cst.CSTNode):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def graph_functions(module: cst.Module, torch_heads: Set[str], cell_classes: Set[str], reads) -> Set[str]:
    """Module-level functions that may run inside a compiled graph: those that use torch (a loss
    function, a helper of a train step), and those a Module's methods or such functions call, by name.
    `reads(node)` lists the names a node reads."""
    functions = {st.name.value: st for st in module.body if isinstance(st, cst.FunctionDef)}
    todo = []
    for st in module.body:
        if isinstance(st, cst.ClassDef) and st.name.value in cell_classes:
            todo.extend(n for n in reads(st.body) if n in functions)
    read_by = {name: set(reads(fn.body)) for name, fn in functions.items()}
    todo.extend(name for name, names in read_by.items() if names & torch_heads)
    found: Set[str] = set()
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        todo.extend(n for n in read_by[name] if n in functions)
    return found


# ---------------------------------------------------------------- pops the rewrite cannot carry
# Two more pops compile in GRAPH mode and compute something else there (measured on 2.10):
# - `hs.pop()` on a list the function got as an argument: the caller's list keeps its length (the
#   pop is not seen outside the compiled function; PyNative and torch shorten it);
# - a pop of a local list that the rewrite above leaves (under an `if`, read twice in a statement):
#   the gradient reaching a popped tensor is lost (0 where torch gives 4).
# Such a call becomes `_ms_compat.graph_pop(<the pop>, any_item, "file:line")`: the popped item in
# PyNative; compiling a graph that reaches it raises MigrationError naming the line (for a local list
# only when the item is a tensor: a list of ints, a shape, pops right).


def _int_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer)


class _AllPops(ScopeLocalVisitor):
    def __init__(self) -> None:
        self.calls = []

    def visit_Call(self, node: cst.Call) -> None:
        if (isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name)
                and node.func.attr.value == "pop"
                and (not node.args or len(node.args) == 1 and not node.args[0].keyword
                     and not node.args[0].star and _int_literal(node.args[0].value))):
            self.calls.append(node)


def refused_pops(function: cst.FunctionDef, rewritten: Set[int], params: Set[str]) -> dict:
    """{id of a `name.pop()` call: any_item} for the pops of this function (not its nested ones) that
    the rewrite above does not carry: on a parameter (any item refused when compiled) or on a list the
    function builds (a tensor item refused). `name.pop(key)` (a dict) and other receivers are left."""
    v = _AllPops()
    function.body.visit(v)
    local = fresh_lists(function)
    out = {}
    for call in v.calls:
        name = call.func.value.value
        if id(call) in rewritten:
            continue
        if name in params:
            out[id(call)] = True
        elif name in local:
            out[id(call)] = False
    return out


def refuse_in_graph(tr, original: cst.Call, result: cst.BaseExpression, any_item: bool) -> cst.BaseExpression:
    """`_ms_compat.graph_pop(result, any_item, where)` (templates/compat_parts/graph_pops.py)."""
    where = f"{tr.module_name}:{tr._line(original)}"
    return cst.Call(func=tr._render_template("_ms_compat.graph_pop"),
                    args=[cst.Arg(result), cst.Arg(cst.Name(str(any_item))),
                          cst.Arg(cst.SimpleString(repr(where)))])
