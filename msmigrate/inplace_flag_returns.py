"""Returns of an in-place result that an `inplace` flag chose (timm's and geffnet's activations):

    def swish(x, inplace: bool = False):
        return x.mul_(x.sigmoid()) if inplace else x.mul(x.sigmoid())

    def hard_sigmoid(x, inplace: bool = False):
        if inplace:
            return x.add_(3.).clamp_(0., 6.).div_(6.)
        return F.relu6(x + 3.) / 6.

    def forward(self, x):                       # an activation module's
        return x.sigmoid_() if self.inplace else x.sigmoid()

torch changes the argument and returns it. MindSpore's in-place arithmetic changes nothing on CPU, so the main pass
left such a call a raising TODO, and every network built with these activations stopped. The returned value is the
out-of-place result (`x.mul(x.sigmoid())`, `x.add(3.).clamp(0., 6.).div(6.)`), written on the torch source after
the callers were analysed as torch wrote them: a caller in the same file that may set the flag and reads its tensor
after the call is refused there (inplace_callers.py; a call leaving `inplace` False changes nothing), as is one
reading the input of an activation built with inplace=True by a callable msmigrate does not know
(inplace_activations.py). Only where the test reads `inplace` (the caller's explicit choice of the in-place form,
which promises that the input is not needed again), the receiver is a parameter of the function, and the chain is
the value returned (or a branch of the conditional expression returned).
"""
from __future__ import annotations

from typing import List, Set

import libcst as cst

from .inplace_forms import CAST_BACK, out_of_place
from .torch_tensor_names import TENSOR_ATTRIBUTES


def might_return_flagged_inplace(source: str) -> bool:
    return "inplace" in source and "return" in source


def _reads_inplace(test: cst.BaseExpression) -> bool:
    """`inplace`, `self.inplace`, `not inplace`, `inplace and x.requires_grad`..."""
    found = []

    class _Find(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if node.value == "inplace":
                found.append(node)

    test.visit(_Find())
    return bool(found)


def _plain_twin(name: str) -> bool:
    """`mul_` -> `mul`: torch's out-of-place method of the same arguments, giving the same value."""
    return (name.endswith("_") and not name.endswith("__") and name not in CAST_BACK
            and name[:-1] in TENSOR_ATTRIBUTES and out_of_place(name) is not None)


def _out_of_place_chain(value: cst.BaseExpression, params: Set[str]):
    """`x.add_(3.).clamp_(0., 6.)` on a parameter x: the chain with each link's out-of-place twin; else None."""
    links: List[cst.Call] = []
    node = value
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and _plain_twin(node.func.attr.value):
        links.append(node)
        node = node.func.value
    if not links or not (isinstance(node, cst.Name) and node.value in params):
        return None
    out = node
    for call in reversed(links):
        out = call.with_changes(func=call.func.with_changes(value=out, attr=cst.Name(call.func.attr.value[:-1])))
    return out


class _Rewrite(cst.CSTTransformer):
    def __init__(self) -> None:
        super().__init__()
        self._params: List[Set[str]] = []
        self._guards: List[List[bool]] = []     # per function, per enclosing `if`: its test reads `inplace`

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        p = node.params
        self._params.append({x.name.value for x in list(p.posonly_params) + list(p.params) + list(p.kwonly_params)})
        self._guards.append([])

    def leave_FunctionDef(self, original, updated):
        self._params.pop()
        self._guards.pop()
        return updated

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_If(self, node: cst.If) -> None:
        if self._guards:
            self._guards[-1].append(_reads_inplace(node.test))

    def leave_If(self, original, updated):
        if self._guards:
            self._guards[-1].pop()
        return updated

    def leave_Return(self, original: cst.Return, updated: cst.Return) -> cst.Return:
        if not self._params or updated.value is None:
            return updated
        params, value = self._params[-1], updated.value
        if isinstance(value, cst.IfExp) and _reads_inplace(value.test):
            body = _out_of_place_chain(value.body, params)
            orelse = _out_of_place_chain(value.orelse, params)
            if body is None and orelse is None:
                return updated
            return updated.with_changes(value=value.with_changes(body=body or value.body,
                                                                 orelse=orelse or value.orelse))
        if any(self._guards[-1]):
            chain = _out_of_place_chain(value, params)
            if chain is not None:
                return updated.with_changes(value=chain)
        return updated


def rewrite_flagged_inplace_returns(module: cst.Module) -> cst.Module:
    return module.visit(_Rewrite())
