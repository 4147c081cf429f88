"""`x.backward(...)` that no train-step rewrite took -> a TODO that raises MigrationError naming its line.

The train-step rewrites (train_loop.py, taped_steps.py, higher_order_grad.py) find a backward() as a statement of
a loop body, a function body or straight-line code, and turn it into a step, a taped backward or a raising TODO.
A backward() nested deeper, in an `if` of a function that steps no optimizer (pytorch-grad-cam's BaseCAM.forward:
a backward(retain_graph=True) of the targets' summed scores under two `if`s, whose effect is the tensor hooks it
fires and the `.grad` it fills), was left as written: MindSpore's Tensor has no backward, so the program stopped
with an AttributeError naming no line of the original, and the report listed no site. Once the module is
converted, every backward() statement still in it becomes, for a receiver known to be a tensor,

    _ms_compat.Unconverted('Tensor.backward', 'module:line', why)()

and for a receiver of unknown type (a program's own class may define `backward`, a NumPy layer), the same
decided at run time:

    _ms_compat.on_tensor(x, lambda _ms_r: _ms_compat.Unconverted(...)(), lambda _ms_r: _ms_r.backward(...))

Each is a TODO (a comment above the statement and a report entry): tests/test_heldout35_programs.py."""
from __future__ import annotations

from typing import Dict

import libcst as cst

from . import registry as R
from .callsite import code_of
from .sites import Site, shorten
from .train_loop import _not_tensor_backward, _root

API = "Tensor.backward"
WHY = ("no train step holds this backward() (it is nested in a block of a function that steps no optimizer): "
       "torch fills the .grad of the tensors it reaches and calls their tensor hooks; MindSpore has no "
       "Tensor.backward: compute the gradients with mindspore.grad over a function that runs the forward")
_NOT_TENSORS = ("self", "cls", "ctx", "super", "torch", "ms", "mindspore", "_ms_compat", "ops", "nn")


def note(tr, original: cst.Call, converted: cst.Call) -> cst.Call:
    """Notes the receiver kind of `x.backward(...)` as the main pass sees it; returns `converted` unchanged."""
    kinds: Dict[int, tuple] = tr.__dict__.setdefault("_backward_calls", {})
    kinds[id(converted)] = (tr._receiver_kind(original.func.value), converted)
    return converted


class _Rewrite(cst.CSTTransformer):
    def __init__(self, tr) -> None:
        self.tr = tr
        self.kinds = getattr(tr, "_backward_calls", {})

    def visit_FunctionDef(self, node) -> bool:
        return True

    def leave_SimpleStatementLine(self, original, updated):
        if len(updated.body) != 1 or not isinstance(updated.body[0], cst.Expr):
            return updated
        call = updated.body[0].value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "backward"):
            return updated
        receiver = call.func.value
        if _root(receiver) in _NOT_TENSORS or _not_tensor_backward(call):
            return updated
        entry = self.kinds.get(id(call))
        kind = entry[0] if entry is not None and entry[1] is call else "unknown"
        if kind in ("other", "module"):
            return updated
        tr = self.tr
        line = tr._out_lines.get(id(original), 0)
        code = shorten(code_of(original).strip(), 150)
        tr.sites.append(Site(line, API, "", R.TODO, WHY, code, ""))
        tr._todo_count += 1
        tr.uses_compat = True
        where = f"{tr.module_name}:{line}"
        raising = f"_ms_compat.Unconverted({API!r}, {where!r}, {WHY!r})()"
        if kind == "tensor":
            text = raising
        else:
            method = cst.Module([]).code_for_node(call.with_changes(func=call.func.with_changes(
                value=cst.Name("_ms_r"))))
            text = (f"_ms_compat.on_tensor({cst.Module([]).code_for_node(receiver)}, lambda _ms_r: {raising}, "
                    f"lambda _ms_r: {method})")
        return updated.with_changes(
            body=[cst.Expr(cst.parse_expression(text))],
            leading_lines=list(updated.leading_lines) + [cst.EmptyLine(comment=cst.Comment(
                f"# msmigrate: TODO {API}: {WHY}. Original: {code}"))])


def rewrite(tr, module: cst.Module) -> cst.Module:
    """The module with its leftover backward() statements written as raising TODOs."""
    if "backward" not in getattr(tr, "_seen_methods", {"backward"}):
        return module
    return module.visit(_Rewrite(tr))
