"""A 1-d convolution's weight as torch's code sees it: (out, in, k) in torch, (out, in, 1, k) in MindSpore (its 1-d
convolutions run a 2-d one; ConvTranspose1d the same, (in, out, 1, k)).

Measured before (MindSpore 2.10): `conv.weight.shape` and `.dim()` read 4-D, `conv.weight[:, 0, :]` kept the extra
axis (silently other values downstream); `conv.weight.copy_(t)` with torch's 3-D t raised a raw RuntimeError
(InplaceCopy), `conv.weight.data = t` a raw ValueError at the next call. nn.init's fans agree (the 1 changes no
product), and `.view(out, -1)`/`.reshape(-1)` hold the same elements in the same order.

So, on a weight the converter knows belongs to a Conv1d/ConvTranspose1d: a read through a shape or a value method
or an index goes through `_ms_compat.conv1d_weight_read(w)` (torch's 3-D tensor: the axis squeezed; a new tensor,
so in-place methods and arguments keep the parameter itself), and a value written into it (`copy_(t)`,
`.data = t`, `= nn.Parameter(t)`) through `_ms_compat.conv1d_weight_value(t)` (the axis inserted; a value that
broadcasts to torch's (out, in, k) broadcasts to MindSpore's)."""
from __future__ import annotations

from typing import Optional

import libcst as cst

_LAYERS = ("torch.nn.Conv1d", "torch.nn.ConvTranspose1d")
# reads of the weight's layout or values (a new tensor is what torch's caller gets from them too)
READS = {"shape", "size", "dim", "ndim", "ndimension", "view", "reshape", "permute", "transpose", "flatten",
         "unsqueeze", "squeeze", "norm", "split", "chunk", "unbind", "flip", "T", "mT", "clone", "numpy",
         "tolist", "cpu", "mean", "sum", "std", "var", "amax", "amin", "max", "min", "argmax", "argmin", "contiguous",
         "view_as", "expand_as", "narrow", "select", "unfold", "cumsum", "softmax", "movedim", "swapaxes"}


def is_weight(tr, node: cst.BaseExpression) -> bool:
    """`X.weight` (or `X.weight.data`) where the converter knows X is a torch Conv1d/ConvTranspose1d."""
    if isinstance(node, cst.Attribute) and node.attr.value == "data":
        node = node.value
    return (isinstance(node, cst.Attribute) and node.attr.value == "weight"
            and tr._static_type(node.value) in _LAYERS)


def _wrap(tr, helper: str, value: cst.BaseExpression) -> cst.Call:
    tr.uses_compat = True
    return cst.Call(func=cst.parse_expression(f"_ms_compat.{helper}"), args=[cst.Arg(value)])


def read(tr, original: cst.Attribute, updated: cst.Attribute) -> Optional[cst.Attribute]:
    """`conv.weight.shape`, `conv.weight.view(...)`: on torch's 3-D weight."""
    if original.attr.value not in READS:
        return None
    if is_weight(tr, original.value):
        return updated.with_changes(value=_wrap(tr, "conv1d_weight_read", updated.value))
    inner = updated.value
    if isinstance(original.value, cst.Subscript) and is_weight(tr, original.value.value) \
            and isinstance(inner, cst.Subscript):   # `conv.weight[:, 0].shape`
        return updated.with_changes(value=inner.with_changes(value=_wrap(tr, "conv1d_weight_read", inner.value)))
    return None


def subscript(tr, original: cst.Subscript, updated: cst.Subscript) -> Optional[cst.Subscript]:
    """`conv.weight[:, 0, :]` read (not a store target; the caller leaves a method's receiver alone,
    `conv.weight[0].fill_(v)` writes into the weight)."""
    if id(original) not in tr._stores and is_weight(tr, original.value):
        return updated.with_changes(value=_wrap(tr, "conv1d_weight_read", updated.value))
    return None


def copy_value(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.Call]:
    """`conv.weight.copy_(t)` (or `.data.copy_`): t in MindSpore's layout."""
    func = original.func
    if (isinstance(func, cst.Attribute) and func.attr.value == "copy_" and updated.args
            and updated.args[0].keyword is None and is_weight(tr, func.value)):
        first = updated.args[0].with_changes(value=_wrap(tr, "conv1d_weight_value", updated.args[0].value))
        return updated.with_changes(args=[first, *updated.args[1:]])
    return None


def stored_value(tr, original: cst.Assign, updated: cst.Assign) -> Optional[cst.Assign]:
    """`conv.weight.data = t`, `conv.weight = nn.Parameter(t)`: t in MindSpore's layout."""
    if len(original.targets) != 1 or not is_weight(tr, original.targets[0].target):
        return None
    value = updated.value
    if (isinstance(value, cst.Call) and value.args and value.args[0].keyword is None
            and cst.Module([]).code_for_node(value.func).endswith("Parameter")):
        first = value.args[0].with_changes(value=_wrap(tr, "conv1d_weight_value", value.args[0].value))
        return updated.with_changes(value=value.with_changes(args=[first, *value.args[1:]]))
    target = original.targets[0].target
    if isinstance(target, cst.Attribute) and target.attr.value == "data":
        return updated.with_changes(value=_wrap(tr, "conv1d_weight_value", value))
    return None
