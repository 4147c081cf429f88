"""A backward() of a loss the function was handed -> PyNative's autograd into the parameters' .grad.

timm's NativeScaler and MAE's NativeScalerWithGradNormCount are called by a training loop as `loss_scaler(loss,
optimizer, clip_grad=max_norm, parameters=model.parameters(), update_grad=...)`. Their __call__ runs
`self._scaler.scale(loss).backward(create_graph=create_graph)`, then, when it updates, unscale_, clip_grad_norm_ or a
norm of the parameters' `.grad`, and `self._scaler.step(optimizer)`; the loop calls optimizer.zero_grad() every
`accum_iter` calls, so gradients add up across calls. No train step can hold that backward(): the forward ran in the
caller, and the gradients pass through `.grad`. Such a backward() (its tensor built from the function's parameters
only) becomes

    _ms_compat.backward_to_grads('module:line', loss, ...)

run by MindSpore's PyNative autograd on the graph recorded since the module was imported (record_autograd), adding
into the `_grad` of the parameters of every optimizer built; the optimizers' step() and zero_grad(),
clip_grad_norm_/clip_grad_value_ and `p.grad` read and clear them (templates/compat_parts/recorded_backward.py).
Where a project holds one, its zero_grad() calls outside train steps stay, as _ms_compat.clear_module_grads (a
zero_grad() that went would let the sum grow; the runtime refuses a backward() adding to gradients a step applied).
PYNATIVE mode only: the module and the programs importing it start in it."""
from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Iterator, Optional, Set

import libcst as cst

from .callsite import code_of

NOTE = ("a backward() of a loss this function was handed (a loss scaler's __call__): run by PyNative's autograd "
        "on the graph recorded since the module was imported, adding into the .grad of the optimizers' parameters "
        "(_ms_compat.backward_to_grads), which step(), zero_grad(), clip_grad_norm_ and p.grad read; PYNATIVE mode "
        "only")
TEST = "tests/test_argument_backward.py::test_loss_scaler_object_trains_as_torch"
MODE_WHY = ("PYNATIVE_MODE: a backward() of a loss handed to a function (a loss scaler) runs on PyNative's recorded "
            "graph (_ms_compat.backward_to_grads); GRAPH mode records none")
# Tensor.backward's keywords: a call passing another is a program's own method
_KEYWORDS = frozenset(("gradient", "retain_graph", "create_graph", "inputs"))


def _own_statements(fn: ast.AST) -> Iterator[ast.stmt]:
    """The statements of a function (or module), nested blocks included, nested functions and classes not."""
    stack = list(getattr(fn, "body", ()))
    while stack:
        st = stack.pop()
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield st
        for attr in ("body", "orelse", "finalbody", "handlers"):
            stack.extend(getattr(st, attr, ()) or ())
        for case in getattr(st, "cases", ()) or ():
            stack.extend(case.body)


def _tensor_backward(st: ast.stmt) -> Optional[ast.expr]:
    """The receiver of a statement `x.backward(...)` whose arguments Tensor.backward takes."""
    call = st.value if isinstance(st, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "backward"):
        return None
    if len(call.args) > len(_KEYWORDS) or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(k.arg not in _KEYWORDS for k in call.keywords):
        return None
    return call.func.value


def _single_backward_method(fn: ast.FunctionDef) -> bool:
    """`def backward(self, loss): loss.backward()` alone (a docstring aside): train_loop.backward_methods folds its
    calls into the caller's train step."""
    body = [st for st in fn.body if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)
                                         and isinstance(st.value.value, str))]
    if len(body) != 1:
        return False
    receiver = _tensor_backward(body[0])
    return isinstance(receiver, ast.Name) and not body[0].value.args and not body[0].value.keywords


def argument_backward_lines(tree: ast.Module) -> FrozenSet[int]:
    """Lines of the `x.backward(...)` statements of functions whose tensor `x` is built from the function's own
    parameters alone (`loss`, `self._scaler.scale(loss)`, `loss / n`): the loss was computed by a caller."""
    found: Set[int] = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or _single_backward_method(fn):
            continue
        params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        params |= {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
        own = params - {"self", "cls"}
        for st in _own_statements(fn):
            receiver = _tensor_backward(st)
            if receiver is None:
                continue
            names = {n.id for n in ast.walk(receiver) if isinstance(n, ast.Name)}
            if names & own and names <= params:
                found.add(st.lineno)
    return frozenset(found)


def _zero_grad_receiver(stmt: cst.CSTNode) -> Optional[str]:
    """`x.zero_grad()` (or `set_to_none=True`) alone in its statement: the receiver's code."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)):
        return None
    call = stmt.body[0].value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "zero_grad"):
        return None
    if any(a.star or a.keyword is None or a.keyword.value != "set_to_none"
           or code_of(a.value).strip() != "True" for a in call.args):
        return None     # zero_grad(False) keeps zeros, which the helper's clear does not: it goes (and a backward
        # adding to a stepped gradient then raises)
    node = call.func.value
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return code_of(call.func.value).strip() if isinstance(node, cst.Name) else None


def kept_clears(module: cst.Module, stmt_lines: Dict[int, int], backward_lines: FrozenSet[int]) -> Dict[int, str]:
    """id -> receiver of the `x.zero_grad()` statements of the scopes (functions, the module's top level) whose
    backward() calls, if any, are all backward()s of a loss handed to their function (`backward_lines`): where a
    project holds such a backward(), those clears stay (a train step's own zero_grad() goes with its step)."""
    found: Dict[int, str] = {}

    def scan(scope: cst.CSTNode) -> None:
        clears: Dict[int, str] = {}
        foreign = False
        for st in _cst_own_statements(scope):
            text = code_of(st) if isinstance(st, cst.SimpleStatementLine) else ""
            if ".backward(" in text and stmt_lines.get(id(st)) not in backward_lines:
                foreign = True
            receiver = _zero_grad_receiver(st)
            if receiver is not None:
                clears[id(st)] = receiver
        if not foreign:
            found.update(clears)

    scan(module)
    for node in _cst_functions(module):
        scan(node)
    return found


def _cst_own_statements(scope: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The statements of a function's (or the module's) body, nested blocks included, nested definitions not."""
    body = scope.body if isinstance(scope, cst.Module) else scope.body.body \
        if isinstance(scope.body, cst.IndentedBlock) else []
    stack = list(body)
    while stack:
        st = stack.pop()
        if isinstance(st, (cst.FunctionDef, cst.ClassDef)):
            continue
        yield st
        if isinstance(st, cst.SimpleStatementLine):
            continue
        for attr in ("body", "orelse", "finalbody", "handlers"):
            part = getattr(st, attr, None)
            if part is None:
                continue
            for block in (part if isinstance(part, (list, tuple)) else [part]):
                inner = getattr(block, "body", None)
                if isinstance(block, cst.If):       # an elif: a statement of its own
                    stack.append(block)
                elif isinstance(inner, cst.IndentedBlock):
                    stack.extend(inner.body)
                elif isinstance(inner, (list, tuple)):
                    stack.extend(inner)


def _cst_functions(module: cst.Module) -> Iterator[cst.FunctionDef]:
    found = []

    class Functions(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            found.append(node)

    module.visit(Functions())
    return iter(found)



def packages_hold_one(roots) -> bool:
    """Some module of the packages (directories or single files; --deps) holds a backward() of a loss handed to its
    function: timm's NativeScaler, which a project's training loop calls after its own zero_grad()."""
    for root in roots:
        files = [root] if root.is_file() else sorted(root.rglob("*.py"))
        for path in files:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if ".backward(" not in text:
                continue
            try:
                if argument_backward_lines(ast.parse(text)):
                    return True
            except (SyntaxError, ValueError, RecursionError):
                continue
    return False
