"""backward() in one method, the optimizer's step() in another: gradients held for that step().

improved-diffusion's TrainLoop computes the gradients of several micro-batches in one method and steps in
another (written here in small):

    def forward_backward(self, batch):
        self.opt.zero_grad()
        for i in range(0, n, self.microbatch): loss = crit(self.model(x[i:i + m]), ...); loss.backward()
    def optimize_normal(self):
        self.opt.step(); <EMA of the weights>

The micro-batch loop gets a step that computes the gradients (over the optimizer's parameters, the
network called inside it), adds them to the sum held for the optimizer since its zero_grad()
(`_ms_compat.grad_sum`, torch's growing .grad) and holds that sum for its next step()
(`_ms_compat.hold_gradients`): the other method's `self.opt.step()` applies it, as torch's step() reads
.grad. The `self.opt.zero_grad()` stays (it empties the sum). Recognised only when the method clears
that optimizer at its top level before the loop, does not step it itself, and another method of the
class steps it; a step() with nothing held raises MigrationError.
"""
from __future__ import annotations

from typing import Dict, Set, Tuple

import libcst as cst

from . import train_loop as TL


def _stepped(cls: cst.ClassDef) -> Dict[str, Set[str]]:
    """`self.<x>` receivers of step() calls -> the methods calling it."""
    out: Dict[str, Set[str]] = {}
    for m in cls.body.body:
        if isinstance(m, cst.FunctionDef):
            for r in TL._calls_method(m, "step"):
                if r.startswith("self.") and TL.OPTIMIZER_NAME.search(r.rsplit(".", 1)[-1]):
                    out.setdefault(r, set()).add(m.name.value)
    return out


def held_gradient_loops(module: cst.Module) -> Tuple[Dict[int, str], Set[int]]:
    """(id(loop as written) -> the optimizer its gradients are held for, ids of the zero_grad() statements
    the converted program keeps)."""
    loops: Dict[int, str] = {}
    clears: Set[int] = set()
    if ".backward(" not in module.code:
        return loops, clears
    for cls in module.body:
        if not isinstance(cls, cst.ClassDef) or not isinstance(cls.body, cst.IndentedBlock):
            continue
        stepped = _stepped(cls)
        for m in cls.body.body:
            if not isinstance(m, cst.FunctionDef) or not isinstance(m.body, cst.IndentedBlock):
                continue
            cleared = None
            for st in m.body.body:
                r = TL._method(TL._stmt_call(st), "zero_grad")
                if r is not None and TL.code_of(r).strip() in stepped \
                        and m.name.value not in stepped[TL.code_of(r).strip()]:
                    cleared = (TL.code_of(r).strip(), st)
                    continue
                if cleared is None or not isinstance(st, (cst.For, cst.While)) \
                        or not isinstance(st.body, cst.IndentedBlock):
                    continue
                body = st.body.body
                if any(TL._method(TL._stmt_call(x), "backward") is not None for x in body) and \
                        not TL._calls_method(st, "step") and not TL._calls_method(st, "zero_grad"):
                    loops[id(st)] = cleared[0]
                    clears.add(id(cleared[1]))
    return loops, clears
