"""Names that hold a settings object, never a tensor: an argparse result, a namespace, an instance of
a class of the program (a dataclass, an options class).

`args.grad` (an option named grad) is no tensor's gradient: grad_reads.py leaves a read on such a
receiver alone (tests/test_silent_failures.py::test_grad_of_a_settings_object_is_no_todo). A name
counts in a scope when every binding it has there is such a value (`args = parser.parse_args()`,
`opts, _ = parser.parse_known_args()`, `cfg = Config()` with `class Config` in the module, an alias of
one); a parameter counts when every call of its function in the module passes one (`main(args)`).
Anything else (no binding seen, one binding of another kind) stays unknown and is still flagged."""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from .callsite import code_of
from .train_loop import walk

NAMESPACE_CALLS = {"parse_args", "Namespace", "SimpleNamespace", "EasyDict", "edict"}
KNOWN_ARGS = "parse_known_args"     # returns (namespace, the rest)

Scope = Optional[str]               # None: the module; else a function's name


def _last(func: cst.BaseExpression) -> str:
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""


def _program_classes(module: cst.Module) -> Set[str]:
    """Classes the module defines that are no tensor subclass (a dataclass, an options class, a Module)."""
    return {st.name.value for st in module.body if isinstance(st, cst.ClassDef)
            and not any("Tensor" in code_of(b.value) or "Parameter" in code_of(b.value) for b in st.bases)}


class _Bindings(cst.CSTVisitor):
    """Per scope: (name, value or None when bound otherwise) for every binding; the functions'
    parameters; every call by a plain name, with its scope."""

    def __init__(self) -> None:
        self.scopes: List[Scope] = [None]
        self.bindings: Dict[Scope, List[Tuple[str, Optional[cst.BaseExpression]]]] = {None: []}
        self.params: Dict[str, List[str]] = {}
        self.defined: Dict[str, int] = {}
        self.calls: List[Tuple[Scope, cst.Call]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        name = node.name.value
        self.bindings.setdefault(self.scopes[-1], []).append((name, None))
        self.defined[name] = self.defined.get(name, 0) + 1
        ps = node.params
        self.params[name] = [p.name.value for p in list(ps.posonly_params) + list(ps.params)]
        self.scopes.append(name)
        own = self.bindings.setdefault(name, [])
        for p in list(ps.posonly_params) + list(ps.params) + list(ps.kwonly_params) + [
                q for q in (ps.star_arg, ps.star_kwarg) if isinstance(q, cst.Param)]:
            own.append((p.name.value, None))      # a parameter: decided by its calls (see _params)

    def leave_FunctionDef(self, node) -> None:
        self.scopes.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        out = self.bindings.setdefault(self.scopes[-1], [])
        for t in node.targets:
            target = t.target
            if isinstance(target, cst.Name):
                out.append((target.value, node.value))
            elif (isinstance(target, (cst.Tuple, cst.List)) and target.elements
                  and isinstance(node.value, cst.Call) and _last(node.value.func) == KNOWN_ARGS):
                first = target.elements[0].value
                if isinstance(first, cst.Name):
                    out.append((first.value, node.value))
                for e in target.elements[1:]:
                    out.extend((n, None) for n in _names(e.value))
            else:
                for n in _names(target):
                    out.append((n, None))

    def visit_AugAssign(self, node) -> None:
        self.bindings.setdefault(self.scopes[-1], []).extend((n, None) for n in _names(node.target))

    def visit_AnnAssign(self, node) -> None:
        if isinstance(node.target, cst.Name):
            self.bindings.setdefault(self.scopes[-1], []).append((node.target.value, node.value))

    def visit_For(self, node) -> None:
        self.bindings.setdefault(self.scopes[-1], []).extend((n, None) for n in _names(node.target))

    def visit_AsName(self, node) -> None:
        self.bindings.setdefault(self.scopes[-1], []).extend((n, None) for n in _names(node.name))

    def visit_NamedExpr(self, node) -> None:
        self.bindings.setdefault(self.scopes[-1], []).extend((n, None) for n in _names(node.target))

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self.calls.append((self.scopes[-1], node))


def _names(t: cst.BaseExpression) -> List[str]:
    if isinstance(t, cst.Name):
        return [t.value]
    if isinstance(t, (cst.Tuple, cst.List)):
        return [n for e in t.elements for n in _names(e.value)]
    if isinstance(t, cst.StarredElement):
        return _names(t.value)
    return []


class Namespaces:
    """Which names hold settings objects, by scope (the module, or a function by its name)."""

    def __init__(self, module: cst.Module) -> None:
        b = _Bindings()
        walk(module, b)
        self._b = b
        self._classes = _program_classes(module)
        self.known: Dict[Scope, Set[str]] = {s: set() for s in b.bindings}
        self.param_known: Dict[str, Set[str]] = {}
        for _ in range(4):      # aliases and parameters passed along: a few rounds reach the fixpoint
            changed = self._round()
            if not changed:
                break

    def _value_is(self, value: Optional[cst.BaseExpression], scope: Scope) -> bool:
        if value is None:
            return False
        if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Call) \
                and _last(value.value.func) == KNOWN_ARGS and len(value.slice) == 1 \
                and code_of(value.slice[0]).strip().rstrip(",").strip() == "0":
            return True
        if isinstance(value, cst.Call):
            name = _last(value.func)
            return name in NAMESPACE_CALLS or name == KNOWN_ARGS or (
                isinstance(value.func, cst.Name) and name in self._classes)
        if isinstance(value, cst.Name):
            return self.holds(scope, value.value)
        return False

    def _round(self) -> bool:
        changed = False
        for scope, binds in self._b.bindings.items():
            by_name: Dict[str, List[Optional[cst.BaseExpression]]] = {}
            for n, v in binds:
                by_name.setdefault(n, []).append(v)
            passed = self.param_known.get(scope, set()) if scope is not None else set()
            for n, values in by_name.items():
                if n in self.known[scope]:
                    continue
                # a parameter's binding (None) counts when its calls pass a settings object (`passed`)
                if all((v is None and n in passed) or self._value_is(v, scope) for v in values):
                    self.known[scope].add(n)
                    changed = True
        # parameters: every call of the (uniquely named) function passes a settings object there
        for fname, params in self._b.params.items():
            if self._b.defined.get(fname) != 1:
                continue
            calls = [(s, c) for s, c in self._b.calls if c.func.value == fname]
            if not calls:
                continue
            for i, p in enumerate(params):
                if p in self.param_known.get(fname, set()):
                    continue
                if all(self._passes(s, c, i, p) for s, c in calls):
                    self.param_known.setdefault(fname, set()).add(p)
                    changed = True
        return changed

    def _passes(self, scope: Scope, call: cst.Call, index: int, name: str) -> bool:
        if any(a.star for a in call.args):
            return False
        for a in call.args:
            if a.keyword is not None and a.keyword.value == name:
                return self._value_is(a.value, scope)
        positional = [a for a in call.args if a.keyword is None]
        return index < len(positional) and self._value_is(positional[index].value, scope)

    def instance(self, expr: cst.BaseExpression) -> bool:
        """`Options()`: an instance of a class of the program made right there."""
        return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in self._classes

    def holds(self, scope: Scope, name: str) -> bool:
        """Whether `name`, read in `scope` (a function's name, None for the module), holds a settings
        object: bound so there, or not bound there and so at the module level."""
        if scope is not None and scope in self.known:
            if name in self.known[scope]:
                return True
            if any(n == name for n, _ in self._b.bindings.get(scope, [])):
                return False
        return name in self.known[None]
