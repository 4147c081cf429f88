"""`x[i, 0, pos[0]] = 1` with `pos = np.random.choice(n, 2)`: torch indexes a tensor with NumPy integers and
integer arrays as with Python ones; MindSpore's tensor indexing refuses them ("IndexError: Unsupported Python
object type received: <class 'numpy.int64'>", naming no line of the program). An index element that holds a
NumPy value, as far as its function shows (a name every binding of which is a NumPy call, an element of one, a
loop over one, or a NumPy call written in place), is read through `_ms_compat.host_index`: a NumPy number as
Python's (every container takes it as the NumPy one), an array as a tensor where it indexes a tensor (on a value
not known to be one, the helper is given that value: a DataFrame or an h5py dataset keeps its NumPy index).

In a Module's methods too: MindSpore refuses a NumPy index in a compiled graph as well, and compiles the helper."""
from __future__ import annotations

from typing import Iterator, Optional, Set

import libcst as cst

from .fast_visit import children

HELPER = "host_index"


def _root(node: cst.BaseExpression) -> Optional[str]:
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _statements(body) -> Iterator[cst.CSTNode]:
    """Every node of a scope's body, not those of the functions, classes and lambdas it defines."""
    stack = list(body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(children(node))


def _targets(node: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    if isinstance(node, (cst.Tuple, cst.List)):
        for el in node.elements:
            yield from _targets(el.value)
    else:
        yield node


def numpy_names(scope: cst.CSTNode, numpy_aliases: Set[str]) -> Set[str]:
    """The names of a function (its FunctionDef or body) or module every binding of which holds a NumPy value."""
    if isinstance(scope, cst.FunctionDef):
        scope = scope.body
    body = scope.body if isinstance(scope, (cst.Module, cst.IndentedBlock)) else ()
    numpy: Set[str] = set()
    other: Set[str] = set()     # (a parameter rebound only to NumPy values counts: host_index passes others on)
    bindings = []       # (name, value or None: bound some other way)
    for node in _statements(body):
        if isinstance(node, cst.Assign):
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    bindings.append((t.target.value, node.value))
                else:
                    bindings.extend((n.value, None) for n in _targets(t.target) if isinstance(n, cst.Name))
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and isinstance(node.target, cst.Name):
            bindings.append((node.target.value, node.value if isinstance(node, cst.AnnAssign) else None))
        elif isinstance(node, cst.For):
            names = [n for n in _targets(node.target) if isinstance(n, cst.Name)]
            if len(names) == 1 and isinstance(node.target, cst.Name):
                bindings.append((names[0].value, node.iter))   # an element of it: NumPy's as the iterable is
            else:
                bindings.extend((n.value, None) for n in names)
        elif isinstance(node, (cst.NamedExpr,)) and isinstance(node.target, cst.Name):
            bindings.append((node.target.value, node.value))
        elif isinstance(node, (cst.Import, cst.ImportFrom, cst.FunctionDef, cst.ClassDef, cst.With,
                               cst.ExceptHandler, cst.CompFor)):
            for n in _bound_by(node):
                other.add(n)
    # a fixed point: `pos = np.random.choice(...)`, then `p = pos[0]`
    changed = True
    while changed:
        changed = False
        for name in {n for n, _ in bindings} - numpy - other:
            values = [v for n, v in bindings if n == name]
            if all(v is not None and is_numpy_value(v, numpy_aliases, numpy) for v in values):
                numpy.add(name)
                changed = True
    return numpy


def numpy_attributes(cls: cst.ClassDef, numpy_aliases: Set[str]) -> Set[str]:
    """`self.perm` (as that text) where every binding of the attribute in the class's methods is a NumPy value
    (pytorch-flows' Reverse: `self.perm = np.array(np.arange(0, n)[::-1])`, then `inputs[:, self.perm]` in
    forward, which a compiled graph refuses: "the types only support 'Slice', ... but got External")."""
    bindings = []
    for node in _statements(
            [n for st in cls.body.body if isinstance(st, cst.FunctionDef) for n in st.body.body]):
        targets = []
        if isinstance(node, cst.Assign):
            for t in node.targets:
                targets += [(n, node.value if n is t.target else None) for n in _targets(t.target)]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets.append((node.target, node.value if isinstance(node, cst.AnnAssign) else None))
        for target, value in targets:
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and \
                    target.value.value == "self":
                bindings.append((f"self.{target.attr.value}", value))
    numpy: Set[str] = set()
    changed = True
    while changed:
        changed = False
        for name in {n for n, _ in bindings} - numpy:
            if all(v is not None and is_numpy_value(v, numpy_aliases, numpy) for n, v in bindings if n == name):
                numpy.add(name)
                changed = True
    return numpy


def _bound_by(node: cst.CSTNode) -> Iterator[str]:
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        yield node.name.value
    elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
        for a in node.names:
            target = a.asname.name if a.asname is not None else a.name
            head = _root(target) if not isinstance(target, cst.Name) else target.value
            if head:
                yield head
    elif isinstance(node, cst.With):
        for item in node.items:
            if item.asname is not None:
                yield from (n.value for n in _targets(item.asname.name) if isinstance(n, cst.Name))
    elif isinstance(node, cst.ExceptHandler) and node.name is not None and isinstance(node.name.name, cst.Name):
        yield node.name.name.value
    elif isinstance(node, cst.CompFor):
        yield from (n.value for n in _targets(node.target) if isinstance(n, cst.Name))


def is_numpy_value(node: cst.BaseExpression, numpy_aliases: Set[str], numpy: Set[str]) -> bool:
    """A NumPy call (`np.random.choice(...)`, `np.argmax(a)`), a NumPy name, or an element, method result or
    arithmetic of one (`pos[0]`, `pos.max()`, `pos[0] + 1`)."""
    if isinstance(node, cst.Name):
        return node.value in numpy
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):   # `self.perm` (numpy_attributes)
        return f"{node.value.value}.{node.attr.value}" in numpy
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Attribute) and _root(func) in numpy_aliases:
            return True
        return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in numpy \
            and func.attr.value not in ("tolist", "item")
    if isinstance(node, cst.Subscript):
        return is_numpy_value(node.value, numpy_aliases, numpy)
    if isinstance(node, cst.BinaryOperation):     # `pos[0] + 1` (a tensor operand: host_index leaves it)
        return any(is_numpy_value(v, numpy_aliases, numpy) for v in (node.left, node.right))
    if isinstance(node, cst.Comparison):        # `np.array(v) > 0`: a bool array
        return is_numpy_value(node.left, numpy_aliases, numpy)
    if isinstance(node, cst.UnaryOperation):
        return is_numpy_value(node.expression, numpy_aliases, numpy)
    return False


def _plain(node: cst.BaseExpression) -> bool:
    """A name, or attributes and constant subscripts of one: read twice, it is the same value."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        if isinstance(node, cst.Subscript) and not all(
                isinstance(el.slice, cst.Index) and isinstance(el.slice.value, (cst.Integer, cst.SimpleString))
                for el in node.slice):
            return False
        node = node.value
    return isinstance(node, cst.Name)


def wrapped(subscript: cst.Subscript, numpy_aliases: Set[str], numpy: Set[str], compat: str,
            tensor: bool) -> Optional[cst.Subscript]:
    """The subscript with each element holding a NumPy value read through the helper (None when none does).
    `tensor`: the subscripted value is known to be a tensor; else the helper is given it too (an array index
    becomes a tensor only for a tensor: pandas, h5py and the like keep theirs), or, where reading it twice could
    differ (a call), nothing changes."""
    if is_numpy_value(subscript.value, numpy_aliases, numpy) or _root(subscript.value) in numpy_aliases:
        return None     # NumPy indexing NumPy
    if not tensor and not _plain(subscript.value):
        return None
    changed = False
    elements = []
    for el in subscript.slice:
        if isinstance(el.slice, cst.Index) and is_numpy_value(el.slice.value, numpy_aliases, numpy):
            args = [cst.Arg(value=el.slice.value)] + ([] if tensor else [cst.Arg(value=subscript.value)])
            call = cst.Call(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name(HELPER)), args=args)
            el = el.with_changes(slice=el.slice.with_changes(value=call))
            changed = True
        elements.append(el)
    return subscript.with_changes(slice=elements) if changed else None
