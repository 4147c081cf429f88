"""An imported torch name that the program binds again to a value of its own.

    import torch.optim as optim
    ...
    optim = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)     # g-mlp-pytorch's train.py
    optim.step()

The file's import table (ProjectIndex) says `optim` is `torch.optim`, so every later `optim` read as the module:
the assignment became a raising TODO ("assigns a torch global setting"), and so did `optim.step()`. Python's
own rules say what the name holds:

- in a function body, a name the function binds (other than by an import, and not declared global or
  nonlocal) is local to the whole function: it is never the import there (nor in the functions nested in it);
- in the module body, the statement that binds it starts the program's own value: the transformer drops the
  name from its import table from that statement on (the functions defined before it and called after it
  would see the new value too: module-level rebinding of an import in the middle of a program, with functions
  reading it, is not tracked further).

A binding by a plain name or attribute (`F = torch.nn.functional`, `nn = torch.nn`) may keep the module under
another spelling: such bindings do not count (the import stays)."""
from __future__ import annotations

from typing import Set

import libcst as cst

from .train_loop import walk
from .visitor_bases import BindingTargets


class _Rebinds(BindingTargets):
    """Names a scope binds to computed values (assignments, loop targets, `:=`), not by imports, `with ... as`,
    definitions; nested functions, classes and lambdas are scopes of their own."""

    binders = (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)

    def __init__(self) -> None:
        self.names: Set[str] = set()
        self.declared: Set[str] = set()     # global / nonlocal: not the scope's own
        self.started = False

    def bind(self, target, value) -> None:
        if isinstance(target, cst.Name) and not isinstance(value, (cst.Name, cst.Attribute)):
            self.names.add(target.value)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and self.started:
            return False
        self.started = True
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            self.declared.update(n.name.value for n in node.names)
        return super().on_visit(node)


def rebound_names(body: cst.CSTNode) -> Set[str]:
    """Names the scope of `body` (a function's body) binds to values of its own."""
    v = _Rebinds()
    walk(body, v)
    return v.names - v.declared


def target_names(target: cst.BaseExpression) -> list:
    """The plain Name nodes a tuple or list target binds (`N, F = 600, 24`, `a, *rest = x`), at any depth; none
    for a plain name (the target itself) or an attribute or subscript."""
    if not isinstance(target, (cst.Tuple, cst.List)):
        return []
    out = []
    for el in target.elements:
        value = el.value
        if isinstance(value, cst.Name):
            out.append(value)
        else:
            out += target_names(value)
    return out


def rebinds_at_module_level(original: cst.Assign) -> Set[str]:
    """The plain names a module-level assignment binds to a computed value (a call, an operation), the names of
    a tuple target included (`N, F = 600, 24`)."""
    if isinstance(original.value, (cst.Name, cst.Attribute)):
        return set()
    return {t.target.value for t in original.targets if isinstance(t.target, cst.Name)} | {
        n.value for t in original.targets for n in target_names(t.target)}
