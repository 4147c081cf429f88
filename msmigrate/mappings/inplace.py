"""Records of torch's in-place tensor methods (`Tensor.add_`, `Tensor.cos_`...), made by one rule from the
out-of-place records that exist when this module is imported (it is imported last).

A whole statement `x.op_(args)` on a local tensor name is rewritten by the transformer as `x = <converted
out-of-place form>` (msmigrate/inplace_forms.py); these records are what the report, the census and
`msmigrate api` say about it, and the rule below answers every other use of the method (a TODO).
"""
from __future__ import annotations

import libcst as cst

from ..callsite import UnsupportedSite, code_of
from ..inplace_forms import needs_cast_back, out_of_place, outside_statement_reason
from ..records import DIFFERENCE, REGISTRY, mapping, rule
from ..torch_tensor_names import TENSOR_ATTRIBUTES
from .tensor_methods import _INPLACE_FN

T = "tests/parity/test_inplace_family.py"


# calls that return a new tensor no other name refers to (torch.as_tensor / torch.Tensor(t) may return their
# argument, x.float() x itself: not among them)
_FRESH = frozenset("torch." + n for n in (
    "zeros ones empty full tensor arange linspace logspace eye rand randn randint randperm zeros_like ones_like "
    "empty_like full_like rand_like randn_like randint_like").split())


def _fresh(tr, receiver) -> bool:
    """`torch.zeros(3, 5)` / `x.clone()`: a new tensor, changed in place before anything else can see it."""
    if not isinstance(receiver, cst.Call):
        return False
    func = receiver.func
    if isinstance(func, cst.Attribute) and func.attr.value == "clone" and tr._torch_qname(func) is None:
        return True
    if isinstance(func, cst.Attribute) and out_of_place(func.attr.value) is not None \
            and tr._torch_qname(func) is None:
        # `torch.rand(n, d).mul_(2 * s).add_(-s)` (RepDistiller's memory bank): an in-place op returns its
        # receiver, so a chain of them on a new tensor is still that new tensor
        return _fresh(tr, func.value)
    return tr._torch_qname(func) in _FRESH


def _outside_statement(ctx):
    """Reached only where the transformer did not rebind: `y = x.add_(1)`, a chained call, an attribute
    or subscript receiver, a receiver not known to be a tensor. On a new tensor (`torch.zeros(3, 5).scatter_(...)`,
    `x.clone().add_(1)`) the in-place op is its out-of-place form: nothing else refers to that tensor."""
    name = ctx.original.func.attr.value
    found = out_of_place(name)
    if found is None or not _fresh(ctx.tr, ctx.original.func.value):
        raise UnsupportedSite(outside_statement_reason(name))
    tr, call = ctx.tr, ctx.bound.call
    m, receiver_first = found
    recv = call.func.value
    # a result of another dtype (`torch.tensor([1., 0.]).logical_not_()`: bool) is cast back to the new
    # tensor's, as torch's in-place form keeps it: the tensor is named once, by a lambda's parameter
    cast_back = needs_cast_back(name)
    held = cst.Name("_ms_x") if cast_back else recv
    if receiver_first:
        plain = call.with_changes(func=cst.Name(name[:-1]), args=[cst.Arg(held)] + list(call.args))
    else:
        plain = call.with_changes(func=call.func.with_changes(value=held, attr=cst.Name(name[:-1])))
    before = len(tr.sites)
    out = tr._apply(ctx.original, plain, m, m.source, receiver=None if receiver_first else held)
    del tr.sites[before:]    # reported once, as Tensor.NAME_
    if cast_back:
        return ctx.expr(f"(lambda _ms_x: ({code_of(out).strip()}).astype(_ms_x.dtype))({code_of(recv).strip()})")
    return out


def _register() -> None:
    for name in sorted(n for n in TENSOR_ATTRIBUTES if n.endswith("_") and not n.endswith("__")):
        if "Tensor." + name in REGISTRY:
            continue
        found = out_of_place(name)
        if found is not None:
            rule(f"Tensor.{name}", None, status=DIFFERENCE, test=f"{T}::test_inplace_rebinds_match_torch",
                 note=f"in place: a whole statement `x.{name}(...)` on a local tensor becomes `x = <{found[0].source} "
                      f"converted>` (MindSpore's in-place arithmetic leaves the tensor unchanged on CPU "
                      f"PyNative); other references to the same tensor do not see the change; a used result "
                      f"(`res.append(x.{name}(...))`) gets that rebinding before its statement where no other name "
                      f"would miss a change (msmigrate/inplace_values.py); on a new tensor (`torch.zeros(n)."
                      f"{name}(...)`, `x.clone().{name}(...)`) the out-of-place form (cast back to its dtype where the result's "
                      f"differs); elsewhere a TODO")(
                _outside_statement)
        elif name in _INPLACE_FN:
            mapping(f"Tensor.{name}", None, test="tests/parity/test_tensor_methods.py::test_inplace",
                    note=f"in-place: on CPU PyNative MindSpore's in-place arithmetic leaves the tensor unchanged or "
                         f"has no kernel; rewrite it functionally, e.g. {_INPLACE_FN[name]}, and rebind every name "
                         f"that must see the new value")


_register()
