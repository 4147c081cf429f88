"""`x.grad` read where no train step took it -> a read that raises MigrationError on a tensor.

MindSpore keeps no gradient on a tensor: gradients are values that mindspore.value_and_grad returns.
The train-step rewrite (train_loop.py, manual_update.py) turns the `.grad` reads it recognises (a
hand-written update, the gradient of a lone backward()) into those values. A read left over once the
rewrites are done (gradient logging, a helper that inspects `p.grad`) would be an AttributeError far
from its cause; here it becomes `_ms_compat.tensor_grad(x, "module:line")`, which raises MigrationError
naming the original site when `x` is a MindSpore tensor and reads the attribute of any other object (a
program's own `args.grad`). Reads in a forward count too (vector-quantize's `if exists(old.grad)` on a
buffer: None, as torch's); inside a compiled graph the helper stops compiling with MigrationError naming the
site (a `.grad` left as written was MindSpore's AttributeError). Each one is a TODO: a comment above its statement and a report entry
(tests/test_silent_failures.py::test_grad_read_outside_a_step_raises).

The reads are noted while the main pass converts them (track) and rewritten when the module is done
(rewrite), so the step rewrites in between still see `p.grad` as written."""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from . import argument_backward as AB
from . import registry as R
from . import train_loop as TL
from . import unmapped_tensor_api as UT
from .callsite import code_of
from .sites import Site, shorten

API = "Tensor.grad"
WHY = ("MindSpore keeps no .grad on a tensor (gradients are the values mindspore.value_and_grad returns) and no "
       "train step msmigrate wrote computes this one: compute it with mindspore.value_and_grad (or "
       "mindspore.grad) by hand")


def track(tr, original: cst.Attribute, converted: cst.BaseExpression) -> cst.BaseExpression:
    """Note `x.grad` (as converted) with its original line and code; returns it unchanged."""
    if (original.attr.value == "grad" and isinstance(converted, cst.Attribute)
            and tr._receiver_kind(original.value) in ("tensor", "unknown") and not UT._is_mindspore_code(tr)
            and not _settings_object(tr, original.value)):
        # (a module's or an imported object's `grad`, `mindspore.grad`, is no tensor's)
        reads = tr.__dict__.setdefault("_grad_reads", {})
        # the node is kept with its entry: an id is unique only while its object lives, and a step rewrite may
        # drop this node before rewrite() runs (another node could then take its id)
        reads[id(converted)] = (tr._line(original), shorten(code_of(original), 150), converted)
        if any(getattr(c, "hand_optimizer", False) for c in tr._classes):
            # in an optimizer's own step(): the gradients its train step hands it (hand_optimizers.py)
            tr.__dict__.setdefault("_optimizer_grad_reads", set()).add(reads[id(converted)][:2])
    return converted


class _Reads(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: List[cst.Attribute] = []

    def visit_Attribute(self, node) -> None:
        if node.attr.value == "grad":
            self.found.append(node)


def carry(tr, before: cst.CSTNode, after: Optional[cst.CSTNode]) -> Optional[cst.CSTNode]:
    """`mu.add_(p.grad)` converted to its out-of-place form (`ops.add(mu, p.grad)`), whose code a mapping writes
    anew: the noted reads of `before` are noted again in `after` (same receiver code), so they are rewritten too
    (left as written, `p.grad` was an AttributeError far from its line). Returns `after`."""
    tracked = getattr(tr, "_grad_reads", None)
    if not tracked or after is None:
        return after
    old, new = _Reads(), _Reads()
    before.visit(old)
    entries = {code_of(n.value).strip(): tracked[id(n)] for n in old.found
               if id(n) in tracked and tracked[id(n)][2] is n}
    if not entries:
        return after
    after.visit(new)
    for n in new.found:
        entry = entries.get(code_of(n.value).strip())
        if entry is not None and not (id(n) in tracked and tracked[id(n)][2] is n):
            tracked[id(n)] = (entry[0], entry[1], n)
    return after


def note_gradient_writes(tr, stmt: cst.CSTNode, line: int) -> cst.CSTNode:
    """`p.grad.data.clamp_(-c, c)` became `ops.assign(p.grad, ops.clamp(p.grad, ...))` (param_data_update.py)
    from the placeholder's comment, where no read of `p.grad` was left to note: its `.grad` attributes are
    noted now, reads of the gradient at `line`, so they are rewritten (the assign changes the kept gradient in
    place) or are TODOs. Returns `stmt`."""
    if UT._is_mindspore_code(tr):
        return stmt
    reads = tr.__dict__.setdefault("_grad_reads", {})
    found = _Reads()
    stmt.visit(found)
    for node in found.found:
        reads[id(node)] = (line, shorten(code_of(node), 150), node)
    return stmt


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


KEPT_NOTE = ("the gradient the last converted train step kept for this parameter (_ms_compat.keep_grads: torch's "
             ".grad after backward() and clipping); a tensor no step kept raises MigrationError naming this line")
KEPT_TEST = "tests/test_grad_carry.py::test_grad_reads_after_the_step_match_torch"
OPTIMIZER_NOTE = ("p.grad in an optimizer's own step(): the gradient the converted train step handed it "
                  "(_ms_compat.HandWrittenOptimizer); without one a read raises MigrationError naming this line")
HO_TEST = "tests/test_hand_written_optimizers.py"


class _Copies(cst.CSTVisitor):
    """The receivers (as code) of the noted reads: a conversion that wrote a read twice (`norm(p.grad) if
    is_tensor(p.grad) else ...`) noted one copy only, the others are the same read."""

    def __init__(self, tracked) -> None:
        self.tracked, self.receivers, self.present = tracked, set(), set()

    def visit_Attribute(self, node) -> None:
        entry = self.tracked.get(id(node))
        if entry is not None and entry[2] is node:
            self.receivers.add(cst.Module([]).code_for_node(node.value))
            self.present.add(id(node))


def _vanished(tracked, present: Set[int]) -> Dict[str, List[Tuple[int, str]]]:
    """The noted reads whose node a later conversion rebuilt from its code (`(torch.isinf(v.grad) |
    torch.isnan(v.grad)).any()` as `reduce_any(...)`), by receiver code, in line order: the `.grad` of that
    receiver left in the converted code is that read."""
    out: Dict[str, List[Tuple[int, str]]] = {}
    for key, (line, code, node) in sorted(tracked.items(), key=lambda kv: kv[1][0]):
        if key not in present and node is not None:
            out.setdefault(cst.Module([]).code_for_node(node.value), []).append((line, code))
    return out


class _Rewrite(cst.CSTTransformer):
    def __init__(self, tracked: Dict[int, Tuple[int, str, cst.CSTNode]], module_name: str,
                 receivers: Set[str] = frozenset(), vanished: Optional[Dict[str, List[Tuple[int, str]]]] = None
                 ) -> None:
        self.tracked, self.module_name, self.receivers = tracked, module_name, receivers
        self.vanished = vanished or {}
        self.stores: Set[int] = set()
        self.open: List[List[Tuple[int, str]]] = []     # per enclosing statement: the reads it holds
        self.found: List[Tuple[int, str]] = []
        self.copies: List[List[cst.Attribute]] = []     # per enclosing statement: untracked copies of noted reads
        self.kept = False                               # a step keeps gradients: the reads are no TODOs
        self.quiet: Set[Tuple[int, str]] = set()        # reads in an optimizer's own step(): no TODOs either

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
        if id(original) in self.stores:
            return updated
        if entry is None or entry[2] is not original:
            receiver = cst.Module([]).code_for_node(original.value) if original.attr.value == "grad" else None
            rebuilt = self.vanished.get(receiver) if receiver is not None else None
            if not rebuilt:
                if self.copies and receiver in self.receivers:
                    self.copies[-1].append(updated)     # rewritten with the statement's read (_leave)
                return updated
            # a noted read a conversion wrote anew: the first such read of this receiver not yet placed
            hit = rebuilt.pop(0) if len(rebuilt) > 1 else rebuilt[0]
        else:
            hit = entry[:2]
        if self.open:
            self.open[-1].append(hit)
        self.found.append(hit)
        where = cst.SimpleString(repr(f"{self.module_name}:{hit[0]}"))
        return cst.Call(func=cst.parse_expression("_ms_compat.tensor_grad"),
                        args=[cst.Arg(updated.value), cst.Arg(where)])

    def _enter(self, node) -> None:
        self.open.append([])
        self.copies.append([])

    def _leave(self, original, updated):
        hits, copies = self.open.pop(), self.copies.pop()
        if not hits:
            return updated
        if copies:
            where = cst.SimpleString(repr(f"{self.module_name}:{hits[0][0]}"))
            updated = updated.visit(_CopyReads({id(c) for c in copies}, where))
        if self.kept:
            return updated
        seen: List[str] = []
        for line, code in (h for h in hits if h not in self.quiet):
            text = f"# msmigrate: TODO {API}: {WHY}. Original: {code}"
            if text not in seen:
                seen.append(text)
        return updated.with_changes(leading_lines=list(updated.leading_lines)
                                    + [cst.EmptyLine(comment=cst.Comment(t)) for t in seen])

    visit_SimpleStatementLine = visit_If = visit_While = visit_For = visit_With = _enter
    leave_SimpleStatementLine = leave_If = leave_While = leave_For = leave_With = _leave


class _CopyReads(cst.CSTTransformer):
    def __init__(self, ids: Set[int], where: cst.SimpleString) -> None:
        self.ids, self.where = ids, where

    def leave_Attribute(self, original, updated):
        if id(original) not in self.ids:
            return updated
        return cst.Call(func=cst.parse_expression("_ms_compat.tensor_grad"),
                        args=[cst.Arg(updated.value), cst.Arg(self.where)])


RECORDED_NOTE = ("the gradient a backward() of this module run by _ms_compat.autograd_backward (PyNative's recorded "
                 "graph) added to a tensor that is no Parameter; a Parameter's .grad, or none recorded, raises "
                 "MigrationError naming the line")
FILLED_NOTE = ("the gradient a backward() of a loss handed to a function of the project (a loss scaler's "
               "__call__, _ms_compat.backward_to_grads) added into a Parameter's .grad, or one a backward() run by "
               "_ms_compat.autograd_backward added to a tensor that is no Parameter; none recorded raises "
               "MigrationError naming the line")
RECORDED_TEST = "tests/test_heldout43_programs.py::test_backward_read_through_input_grad_and_hooks"


def rewrite(tr, module: cst.Module) -> cst.Module:
    """The module with every noted `x.grad` read as `_ms_compat.tensor_grad(x, where)`: where a train step of
    the module keeps its gradients (train_loop._keeps_grads) the reads read them, else each one is a TODO
    (raising on a tensor no step kept); records the sites."""
    tracked = getattr(tr, "_grad_reads", None)
    if not tracked:
        return module
    copies = _Copies(tracked)
    TL.walk(module, copies)
    rw = _Rewrite(tracked, tr.module_name, copies.receivers, _vanished(tracked, copies.present))
    # recorded_backward.py; a backward() of a loss handed to a function of the project fills parameters' .grad
    filled = tr.index.has_argument_backward()
    recorded = bool(getattr(tr, "_records_autograd", False)) or filled
    rw.kept = bool(getattr(tr, "_keeps_grads", False)) or recorded
    rw.quiet = getattr(tr, "_optimizer_grad_reads", set())
    module = module.visit(rw)
    for line, code in rw.found:
        if (line, code) in rw.quiet:
            tr.sites.append(Site(line, API, "_ms_compat.tensor_grad", R.DIFFERENCE, OPTIMIZER_NOTE, code, HO_TEST))
            continue
        if rw.kept:
            note, test = (KEPT_NOTE, KEPT_TEST) if getattr(tr, "_keeps_grads", False) else (
                FILLED_NOTE, AB.TEST) if filled else (RECORDED_NOTE, RECORDED_TEST)
            tr.sites.append(Site(line, API, "_ms_compat.tensor_grad", R.DIFFERENCE, note, code, test))
            continue
        tr.sites.append(Site(line, API, "", R.TODO, WHY, code, ""))
        tr._todo_count += 1
    if rw.found:
        tr.uses_compat = True
    return module
