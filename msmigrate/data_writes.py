"""`x.data.op_(args)` as a whole statement (`old.data.lerp_(new, 1 - decay)` in an EMA helper,
`self.w.data.mul_(0.5)` in forward): torch changes x's values in place and records no gradient.

MindSpore's in-place arithmetic leaves the tensor unchanged on CPU (inplace_forms.py), and a rebinding
`x = ...` would not reach the caller's tensor (x is often a parameter of the function, given a Cell's
buffer). So the statement becomes `_ms_compat.write_data(x, <converted x.op(args)>, "module:line")`:
the out-of-place value written into x (ops.assign on a Parameter, in GRAPH and PyNative; copy_ into the memory of
another tensor, which a `p.data` shares with its Parameter, PyNative only, a compiled graph raising MigrationError
naming the line);
templates/compat_parts/data_writes.py. x is a name or an attribute chain (`self.ema.avg`, `net.layers[0].bias`:
held_tensor_paths.py)."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from . import records as R
from .callsite import code_of
from .held_tensor_paths import dict_bound_names, dict_item, held_tensor

NOTE = ("in place through .data: the out-of-place value written into the tensor (ops.assign on a Parameter; "
        "another tensor in PyNative only), no gradient through it, as torch's .data write")
TEST = "tests/parity/test_data_writes.py"


def _left_to_parameter_passes(tr, original: cst.Call, receiver: cst.BaseExpression, method: str) -> bool:
    """The statements the passes over parameter updates turn into `ops.assign` (their one-line native form):
    a hand-written update reading `.grad` (`p.data.add_(p.grad, alpha=-lr)`: manual_update.py), a change of a
    loop's variable (`for p in D.parameters(): p.data.clamp_(-c, c)`) and of an attribute chain by a method
    param_data_update.py knows (`module.weight.data.mul_(s)`): it leaves them raising placeholders to rewrite."""
    from . import param_data_update as PDU

    if any(c.hand_optimizer for c in tr._classes):   # an optimizer's own step(): written into p (hand_optimizers.py)
        return False
    if any(".grad" in code_of(a.value) for a in original.args):
        return True
    if isinstance(receiver, cst.Name):
        return any(isinstance(getattr(loop, "target", None), cst.Name) and loop.target.value == receiver.value
                   for loop in tr._loop_nodes)
    new_value = PDU._NEW_VALUE.get(f"Tensor.{method}")
    if new_value is None or any(a.star for a in original.args) or getattr(tr, "_statements_on_line", 1) > 1:
        return False    # (a line of several statements, a split chain: the pass rewrites whole lines of one)
    # only what its new-value form takes: `self.avg.data.add_(v, alpha=1 - d)` (an EMA in forward) has none there
    pos = [code_of(a.value).strip() for a in original.args if a.keyword is None]
    kw = {a.keyword.value: code_of(a.value).strip() for a in original.args if a.keyword is not None}
    return new_value(code_of(receiver).strip(), pos, kw, "ms") is not None


def write_through_data(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.BaseExpression]:
    """The rewrite of a whole-statement `x.data.op_(...)`; None where it is no such statement."""
    func = original.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute)
            and func.value.attr.value == "data" and (held_tensor(func.value.value) or (
                tr._scopes and dict_item(func.value.value, dict_bound_names(tr._scopes[-1]["node"]) - set(
                    tr._scopes[-1].get("params", ())))))):
        return None     # (`d[k].data.copy_(v)`: an item of a dict of the function's, a Parameter it holds)
    if _left_to_parameter_passes(tr, original, func.value.value, func.attr.value):
        return None
    from .inplace_forms import out_of_place   # write_data casts the value back to x's dtype, as torch keeps it

    name = func.attr.value
    if name == "copy_":
        return _copy_through_data(tr, original, updated)
    found = out_of_place(name)
    if found is None:
        return None
    m, receiver_first = found
    # x itself, not `x.data`: write_data stops the gradient of the whole value, and MindSpore 2.10's GRAPH mode
    # reads `p.data` of a Parameter assigned earlier in the same graph wrongly (tests/parity/test_data_writes.py)
    out = tr._apply_out_of_place(original, updated, name, m, receiver_first, receiver=updated.func.value.value)
    if out is None:
        return None
    site = tr.sites[-1]
    site.api, site.status, site.note, site.test = "Tensor." + name, R.DIFFERENCE, NOTE, TEST
    tr.uses_compat = True
    where = f"{tr.module_name}:{tr._line(original)}"
    return tr._render_template(f"{R.COMPAT}.write_data({code_of(updated.func.value.value).strip()}, "
                               f"{code_of(out).strip()}, {where!r})")


NO_GRAD_NOTE = ("in place under no_grad on a parameter or a module's tensor: the out-of-place value written into "
                "it (ops.assign on a Parameter; another tensor in PyNative only), as torch's in-place change every "
                "reference (the optimizer's) sees")


def write_under_no_grad(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.BaseExpression]:
    """A whole statement `W.clamp_(min=0)` under no_grad (projected gradient descent after the step, weight
    clipping), W a name this scope or the module binds to `nn.Parameter(...)`, or `self.w.clamp_(0, 1)` /
    `model.fc.weight.mul_(s)`, an attribute chain (a module's parameter or buffer): torch changes the tensor the
    optimizer holds. A rebinding `W = ops.clamp(W, min=0)` would leave the optimizer's Parameter unchanged,
    silently; so `_ms_compat.write_data(W, <converted W.clamp(min=0)>, "module:line")`, as `W.data.clamp_`."""
    func = original.func
    if tr.lexical_grad_mode() is not False or not isinstance(func, cst.Attribute) \
            or not func.attr.value.endswith("_") or func.attr.value in ("requires_grad_", "detach_", "copy_"):
        return None
    receiver = func.value
    if isinstance(receiver, cst.Name):
        names = set()
        for scope in (tr._scopes[-1], tr._scopes[0]) if tr._scopes else ():
            names |= tr._parameter_names(scope["node"])
        if receiver.value not in names or (tr._funcs and receiver.value in tr._scopes[-1]["shadows"]
                                           and receiver.value not in tr._parameter_names(tr._scopes[-1]["node"])):
            return None
    elif not (isinstance(receiver, cst.Attribute) and held_tensor(receiver) and receiver.attr.value != "data"
              and tr._receiver_kind(receiver) in ("tensor", "unknown")):
        return None
    from .inplace_forms import out_of_place

    found = out_of_place(func.attr.value)
    if found is None:
        return None
    m, receiver_first = found
    out = tr._apply_out_of_place(original, updated, func.attr.value, m, receiver_first, receiver=updated.func.value)
    if out is None:
        return None
    site = tr.sites[-1]
    site.api, site.status, site.note, site.test = "Tensor." + func.attr.value, R.DIFFERENCE, NO_GRAD_NOTE, TEST
    tr.uses_compat = True
    where = f"{tr.module_name}:{tr._line(original)}"
    return tr._render_template(f"{R.COMPAT}.write_data({code_of(updated.func.value).strip()}, "
                               f"{code_of(out).strip()}, {where!r})")


def _copy_through_data(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.BaseExpression]:
    """`x.data.copy_(v)` (vector-quantize's `self.embed.data.copy_(embed_normalized)` in forward):
    `_ms_compat.write_data(x, _ms_compat.broadcast_as(v, x), "module:line")`. Kept as `x.data.copy_(v)`, MindSpore
    2.10's GRAPH mode wrote the Parameter but a later read of it in the same graph saw the old value (measured:
    the forward's output off by 0.64, silently); ops.assign orders the write before the reads."""
    if len(updated.args) != 1 or updated.args[0].keyword is not None or updated.args[0].star:
        return None
    tr._record(original, "Tensor.copy_", "_ms_compat.write_data", R.DIFFERENCE, NOTE)
    tr.sites[-1].test = TEST
    tr.uses_compat = True
    where = f"{tr.module_name}:{tr._line(original)}"
    x = code_of(updated.func.value.value).strip()
    return tr._render_template(f"{R.COMPAT}.write_data({x}, {R.COMPAT}.broadcast_as({code_of(updated.args[0].value).strip()}, "
                               f"{x}), {where!r})")


def _whole(sub: cst.Subscript) -> bool:
    """`[:]` or `[...]`: the whole tensor."""
    if len(sub.slice) != 1 or not isinstance(sub.slice[0], cst.SubscriptElement):
        return False
    part = sub.slice[0].slice
    if isinstance(part, cst.Slice):
        return part.lower is None and part.upper is None and part.step is None
    return isinstance(part, cst.Index) and isinstance(part.value, cst.Ellipsis)


def _state(expr: cst.BaseExpression) -> bool:
    """`self.avg`, `self.q.codebook`: an attribute chain on self (a Cell's Parameter or buffer)."""
    if not isinstance(expr, cst.Attribute):
        return False
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return isinstance(expr, cst.Name) and expr.value == "self"


def whole_store(tr, original: cst.Assign, updated: cst.Assign) -> Optional[cst.BaseSmallStatement]:
    """`self.avg[:] = v` / `self.avg[...] = v` / `self.avg.data[:] = v` in a method: MindSpore 2.10's GRAPH mode
    left the Parameter unchanged, silently (the forward read v, the buffer kept its old value: measured). Through
    `.data` or under no_grad (no gradient through the store in torch): `_ms_compat.write_data(x, broadcast_as(v, x),
    "module:line")`, ops.assign in both modes. Otherwise torch may record a gradient through the store, which an
    assign would lose: the store stays, its value through `_ms_compat.whole_store_value`, which refuses a
    Parameter inside a compiled graph (MigrationError naming the line)."""
    if len(original.targets) != 1 or not isinstance(original.targets[0].target, cst.Subscript):
        return None
    sub = original.targets[0].target
    if not _whole(sub):
        return None
    held, through_data = sub.value, False
    if isinstance(held, cst.Attribute) and held.attr.value == "data":
        held, through_data = held.value, True
    if not _state(held) or not tr._funcs or tr._funcs[-1].name == "__init__":
        return None
    tr.uses_compat = True
    where = f"{tr.module_name}:{tr._line(original)}"
    x = code_of(held).strip()
    value = code_of(updated.value).strip()
    if through_data or tr.lexical_grad_mode() is False:
        tr._record(original, "Tensor.__setitem__", "_ms_compat.write_data", R.DIFFERENCE, NOTE)
        tr.sites[-1].test = TEST
        return cst.Expr(value=tr._render_template(
            f"{R.COMPAT}.write_data({x}, {R.COMPAT}.broadcast_as({value}, {x}), {where!r})"))
    return updated.with_changes(value=tr._render_template(f"{R.COMPAT}.whole_store_value({x}, {value}, {where!r})"))


ROWS = "_ms_rows"
ROWS_NOTE = ("`x.data[i] = v` in a method: x's new value built on a copy (its rows i set to v) and written into x "
             "(ops.assign), no gradient through it, as torch's store into x.data; MindSpore's store into a "
             "Parameter's .data under a gradient (value_and_grad, the converted train step) left it unchanged")


def rows_store(tr, original: cst.Assign, updated: cst.Assign):
    """`self.w.data[idx] = v` in a method other than __init__ (pixelsnail's causal convolution zeroing
    `self.conv.weight_v.data[:, :, -1, c:]` in forward before the convolution reads it): PYNATIVE MindSpore left the
    Parameter unchanged under value_and_grad, silently (the forward read the old weights). On one line, so every
    later line keeps its number: `_ms_rows = ops.deepcopy(x); _ms_rows[idx] = v; _ms_compat.write_data(x, _ms_rows,
    "module:line")`, the store on a copy, written into x by ops.assign (GRAPH and PYNATIVE)."""
    if len(original.targets) != 1 or not isinstance(updated.targets[0].target, cst.Subscript):
        return None
    sub = updated.targets[0].target
    held = sub.value
    if _whole(sub) or not (isinstance(held, cst.Attribute) and held.attr.value == "data"):
        return None
    if _state(held.value):
        if not tr._funcs or tr._funcs[-1].name == "__init__":
            return None
    elif not isinstance(held.value, cst.Name) or tr._in_forward() or not _torch_module(tr):
        return None
    # (a name: an attack's `delta.data[index] = d[index]`; MindSpore's store into `x.data` at a tensor index
    # left x unchanged, silently: measured)
    tr.uses_compat = True
    where = f"{tr.module_name}:{tr._line(original)}"
    x = code_of(held.value).strip()
    tr._record(original, "Tensor.__setitem__", "_ms_compat.write_data", R.DIFFERENCE, ROWS_NOTE)
    tr.sites[-1].test = ROWS_TEST
    tr.need.add("ops")
    ops = tr.names["ops"]
    return cst.FlattenSentinel([
        cst.Assign(targets=[cst.AssignTarget(cst.Name(ROWS))], value=cst.parse_expression(f"{ops}.deepcopy({x})")),
        updated.with_changes(targets=[cst.AssignTarget(sub.with_changes(value=cst.Name(ROWS)))]),
        cst.Expr(value=tr._render_template(f"{R.COMPAT}.write_data({x}, {ROWS}, {where!r})"))])


ROWS_TEST = "tests/test_heldout13_programs.py::test_rows_of_a_parameter_stored_through_data_in_forward"

STORE_NOTE = ("`x.data = v`: v written into x's memory (ops.assign on a Parameter), where a compiled step reading x "
              "sees it; MindSpore's data setter gives x new memory, which a step compiled before keeps not reading. "
              "Another shape or dtype: x takes v as torch's")


def data_store(tr, original: cst.Assign, updated: cst.Assign) -> Optional[cst.BaseSmallStatement]:
    """`p.data = v` in a function or method other than __init__ (SAM's `p.data = self.state[p]["old_p"]`, an EMA's
    `ema_p.data = ...`): `_ms_compat.store_data(p, v, "module:line")` (templates/compat_parts/data_writes.py)."""
    if len(original.targets) != 1 or not tr._funcs or tr._funcs[-1].name == "__init__" or tr._in_graph_code():
        return None     # (in construct and what it calls the setter stays: a graph compiles the store itself)
    if not _torch_module(tr):
        return None     # MindSpore code already (msmigrate's own output converted again must not change)
    target = updated.targets[0].target
    if not (isinstance(target, cst.Attribute) and target.attr.value == "data" and held_tensor(target.value)):
        return None
    tr.uses_compat = True
    where = f"{tr.module_name}:{tr._line(original)}"
    tr._record(original, "Tensor.data", "_ms_compat.store_data", R.DIFFERENCE, STORE_NOTE)
    tr.sites[-1].test = STORE_TEST
    return cst.Expr(value=tr._render_template(
        f"{R.COMPAT}.store_data({code_of(target.value).strip()}, {code_of(updated.value).strip()}, {where!r})"))


STORE_TEST = "tests/test_weight_averaging.py"


def _torch_module(tr) -> bool:
    """The module imports a torch name, itself or through the project."""
    from .project_index import is_torch_name

    info = tr.index.modules.get(tr.module_name)
    return info is None or any(is_torch_name(q) for q in info.imports.values()) or tr.index.reaches_torch(info)
