"""`with torch.no_grad(): t = teacher(x)` in a function that calls backward(): the values stay constants.

The converter removes the no_grad context (MindSpore records gradients only inside grad/value_and_grad).
Where the block's statements end up inside a train step's forward function, torch's no_grad meant that
no gradient flows through the values bound there (a target, an EMA teacher's output); without the
context MindSpore would differentiate through them, a silently different gradient. So the names the
block binds at its top level are rebound through ops.stop_gradient after it (value unchanged; a no-op
outside a gradient computation; Parameters and other objects are left as they are)."""
from __future__ import annotations

from typing import List, Set

import libcst as cst

NO_GRAD_CONTEXTS = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                              "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode"})

NO_GRAD_STATE_NOTE = ("the function changes its module's state (an attribute or item of self, an in-place method "
                      "on one): it runs with MindSpore's recording off (mindspore._no_grad), as torch's no_grad "
                      "runs it; its results carry no gradient")


class _BackwardScopes(cst.CSTVisitor):
    """ids of the With nodes inside any function, and at the top level of a module whose code calls
    `.backward(`."""

    def __init__(self) -> None:
        self.withs: Set[int] = set()
        self._stack: List[List[int]] = [[]]
        self._calls: List[bool] = [False]

    def visit_FunctionDef(self, node) -> None:
        self._stack.append([])
        self._calls.append(False)

    def leave_FunctionDef(self, node) -> None:
        withs, calls = self._stack.pop(), self._calls.pop()
        # every block inside a function: a function of a file that never calls backward (a library's helper)
        # may still be called inside another file's train step (ops.stop_gradient is a no-op outside one)
        self.withs.update(withs)
        if calls:
            self._calls[-1] = True     # a nested step function: its enclosing function trains too

    def visit_With(self, node) -> None:
        self._stack[-1].append(id(node))

    def visit_Call(self, node) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward":
            self._calls[-1] = True

    def leave_Module(self, node) -> None:
        if self._calls[0]:
            self.withs.update(self._stack[0])


def training_withs(module: cst.Module) -> Set[int]:
    v = _BackwardScopes()
    module.visit(v)
    return v.withs


def _bound_names(stmts) -> List[str]:
    """Names bound by the plain assignments at the top level of the block (`t = ...`, `a, b = ...`)."""
    names: List[str] = []
    for st in stmts:
        if not isinstance(st, cst.SimpleStatementLine):
            continue
        for small in st.body:
            targets = []
            if isinstance(small, cst.Assign):
                targets = [t.target for t in small.targets]
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                targets = [small.target]
            for t in targets:
                elems = [e.value for e in t.elements] if isinstance(t, (cst.Tuple, cst.List)) else [t]
                for e in elems:
                    if isinstance(e, cst.Name) and e.value not in names:
                        names.append(e.value)
    return names


def constant_rebinds(stmts) -> List[cst.BaseStatement]:
    """`t = _ms_compat.no_grad_value(t)` (ops.stop_gradient of a tensor; a Parameter, Cell or other object
    unchanged) for each name the no_grad block binds at its top level."""
    names = _bound_names(stmts)
    if not names:
        return []
    out = [cst.parse_statement(f"{n} = _ms_compat.no_grad_value({n})\n") for n in names]
    note = cst.EmptyLine(comment=cst.Comment(
        "# msmigrate: torch.no_grad(): values computed without gradient, as in torch"))
    out[0] = out[0].with_changes(leading_lines=[note])
    return out


NO_GRAD_RESULTS_NOTE = ("the function's results are returned through _ms_compat.no_grad_value (ops.stop_gradient): "
                        "no gradient flows through them when it is called inside a gradient computation (a train "
                        "step), as torch's no_grad computes them without one")


class _Results(cst.CSTTransformer):
    """`return v` / `yield v` of the function itself (not of a function, lambda or class nested in it) ->
    `return _ms_compat.no_grad_value(v)`."""

    def __init__(self) -> None:
        self.depth = 0

    def visit_FunctionDef(self, node) -> bool:
        self.depth += 1
        return self.depth == 1

    def leave_FunctionDef(self, original, updated):
        self.depth -= 1
        return updated

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    @staticmethod
    def _wrapped(value):
        if isinstance(value, cst.Tuple) and not value.lpar:     # `return a, b`: one argument
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return cst.Call(func=cst.parse_expression("_ms_compat.no_grad_value"), args=[cst.Arg(value)])

    def leave_Return(self, original, updated):
        if updated.value is None:
            return updated
        return updated.with_changes(value=self._wrapped(updated.value))

    def leave_Yield(self, original, updated):
        if updated.value is None or isinstance(updated.value, cst.From):
            return updated
        return updated.with_changes(value=self._wrapped(updated.value))


class _BlockResults(_Results):
    """`return v` inside a no_grad block (not in a function, lambda or class the block defines)."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 1


def block_returns_without_gradient(stmts) -> list:
    """A no_grad block's `return v` -> `return _ms_compat.no_grad_value(v)`: the rebinds constant_rebinds puts
    after the block never run for a value returned from inside it (VectorQuantization.forward's `with
    torch.no_grad(): ... return indices`), so MindSpore would differentiate through it."""
    return [st.visit(_BlockResults()) for st in stmts]


def ends_in_return(stmts) -> bool:
    """The block's last statement returns (or raises): nothing after it runs."""
    last = stmts[-1] if stmts else None
    return isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], (cst.Return, cst.Raise))


def results_without_gradient(func: cst.FunctionDef):
    """A function decorated with @torch.no_grad() (the decorator removed): its results through
    _ms_compat.no_grad_value. Without the decorator MindSpore would differentiate through what it returns when a
    train step calls it (torchdiffeq's _optimal_step_size: the next step size, a function of the error estimate,
    which torch's gradient does not see), a silently different gradient. Returns (function, changed)."""
    new = func.visit(_Results())
    return new, not new.deep_equals(func)


def changes_self_state(fn: cst.FunctionDef) -> bool:
    """The function's own body (not a nested def or class) stores into an attribute or item held by `self`
    (`self.l_kernel = ...`, `self.buf[i] = v`, `self.n += 1`) or calls an in-place method on one
    (`self.C.copy_(v)`, `self.w.data.mul_(2)`)."""
    def rooted_at_self(node) -> bool:
        while isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        return isinstance(node, cst.Name) and node.value == "self"

    found = []

    class _V(cst.CSTVisitor):
        def visit_FunctionDef(self, node) -> bool:
            return node is fn

        def visit_ClassDef(self, node) -> bool:
            return False

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            if isinstance(node.target, (cst.Attribute, cst.Subscript)) and rooted_at_self(node.target):
                found.append(node)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.target, (cst.Attribute, cst.Subscript)) and rooted_at_self(node.target):
                found.append(node)

        def visit_Call(self, node: cst.Call) -> None:
            f = node.func
            if isinstance(f, cst.Attribute) and f.attr.value.endswith("_") and not f.attr.value.endswith("__") \
                    and isinstance(f.value, (cst.Attribute, cst.Subscript)) and rooted_at_self(f.value):
                found.append(node)

    fn.visit(_V())
    return bool(found)
