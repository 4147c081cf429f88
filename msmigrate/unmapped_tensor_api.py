"""torch.Tensor methods and properties with no mapping record: on a value the type inference knows to be
a tensor, such a name (`x.frexp()`, `x.cfloat()`, `x.grad_fn`) is a torch API like any other, so it becomes
a site: a TODO comment, a report entry and code that raises MigrationError when reached, never a call
copied through unseen. Values whose type is not known to be a tensor (lists, NumPy arrays, unknown
objects) are left alone."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from . import registry as R
from .callsite import code_of
from .sites import Site, shorten
from .records import COMPAT, PARAMETER_PROPERTIES, SAME_MEANING_PROPERTIES  # noqa: F401
from .records import (REQUIRES_GRAD_READ_NOTE, REQUIRES_GRAD_READ_TEST, REQUIRES_GRAD_STORE_NOTE,  # noqa: F401
                      REQUIRES_GRAD_STORE_TEST)
from .torch_tensor_names import TENSOR_ATTRIBUTES


WHY = "a torch.Tensor {kind} with no MindSpore mapping in msmigrate's registry"
# also methods of dicts and lists (`features.values()`): a receiver taken for a tensor may be either
CONTAINER_METHODS = frozenset({"values", "index"})
# MindSpore functions that return a plain (values, indices) tuple where torch returns a named tuple
TUPLE_RESULTS = frozenset({"min", "max", "sort", "topk", "median", "cummax", "cummin"})
NAMED_FIELDS = {"values": 0, "indices": 1}
RETURN_TYPES_TEST = "tests/test_unmapped_tensor_api.py::test_named_tuple_fields_become_indices"


def _is_mindspore_code(tr) -> bool:
    """A file that imports MindSpore already (msmigrate's output, converted again): its tensors are
    MindSpore's, and their methods (broadcast_to, asnumpy...) are no torch sites."""
    return any(q == "mindspore" or q.startswith("mindspore.") for q in tr._imports.values())


def _why(kind: str, name: str) -> str:
    """WHY, with the API census's reason and what to write instead when it has one."""
    from .census import rule_note

    note = rule_note("Tensor." + name)
    return WHY.format(kind=kind) + (f" ({note})" if note else "")


def is_unmapped(name: str) -> bool:
    return (name in TENSOR_ATTRIBUTES and R.lookup("Tensor." + name) is None
            and R.lookup("Module." + name) is None)


def method_call(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.BaseExpression]:
    """`x.frexp()` on a tensor with no record: a TODO (None: not such a site)."""
    name = original.func.attr.value
    if not is_unmapped(name) or name in CONTAINER_METHODS or _is_mindspore_code(tr) or tr._receiver_kind(original.func.value) != "tensor":
        return None
    if id(original) in tr._inplace_stmt_calls:
        # `x.tril_(k)` as a statement, whose out-of-place form has a record: `x = <converted x.tril(k)>`
        rebound = tr._rebind_inplace(original, updated)
        if rebound is not None:
            return rebound
    return tr._todo(original, "Tensor." + name, _why("method", name), updated)


def named_tuple_field(tr, original: cst.Attribute, updated: cst.Attribute) -> Optional[cst.BaseExpression]:
    """`x.max(dim=1).values` / `torch.sort(x).indices`: the converted call (`ops.max(x, 1)`) returns a
    plain (values, indices) tuple, so the field becomes `[0]` / `[1]`."""
    name = original.attr.value
    call = updated.value
    if name not in NAMED_FIELDS:
        return None
    if isinstance(original.value, cst.Name):     # `r = x.topk(2)` earlier in this scope, then `r.values`
        op = _tuple_names(tr).get(_scope_key(tr, original.value.value))
    elif isinstance(call, cst.Call) and isinstance(original.value, cst.Call):
        op = _tuple_op(tr, call)
        if op is None:
            decided = _run_time_field(tr, original, call, name)
            if decided is not None:
                return decided
    elif isinstance(call, cst.IfExp) and isinstance(original.value, cst.Call):
        return _run_time_field(tr, original, call, name)
    else:
        return None
    if op is None:
        return None
    if _is_mindspore_code(tr) and original.value is call:
        return None   # MindSpore code as written: ops.max(...) is no torch site
    i = NAMED_FIELDS[name]
    tr.sites.append(Site(tr._line(original), "torch.return_types." + name, f"[{i}]", R.CONVERTED,
                         f"ops.{op} returns a plain (values, indices) tuple", shorten(code_of(original)),
                         RETURN_TYPES_TEST))
    return cst.Subscript(value=call, slice=[cst.SubscriptElement(slice=cst.Index(value=cst.Integer(str(i))))])


def _run_time_field(tr, original: cst.Attribute, decided: cst.BaseExpression,
                    name: str) -> Optional[cst.BaseExpression]:
    """`f(x).max(-1).values` on a receiver typed at run time (untyped_methods.py; a pandas Series' max also
    has `.values`): the field is read in each branch, `[0]` of the converted call's plain tuple and `.values`
    of the call as written: `_ms_compat.on_tensor(f(x), lambda _ms_r: ops.max(_ms_r, -1)[0],
    lambda _ms_r: _ms_r.max(-1).values)`, `(ops.max(r, -1)[0] if _ms_compat.is_tensor(r) else r.max(-1).values)`."""
    i = NAMED_FIELDS[name]

    def field(e):
        return cst.Subscript(value=e, slice=[cst.SubscriptElement(slice=cst.Index(value=cst.Integer(str(i))))])

    if isinstance(decided, cst.Call) and code_of(decided.func) == f"{COMPAT}.on_tensor" and len(decided.args) == 3:
        tensor_form, method = decided.args[1].value, decided.args[2].value
        if not (isinstance(tensor_form, cst.Lambda) and isinstance(method, cst.Lambda)
                and isinstance(tensor_form.body, cst.Call)):
            return None
        op = _tuple_op(tr, tensor_form.body)
        if op is None:
            return None
        out = decided.with_changes(args=[
            decided.args[0],
            decided.args[1].with_changes(value=tensor_form.with_changes(body=field(tensor_form.body))),
            decided.args[2].with_changes(value=method.with_changes(
                body=cst.Attribute(value=method.body, attr=cst.Name(name))))])
    elif isinstance(decided, cst.IfExp) and isinstance(decided.body, cst.Call):
        op = _tuple_op(tr, decided.body)
        if op is None:
            return None
        out = decided.with_changes(body=field(decided.body),
                                   orelse=cst.Attribute(value=decided.orelse, attr=cst.Name(name)))
    else:
        return None
    tr.sites.append(Site(tr._line(original), "torch.return_types." + name, f"[{i}]", R.CONVERTED,
                         f"ops.{op} returns a plain (values, indices) tuple (on a MindSpore tensor; the call as "
                         "written on anything else)", shorten(code_of(original)), RETURN_TYPES_TEST))
    return out


def _tuple_op(tr, call: cst.Call) -> Optional[str]:
    """The ops function behind a converted (values, indices) call: `ops.max(...)`, or the records' wrapper that
    casts the indices to int64, `(lambda _ms_v, _ms_i: (...))(*ops.sort(...))`, of the op itself or of the op
    run on a 0-d input as a vector, `_ms_compat.as_vector(ops.cummax, x, 0)`."""
    func = call.func
    if isinstance(func, cst.Lambda) and [p.name.value for p in func.params.params] == ["_ms_v", "_ms_i"] \
            and len(call.args) == 1 and call.args[0].star == "*" and isinstance(call.args[0].value, cst.Call):
        call = call.args[0].value
        func = call.func
        if (isinstance(func, cst.Attribute) and func.attr.value == "as_vector" and isinstance(func.value, cst.Name)
                and func.value.value == COMPAT and call.args):
            func = call.args[0].value
    if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            and func.value.value == tr.names["ops"] and func.attr.value in TUPLE_RESULTS):
        return func.attr.value
    if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == COMPAT
            and func.attr.value in _COMPAT_TUPLE_OPS):
        return _COMPAT_TUPLE_OPS[func.attr.value]
    return None


# Tensor methods whose torch result is a named (values, indices) tuple. No NumPy array, list or pandas object
# has a method of these names whose result has `.indices`. A pandas Series' max/min/median/mode result has
# `.values` too: those calls are decided at run time (untyped_methods.py, _run_time_field); sort, topk and
# kthvalue have no pandas twin, and pandas' cummax/cummin on a tensor program's value is taken for a tensor's
# (ops.cummax of a Series fails loudly, never silently)
FIELD_METHODS = {"indices": frozenset({"min", "max", "sort", "topk", "median", "nanmedian", "cummax", "cummin",
                                       "kthvalue", "mode"}),
                 "values": frozenset({"sort", "topk", "kthvalue", "nanmedian", "cummax", "cummin"})}


def mark_field_receiver(tr, node: cst.Attribute) -> None:
    """visit_Attribute: the receiver of `r.sort(-1).values`, `r.max(1).indices` is a tensor (FIELD_METHODS)."""
    call = node.value
    if node.attr.value in NAMED_FIELDS and isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) \
            and call.func.attr.value in FIELD_METHODS[node.attr.value]:
        field_receivers(tr).add(id(call.func.value))


def field_receivers(tr) -> set:
    return tr.__dict__.setdefault("_named_field_receivers", set())


def _tuple_names(tr) -> dict:
    """{(scope, name): op} of the names whose latest binding, in reading order, is a converted (values, indices)
    call (track_tuple_names)."""
    return tr.__dict__.setdefault("_tuple_result_names", {})


def _scope_key(tr, name: str):
    return (id(tr._scopes[-1]) if tr._scopes else 0, name)


def track_tuple_names(tr, targets, value: Optional[cst.BaseExpression]) -> None:
    """An assignment: `r = <converted x.topk(2)>` makes r's `.values`/`.indices` reads `[0]`/`[1]`; any other
    binding of r ends that."""
    names = _tuple_names(tr)
    op = _tuple_op(tr, value) if isinstance(value, cst.Call) and len(targets) == 1 else None
    for target in targets:
        for node in ([target] if isinstance(target, cst.Name) else
                     [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else []):
            if isinstance(node, cst.Name):
                if op is not None and node is target:
                    names[_scope_key(tr, node.value)] = op
                else:
                    names.pop(_scope_key(tr, node.value), None)


# helpers standing for an ops function with a (values, indices) result (compat_parts/empty_reductions.py,
# mode_values.py)
_COMPAT_TUPLE_OPS = {"median_dim": "median", "mode": "mode"}


def _unmapped_tensor_property(tr, attr: cst.Attribute) -> Optional[str]:
    """The property's name when `attr` reads, on a value known to be a tensor, a torch.Tensor property
    with no record (`self.X.requires_grad` of a module's own Parameter excepted); else None."""
    name = attr.attr.value
    if name in SAME_MEANING_PROPERTIES or not is_unmapped(name) or _is_mindspore_code(tr):
        return None
    recv = attr.value
    if name in PARAMETER_PROPERTIES and isinstance(recv, cst.Attribute) and isinstance(recv.value, cst.Name) \
            and recv.value.value == "self":
        return None
    return name if tr._receiver_kind(recv) == "tensor" else None


def attribute_read(tr, original: cst.Attribute, updated: cst.Attribute) -> Optional[cst.BaseExpression]:
    """`x.grad_fn` read on a tensor with no record: a TODO that raises where it is read."""
    field = named_tuple_field(tr, original, updated)
    if field is not None:
        return field
    chained = property_receiver(tr, original, updated)
    if chained is not None:
        return chained
    name = _unmapped_tensor_property(tr, original)
    if name is None:
        if _requires_grad_of_unknown(tr, original):   # `f(x).requires_grad`: most likely a tensor's flag
            return _requires_grad_read(tr, original, updated)
        return None
    if name == "requires_grad" and id(original) not in tr._device_stores:   # a store target stays a TODO
        return _requires_grad_read(tr, original, updated)
    # inside a function the placeholder is called, so the read itself raises (`x.grad_fn is None` would
    # otherwise compare a placeholder); at module level it stays a value that raises when used
    return tr._todo(original, "Tensor." + name, WHY.format(kind="attribute"), cst.Call(func=cst.Name("_")))


def property_receiver(tr, original: cst.BaseExpression, updated: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`x.grad.zero_()`, `x.grad_fn.name()`, `x.grad.data`: the receiver reads an unmapped property of a
    tensor (the libcst pass never visits it on its own): the whole expression is the TODO."""
    recv = original.func.value if isinstance(original, cst.Call) else original.value
    if not isinstance(recv, cst.Attribute):
        return None
    name = _unmapped_tensor_property(tr, recv)
    if name is None:
        return None
    why = WHY.format(kind="attribute") + f", read by {shorten(code_of(original), 60)}"
    call_args = updated if isinstance(updated, cst.Call) else cst.Call(func=cst.Name("_"))
    return tr._todo(original, "Tensor." + name, why, call_args)


# torch.Tensor's attributes that are not methods (descriptors; `names` is an instance property): a store to
# any other name on a tensor (`intermediates.values = v`, a method's name) only sets a Python attribute, in
# torch as on a MindSpore tensor. tests/parity/test_library_idioms.py checks the set against torch.
TENSOR_DATA_ATTRIBUTES = frozenset((
    'H', 'T', 'data', 'device', 'dtype', 'grad', 'grad_dtype', 'grad_fn', 'imag', 'is_cpu', 'is_cuda', 'is_ipu',
    'is_leaf', 'is_maia', 'is_meta', 'is_mkldnn', 'is_mps', 'is_mtia', 'is_nested', 'is_quantized', 'is_sparse',
    'is_sparse_csr', 'is_vulkan', 'is_xla', 'is_xpu', 'itemsize', 'layout', 'mH', 'mT', 'name', 'names', 'nbytes',
    'ndim', 'output_nr', 'real', 'requires_grad', 'retains_grad', 'shape', 'volatile'))


def attribute_store(tr, original: cst.Assign) -> Optional[cst.BaseStatement]:
    """`x.requires_grad = True` on a tensor: the statement becomes a placeholder call that raises."""
    if len(original.targets) != 1:
        return None
    target = original.targets[0].target
    if not isinstance(target, cst.Attribute) or target.attr.value not in TENSOR_DATA_ATTRIBUTES:
        return None
    name = _unmapped_tensor_property(tr, target)
    if name is None:
        return None
    flag = original.value.value if isinstance(original.value, cst.Name) else None
    if name == "requires_grad" and isinstance(target.value, cst.Name) and flag in ("True", "False"):
        return _requires_grad_store(tr, original, target.value.value, flag)
    ph = tr._todo(original, "Tensor." + name, WHY.format(kind="attribute"))
    return cst.Expr(value=cst.Call(func=ph))


def _requires_grad_of_unknown(tr, attr: cst.Attribute) -> bool:
    """`.requires_grad` read on a value of unknown kind (a function's result, a name bound by an unknown call):
    requires_grad_of answers a tensor's flag and reads any other object's own attribute, so the read needs no
    proof that it is a tensor (a MindSpore tensor has no such attribute: copied through, it raised)."""
    if attr.attr.value != "requires_grad" or id(attr) in tr._device_stores or _is_mindspore_code(tr):
        return False
    recv = attr.value
    if isinstance(recv, cst.Attribute) and (tr._receiver_kind(recv.value) == "module" or (
            isinstance(recv.value, cst.Name) and recv.value.value == "self")):
        return False   # a module's own Parameter (PARAMETER_PROPERTIES), or any attribute of self
    return tr._receiver_kind(recv) == "unknown"


def _requires_grad_read(tr, original: cst.Attribute, updated: cst.Attribute) -> cst.Call:
    """`x.requires_grad` read on a tensor: `_ms_compat.requires_grad_of(x, "module:line")`
    (templates/compat_parts/requires_grad.py)."""
    tr.uses_compat = True
    where = f"{tr.module_name}:{tr._line(original)}"
    tr.sites.append(Site(tr._line(original), "Tensor.requires_grad", f"{COMPAT}.requires_grad_of", R.DIFFERENCE,
                         REQUIRES_GRAD_READ_NOTE, shorten(code_of(original)), REQUIRES_GRAD_READ_TEST))
    return cst.Call(func=tr._render_template(f"{COMPAT}.requires_grad_of"),
                    args=[cst.Arg(updated.value), cst.Arg(cst.SimpleString(repr(where)))])


def _requires_grad_store(tr, original: cst.Assign, name: str, flag: str) -> cst.SimpleStatementLine:
    """`x.requires_grad = True/False` on a tensor name: `_ms_compat.set_requires_grad(x, flag)`, the name rebound
    for False (templates/compat_parts/requires_grad.py)."""
    tr.uses_compat = True
    call = f"{COMPAT}.set_requires_grad({name}, {flag})"
    tr.sites.append(Site(tr._line(original), "Tensor.requires_grad", f"{COMPAT}.set_requires_grad", R.DIFFERENCE,
                         REQUIRES_GRAD_STORE_NOTE, shorten(code_of(original)), REQUIRES_GRAD_STORE_TEST))
    code = call if flag == "True" else f"{name} = {call}"
    return cst.parse_statement(code).body[0]
