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
