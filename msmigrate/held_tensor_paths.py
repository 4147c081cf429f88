"""Expressions naming a tensor an object holds (a module's parameter or buffer, a tensor kept on an attribute), which
an in-place change written back (`ops.assign`, `_ms_compat.write_data`) reaches as torch's in-place method does;
read twice, they name the same tensor. A tensor's rows (`x[0]`) are no such path: writing into them would write into
a copy."""
from __future__ import annotations

import libcst as cst

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


def dict_bound_names(func: cst.CSTNode) -> frozenset:
    """The names a function binds only by `name = dict(...)`, `name = {k: v ...}` or a dict comprehension (basicsr's
    model_ema: `net_g_ema_params = dict(self.net_g_ema.named_parameters())`), never as a parameter, a loop or `with`
    target, an augmented or annotated assignment, a walrus, an import or an unpacking: the name holds a dict, so
    `name[k]` is an item the dict holds (a module's Parameter from named_parameters()), not rows of a tensor."""
    if not isinstance(func, (cst.FunctionDef, cst.IndentedBlock)):
        return frozenset()      # (a function's body: its caller leaves the function's parameters out)
    dicts, other = set(), set()
    params = func.params if isinstance(func, cst.FunctionDef) else None
    for p in (*params.posonly_params, *params.params, *params.kwonly_params) if params is not None else ():
        other.add(p.name.value)
    for p in (params.star_arg, params.star_kwarg) if params is not None else ():
        if isinstance(p, cst.Param):
            other.add(p.name.value)

    def names_in(target: cst.CSTNode) -> set:
        found = set()

        class _Names(cst.CSTVisitor):
            def visit_Name(self, node: cst.Name) -> None:
                found.add(node.value)

            def visit_Attribute(self, node: cst.Attribute) -> bool:
                return False

            def visit_Subscript(self, node: cst.Subscript) -> bool:
                return False
        target.visit(_Names())
        return found

    class _Bindings(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is func

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            value = node.value
            is_dict = isinstance(value, (cst.Dict, cst.DictComp)) or (
                isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict")
            for t in node.targets:
                if isinstance(t.target, cst.Name) and is_dict:
                    dicts.add(t.target.value)
                else:
                    other.update(names_in(t.target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            other.update(names_in(node.target))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            other.update(names_in(node.target))

        def visit_For(self, node: cst.For) -> None:
            other.update(names_in(node.target))

        def visit_CompFor(self, node: cst.CompFor) -> None:
            other.update(names_in(node.target))

        def visit_WithItem(self, node: cst.WithItem) -> None:
            if node.asname is not None:
                other.update(names_in(node.asname.name))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            other.update(names_in(node.target))

        def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
            other.add(node.evaluated_alias or node.evaluated_name.split(".")[0])

        def visit_Global(self, node: cst.Global) -> None:
            other.update(n.name.value for n in node.names)

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            other.update(n.name.value for n in node.names)

    func.visit(_Bindings())
    return frozenset(dicts - other)


def dict_item(expr: cst.BaseExpression, dict_names: frozenset) -> bool:
    """`d[k]`, `d["w"]`: one pure index (_pure_index) into a name of dict_bound_names."""
    return (isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and expr.value.value in dict_names
            and _pure_index(expr))
