"""Records of torch's in-place tensor methods (`Tensor.add_`, `Tensor.cos_`...), made by one rule from the
out-of-place records that exist when this module is imported (it is imported last).

A whole statement `x.op_(args)` on a local tensor name is rewritten by the transformer as `x = <converted
out-of-place form>` (msmigrate/inplace_forms.py); these records are what the report, the census and
`msmigrate api` say about it, and the rule below answers every other use of the method (a TODO).
"""
from __future__ import annotations

from ..callsite import UnsupportedSite
from ..inplace_forms import out_of_place, outside_statement_reason
from ..records import DIFFERENCE, REGISTRY, mapping, rule
from ..torch_tensor_names import TENSOR_ATTRIBUTES
from .tensor_methods import _INPLACE_FN

T = "tests/parity/test_inplace_family.py"


def _outside_statement(ctx):
    """Reached only where the transformer did not rebind: `y = x.add_(1)`, a chained call, an attribute
    or subscript receiver, a receiver not known to be a tensor."""
    raise UnsupportedSite(outside_statement_reason(ctx.original.func.attr.value))


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
                      f"would miss a change (msmigrate/inplace_values.py); elsewhere a TODO")(
                _outside_statement)
        elif name in _INPLACE_FN:
            mapping(f"Tensor.{name}", None, test="tests/parity/test_tensor_methods.py::test_inplace",
                    note=f"in-place: on CPU PyNative MindSpore's in-place arithmetic leaves the tensor unchanged or "
                         f"has no kernel; rewrite it functionally, e.g. {_INPLACE_FN[name]}, and rebind every name "
                         f"that must see the new value")


_register()
