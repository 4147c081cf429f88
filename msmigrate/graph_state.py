"""State a Module keeps across calls of forward: an attribute forward stores, read by a later call.

    if self.state is None:            # torch: None on the first call only
        self.state = y.mean()
    return y + self.prev              # torch: the previous call's value

PyNative runs it as written. Compiled (GRAPH mode, ms.jit), MindSpore decides such a read while
compiling, or reads a stale value, and reuses the graph on the next call. Measured on 2.10, CPU:
`self.state is None` stays true on every call, `self.prev` (a plain tensor attribute) keeps its first
value, `self.mode == "b"` keeps the compile-time string; each silently, with no warning. So a read of
such an attribute becomes `_ms_compat.graph_state(self.A, "self.A", "file:line")`: the value in
PyNative; compiling a graph that reaches it raises MigrationError naming the line
(templates/compat_parts/graph_state.py).

Stateful: an attribute stored by forward or a method forward calls (by `self.NAME(...)`), except
- a Parameter or a buffer (nn.Parameter / register_buffer in any method): MindSpore assigns those in the
  graph, and reads see the new value (measured);
- a counter or a flag: every store in those methods an int or bool literal or `+=`/`-=` of an int
  literal, no store elsewhere of anything else: the graph reads it through the interpreter at run time
  (measured: `self.steps += 1; if self.steps > 1` and `self.seen = True; if self.seen` agree with torch);
- a Cell or an object built there (`self.block = Block()`): a construction, not a value.
A cache (`if self.mask is None or self.mask.size(0) != n: self.mask = build(n)`) is state too: measured,
the compiled graph read a mask of another call's size (an error where the shapes clash, silent where not).
Reads that follow the store in the same call have already become locals (graph_attr_stores.py)."""
from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from . import records as R
from .graph_attr_casts import _NOT_GRAPH, _self_attr
from .graph_objects import graph_refusal


def _call_name(node) -> str:
    """`Parameter` for `nn.Parameter(...)`, `Block` for `Block(...)`; '' for anything else."""
    if not isinstance(node, cst.Call):
        return ""
    f = node.func
    return f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""


def _methods(cls: cst.ClassDef) -> Dict[str, cst.FunctionDef]:
    if not isinstance(cls.body, cst.IndentedBlock):
        return {}
    return {st.name.value: st for st in cls.body.body if isinstance(st, cst.FunctionDef)}


class _Walk(cst.CSTVisitor):
    """Within one method: its `self.NAME(...)` calls, its stores of `self.A` (with the stored value), the
    buffers it declares, and its reads of `self.A` (not the target of a store)."""

    def __init__(self) -> None:
        self.calls: Set[str] = set()
        self.stores: Dict[str, List] = {}     # attr -> the stored values (the AugAssign for `+=`)
        self.params: Set[str] = set()
        self.reads: List[cst.Attribute] = []
        self._targets: Set[int] = set()

    def _target(self, node, value) -> None:
        attr = _self_attr(node)
        if attr is not None:
            self._targets.add(id(node))
            self.stores.setdefault(attr, []).append(value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for el in node.elements:
                self._target(el.value, None)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._target(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target, node)

    def visit_Del(self, node: cst.Del) -> None:
        self._target(node.target, None)     # `del self.cache`: a store (of None, transformer.leave_Del), no read

    def visit_Call(self, node: cst.Call) -> None:
        attr = _self_attr(node.func)
        if attr is not None:
            self.calls.add(attr)
        if _call_name(node) == "register_buffer" and node.args and isinstance(node.args[0].value, cst.SimpleString):
            self.params.add(node.args[0].value.evaluated_value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if _self_attr(node) is not None and id(node) not in self._targets:
            self.reads.append(node)


def _walk(fn: cst.FunctionDef) -> _Walk:
    w = _Walk()
    fn.visit(w)
    return w


def _int_literal(node) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer) or isinstance(node, cst.Name) and node.value in ("True", "False")


def _kept_by_graph(value) -> bool:
    """A store MindSpore's graph keeps right across calls: a counter or flag literal, a construction."""
    if isinstance(value, cst.AugAssign):
        return isinstance(value.operator, (cst.AddAssign, cst.SubtractAssign)) and _int_literal(value.value)
    if isinstance(value, cst.Call):
        name = _call_name(value)
        return name[:1].isupper() and name != "Tensor"     # `Block()`, `nn.Parameter(...)`
    return _int_literal(value)


def _reachable(walks: Dict[str, _Walk], entry: str = "forward") -> List[str]:
    """forward (or another entry) and the methods it calls by `self.NAME(...)`, transitively."""
    seen, todo = [], [entry]
    while todo:
        name = todo.pop()
        if name not in seen and name in walks and name not in _NOT_GRAPH:
            seen.append(name)
            todo.extend(sorted(walks[name].calls))
    return seen


def forward_methods(cls: cst.ClassDef, called_from_forwards: Optional[Set[str]] = None) -> Optional[Set[str]]:
    """The methods of a Module class that its forward runs (forward and what it calls by `self.NAME(...)`,
    transitively; a class overriding __call__ without a forward: what __call__ runs); None where the class has no
    forward of its own (a subclass's may call any of them). `called_from_forwards`, for a class without either that
    nothing in the project derives from: the method names other classes' forwards call (ProjectIndex
    .forward_called_methods); those and what they call may run compiled, the others run on the host (an EMA's
    update)."""
    methods = _methods(cls)
    if "forward" not in methods:
        if "__call__" in methods:
            # a Module calling its own way (ema-pytorch's PostHocEMA): __call__ runs, not forward; the other methods
            # (a model synthesized from checkpoints) run on the host
            return set(_reachable({name: _walk(fn) for name, fn in methods.items()}, "__call__"))
        if called_from_forwards is None:
            return None
        walks = {name: _walk(fn) for name, fn in methods.items()}
        return {m for entry in sorted(called_from_forwards & set(methods)) for m in _reachable(walks, entry)}
    return set(_reachable({name: _walk(fn) for name, fn in methods.items()}))


def _declared_params(walks: Dict[str, _Walk]) -> Set[str]:
    params: Set[str] = set()
    for w in walks.values():
        params |= w.params
        params |= {attr for attr, values in w.stores.items() if any(_call_name(v) == "Parameter" for v in values)}
    return params


def state_reads(cls: cst.ClassDef) -> Iterator[Tuple[cst.CSTNode, str]]:
    """(node, attr) for each place of a Module class whose value reads state of an earlier forward call:
    a `self.A` read, and `self.A op= value` (its implicit read of self.A)."""
    methods = _methods(cls)
    if "forward" not in methods:
        return
    walks = {name: _walk(fn) for name, fn in methods.items()}
    reach = _reachable(walks)
    params = _declared_params(walks)
    stored: Dict[str, List] = {}
    for name in reach:
        for attr, values in walks[name].stores.items():
            stored.setdefault(attr, []).extend(values)
    stateful = {a for a, values in stored.items()
                if a not in params and not all(v is not None and _kept_by_graph(v) for v in values)}
    for name in reach:
        for read in walks[name].reads:
            if _self_attr(read) in stateful:
                yield read, _self_attr(read)
        for attr, values in walks[name].stores.items():
            if attr in stateful:
                yield from ((v, attr) for v in values if isinstance(v, cst.AugAssign))


def module_state_reads(module: cst.Module, cell_classes: Set[str]) -> Dict[int, str]:
    """id(node) -> attr for the state reads of the module's top-level Module classes (for wrap)."""
    return {id(node): attr for c in module.body if isinstance(c, cst.ClassDef) and c.name.value in cell_classes
            for node, attr in state_reads(c)}


def _guard(tr, original: cst.CSTNode, value: cst.BaseExpression, attr: str) -> cst.Call:
    tr._record(original, f"self.{attr}", "_ms_compat.graph_state", R.DIFFERENCE,
               "state kept across forward calls: runs in PyNative; compiling a graph that reaches it (GRAPH "
               "mode) raises MigrationError, since MindSpore would decide the read while compiling")
    return graph_refusal(tr, "_ms_compat.graph_state", original, value, cst.SimpleString(repr(f"self.{attr}")))


def wrap_read(tr, original: cst.Attribute, result: cst.BaseExpression) -> cst.BaseExpression:
    """`_ms_compat.graph_state(self.A, "self.A", where)` for a state read; else result."""
    attr = tr._state_reads.get(id(original))
    return _guard(tr, original, result, attr) if attr else result


def wrap_augmented(tr, original: cst.AugAssign, updated: cst.AugAssign) -> cst.AugAssign:
    """`self.A += graph_state(value, ...)`: the statement's implicit read of self.A, guarded the same way."""
    attr = tr._state_reads.get(id(original))
    return updated.with_changes(value=_guard(tr, original, updated.value, attr)) if attr else updated
