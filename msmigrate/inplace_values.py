"""In-place calls whose result is used: `res.append(c.mul_(k))`, `z = x.add_(1)`, `return x.clamp_(0, 1)`.

torch's `x.op_(args)` changes x and returns x itself. Where x is a local name read nowhere else in the
statement, evaluated unconditionally, and the arguments call nothing, the rebinding
`x = <out-of-place form>` (msmigrate/inplace_forms.py) can go right before the statement, the call
becoming `x`: the statement then reads the changed tensor, as in torch, and x is bound to it after. The arguments
may call where the statement evaluates nothing but local names and literals before the in-place call (those calls
holding it run after it): `indices.append((b, a, gj.clamp_(0, n.long() - 1)))` (_inert_before).
As with the whole-statement form, other names for the same tensor do not see the change. The arguments
may call (`y = x.lerp_(torch.tensor(...), 0.5)`) where the in-place call is the statement's whole value:
nothing of the statement runs before it. The function forms `y = torch.relu_(x)` / `F.relu_(input=x)` are
candidates where they are an assignment's whole value (the rule in mappings/torch_inplace_functions.py makes
it `y = x = <out-of-place form>`). Anywhere else (a second read of x in the statement,
`a if c else x.add_(1)`, `z = 2 * x.add_(f())`) the site stays a TODO.
"""
from __future__ import annotations

from typing import Dict, List, Set

import libcst as cst

from .visitor_bases import ScopeLocalVisitor

# statements whose value is evaluated once, after nothing else of the statement that could read x
_STATEMENTS = (cst.Expr, cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return)
# parts of an expression evaluated conditionally or later
_CONDITIONAL = (cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
                cst.GeneratorExp)
_EFFECTS = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr)


def _is_inplace_call(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and isinstance(node.func.value, cst.Name) and node.func.attr.value.endswith("_")
            and not node.func.attr.value.endswith("__"))


# the parameter names of the tensor a torch in-place function changes (torch.relu_(input=x))
_RECEIVER_KEYWORDS = ("input", "self", "x")


def _is_function_form(node, torch_function) -> bool:
    """`torch.relu_(x)` / `nn.functional.relu_(x)`: an in-place call whose function torch_function (the
    transformer's test) says is torch's."""
    return (torch_function is not None and isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value.endswith("_") and not node.func.attr.value.endswith("__")
            and torch_function(node))


def function_form_receiver(call: cst.Call):
    """The tensor name x of a function-form in-place call `m.op_(x, ...)` / `a.b.op_(input=x)`: the first
    positional argument, else the receiver keyword; None where it is no plain name."""
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value.endswith("_")
            and not call.func.attr.value.endswith("__")) or any(a.star for a in call.args):
        return None
    first = call.args[0] if call.args else None
    if first is not None and first.keyword is None:
        return first.value.value if isinstance(first.value, cst.Name) else None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in _RECEIVER_KEYWORDS:
            return arg.value.value if isinstance(arg.value, cst.Name) else None
    return None


class _Effects(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, _EFFECTS):
            self.found = True
        return not self.found


class _Scan(cst.CSTVisitor):
    """Reads of each name and the unconditional in-place calls of one statement."""

    def __init__(self, wanted=None) -> None:
        self.reads: Dict[str, int] = {}
        self.calls: List[cst.Call] = []
        self.calling: Set[int] = set()     # ids of those of them whose arguments call something
        self._wanted = wanted or _is_inplace_call
        self._conditional = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, _CONDITIONAL):
            self._conditional += 1
        if isinstance(node, cst.Name):
            self.reads[node.value] = self.reads.get(node.value, 0) + 1
        elif isinstance(node, cst.Attribute):      # `a.b`: b is no name of this scope
            node.value.visit(self)
            return False
        elif isinstance(node, cst.Arg):            # `f(k=v)`: k neither
            node.value.visit(self)
            return False
        elif self._wanted(node) and not self._conditional:
            effects = _Effects()
            for arg in node.args:
                arg.value.visit(effects)
            if not any(arg.star for arg in node.args):
                self.calls.append(node)
                if effects.found:
                    self.calling.add(id(node))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, _CONDITIONAL):
            self._conditional -= 1


# what a statement may evaluate before an in-place call whose arguments call something, for its rebinding to go
# before the statement: values no call can change (a called function cannot rebind its caller's local names)
_INERT = (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis,
          cst.Tuple, cst.List, cst.Set, cst.Element, cst.Comma, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket,
          cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.BaseParenthesizableWhitespace)


def _callee_chain(node) -> bool:
    """`indices.append`, `f`: a name or attributes of a name (the callee of a call holding the in-place call)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def _inert_before(stmt, call: cst.Call, hoisted: Set[int]) -> bool:
    """Whether everything the statement evaluates before `call` is inert (local names, literals, displays of them,
    in-place calls of `hoisted` that go before the statement too, in their order), the calls holding it being
    called after it (their callee a name chain): `indices.append((b, a, gj.clamp_(0, gain[3].long() - 1), ...))`
    (PyTorch-YOLOv3's build_targets). The rebinding `gj = <out-of-place form>` before the statement then runs the
    arguments' calls in torch's order relative to everything that could see them."""
    value = getattr(stmt, "value", None) if isinstance(stmt, (cst.Expr, cst.Assign, cst.Return)) else None
    if value is None:
        return False
    state = {"ok": True}

    def holds(node) -> bool:
        found = []

        class _Find(cst.CSTVisitor):
            def on_visit(self, n) -> bool:
                if n is call:
                    found.append(n)
                return not found
        node.visit(_Find())
        return bool(found)

    def inert(node) -> bool:
        if id(node) in hoisted:
            return True
        if not isinstance(node, _INERT):
            return False
        return all(inert(c) for c in node.children)

    def walk(node) -> bool:       # True once `call` is reached
        if node is call:
            return True
        if not holds(node):
            if not inert(node):
                state["ok"] = False
            return False
        if isinstance(node, cst.Call):
            if not _callee_chain(node.func):
                state["ok"] = False
            for arg in node.args:
                if walk(arg.value):
                    return True
            return False
        for child in node.children:
            if walk(child):
                return True
        return False

    return walk(value) and state["ok"]


def _line_calls(line: cst.SimpleStatementLine, local_names, torch_function=None) -> List[cst.Call]:
    """The in-place calls of one statement line whose receiver is a name of `local_names` (the
    function's parameters and assigned names, so that the rebinding does not make a global local)
    read once in the statement. The whole-statement form `x.add_(1)` is not among them (the
    transformer rewrites it as `x = ...` itself)."""
    if len(line.body) != 1 or not isinstance(line.body[0], _STATEMENTS):
        return []
    stmt = line.body[0]
    scan = _Scan(lambda n: _is_inplace_call(n) or _is_function_form(n, torch_function))
    stmt.visit(scan)
    whole = getattr(stmt, "value", None)    # the statement's whole value: nothing of it runs before
    calls = []
    accepted: Set[int] = set()
    for call in scan.calls:
        if isinstance(stmt, cst.Expr) and stmt.value is call:
            continue
        if id(call) in scan.calling and call is not whole and not _inert_before(stmt, call, accepted):
            continue
        name = call.func.value.value if isinstance(call.func.value, cst.Name) else None
        if name not in local_names:
            # `y = torch.relu_(x)`: a torch function's in-place form, an assignment's whole value
            function_form = _is_function_form(call, torch_function) and isinstance(stmt, cst.Assign) and call is whole
            name = function_form_receiver(call) if function_form else None
        if name is not None and scan.reads.get(name) == 1 and name in local_names:
            calls.append(call)
            accepted.add(id(call))
    return calls


def _targets(stmt) -> Set[str]:
    if isinstance(stmt, cst.Assign):
        nodes = [t.target for t in stmt.targets]
    elif isinstance(stmt, (cst.AnnAssign, cst.AugAssign)):
        nodes = [stmt.target]
    else:
        return set()
    names = set()
    for node in nodes:
        if isinstance(node, cst.Name):
            names.add(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            names |= {e.value.value for e in node.elements if isinstance(e.value, cst.Name)}
    return names


class _Function(ScopeLocalVisitor):
    """One function body (nested functions and classes left to their own pass)."""

    def __init__(self, local_names, torch_function=None) -> None:
        self.local_names = local_names
        self.torch_function = torch_function
        self.inplace_receivers: Dict[str, int] = {}
        self.candidates = []      # (call, statement, names assigned earlier in its block, in a loop)
        self._loops = 0
        self._assigned: List[Set[str]] = [set()]

    def visit_Call(self, node: cst.Call) -> None:
        if _is_inplace_call(node):
            name = node.func.value.value
            self.inplace_receivers[name] = self.inplace_receivers.get(name, 0) + 1
        if _is_function_form(node, self.torch_function):     # `torch.relu_(x)`: x is changed
            name = function_form_receiver(node)
            if name is not None:
                self.inplace_receivers[name] = self.inplace_receivers.get(name, 0) + 1

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.For, cst.While)):
            self._loops += 1
        if isinstance(node, cst.IndentedBlock):
            self._assigned.append(set())
        if isinstance(node, cst.SimpleStatementLine):
            for call in _line_calls(node, self.local_names, self.torch_function):
                self.candidates.append((call, node.body[0], set(self._assigned[-1]), self._loops > 0))
            self._assigned[-1] |= _targets(node.body[0]) if len(node.body) == 1 else set()
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, (cst.For, cst.While)):
            self._loops -= 1
        if isinstance(original_node, cst.IndentedBlock):
            self._assigned.pop()
        super().on_leave(original_node)


def _first_evaluated(stmt, call: cst.Call) -> bool:
    """Whether `call` is what the statement's value evaluates first: reached from the value through left operands,
    subscripted values and method receivers (`(v.add_(e).sqrt() / c).add_(e)`: v.add_(e)), so that nothing of the
    statement runs before it."""
    node = getattr(stmt, "value", None) if isinstance(stmt, (cst.Expr, cst.Assign, cst.Return)) else None
    while node is not None:
        if node is call:
            return True
        if isinstance(node, cst.BinaryOperation):
            node = node.left
        elif isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Attribute):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            node = node.func.value
        else:
            return False
    return False


def hoistable_calls(function, local_names, torch_function=None, shared=frozenset()) -> Set[int]:
    """ids of the in-place calls of this function (or of a module's top level) whose rebinding can go before their statement
    without another name missing a change torch would show through it: the receiver is changed
    in place nowhere else in the function, no name the statement assigns is (`z = y.add_(1)` then
    `y.mul_(2)`: torch's z sees the second change), and inside a loop the receiver is a fresh tensor
    of this pass, assigned earlier in the same block (else torch's `res.append(x.mul_(2))` appends
    the same tensor each pass). A receiver of `shared` (a name whose tensor other holders share, outside graph
    code: the transformer writes the new value into that tensor, inplace_holders.py) needs neither: every holder
    sees the change, as in torch; its call must be what the statement evaluates first (other parts of it could
    read the tensor through another holder before torch's change)."""
    scan = _Function(local_names, torch_function)
    (function.body if isinstance(function, cst.FunctionDef) else function).visit(scan)
    ids = set()
    for call, stmt, assigned_before, in_loop in scan.candidates:
        name = call.func.value.value if isinstance(call.func.value, cst.Name) else None
        if name not in local_names:
            name = function_form_receiver(call)
        if any(scan.inplace_receivers.get(t) for t in _targets(stmt)):
            continue
        if name in shared and call.func.value.value == name and _first_evaluated(stmt, call):
            ids.add(id(call))     # written into the tensor every holder shares
            continue
        if scan.inplace_receivers.get(name) != 1:
            continue
        if in_loop and name not in assigned_before:
            continue
        ids.add(id(call))
    return ids


def with_rebindings(result, rebindings) -> List[cst.BaseStatement]:
    """`x = <value>` lines for (name, value) pairs, in order, before the converted statement (a line,
    lines, or nothing where the conversion removed it); the statement's leading comments go first."""
    if isinstance(result, cst.FlattenSentinel):
        rest = list(result.nodes)
    elif isinstance(result, cst.RemovalSentinel):
        rest = []
    else:
        rest = [result]
    lead = rest[0].leading_lines if rest and hasattr(rest[0], "leading_lines") else ()
    out = []
    for i, (name, value) in enumerate(rebindings):
        assign = cst.Assign(targets=[cst.AssignTarget(target=cst.Name(name))], value=value)
        out.append(cst.SimpleStatementLine(body=[assign], leading_lines=lead if i == 0 else ()))
    if rest and lead:
        rest[0] = rest[0].with_changes(leading_lines=())
    return out + rest
