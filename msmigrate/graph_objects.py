"""Instances of plain project classes built in a Module's forward (x-transformers'
`LayerIntermediates(...)` dataclass, DETR's `NestedTensor(x, mask)` in the backbone).

Compiled, MindSpore builds such an object through its Python fallback: the tensors it holds, and
the tensors returned or computed next to it, lose their gradient (0, measured on 2.10) and their static
shape ("DynamicSequence does not support dictionary type" further on). So the call becomes
`_ms_compat.graph_object(Cls(...), "Cls", "file:line")`: the object in PyNative; compiling a graph
that reaches it raises MigrationError naming the line (templates/compat_parts/graph_objects.py).
Only classes of the project whose bases are none or `object` (Modules, autograd Functions, named
tuples, enums and exceptions derive from something)."""
from __future__ import annotations

from typing import Optional

import libcst as cst


def plain_class(tr, func: cst.BaseExpression) -> Optional[str]:
    """The class name when `func` names a plain class of the project, else None."""
    qname = tr._qname_any(func)
    if qname is None and isinstance(func, cst.Name) and not any(   # bound by no enclosing function
            func.value in scope.get("shadows", ()) for scope in tr._scopes[1:]):
        qname = f"{tr.module_name}.{func.value}"
    if qname is None:
        return None
    module, _, name = qname.rpartition(".")
    info = tr.index.modules.get(module)
    if info is None or name not in info.classes:
        return None
    bases = info.classes[name]
    if any(b.rpartition(".")[2] != "object" for b in bases) or tr.index.is_cell_class(module, name):
        return None
    return name


def refuse_in_graph(tr, original: cst.Call, result: cst.BaseExpression, cls_name: str) -> cst.BaseExpression:
    return graph_refusal(tr, "_ms_compat.graph_object", original, result, cst.SimpleString(repr(cls_name)))


def graph_refusal(tr, helper: str, original: cst.Call, result: cst.BaseExpression,
                  detail: cst.BaseExpression) -> cst.BaseExpression:
    """`helper(result, detail, "file:line")`: a compat helper that gives the value in PyNative and
    raises MigrationError naming the original line when a compiled graph reaches it."""
    where = f"{tr.module_name}:{tr._line(original)}"
    return cst.Call(func=tr._render_template(helper),
                    args=[cst.Arg(result), cst.Arg(detail), cst.Arg(cst.SimpleString(repr(where)))])
