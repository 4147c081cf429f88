"""A tensor method called on a receiver the converter cannot type (`def tile(x): return x.repeat(2, 1)`)
whose same-named MindSpore Tensor method means something else, or fails: the call is decided at run
time. On a MindSpore tensor it is the converted form (as for a known tensor); on anything else
(a NumPy array, a list, the project's own object) it is the object's own method, as written:

    (ops.tile(x, (2, 1)) if _ms_compat.is_tensor(x) else x.repeat(2, 1))

A receiver that is no plain name, attribute or subscript (`f(x).repeat(2, 1)`) is evaluated once, through
`_ms_compat.on_tensor(f(x), lambda _ms_r: ops.tile(_ms_r, (2, 1)), lambda _ms_r: _ms_r.repeat(2, 1))`.
In GRAPH mode the isinstance test is decided while compiling, so only the branch taken is compiled.

Methods whose MindSpore twin behaves like torch's (reshape, split, sort, squeeze, flatten...) stay
as written: the names below were measured on MindSpore 2.10 CPU against torch, copied-through call on a
MindSpore tensor, PyNative and ms.jit (tests/test_first_rule_gaps.py runs a few of them)."""
from __future__ import annotations

import dataclasses
from typing import Optional

import libcst as cst

from . import registry as R
from .callsite import UnsupportedSite, code_of

# name -> what the copied-through MindSpore method does on a tensor
DIFFERING = {
    "repeat": "no CPU kernel ('repeat' is not supported on this device)",
    "std": "population estimate (ddof=0); torch's default is the unbiased one",
    "var": "population estimate (ddof=0); torch's default is the unbiased one",
    "any": "wrong on a float tensor (x.any(1) of [[0, 1, 2]] is False)",
    "transpose": "transpose(0, 1) gives the input unchanged under ms.jit",
    "max": "max(dim) gives one value under ms.jit (torch: values and indices)",
    "min": "min(dim) gives one value under ms.jit (torch: values and indices)",
    "diag": "gives a diagonal matrix of the whole input; fails under ms.jit",
    "dot": "rejects 1-D vectors",
    "median": "another result for the whole-tensor median",
    "unique": "no CPU kernel (Unique2)",
    "unfold": "the Im2Col unfold of 4-D images, not torch's sliding windows",
    "quantile": "fails on CPU",
    "kron": "no such Tensor method",
    "equal": "elementwise (torch: one bool for the whole tensors)",
    "mode": "no such Tensor method",
    # gemma_pytorch's generate(): `prompt_mask.index_select(1, output_index)` with a 0-d index (torch: one index)
    "index_select": "rejects a 0-d index (torch takes it as a one-element index)",
    # an input with no elements (`loss[mask].sum()` with no positive): uninitialised results
    # (templates/compat_parts/empty_reductions.py; tests/parity/test_empty_reductions.py::test_untyped_receivers)
    "sum": "garbage for an empty tensor (torch: 0)",
    "mean": "-inf or garbage for an empty tensor (torch: nan)",
    "prod": "garbage over an empty dim (torch: 1)",
    "norm": "garbage for an empty tensor (torch: 0)",
}
# methods MindSpore's tensor has with torch's meaning except on an empty tensor: on a comparison of tensors
# (`(x > 0).sum()`, a bool tensor) they take the tensor form, torch's value for an empty input
EMPTY_SAFE = ("sum", "mean")


def tensor_comparison(tr, receiver: cst.BaseExpression) -> bool:
    """`(x > 0)` / `(x > 0)[i]` of a tensor x."""
    while isinstance(receiver, cst.Subscript):
        receiver = receiver.value
    return isinstance(receiver, cst.Comparison) and tr._tensorish(receiver)


NOTE = "receiver of unknown type: torch's meaning on a MindSpore tensor, the object's own method otherwise " \
       "(decided at run time)"
_VAR = "_ms_r"


def _simple(node: cst.BaseExpression) -> bool:
    """A receiver read twice without effect: a name, `a.b`, `x[i]` with such parts and constants."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return _simple(node.value)
    if isinstance(node, cst.Subscript):
        return _simple(node.value) and all(
            isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.Integer, cst.Name, cst.UnaryOperation))
            for e in node.slice)
    return False


def numpy_call(tr, value: cst.BaseExpression) -> bool:
    """`np.ones(3)`, `numpy.random.rand(2)`: a call of a NumPy function (its result is no tensor)."""
    if not isinstance(value, cst.Call):
        return False
    q = tr._qname_any(value.func)
    return bool(q) and q.startswith("numpy.") and not tr._shadowed(code_of(value.func).split(".", 1)[0])


def _from_other(tr, node: cst.BaseExpression) -> bool:
    """`arr.reshape(3, 1).transpose(1, 0)` on a NumPy array `arr`, `np.ones(3).repeat(2)`: a chain of
    methods, attributes and subscripts on a name known to be no tensor (nor torch)."""
    root = node
    while True:
        if isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute):
            root = root.func.value
        elif isinstance(root, (cst.Attribute, cst.Subscript)):
            root = root.value
        else:
            break
    return (root is not node and isinstance(root, cst.Name) and tr._receiver_kind(root) == "other"
            and tr._torch_qname(root) is None)


def mark_dispatched(tr, node: cst.CSTNode) -> None:
    """The object's-own-method branch of a choice this module wrote (`... if _ms_compat.is_tensor(x) else
    x.repeat(2, 1)`, `_ms_compat.on_tensor(r, lambda ..., lambda _ms_r: _ms_r.repeat(2, 1))`) is left as it is:
    converting converted code again changes nothing."""
    if isinstance(node, cst.IfExp) and isinstance(node.test, cst.Call) \
            and code_of(node.test.func) == "_ms_compat.is_tensor":
        tr.dispatched.add(id(node.orelse))
    elif isinstance(node, cst.Call) and code_of(node.func) == "_ms_compat.on_tensor" and len(node.args) == 3 \
            and isinstance(node.args[2].value, cst.Lambda):
        tr.dispatched.add(id(node.args[2].value.body))


def dispatch(tr, original: cst.Call, updated: cst.Call, m) -> Optional[cst.BaseExpression]:
    """The run-time choice for `recv.name(...)` of a DIFFERING name on an untyped receiver (None: not one)."""
    if original.func.attr.value not in DIFFERING or any(a.star for a in original.args):
        return None
    if id(original) in tr.dispatched:
        return None
    if _from_other(tr, original.func.value):
        return None
    base = original.func.value
    while isinstance(base, cst.Subscript):
        base = base.value
    if original.func.attr.value == "any" and isinstance(base, cst.Comparison):
        if not tensor_comparison(tr, base):
            return None     # `(y > 100).any()` of untyped values: MindSpore's any is right on a non-empty bool tensor
        # `(x > 0).any()` of a tensor: the tensor form, torch's False for an empty one (empty_reductions.py)
        return tr._apply(original, updated, m, m.source, receiver=updated.func.value)
    receiver = updated.func.value
    simple = _simple(receiver)
    call = updated
    if not simple:   # the tensor form and the method read one evaluation of the receiver
        call = updated.with_changes(func=updated.func.with_changes(value=cst.Name(_VAR)))
    count = len(tr.sites)
    try:
        tensor_form = tr._apply(original, call, m, m.source, receiver=call.func.value)
    except UnsupportedSite as exc:
        tensor_form = tr._todo(original, m.source, str(exc), call)
    if code_of(tensor_form) == code_of(call):    # `x.max()`: the same call either way
        del tr.sites[count:]
        return None
    if len(tr.sites) > count and tr.sites[-1].status != R.TODO:
        site = tr.sites[-1]
        tr.sites[-1] = dataclasses.replace(site, note=(site.note + "; " if site.note else "") + NOTE)
    paren = dict(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    if simple:
        test = cst.Call(func=tr._render_template("_ms_compat.is_tensor"), args=[cst.Arg(receiver)])
        return cst.IfExp(test=test, body=tensor_form, orelse=call, **paren)
    params = cst.Parameters(params=[cst.Param(cst.Name(_VAR))])
    return cst.Call(func=tr._render_template("_ms_compat.on_tensor"), args=[
        cst.Arg(receiver), cst.Arg(cst.Lambda(params=params, body=tensor_form)),
        cst.Arg(cst.Lambda(params=params, body=call))])
