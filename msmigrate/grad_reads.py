"""`x.grad` read where no train step took it -> a read that raises MigrationError on a tensor.

MindSpore keeps no gradient on a tensor: gradients are values that mindspore.value_and_grad returns.
The train-step rewrite (train_loop.py, manual_update.py) turns the `.grad` reads it recognises (a
hand-written update, the gradient of a lone backward()) into those values. A read left over once the
rewrites are done (gradient logging, a helper that inspects `p.grad`) would be an AttributeError far
from its cause; here it becomes `_ms_compat.tensor_grad(x, "module:line")`, which raises MigrationError
naming the original site when `x` is a MindSpore tensor and reads the attribute of any other object (a
program's own `args.grad`). Each one is a TODO: a comment above its statement and a report entry
(tests/test_silent_failures.py::test_grad_read_outside_a_step_raises).

The reads are noted while the main pass converts them (track) and rewritten when the module is done
(rewrite), so the step rewrites in between still see `p.grad` as written."""
from __future__ import annotations

from typing import Dict, List, Set, Tuple

import libcst as cst

from . import registry as R
from . import unmapped_tensor_api as UT
from .callsite import code_of
from .sites import Site, shorten

API = "Tensor.grad"
WHY = ("MindSpore keeps no .grad on a tensor (gradients are the values mindspore.value_and_grad returns) and no "
       "train step msmigrate wrote computes this one: compute it with mindspore.value_and_grad (or "
       "mindspore.grad) by hand")


def track(tr, original: cst.Attribute, converted: cst.BaseExpression) -> cst.BaseExpression:
    """Note `x.grad` (as converted) with its original line and code; returns it unchanged."""
    if (original.attr.value == "grad" and isinstance(converted, cst.Attribute) and not tr._in_forward()
            and tr._receiver_kind(original.value) in ("tensor", "unknown") and not UT._is_mindspore_code(tr)
            and not _settings_object(tr, original.value)):
        # (a module's or an imported object's `grad`, `mindspore.grad`, is no tensor's)
        reads = tr.__dict__.setdefault("_grad_reads", {})
        # the node is kept with its entry: an id is unique only while its object lives, and a step rewrite may
        # drop this node before rewrite() runs (another node could then take its id)
        reads[id(converted)] = (tr._line(original), shorten(code_of(original), 150), converted)
    return converted


def _settings_object(tr, receiver: cst.BaseExpression) -> bool:
    """`args.grad`, `cfg.grad`, `Options().grad`: an argparse result, an instance of a class of the program
    (non_tensor_names.py)."""
    spaces = getattr(tr, "_namespaces", None)
    if spaces is None:
        return False
    if spaces.instance(receiver):
        return True
    return isinstance(receiver, cst.Name) and spaces.holds(tr._funcs[-1].name if tr._funcs else None,
                                                           receiver.value)


class _Rewrite(cst.CSTTransformer):
    def __init__(self, tracked: Dict[int, Tuple[int, str, cst.CSTNode]], module_name: str) -> None:
        self.tracked, self.module_name = tracked, module_name
        self.stores: Set[int] = set()
        self.open: List[List[Tuple[int, str]]] = []     # per enclosing statement: the reads it holds
        self.found: List[Tuple[int, str]] = []

    # assignment targets (`p.grad = None`) are no reads
    def visit_AssignTarget(self, node) -> None:
        self.stores.add(id(node.target))

    def visit_AugAssign(self, node) -> None:
        self.stores.add(id(node.target))

    def visit_AnnAssign(self, node) -> None:
        self.stores.add(id(node.target))

    def visit_Del(self, node) -> None:
        self.stores.add(id(node.target))

    def leave_Attribute(self, original, updated):
        entry = self.tracked.get(id(original))
        if entry is None or entry[2] is not original or id(original) in self.stores:
            return updated
        hit = entry[:2]
        if self.open:
            self.open[-1].append(hit)
        self.found.append(hit)
        where = cst.SimpleString(repr(f"{self.module_name}:{hit[0]}"))
        return cst.Call(func=cst.parse_expression("_ms_compat.tensor_grad"),
                        args=[cst.Arg(updated.value), cst.Arg(where)])

    def _enter(self, node) -> None:
        self.open.append([])

    def _leave(self, original, updated):
        hits = self.open.pop()
        if not hits:
            return updated
        seen: List[str] = []
        for line, code in hits:
            text = f"# msmigrate: TODO {API}: {WHY}. Original: {code}"
            if text not in seen:
                seen.append(text)
        return updated.with_changes(leading_lines=list(updated.leading_lines)
                                    + [cst.EmptyLine(comment=cst.Comment(t)) for t in seen])

    visit_SimpleStatementLine = visit_If = visit_While = visit_For = visit_With = _enter
    leave_SimpleStatementLine = leave_If = leave_While = leave_For = leave_With = _leave


def rewrite(tr, module: cst.Module) -> cst.Module:
    """The module with every noted `x.grad` read still in it raising on a tensor; records the sites."""
    tracked = getattr(tr, "_grad_reads", None)
    if not tracked:
        return module
    rw = _Rewrite(tracked, tr.module_name)
    module = module.visit(rw)
    for line, code in rw.found:
        tr.sites.append(Site(line, API, "", R.TODO, WHY, code, ""))
        tr._todo_count += 1
    if rw.found:
        tr.uses_compat = True
    return module
