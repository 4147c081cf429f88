"""Module names the converted code refers to but does not bind.

Mappings and rules emit `ms.`, `nn.`, `ops.`, `mindspore.` and `_ms_compat.` names through
several paths (rendered targets, templates, constants used as values, train-step code); each
path records the import it needs, and one that forgets leaves a NameError for run time. This
read-only pass over the converted module is the safety net: whichever of those names is used
as the root of an attribute (`ms.float32`) and bound nowhere in the file gets its import."""
from __future__ import annotations

from typing import Set

import libcst as cst

from .train_loop import walk
from .visitor_bases import BindingTargets

EMITTED_ROOTS = ("ms", "nn", "ops", "mindspore", "_ms_compat")


class _Refs(BindingTargets):
    # every name the file binds anywhere: targets, `as` names, defs, parameters, global/nonlocal
    binders = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.AsName, cst.NamedExpr,
               cst.FunctionDef, cst.ClassDef, cst.Param, cst.NameItem)

    def __init__(self) -> None:
        self.roots: Set[str] = set()
        self.bound: Set[str] = set()
        self.star = False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        value = node.value
        if isinstance(value, cst.Name):
            self.roots.add(value.value)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.bound.add(alias.asname.name.value)
            else:
                head = alias.name
                while isinstance(head, cst.Attribute):
                    head = head.value
                if isinstance(head, cst.Name):
                    self.bound.add(head.value)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            self.star = True
            return
        for alias in node.names:
            name = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(name, cst.Name):
                self.bound.add(name.value)

    def bind(self, target, value) -> None:
        if isinstance(target, cst.Name):
            self.bound.add(target.value)


def unbound_roots(module: cst.Module) -> Set[str]:
    """The EMITTED_ROOTS the module uses as `name.attr` without binding them anywhere (none when
    a star import might bind them)."""
    refs = _Refs()
    walk(module, refs)
    if refs.star:
        return set()
    return {n for n in EMITTED_ROOTS if n in refs.roots and n not in refs.bound}
