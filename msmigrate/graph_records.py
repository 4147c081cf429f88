"""Project record classes built inside a compiled forward, as dicts there (issue 12; the measurements are in
graph_objects.py's docstring).

A record class is a dataclass, or a plain class whose `__init__` only stores its arguments, with `object` as
its only base. Built in graph code, `Cls(a, b)` becomes `_ms_compat.graph_record_dict(Cls, {"f": a, "g": b,
...defaults})`: the object in PyNative (`Cls(**fields)`, the same call), the dict in a compiled graph, where a
dict keeps the gradients the object loses. Its reads in graph code, `E.f` for a field name f, become
`_ms_compat.graph_field(E, "f")` (`E["f"]` where E is a dict in a compiled graph, `E.f` otherwise), and calls
of its methods `E.m(a)` become `_ms_compat.graph_record_method(E, "m", Cls.m, a)` (the class's function on
the dict, its own `self.f` reads rewritten the same way).

A dict built in a compiled graph is a value: `d["f"] = v` rebinds d alone, and no alias (a list holding it, the
caller of a function or sub-Cell that writes it, a loop variable) sees the write (measured on 2.10). So a write
`n.f = v` in graph code becomes `n = _ms_compat.graph_field_set(n, "f", v)` only where no other holder can
share n's object (field_writes, judged on one function's body as graph_aliases.py judges a list's changes:
n bound here to a call's result, no name, list, tuple or append holding it since; a plain alias `h = n` only
tested against None or read for fields this function never writes on n is no holder); any other write
raises MigrationError at its line when compiled on a dict. Which branch runs is followed for one form only
(branch_cover.py): an if/elif chain that rebinds n on every branch, or on the branches of the values a name
k is tested for (`if kind == 'a': x, n = ...` / `elif kind == 'c': ...`) where the write's `if`s restrict k
to those values (`if kind in ('a', 'c'): n.f = v`). Not followed (as graph_aliases.py): a holder made inside a
call (a function or sub-Cell that returns its argument, or keeps it), and any other branching (a holder made
in one branch makes every later write refused). `isinstance(x, Cls)` becomes graph_isinstance (the dict's
keys); copy.copy/deepcopy in graph code, graph_copy (the dict itself).

A class qualifies only where nothing else in the project can tell the dict from the object
(ProjectIndex.graph_record): no field is stored other than by `n.f = v` (no `a.b.f =`, `n.f +=`, del, setattr,
`n.f.append(x)`, `n.f[i] = v`, `n.f.add_(y)`), nor named in getattr/hasattr; the class is named only where it
is built, imported, in annotations or alone in isinstance (no base of another class, no tuple of classes); a
field named like a dict attribute (`values`) only where no getattr/hasattr takes a computed name, and its reads
outside graph code go through graph_field too (a dict a graph returned refuses `.values` there); its defaults are
literals; its methods other than `__init__`/`__repr__`/`__str__`/`__copy__`/`__deepcopy__` are undecorated and
store or change nothing on self; no dataclasses function (but in `__copy__`), vars() or `__dict__` in the
project, and only classes built where graph code may run (a Module's methods, the module-level functions
they call, by name: ProjectIndex.graph_reached_names; a Trainer(model, optimizer) built at the top level stays
an object, its own methods untouched). Every other record built in graph code keeps graph_objects.py's refusal (MigrationError at its line
when compiled). A record a compiled Cell (a model called in GRAPH mode, a compiled train step) returns is
the object again: compiling notes the record classes its graph builds (graph_record_dict) and the Cell's return is
rebuilt from the dicts of their fields (compat graph_objects.py _records_rebuilt; two such classes with the same fields raise
MigrationError there). A train step's forward_fn, moved from a loop's body, reads fields through graph_field too
(step_record_reads.py)."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Set, Tuple

import libcst as cst

from . import branch_cover as BC
from . import graph_aliases as GA
from .visitor_bases import _bound_by, single_targets

DICT_ATTRS = frozenset(dir(dict))
_ALLOWED_DUNDERS = frozenset({"__init__", "__repr__", "__str__"})
# copy.copy/deepcopy of a graph dict give the dict itself (graph_copy): these never run on one
_COPY_DUNDERS = frozenset({"__copy__", "__deepcopy__"})
_DATACLASS = ("dataclasses.dataclass",)


@dataclass(frozen=True)
class RecordClass:
    fields: Tuple[str, ...]
    defaults: Tuple[Tuple[str, str], ...]     # field -> default as source text (a literal)
    methods: Tuple[str, ...]                  # plain methods the graph may call (no dunder)


@dataclass
class RecordUses:
    """What a module does that could tell a record's dict from the object."""
    stored: Set[str]          # attribute names stored, deleted or changed in place on anything but `self` (but
    #                           `name.f = v`, judged where it is: field_writes)
    named: Set[str]           # names in getattr/setattr/hasattr/delattr
    dynamic_getattr: bool     # getattr/hasattr with a computed name (could read `values` of a dict)
    isinstance_refs: Set[str]     # names isinstance() tests against (graph_isinstance)
    class_refs: Set[str]      # names read other than as a call's function, in annotations or imports
    introspects: bool         # vars(), x.__dict__, dataclasses.asdict/replace/fields...
    # what graph code may call: the names called in the methods (but __init__) of classes defining forward, and
    # per module-level function the names it calls (ProjectIndex.graph_reached_names follows them by name)
    forward_calls: Set[str] = field(default_factory=set)
    function_calls: Dict[str, Set[str]] = field(default_factory=dict)


def _literal(node: ast.expr) -> Optional[str]:
    if isinstance(node, ast.Constant) and not isinstance(node.value, bytes):
        return repr(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, (int, float)):
        return repr(-node.operand.value)
    return None


def _field_default(node: ast.expr) -> Optional[str]:
    """A dataclass field's default as source text: a literal, `field(default=literal)`,
    `field(default_factory=list|dict)`; None otherwise."""
    lit = _literal(node)
    if lit is not None:
        return lit
    if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)) and not node.args \
            and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == "field" \
            and len(node.keywords) == 1:
        kw = node.keywords[0]
        if kw.arg == "default":
            return _literal(kw.value)
        if kw.arg == "default_factory" and isinstance(kw.value, ast.Name) and kw.value.id in ("list", "dict"):
            return "[]" if kw.value.id == "list" else "{}"
    return None


# what a module's imports make of a name or attribute: `dataclass` -> "dataclasses.dataclass" (the project
# index's resolution, passed in: this module is imported by it)
Resolve = Callable[[ast.expr], Optional[str]]


def _is_dataclass_decorator(dec: ast.expr, resolve: Resolve) -> bool:
    call = dec if isinstance(dec, ast.Call) else None
    if resolve(call.func if call else dec) not in _DATACLASS:
        return False
    return call is None or (not call.args and all(
        k.arg in ("repr", "eq") for k in call.keywords))


# calls that change the list/dict/tensor they are called on: on a field's value in a compiled graph they
# change a copy, the record's dict keeps the old value (a dict or list built in the graph is a value, 2.10)
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
                       "popitem", "sort", "reverse"})


def _mutated_attribute(n: ast.AST) -> Optional[ast.Attribute]:
    """`E.f` in `E.f.append(x)`, `E.f.add_(y)`, `E.f[i] = v`, `del E.f[i]`: the attribute whose value changes."""
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Attribute) \
            and (n.func.attr in _MUTATORS or (n.func.attr.endswith("_") and not n.func.attr.startswith("_"))):
        return n.func.value
    if isinstance(n, ast.Subscript) and not isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Attribute):
        return n.value
    return None


def _method_ok(fn: ast.FunctionDef) -> bool:
    """Undecorated, stores nothing on self and passes self nowhere (reads `self.f` and calls only)."""
    if fn.decorator_list or not fn.args.args or fn.args.args[0].arg != "self":
        return False
    if any(_mutated_attribute(n) is not None for n in ast.walk(fn)):
        return False
    attr_values = {id(n.value) for n in ast.walk(fn) if isinstance(n, ast.Attribute)}
    for n in ast.walk(fn):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self" \
                and (not isinstance(n.ctx, ast.Load) or n.attr.startswith("__")):   # self.__dict__: no dict's
            return False
        if isinstance(n, ast.Name) and n.id == "self" and id(n) not in attr_values:
            return False
    return True


def _plain_init_fields(fn: ast.FunctionDef) -> Optional[Tuple[Tuple[str, ...], Dict[str, str]]]:
    """`def __init__(self, a, b=None): self.a = a; self.b = b`: the fields in order and literal defaults."""
    a = fn.args
    if fn.decorator_list or a.vararg or a.kwarg or a.posonlyargs or a.kwonlyargs or not a.args \
            or a.args[0].arg != "self":
        return None
    params = [p.arg for p in a.args[1:]]
    defaults: Dict[str, str] = {}
    for p, d in zip(params[len(params) - len(a.defaults):], a.defaults):
        lit = _literal(d)
        if lit is None:
            return None
        defaults[p] = lit
    stored = []
    for st in fn.body:
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
            continue    # docstring
        target = st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 else \
            st.target if isinstance(st, ast.AnnAssign) and st.value is not None else None
        value = st.value if target is not None else None
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                and target.value.id == "self" and isinstance(value, ast.Name) and value.id == target.attr):
            return None
        stored.append(target.attr)
    if sorted(stored) != sorted(params) or len(set(stored)) != len(stored):
        return None
    return tuple(params), defaults


def scan_record_classes(tree: ast.Module, resolve: Resolve) -> Dict[str, RecordClass]:
    """The module's top-level classes that could be records (the project-wide conditions: ProjectIndex)."""
    found: Dict[str, RecordClass] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or node.keywords or any(
                not (isinstance(b, ast.Name) and b.id == "object") for b in node.bases):
            continue
        is_dc = len(node.decorator_list) == 1 and _is_dataclass_decorator(node.decorator_list[0], resolve)
        if node.decorator_list and not is_dc:
            continue
        fields, defaults, methods, ok = [], {}, [], True
        for st in node.body:
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
                continue
            if isinstance(st, ast.Pass):
                continue
            if is_dc and isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.simple \
                    and "ClassVar" not in ast.dump(st.annotation) and "InitVar" not in ast.dump(st.annotation):
                fields.append(st.target.id)
                if st.value is not None:
                    default = _field_default(st.value)
                    if default is None:
                        ok = False
                    defaults[st.target.id] = default
                elif defaults:
                    ok = False
                continue
            if isinstance(st, ast.FunctionDef):
                if st.name == "__init__" and not is_dc:
                    init = _plain_init_fields(st)
                    if init is None:
                        ok = False
                    else:
                        fields, defaults = list(init[0]), init[1]
                    continue
                if st.name in _ALLOWED_DUNDERS | _COPY_DUNDERS and st.name != "__init__":
                    continue
                if st.name.startswith("__") or not _method_ok(st):
                    ok = False
                methods.append(st.name)
                continue
            ok = False
        if ok and fields and not (set(fields) & set(methods)):
            found[node.name] = RecordClass(tuple(fields), tuple(sorted(defaults.items())), tuple(methods))
    return found


def _introspection(node: ast.expr, resolve: Resolve) -> bool:
    """vars, or a function of dataclasses (through the module's imports)."""
    if isinstance(node, ast.Name) and node.id == "vars":
        return True
    full = resolve(node)
    return bool(full) and full.startswith("dataclasses.") and full != "dataclasses.dataclass" \
        and full != "dataclasses.field"


def scan_uses(tree: ast.Module, resolve: Resolve) -> RecordUses:
    uses = RecordUses(stored=set(), named=set(), dynamic_getattr=False, isinstance_refs=set(), class_refs=set(),
                      introspects=False)
    tested: Set[int] = set()            # `isinstance(x, Cls)` / `isinstance(x, (Cls, tuple))`: Cls
    skip: Set[int] = set()
    simple_writes: Set[int] = set()     # `name.f = v`: one target, a name's attribute
    copy_methods: Set[int] = set()      # what a class's own __copy__ does (it never runs on a graph dict)
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Attribute) \
                and isinstance(n.targets[0].value, ast.Name):
            simple_writes.add(id(n.targets[0]))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "isinstance" \
                and len(n.args) == 2:
            if isinstance(n.args[1], ast.Name):     # in a tuple of classes: a class reference (refused)
                tested.add(id(n.args[1]))
        elif isinstance(n, ast.ClassDef):
            for fn in n.body:
                if isinstance(fn, ast.FunctionDef) and fn.name in _COPY_DUNDERS:
                    copy_methods.update(id(x) for x in ast.walk(fn))
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            skip.add(id(n.func))
        elif isinstance(n, (ast.arg, ast.AnnAssign)) and n.annotation is not None:
            skip.update(id(x) for x in ast.walk(n.annotation))
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.returns is not None:
            skip.update(id(x) for x in ast.walk(n.returns))
    for n in ast.walk(tree):
        changed = _mutated_attribute(n)
        if changed is not None and not (isinstance(changed.value, ast.Name) and changed.value.id == "self"):
            uses.stored.add(changed.attr)
        if isinstance(n, ast.Attribute):
            if not isinstance(n.ctx, ast.Load) and not (isinstance(n.value, ast.Name) and n.value.id == "self") \
                    and id(n) not in simple_writes:
                uses.stored.add(n.attr)
            if id(n) in copy_methods:
                continue
            if n.attr == "__dict__" and not (isinstance(n.value, ast.Name) and n.value.id == "self") \
                    or id(n) in skip and _introspection(n, resolve):    # another class's own self.__dict__: no record's
                uses.introspects = True
            if id(n) not in skip and isinstance(n.ctx, ast.Load):
                uses.class_refs.add(n.attr)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            if id(n) in copy_methods:
                continue
            if id(n) in skip and _introspection(n, resolve):
                uses.introspects = True
            elif id(n) in tested:
                uses.isinstance_refs.add(n.id)
            elif id(n) not in skip:
                uses.class_refs.add(n.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                and n.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(n.args) >= 2 \
                and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str):
            uses.named.add(n.args[1].value)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("getattr", "hasattr") \
                and len(n.args) >= 2:
            uses.dynamic_getattr = True
    _graph_calls(tree, uses)
    return uses


def _called_names(node: ast.AST) -> Set[str]:
    return {n.func.id if isinstance(n.func, ast.Name) else n.func.attr for n in ast.walk(node)
            if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))}


def _graph_calls(tree: ast.Module, uses: RecordUses) -> None:
    """A record is built as a dict only where a compiled graph may build it: a Module's methods (forward and what
    it calls) and the module-level functions they call. A class built elsewhere only (`trainer = Trainer(model,
    optimizer)` at the top level, whose method steps the optimizer) stays an object."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and any(isinstance(f, ast.FunctionDef) and f.name in ("forward", "construct")
                                                  for f in node.body):
            for f in node.body:
                if isinstance(f, ast.FunctionDef) and f.name != "__init__":
                    uses.forward_calls |= _called_names(f)
        elif isinstance(node, ast.FunctionDef):
            uses.function_calls[node.name] = _called_names(node)


# --- the rewrite (transformer.py calls these in graph code) ---

def _record_of(tr, func: cst.BaseExpression) -> Optional[Tuple[str, RecordClass]]:
    from .graph_objects import _project_qname
    qname = _project_qname(tr, func)
    if qname is None:
        return None
    module, _, name = qname.rpartition(".")
    record = tr.index.graph_record(module, name)
    return (name, record) if record is not None else None


def construction(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.BaseExpression]:
    """`Cls(a, g=b)` of a record class: `_ms_compat.graph_record_dict(Cls, {"f": a, "g": b, "h": None})`;
    None where the call is no record's or its arguments do not name every field once."""
    found = _record_of(tr, original.func)
    if found is None:
        return None
    _, record = found
    given: Dict[str, cst.BaseExpression] = {}
    for i, arg in enumerate(updated.args):
        if arg.star:
            return None
        name = arg.keyword.value if arg.keyword is not None else (
            record.fields[i] if i < len(record.fields) else None)
        if name is None or name not in record.fields or name in given:
            return None
        given[name] = arg.value
    defaults = dict(record.defaults)
    elements = []
    for f in record.fields:
        value = given.get(f)
        if value is None:
            if f not in defaults:
                return None
            value = cst.parse_expression(defaults[f])
        elements.append(cst.DictElement(cst.SimpleString(repr(f)), value))
    return cst.Call(func=tr._render_template("_ms_compat.graph_record_dict"),
                    args=[cst.Arg(updated.func), cst.Arg(cst.Dict(elements=elements))])


def field_read(tr, original: cst.Attribute, updated: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`E.f` read, f a field of a record class: `_ms_compat.graph_field(E, "f")`."""
    if not isinstance(updated, cst.Attribute) or original.attr.value not in tr.index.graph_record_fields():
        return None
    if isinstance(original.value, cst.Name) and original.value.value == "self" and not tr._in_record_method():
        return None
    if tr._qname_any(original) is not None:
        return None      # an imported module's attribute
    return cst.Call(func=tr._render_template("_ms_compat.graph_field"),
                    args=[cst.Arg(updated.value), cst.Arg(cst.SimpleString(repr(original.attr.value)))])


_COPIERS = ("copy.copy", "copy.deepcopy")


def copy_call(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.BaseExpression]:
    """`copy.copy(E)` / `deepcopy(E)` in graph code: `_ms_compat.graph_copy(E, copy.copy)`, E itself where it
    is a graph dict (copy runs through the fallback there, gradients 0), the copy otherwise."""
    if tr._qname_any(original.func) not in _COPIERS or len(updated.args) != 1 or updated.args[0].star \
            or updated.args[0].keyword is not None or not tr.index.graph_record_fields():
        return None
    return cst.Call(func=tr._render_template("_ms_compat.graph_copy"),
                    args=[cst.Arg(updated.args[0].value), cst.Arg(updated.func)])


def method_call(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.BaseExpression]:
    """`E.m(a)`, m a method of exactly one record class that this module names:
    `_ms_compat.graph_record_method(E, "m", Cls.m, a)`."""
    func = updated.func
    if not isinstance(func, cst.Attribute) or any(a.star or a.keyword is not None for a in updated.args):
        return None
    if isinstance(original.func.value, cst.Name) and original.func.value.value == "self" \
            and not tr._in_record_method():
        return None
    owner = tr.index.graph_record_method_owner(func.attr.value)
    if owner is None:
        return None
    local = tr.index.local_name_for(tr.module_name, owner)
    if local is None:
        return None
    return cst.Call(func=tr._render_template("_ms_compat.graph_record_method"),
                    args=[cst.Arg(func.value), cst.Arg(cst.SimpleString(repr(func.attr.value))),
                          cst.Arg(cst.parse_expression(f"{local}.{func.attr.value}")), *updated.args])


def isinstance_call(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.BaseExpression]:
    """`isinstance(E, Cls)` of a record class: `_ms_compat.graph_isinstance(E, Cls, ("f", ...))`, whether E is
    the record's dict in a compiled graph; refused in PyNative on such a dict a compiled graph returned."""
    if not (isinstance(original.func, cst.Name) and original.func.value == "isinstance" and len(updated.args) == 2
            and not any(a.star or a.keyword for a in updated.args)) or tr._shadowed("isinstance"):
        return None
    found = _record_of(tr, original.args[1].value) if isinstance(original.args[1].value, cst.Name) else None
    if found is None:
        return None
    fields = cst.parse_expression(repr(tuple(found[1].fields)))
    return cst.Call(func=tr._render_template("_ms_compat.graph_isinstance"),
                    args=[updated.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT),
                          cst.Arg(updated.args[1].value), cst.Arg(fields)])


class _FieldWrites(GA._Events):
    """graph_aliases' holders of each name, plus the record field writes `name.f = v` and what rebinds a name to
    a new object (a call's result: a record built or returned)."""

    def __init__(self, fields: Set[str]) -> None:
        super().__init__()
        self.fields = fields
        self.writes: List[Tuple[str, GA.Event, cst.Assign]] = []
        self.fresh: Dict[str, List[GA.Event]] = {}
        self.aliases: Dict[GA.Event, Tuple[str, str]] = {}     # `h = n` at: (n, h)
        # if/elif chains (their first `if`, where it starts), the tests of the `if` bodies around each write
        # (with where each `if` starts) and where each name is bound: branch_cover's dispatch on a value
        self.chains: List[Tuple[cst.If, GA.Event]] = []
        self._elifs: Set[int] = set()
        self._guards: List[Tuple[cst.BaseExpression, int]] = []
        self.guards: Dict[int, List[Tuple[cst.BaseExpression, int]]] = {}
        self.binds: Dict[str, List[int]] = {}
        self.list_holders: Dict[Tuple[str, GA.Event], str] = {}

    def leave_Call(self, node: cst.Call) -> None:
        before = {name: len(events) for name, events in self.shared.items()}
        super().leave_Call(node)
        f = node.func
        if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.attr.value in GA._KEEPING:
            for name, events in self.shared.items():
                for event in events[before.get(name, 0):]:
                    self.list_holders[(name, event)] = f.value.value     # `hs.append(n)`: hs holds n

    def visit_If(self, node: cst.If) -> None:
        if isinstance(node.orelse, cst.If):
            self._elifs.add(id(node.orelse))
        if id(node) not in self._elifs:
            self.chains.append((node, (self.pos, tuple(self.blocks[:-1]))))

    def visit_If_body(self, node: cst.If) -> None:
        self._guards.append((node.test, self.pos))

    def leave_If_body(self, node: cst.If) -> None:
        self._guards.pop()

    def on_visit(self, node: cst.CSTNode) -> bool:
        go = super().on_visit(node)
        for target, _ in _bound_by(node):
            for part in single_targets(target):
                if isinstance(part, cst.Name):
                    self.binds.setdefault(part.value, []).append(self.pos)
        return go

    def leave_Assign(self, node: cst.Assign) -> None:
        super().leave_Assign(node)
        target = node.targets[0].target if len(node.targets) == 1 else None
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                and target.value.value != "self" and target.attr.value in self.fields:
            self.writes.append((target.value.value, self._at(), node))
            self.guards[id(node)] = list(self._guards)
        if isinstance(node.value, cst.Call):
            for t in node.targets:
                for part in single_targets(t.target):
                    if isinstance(part, cst.Name):
                        self.fresh.setdefault(part.value, []).append(self._at())
        if isinstance(target, cst.Name) and isinstance(node.value, cst.Name):
            self.aliases[self._at()] = (node.value.value, target.value)


class _NameUses(cst.CSTVisitor):
    """How a function body uses one name: True while every use reads a field not in `written`, tests it
    against None (`h is None`, `exists(h)` of a module function that only does that) or binds it."""

    def __init__(self, name: str, written: Set[str], none_tests: Set[str]) -> None:
        self.name, self.written, self.none_tests = name, written, none_tests
        self.fine: Set[int] = set()
        self.ok = True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value == self.name and node.attr.value not in self.written:
            self.fine.add(id(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in self.none_tests and len(node.args) == 1:
            self.fine.add(id(node.args[0].value))
        if isinstance(node.func, cst.Attribute):
            self.fine.discard(id(node.func.value))        # `h.method()`: no read

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot)) and \
                isinstance(node.comparisons[0].comparator, cst.Name) and node.comparisons[0].comparator.value == "None":
            self.fine.add(id(node.left))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.fine.add(id(node.target))

    def visit_For(self, node: cst.For) -> None:
        self.fine.add(id(node.target))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self.fine.add(id(node.target))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name and id(node) not in self.fine:
            self.ok = False


class _ListUses(cst.CSTVisitor):
    """How a function body uses a list `hs` that holds records: True while every use adds to it (`hs.append(r)`,
    extend, insert), binds it, takes its len(), or loops over it (a for or a comprehension) with a target that
    itself is only read for fields not in `written` or tested against None (_NameUses). Then no record the list
    holds is read for a written field through it, nor handed to anyone else."""

    def __init__(self, name: str, written: Set[str], none_tests: Set[str], function: cst.FunctionDef) -> None:
        self.name, self.written, self.none_tests, self.function = name, written, none_tests, function
        self.fine: Set[int] = set()
        self.ok = True

    def _loop(self, target: cst.BaseExpression, iter_: cst.BaseExpression) -> None:
        if isinstance(iter_, cst.Name) and iter_.value == self.name and isinstance(target, cst.Name):
            uses = _NameUses(target.value, self.written, self.none_tests)
            self.function.body.visit(uses)
            if uses.ok:
                self.fine.add(id(iter_))

    def visit_For(self, node: cst.For) -> None:
        self._loop(node.target, node.iter)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._loop(node.target, node.iter)

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.attr.value in ("append", "extend", "insert"):
            self.fine.add(id(f.value))
        if isinstance(f, cst.Name) and f.value == "len" and len(node.args) == 1:
            self.fine.add(id(node.args[0].value))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.fine.add(id(node.target))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name and id(node) not in self.fine:
            self.ok = False


def none_tests(module: cst.Module) -> Set[str]:
    """Module-level functions of one parameter that only test it against None (`def exists(v): return v is not
    None`): a call of one hands its argument nowhere."""
    out: Set[str] = set()
    for fn in module.body:
        if not isinstance(fn, cst.FunctionDef) or len(fn.params.params) != 1 \
                or isinstance(fn.params.star_arg, cst.Param) or fn.params.kwonly_params or fn.decorators:
            continue
        body = fn.body.body
        stmt = body[0] if len(body) == 1 else None
        ret = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        cmp = ret.value if isinstance(ret, cst.Return) else None
        if isinstance(cmp, cst.Comparison) and len(cmp.comparisons) == 1 and isinstance(cmp.left, cst.Name) \
                and cmp.left.value == fn.params.params[0].name.value \
                and isinstance(cmp.comparisons[0].operator, (cst.Is, cst.IsNot)) \
                and isinstance(cmp.comparisons[0].comparator, cst.Name) and cmp.comparisons[0].comparator.value == "None":
            out.add(fn.name.value)
    return out


def field_writes(function: cst.FunctionDef, params: Set[str], fields: Set[str], tests: Set[str]) -> Dict[int, bool]:
    """{id of an `n.f = v` statement, f a record field: whether no other holder can share n's object when it runs}.
    Judged on one function's body as graph_aliases.py judges a list's changes: a parameter, or a name another
    holder shares (a name, a list, a tuple, an argument of append, a loop's target) since it was last bound to a
    call's result, is shared; a plain alias `h = n` that is only tested against None or read for fields this
    function never writes on n is not, nor a list n was appended to that is only added to, measured with len()
    or looped over reading such fields (_ListUses: x-transformers' `all_intermediates`)."""
    v = _FieldWrites(fields)
    function.body.visit(v)
    out: Dict[int, bool] = {}
    for name, at, node in v.writes:
        written = {n.targets[0].target.attr.value for w, _, n in v.writes if w == name}
        safe = name not in params and name in v.fresh      # bound here (a global's write would bind a local)
        rebound = v.fresh.get(name, []) + _covering_chains(v, name, at, node)
        for shared in v.shared.get(name, ()):
            if not safe:
                break
            if not GA._overlaps(shared, at, rebound):
                continue
            alias = next((h for ev, (n, h) in v.aliases.items() if n == name and ev == shared), None)
            if alias is not None and alias not in params:
                uses = _NameUses(alias, written, tests)
                function.body.visit(uses)
                if uses.ok:
                    continue
            holder = v.list_holders.get((name, shared))
            if holder is not None and holder not in params:
                list_uses = _ListUses(holder, written, tests, function)
                function.body.visit(list_uses)
                if list_uses.ok:
                    continue
            safe = False
        out[id(node)] = safe
    return out


def _covering_chains(v: _FieldWrites, name: str, at: GA.Event, node: cst.Assign) -> List[GA.Event]:
    """The if/elif chains before a write to `name` that rebind it on the way to the write (branch_cover): every
    branch does, or they dispatch on a name k the write's `if`s restrict to values whose branch does, k not
    bound again from the first of them to the write. Where each starts, as a rebinding of `name`."""
    out: List[GA.Event] = []
    guards = v.guards.get(id(node), [])
    allowed = BC.guard_values(test for test, _ in guards)
    for chain, start in v.chains:
        if start[0] >= at[0] or start[1] != at[1][:len(start[1])]:
            continue            # not before the write, in a block around it
        cover = BC.chain_cover(chain, name)
        if cover is None:
            continue
        var, values = cover
        if var is not None:
            if var not in allowed or not allowed[var] <= values:
                continue
            since = min([start[0]] + [pos for _, pos in guards])
            if any(since < pos < at[0] for pos in v.binds.get(var, [])):
                continue
        out.append(start)
    return out


def field_write(tr, original: cst.Assign, updated: cst.Assign, safe: bool) -> cst.BaseSmallStatement:
    """`n.f = v`: `n = _ms_compat.graph_field_set(n, "f", v)` where no other holder shares n (a graph dict's
    write reaches that name alone); else `n.f = _ms_compat.graph_shared_field(n, v, "n.f", "file:line")`,
    MigrationError when compiled on a dict."""
    target = updated.targets[0].target
    name, field = target.value, target.attr.value
    if safe:
        return updated.with_changes(targets=[cst.AssignTarget(target=name)], value=cst.Call(
            func=tr._render_template("_ms_compat.graph_field_set"),
            args=[cst.Arg(name), cst.Arg(cst.SimpleString(repr(field))), cst.Arg(updated.value)]))
    where = f"{tr.module_name}:{tr._line(original)}"
    return updated.with_changes(value=cst.Call(
        func=tr._render_template("_ms_compat.graph_shared_field"),
        args=[cst.Arg(name), cst.Arg(updated.value), cst.Arg(cst.SimpleString(repr(f"{name.value}.{field}"))),
              cst.Arg(cst.SimpleString(repr(where)))]))

