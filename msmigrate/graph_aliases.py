"""A list or dict that two holders share (two names, a name and a tuple, list or dict, an attribute, a
loop's target), changed in place through one of them inside code GRAPH mode compiles.

Compiled, MindSpore 2.10 keeps lists and dicts as values: a change reaches the name it was made
through and nothing else (measured, silently each time): `m = l; l.append(x)` leaves `len(m)` 1 where
Python says 2; so do `m.append` (then `len(l)` 1), extend, insert, `l += [x]`, `l[0] = v`,
`d['k'] = v`, `a = b = []`, `t = (l, 1)`, `ls = [l]`, `hs.append(l)`, `for m in (a, b): m.append(x)`
(a and b stay as they were), and `l = self.cache; l.append(x)` (self.cache keeps its length). A pop
there is no rewrite either (graph_pops.py's `l = l[:-1]` would leave the other holder as it was in
PyNative too). No
rewrite gives one object two names there, so such a change is refused: it raises MigrationError naming
the original line when a compiled graph reaches it, and runs in PyNative (templates/compat_parts/
graph_mutations.py).

Which changes: those of a name whose list or dict another holder may share when the change runs,
judged on one function's body: a holder made before the change, or in a loop around both; or a name
bound to what another name, an attribute, a subscript or a loop hands it (`l = m`, `l = self.cache`,
`for l in lists`). A list built by the function and changed through its one name
(`outs = []; for ...: outs.append(h)`) is no one else's, and neither is one shared only after its last
change (`return outs`, `self.out = outs` after the loop), nor one the name is bound anew to on every way
from the sharing to the change (`groups.append(g); g = []`, `row = []` at the top of each loop turn), nor
a copy (`l[:]`, `list(l)`). A parameter changed in place is refused by
graph_mutations.py; a parameter the function rebinds from itself (`cache = cache or []`) is left as it
is there, and here. Not seen: a holder made by a call (`self.keep(l)` storing it) or by a closure."""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from .graph_mutations import change_receiver
from .visitor_bases import ScopeLocalVisitor, single_targets

_DISPLAYS = (cst.Tuple, cst.List, cst.Set)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp)
# methods whose arguments the receiver keeps (`hs.append(l)`: hs holds l)
_KEEPING = frozenset({"append", "extend", "insert", "update", "setdefault"})


def _held(expr: cst.BaseExpression) -> Set[str]:
    """The names whose object the value of `expr` is, or a container built here holds."""
    if isinstance(expr, cst.Name):
        return {expr.value}
    if isinstance(expr, cst.IfExp):
        return _held(expr.body) | _held(expr.orelse)
    if isinstance(expr, cst.BooleanOperation):
        return _held(expr.left) | _held(expr.right)
    if isinstance(expr, cst.NamedExpr):
        return _held(expr.value)
    out: Set[str] = set()
    if isinstance(expr, _DISPLAYS):
        for el in expr.elements:
            if isinstance(el, cst.Element):
                out |= _held(el.value)
    elif isinstance(expr, cst.Dict):
        for el in expr.elements:
            if isinstance(el, cst.DictElement):
                out |= _held(el.key) | _held(el.value)
    elif isinstance(expr, _COMPREHENSIONS):
        out = _held(expr.elt)
    elif isinstance(expr, cst.DictComp):
        out = _held(expr.value)
    elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Multiply)):
        # `[l] * 3`, `[l] + rest` hold l; `l + [x]` is a new list of l's items
        for side in (expr.left, expr.right):
            if not isinstance(side, (cst.Name, cst.IfExp, cst.BooleanOperation)):
                out |= _held(side)
    return out


def _handed(expr: Optional[cst.BaseExpression], name: str) -> bool:
    """A value bound to `name` that may be an object something else holds: another name, an attribute, a
    subscript (`l = m`, `l = self.cache`, `l = lists[0]`, through `if`/`or`). A call's result, a display,
    an operation: a new object; `name` itself (`cache = cache or []`): left as it is."""
    if isinstance(expr, cst.Name):
        return expr.value != name and expr.value not in ("None", "True", "False")
    if isinstance(expr, cst.Attribute):
        return True
    if isinstance(expr, cst.Subscript):         # `{...}[key]`: an item of a display built here; `l[:]` a copy
        return not isinstance(expr.value, _DISPLAYS + (cst.Dict, cst.Call)) and \
            not any(isinstance(el.slice, cst.Slice) for el in expr.slice)
    if isinstance(expr, cst.IfExp):
        return _handed(expr.body, name) or _handed(expr.orelse, name)
    if isinstance(expr, cst.BooleanOperation):
        return _handed(expr.left, name) or _handed(expr.right, name)
    if isinstance(expr, cst.NamedExpr):
        return _handed(expr.value, name)
    return False


def _string_key(sub: cst.Subscript) -> bool:
    """`d['k']`: a dict's (no tensor takes a string key)."""
    return len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index) and \
        isinstance(sub.slice[0].slice.value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString))


def _built(expr: Optional[cst.BaseExpression]) -> bool:
    """A list or dict built here: a display, a comprehension, list()/dict(), `[...] * n`."""
    if isinstance(expr, (cst.List, cst.Dict, cst.ListComp, cst.DictComp)):
        return True
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
        return expr.func.value in ("list", "dict")
    return isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply) and \
        isinstance(expr.left, cst.List)


# (position, the compound statements around it: (id, is a loop) from the outermost)
Event = Tuple[int, Tuple[Tuple[int, bool], ...]]
_BLOCKS = (cst.For, cst.While, cst.If, cst.Try, cst.With)


class _Events(ScopeLocalVisitor):
    """For one function body, per name: where another holder may come to share its object, the names
    bound to a list or dict built here, and its in-place changes."""

    def __init__(self) -> None:
        self.pos = 0
        self.blocks: List[Tuple[int, bool]] = []
        self.shared: Dict[str, List[Event]] = {}
        self.built: Dict[str, List[Event]] = {}
        self.changes: List[Tuple[str, Event, cst.CSTNode, str, bool]] = []
        self.statements: Set[int] = set()

    def _at(self) -> Event:
        return self.pos, tuple(self.blocks)

    def _share(self, name: str) -> None:
        self.shared.setdefault(name, []).append(self._at())

    def _holders(self, value: cst.BaseExpression, but: Optional[str] = None) -> None:
        """Every name `value` holds (but `but`) is shared from here on."""
        for name in _held(value) - {but}:
            self._share(name)

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.pos += 1
        if isinstance(node, _BLOCKS):
            self.blocks.append((id(node), isinstance(node, (cst.For, cst.While))))
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if self.blocks and self.blocks[-1][0] == id(original_node):
            self.blocks.pop()
        super().on_leave(original_node)

    def _bind(self, target: cst.BaseExpression, value: Optional[cst.BaseExpression], many: bool) -> None:
        """One assignment's target: `value` the whole value (None: a part of it, unpacked)."""
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) and \
                len(target.elements) == len(value.elements) and \
                not any(isinstance(el, cst.StarredElement) for el in list(target.elements) + list(value.elements)):
            for t, v in zip(target.elements, value.elements):    # `a, b = [], []`: pairwise
                self._bind(t.value, v.value, many)
            return
        for part in single_targets(target):
            if not isinstance(part, cst.Name):
                continue
            whole = value if part is target else None
            if many or _handed(whole, part.value) or whole is None and _handed(value, part.value):
                self._share(part.value)            # `a = b = []`, `l = m`, `l, k = pair`
            if whole is not None and _built(whole):
                self.built.setdefault(part.value, []).append(self._at())

    def leave_Assign(self, node: cst.Assign) -> None:
        one = node.targets[0].target if len(node.targets) == 1 else None
        self._holders(node.value, but=one.value if isinstance(one, cst.Name) else None)
        for t in node.targets:
            self._bind(t.target, node.value, len(node.targets) > 1)
            sub = t.target
            if isinstance(sub, cst.Subscript) and isinstance(sub.value, cst.Name):
                self._change(sub.value.value, node, f"{sub.value.value}[...] =", _string_key(sub))

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._holders(node.value, but=node.target.value if isinstance(node.target, cst.Name) else None)
            self._bind(node.target, node.value, False)

    def leave_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._holders(node.value, but=node.target.value if isinstance(node.target, cst.Name) else None)
        self._bind(node.target, node.value, False)

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        target = node.target
        op = cst.Module([]).code_for_node(node.operator).strip()
        if isinstance(target, cst.Name):
            self._holders(node.value, but=target.value)
            if isinstance(node.operator, (cst.AddAssign, cst.MultiplyAssign)):   # list += / *=
                self._change(target.value, node, f"{target.value} {op}",
                             isinstance(node.value, (cst.List, cst.ListComp)))
        elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            self._change(target.value.value, node, f"{target.value.value}[...] {op}", _string_key(target))

    def visit_For(self, node: cst.For) -> None:
        if isinstance(node.iter, _DISPLAYS + _COMPREHENSIONS):
            self._holders(node.iter)            # `for m in (a, b)`: m shares a, then b
        for part in single_targets(node.target):
            if isinstance(part, cst.Name):
                self._share(part.value)         # an item of something else

    def visit_Expr(self, node: cst.Expr) -> None:
        self.statements.add(id(node.value))

    def leave_Call(self, node: cst.Call) -> None:
        name = change_receiver(node, id(node) in self.statements)
        if name is None and isinstance(node.func, cst.Attribute) and node.func.attr.value == "pop" and \
                isinstance(node.func.value, cst.Name):
            name = node.func.value.value     # a list's or dict's (no tensor has pop)
        if name is None or not node.args and node.func.attr.value in _KEEPING | {"remove"}:
            return              # `hook.remove()`: no list's (list.remove takes the item)
        if node.func.attr.value in _KEEPING:
            for arg in node.args:
                self._holders(arg.value, but=name)
        self._change(name, node, f"{name}.{node.func.attr.value}", True)

    def _change(self, name: str, node: cst.CSTNode, what: str, of_list: bool) -> None:
        """`of_list`: the change is a list's or dict's whatever the name holds (a list method, `d['k'] =`,
        `l += [x]`); otherwise only on a name bound to a list or dict built here (a tensor's own)."""
        self.changes.append((name, self._at(), node, what, of_list))


def _overlaps(shared: Event, change: Event, rebound: List[Event]) -> bool:
    """The holder may still share the object when the change runs: made before it, or after it in a loop around
    both; unless the name is bound to a new list or dict (`rebound`) on every way from the one to the other."""
    common = [b for b in shared[1] if b[1] and b in change[1]]     # the loops around both, outermost first
    if not (shared[0] < change[0] or common):
        return False
    for at in rebound:
        if at[1] == shared[1] and shared[0] < at[0] and not shared[0] < change[0] < at[0]:
            return False        # rebound after the holder is made, in its block (`groups.append(g); g = []`)
        if at[1] != change[1][:len(at[1])] or at[0] >= change[0]:
            continue            # not before the change in a block around it
        if shared[0] < at[0]:
            return False        # `m = l; l = []; l.append(x)`
        if shared[0] > change[0] and common and common[-1] in at[1]:
            return False        # each turn of the loop rebinds it before the change: `row = []` at its top
    return True


def shared_changes(function: cst.FunctionDef) -> Dict[int, str]:
    """{id of a call, assignment or augmented assignment: "l.append" / "l[...] =" / "l +="} for the in-place
    changes of a list or dict that another holder may share. A store by an index or `+=` of no list counts
    on a name bound to a list or dict built here only (on a tensor it is the tensor's own)."""
    v = _Events()
    function.body.visit(v)
    out: Dict[int, str] = {}
    for name, at, node, what, of_list in v.changes:
        if not of_list and name not in v.built:
            continue
        if any(_overlaps(s, at, v.built.get(name, [])) for s in v.shared.get(name, ())):
            out[id(node)] = what
    return out
