"""A program's own bindings of the names converted code uses for MindSpore, renamed before conversion.

Converted code reaches MindSpore through `ms`, `nn` and `ops` (`import mindspore as ms`, `from mindspore import
nn, ops`). A program that binds one of them itself (`for key, (ops, params) in table.items()`, `ms = elapsed *
1000`, `from mmcv import ops`) would rebind the converter's import: every later `ops.relu(...)` of the converted
module an AttributeError on the program's value, or worse, a call of the program's object. Where the converted
module imports such a name and the program binds it too, every Name that is the program's own binding is renamed
in that module (`ops` -> `ops_`) and the module is converted again (converter.convert_code); a module whose
conversion imports none of them keeps its names. torch's own `nn` (`import torch.nn as nn`, `from torch import
nn`), which the conversion replaces, stays.

Left alone, as the converter found them: a class body's names (the class's attributes, read as `self.ops`),
attributes, keyword names, and a function's parameter of that name with its reads in that function (callers may
pass it by keyword). A program that rebinds torch's own `nn` is left as it was too."""
from __future__ import annotations

import re
from typing import Set

import libcst as cst

CONVERTER_NAMES = ("ms", "nn", "ops")
_TORCH_PACKAGES = ("torch", "torchvision", "torchaudio", "torchtext", "mindspore")
_WORD = re.compile(r"\b(ms|nn|ops)\b")


def might_bind_converter_names(source: str) -> bool:
    return bool(_WORD.search(source))


def _dotted(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return _dotted(node.value) + "." + node.attr.value
    return ""


def _names_in(target) -> Set[cst.Name]:
    if isinstance(target, cst.Name):
        return {target}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_names_in(e.value) for e in target.elements)) if target.elements else set()
    if isinstance(target, cst.StarredElement):
        return _names_in(target.value)
    return set()


class _Bindings(cst.CSTVisitor):
    """The converter names the program binds outside class bodies and parameters, and those torch's imports bind."""

    def __init__(self) -> None:
        self.bound: Set[str] = set()
        self.torch_bound: Set[str] = set()   # `import torch.nn as nn`: the conversion replaces it
        self._class_body = [False]

    def _bind(self, target) -> None:
        if not self._class_body[-1]:
            self.bound.update(n.value for n in _names_in(target) if n.value in CONVERTER_NAMES)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._class_body.append(True)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._class_body.pop()
        self._bind(node.name)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bind(node.name)
        self._class_body.append(False)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._class_body.pop()

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind(node.name.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = alias.asname.name if alias.asname else cst.Name(_dotted(alias.name).split(".")[0])
            if _dotted(alias.name).split(".")[0] in _TORCH_PACKAGES:
                self.torch_bound.add(name.value)
            else:
                self._bind(name)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = _dotted(node.module) if node.module is not None else ""
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = alias.asname.name if alias.asname else alias.name
            if node.relative or module.split(".")[0] not in _TORCH_PACKAGES:
                self._bind(name)
            elif isinstance(name, cst.Name):
                self.torch_bound.add(name.value)


class _Rename(cst.CSTTransformer):
    def __init__(self, renames) -> None:
        self.renames = renames
        self._keep: Set[int] = set()     # ids of Names that are not references (attributes, keywords, class bodies)
        self._class_body = [False]
        self._params = [set()]           # per function: the names its parameters bind

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._keep.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._keep.add(id(node.keyword))

    def visit_ImportAlias(self, node: cst.ImportAlias) -> bool:
        return False       # handled whole in leave_ImportAlias

    def leave_ImportAlias(self, original: cst.ImportAlias, updated: cst.ImportAlias) -> cst.ImportAlias:
        bound = original.asname.name.value if original.asname else _dotted(original.name).split(".")[0]
        if bound not in self.renames or self._class_body[-1] or "." in _dotted(original.name) and not original.asname:
            return updated
        return updated.with_changes(asname=cst.AsName(name=cst.Name(self.renames[bound])))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if self._class_body[-1]:
            self._keep.add(id(node.name))
        self._class_body.append(True)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self._class_body.pop()
        return updated

    def _own_params(self, params: cst.Parameters) -> None:
        """A parameter of that name is the function's own (callers may pass it by keyword): it and the function's
        reads of it stay."""
        for p in [*params.params, *params.posonly_params, *params.kwonly_params,
                  *(x for x in (params.star_arg, params.star_kwarg) if isinstance(x, cst.Param))]:
            if p.name.value in self.renames:
                self._params[-1].add(p.name.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._class_body[-1]:
            self._keep.add(id(node.name))   # a method's name
        self._class_body.append(False)
        self._params.append(set(self._params[-1]))
        self._own_params(node.params)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._params.append(set(self._params[-1]))
        self._own_params(node.params)

    def leave_Lambda(self, original: cst.Lambda, updated: cst.Lambda) -> cst.Lambda:
        self._params.pop()
        return updated

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self._class_body.pop()
        self._params.pop()
        return updated

    def visit_Name(self, node: cst.Name) -> None:
        if self._class_body[-1] or node.value in self._params[-1]:
            self._keep.add(id(node))     # a class attribute's name (read as self.ops), a parameter's

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if original.value in self.renames and id(original) not in self._keep:
            return updated.with_changes(value=self.renames[original.value])
        return updated


def own_converter_names(module: cst.Module) -> Set[str]:
    """The converter names the program binds itself (a program rebinding torch's `nn` itself: left out)."""
    found = _Bindings()
    module.visit(found)
    return found.bound - found.torch_bound


_IMPORTS = re.compile(r"^(?:from mindspore import (?P<names>[\w, ]+)|import mindspore as (?P<alias>\w+))\s*$", re.M)


def imported_converter_names(code: str) -> Set[str]:
    """The converter names a converted module's own MindSpore imports bind (`from mindspore import nn, ops`)."""
    found: Set[str] = set()
    for m in _IMPORTS.finditer(code):
        names = [n.strip() for n in m.group("names").split(",")] if m.group("names") else [m.group("alias")]
        found.update(n for n in names if n in CONVERTER_NAMES)
    return found


def rename_own_converter_names(module: cst.Module, source: str, clash: Set[str]) -> cst.Module:
    """The module with the program's own `ms`/`nn`/`ops` of `clash` renamed (`ops_`, or `ops_1`... where taken):
    the converter found its import of them beside the program's binding (convert_code converts it again)."""
    renames = {}
    for name in sorted(clash):
        fresh, i = name + "_", 0
        while re.search(rf"\b{fresh}\b", source):
            i += 1
            fresh = f"{name}_{i}"
        renames[name] = fresh
    return module.visit(_Rename(renames))
