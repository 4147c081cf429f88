"""`h.pop()` on a local list in a Module's methods (lucidrains' Unet: `x = torch.cat((x, h.pop()), dim=1)`).

MindSpore's GRAPH mode mishandles list.pop: nested in an expression it gives the value (new list,
item), so Concat fails on the tuple; as a statement of its own (`item = h.pop()`) it compiles, but the
gradient reaching the popped tensor is wrong (measured on 2.10: 2.80 where PyNative and torch give
7.60). Indexing and slicing are right in both modes, so `h.pop()` becomes `h_popped = h[-1]` and
`h = h[:-1]` before its statement and the call reads h_popped. A rebinding, so only for a list the
function itself binds (a parameter's caller would not see the pop), read nowhere else in the
statement, popped unconditionally, with no argument, -1 or 0 (`h_popped = h[0]; h = h[1:]`).

Two more forms (x-transformers' AttentionLayers): a parameter the function first rebinds to its own
list (`mems = mems.copy() if exists(mems) else [None] * n`, rebound_params) counts as a list it binds;
and `x = h.pop(0) if test else other` takes the test once, before the pop as Python does:
`h_popping = test; h_popped = h[0] if h_popping else None; h = h[1:] if h_popping else h;
x = h_popped if h_popping else other`."""
from __future__ import annotations

from typing import Set

import libcst as cst

from .fast_visit import children
from .graph_objects import graph_refusal
from .inplace_values import _STATEMENTS, _Scan
from .visitor_bases import BindingTargets, ScopeLocalVisitor


def _is_pop(node: cst.CSTNode) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and isinstance(node.func.value, cst.Name) and node.func.attr.value == "pop"
            and pop_index(node) is not None)


def pop_index(call: cst.Call):
    """-1 for `h.pop()` / `h.pop(-1)`, 0 for `h.pop(0)` (the ends, which slicing takes); None otherwise."""
    if not call.args:
        return -1
    if len(call.args) != 1 or call.args[0].keyword or call.args[0].star:
        return None
    v = call.args[0].value
    if isinstance(v, cst.Integer) and v.value == "0":
        return 0
    if (isinstance(v, cst.UnaryOperation) and isinstance(v.operator, cst.Minus)
            and isinstance(v.expression, cst.Integer) and v.expression.value == "1"):
        return -1
    return None


class _Lines(cst.CSTVisitor):
    def __init__(self, local_lists) -> None:
        self.local_lists = local_lists
        self.calls = []
        self.guarded = {}       # id of `h.pop(0) if test else other`: its pop call

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        if len(node.body) != 1 or not isinstance(node.body[0], _STATEMENTS):
            return False
        guarded = _guarded_pop(node.body[0], self.local_lists)
        if guarded is not None:
            self.guarded[id(guarded)] = guarded.body
            return False
        scan = _Scan(_is_pop)
        node.body[0].visit(scan)
        for call in scan.calls:
            name = call.func.value.value
            if name in self.local_lists and scan.reads.get(name) == 1:
                self.calls.append(call)
        return False


def _guarded_pop(stmt, local_lists):
    """`x = h.pop(0) if test else other` (x-transformers: `layer_mem = mems.pop(0) if mems else None`):
    the IfExp, when its body is a pop of a local list and neither test nor other pops it."""
    if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, cst.IfExp)):
        return None
    ifexp = stmt.value
    call = ifexp.body
    if not (_is_pop(call) and call.func.value.value in local_lists):
        return None
    rest = _AllPops()
    ifexp.test.visit(rest)
    ifexp.orelse.visit(rest)
    stmt.targets[0].visit(rest)
    return None if rest.calls else ifexp


def list_pops(function: cst.FunctionDef, local_names) -> Set[int]:
    """ids of the `name.pop()` calls of this function (not its nested ones) to rewrite; local_names:
    the names the function binds other than as parameters."""
    return pops_to_rewrite(function, local_names)[0]


def pops_to_rewrite(function: cst.FunctionDef, local_names):
    """(ids of the unconditional `name.pop()` calls, {id of a guarded pop's IfExp: its pop call})."""
    lines = _Lines(local_names)
    function.body.visit(lines)
    return {id(c) for c in lines.calls}, lines.guarded


def rebindings(receiver: str, taken, index: int = -1):
    """(temp name, [(name, value code)]) for `receiver.pop()` (index -1) or `receiver.pop(0)`."""
    name = _temp(f"{receiver}_popped", taken)
    rest = f"{receiver}[1:]" if index == 0 else f"{receiver}[:-1]"
    return name, [(name, f"{receiver}[{index}]"), (receiver, rest)]


def guarded_rebindings(receiver: str, taken, index: int, test: str):
    """(popping name, popped name, [(name, value code)]) for `receiver.pop(index) if test else other`:
    the test evaluated once, before the pop as Python does; the IfExp then reads the two names."""
    popping = _temp(f"{receiver}_popping", taken)
    popped = _temp(f"{receiver}_popped", taken | {popping})
    rest = f"{receiver}[1:]" if index == 0 else f"{receiver}[:-1]"
    return popping, popped, [(popping, test), (popped, f"{receiver}[{index}] if {popping} else None"),
                             (receiver, f"{rest} if {popping} else {receiver}")]


def _temp(name: str, taken) -> str:
    out, i = name, 2
    while out in taken:
        out = f"{name}{i}"
        i += 1
    return out


# ---------------------------------------------------------------- outside a Module's methods
# A module function can run inside a compiled graph too: a helper that construct calls, a loss
# function of a compiled train step. There the same rewrite applies, to lists the function builds
# itself (a list display, list(...) or a comprehension: no set or deque, whose pop has no slicing
# counterpart, and no alias of a list the caller holds).

_FRESH = (cst.List, cst.ListComp)


def _fresh_value(node: cst.BaseExpression) -> bool:
    if isinstance(node, _FRESH):
        return True
    if isinstance(node, cst.IfExp):                                 # `m.copy() if m else [None] * n`
        return _fresh_value(node.body) and _fresh_value(node.orelse)
    if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "copy"
            and not node.args and isinstance(node.func.value, cst.Name)):
        return True                                                  # `mems.copy()`: a new list
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
        return isinstance(node.left, cst.List)                      # `[None] * n`
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "list")


class _Bindings(BindingTargets, ScopeLocalVisitor):
    """Per name of one function (not its nested ones): are all its bindings fresh lists?"""

    binders = (cst.Assign, cst.AnnAssign, cst.For, cst.WithItem, cst.NamedExpr, cst.CompFor)

    def __init__(self) -> None:
        self.fresh: dict = {}

    def bind(self, target, value) -> None:
        if isinstance(target, cst.Name):
            ok = value is not None and _fresh_value(value)
            self.fresh[target.value] = self.fresh.get(target.value, True) and ok

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        # `h += [x]` keeps h a list; `h += other` could make nothing else of a list either
        if isinstance(node.target, cst.Name) and not isinstance(node.value, _FRESH):
            self.fresh[node.target.value] = False


def fresh_lists(function: cst.FunctionDef) -> Set[str]:
    """Names the function binds only to lists it builds (`h = []`, `h = list(xs)`, `[f(x) for x in xs]`)."""
    v = _Bindings()
    function.body.visit(v)
    params = {p.name.value for p in list(function.params.params) + list(function.params.kwonly_params)
              + list(function.params.posonly_params)}
    return {n for n, ok in v.fresh.items() if ok and n not in params and n not in _globals(function)}


def rebound_params(function: cst.FunctionDef, params: Set[str]) -> Set[str]:
    """Parameters the function rebinds to a list it builds before anything else reads them
    (`mems = mems.copy() if exists(mems) else [None] * n` as a statement of the body itself), and
    binds to nothing but such lists: their pops shorten the function's own list, not the caller's."""
    v = _Bindings()
    function.body.visit(v)
    out = set()
    for name in params:
        if not v.fresh.get(name):
            continue
        for st in function.body.body:
            if not any(isinstance(n, cst.Name) and n.value == name for n in _walk(st)):
                continue
            # the first statement naming it rebinds it (its value may read the argument)
            if (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1
                    and isinstance(st.body[0], cst.Assign) and len(st.body[0].targets) == 1
                    and isinstance(st.body[0].targets[0].target, cst.Name)
                    and st.body[0].targets[0].target.value == name):
                out.add(name)
            break
    return out - _globals(function)


def list_copies(function: cst.FunctionDef, names: Set[str]) -> Set[int]:
    """ids of the `name.copy()` calls that rebind those parameters (rebound_params): compiled, MindSpore's
    list.copy() of a list argument gives something else ("'int' object is not subscriptable" when
    indexed in a loop, measured on 2.10); _ms_compat.list_copy is list(x) on a list."""
    out = set()
    for node in _walk(function.body):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and node.targets[0].target.value in names:
            for sub in _walk(node.value):
                if (isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) and not sub.args
                        and sub.func.attr.value == "copy" and isinstance(sub.func.value, cst.Name)
                        and sub.func.value.value == node.targets[0].target.value):
                    out.add(id(sub))
    return out


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
        stack.extend(children(n))


_BUILDING = frozenset({"__init__", "reset_parameters", "_reset_parameters", "_init_weights", "init_weights"})


def graph_functions(module: cst.Module, torch_heads: Set[str], cell_classes: Set[str], reads) -> Set[str]:
    """Module-level functions that may run inside a compiled graph: those that use torch (a loss
    function, a helper of a train step), and those a Module's methods or such functions call, by name.
    `reads(node)` lists the names a node reads."""
    functions = {st.name.value: st for st in module.body if isinstance(st, cst.FunctionDef)}
    todo = []
    for st in module.body:
        if isinstance(st, cst.ClassDef) and st.name.value in cell_classes:
            # (what only __init__ and the weight-init methods call builds the model: never in a graph)
            run = [m for m in st.body.body if not (isinstance(m, cst.FunctionDef) and m.name.value in _BUILDING)]
            todo.extend(n for m in run for n in reads(m) if n in functions)
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


def refused_pops(function: cst.FunctionDef, rewritten: Set[int], params: Set[str],
                 rebound: Set[str] = frozenset()) -> dict:
    """{id of a `name.pop()` call: any_item} for the pops of this function (not its nested ones) that
    the rewrite above does not carry: on a parameter (any item refused when compiled) or on a list the
    function builds (a tensor item refused). `name.pop(key)` (a dict) and other receivers are left."""
    v = _AllPops()
    function.body.visit(v)
    local = fresh_lists(function) | set(rebound)
    out = {}
    for call in v.calls:
        name = call.func.value.value
        if id(call) in rewritten:
            continue
        if name in params and name not in rebound:
            out[id(call)] = True
        elif name in local:
            out[id(call)] = False
    return out


def refuse_in_graph(tr, original: cst.Call, result: cst.BaseExpression, any_item: bool) -> cst.BaseExpression:
    """`_ms_compat.graph_pop(result, any_item, where)` (templates/compat_parts/graph_pops.py)."""
    return graph_refusal(tr, "_ms_compat.graph_pop", original, result, cst.Name(str(any_item)))
