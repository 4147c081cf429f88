"""torch.autograd.backward(loss) as loss.backward().

`torch.autograd.backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
inputs=None)` with one tensor is `tensors.backward(gradient=grad_tensors, ...)` in torch itself.
This pre-pass writes it that way before the training-loop rewrite runs (train_loop.py recognises
`<expr>.backward()`), so both spellings convert alike. A call with several tensors, or with
arguments this form cannot carry, is left as written and stays a TODO site."""
from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from .callsite import dotted_name

QUALIFIED = "torch.autograd.backward"
# torch.autograd.backward's keyword -> Tensor.backward's
_KEYWORDS = {"grad_tensors": "gradient", "grad_variables": "gradient", "retain_graph": "retain_graph",
             "create_graph": "create_graph", "inputs": "inputs"}


def might_call_backward(source: str) -> bool:
    return "backward(" in source and "autograd" in source


def _qualified(func: cst.BaseExpression, imports: Dict[str, str]) -> Optional[str]:
    name = dotted_name(func)
    if not name:
        return None
    head, _, rest = name.partition(".")
    if head not in imports:
        return None
    return imports[head] + ("." + rest if rest else "")


def _single(node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`x`, `[x]` or `(x,)`: the one tensor; None for several or for a starred element."""
    if isinstance(node, (cst.List, cst.Tuple)):
        if len(node.elements) != 1 or isinstance(node.elements[0], cst.StarredElement):
            return None
        return node.elements[0].value
    return node


class _Backward(cst.CSTTransformer):
    def __init__(self, imports: Dict[str, str]):
        super().__init__()
        self.imports = imports

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if _qualified(updated.func, self.imports) != QUALIFIED:
            return updated
        tensors: Optional[cst.BaseExpression] = None
        rest: List[cst.Arg] = []
        for i, arg in enumerate(updated.args):
            if arg.star:
                return updated
            name = arg.keyword.value if arg.keyword else ("tensors", "grad_tensors", "retain_graph",
                                                            "create_graph", "grad_variables", "inputs")[i]
            if name == "tensors":
                tensors = _single(arg.value)
                if tensors is None:
                    return updated
            elif name in ("grad_tensors", "grad_variables"):
                gradient = _single(arg.value)
                if gradient is None:
                    return updated
                rest.append(cst.Arg(gradient, keyword=cst.Name("gradient"), equal=_EQ))
            elif name in _KEYWORDS:
                rest.append(cst.Arg(arg.value, keyword=cst.Name(_KEYWORDS[name]), equal=_EQ))
            else:
                return updated
        if tensors is None:
            return updated
        receiver = tensors
        if not isinstance(tensors, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not tensors.lpar:
            receiver = tensors.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])   # (a + b).backward()
        return cst.Call(func=cst.Attribute(receiver, cst.Name("backward")), args=rest)


_EQ = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def rewrite_autograd_backward(module: cst.Module, imports: Dict[str, str]) -> cst.Module:
    return module.visit(_Backward(imports))
