"""Expressions naming a tensor an object holds (a module's parameter or buffer, a tensor kept on an attribute), which
an in-place change written back (`ops.assign`, `_ms_compat.write_data`) reaches as torch's in-place method does;
read twice, they name the same tensor. A tensor's rows (`x[0]`) are no such path: writing into them would write into
a copy."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from .visitor_bases import BindingTargets

# attributes of a tensor that are (views of) its values, not a tensor an object holds
_TENSOR_VIEWS = frozenset({"data", "real", "imag", "T", "mT", "H", "mH", "grad"})


def _pure_index(sub: cst.Subscript) -> bool:
    """`[0]`, `[-1]`, `[i]`, `[self.k]`, `["w"]`: one index that reads the same element each time it is read."""
    if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return False
    v = sub.slice[0].slice.value
    if isinstance(v, cst.UnaryOperation) and isinstance(v.operator, cst.Minus):
        v = v.expression
    return isinstance(v, (cst.Integer, cst.SimpleString)) or (isinstance(v, (cst.Name, cst.Attribute))
                                                              and held_tensor(v))


def held_tensor(expr: cst.BaseExpression) -> bool:
    """A name or an attribute chain of names (`old`, `self.embed_avg`, `self.q.codebook`), through elements of a
    module container on the way (`net.layers[0].bias`, `model[2].weight`, `self.blocks[i].attn.scale`): an element
    is followed by an attribute, so the chain names a tensor some object holds, never a view of a tensor's rows
    (`x[0]`, `x[0].data`)."""
    if isinstance(expr, cst.Name):
        return True
    if not isinstance(expr, cst.Attribute):
        return False
    if isinstance(expr.value, cst.Subscript):
        return expr.attr.value not in _TENSOR_VIEWS and _pure_index(expr.value) and held_tensor(expr.value.value)
    return held_tensor(expr.value)


def _dict_value(value: cst.BaseExpression) -> bool:
    """A dict display or comprehension, or a call of `dict(...)`."""
    return isinstance(value, (cst.Dict, cst.DictComp)) or (
        isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict")


class _DictBindings(BindingTargets):
    """The names one function binds (its nested functions, classes and lambdas are scopes of their own): to a dict
    (`name = dict(...)`, a dict display or comprehension: dicts) and by anything else (other): a parameter, a loop,
    `with` or `except` target, an augmented assignment, an import, an unpacking, global/nonlocal."""
    binders = (cst.Assign, cst.AnnAssign, cst.NamedExpr, cst.AugAssign, cst.For, cst.CompFor, cst.AsName,
               cst.ExceptHandler, cst.Param, cst.NameItem)

    def __init__(self, func: cst.CSTNode) -> None:
        self.func, self.dicts, self.other = func, set(), set()

    def bind(self, target: cst.CSTNode, value: Optional[cst.BaseExpression]) -> None:
        if isinstance(target, cst.Name):
            (self.dicts if value is not None and _dict_value(value) else self.other).add(target.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.func

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None:         # `import a.b` binds a (`as` names: AsName)
            self.other.add(node.evaluated_name.split(".")[0])


def dict_bound_names(func: cst.CSTNode) -> frozenset:
    """The names a function binds only to dicts (`name = dict(...)`, `name = {k: v ...}`, a dict comprehension;
    basicsr's model_ema: `net_g_ema_params = dict(self.net_g_ema.named_parameters())`), never as a parameter, a
    loop or `with` target, an augmented assignment, an import or an unpacking: the name holds a dict, so `name[k]`
    is an item the dict holds (a module's Parameter from named_parameters()), not rows of a tensor."""
    if not isinstance(func, (cst.FunctionDef, cst.IndentedBlock)):
        return frozenset()      # (a function's body: its caller leaves the function's parameters out)
    found = _DictBindings(func)
    func.visit(found)
    return frozenset(found.dicts - found.other)


def dict_item(expr: cst.BaseExpression, dict_names: frozenset) -> bool:
    """`d[k]`, `d["w"]`: one pure index (_pure_index) into a name of dict_bound_names."""
    return (isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and expr.value.value in dict_names
            and _pure_index(expr))
