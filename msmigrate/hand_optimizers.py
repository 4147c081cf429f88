"""An optimizer the program writes itself: a torch.optim.Optimizer subclass (Lion, LAMB, SAM, AdaBelief...)
whose `step(closure=None)` loops over self.param_groups, reads p.grad and self.state[p], and changes the
parameters and its state tensors in place.

The class is rebased on `_ms_compat.HandWrittenOptimizer` (templates/compat_parts/user_optimizers.py), which
keeps torch's param_groups, state and state_dict and runs step() on the host with each gradient as p.grad.
Its in-place updates must reach the Parameters and the state dict, so in such a class:
- `p.data.mul_(d)` on a loop's parameter is written into it (data_writes.py), not left to the passes over
  parameter loops outside any class (param_data_update.py, which only knows loops of such changes alone);
- a module-level function the class reads by name (lion-pytorch's `update_fn(p, grad, exp_avg, ...)`) changes
  its arguments as torch does: its parameters are holders (inplace_holders.py), the new value written into
  the caller's tensor instead of a rebinding of the local name, which would change nothing."""
from __future__ import annotations

from typing import Callable, Optional, Set

import libcst as cst

OPTIMIZER_BASES = frozenset(("torch.optim.Optimizer", "torch.optim.optimizer.Optimizer"))
TEST = "tests/test_hand_written_optimizers.py"


def is_hand_written(node: cst.ClassDef, qname: Callable[[cst.BaseExpression], Optional[str]]) -> bool:
    """A subclass of torch's Optimizer defining step() and no construct/__call__ of its own."""
    if not any(qname(b.value) in OPTIMIZER_BASES for b in node.bases):
        return False
    methods = {st.name.value for st in node.body.body if isinstance(st, cst.FunctionDef)}
    return "step" in methods and not methods & {"construct", "__call__"}


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: Set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


def helper_functions(module: cst.Module, qname: Callable[[cst.BaseExpression], Optional[str]]) -> Set[str]:
    """Module-level functions a hand-written optimizer class of this module reads by name."""
    functions = {st.name.value for st in module.body if isinstance(st, cst.FunctionDef)}
    found: Set[str] = set()
    for st in module.body:
        if isinstance(st, cst.ClassDef) and is_hand_written(st, qname):
            v = _Names()
            st.body.visit(v)
            found |= v.names & functions
    return found
