"""Tensor properties whose MindSpore value differs from torch's, read as torch's.

Where a tensor lives: `x.device` (then `.type`, `.index`, `str(...)`, `==`), `x.is_cuda`,
`x.is_cpu`. MindSpore's Tensor.device is the string 'CPU' / 'GPU:0': `x.device.type` raises, `str(x.device)`
is 'CPU' where torch prints 'cpu', and there is no is_cuda. Such a read on a value that may be a tensor (not
a module, not `self`) becomes `_ms_compat.device_of(x)` / `_ms_compat.is_on_device(x, 'cuda', 'is_cuda')`
(templates/compat_parts/tensor_reads.py): torch's answer on a tensor, the object's own attribute on
anything else. Where the read is an argument that a mapping drops (`device=x.device`, `.to(x.device)`), the
call's own rule decides from the original code, as before.

Complex parts: MindSpore's Tensor.real / .imag are methods (`z.real * 2` fails, `z.real` alone is a bound
method): `_ms_compat.real_part(z)` / `imag_part(z)`. (torch.abs of a complex tensor: mappings, helper
_ms_compat.magnitude.)"""
from __future__ import annotations

from typing import Optional, Set

import libcst as cst

from . import records as R
from .visitor_bases import BindingTargets

_NAMES = {"device": None, "is_cuda": "cuda", "is_cpu": "cpu", "real": None, "imag": None}
# torch's other device kinds (dcgan's `input.is_cuda or input.is_xpu`): False for a MindSpore tensor
_NAMES.update({f"is_{k}": k for k in ("xpu", "mps", "meta", "ipu", "maia", "mtia", "vulkan", "xla", "sparse")})
_PARTS = {"real": "_ms_compat.real_part", "imag": "_ms_compat.imag_part"}
# torch takes a 0-d tensor in these (its conjugate; mT: itself), MindSpore's properties refuse it
_TRANSPOSES = ("H", "mH", "mT")
_NAMES.update({k: None for k in _TRANSPOSES})
TRANSPOSE_NOTE = ("MindSpore's property of the same meaning, but a 0-d tensor (torch: its conjugate; mT: itself) "
                  "through _ms_compat.transposed_read")
NOTE = ("MindSpore's Tensor.device is 'CPU' / 'GPU:0': read as torch's device ('cpu', 'cuda:0') with "
        ".type and .index; is_cuda / is_cpu from it")

PART_NOTE = "MindSpore's Tensor.real / .imag are methods: ops.real / ops.imag (another object's own attribute)"


class _Stores(BindingTargets):
    binders = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.Del)

    def __init__(self) -> None:
        self.ids: Set[int] = set()

    def bind(self, target, value) -> None:
        if isinstance(target, cst.Attribute) and (target.attr.value in _NAMES or target.attr.value == "requires_grad"):
            self.ids.add(id(target))


def store_targets(module: cst.Module) -> Set[int]:
    """ids of the `X.device` / `X.is_cuda` / `X.requires_grad` nodes that are written, not read."""
    v = _Stores()
    module.visit(v)
    return v.ids


def device_read(tr, original: cst.Attribute, updated: cst.Attribute) -> Optional[cst.BaseExpression]:
    name = original.attr.value
    if name not in _NAMES or id(original) in tr._device_stores:
        return None
    if any(q == "mindspore" or q.startswith("mindspore.") for q in tr._imports.values()):
        return None                                     # converted code, converted again
    recv = original.value
    if isinstance(recv, cst.Name) and recv.value == "self":
        return None                                     # a module's own attribute (`self.device = device`)
    if tr._torch_qname(original) is not None or tr._receiver_kind(recv) in ("module", "other"):
        return None
    if name in _TRANSPOSES:
        tr._record(original, "Tensor." + name, "_ms_compat.transposed_read", R.CONVERTED, TRANSPOSE_NOTE)
        return cst.Call(func=tr._render_template("_ms_compat.transposed_read"),
                        args=[cst.Arg(updated.value), cst.Arg(cst.SimpleString(repr(name)))])
    if name in _PARTS:
        tr._record(original, "Tensor." + name, _PARTS[name], R.CONVERTED, PART_NOTE)
        return cst.Call(func=tr._render_template(_PARTS[name]), args=[cst.Arg(updated.value)])
    if name == "device":
        tr._record(original, "Tensor.device", "_ms_compat.device_of", R.CONVERTED, NOTE)
        return cst.Call(func=tr._render_template("_ms_compat.device_of"), args=[cst.Arg(updated.value)])
    tr._record(original, "Tensor." + name, "_ms_compat.is_on_device", R.CONVERTED, NOTE)
    return cst.Call(func=tr._render_template("_ms_compat.is_on_device"),
                    args=[cst.Arg(updated.value), cst.Arg(cst.SimpleString(repr(_NAMES[name]))),
                          cst.Arg(cst.SimpleString(repr(name)))])


def is_builtin_abs_of_tensor(tr, original: cst.Call) -> bool:
    """`abs(x)` (the builtin, one argument) where x is known to be a tensor."""
    func = original.func
    return (isinstance(func, cst.Name) and func.value == "abs" and "abs" not in tr._imports
            and not tr._shadowed("abs") and len(original.args) == 1 and not original.args[0].star
            and not original.args[0].keyword and tr._receiver_kind(original.args[0].value) == "tensor")


def builtin_abs(tr, original: cst.Call, updated: cst.Call) -> cst.Call:
    """`abs(z)` -> `_ms_compat.magnitude(z)`: Tensor.__abs__ keeps a complex tensor complex in MindSpore."""
    tr._record(original, "Tensor.__abs__", "_ms_compat.magnitude", R.CONVERTED,
               "abs() of a complex tensor is its real magnitude, as torch (MindSpore's keeps the complex dtype)")
    return updated.with_changes(func=tr._render_template("_ms_compat.magnitude"))
