"""`w = torch.randn(3, 1, requires_grad=True)` (or `Variable(t, requires_grad=True)`) given to an optimizer in the
same scope, `opt = torch.optim.SGD([w, b], lr=...)`: the from-scratch regression idiom. MindSpore's optimizers
update Parameters only, so this pre-pass writes such a tensor as what it is in torch, a leaf that trains:
`w = torch.nn.Parameter(torch.randn(3, 1))` (requires_grad=True, as nn.Parameter's default). The converter then
makes it an ms.Parameter, and the train step differentiates the loss with respect to it (train_loop.py counts a
read of a hand-made parameter as reaching trained weights). Only names listed in an optimizer call's literal
list or tuple (directly, through a name bound once to one, or in literal param groups `{"params": [w], ...}`),
bound once in that scope by such a call, are rewritten. The flag may also come in a statement of its own after the
binding, `w = torch.tensor(v)` then `w.requires_grad = True` or `w.requires_grad_()` (minimalRL's SAC temperature);
that statement stays, and on the Parameter it changes nothing."""
from __future__ import annotations

from typing import Dict, Optional, Set

import libcst as cst

from .callsite import dotted_name
from .project_index import resolve_head

_FACTORIES = {"torch.tensor", "torch.randn", "torch.rand", "torch.zeros", "torch.ones", "torch.full", "torch.empty",
              "torch.randint", "torch.arange", "torch.linspace", "torch.eye", "torch.normal", "torch.as_tensor"}
_VARIABLES = {"torch.autograd.Variable", "torch.autograd.variable.Variable"}


def might_train_tensors(source: str) -> bool:
    return ("requires_grad=True" in source or "requires_grad = True" in source or "requires_grad_(" in source) \
        and "optim." in source


def _qualified(func: cst.BaseExpression, imports: Dict[str, str]) -> Optional[str]:
    name = dotted_name(func)
    return resolve_head(name, imports) if name else None


class _OwnScope(cst.CSTVisitor):
    """Visits one scope's statements: nested functions and classes are scopes of their own."""

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False


def _target_name(target: cst.BaseExpression) -> Optional[str]:
    """`w` or `self.log_alpha` (SAC's entropy temperature, `Adam([self.log_alpha], ...)`): the name an optimizer's
    list gives it; None for any other target."""
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
        return "self." + target.attr.value
    return None


def _requires_grad_true(call: cst.Call) -> bool:
    return any(a.keyword is not None and a.keyword.value == "requires_grad" and isinstance(a.value, cst.Name)
               and a.value.value == "True" for a in call.args)


class _Scope(cst.CSTTransformer):
    """One scope's statements (the module's or a function's), not nested functions or classes. `in_subclass`: the
    scope is a method of a class with a base (maybe an nn.Module)."""

    def __init__(self, imports: Dict[str, str], names: Set[str], in_subclass: bool = False):
        self.imports, self.names, self.in_subclass = imports, names, in_subclass
        self.rewritten = False      # leave_Assign made the line's value a Parameter

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        """`self.log_alpha = Parameter(...)` in a module's method: torch's tensor was a plain attribute, so its
        Parameter stays one (`object.__setattr__`), out of the module's parameters(), state_dict() and any optimizer
        made from them, as in torch."""
        rewritten, self.rewritten = self.rewritten, False
        if not (rewritten and self.in_subclass and len(updated.body) == 1 and isinstance(updated.body[0], cst.Assign)):
            return updated
        target = updated.body[0].targets[0].target
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value == "self"):
            return updated
        held = cst.parse_expression(f'object.__setattr__(self, "{target.attr.value}", x)')
        held = held.with_changes(args=[*held.args[:2], cst.Arg(updated.body[0].value)])
        comment = cst.EmptyLine(comment=cst.Comment(
            "# msmigrate: a plain attribute, as the tensor was in torch: no parameter of the module"),
            indent=True)
        return updated.with_changes(body=[cst.Expr(held)], leading_lines=[*updated.leading_lines, comment])

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if not (len(updated.targets) == 1 and _target_name(updated.targets[0].target) in self.names
                and isinstance(updated.value, cst.Call)):
            return updated
        call = updated.value
        q = _qualified(call.func, self.imports)
        args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == "requires_grad")]
        if q in _VARIABLES:
            if not args or args[0].keyword is not None or len(args) != 1:
                return updated
            value = args[0].value          # Variable(data, requires_grad=True): the data
        elif q in _FACTORIES:
            if args:
                args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            value = call.with_changes(args=args)
        else:
            return updated
        param = cst.parse_expression("torch.nn.Parameter(x)")
        torch_alias = next((a for a, full in self.imports.items() if full == "torch"), None)
        if torch_alias is None:
            return updated
        param = param.with_changes(func=cst.parse_expression(f"{torch_alias}.nn.Parameter"), args=[cst.Arg(value)])
        self.rewritten = True
        return updated.with_changes(value=param)


def _literal_lists(scope_body) -> Dict[str, cst.BaseExpression]:
    """Names bound exactly once in this scope, to a literal list or tuple: `params = [w, b]`."""
    seen: Dict[str, int] = {}
    values: Dict[str, cst.BaseExpression] = {}

    class _V(_OwnScope):
        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                for n in _bound_names(t.target):
                    seen[n] = seen.get(n, 0) + 1
            if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                    and isinstance(node.value, (cst.List, cst.Tuple)):
                values[node.targets[0].target.value] = node.value

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            for n in _bound_names(node.target):
                seen[n] = seen.get(n, 0) + 2

        def visit_For(self, node: cst.For) -> None:
            for n in _bound_names(node.target):
                seen[n] = seen.get(n, 0) + 2

    for st in scope_body:
        st.visit(_V())
    return {n: v for n, v in values.items() if seen.get(n) == 1}


def _bound_names(target: cst.BaseExpression) -> Set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_bound_names(e.value) for e in target.elements)) if target.elements else set()
    return set()


def _listed_names(value: cst.BaseExpression, lists: Dict[str, cst.BaseExpression]) -> Set[str]:
    """Names a params value lists: `[w, b]`, a name bound to such a literal, or param groups
    `[{"params": [w], "lr": ...}, {"params": b}]`."""
    if isinstance(value, cst.Name) and value.value in lists:
        value = lists[value.value]
    if not isinstance(value, (cst.List, cst.Tuple)):
        return set()
    names: Set[str] = set()
    for e in value.elements:
        if _target_name(e.value) is not None:
            names.add(_target_name(e.value))
        elif isinstance(e.value, cst.Dict):
            for el in e.value.elements:
                if isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString) \
                        and el.key.evaluated_value == "params":
                    group = el.value
                    names |= {group.value} if isinstance(group, cst.Name) and group.value not in lists \
                        else _listed_names(group, lists)
    return names


def _optimized_names(scope_body, imports: Dict[str, str]) -> Set[str]:
    """Names an optimizer constructor's first argument (or params=) lists in this scope: a literal list or tuple, a
    name bound once to one, or literal param groups."""
    names: Set[str] = set()
    lists = _literal_lists(scope_body)

    class _V(_OwnScope):
        def visit_Call(self, node: cst.Call) -> None:
            q = _qualified(node.func, imports) or ""
            if not q.startswith("torch.optim.") or q.startswith("torch.optim.lr_scheduler"):
                return
            first = next((a.value for a in node.args if a.keyword is None or a.keyword.value == "params"), None)
            if first is not None:
                names.update(_listed_names(first, lists))

    for st in scope_body:
        st.visit(_V())
    return names


def _flag_set_later(statement: cst.BaseStatement) -> Optional[str]:
    """`w.requires_grad = True` or `w.requires_grad_()` / `w.requires_grad_(True)` as a statement of its own: `w`."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Name) \
            and small.value.value == "True":
        target = small.targets[0].target
        if isinstance(target, cst.Attribute) and target.attr.value == "requires_grad":
            return _target_name(target.value)
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
            and isinstance(small.value.func, cst.Attribute) and small.value.func.attr.value == "requires_grad_":
        args = small.value.args
        if not args or (len(args) == 1 and isinstance(args[0].value, cst.Name) and args[0].value.value == "True"):
            return _target_name(small.value.func.value)
    return None


def _bound_by_trainable_call(scope_body, names: Set[str], imports: Dict[str, str]) -> Set[str]:
    """Of `names`, those bound exactly once in this scope, by a factory or Variable call with requires_grad=True, or
    by a factory call whose result a later statement of the same block flags (`w.requires_grad = True`)."""
    bound: Dict[str, int] = {}
    good: Set[str] = set()
    flagged: Set[str] = set()   # bound by a factory call, then flagged by a later statement of the same block

    def _scan_block(statements) -> None:
        factory_bound: Set[str] = set()
        for st in statements:
            flag = _flag_set_later(st)
            if flag in factory_bound:
                flagged.add(flag)
            if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Assign):
                node = st.body[0]
                name = _target_name(node.targets[0].target) if len(node.targets) == 1 else None
                if name in names and isinstance(node.value, cst.Call) \
                        and _qualified(node.value.func, imports) in _FACTORIES:
                    factory_bound.add(name)
            elif isinstance(st, cst.BaseCompoundStatement) and not isinstance(st, (cst.FunctionDef, cst.ClassDef)):
                for block in _blocks_of(st):
                    _scan_block(block)

    class _V(_OwnScope):
        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                name = _target_name(t.target)
                if name in names:
                    bound[name] = bound.get(name, 0) + 1
                    if (len(node.targets) == 1 and isinstance(node.value, cst.Call) and _requires_grad_true(node.value)
                            and _qualified(node.value.func, imports) in _FACTORIES | _VARIABLES):
                        good.add(name)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            name = _target_name(node.target)
            if name in names:
                bound[name] = bound.get(name, 0) + 1

        def visit_For(self, node: cst.For) -> None:
            if isinstance(node.target, cst.Name) and node.target.value in names:
                bound[node.target.value] = bound.get(node.target.value, 0) + 2

    for st in scope_body:
        st.visit(_V())
    _scan_block(scope_body)
    return {n for n in good | flagged if bound.get(n) == 1}


def _blocks_of(statement: cst.BaseCompoundStatement):
    """The statement lists of a compound statement's bodies (if/else, for, while, with, try)."""
    blocks = []
    node = statement
    while node is not None:
        body = getattr(node, "body", None)
        if isinstance(body, cst.IndentedBlock):
            blocks.append(list(body.body))
        for handler in getattr(node, "handlers", ()) or ():
            if isinstance(handler.body, cst.IndentedBlock):
                blocks.append(list(handler.body.body))
        final = getattr(node, "finalbody", None)
        if final is not None and isinstance(final.body, cst.IndentedBlock):
            blocks.append(list(final.body.body))
        orelse = getattr(node, "orelse", None)
        node = orelse if isinstance(orelse, cst.If) else None
        if isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock):
            blocks.append(list(orelse.body.body))
    return blocks


def _rewrite_scope(body, imports: Dict[str, str], in_subclass: bool = False):
    names = _bound_by_trainable_call(body, _optimized_names(body, imports), imports)
    if not names:
        return body
    return [st.visit(_Scope(imports, names, in_subclass)) for st in body]


class _Functions(cst.CSTTransformer):
    def __init__(self, imports: Dict[str, str]):
        self.imports = imports
        self.classes = []       # per enclosing class: has it a base other than object

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(any(not (isinstance(b.value, cst.Name) and b.value.value == "object")
                                for b in node.bases if b.keyword is None))

    def leave_ClassDef(self, original, updated):
        self.classes.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.classes.append(None)   # a nested function's own classes come after this marker

    def leave_FunctionDef(self, original, updated: cst.FunctionDef):
        self.classes.pop()
        if not isinstance(updated.body, cst.IndentedBlock):
            return updated
        in_subclass = bool(self.classes) and bool(self.classes[-1])
        return updated.with_changes(body=updated.body.with_changes(body=_rewrite_scope(updated.body.body,
                                                                                      self.imports, in_subclass)))


def rewrite_trained_tensors(module: cst.Module, imports: Dict[str, str]) -> cst.Module:
    module = module.with_changes(body=_rewrite_scope(module.body, imports))
    return module.visit(_Functions(imports))
