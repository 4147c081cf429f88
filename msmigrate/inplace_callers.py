"""A function that changes an argument in place and the caller that reads its own tensor after the call:

    def f(x, m):
        x.masked_fill_(m, 0.)
        return x

    y = f(x, m)
    print(x)          # torch: the filled tensor

The converter writes `x.masked_fill_(m, 0.)` as the rebinding `x = ops.masked_fill(x, m, 0.)`
(inplace_forms.py; MindSpore 2.10's own in-place ops do nothing or have no kernel on CPU, measured:
add_/sub_/mul_ leave the tensor as it was, masked_fill_/zero_/fill_/clamp_ are unregistered). Inside f
that is right; the caller's `x` keeps its old value. Writing the new value back into the caller's tensor
(`x[...] = new`, `x.copy_(new)`) corrupts MindSpore's gradients (an op that saved the tensor reads the
overwritten memory in backward), so the fix is on the caller's side, on the torch source:
- where every `return` of f returns that parameter and the call is the whole value of a statement
  (`y = f(x, m)`, `f(x, m)`), the caller binds the result to its own name too (`y = x = f(x, m)`,
  `x = f(x, m)`): in torch the same program (f returns the very tensor it changed), in MindSpore the
  caller's name now holds the changed value;
- else, where the caller reads that name after the call (also: in a later pass of a loop around it),
  or passed an attribute (`self.h`) or a part of a tensor (`a[0]`), the call is refused: a TODO that
  raises MigrationError when reached (transformer: `_arg_refusals`).
Callees are this file's functions called by name, methods called as `self.m(...)`, and the forward of
this file's Module classes called through `self.block(...)` (`self.block = Block(...)` in __init__) or a
local `net = Block(...)`. An in-place activation of a parameter (`self.act(x)` with nn.ReLU(inplace=True),
`F.relu(x, inplace=True)`, `F.relu_(x)`, `x.relu_()`; activation_calls.py) changes it the same way, and
`return self.act(x)` returns x itself; where the activation may or may not be in-place (built by an unknown
callable), the caller is never rebound, only refused when it reads its tensor afterwards. A parameter used for nothing but in-place changes is refused in the function
itself (inplace_arguments.py)."""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from .fast_visit import children
from . import activation_calls as AC
from . import inplace_arguments as IA
from .visitor_bases import BindingTargets, ScopeLocalVisitor, StatementOrder
from .inplace_views import _held, _strip

WHY = ("changes the argument `{arg}` in place in {callee}; torch's caller sees the change, MindSpore's "
       "in-place form is a rebinding inside the function, so the caller's tensor would keep its old "
       "value; return the changed tensor and assign it in the caller")


def might_change_arguments(source: str) -> bool:
    return "_(" in source or "inplace" in source


def _params(fn: cst.FunctionDef) -> List[str]:
    p = fn.params
    return [x.name.value for x in list(p.posonly_params) + list(p.params)]


class _Body(BindingTargets, ScopeLocalVisitor):
    """In-place receivers and returns of one function body."""

    binders = (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.AsName, cst.NamedExpr)

    def __init__(self, activations: "_ActivationKinds") -> None:
        self.activations = activations
        self.receivers: Set[str] = set()
        self.unknown: Set[str] = set()        # given to an activation that may be in-place
        self.returns: List[cst.Return] = []
        self.bound: Set[str] = set()

    def bind(self, target, value) -> None:
        if isinstance(target, cst.Name):
            self.bound.add(target.value)

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if (isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.attr.value != "detach_"
                and IA.rebinds(f.attr.value)):
            self.receivers.add(f.value.value)
        kind = self.activations(node)
        arg = AC.activation_input(node) if kind else None
        if isinstance(arg, cst.Name):     # `self.act(x)`, `F.relu(x, inplace=True)`, `F.relu_(x)`
            (self.receivers if kind == "inplace" else self.unknown).add(arg.value)

    def returned(self, node: cst.Return) -> Optional[str]:
        """The name a return gives back: `return x`, or `return self.act(x)` of an in-place activation
        (torch returns its input itself)."""
        v = node.value
        if isinstance(v, cst.Name):
            return v.value
        if isinstance(v, cst.Call) and self.activations(v) == "inplace":
            arg = AC.activation_input(v)
            return arg.value if isinstance(arg, cst.Name) else None
        f = v.func if isinstance(v, cst.Call) else None
        if (isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.attr.value.endswith("_")
                and f.attr.value[:-1] in AC.FUNCTIONAL):
            return f.value.value          # `return x.relu_()`
        return None

    def visit_Return(self, node: cst.Return) -> None:
        self.returns.append(node)


class _ActivationKinds:
    """call -> 'inplace' / 'unknown' / None for the activations of one class's methods (or a function)."""

    def __init__(self, aliases: Set[str], attributes: Dict[str, str]) -> None:
        self.aliases, self.attributes = aliases, attributes

    def __call__(self, call: cst.Call) -> Optional[str]:
        return AC.call_kind(call, self.aliases, self.attributes, {}, underscore=True)


class Callee:
    """A function whose parameters it changes in place: name -> position, and the parameter it returns
    (every return returns it), if any."""

    def __init__(self, fn: cst.FunctionDef, method: bool, activations: "_ActivationKinds",
                 fresh_layers: Set[str] = frozenset()) -> None:
        names = _params(fn)
        if method and names:
            names = names[1:]
        self.positions = {n: i for i, n in enumerate(names)}
        self.kwonly = {x.name.value for x in fn.params.kwonly_params}
        self.star = fn.params.star_arg is not None and isinstance(fn.params.star_arg, cst.Param)
        body = _Body(activations)
        fn.body.visit(body)
        receivers, unknown = _changed_in_order(fn, activations, fresh_layers)
        only = IA.mutated_only(fn, set(names) | self.kwonly)      # refused in the function itself
        params = set(names) | self.kwonly
        # unknown: an activation that may be in-place; the caller's tensor may change, so no rebinding
        self.unknown = (unknown & params) - receivers
        self.changed = {n for n in (receivers | unknown) & params if n not in only}
        last = fn.body.body[-1] if isinstance(fn.body, cst.IndentedBlock) and fn.body.body else None
        ends = (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1
                and isinstance(last.body[0], cst.Return))
        values = {body.returned(r) for r in body.returns}
        returned = values.pop() if ends and len(values) == 1 else None
        # `x = x * 2; return x` returns another tensor than the caller's: no identity to rebind to
        self.returned = returned if returned not in body.bound else None
        self.name = fn.name.value
        self.owner: Optional[str] = None      # the class of a method (Index sets it)
        # the parameters whose every change is an in-place method call standing as a statement of its own (the
        # transformer writes those into the caller's tensor: write_backs below)
        self.statement_changes = _statement_changes(fn, self.changed, activations)
        self.flag = _flag_position(fn, names, activations, fresh_layers) if self.changed else None

    def args(self, call: cst.Call) -> Optional[List[Tuple[str, cst.BaseExpression]]]:
        """(parameter, argument) for the changed parameters; None where the call cannot be matched."""
        if self.flag is not None and not _passes_flag(call, self.flag):
            return []       # `hard_sigmoid(x)`: inplace left False, nothing changes
        out = []
        pos = 0
        for a in call.args:
            if a.star:
                return None
            if a.keyword is not None:
                if a.keyword.value in self.changed:
                    out.append((a.keyword.value, a.value))
                continue
            name = next((n for n, i in self.positions.items() if i == pos), None)
            pos += 1
            if name is None:
                if not self.star:
                    return None
                continue
            if name in self.changed:
                out.append((name, a.value))
        return out


def _statement_changes(fn: cst.FunctionDef, params: Set[str], activations) -> Set[str]:
    """The params whose every in-place change in fn is a method call (or a chain of them) that is a whole
    statement, `x.mul_(lam).add_(x_flipped)`: each is written into the caller's tensor where it stands. A change
    inside an expression (`return x.mul_(s) if inplace else ...`, which inplace_flag_returns.py makes out of place)
    or by an in-place activation would reach no write."""
    whole: Set[int] = set()
    changes: Dict[str, List[int]] = {}
    activated: Set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Expr(self, node: cst.Expr) -> None:
            call = node.value
            while isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and IA.rebinds(
                    call.func.attr.value):
                whole.add(id(call))
                call = call.func.value

        def visit_Call(self, node: cst.Call) -> None:
            f = node.func
            if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value in params \
                    and IA.rebinds(f.attr.value):
                changes.setdefault(f.value.value, []).append(id(node))
            if activations(node):
                arg = AC.activation_input(node)
                if isinstance(arg, cst.Name):
                    activated.add(arg.value)
    fn.body.visit(V())
    return {p for p, ids in changes.items() if p not in activated and all(i in whole for i in ids)}


class _WhenNotInPlace(cst.CSTTransformer):
    """A function as it runs with `inplace` false: an `if inplace:` body and the first branch of `... if inplace
    else ...` left out."""

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.If:
        if isinstance(original.test, cst.Name) and original.test.value == "inplace":
            return updated.with_changes(body=cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Pass()])]))
        return updated

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
        if isinstance(original.test, cst.Name) and original.test.value == "inplace":
            return updated.with_changes(body=cst.Name("None"))
        return updated


def _flag_position(fn: cst.FunctionDef, names: List[str], activations, fresh_layers) -> Optional[int]:
    """The position of an `inplace=False` parameter that chooses every change of the parameters (timm's
    `return x.mul_(s) if inplace else x.mul(s)`, `if inplace: x.add_(3.); ...`), or None."""
    param = next((p for p in fn.params.params if p.name.value == "inplace"), None)
    if param is None or not (isinstance(param.default, cst.Name) and param.default.value == "False") \
            or "inplace" not in names or "inplace" in {t.value for t, _ in _assigns(fn) if isinstance(t, cst.Name)}:
        return None
    plain = fn.visit(_WhenNotInPlace())
    receivers, unknown = _changed_in_order(plain, activations, fresh_layers)
    return None if (receivers | unknown) & set(names) else names.index("inplace")


def _passes_flag(call: cst.Call, position: int) -> bool:
    """The call may set the flag: `inplace=` or its position given anything but False, or *args/**kwargs."""
    pos = 0
    for a in call.args:
        if a.star:
            return True
        if a.keyword is None:
            if pos == position:
                return not (isinstance(a.value, cst.Name) and a.value.value == "False")
            pos += 1
        elif a.keyword.value == "inplace":
            return not (isinstance(a.value, cst.Name) and a.value.value == "False")
    return False


# torch layers whose output is always a new tensor (never their input, nor a view of it)
_FRESH_LAYERS = {"Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Linear",
                 "Bilinear", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "LayerNorm", "InstanceNorm1d",
                 "InstanceNorm2d", "InstanceNorm3d", "Embedding", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d",
                 "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
                 "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d"}


def _fresh_layers(cls: cst.ClassDef) -> Set[str]:
    """self attributes that every assignment in the class makes one of _FRESH_LAYERS (`self.conv = nn.Conv2d(...)`)."""
    kinds: Dict[str, Set[bool]] = {}

    class V(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                tg = t.target
                if isinstance(tg, cst.Attribute) and isinstance(tg.value, cst.Name) and tg.value.value == "self":
                    v = node.value
                    f = v.func if isinstance(v, cst.Call) else None
                    name = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) \
                        else None
                    kinds.setdefault(tg.attr.value, set()).add(name in _FRESH_LAYERS)
    cls.body.visit(V())
    return {a for a, k in kinds.items() if k == {True}}


def _fresh_value(value: cst.BaseExpression, fresh_layers: Set[str]) -> bool:
    """A value that is a new tensor, never the one it reads: arithmetic (`x * 2`, `a + b`) or a call of a layer
    attribute known to compute a new tensor (`self.conv(x)`)."""
    if isinstance(value, cst.BinaryOperation):
        return True
    f = value.func if isinstance(value, cst.Call) else None
    return (isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "self"
            and f.attr.value in fresh_layers)


def _changed_in_order(fn: cst.FunctionDef, activations: "_ActivationKinds", fresh_layers: Set[str]):
    """(receivers, unknown) of fn's body, statement by statement: a name the body's top level has rebound to a new
    tensor (`x = self.conv(x)`, unconditionally, before the change) no longer holds the caller's tensor, so an
    in-place change after that (`x = self.relu(x)` with ReLU(inplace=True)) changes no argument."""
    receivers: Set[str] = set()
    unknown: Set[str] = set()
    fresh: Set[str] = set()
    statements = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else [fn.body]
    for st in statements:
        body = _Body(activations)
        st.visit(body)
        receivers |= body.receivers - fresh
        unknown |= body.unknown - fresh
        assign = st.body[0] if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 else None
        if (isinstance(assign, cst.Assign) and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name)):
            name = assign.targets[0].target.value
            if _fresh_value(assign.value, fresh_layers):
                fresh.add(name)
            elif name in fresh and not _reads_only(assign.value, name):
                fresh.discard(name)     # rebound to something else (perhaps another argument)
        else:
            # a binding in a block (`if`, loop, with): the name may or may not hold the new tensor after it
            bound = _Body(activations)
            st.visit(bound)
            fresh -= bound.bound
    return receivers, unknown


def _reads_only(value: cst.BaseExpression, name: str) -> bool:
    """The value reads no name but `name` and `self` (`x.view(n, -1)`, `self.relu(x)`): it holds x's tensor or a
    view of it, never another argument's."""
    found: Set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)
            return False
    value.visit(V())
    return found <= {name, "self"}


def _init_types(cls: cst.ClassDef, classes: Set[str]) -> Dict[str, str]:
    """`self.block = Block(...)` in __init__: attribute -> class name of this file."""
    out: Dict[str, str] = {}
    for st in cls.body.body:
        if isinstance(st, cst.FunctionDef) and st.name.value == "__init__":
            for node in _assigns(st):
                t, v = node
                if (isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self"
                        and isinstance(v, cst.Call) and isinstance(v.func, cst.Name) and v.func.value in classes):
                    out[t.attr.value] = v.func.value
    return out


def _assigns(fn) -> List[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    class V(ScopeLocalVisitor):
        def __init__(self):
            self.out = []

        def visit_Assign(self, node):
            for t in node.targets:
                self.out.append((t.target, node.value))
    v = V()
    fn.body.visit(v)
    return v.out


class Index:
    """This file's callees with changed parameters."""

    def __init__(self, module: cst.Module) -> None:
        self.functions: Dict[str, Callee] = {}
        self.methods: Dict[str, Dict[str, Callee]] = {}      # class -> method -> callee
        self.attr_classes: Dict[str, Dict[str, str]] = {}    # class -> self attribute -> class
        classes = {st.name.value for st in module.body if isinstance(st, cst.ClassDef)}
        aliases = AC.functional_aliases(module)
        for st in module.body:
            if isinstance(st, cst.FunctionDef):
                c = Callee(st, False, _ActivationKinds(aliases, {}))
                if c.changed:
                    self.functions[st.name.value] = c
            elif isinstance(st, cst.ClassDef) and isinstance(st.body, cst.IndentedBlock):
                ms = {}
                kinds = _ActivationKinds(aliases, AC.attribute_kinds(st))
                fresh = _fresh_layers(st)
                for m in st.body.body:
                    if isinstance(m, cst.FunctionDef) and not m.decorators:
                        c = Callee(m, True, kinds, fresh)
                        c.owner = st.name.value
                        if c.changed:
                            ms[m.name.value] = c
                self.methods[st.name.value] = ms
                self.attr_classes[st.name.value] = _init_types(st, classes)

    def __bool__(self) -> bool:
        return bool(self.functions) or any(self.methods.values())

    def callee(self, call: cst.Call, cls: Optional[str], locals_: Dict[str, str], shadowed: Set[str]):
        f = call.func
        if isinstance(f, cst.Name):
            if f.value in locals_:
                return self.methods.get(locals_[f.value], {}).get("forward")
            if f.value not in shadowed:
                return self.functions.get(f.value)
            return None
        if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "self" and cls:
            own = self.methods.get(cls, {}).get(f.attr.value)
            if own is not None:
                return own
            sub = self.attr_classes.get(cls, {}).get(f.attr.value)
            if sub is not None:
                return self.methods.get(sub, {}).get("forward")
        return None


def _target_code(node) -> str:
    return cst.Module(body=[]).code_for_node(node)


class _Scope(StatementOrder):
    """One scope's statements in order: binds, reads, and the calls of the index's callees."""

    def __init__(self, index: Index, cls: Optional[str], locals_: Dict[str, str], shadowed: Set[str]) -> None:
        super().__init__()
        self.index, self.cls, self.locals_, self.shadowed = index, cls, locals_, shadowed
        self.stmt: Optional[cst.CSTNode] = None
        self.binds: List[Tuple[int, str]] = []
        self.calls: List[Tuple[int, cst.Call, Callee, cst.CSTNode, Tuple[int, ...]]] = []
        self.stmt_binds: Dict[int, Set[str]] = {}

    def event(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.SimpleStatementLine):
            self.stmt = node
            names = set()
            for st in node.body:
                if isinstance(st, cst.Assign):
                    for t in st.targets:
                        names |= _names(t.target)
            self.stmt_binds[id(node)] = names
            self.binds.extend((self.pos, n) for n in names)
        if isinstance(node, cst.For):
            self.binds.extend((self.pos + 1, n) for n in _names(node.target))
        if isinstance(node, cst.Call):
            c = self.index.callee(node, self.cls, self.locals_, self.shadowed)
            if c is not None:
                self.calls.append((self.pos, node, c, self.stmt, tuple(self.loops)))


def _names(target) -> Set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        out: Set[str] = set()
        for e in target.elements:
            out |= _names(e.value)
        return out
    if isinstance(target, cst.StarredElement):
        return _names(target.value)
    return set()


def _read_after(scope: _Scope, pos: int, loops, name: str, skip: int) -> bool:
    nxt = min((p for p, n in scope.binds if n == name and p > pos), default=None)
    for p, n, rloops, rid in scope.reads:
        if n != name or rid == skip:
            continue
        if set(rloops) & set(loops):
            return True
        if p >= pos and (nxt is None or p < nxt):
            return True
    return False


def _whole_value(stmt, call) -> Optional[cst.BaseSmallStatement]:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        st = stmt.body[0]
        if isinstance(st, (cst.Assign, cst.Expr)) and st.value is call:
            return st
    return None


def _scope_parts(module: cst.Module):
    """(scope node, class name, function) for the module's top level and every function in it."""
    out = [(module, None, None)]

    def walk(body, cls):
        for st in body:
            if isinstance(st, cst.FunctionDef):
                out.append((st.body, cls, st))
                if isinstance(st.body, cst.IndentedBlock):
                    walk(st.body.body, cls)
            elif isinstance(st, cst.ClassDef) and isinstance(st.body, cst.IndentedBlock):
                walk(st.body.body, st.name.value)
            elif isinstance(st, (cst.If, cst.For, cst.While, cst.With, cst.Try)):
                for child in children(st):
                    if isinstance(child, cst.IndentedBlock):
                        walk(child.body, cls)
    walk(module.body, None)
    return out


def _local_classes(fn, index: Index) -> Dict[str, str]:
    if fn is None:
        return {}
    return {t.value: v.func.value for t, v in _assigns(fn)
            if isinstance(t, cst.Name) and isinstance(v, cst.Call) and isinstance(v.func, cst.Name)
            and v.func.value in index.methods and "forward" in index.methods[v.func.value]}


class _Rebind(cst.CSTTransformer):
    def __init__(self, targets: Dict[int, cst.BaseExpression]) -> None:
        self.targets = targets

    def leave_SimpleStatementLine(self, original, updated):
        t = self.targets.get(id(original))
        if t is None:
            return updated
        st = updated.body[0]
        new = cst.AssignTarget(target=t)
        if isinstance(st, cst.Assign):
            st = st.with_changes(targets=list(st.targets) + [new])
        else:
            st = cst.Assign(targets=[new], value=st.value)
        return updated.with_changes(body=[st])


def _analyse(module: cst.Module, index: Index, cell_class=lambda name: True):
    """(statement id -> target to add, call id -> why, (class or None, function) -> the parameters it writes
    back into the caller's tensor)."""
    rebinds: Dict[int, cst.BaseExpression] = {}
    refused: Dict[int, str] = {}
    write_backs: Dict[Tuple[Optional[str], str], Set[str]] = {}
    for node, cls, fn in _scope_parts(module):
        locals_ = _local_classes(fn, index)
        shadowed = set(_params(fn)) if fn is not None else set()
        if fn is not None:
            shadowed |= {t.value for t, _ in _assigns(fn) if isinstance(t, cst.Name)} - set(locals_)
        scope = _Scope(index, cls, locals_, shadowed)
        node.visit(scope)
        for pos, call, callee, stmt, loops in scope.calls:
            matched = callee.args(call)
            if matched is None:
                continue
            for param, arg in matched:
                whole = _whole_value(stmt, call)
                root, _ = _strip(arg)
                plain = isinstance(arg, cst.Name) or (isinstance(arg, cst.Attribute) and _held(arg))
                if (whole is not None and callee.returned == param and plain and id(stmt) not in rebinds
                        and param not in callee.unknown):
                    targets = {_target_code(t.target) for t in getattr(whole, "targets", ())}
                    if _target_code(arg) not in targets:
                        rebinds[id(stmt)] = arg
                    continue
                why = WHY.format(arg=_target_code(arg), callee=f"`{callee.name}`")
                if isinstance(arg, cst.Name):
                    if arg.value in scope.stmt_binds.get(id(stmt), set()):
                        continue         # `x = f(x)`: the caller's old tensor has no name left
                    if _read_after(scope, pos, loops, arg.value, id(arg)):
                        if callee.returned != param and param in callee.statement_changes and not (
                                callee.owner and cell_class(callee.owner)):
                            # timm's Mixup: `lam = self._mix_batch(x)` changes x and returns lam: the callee
                            # writes its new value into the caller's tensor (_ms_compat.write_argument, which
                            # raises MigrationError where a graph compiles or a recorded gradient goes through it)
                            write_backs.setdefault((callee.owner, callee.name), set()).add(param)
                        else:
                            refused[id(call)] = why
                elif arg is not root or isinstance(arg, cst.Attribute):
                    if _held(root):
                        refused[id(call)] = why    # `f(a[0])`, `f(self.h)`: a tensor others hold
    return rebinds, refused, write_backs


def rebind_changed_arguments(module: cst.Module, cell_class=lambda name: True):
    """The pre-pass on the torch source: (module, {call id: why} of the calls to refuse, {(class or None,
    function): parameters} of the functions outside Cells that write their changes into the caller's tensor
    (cell_class(name): whether this file's class `name` is a Module)). The ids are of nodes in the returned
    module, which the transformer visits."""
    index = Index(module)
    if not index:
        return module, {}, {}
    rebinds, _, _ = _analyse(module, index, cell_class)
    if rebinds:
        module = module.visit(_Rebind(rebinds))
        index = Index(module)
    _, refused, write_backs = _analyse(module, index, cell_class)
    return module, refused, write_backs
