"""`f(...).float()` outside a Module class: the receiver is the result of a call the converter cannot type.
torch programs write it for models (`build_model(sd).float()`, which casts the parameters;
`model_dict[name](args).float()` in an experiment class's _build_model, Informer2020's;
`model_dict[name].Model(args).float()`, Autoformer's) as well as
for tensors, so the choice is made at run time (_ms_compat.cast_tensor_or_module, in
templates/compat_parts/module_cast.py). Inside a Module class such a receiver is a tensor (module code casts
activations), and the tensor cast stays."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from . import registry as R
from .callsite import code_of

_CASTS = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16"}
# methods of a torch Module that return the module itself (moved, cast or switched)
_RETURNS_SELF = {"cuda", "cpu", "to", "float", "double", "half", "bfloat16", "train", "eval", "requires_grad_"}


def constructed_then_moved(node: cst.BaseExpression) -> Optional[cst.Call]:
    """`nn.CrossEntropyLoss().cuda()` (`.to(device).eval()`...): the constructor call under methods that return the
    module itself, whose result the name holds; None where `node` is no such chain (the caller checks the inner
    call is a torch layer's constructor: `torch.zeros(3).cuda()` is a tensor)."""
    moved = False
    while (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
           and node.func.attr.value in _RETURNS_SELF and isinstance(node.func.value, cst.Call)):
        node, moved = node.func.value, True
    return node if moved and isinstance(node, cst.Call) else None


def untyped_call_receiver(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.BaseExpression]:
    """The run-time cast for `f(...).float()` at top level or in a plain function (None: not such a site)."""
    func = original.func
    name = func.attr.value
    if name not in _CASTS or original.args or tr._classes and tr._classes[-1].is_cell:
        return None
    if not _untyped_call(tr, func.value):
        return None
    target = f"_ms_compat.cast_tensor_or_module(..., ms.{_CASTS[name]})"
    tr._record(original, f"Module.{name}", target, R.CONVERTED,
               "the receiver may be a model or a tensor: decided at run time")
    # the line: a float64 convolution's refusal and a compiled graph's (module_cast) name it
    where = f", {tr.module_name + ':' + str(tr._line(original))!r}"
    return tr._render_template(f"_ms_compat.cast_tensor_or_module({code_of(updated.func.value).strip()}, "
                               f"{tr.names['ms']}.{_CASTS[name]}{where})")


def _untyped_call(tr, node: cst.BaseExpression) -> bool:
    """`f(...)` of a plain name the converter cannot type, a class picked from a table (`model_dict[name](...)`, or
    the class of a module picked so: `model_dict[name].Model(args)`, Autoformer's), or such a call cast again
    (`f(...).half()`)."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value[:1].isupper() \
            and isinstance(node.func.value, cst.Subscript):
        return tr._receiver_kind(node) == "unknown"
    if not isinstance(node, cst.Call) or node.args and isinstance(node.func, cst.Attribute):
        return False
    if isinstance(node.func, cst.Attribute):
        return node.func.attr.value in _CASTS and _untyped_call(tr, node.func.value)
    if isinstance(node.func, cst.Subscript):
        return tr._receiver_kind(node) == "unknown"
    return isinstance(node.func, cst.Name) and tr._receiver_kind(node) == "unknown"
