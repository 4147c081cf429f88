"""`forward` named through the class or the instance inside a torch module class: `cls.forward` (in
__init_subclass__ or a classmethod), `type(self).forward`, `self.__class__.forward`, `self.forward`. The converted
class (an nn.Cell) defines `construct` instead, and a Cell's call runs `self.construct`, so these references name
`construct` (transformers' GradientCheckpointingLayer wraps each subclass's forward in __init_subclass__;
pytorch-normalizing-flows' IAF swaps `self.forward, self.backward = self.backward, self.forward` in __init__,
which MindSpore's call honours through the instance attribute `construct`, in PYNATIVE and GRAPH)."""
from __future__ import annotations

from typing import List, Optional

import libcst as cst


def _class_ref(node: cst.BaseExpression, cls_name: Optional[str]) -> bool:
    if cls_name is not None and isinstance(node, cst.Name) and node.value == cls_name:
        return True
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "type" \
            and len(node.args) == 1 and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == "self":
        return True   # type(self)
    if isinstance(node, cst.Name) and node.value == "self":
        return True   # `self.forward, self.backward = self.backward, self.forward` (an inverse flow swapping them)
    return isinstance(node, cst.Attribute) and node.attr.value == "__class__" and isinstance(node.value, cst.Name) \
        and node.value.value == "self"


class _ForwardRefs(cst.CSTTransformer):
    def __init__(self, index, module_name: str):
        super().__init__()
        self.index = index
        self.module_name = module_name
        self._cells: List[bool] = []
        self._cls: List[Optional[str]] = []
        self.changed = False
        self._called: set = set()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._cells.append(self.index.is_cell_class(self.module_name, node.name.value))

    def leave_ClassDef(self, original, updated):
        self._cells.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = node.params.params
        is_cls = node.name.value == "__init_subclass__" or any(
            isinstance(d.decorator, cst.Name) and d.decorator.value == "classmethod" for d in node.decorators)
        self._cls.append(params[0].name.value if is_cls and params else None)

    def leave_FunctionDef(self, original, updated):
        self._cls.pop()
        return updated

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name) \
                and node.func.value.value == "self":
            self._called.add(id(node.func))     # `self.forward(x)`: the main pass converts the call

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if not self._cells or not self._cells[-1] or updated.attr.value != "forward":
            return updated
        if id(original) in self._called:
            return updated
        if _class_ref(updated.value, self._cls[-1] if self._cls else None):
            self.changed = True
            return updated.with_changes(attr=cst.Name("construct"))
        return updated


def rename_class_forward_refs(module: cst.Module, index, module_name: str) -> cst.Module:
    tr = _ForwardRefs(index, module_name)
    new = module.visit(tr)
    return new if tr.changed else module
