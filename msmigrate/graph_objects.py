"""Instances of plain project classes built in a Module's forward (x-transformers'
`LayerIntermediates(...)` dataclass, DETR's `NestedTensor(x, mask)` in the backbone), or in a
module-level function forward calls (`def split(h): return Pair(h, ...)`: compiled into the same graph,
measured the same).

Compiled, MindSpore builds such an object through its Python fallback: the tensors it holds, and
the tensors returned or computed next to it, lose their gradient (0, measured on 2.10) and their static
shape ("DynamicSequence does not support dictionary type" further on). So the call becomes
`_ms_compat.graph_object(Cls(...), "Cls", "file:line")`: the object in PyNative; compiling a graph
that reaches it raises MigrationError naming the line (templates/compat_parts/graph_objects.py).
Only classes of the project whose bases are none or `object`, and the project's named tuples
(`namedtuple(...)`, `class P(NamedTuple)`: measured the same, value right and gradients 0 with no error);
Modules, autograd Functions, enums and exceptions derive from something else.
A `collections.namedtuple` with literal fields that no module of the project reads by name (no `r.field`,
getattr, `_asdict`, isinstance: ProjectIndex.record_as_tuple), built with every field, becomes
`_ms_compat.graph_record(Cls, (values...))` instead: the record in PyNative, the plain tuple in a compiled
graph (gradients kept; unpacking, indexing and returning see no difference). vector-quantize's LFQ `Return`.

`with ctx:` / `with self.ctx:` in construct, over an object made elsewhere: MindSpore enters only
jit_class objects, and otherwise stops compiling with an error that names no line of the program; a
statement before the `with`, `_ms_compat.graph_context(ctx, "file:line")`, raises MigrationError naming it
(nothing in PyNative). A call in the `with` line builds its object there (a jit_class of _ms_compat, or
MindSpore's own refusal) and is not checked.

No graph-safe form keeps attribute access (measured on 2.10, tests/parity/test_graph_objects.py): a
jit_class instance built inside a graph takes constants only ("all arguments are required to be
constants"), and attributes set on one built there read back as its __init__ left them;
a namedtuple built there compiles but its gradients are 0. Tuples, lists and dicts built in the graph keep
their gradients, so project record classes become dicts there (graph_records.py: `graph_record_dict(Cls,
{...})`, reads `graph_field(E, "f")`, methods `graph_record_method(E, "m", Cls.m, ...)`), measured on 2.10:
- a helper deciding `isinstance(obj, dict)` while compiling reads `obj["f"]` of a graph dict and `getattr`
  otherwise (a tensor's `shape` through it is the tensor's); `Cls.m(d)` runs a record's method on the dict;
  a Cell returning a dict (None values included) hands Python a dict; gradients through all of it equal torch's.
- A dict or list built in a graph is a value: `d["f"] = v` rebinds d alone; a list holding d, a function or a
  sub-Cell that writes its argument, a loop variable over a list of them, `list.append` through an alias, all
  leave the other holder's old value (silently). So a field write is rewritten only where no other holder
  shares the name since it was bound to a call's result (`n = graph_field_set(n, "f", v)`), and otherwise
  raises MigrationError at the write when compiled on a dict; `n.f.append(x)`, `n.f[i] = v`, setattr, `n.f +=`
  keep the class's refusal at its construction.
- copy.copy / copy.deepcopy of a graph dict: value right, every gradient 0 (Python fallback, warnings only):
  `graph_copy` gives the dict itself (a value already).
- A helper's dead branch is parsed: `raise MigrationError` there stops compiling ("Unsupported exception type"),
  so refusals go through the constexpr `_refuse_compiled`.
Measured by hand on the converted programs (issue 12): with x-transformers' two dataclasses as dicts and their
attribute accesses as subscripts, TransformerWrapper compiles, matches torch (verify GRAPH, 4e-7) and its GRAPH
gradients equal PyNative's; with DETR's NestedTensor so, compiling gets past the backbone and stops in
SetCriterion (`losses.update(...)`, models/detr.py:237: "The pointer[dict] is null"; not the update: the loss dicts
are built from HungarianMatcher's scipy result, which the graph runs through its fallback; host_draws.py now stops
there with MigrationError naming models/matcher.py:81). x-transformers' own
writes are shared by the field-insensitive, path-insensitive judgement (`intermediates.append(inter)` a turn
earlier where a turn may not rebind inter; `out = (x, intermediates)` in one branch before writes after the
branches), so its GRAPH run stops at such a write instead (graph_records.py says what is not followed). Two
limits found by hand: a dict record returned by a sub-Cell and then given a str value (`inter.layer_type = 'a'`)
fails when the graph runs ("'tuple' object does not support item assignment"), and a field named like a dict
method (`Intermediates.values`) would make a missed access silent (`obj.values` is a method): graph code reads
every field through graph_field, and outside it graph_field refuses a dict for such a name."""
from __future__ import annotations

from typing import Optional

import libcst as cst


# `class Out(NamedTuple)`: a named tuple built in a graph goes through the fallback too (measured on 2.10:
# value right, every gradient through it 0, no error); `class B(namedtuple(...))` has no dotted base (a call).
_NAMED_TUPLE_BASES = ("typing.NamedTuple", "typing_extensions.NamedTuple")


def _project_qname(tr, func: cst.BaseExpression) -> Optional[str]:
    qname = tr._qname_any(func)
    if qname is None and isinstance(func, cst.Name) and not any(   # bound by no enclosing function
            func.value in scope.get("shadows", ()) for scope in tr._scopes[1:]):
        qname = f"{tr.module_name}.{func.value}"
    return qname


def record_as_tuple(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.BaseExpression]:
    """`Return(x, indices, loss)` of a project namedtuple whose fields nothing in the project reads by name
    (ProjectIndex.record_as_tuple), every field given in order: `_ms_compat.graph_record(Return, (x, indices,
    loss))`, the record in PyNative and the plain tuple of its values in a compiled graph, where a tuple keeps
    the gradients the namedtuple loses (templates/compat_parts/graph_objects.py). None otherwise."""
    qname = _project_qname(tr, original.func)
    if qname is None:
        return None
    module, _, name = qname.rpartition(".")
    fields = tr.index.record_as_tuple(module, name)
    args = updated.args
    if fields is None or len(args) != len(fields) or any(a.star for a in args) or any(
            a.keyword is not None and a.keyword.value != f for a, f in zip(args, fields)):
        return None
    values = cst.Tuple(elements=[cst.Element(a.value) for a in args] if len(args) != 1 else
                       [cst.Element(args[0].value, comma=cst.Comma())])
    return cst.Call(func=tr._render_template("_ms_compat.graph_record"),
                    args=[cst.Arg(updated.func), cst.Arg(values)])


def plain_class(tr, func: cst.BaseExpression) -> Optional[str]:
    """The class name when `func` names a plain class of the project, else None."""
    qname = _project_qname(tr, func)
    if qname is None:
        return None
    module, _, name = qname.rpartition(".")
    info = tr.index.modules.get(module)
    if info is not None and name in info.named_tuples and name not in info.classes:
        return name     # `Pair = namedtuple("Pair", ...)`: built through the fallback as well
    if info is None or name not in info.classes:
        return None
    bases = info.classes[name]
    if any(b not in _NAMED_TUPLE_BASES and b.rpartition(".")[2] != "object" for b in bases) \
            or tr.index.is_cell_class(module, name):
        return None
    return name


def plain_object_class(index, qname: str) -> bool:
    """`qname` names a plain class of the project (plain_class) that a compiled graph cannot keep as a record
    (graph_records.py's dict, a named tuple's tuple): built there, refuse_in_graph refuses it."""
    module, _, name = qname.rpartition(".")
    info = index.modules.get(module)
    if info is None or (name not in info.classes and name not in info.named_tuples):
        return False
    if name in info.classes and (any(b not in _NAMED_TUPLE_BASES and b.rpartition(".")[2] != "object"
                                     for b in info.classes[name]) or index.is_cell_class(module, name)):
        return False
    return index.graph_record(module, name) is None and index.record_as_tuple(module, name) is None


def refuse_in_graph(tr, original: cst.Call, result: cst.BaseExpression, cls_name: str) -> cst.BaseExpression:
    return graph_refusal(tr, "_ms_compat.graph_object", original, result, cst.SimpleString(repr(cls_name)))


def graph_refusal(tr, helper: str, original: cst.Call, result: cst.BaseExpression,
                  detail: cst.BaseExpression) -> cst.BaseExpression:
    """`helper(result, detail, "file:line")`: a compat helper that gives the value in PyNative and
    raises MigrationError naming the original line when a compiled graph reaches it."""
    where = f"{tr.module_name}:{tr._line(original)}"
    return cst.Call(func=tr._render_template(helper),
                    args=[cst.Arg(result), cst.Arg(detail), cst.Arg(cst.SimpleString(repr(where)))])


def entered_objects_checked(tr, original: cst.With, updated: cst.With) -> list:
    """`_ms_compat.graph_context(ITEM, "module:line")` statements for the items of a `with` in construct
    that are names or attributes (an object made elsewhere); [] outside construct."""
    if not tr._in_forward():
        return []
    where = f"{tr.module_name}:{tr._line(original)}"
    return [cst.SimpleStatementLine(body=[cst.Expr(cst.Call(
        func=tr._render_template("_ms_compat.graph_context"),
        args=[cst.Arg(item.item, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
              cst.Arg(cst.SimpleString(repr(where)))]))])
        for orig, item in zip(original.items, updated.items) if isinstance(orig.item, (cst.Name, cst.Attribute))]
