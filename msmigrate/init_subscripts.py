"""Initialising part of a tensor, `nn.init.zeros_(emb.weight[pad])`, as an assignment into it.

On MindSpore 2.10 CPU `p[i]` is a view whose in-place copy_ does not reach `p` (nothing happens
on small tensors; large ones fail later with "InplaceCopy, an unexpected kernel has been
launched"), so filling the view leaves the row as it was. `p[i] = value` writes through. This
pre-pass rewrites the torch statement before the main conversion, so renames (weight ->
embedding_table) apply to the target as usual:

    init.zeros_(x[i])              ->  x[i] = 0                 (ones_: 1, constant_: its value)
    init.normal_(x[i], std=.02)    ->  x[i] = init.normal_(x[i].clone(), std=.02)
    x[i].fill_(v) / x[i].zero_()   ->  x[i] = v / x[i] = 0      (in `with torch.no_grad():`, or on `.data`)
    x[i].normal_(...)              ->  x[i] = x[i].clone().normal_(...)

A random initialiser's value depends only on the shape and dtype, which the clone carries; the
helpers return the filled tensor. Only statements are rewritten (their value is unused), and only
where the subscripted thing is surely a tensor: `x[i] = 0` on a list or ParameterList would replace
its element instead of filling the Parameter it holds (which the helpers already do through
set_data), so `params[i]` with an unknown `params` keeps the call form; if it is a tensor after all,
_ms_compat._assign sees the fill did not reach it and raises MigrationError."""
from __future__ import annotations

from typing import Dict, Optional, Set

import libcst as cst

from .autograd_backward import _qualified

INIT = "torch.nn.init."
_CONSTANT = {"zeros_": "0", "ones_": "1"}
# Tensor methods that fill in place with a random value (zero_/fill_ become the value)
_METHOD_RANDOM = {"normal_", "uniform_"}
# attributes that hold one tensor, and the torch calls that make one (`self.w = nn.Parameter(...)`)
_TENSOR_ATTRS = {"weight", "bias", "data"}
_MAKERS = {"torch.nn.Parameter", "torch.nn.parameter.Parameter"} | {
    f"torch.{n}" for n in ("empty", "zeros", "ones", "full", "randn", "rand", "randint", "tensor", "arange",
                           "eye", "linspace", "normal", "empty_like", "zeros_like", "ones_like", "full_like",
                           "randn_like", "rand_like")}


def might_init_subscript(source: str) -> bool:
    return "]" in source and ("init" in source or "_(" in source)


def _tensor_arg(call: cst.Call) -> Optional[cst.Arg]:
    for i, arg in enumerate(call.args):
        if arg.star:
            return None
        if (arg.keyword is None and i == 0) or (arg.keyword is not None and arg.keyword.value == "tensor"):
            return arg
    return None


def _clone(target: cst.Subscript) -> cst.Call:
    return cst.Call(func=cst.Attribute(target, cst.Name("clone")))


def _assign(target: cst.Subscript, value: cst.BaseExpression) -> cst.Assign:
    return cst.Assign(targets=[cst.AssignTarget(target)], value=value)


class _TensorNames(cst.CSTVisitor):
    """Names (`w`) and attribute names (`self.w`) this module binds to a freshly made tensor."""

    def __init__(self, imports: Dict[str, str]):
        super().__init__()
        self.imports = imports
        self.names: Set[str] = set()   # w = torch.zeros(...)
        self.attrs: Set[str] = set()   # self.w = nn.Parameter(...)

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call) and _qualified(node.value.func, self.imports) in _MAKERS:
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    self.names.add(t.target.value)
                elif isinstance(t.target, cst.Attribute):
                    self.attrs.add(t.target.attr.value)


class _InitSubscripts(cst.CSTTransformer):
    def __init__(self, imports: Dict[str, str], tensors: _TensorNames):
        super().__init__()
        self.imports = imports
        self.tensors = tensors
        self.no_grad = 0

    def _is_tensor_part(self, node: cst.BaseExpression) -> bool:
        """x[1:3], x[i, j] (a list takes neither with nn.init), or a subscript of a known tensor."""
        if not isinstance(node, cst.Subscript):
            return False
        if len(node.slice) > 1 or any(isinstance(e.slice, cst.Slice) for e in node.slice):
            return True
        base = node.value
        if isinstance(base, cst.Attribute):
            return base.attr.value in _TENSOR_ATTRS or base.attr.value in self.tensors.attrs
        return isinstance(base, cst.Name) and base.value in self.tensors.names

    def _is_no_grad(self, node: cst.With) -> bool:
        return any(isinstance(item.item, cst.Call)
                   and _qualified(item.item.func, self.imports) in ("torch.no_grad", "torch.inference_mode")
                   for item in node.items)

    def visit_With(self, node: cst.With) -> None:
        self.no_grad += self._is_no_grad(node)

    def leave_With(self, original: cst.With, updated: cst.With) -> cst.With:
        self.no_grad -= self._is_no_grad(original)
        return updated

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        call = updated.value
        if not isinstance(call, cst.Call):
            return updated
        made = self._init_call(call) or self._method_call(call)
        return made if made is not None else updated

    def _init_call(self, call: cst.Call) -> Optional[cst.Assign]:
        name = _qualified(call.func, self.imports) or ""
        if not name.startswith(INIT) or not name.endswith("_"):
            return None
        fn = name[len(INIT):]
        tensor = _tensor_arg(call)
        if tensor is None or not self._is_tensor_part(tensor.value):
            return None
        target = tensor.value
        if fn in _CONSTANT:
            return _assign(target, cst.Integer(_CONSTANT[fn]))
        if fn == "constant_":
            rest = [a for a in call.args if a is not tensor]
            if len(rest) != 1 or rest[0].star or rest[0].keyword is not None and rest[0].keyword.value != "val":
                return None
            return _assign(target, rest[0].value)
        args = [a.with_changes(value=_clone(target)) if a is tensor else a for a in call.args]
        return _assign(target, call.with_changes(args=args))

    def _method_call(self, call: cst.Call) -> Optional[cst.Assign]:
        func = call.func
        if not isinstance(func, cst.Attribute) or not self._is_tensor_part(func.value):
            return None
        target, method = func.value, func.attr.value
        if not self.no_grad and not (isinstance(target.value, cst.Attribute) and target.value.attr.value == "data"):
            return None   # outside no_grad only `.data[i]`: elsewhere an autograd-tracked fill stays a TODO
        if method == "zero_" and not call.args:
            return _assign(target, cst.Integer("0"))
        if method == "fill_" and len(call.args) == 1 and not call.args[0].star:
            return _assign(target, call.args[0].value)
        if method in _METHOD_RANDOM:
            return _assign(target, call.with_changes(func=func.with_changes(value=_clone(target))))
        return None


def rewrite_init_subscripts(module: cst.Module, imports: Dict[str, str]) -> cst.Module:
    names = _TensorNames(imports)
    module.visit(names)
    return module.visit(_InitSubscripts(imports, names))
