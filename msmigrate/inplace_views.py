"""In-place ops through a view: `c = a.view(6); c.add_(2)`, `s = a[1:]; s.mul_(3)`, `a.narrow(0, 1, 1).zero_()`.

In torch a view shares its base's memory, so a change through one name shows through the other. In
MindSpore 2.10 `view`, `narrow`, `transpose`, slicing... return copies (and the in-place op becomes a
rebinding of the name, inplace_forms.py): the base keeps its values, silently. So:
- an in-place op whose receiver is a view call of a named tensor (`a.narrow(0, 1, 1).zero_()`,
  `self.buf.view(-1).fill_(0)`) is refused (a TODO that raises when reached);
- a name bound to a view of a local name (or a plain alias `c = a`; or unpacked from a view or a split of one,
  `gi, gj = gij.T`, `a, b = x.unbind(1)`) and then changed in place, where the
  other name is read after the change (also: a later pass of the loop, or the same statement outside the call),
  or is a parameter of the
  function (the caller's tensor) or an attribute (`self.buf`), is refused at the in-place call. The same
  with the roles swapped (`a` changed in place, then the view read), and for a write by statement: an item
  store (`rows[0] = v`, `rows[0] += v`) or an augmented assignment (`tail *= 2`; on a plain alias that one is
  aug_aliases.py's), refused where the name holds a tensor (a list's slice is a copy in Python too).
Where neither name is read after the change nothing differs, and the site converts as before."""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from .visitor_bases import StatementOrder

# torch methods whose result may share the receiver's memory
VIEW_METHODS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "t", "transpose", "swapaxes", "swapdims",
    "permute", "squeeze", "unsqueeze", "narrow", "select", "expand", "expand_as", "diagonal", "movedim",
    "moveaxis", "unfold", "as_strided", "detach", "contiguous", "view_as_real", "view_as_complex", "adjoint"})
VIEW_ATTRS = frozenset({"T", "mT", "H", "mH", "real", "imag"})
# torch methods whose results (a tuple) are views of the receiver: `a, b = x.unbind(1)`
SPLIT_METHODS = frozenset({"unbind", "chunk", "split", "tensor_split", "hsplit", "vsplit", "dsplit"})
# in-place names that change no value
_NO_CHANGE = frozenset({"requires_grad_", "share_memory_", "detach_", "retain_grad_", "pin_memory_"})

WHY_CHAIN = ("in place on a view: MindSpore's view/narrow/transpose/... return a copy, so the tensor it was "
             "taken from would not change; assign the changed part instead (x[...] = value) or rebind the name")


def _why_named(view: str, base: str) -> str:
    return (f"in place on `{view}`, which shares memory with `{base}` in torch (a view or an alias): MindSpore's "
            f"views are copies, so `{base}` would not see the change; compute the new value and assign it to "
            f"both names (or x[...] = value)")


def inplace_name(call: cst.Call) -> Optional[str]:
    func = call.func
    if isinstance(func, cst.Attribute):
        name = func.attr.value
        if name.endswith("_") and not name.endswith("__") and name not in _NO_CHANGE:
            return name
    return None


def _basic_index(sub: cst.Subscript) -> bool:
    for el in sub.slice:
        s = el.slice
        if isinstance(s, cst.Slice):
            continue
        v = s.value
        if isinstance(v, cst.UnaryOperation) and isinstance(v.expression, cst.Integer):
            continue
        if isinstance(v, (cst.Integer, cst.Ellipsis, cst.Name)):
            continue      # a Name is an int in the common case; a tensor index would copy (refusal then is cautious)
        return False
    return True


def _strip(node: cst.BaseExpression) -> Tuple[cst.BaseExpression, bool]:
    """(root, whether a view method call was stripped) of a chain of views."""
    called = False
    while True:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in VIEW_METHODS \
                and not (isinstance(node.func.value, cst.Name) and node.func.value.value == "self"):
            # (`self.squeeze(x)` calls a submodule named like a view method: a new tensor)
            node, called = node.func.value, True
        elif isinstance(node, cst.Attribute) and node.attr.value in VIEW_ATTRS:
            node = node.value
        elif isinstance(node, cst.Subscript) and _basic_index(node):
            node = node.value
        else:
            return node, called


def _held(root) -> bool:
    """A tensor someone else can still read: a name or an attribute chain on a name."""
    while isinstance(root, cst.Attribute):
        root = root.value
    return isinstance(root, cst.Name)


def chained_view_receiver(call: cst.Call) -> bool:
    """`a.narrow(0, 1, 1).zero_()`: an in-place method on a view method call of a held tensor."""
    if inplace_name(call) is None:
        return False
    root, called = _strip(call.func.value)
    return called and _held(root)


def _view_of(value) -> Optional[cst.BaseExpression]:
    """The base of `c = <value>` when value is a view of it (or the plain alias `a`)."""
    if isinstance(value, cst.Name):
        return value
    root, _ = _strip(value)
    if root is value or not _held(root):
        return None
    return root


def repack_form(value) -> Optional[Tuple[str, str]]:
    """(base name, how) of `a, b = <value>` whose items can be put back into their base after one changed in place:
    `base.T` ('T'), `base.unbind(d)` ('unbind:d'); None for any other unpacking."""
    if isinstance(value, cst.Attribute) and value.attr.value == "T" and isinstance(value.value, cst.Name):
        return value.value.value, "T"
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "unbind" \
            and isinstance(value.func.value, cst.Name) and len(value.args) <= 1:
        arg = value.args[0] if value.args else None
        if arg is None:
            return value.func.value.value, "unbind:0"
        v = arg.value
        neg = isinstance(v, cst.UnaryOperation) and isinstance(v.operator, cst.Minus) \
            and isinstance(v.expression, cst.Integer)
        if (arg.keyword is None or arg.keyword.value == "dim") and (isinstance(v, cst.Integer) or neg):
            return value.func.value.value, "unbind:" + ("-" + v.expression.value if neg else v.value)
    return None


def _unpacked_view_of(value) -> Optional[cst.BaseExpression]:
    """The base of `a, b = <value>` when each unpacked item shares memory with it in torch: the rows of a view of a
    tensor (`gi, gj = gij.T`: PyTorch-YOLOv3's build_targets), the pieces of a split (`a, b = x.unbind(1)`,
    `x.chunk(2)`). Not `a, b = x` of a plain name: x may be a tuple or list of tensors (gemma's `k_cache, v_cache =
    kv_cache`), whose items are the very tensors, which inplace_holders.py's writes change for every holder."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in SPLIT_METHODS:
        value = value.func.value
    elif isinstance(value, cst.Name):
        return None
    return _view_of(value)


class _Events(StatementOrder):
    def __init__(self) -> None:
        super().__init__()
        self.views: List[Tuple[int, str, cst.BaseExpression, bool]] = []   # pos, view name, base, a plain alias?
        self.binds: List[Tuple[int, str]] = []
        self.mutations: List[Tuple[int, str, cst.CSTNode, Tuple[int, ...]]] = []   # a call or a statement
        self.unpacked: Dict[Tuple[int, str], Tuple[Tuple[str, ...], str]] = {}   # (pos, name) -> all names, how
        self.in_line: Set[int] = set()       # ids of the in-place calls inside a simple statement line
        self._lines = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.SimpleStatementLine):
            self._lines += 1
        elif isinstance(node, cst.Call) and self._lines and not isinstance(node, cst.Lambda):
            self.in_line.add(id(node))
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, cst.SimpleStatementLine):
            self._lines -= 1
        super().on_leave(original_node)

    def event(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.SimpleStatementLine):
            for st in node.body:
                if isinstance(st, cst.Assign):
                    for t in st.targets:
                        if isinstance(t.target, cst.Name):
                            self.binds.append((self.pos, t.target.value))
                    if len(st.targets) == 1 and isinstance(st.targets[0].target, cst.Name):
                        base = _view_of(st.value)
                        if base is not None:
                            self.views.append((self.pos, st.targets[0].target.value, base,
                                               isinstance(st.value, cst.Name)))
                    elif len(st.targets) == 1 and isinstance(st.targets[0].target, (cst.Tuple, cst.List)):
                        base = _unpacked_view_of(st.value)     # `gi, gj = gij.T`: each name a view of gij
                        els = st.targets[0].target.elements
                        names = tuple(el.value.value for el in els if isinstance(el.value, cst.Name))
                        form = repack_form(st.value) if len(names) == len(els) else None
                        for name in names if base is not None else ():
                            self.views.append((self.pos, name, base, False))
                            if form is not None:
                                self.unpacked[(self.pos, name)] = (names, form[1])
                    for t in st.targets:
                        if isinstance(t.target, (cst.Tuple, cst.List)):
                            self.binds.extend((self.pos, el.value.value) for el in t.target.elements
                                              if isinstance(el.value, cst.Name))
                # a write through the name: `rows[0] = v`, `rows[0] += v`, `tail *= 2` (in place on a tensor;
                # the transformer refuses one only where the name holds a tensor)
                targets = [t.target for t in st.targets] if isinstance(st, cst.Assign) else \
                    [st.target] if isinstance(st, cst.AugAssign) else []
                for t in targets:
                    root = t
                    while isinstance(root, cst.Subscript):
                        root = root.value
                    if isinstance(root, cst.Name) and (root is not t or isinstance(st, cst.AugAssign)):
                        self.mutations.append((self.pos, root.value, st, tuple(self.loops)))
        if isinstance(node, cst.Call) and inplace_name(node) and isinstance(node.func.value, cst.Name):
            self.mutations.append((self.pos, node.func.value.value, node, tuple(self.loops)))


def _repack(ev, vpos, view, base_name, mpos, call) -> Optional[str]:
    """`gij = <base as it is after the change>` for an in-place call on `view`, unpacked with others from the local
    `base_name` (`gi, gj = gij.T; ...gj.clamp_(0, n)...; gxy - gij`: PyTorch-YOLOv3's build_targets): torch's change
    shows through gij; the converted names hold copies, so the base is made again from them after the statement
    (_ms_compat.repacked). None where that would not be torch's value: a statement write, a call outside a simple
    statement line, a name of the unpacking bound again in between or by the statement, the base read by the
    statement itself."""
    found = ev.unpacked.get((vpos, view))
    if found is None or not isinstance(call, cst.Call) or id(call) not in ev.in_line:
        return None
    names, how = found
    if any(vpos < p <= mpos and n in names + (base_name,) for p, n in ev.binds):
        return None
    if any(p == mpos and n == base_name for p, n, _, _ in ev.reads):
        return None
    return f"{base_name} = _ms_compat.repacked(({', '.join(names)},), {how!r})"


def conflicting_calls(body: cst.CSTNode, params: Set[str],
                      names: Optional[Dict[int, Tuple[str, str]]] = None,
                      repacks: Optional[Dict[int, str]] = None) -> Dict[int, str]:
    """ids of the in-place calls and writing statements (`rows[0] = v`, `tail *= 2`) of one scope (a function body or a module's top level) that change a
    tensor through one name while another name that shares its memory in torch is read after: why (and in
    `names`, the view's and the base's names of each)."""
    ev = _Events()
    body.visit(ev)
    out: Dict[int, str] = {}
    for vpos, view, base, alias in ev.views:
        base_name = base.value if isinstance(base, cst.Name) else None
        if base_name == view:
            continue            # `x = x.view(...)`: the old tensor has no name left
        for mpos, name, call, mloops in ev.mutations:
            if mpos <= vpos or name not in (view, base_name):
                continue
            if isinstance(call, cst.AugAssign) and isinstance(call.target, cst.Name) and alias:
                continue        # `d_loss = d_real; d_loss += x`: the alias follows (aug_aliases.py)
            if any(vpos < p < mpos and n in (view, base_name) for p, n in ev.binds):
                continue        # one of them was bound to another tensor in between
            other = base_name if name == view else view
            if names is not None:
                names[id(call)] = (view, base_name or _code(base))
            if other is None:   # the base is an attribute (`self.buf`): state others read
                out[id(call)] = _why_named(view, _code(base))
                continue
            if other in params:
                out[id(call)] = _why_named(view, other)
                continue
            inside = _name_ids(call) if isinstance(call, cst.Call) else None
            # a read in the same statement outside the call may come after torch's change:
            # `out = (b.clamp_(0, 1), base.sum())`
            if any(n == other and (p > mpos or set(loops) & set(mloops)
                                   or (p == mpos and inside is not None and rid not in inside))
                   for p, n, loops, rid in ev.reads):
                line = _repack(ev, vpos, view, base_name, mpos, call) if other == base_name else None
                if line is not None and repacks is not None and id(call) not in out:
                    repacks[id(call)] = line      # the base made again after the statement: torch's values
                    continue
                out[id(call)] = _why_named(view, base_name or _code(base))
    return out


def _name_ids(node: cst.CSTNode) -> Set[int]:
    """ids of the Name nodes in node (its receiver and arguments: read before the call changes anything)."""
    ids: Set[int] = set()

    class _Names(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            ids.add(id(n))

    node.visit(_Names())
    return ids


def _code(node) -> str:
    return cst.Module(body=[]).code_for_node(node)
