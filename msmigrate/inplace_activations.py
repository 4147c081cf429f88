"""In-place activations whose input the program reads afterwards:

    self.act = nn.ReLU(inplace=True)          # in __init__
    out = self.act(h)
    return out + h            # torch: h is the activated tensor (the ReLU wrote into it)

    y = F.relu(h, inplace=True); z = h * 2    # the same for the functional form

MindSpore's activations have no in-place form (the mappings drop `inplace=`), so the converted `h` would keep its
old value. A pre-pass on the torch source, as inplace_callers.py does for functions changing their arguments:
- where the input is a local name and the call is the whole value of its statement, the statement binds that name
  too (`out = h = self.act(h)`, `h = F.relu(h, inplace=True)`): the same program in torch, the new value in
  MindSpore; only where the name is read afterwards (later in its scope, or in a later pass of a loop around it),
  so that code not reading it keeps its form;
- where the input is read afterwards but cannot be rebound (the call inside an expression, an attribute or a part
  of a tensor, a view of one, a name another name aliases, an attribute whose activation msmigrate cannot tell is
  in-place), the call is refused: a TODO raising MigrationError where it is reached.
`F.relu_(x)`, `x.relu_()`, `torch.relu_(x)` are rebindings already (inplace_forms.py, torch_inplace_functions.py);
an activation inside nn.Sequential sees a tensor nobody else holds, but for its first layer, which sees the
Sequential's input: `self.block = nn.Sequential(nn.ReLU(True), conv)` ... `return x + self.block(x)` adds the
activated `x` in torch. Where that first layer is idempotent (activation_calls.IDEMPOTENT: ReLU, ReLU6, Hardtanh,
Threshold) and `x` is a local name, the statement is preceded by `x = self.block[0](x)`: the new value for every later
read, and the Sequential's own first layer, run again on it, gives the same tensor. Reads of `x` in that statement
must see the new value too: each is evaluated after the call (or is a bare operand, argument or element of an
expression that holds the call), else the call is refused, as it is for any other leading in-place activation.
"""
from __future__ import annotations

import re
from typing import Dict, Optional, Set, Tuple

import libcst as cst

from .activation_calls import attribute_kinds, _code, construction_kind, activation_input, kinds_of, call_kind, functional_aliases
from .activation_calls import FUNCTIONAL, MODULES
from .inplace_callers import _assigns, _Rebind, _names, _read_after, _Scope, _scope_parts, _whole_value
from .inplace_views import _held, _strip

WHY = ("`{call}` changes `{arg}` in place (inplace=True) and the program reads it afterwards; MindSpore's "
       "activation returns a new tensor, so `{arg}` would keep its old value: write `{name} = act({name})` and read "
       "the result")
SEQUENTIAL = ("`{call}` runs an nn.Sequential whose first layer is an in-place activation: torch changes `{arg}` in "
              "place and the program reads it afterwards; MindSpore's layers return new tensors, so `{arg}` would "
              "keep its old value: activate `{arg}` in its own statement first (`{name} = act({name})`) and build "
              "the Sequential with inplace=False")
ALIASED = ("`{call}` changes `{arg}` in place (inplace=True) and `{alias}` holds the same tensor, read afterwards; "
           "MindSpore's activation returns a new tensor, so `{alias}` would keep its old value: copy it first "
           "(`{alias} = {arg}.clone()`) if the old value was meant, or read the result")
UNKNOWN = ("`{call}`: msmigrate cannot tell whether this activation (built with inplace=True by a callable it does "
           "not know, or not in-place everywhere it is built) changes `{arg}`, which the program reads afterwards; "
           "build it with inplace=False or read its result only")


# `nn.ReLU(True)`, `F.relu(x, True)`: inplace given by position
_POSITIONAL_TRUE = re.compile(r"\b(?:%s)\([^()]*\bTrue\b" % "|".join(sorted(set(MODULES) | set(FUNCTIONAL))))


def might_act_in_place(source: str) -> bool:
    return "inplace" in source or _POSITIONAL_TRUE.search(source) is not None


def _local_kinds(node: cst.CSTNode, fn) -> Dict[str, str]:
    """Names of one scope bound to in-place activations (`act = nn.ReLU(inplace=True)`)."""
    assigned: Dict[str, Set[str]] = {}
    pairs = _assigns(fn) if fn is not None else [
        (t.target, small.value) for st in node.body if isinstance(st, cst.SimpleStatementLine)
        for small in st.body if isinstance(small, cst.Assign) for t in small.targets]
    for target, value in pairs:
        for n in _names(target):
            assigned.setdefault(n, set()).add(construction_kind(value) if isinstance(target, cst.Name) else "plain")
    return kinds_of(assigned)


class _Marker:
    def __init__(self, kind: str) -> None:
        self.kind = kind


class _Activations:
    """Index-like for inplace_callers._Scope: the in-place activation calls of a class's methods or a function."""

    def __init__(self, aliases: Set[str], attributes: Dict[str, Dict[str, str]]) -> None:
        self.aliases, self.attributes = aliases, attributes

    def callee(self, call: cst.Call, cls: Optional[str], locals_, shadowed):
        kind = call_kind(call, self.aliases, self.attributes.get(cls, {}) if cls else {}, locals_)
        return _Marker(kind) if kind else None


def _bound_before(scope: _Scope, name: str, pos: int) -> bool:
    return any(n == name and p < pos for p, n in scope.binds)


def _local(scope: _Scope, fn, name: str) -> bool:
    """A name the function binds (a parameter, an assignment): rebinding it makes no local of a global."""
    if fn is None:
        return True
    p = fn.params
    params = {x.name.value for x in list(p.posonly_params) + list(p.params) + list(p.kwonly_params)}
    return name in params or any(n == name for _, n in scope.binds)


def _aliases(scope: _Scope, fn, name: str, stmt=None) -> Set[str]:
    """Names bound to `name` itself (`identity = x`) or that `name` was bound to (`x = identity`) in the scope,
    but for an alias made before a statement of the same block as `stmt` (the call's) that binds `name` again
    (`shortcut = x; x = conv(x); x = act(x)`: the activation's input is the convolution's new tensor), the alias
    made inside an earlier statement of that block too (timm's SplitAttn: `if radix > 1: ... else: x_gap = x`, then
    `x_gap = x_gap.mean(...)` before `x_gap = self.act1(x_gap)`)."""
    out: Set[str] = set()
    if fn is None:
        return out
    where: Dict[int, Tuple[list, int]] = {}   # statement -> (its block's statements, its index there)
    made: Dict[str, list] = {}               # alias -> the statements around each place making it, outermost first

    class V(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.around: list = []

        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                self.around.append(node)
            return super().on_visit(node)

        def on_leave(self, original_node: cst.CSTNode) -> None:
            super().on_leave(original_node)
            if isinstance(original_node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                self.around.pop()

        def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
            body = list(node.body)
            where.update((id(st), (body, i)) for i, st in enumerate(body))

        def visit_Assign(self, node: cst.Assign) -> None:
            targets = set()
            for t in node.targets:
                targets |= _names(t.target)
            if isinstance(node.value, cst.Name):
                if node.value.value == name:
                    for a in targets - {name}:
                        made.setdefault(a, []).append(tuple(self.around))
                elif name in targets:
                    made.setdefault(node.value.value, []).append(tuple(self.around))

        def visit_FunctionDef(self, node) -> bool:
            return node is fn
    fn.visit(V())

    def rebound_since(around) -> bool:
        there = where.get(id(stmt))
        for st in around:
            here = where.get(id(st))
            if here is None or there is None or here[0] is not there[0] or here[1] >= there[1]:
                continue
            between = here[0][here[1] + 1:there[1]]
            return any(name in scope.stmt_binds.get(id(b), set()) for b in between)
        return False
    return {a for a, places in made.items() if not all(rebound_since(around) for around in places)}


def _parents(node: cst.CSTNode) -> Dict[int, cst.CSTNode]:
    out: Dict[int, cst.CSTNode] = {}

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            for child in n.children:
                out[id(child)] = n
            return True
    node.visit(V())
    return out


def _reads_in_order(stmt: cst.CSTNode, call: cst.Call, arg: cst.Name) -> bool:
    """Whether every other read of `arg`'s name in the call's statement sees the tensor as the call leaves it: read
    after the call, a target's part, or a bare operand/argument/element of an expression holding the call."""
    parents = _parents(stmt)
    holders, n = set(), call
    while id(n) in parents:
        n = parents[id(n)]
        holders.add(id(n))
    ok = [True]
    seen = [False]

    class V(cst.CSTVisitor):
        def visit_AssignTarget(self, node) -> bool:
            return False                     # evaluated after the value (a name there is bound, not read)

        def visit_Call(self, node: cst.Call) -> bool:
            if node is call:
                seen[0] = True
                return False
            return True

        def visit_Name(self, node: cst.Name) -> None:
            if node.value != arg.value or seen[0]:
                return
            p = parents.get(id(node))
            if isinstance(p, cst.Arg) or isinstance(p, cst.Element):
                p = parents.get(id(p))
            if not (isinstance(p, (cst.BinaryOperation, cst.Call, cst.Tuple, cst.List)) and id(p) in holders):
                ok[0] = False

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)           # `x.shape` reads x; `obj.x` does not
            return False
    stmt.visit(V())
    return ok[0]


def _leading_layer(scope: _Scope, fn, call: cst.Call, kind: str, arg, stmt, pos: int, loops, hoists) -> str:
    """A call of an nn.Sequential led by an in-place activation: '' where nothing needs doing or `x = seq[0](x)`
    goes before the statement (recorded in hoists), else the refusal's text."""
    if not isinstance(arg, cst.Name):
        root, _ = _strip(arg)
        base = root
        while isinstance(base, (cst.Attribute, cst.Subscript)):
            base = base.value
        held = isinstance(base, cst.Name) and _read_after(scope, pos, loops, base.value, -1)
        return SEQUENTIAL if held else ""
    x = arg.value
    own = x in scope.stmt_binds.get(id(stmt), set())
    read = not own and _read_after(scope, pos, loops, x, id(arg))
    aliased = [a for a in sorted(_aliases(scope, fn, x, stmt))
               if _bound_before(scope, a, pos) and _read_after(scope, pos, loops, a, -1)]
    if aliased:
        return ALIASED.replace("{alias}", aliased[0])
    if not read:
        return ""
    if (kind != "sequential" or not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1
            or not _local(scope, fn, x) or not _reads_in_order(stmt, call, arg) or id(stmt) in hoists):
        return SEQUENTIAL
    hoists[id(stmt)] = (x, call.func)
    return ""


class _Hoist(cst.CSTTransformer):
    """`x = seq[0](x)` before each statement of `targets` (statement id -> (x, the Sequential's expression))."""

    def __init__(self, targets) -> None:
        self.targets = targets

    def leave_SimpleStatementLine(self, original, updated):
        t = self.targets.get(id(original))
        if t is None:
            return updated
        x, seq = t
        first = cst.parse_statement(f"{x} = {_code(seq)}[0]({x})\n")
        return cst.FlattenSentinel([first, updated])


def _analyse(module: cst.Module):
    aliases = functional_aliases(module)
    attributes = {n.name.value: attribute_kinds(n) for n in _classes(module)}
    index = _Activations(aliases, attributes)
    rebinds: Dict[int, cst.BaseExpression] = {}
    refused: Dict[int, str] = {}
    hoists: Dict[int, Tuple[str, cst.BaseExpression]] = {}
    for node, cls, fn in _scope_parts(module):
        scope = _Scope(index, cls, _local_kinds(node, fn), set())
        node.visit(scope)
        for pos, call, marker, stmt, loops in scope.calls:
            arg = activation_input(call)
            if arg is None:
                continue
            root, _ = _strip(arg)
            text = dict(call=_code(call)[:80], arg=_code(arg), name=_code(arg))
            if marker.kind in ("sequential", "leading"):
                why = _leading_layer(scope, fn, call, marker.kind, arg, stmt, pos, loops, hoists)
                if why:
                    refused[id(call)] = why.format(**text)
                continue
            if isinstance(arg, cst.Name):
                x = arg.value
                own = x in scope.stmt_binds.get(id(stmt), set())      # `x = act(x)`: the old tensor has no name
                read = not own and _read_after(scope, pos, loops, x, id(arg))
                aliased = [a for a in sorted(_aliases(scope, fn, x, stmt))
                           if _bound_before(scope, a, pos) and _read_after(scope, pos, loops, a, -1)]
                whole = _whole_value(stmt, call)
                if aliased and marker.kind == "inplace":
                    refused[id(call)] = ALIASED.format(alias=aliased[0], **text)
                elif aliased or (read and (whole is None or marker.kind != "inplace" or not _local(scope, fn, x))):
                    refused[id(call)] = (WHY if marker.kind == "inplace" else UNKNOWN).format(**text)
                elif read:
                    rebinds[id(stmt)] = arg
            elif _assigned_back(stmt, call, arg):
                continue    # `x_fused[i] = self.relu(x_fused[i])`: the place gets the new value on both sides
            elif root is not arg and _held(root) or isinstance(arg, (cst.Attribute, cst.Subscript)):
                base = root
                while isinstance(base, (cst.Attribute, cst.Subscript)):
                    base = base.value
                if isinstance(base, cst.Name) and _read_after(scope, pos, loops, base.value, -1):
                    refused[id(call)] = (WHY if marker.kind == "inplace" else UNKNOWN).format(**text)
    return rebinds, refused, hoists


def _assigned_back(stmt, call: cst.Call, arg: cst.BaseExpression) -> bool:
    """The call is the whole value of an assignment to its own input, an attribute or a part of a tensor
    (HRNet's `x_fused[i] = self.relu(x_fused[i])`): what reads that place afterwards reads the activated tensor in
    torch (written in place, then assigned to itself) and in MindSpore (the new tensor assigned there)."""
    whole = _whole_value(stmt, call)
    targets = getattr(whole, "targets", ())
    return len(targets) == 1 and _code(targets[0].target) == _code(arg)


def _classes(module: cst.Module):
    found = []

    class V(cst.CSTVisitor):
        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            found.append(node)
    module.visit(V())
    return found


def rebind_activated_inputs(module: cst.Module) -> Tuple[cst.Module, Dict[int, str]]:
    """The pre-pass on the torch source: (module, {call id: why} of the calls to refuse), ids of nodes in the
    returned module."""
    rebinds, _, hoists = _analyse(module)
    if rebinds:
        module = module.visit(_Rebind(rebinds))
    if hoists:
        module = module.visit(_Hoist(hoists))
    _, refused, _ = _analyse(module)
    return module, refused
