"""Local names whose tensor other holders share: `for p in model.parameters(): p.mul_(0.5)`,
`mu = state['mu']; mu.mul_(m)`, `b = self.buf; b.add_(1)`.

A whole-statement in-place call on a local name becomes the rebinding `x = <out-of-place form>`
(inplace_forms.py): right where x alone holds the tensor. Where x took the tensor from somewhere else (a
loop over parameters or a list, a dict entry or list item, an attribute, another name) torch's change
reaches that holder; the rebinding would leave the parameters, the optimizer state or the buffer as they
were, with no error. Outside graph code the converter writes the new value into the tensor itself
(`x = _ms_compat.write_into(x, <out-of-place form>)`). Not in construct or the functions it calls: there
an in-place write would also change a tensor that an op saved for the backward pass.
"""
from __future__ import annotations

from typing import Set

import libcst as cst

from .inplace_callers import _names

# calls that hand out a tensor another holder keeps: `state.get('mu')`, `d.setdefault(k, v)`
_HANDING_OUT = frozenset(("get", "setdefault", "pop"))


def _hands_out(value: cst.BaseExpression) -> bool:
    """A value that is another holder's tensor, not a new one (`m, v = state['m'], state['v']`: either)."""
    if isinstance(value, (cst.Tuple, cst.List)):
        return any(_hands_out(e.value) for e in value.elements if isinstance(e, cst.Element))
    if isinstance(value, cst.Name):
        return value.value not in ("None", "True", "False")
    if isinstance(value, (cst.Subscript, cst.Attribute)):
        return True
    return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in _HANDING_OUT)


def _fresh_iterable(it: cst.BaseExpression) -> bool:
    """`range(n)`: numbers, no tensor anyone else holds."""
    return isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range"


class _Holders(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: Set[str] = set()

    # nested scopes have their own names
    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_For(self, node: cst.For) -> None:
        if not _fresh_iterable(node.iter):
            self.names |= _names(node.target)

    def visit_Assign(self, node: cst.Assign) -> None:
        if _hands_out(node.value):
            for t in node.targets:
                self.names |= _names(t.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and _hands_out(node.value):
            self.names |= _names(node.target)


def held_names(scope: cst.CSTNode) -> Set[str]:
    """Names of this scope (a function's body or a module) bound, somewhere, to a tensor another holder
    may share: a for-loop target (not over range()), or the value of a subscript, an attribute, another
    name or a container's get/setdefault/pop."""
    v = _Holders()
    if isinstance(scope, cst.FunctionDef):
        scope = scope.body
    if isinstance(scope, cst.Module):
        for st in scope.body:
            st.visit(v)
    else:
        scope.visit(v)
    return v.names


def target_names(target: cst.BaseExpression) -> Set[str]:
    """The names a for-loop target binds (`t`, `(t, m, s)`)."""
    return _names(target)


class _WritesInto(cst.CSTVisitor):
    def __init__(self, names: Set[str], compat: str) -> None:
        self.names, self.compat, self.found = names, compat, False

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if (isinstance(f, cst.Attribute) and f.attr.value == "write_into" and isinstance(f.value, cst.Name)
                and f.value.value == self.compat and node.args and isinstance(node.args[0].value, cst.Name)
                and node.args[0].value.value in self.names):
            self.found = True


def writes_into(body: cst.CSTNode, names: Set[str], compat: str) -> bool:
    """Whether converted code `body` writes a new value into one of `names` (`_ms_compat.write_into(t, ...)`)."""
    v = _WritesInto(names, compat)
    body.visit(v)
    return v.found


# what hands out a module's own tensors: `for k, v in ema.state_dict().items()`, `zip(ema.parameters(), ...)`
_MODULE_TENSORS = frozenset(("parameters", "named_parameters", "buffers", "named_buffers", "state_dict"))


def _mentions_module_tensors(node: cst.CSTNode, names: Set[str]) -> bool:
    found = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in _MODULE_TENSORS:
                found.append(call)

        def visit_Name(self, name: cst.Name) -> None:
            if name.value in names:
                found.append(name)

    node.visit(_Calls())
    return bool(found)


class _ModuleTensorLoops(_Holders):
    def __init__(self) -> None:
        super().__init__()
        self.dicts: Set[str] = set()      # `msd = model.state_dict()`

    def visit_For(self, node: cst.For) -> None:
        if _mentions_module_tensors(node.iter, self.dicts):
            self.names |= _names(node.target)

    def visit_Assign(self, node: cst.Assign) -> None:
        if _mentions_module_tensors(node.value, set()):
            for t in node.targets:
                self.dicts |= _names(t.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        return None


def module_tensor_names(scope: cst.CSTNode) -> Set[str]:
    """Names of this scope a for-loop binds to a module's own tensors: its iterable calls parameters(),
    named_parameters(), buffers(), named_buffers() or state_dict(), or reads a name bound to such a call's result
    (`msd = model.state_dict()`; `for k, v in msd.items()`)."""
    v = _ModuleTensorLoops()
    if isinstance(scope, cst.FunctionDef):
        scope = scope.body
    for st in (scope.body if isinstance(scope, cst.Module) else [scope]):
        st.visit(v)     # assignments before the loops: the statements in order
    return v.names
