"""An in-place tensor method on a parameter the function uses for nothing else
(`def mask_out(x, m): x.masked_fill_(m, 0)`): in torch its only effect is on the caller's tensor.

The converter rewrites a whole-statement `x.op_(...)` as the rebinding `x = <out-of-place x.op(...)>`
(inplace_forms.py; MindSpore's own in-place arithmetic leaves the tensor unchanged on CPU). For such a
parameter that rebinding is a dead store and the caller's tensor stays as it was: silently different.
Writing through (`x[...] = value`) where a gradient is recorded is no cure: MindSpore's autograd keeps a
reference to an op's input, so overwriting it afterwards corrupts that op's gradient (measured on 2.10: the
gradient of `x[...] = ops.clamp(x, 0, 2)` passes where clamp clipped). So the new value is written into the
caller's tensor by _ms_compat.write_argument, which raises MigrationError naming the line where a graph
compiles or a recorded gradient goes through the write (it was a TODO raising wherever reached, until
I-JEPA's `def rescale(param, layer_id): param.div_(...)` at model init, heldout65). A parameter the function
also reads or returns keeps the rebinding (its local uses are right; the report marks the site as a
difference). The same holds for a parameter whose every use is an augmented assignment (augmented_only:
`mask *= region`), whose new value _ms_compat.augmented_argument writes into the caller's tensor."""
from __future__ import annotations

from typing import Dict, List, Set

import libcst as cst

WHY = ("in place on a parameter the function uses for nothing else: in torch the change reaches the "
       "caller's tensor, which a MindSpore rebinding would leave unchanged; return the new tensor and "
       "assign it in the caller")


def _inplace_receiver(stmt: cst.BaseSmallStatement):
    """The Name `x` of a whole statement `x.op_(...)`, else None."""
    if isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call):
        func = stmt.value.func
        if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.attr.value.endswith("_") and not func.attr.value.endswith("__")):
            return func.value
    return None


class _Uses(cst.CSTVisitor):
    def __init__(self, names: Set[str]) -> None:
        self.names = names
        self.uses: Dict[str, int] = {}
        self.receivers: Dict[str, int] = {}

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.names:
            self.uses[node.value] = self.uses.get(node.value, 0) + 1

    def visit_Expr(self, node: cst.Expr) -> None:
        recv = _inplace_receiver(node)
        if recv is not None and recv.value in self.names:
            self.receivers[recv.value] = self.receivers.get(recv.value, 0) + 1


class _AugTargets(cst.CSTVisitor):
    def __init__(self, names: Set[str]) -> None:
        self.names = names
        self.targets: Dict[str, int] = {}

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name) and node.target.value in self.names:
            self.targets[node.target.value] = self.targets.get(node.target.value, 0) + 1


def augmented_only(function: cst.FunctionDef, params: Set[str]) -> Set[str]:
    """The parameters whose every use in the function is as the target of an augmented assignment (I-JEPA's
    MaskCollator: `def constrain_mask(mask, tries=0): for k in range(N): mask *= acceptable_regions[k]`): on a
    tensor torch's `*=` changes the caller's tensor, MindSpore's makes a new one, which nothing reads."""
    names = set(params) - {"self", "cls"}
    uses, targets = _Uses(names), _AugTargets(names)
    function.body.visit(uses)
    function.body.visit(targets)
    return {n for n, k in targets.targets.items() if uses.uses.get(n, 0) == k}


def mutated_only(function: cst.FunctionDef, params: Set[str]) -> Set[str]:
    """The parameters whose every use in the function is as the receiver of a whole-statement
    in-place method call."""
    v = _Uses(set(params) - {"self", "cls"})
    function.body.visit(v)
    return {n for n, k in v.receivers.items() if v.uses.get(n, 0) == k}


def rebinds(name: str) -> bool:
    """Whether the statement `x.<name>(...)` becomes a rebinding `x = ...` (the out-of-place form that
    inplace_forms.py finds, or fill_/zero_/fill_diagonal_), not a write into the tensor itself."""
    from .inplace_forms import out_of_place

    return name in ("fill_", "zero_", "fill_diagonal_") or out_of_place(name) is not None


# A function whose callers cannot be seen (`partial(f, ...)`, `self.fn = f`): its changed parameter reaches tensors
# nobody checks, so the new value is written into the caller's tensor itself (transformer._written_into_holder:
# `_ms_compat.write_argument`, which raises MigrationError naming the line where a graph compiles or a recorded
# gradient goes through the write, which would change a tensor an op saved for the backward pass).


def changed_params(function: cst.FunctionDef, params: Set[str]) -> Set[str]:
    """The parameters that are the receiver of some whole-statement in-place method call."""
    v = _Uses(set(params) - {"self", "cls"})
    function.body.visit(v)
    return set(v.receivers)


class _ValueUses(cst.CSTVisitor):
    """Where the module names one of its top-level functions other than as the callee of a call:
    `partial(f, ...)`, `self.fn = f`, `map(f, xs)`, `return f` (name -> the first such use, as code)."""

    def __init__(self, names: Set[str]) -> None:
        self.names = names
        self.callees: Set[int] = set()
        self.defs: Set[int] = set()
        self.found: Dict[str, str] = {}
        self._stmt: List[cst.CSTNode] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.defs.add(id(node.name))

    def visit_Call(self, node: cst.Call) -> None:
        self.callees.add(id(node.func))

    # names that are no reference to the function: `obj.f`, `g(f=1)`, `def g(f)`
    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.defs.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.defs.add(id(node.keyword))

    def visit_Param(self, node: cst.Param) -> None:
        self.defs.add(id(node.name))

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._stmt.append(node)

    def leave_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._stmt.pop()

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.names and id(node) not in self.callees and id(node) not in self.defs \
                and node.value not in self.found:
            from .callsite import code_of
            where = code_of(self._stmt[-1]).strip().splitlines()[0] if self._stmt else node.value
            self.found[node.value] = where[:80]

    def visit_ImportAlias(self, node: cst.ImportAlias) -> bool:
        return False


def escaping_functions(module: cst.Module) -> Dict[str, str]:
    """Top-level functions this module uses as values (their calls go through another name, which the
    callers' check of inplace_callers.py does not follow): name -> the statement that passes it on."""
    names = {st.name.value for st in module.body if isinstance(st, cst.FunctionDef)}
    if not names:
        return {}
    v = _ValueUses(names)
    module.visit(v)
    return v.found


def unpacked_params(function: cst.FunctionDef, params: Set[str]) -> Set[str]:
    """The names a function binds by unpacking one of its parameters, `k_cache, v_cache = kv_cache` (gemma's
    attention: the caller's kv-cache tensors), in its own body (not in a function inside it)."""
    found: Set[str] = set()

    class _Unpack(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is function

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            if len(node.targets) != 1 or not isinstance(node.value, cst.Name) or node.value.value not in params:
                return
            target = node.targets[0].target
            if isinstance(target, (cst.Tuple, cst.List)):
                found.update(e.value.value for e in target.elements
                             if isinstance(e.value, cst.Name) and not isinstance(e, cst.StarredElement))

    function.visit(_Unpack())
    return found - {"self", "cls"}


def tensor_params(function: cst.FunctionDef, imports: Dict[str, str]) -> Set[str]:
    """The parameters annotated as torch tensors (`x: Tensor`, `x: torch.Tensor`), the type torch names."""
    from .callsite import code_of

    found: Set[str] = set()
    for p in function.params.params + function.params.kwonly_params + function.params.posonly_params:
        if p.annotation is None:
            continue
        spelled = code_of(p.annotation.annotation).strip()
        root, _, rest = spelled.partition(".")
        qn = imports.get(root, root) + ("." + rest if rest else "")
        if qn in ("torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.BoolTensor"):
            found.add(p.name.value)
    return found
