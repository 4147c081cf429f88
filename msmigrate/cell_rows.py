"""In-place changes of a tensor's rows in the code a Cell's construct runs:
`for row in x: row.add_(1)`, `for t, m in zip(x, mean): t.sub_(m)`, `for i, h in enumerate(x): h.mul_(w)`.

torch's rows are views of x, so x changes. The converter rewrites a whole-statement in-place call as the
rebinding `row = <out-of-place form>` (inplace_forms.py), which changes the row's copy only: x stays as it
was, silently. Outside Cell code `_ms_compat.rows_in_place` writes each row back (inplace_holders.py); in
construct an in-place write would change a tensor an op saved for the backward pass, and GRAPH mode has no
generators. So here each statement rebinding the row is followed by `x = _ms_compat.row_replaced(x, i, row)`,
an out-of-place copy of x with row i replaced (`ops.where` on a row mask: GRAPH-compatible, differentiable),
and the loop counts its rows with enumerate(). Where the new x would not reach what torch changes (x is a
parameter the function has not rebound, x took its tensor from another holder, another name holds x, the row
name is rebound in the loop) the in-place call is a raising TODO instead.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from .fast_visit import children
from . import train_loop as TL
from .callsite import code_of
from .inplace_holders import target_names

# why a row's in-place change cannot be written back (the reason the TODO gives)
WHY = ("in place on `{row}`, a row of `{source}` in torch (a view), which MindSpore copies: {reason}; compute "
       "the new rows and build the tensor from them (ops.stack)")


def binding_loop(loops: List[cst.CSTNode], name: str) -> Optional[cst.For]:
    """The innermost enclosing `for` loop (as written) whose target binds `name`."""
    for lp in reversed(loops):
        if isinstance(lp, cst.For) and name in target_names(lp.target):
            return lp
    return None


def row_source(loop: cst.For, name: str) -> Tuple[Optional[cst.BaseExpression], Optional[str], Optional[str]]:
    """(what `name` is a row of, the index name the loop already has (enumerate's) or None, why not known)."""
    it, target = loop.iter, loop.target
    if isinstance(target, cst.Name):
        return it, None, None
    parts = [el.value for el in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else []
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value in ("zip", "enumerate"):
        args = [a for a in it.args if a.keyword is None and not a.star]
        if len(args) != len(it.args):
            return None, None, "the loop's iterable takes keywords or unpacks its arguments"
        if it.func.value == "enumerate":
            if len(args) == 1 and len(parts) == 2 and isinstance(parts[0], cst.Name) \
                    and isinstance(parts[1], cst.Name) and parts[1].value == name:
                return args[0].value, parts[0].value, None
        elif len(parts) == len(args):
            for p, a in zip(parts, args):
                if isinstance(p, cst.Name) and p.value == name:
                    return a.value, None, None
    return None, None, "msmigrate does not see which tensor it is a row of"


def _assigned_before(fn: cst.FunctionDef, loop: cst.For, name: str) -> bool:
    """A statement of the function's body before the one holding `loop` binds `name` (`x = x.clone()`)."""
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ()
    for st in body:
        if _holds(st, loop):
            return False
        if name in TL.assigns(st):
            return True
    return False


def _holds(node: cst.CSTNode, target: cst.CSTNode) -> bool:
    if node is target:
        return True
    return any(_holds(c, target) for c in children(node))


class _Aliases(cst.CSTVisitor):
    """Whether another name or container takes the tensor `name` holds (`y = x`, `outs.append(x)`, `[x, y]`)."""

    def __init__(self, name: str) -> None:
        self.name, self.found = name, False

    def _bare(self, value: cst.CSTNode) -> bool:
        return isinstance(value, cst.Name) and value.value == self.name

    def visit_Assign(self, node: cst.Assign) -> None:
        self.found |= self._bare(node.value)

    def visit_Element(self, node: cst.Element) -> None:
        self.found |= self._bare(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("append", "extend", "insert"):
            self.found |= any(self._bare(a.value) for a in node.args)


def problem(fn: Optional[cst.FunctionDef], loop: cst.For, row: str, params: Set[str], held: Set[str]
            ) -> Optional[str]:
    """Why the rows of the loop binding `row` cannot be written back (None: they can)."""
    source, _, unknown = row_source(loop, row)
    where = "its iterable"
    if source is not None:
        where = code_of(source).strip()
    if unknown is not None:
        reason = unknown
    elif row in TL.assigns(loop.body):
        reason = f"`{row}` is rebound in the loop"
    else:
        reason = _source_reason(fn, loop, source, params, held)
    return None if reason is None else WHY.format(row=row, source=where, reason=reason)


def _source_reason(fn: Optional[cst.FunctionDef], anchor: cst.CSTNode, source: cst.BaseExpression,
                   params: Set[str], held: Set[str]) -> Optional[str]:
    """Why a new value of `source` (rebound at `anchor`) would not reach what torch changes; None: it would."""
    if not isinstance(source, cst.Name):
        return "a new value of it would not reach where torch changes it"
    if source.value in params and (fn is None or not _assigned_before(fn, anchor, source.value)):
        return "it is a parameter, whose change in torch reaches the caller's tensor"
    if source.value in held:
        return "it took its tensor from another holder, which a new value would not reach"
    v = _Aliases(source.value)
    if fn is not None:
        TL.walk(fn.body, v)
    return "another name or container holds it too" if v.found else None


def _range_index(loops: List[cst.CSTNode], name: str) -> bool:
    """`name` is the target of an enclosing `for name in range(...)`: a Python int."""
    for lp in reversed(loops):
        if isinstance(lp, cst.For) and name in target_names(lp.target):
            return isinstance(lp.target, cst.Name) and isinstance(lp.iter, cst.Call) \
                and isinstance(lp.iter.func, cst.Name) and lp.iter.func.value == "range"
    return False


def item_row(call: cst.Call, loops: List[cst.CSTNode]) -> Optional[Tuple[str, str]]:
    """(x, i) of `x[i].op_(...)` with i an integer literal or a `range()` loop's variable: the row i of x
    (None for slices, tensors of indices, several indices)."""
    recv = call.func.value if isinstance(call.func, cst.Attribute) else None
    if not (isinstance(recv, cst.Subscript) and isinstance(recv.value, cst.Name) and len(recv.slice) == 1
            and isinstance(recv.slice[0].slice, cst.Index)):
        return None
    idx = recv.slice[0].slice.value
    literal = idx.expression if isinstance(idx, cst.UnaryOperation) and isinstance(idx.operator, cst.Minus) else idx
    if isinstance(literal, cst.Integer) or isinstance(idx, cst.Name) and _range_index(loops, idx.value):
        return recv.value.value, code_of(idx).strip()
    return None


def item_problem(fn: Optional[cst.FunctionDef], call: cst.Call, x: str, params: Set[str], held: Set[str]
                 ) -> Optional[str]:
    """Why `x[i].op_(...)` cannot rebind x to its copy with row i replaced (None: it can)."""
    reason = _source_reason(fn, call, cst.Name(x), params, held)
    return None if reason is None else WHY.format(row=code_of(call.func.value).strip(), source=x, reason=reason)


class _Bindings(cst.CSTVisitor):
    """The values `name` is bound to by plain assignments (`c = self.count`)."""

    def __init__(self, name: str) -> None:
        self.name, self.values = name, []

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(isinstance(t.target, cst.Name) and t.target.value == self.name for t in node.targets):
            self.values.append(node.value)


# the tensor of an attribute or a container's entry (`c = self.count`, `mu = state.get("mu")`)
_HANDING_OUT = ("get", "setdefault", "pop")


def attribute_problem(fn: Optional[cst.FunctionDef], name: str) -> Optional[str]:
    """`c = self.count; c.add_(1)` in Cell code (no loop row): torch changes the attribute's (or entry's) tensor,
    which the rebinding of `c` would leave as it was; why, or None where `name` took no such tensor."""
    if fn is None:
        return None
    v = _Bindings(name)
    TL.walk(fn.body, v)
    for value in v.values:
        if isinstance(value, cst.Attribute) or (
                isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in _HANDING_OUT):
            return (f"in place on `{name}`, which holds the tensor of `{code_of(value).strip()}` in torch: the "
                    "change reaches it there, and a new value of the local name would not; write the new value "
                    "to the attribute or entry itself")
    return None


class _WriteBack(cst.CSTTransformer):
    """After each statement binding a changed row: `x = _ms_compat.row_replaced(x, i, row)`."""

    def __init__(self, rows: Dict[str, Tuple[str, str]], compat: str) -> None:
        self.rows, self.compat = rows, compat

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def leave_SimpleStatementLine(self, original, updated):
        bound = [r for r in self.rows if r in TL.assigns(original)]
        if not bound:
            return updated
        lines = [updated]
        for r in bound:
            source, index = self.rows[r]
            lines.append(cst.parse_statement(f"{source} = {self.compat}.row_replaced({source}, {index}, {r})\n"))
        return cst.FlattenSentinel(lines)


def write_back(loop: cst.For, original: cst.For, rows: Set[str], taken: Set[str], compat: str) -> cst.For:
    """The converted `loop` (its in-place calls on `rows` now rebindings) writing each changed row back into
    the tensor it is a row of, counting its rows with enumerate() where it did not."""
    found: Dict[str, Tuple[str, str]] = {}
    index: Optional[str] = None
    for r in sorted(rows):
        source, given, _ = row_source(original, r)
        if given is None:
            if index is None:
                index = TL._unique(f"{r}_index", set(taken))
            given = index
        found[r] = (code_of(source).strip(), given)
    if index is not None:    # `for row in x` -> `for row_index, row in enumerate(x)`
        target = loop.target
        if isinstance(target, (cst.Tuple, cst.List)):
            target = target.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        loop = loop.with_changes(
            target=cst.Tuple([cst.Element(cst.Name(index)), cst.Element(target)], lpar=[], rpar=[]),
            iter=cst.Call(func=cst.Name("enumerate"), args=[cst.Arg(loop.iter)]))
    return loop.with_changes(body=loop.body.visit(_WriteBack(found, compat)))
