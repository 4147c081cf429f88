"""In-place updates through a detached alias, rewritten as updates through `.data` before conversion.

torch's `x.detach()` shares x's storage, so a statement such as

    p.detach().zero_()                                    # diffusion models' zero_module
    targ.detach().mul_(rate).add_(src, alpha=1 - rate)    # an EMA of the weights

changes `p`/`targ` itself, without autograd. MindSpore's stop_gradient returns a copy, so the converted call
would change nothing (the main pass refuses it as "in place on a view"). As torch code the statement means
exactly

    p.data.zero_()
    targ.data.copy_(targ.data.mul(rate).add(src, alpha=1 - rate))

which the main pass converts (a parameter's `.data` is the parameter itself in MindSpore). A chain of several
in-place methods becomes one `copy_` of the out-of-place chain, only where the later methods' arguments do
not read the changed tensor (they would see its new value in torch); otherwise the statement is left alone."""
from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from .callsite import code_of, dotted_name

# in-place methods whose out-of-place twin (the name without "_") takes the same arguments
_CHAINABLE = {"add_", "sub_", "mul_", "div_", "clamp_", "clamp_min_", "clamp_max_", "clip_", "pow_", "neg_",
              "abs_", "sqrt_", "exp_", "log_", "addcmul_", "addcdiv_", "lerp_", "sign_", "floor_", "ceil_",
              "round_", "sigmoid_", "tanh_", "relu_", "masked_fill_", "fmod_", "remainder_", "reciprocal_",
              "rsqrt_", "square_", "true_divide_", "multiply_", "subtract_", "divide_"}


def might_update_detached(source: str) -> bool:
    return ".detach()." in source or ".data." in source


def _chain(call: cst.Call) -> Optional[Tuple[str, str, List[Tuple[str, cst.Call]]]]:
    """(target, how it was reached: "detach"/"data", [(method, call) innermost first]) of
    `T.detach().m1_(...).m2_(...)` or `T.data.m1_(...)...`; None for anything else."""
    links: List[Tuple[str, cst.Call]] = []
    node: cst.BaseExpression = call
    while (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
           and node.func.attr.value.endswith("_") and not node.func.attr.value.startswith("_")):
        links.append((node.func.attr.value, node))
        node = node.func.value
    if not links:
        return None
    links.reverse()
    if (isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "detach"):
        target, how = dotted_name(node.func.value), "detach"
    elif isinstance(node, cst.Attribute) and node.attr.value == "data":
        target, how = dotted_name(node.value), "data"
    else:
        return None
    return (target, how, links) if target else None


class _Reads(cst.CSTVisitor):
    def __init__(self, root: str) -> None:
        self.root, self.found = root, False

    def visit_Name(self, node: cst.Name) -> None:
        self.found = self.found or node.value == self.root


def _reads(args, root: str) -> bool:
    seen = _Reads(root)
    for a in args:
        a.value.visit(seen)
    return seen.found


class _Rewrite(cst.CSTTransformer):
    def leave_Expr(self, original: cst.Expr, updated: cst.Expr) -> cst.Expr:
        if not isinstance(updated.value, cst.Call):
            return updated
        found = _chain(updated.value)
        if found is None:
            return updated
        target, how, links = found
        if len(links) == 1:
            if how == "data":
                return updated        # `p.data.op_(...)`: the main pass's own form
            method, call = links[0]
            return updated.with_changes(value=cst.parse_expression(
                f"{target}.data.{method}({_args(call)})"))
        root = target.split(".")[0]
        if any(m not in _CHAINABLE for m, _ in links) or any(_reads(c.args, root) for _, c in links[1:]):
            return updated
        value = f"{target}.data" + "".join(f".{m[:-1]}({_args(c)})" for m, c in links)
        return updated.with_changes(value=cst.parse_expression(f"{target}.data.copy_({value})"))


def _args(call: cst.Call) -> str:
    return ", ".join(code_of(a).strip().rstrip(",") for a in call.args)


def rewrite_detached_updates(module: cst.Module) -> cst.Module:
    return module.visit(_Rewrite())
