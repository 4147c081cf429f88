"""A torch layer's method called through its class on self, in a subclass whose first base that layer is:

    class Linear(nn.Linear, LoRALayer):                  # microsoft/LoRA's loralib
        def __init__(self, in_features, out_features, r=0, ..., **kwargs):
            nn.Linear.__init__(self, in_features, out_features, **kwargs)
            LoRALayer.__init__(self, r=r, ...)
        def reset_parameters(self):
            nn.Linear.reset_parameters(self)
        def train(self, mode=True):
            nn.Linear.train(self, mode)

The main pass converted `nn.Linear.__init__` as a torch name of its own (a TODO: "internal to torch"). In the class's
method resolution order the first base comes right after the class, before every other base, with its own bases
(torch's Module included) before any other base's: `nn.Linear.m(self, ...)` is `super().m(...)`, which the main pass
converts as it converts any subclass of a torch layer (the adapter base taking torch's arguments, construct for
forward, set_train for train). Only in a method's own body (not in a function or lambda inside it, where super()
has no class), only where the first argument is the method's first parameter, and only for the class's first base
when that is a torch name. A call through another base (`LoRALayer.__init__(self, ...)`) is left as it is."""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

import libcst as cst

from .callsite import code_of

_CALL = re.compile(r"\.\w+\(\s*self\s*[,)]")
TEST = "tests/test_heldout60_programs.py::test_torch_layer_methods_called_through_the_base_class"


def might_call_base(source: str) -> bool:
    return bool(_CALL.search(source))


class _Rewrite(cst.CSTTransformer):
    def __init__(self, imports: Dict[str, str]) -> None:
        super().__init__()
        self._imports = imports
        # ("class", first base spelled if a torch name) / ("method", that base, its first parameter) / ("other",)
        self._scopes: List[Tuple] = []

    def _torch_base(self, node: cst.ClassDef) -> Optional[str]:
        if not node.bases or node.bases[0].keyword is not None or node.bases[0].star:
            return None
        spelled = code_of(node.bases[0].value).strip()
        qn = self._imports.get(spelled.split(".")[0], "")
        return spelled if qn == "torch" or qn.startswith("torch.") else None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.append(("class", self._torch_base(node)))

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self._scopes.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        top = self._scopes[-1] if self._scopes else None
        plain = not any(isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod")
                        for d in node.decorators)
        if top and top[0] == "class" and top[1] and plain and node.params.params:
            self._scopes.append(("method", top[1], node.params.params[0].name.value))
        else:
            self._scopes.append(("other",))

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self._scopes.pop()
        return updated

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._scopes.append(("other",))

    def leave_Lambda(self, original: cst.Lambda, updated: cst.Lambda) -> cst.Lambda:
        self._scopes.pop()
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        top = self._scopes[-1] if self._scopes else None
        if not top or top[0] != "method":
            return updated
        func = updated.func
        if not (isinstance(func, cst.Attribute) and code_of(func.value).strip() == top[1] and updated.args):
            return updated
        first = updated.args[0]
        if first.keyword is not None or first.star or not (isinstance(first.value, cst.Name)
                                                           and first.value.value == top[2]):
            return updated
        rest = list(updated.args[1:])
        if rest:
            rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(func=cst.Attribute(value=cst.Call(func=cst.Name("super")), attr=func.attr),
                                    args=rest)


def base_calls_as_super(module: cst.Module, imports: Dict[str, str]) -> cst.Module:
    """`nn.Linear.m(self, ...)` in a method of a class whose first base is nn.Linear: `super().m(...)`."""
    return module.visit(_Rewrite(imports))
