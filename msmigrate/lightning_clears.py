"""`opt.zero_grad()` in the methods of a LightningModule stays. With manual optimization (a GAN's two optimizers)
`self.optimizers()` gives the converted Trainer's optimizer wrappers, which track what torch's .grad holds between
manual_backward(), step() and zero_grad() (templates/compat_parts/lightning.py, _PLManualSteps); elsewhere
zero_grad() goes, nothing accumulating in MindSpore."""
from __future__ import annotations

from typing import Callable, Optional, Set

import libcst as cst

from .callsite import code_of
from .mappings.lightning import MODULE_BASES


def kept_zero_grads(module: cst.Module, resolve: Callable[[str], Optional[str]]) -> Set[int]:
    """ids of the `name.zero_grad(...)` statements in the classes of `module` that derive from a LightningModule
    (directly, or through a class of `module` that does); resolve: a dotted name -> its qualified name."""
    if ".zero_grad(" not in module.code:
        return set()
    lightning: Set[str] = set()
    for node in module.body:
        if isinstance(node, cst.ClassDef) and any(
                (resolve(code_of(b.value).strip()) or "") in MODULE_BASES or code_of(b.value).strip() in lightning
                for b in node.bases):
            lightning.add(node.name.value)
    found: Set[int] = set()

    class Clears(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
            small = node.body[0] if len(node.body) == 1 else None
            call = small.value if isinstance(small, cst.Expr) else None
            if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value == "zero_grad" and isinstance(call.func.value, cst.Name)
                    and call.func.value.value != "self"):
                found.add(id(node))

    for node in module.body:
        if isinstance(node, cst.ClassDef) and node.name.value in lightning:
            node.visit(Clears())
    return found
