"""Lists and dicts changed in place inside code GRAPH mode compiles (construct, a method it calls, a
module-level helper), where MindSpore 2.10 computes something else than Python, silently (measured):

- `l.sort(...)` and `l.remove(v)` on a list leave the list as it was. `l[:] = sorted(l, ...)` and
  `l[:] = _ms_compat.list_removed(l, v)` compile right, and are the same change in Python.
- `v = d.pop('k'[, default])` on a dict (a local one, or **kwargs): GRAPH mode stops compiling, naming no
  line ("For 'TupleGetItem', input[0] should be Sequence"); `v = d.get('k', default)` (or `d['k']`) and
  `d = _ms_compat.dict_without(d, 'k')` compile, and are the same for the function's own dict.
- a function that changes a list or dict it was given (`acc.append(h)`, `cache.update(k=v)`,
  `cache['k'] = v`, `names.sort()`): compiled, the function changes a copy; the caller's list or dict
  stays as it was (`self.collect(x, acc)` then `len(acc)`: the old length). Such a change is refused there: it raises
  MigrationError naming the original line when a compiled graph reaches it, and runs in PyNative.
  `**kwargs` is the function's own dict, and a parameter the function rebinds may hold its own list:
  both are left as they are.
- `row.append(i), col.append(j)`: changes written as one tuple, an expression statement (pytorch-fm's
  InnerProductNetwork and AttentionalFactorizationMachine): the lists stay empty (`x[:, row]` then stops
  compiling, "tuple index can't be empty"). Each call a statement of its own on the line, `row.append(i);
  col.append(j)`, is the same in Python and compiles right."""
from __future__ import annotations

from typing import Dict, Optional, Set, Tuple

import libcst as cst

from .graph_objects import graph_refusal
from .train_loop import assigns
from .visitor_bases import ScopeLocalVisitor

# list and dict methods that change the object in place and that no tensor has; sort too, as a statement
# of its own with list.sort's keywords only (Tensor.sort(dim, descending=...) returns a new tensor)
_CHANGES = frozenset({"append", "extend", "insert", "remove", "clear", "update", "reverse", "setdefault"})
_SORT_KEYWORDS = frozenset({"key", "reverse"})


def change_receiver(call: cst.Call, statement: bool) -> Optional[str]:
    """The receiver's name when `call` is `name.<method that changes it>(...)` (`statement`: the whole
    of an expression statement)."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
        return None
    if func.attr.value == "sort":
        if not statement or any(a.keyword is None or a.keyword.value not in _SORT_KEYWORDS for a in call.args):
            return None
    elif func.attr.value not in _CHANGES:
        return None
    return func.value.value


class _Changes(ScopeLocalVisitor):
    """The calls and stores that change a name in place, in one function's own body (not in nested functions)."""

    def __init__(self) -> None:
        self.calls = []
        self.statements: Set[int] = set()

    def visit_Expr(self, node: cst.Expr) -> None:
        self.statements.add(id(node.value))

    def visit_Assign(self, node: cst.Assign) -> None:
        """`cache['k'] = v`: a store by a string key (a dict's; no tensor takes one)."""
        for t in node.targets:
            sub = t.target
            if (isinstance(sub, cst.Subscript) and isinstance(sub.value, cst.Name) and len(sub.slice) == 1
                    and isinstance(sub.slice[0].slice, cst.Index)
                    and isinstance(sub.slice[0].slice.value, (cst.SimpleString, cst.FormattedString))):
                self.calls.append((sub.value.value, node))

    def visit_Call(self, node: cst.Call) -> None:
        name = change_receiver(node, id(node) in self.statements)
        if name is not None:
            self.calls.append((name, node))


def refused_changes(function: cst.FunctionDef) -> Dict[int, str]:
    """{id of a call or assignment: "name.method" / "name[...] ="} for the in-place changes of a positional
    or keyword parameter that the function never rebinds (a rebound one may hold a list of its own)."""
    p = function.params
    params = {q.name.value for q in list(p.params) + list(p.kwonly_params) + list(p.posonly_params)}
    params -= {"self", "cls"}
    bound = assigns(function.body)
    v = _Changes()
    function.body.visit(v)
    out = {}
    for name, node in v.calls:
        if name in params and name not in bound:
            out[id(node)] = f"{name}.{node.func.attr.value}" if isinstance(node, cst.Call) else f"{name}[...] ="
    return out


def _dict_pop(value: cst.BaseExpression) -> Optional[str]:
    """The receiver's name when `value` is `name.pop('key')` / `name.pop('key', default)` (a string key: a dict's)."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "pop"
            and isinstance(value.func.value, cst.Name) and len(value.args) in (1, 2)):
        return None
    if any(a.keyword is not None or a.star for a in value.args) or \
            not isinstance(value.args[0].value, (cst.SimpleString, cst.FormattedString)):
        return None
    return value.func.value.value


class _DictPops(ScopeLocalVisitor):
    def __init__(self) -> None:
        self.found = []

    def visit_Assign(self, node: cst.Assign) -> None:
        name = _dict_pop(node.value)
        if name is not None and len(node.targets) == 1:
            self.found.append((name, node))


def own_dict_pops(function: cst.FunctionDef, shared: Set[int] = frozenset()) -> Set[int]:
    """ids of the assignments `v = d.pop('k'...)` whose dict is the function's own: its **kwargs, or a name
    that is no parameter (a parameter's caller would see the pop: left as it is), nor a dict another holder
    shares (`shared`: ids of such pops, graph_aliases.py)."""
    p = function.params
    given = {q.name.value for q in list(p.params) + list(p.kwonly_params) + list(p.posonly_params)}
    if isinstance(p.star_arg, cst.Param):
        given.add(p.star_arg.name.value)
    v = _DictPops()
    function.body.visit(v)
    return {id(node) for name, node in v.found if name not in given and id(node.value) not in shared}


def split_dict_pop(assign: cst.Assign, compat: str) -> Optional[cst.FlattenSentinel]:
    """`v = d.pop('k', default)` -> `v = d.get('k', default); d = <compat>.dict_without(d, 'k')`
    (`d['k']` without a default: KeyError as pop's); None when the statement is no longer of that form."""
    name = _dict_pop(assign.value)
    if name is None:
        return None
    call = assign.value
    key = call.args[0].value
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if len(call.args) == 2:
        read = cst.Call(func=cst.Attribute(value=cst.Name(name), attr=cst.Name("get")),
                        args=[cst.Arg(key, comma=comma), cst.Arg(call.args[1].value)])
    else:
        read = cst.Subscript(value=cst.Name(name), slice=[cst.SubscriptElement(cst.Index(key))])
    rest = cst.Call(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name("dict_without")),
                    args=[cst.Arg(cst.Name(name), comma=comma), cst.Arg(key)])
    return cst.FlattenSentinel([assign.with_changes(value=read, semicolon=cst.MaybeSentinel.DEFAULT),
                                cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=rest,
                                           semicolon=assign.semicolon)])


ARGUMENT_CHANGE = "_ms_compat.graph_argument_change"
SHARED_CHANGE = "_ms_compat.graph_shared_change"     # a list another holder shares: graph_aliases.py


def refuse_in_graph(tr, original: cst.CSTNode, result: cst.BaseExpression, refusal: Tuple[str, str]
                    ) -> cst.BaseExpression:
    """`_ms_compat.graph_argument_change(result, "acc.append", "file:line")` (or graph_shared_change: refusal
    is (helper, what); templates/compat_parts/graph_mutations.py)."""
    helper, what = refusal
    return graph_refusal(tr, helper, original, result, cst.SimpleString(repr(what)))


def sort_remove_as_slice_store(expr: cst.Expr, compat: str, params: Set[str]) -> Optional[cst.Assign]:
    """`l.sort(...)` -> `l[:] = sorted(l, ...)`; `l.remove(v)` -> `l[:] = <compat>.list_removed(l, v)`; None
    for any other statement, a receiver that is a parameter (refused above), or sort with a positional
    argument (a tensor's)."""
    call = expr.value
    if not isinstance(call, cst.Call):
        return None
    name = change_receiver(call, True)
    method = call.func.attr.value if name is not None else None
    if name is None or name in params or method not in ("sort", "remove"):
        return None
    if any(a.star for a in call.args):
        return None
    receiver = cst.Name(name)
    if method == "sort":
        value = cst.Call(func=cst.Name("sorted"),
                         args=[cst.Arg(receiver, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                               if call.args else cst.Arg(receiver), *call.args])
    else:
        if len(call.args) != 1 or call.args[0].keyword is not None:
            return None
        value = cst.Call(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name("list_removed")),
                         args=[cst.Arg(receiver, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                               call.args[0]])
    whole = cst.Subscript(value=cst.Name(name), slice=[cst.SubscriptElement(cst.Slice(lower=None, upper=None))])
    return cst.Assign(targets=[cst.AssignTarget(whole)], value=value, semicolon=expr.semicolon)


def tuple_of_changes(line: cst.SimpleStatementLine) -> Optional[cst.SimpleStatementLine]:
    """`a.append(i), b.append(j)` as a statement -> `a.append(i); b.append(j)` (see the module's docstring); None where
    the line is no tuple of calls one of which changes a list or dict."""
    if len(line.body) != 1 or not isinstance(line.body[0], cst.Expr):
        return None
    value = line.body[0].value
    if not (isinstance(value, cst.Tuple) and value.elements
            and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Call) for e in value.elements)
            and any(change_receiver(e.value, True) is not None for e in value.elements)):
        return None
    calls = [e.value for e in value.elements]
    return line.with_changes(body=[cst.Expr(value=c, semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" "))
                                            if k < len(calls) - 1 else cst.MaybeSentinel.DEFAULT)
                                   for k, c in enumerate(calls)])
