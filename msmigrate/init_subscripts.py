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
helpers return the filled tensor. Only statements are rewritten (their value is unused), and the
assignment only where the subscripted thing is surely a tensor: `x[i] = 0` on a list or
ParameterList would replace its element instead of filling the Parameter it holds. Elsewhere the
type is decided when the statement runs, by _ms_compat.fill_part (a tensor's part is filled as a
tensor of its own and assigned back; a list's element is filled itself):

    init.zeros_(params[i])               ->  _ms_compat.fill_part(params, i, init.zeros_)
    params[i].fill_(v)  (no_grad/.data)  ->  _ms_compat.fill_part(params, i, _ms_compat.constant_, v)
    own_init.zeros_(m.weight[pad])       ->  _ms_compat.fill_part(m.weight, pad, own_init.zeros_)

The last is any function whose name ends in one `_` (torch's mark of an in-place function: the init
wrappers of Hugging Face transformers and timm) called as a statement on a subscript: through the
wrapper, torch's fill of the view would reach the tensor, MindSpore's would not."""
from __future__ import annotations

from typing import Dict, Optional, Set, Tuple

import libcst as cst

from .autograd_backward import _qualified
from .callsite import dotted_name
from .records import COMPAT

INIT = "torch.nn.init."
_CONSTANT = {"zeros_": "0", "ones_": "1"}
# Tensor methods that fill in place with a random value (zero_/fill_ become the value)
_METHOD_RANDOM = {"normal_", "uniform_"}
# the nn.init function that does what a Tensor fill method does (x.uniform_(from, to): init.uniform_(x, a, b))
_METHOD_INIT = {"zero_": "zeros_", "fill_": "constant_", "normal_": "normal_", "uniform_": "uniform_"}
_METHOD_KEYWORDS = {"uniform_": {"to": "b"}, "fill_": {"value": "val"}}
FILL_PART = "fill_part"   # the _ms_compat helper
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


def _index(target: cst.Subscript) -> Optional[cst.BaseExpression]:
    """The index of `x[...]` as a value: `i`, `(i, j)`, `slice(1, 3)` (None: a form not written so)."""
    parts = []
    for element in target.slice:
        s = element.slice
        if isinstance(s, cst.Index):
            if s.star is not None:
                return None
            parts.append(s.value)
        elif isinstance(s, cst.Slice):
            bounds = [b if b is not None else cst.Name("None") for b in (s.lower, s.upper, s.step)]
            parts.append(cst.Call(func=cst.Name("slice"), args=[cst.Arg(b) for b in bounds]))
        else:
            return None
    if len(parts) == 1:
        return parts[0]
    return cst.Tuple([cst.Element(p) for p in parts])


def _fill_part(target: cst.Subscript, fill: cst.BaseExpression, rest) -> Optional[cst.Expr]:
    """`_ms_compat.fill_part(x, index, fill, *rest)` for `fill(x[index], *rest)`."""
    index = _index(target)
    if index is None:
        return None
    args = [cst.Arg(target.value), cst.Arg(index), cst.Arg(fill)]
    args += [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in rest]
    return cst.Expr(cst.Call(func=cst.Attribute(cst.Name(COMPAT), cst.Name(FILL_PART)), args=args))


def _in_place_function(func: cst.BaseExpression, imports: Dict[str, str]) -> bool:
    """`zeros_`, `init.zeros_`: a function (a plain name, or one read from an imported module, never an
    object's method: in `dst.copy_(src[i])` dst is filled) whose name ends in one underscore, torch's
    mark of an in-place function."""
    name = dotted_name(func)
    if not name or ("." in name and name.partition(".")[0] not in imports):
        return False
    last = name.rpartition(".")[2]
    return last.endswith("_") and not last.endswith("__") and last.strip("_") != ""


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
        self.fill_parts = 0   # _ms_compat.fill_part calls written
        self.statement_calls: Set[int] = set()   # ids of calls that are a whole statement

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

    def visit_Expr(self, node: cst.Expr) -> None:
        self.statement_calls.add(id(node.value))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """`y = init.zeros_(w[i])`, the fill's value used: through fill_part, which returns it (a
        statement is left to leave_Expr, which may assign instead)."""
        if id(original) in self.statement_calls:
            return updated
        name = _qualified(updated.func, self.imports) or ""
        tensor = _tensor_arg(updated) if name.startswith(INIT) and name.endswith("_") else None
        if tensor is None or not isinstance(tensor.value, cst.Subscript):
            return updated
        made = _fill_part(tensor.value, updated.func, [a for a in updated.args if a is not tensor])
        if made is None:
            return updated
        self.fill_parts += 1
        return made.value

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        call = updated.value
        if not isinstance(call, cst.Call):
            return updated
        made = self._init_call(call) or self._method_call(call) or self._own_fill(call)
        if isinstance(made, cst.Expr):
            self.fill_parts += 1
        return made if made is not None else updated

    def _init_call(self, call: cst.Call) -> Optional[cst.Assign]:
        name = _qualified(call.func, self.imports) or ""
        if not name.startswith(INIT) or not name.endswith("_"):
            return None
        fn = name[len(INIT):]
        tensor = _tensor_arg(call)
        if tensor is None or not isinstance(tensor.value, cst.Subscript):
            return None
        target = tensor.value
        if not self._is_tensor_part(target):   # a list's element or a tensor's part: decided when it runs
            return _fill_part(target, call.func, [a for a in call.args if a is not tensor])
        if fn in _CONSTANT:
            return _assign(target, cst.Integer(_CONSTANT[fn]))
        if fn == "constant_":
            rest = [a for a in call.args if a is not tensor]
            if len(rest) != 1 or rest[0].star or rest[0].keyword is not None and rest[0].keyword.value != "val":
                return None
            return _assign(target, rest[0].value)
        args = [a.with_changes(value=_clone(target)) if a is tensor else a for a in call.args]
        return _assign(target, call.with_changes(args=args))

    def _method_call(self, call: cst.Call):
        func = call.func
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Subscript):
            return None
        target, method = func.value, func.attr.value
        if not self.no_grad and not (isinstance(target.value, cst.Attribute) and target.value.attr.value == "data"):
            return None   # outside no_grad only `.data[i]`: elsewhere an autograd-tracked fill stays a TODO
        if not self._is_tensor_part(target):
            return self._method_fill_part(call, target, method)
        if method == "zero_" and not call.args:
            return _assign(target, cst.Integer("0"))
        if method == "fill_" and len(call.args) == 1 and not call.args[0].star:
            return _assign(target, call.args[0].value)
        if method in _METHOD_RANDOM:
            return _assign(target, call.with_changes(func=func.with_changes(value=_clone(target))))
        return None

    def _method_fill_part(self, call: cst.Call, target: cst.Subscript, method: str) -> Optional[cst.Expr]:
        """`x[i].fill_(v)` with `x` of unknown type: the helper's nn.init function that does the same,
        through fill_part (named directly: the module need not import torch)."""
        if method not in _METHOD_INIT or any(a.star for a in call.args):
            return None
        if (method == "zero_" and call.args) or (method == "fill_" and len(call.args) != 1):
            return None
        renames = _METHOD_KEYWORDS.get(method, {})
        rest = []
        for a in call.args:
            if a.keyword is not None and a.keyword.value not in ("mean", "std", "generator", *renames):
                return None
            if a.keyword is not None and a.keyword.value in renames:
                a = a.with_changes(keyword=cst.Name(renames[a.keyword.value]))
            rest.append(a)
        fill = cst.Attribute(cst.Name(COMPAT), cst.Name(_METHOD_INIT[method]))
        return _fill_part(target, fill, rest)

    def _own_fill(self, call: cst.Call) -> Optional[cst.Expr]:
        """`init.zeros_(m.weight[pad])` with a function that is not torch's (an own init wrapper)."""
        if not _in_place_function(call.func, self.imports) or \
                (_qualified(call.func, self.imports) or "").startswith("torch."):
            return None
        if not call.args or call.args[0].keyword is not None or call.args[0].star:
            return None
        target = call.args[0].value
        if not isinstance(target, cst.Subscript):
            return None
        return _fill_part(target, call.func, call.args[1:])


def rewrite_init_subscripts(module: cst.Module, imports: Dict[str, str]) -> Tuple[cst.Module, bool]:
    """The module rewritten, and whether it now calls _ms_compat.fill_part."""
    names = _TensorNames(imports)
    module.visit(names)
    tr = _InitSubscripts(imports, names)
    return module.visit(tr), tr.fill_parts > 0
