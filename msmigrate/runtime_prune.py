"""Emitting only the part of a helper runtime that converted code uses.

The helper runtime (templates/ for `convert`, trace/runtime_src.py for `trace`) is one Python
module of top-level statements. Each statement is a unit: what it defines (a def, a class, an
assignment to a name, an import, a try/if block binding names) and what it uses (every name it
loads, every string constant naming a definition: getattr(module, "NAME") and tables of names).
From the root names (what the converted code reads as `_ms_compat.NAME`) the transitive closure
over "uses" decides the definitions kept. A statement that defines no name (a call, a loop
filling a table, `Cls.attr = ...`) is kept when it uses a kept definition or when its section
(the part of the runtime between two `# ====` banners) keeps any definition: it is that
section's set-up. A registration `TABLE[key] = value` is kept when both its section and TABLE are:
a branch of a helper needed only where the tree uses two parts of the runtime (state_dict's
optimizer layout, registered by the optimizers section) is written only then. No part of the runtime has to declare anything: new parts and definitions are
pruned the same way.

A namespace is pruned member by member: a class that only holds classes, static methods and
values (`class transforms:` with `class Compose`), and a table (`keras = SimpleNamespace(layers=
SimpleNamespace(Dense=Dense, ...), ...)`). Uses are then paths, `transforms.Compose` or
`keras.layers.Dense`, from the converted code and from the runtime itself; a namespace held as a
value (`ns.*`: passed along, `from _ms_compat import keras`) keeps all of it. A table is written
again with only the entries reached, one per line.
"""
from __future__ import annotations

import ast
import functools
import io
import re
from dataclasses import dataclass, field
from typing import Iterable, List, Optional, Set, Tuple

_BY_NAME = ("getattr", "hasattr", "setattr", "delattr")
# the banner compat_source() puts before each templates/compat_parts file
_BANNER = re.compile(r"^# ={20,}$")


@dataclass
class _Unit:
    node: ast.stmt
    start: int                 # first line (0-based), decorators and the comment block above included
    end: int                   # last line (0-based, inclusive)
    section: int
    defines: Set[str] = field(default_factory=set)
    uses: Set[str] = field(default_factory=set)
    is_import: bool = False
    always: bool = False       # patches an imported module or class
    members: Optional[dict] = None   # a namespace (class or table): {member name: _Member}
    ns_name: Optional[str] = None
    kept_paths: Set[str] = field(default_factory=set)   # "ns.member", "ns.table.member" reached
    registers: Optional[str] = None   # TABLE of another section this `TABLE[key] = value` fills

    @property
    def kept_members(self) -> Set[str]:
        return {p.split(".")[1] for p in self.kept_paths}


@dataclass
class _Member:
    """One definition in the body of a namespace class (`class transforms:` holding `class Compose`):
    converted code reads it as `_ms_compat.transforms.Compose`, so it is kept or dropped by itself."""
    start: int
    end: int
    uses: Set[str] = field(default_factory=set)
    members: Optional[dict] = None   # a table inside a table (keras.layers)
    alias: Optional[str] = None      # a namespace held by its name (keras.losses is the table `losses`)


def _augmented_names(node: ast.stmt, imported: Set[str]) -> Set[str]:
    """Module-level names a statement changes in place: `TABLE[k] = v`, `Cls.attr = f`, `TABLE.update(...)`
    (also inside a top-level loop). Such a statement goes with the name it changes."""
    names = set()
    for x in ast.walk(node):
        target = None
        if isinstance(x, (ast.Subscript, ast.Attribute)) and isinstance(x.ctx, (ast.Store, ast.Del)):
            target = x.value
        elif isinstance(x, ast.Expr) and isinstance(x.value, ast.Call) and isinstance(x.value.func, ast.Attribute):
            target = x.value.func.value
        if isinstance(target, ast.Name) and target.id not in imported:
            names.add(target.id)
    return names


def _patches_import(node: ast.stmt, imported: Set[str]) -> bool:
    """A statement that changes an imported module or class (`ms.Tensor.f = g`, `setattr(ms.Tensor, ...)`):
    converted code may rely on it without naming the helper module, so it always stays."""
    for x in ast.walk(node):
        target = None
        if isinstance(x, (ast.Attribute, ast.Subscript)) and isinstance(x.ctx, (ast.Store, ast.Del)):
            target = x.value
        elif isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id in ("setattr", "delattr") \
                and x.args:
            target = x.args[0]
        while isinstance(target, (ast.Attribute, ast.Subscript)):
            target = target.value
        if isinstance(target, ast.Name) and target.id in imported:
            return True
    return False


def _bound_names(node: ast.stmt) -> Set[str]:
    """Module-level names a top-level statement binds (loop variables and locals excluded)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = set()
        for t in targets:
            todo = [t]
            while todo:
                x = todo.pop()
                if isinstance(x, ast.Name):
                    names.add(x.id)
                elif isinstance(x, (ast.Tuple, ast.List)):
                    todo.extend(x.elts)
                elif isinstance(x, ast.Starred):
                    todo.append(x.value)
        return names
    if isinstance(node, (ast.If, ast.Try, ast.With)):
        names = set()
        blocks = [node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])]
        blocks += [h.body for h in getattr(node, "handlers", [])]
        for block in blocks:
            for st in block:
                names |= _bound_names(st)
        return names
    return set()


def _local_names(fn) -> Set[str]:
    """Names a function binds itself (parameters, assignments, imports, nested defs), less its globals."""
    names, globals_ = set(), set()
    args = fn.args
    for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if a is not None:
            names.add(a.arg)
    for x in ast.walk(fn):
        if x is fn:
            continue
        if isinstance(x, ast.Name) and isinstance(x.ctx, (ast.Store, ast.Del)):
            names.add(x.id)
        elif isinstance(x, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in x.names)
        elif isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(x.name)
        elif isinstance(x, ast.arg):
            names.add(x.arg)
        elif isinstance(x, ast.ExceptHandler) and x.name:
            names.add(x.name)
        elif isinstance(x, ast.Global):
            globals_.update(x.names)
    return names - globals_


def _attribute_chain(node: ast.AST) -> Optional[List[str]]:
    """`a.b.c` -> ["a", "b", "c"]; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id] + parts[::-1] if parts and isinstance(node, ast.Name) else None


def _used_names(node: ast.AST, defined: Set[str], bound: frozenset = frozenset()) -> Set[str]:
    """Module-level names a statement reads: names loaded and not bound in the enclosing function,
    `global` names, and definitions named by a string constant (getattr(module, "NAME"),
    globals()["NAME"])."""
    used: Set[str] = set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        outer = list(getattr(node, "decorator_list", [])) + node.args.defaults \
            + [d for d in node.args.kw_defaults if d is not None]
        for x in outer:
            used |= _used_names(x, defined, bound)
        inner = bound | _local_names(node) if not isinstance(node, ast.Lambda) else \
            bound | {a.arg for a in node.args.args}
        for x in (node.body if isinstance(node.body, list) else [node.body]):
            used |= _used_names(x, defined, frozenset(inner))
        return used
    chain = _attribute_chain(node)
    if chain and chain[0] not in bound and chain[0] in defined:
        # ns.member (keras.layers.Dense): that member only, with every member below it
        used.update(".".join(chain[:i]) for i in range(1, len(chain) + 1))
        used.add(".".join(chain) + ".*")
        return used
    for child in ast.iter_child_nodes(node):
        used |= _used_names(child, defined, bound)
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
        used.add(node.id)
        if node.id in defined:
            used.add(f"{node.id}.*")   # the name as a value: all its members (a namespace class's)
    elif isinstance(node, ast.Global):
        used.update(node.names)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _BY_NAME \
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value in defined:
        used.add(node.args[1].value)   # getattr(module, "NAME")
        if isinstance(node.args[0], ast.Name):
            used.add(f"{node.args[0].id}.{node.args[1].value}")
    elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call) \
            and isinstance(node.value.func, ast.Name) and node.value.func.id in ("globals", "vars") \
            and isinstance(node.slice, ast.Constant) and node.slice.value in defined:
        used.add(node.slice.value)     # globals()["NAME"]
    return used


@functools.lru_cache(maxsize=4)   # the same runtime for every tree a process converts; callers only read the units
def _units(source: str) -> List[_Unit]:
    tree = ast.parse(source)
    lines = source.splitlines()
    section_starts = [i for i, line in enumerate(lines) if _BANNER.match(line)][::2]
    units: List[_Unit] = []
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
        while start > 0 and lines[start - 1].lstrip().startswith("#") and not _BANNER.match(lines[start - 1]):
            start -= 1   # the comment block right above belongs to the statement
        section = sum(1 for s in section_starts if s < start)
        units.append(_Unit(node, start, node.end_lineno - 1, section, _bound_names(node),
                           is_import=isinstance(node, (ast.Import, ast.ImportFrom))))
    imported = set().union(*(u.defines for u in units if u.is_import)) if units else set()
    for u in units:
        if not isinstance(u.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            u.defines |= _augmented_names(u.node, imported)
            u.always = _patches_import(u.node, imported)
    for u in units:
        table = _registry_of(u.node)
        if table is not None and not any(table in v.defines for v in units
                                          if v.section == u.section and _registry_of(v.node) is None):
            u.registers = table
    for u in units:
        u.defines.discard(u.registers)
    defined = set().union(*(u.defines for u in units)) if units else set()
    for u in units:
        u.members = _namespace_members(u.node, lines, defined)
        if u.members is not None:
            u.ns_name = u.node.name
            u.uses = set()
            continue
        table = _table_of(u.node)
        u.members = _table_members(table, defined) if table is not None else None
        if u.members is not None:
            u.ns_name = u.node.targets[0].id
            u.uses = _used_names(table.func, defined)
            continue
        u.uses = _used_names(u.node, defined) - ({"__all__"} if "__all__" in u.defines else set())
    for u in units:   # a member that holds another namespace by name leads into it
        for m in _all_members(u.members or {}):
            if m.alias is not None and m.alias not in {v.ns_name for v in units if v.members is not None}:
                m.alias = None
    return units


def _is_table(value) -> bool:
    """`SimpleNamespace(a=..., b=...)`: a table of names converted code reads as `table.a`."""
    return isinstance(value, ast.Call) and not value.args and bool(value.keywords) \
        and all(k.arg for k in value.keywords) and (
            isinstance(value.func, ast.Name) and value.func.id == "SimpleNamespace"
            or isinstance(value.func, ast.Attribute) and value.func.attr == "SimpleNamespace")


def _table_of(node: ast.stmt) -> Optional[ast.Call]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
            and _is_table(node.value):
        return node.value
    return None


def _table_members(call: ast.Call, defined: Set[str]) -> dict:
    members = {}
    for kw in call.keywords:
        v = kw.value
        m = _Member(v.lineno - 1, v.end_lineno - 1)
        if _is_table(v):
            m.members, m.uses = _table_members(v, defined), _used_names(v.func, defined)
        elif isinstance(v, ast.Name) and v.id in defined:
            m.uses, m.alias = {v.id}, v.id   # its members are reached through the path, not all at once
        else:
            m.uses = _used_names(v, defined)
        members[kw.arg] = m
    return members


def _all_members(members: dict):
    for m in members.values():
        yield m
        if m.members is not None:
            yield from _all_members(m.members)


def _all_paths(members: dict, prefix: str):
    for name, m in members.items():
        yield f"{prefix}.{name}"
        if m.members is not None:
            yield from _all_paths(m.members, f"{prefix}.{name}")


def _reach(path: str, namespaces: dict) -> List[str]:
    """The names a namespace path needs (`keras.layers.Dense`: the layers table's Dense entry and what it
    uses; `ns.*`: every member), marking the members reached on the namespace's unit."""
    parts = path.split(".")
    unit = namespaces[parts[0]]
    container, prefix, out = unit.members, parts[0], []
    for i, part in enumerate(parts[1:], 1):
        if part == "*" or part.startswith("__"):   # ns.__dict__: all of it
            return out + [f"{prefix}.{m}.*" for m in container]
        m = container.get(part)
        if m is None:
            return out
        prefix = f"{prefix}.{part}"
        unit.kept_paths.add(prefix)
        out += list(m.uses)
        if m.alias is not None:
            return out + ([".".join([m.alias] + parts[i + 1:])] if parts[i + 1:] else [])
        if m.members is None:
            return out
        container = m.members
    return out


@functools.lru_cache(maxsize=4)
def _source_lines(source: str) -> List[str]:
    return io.StringIO(source, newline="").readlines()   # split at \n, \r\n and \r only, as ast does


def _segment(source: str, node: ast.AST) -> str:
    """ast.get_source_segment, on lines split once (it splits the whole runtime again at each call)."""
    lines = _source_lines(source)
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset:node.end_col_offset].decode()
    return "".join([lines[first].encode()[node.col_offset:].decode()] + lines[first + 1:last]
                   + [lines[last].encode()[:node.end_col_offset].decode()])


def _render_table(call: ast.Call, members: dict, prefix: str, kept: Set[str], source: str, indent: int) -> str:
    """A table with only the entries reached, one per line."""
    func = _segment(source, call.func)
    parts = []
    for kw in call.keywords:
        path = f"{prefix}.{kw.arg}"
        if path in kept:
            m = members[kw.arg]
            value = _render_table(kw.value, m.members, path, kept, source, indent + 4) if m.members is not None \
                else _segment(source, kw.value)
            parts.append(f"{kw.arg}={value}")
    pad = " " * (indent + 4)
    return f"{func}(\n{pad}" + f",\n{pad}".join(parts) + ")" if parts else f"{func}()"


def _namespace_members(node: ast.stmt, lines: List[str], defined: Set[str]) -> Optional[dict]:
    """The members of a namespace class (no base, decorator or keyword; a body of a docstring, classes,
    static methods and plain assignments), each with what it uses; None for any other statement. A member's
    bare use of a sibling's name (a base class `_RandomFlip`) is a use of that sibling."""
    if not isinstance(node, ast.ClassDef) or node.bases or node.keywords or node.decorator_list:
        return None
    members: dict = {}
    body = node.body[1:] if node.body and isinstance(node.body[0], ast.Expr) \
        and isinstance(node.body[0].value, ast.Constant) else node.body
    for st in body:
        if isinstance(st, ast.ClassDef) or isinstance(st, ast.FunctionDef) and len(st.decorator_list) == 1 \
                and isinstance(st.decorator_list[0], ast.Name) and st.decorator_list[0].id == "staticmethod":
            name = st.name   # a method of an instance (self.f) would be reached by no name
        elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            name = st.targets[0].id
        else:
            return None
        if name in members:
            return None
        start = min([st.lineno] + [d.lineno for d in getattr(st, "decorator_list", [])]) - 1
        while lines[start - 1].lstrip().startswith("#"):
            start -= 1
        members[name] = _Member(start, st.end_lineno - 1)
    if len(members) < 2:
        return None
    for name, st in zip(members, body):
        uses = _used_names(st, defined | set(members))
        members[name].uses = {u for u in uses if u.split(".")[0] not in members} \
            | {f"{node.name}.{u.split('.')[0]}" for u in uses if u.split(".")[0] in members}
    return members


def kept_units(source: str, roots: Iterable[str], keep_imports: bool = False,
               units: Optional[List[_Unit]] = None, why: Optional[dict] = None) -> List[_Unit]:
    """The statements of `source` that the names `roots` need (transitively). `why`, when given, is
    filled with what keeps each kept unit: {unit index: (reason, index of the unit that caused it or None)}."""
    units = _units(source) if units is None else units
    needed: Set[str] = set()
    todo = list(roots)
    kept: Set[int] = {i for i, u in enumerate(units) if u.always}
    kept_sections: Set[int] = set()
    user: dict = {}            # name -> index of the unit whose use of it came first (None: a root)
    why = {} if why is None else why
    namespaces = {u.ns_name: u for u in units if u.members is not None}
    ns_index = {u.ns_name: i for i, u in enumerate(units) if u.members is not None}
    for u in namespaces.values():
        u.kept_paths = set()
    for i in kept:
        why[i] = ("patches an imported module", None)
        for n in units[i].uses:
            user.setdefault(n, i)
        todo.extend(units[i].uses)
    changed = True
    while changed:
        changed = False
        while todo:
            name = todo.pop()
            if name in needed:
                continue
            needed.add(name)
            head, dot, _ = name.partition(".")
            if dot:
                if head in namespaces:
                    for n in _reach(name, namespaces):
                        if n not in needed:
                            user.setdefault(n, ns_index[head])   # kept by a member of that namespace
                            todo.append(n)
                continue
            defining = [i for i, u in enumerate(units) if name in u.defines]
            if defining and all(units[i].is_import for i in defining):
                defining = defining[:1]   # a module imported again by a later section: the first import
            for i in defining:
                u = units[i]
                if i not in kept and name != "__all__":
                    kept.add(i)
                    why[i] = (f"defines {name}", user.get(name))
                    changed = True
                    if not u.is_import:
                        kept_sections.add(u.section)
                    for n in u.uses - needed:
                        user.setdefault(n, i)
                    todo.extend(u.uses - needed)
        for i, u in enumerate(units):
            if i in kept or u.defines - {"__all__"}:
                continue
            if i == 0 and isinstance(u.node, ast.Expr):
                keep = True   # the module docstring
            elif isinstance(u.node, ast.Expr) and isinstance(u.node.value, ast.Constant):
                keep = False   # a section's docstring: it describes the whole section, mostly pruned
            elif u.registers is not None:
                # `TABLE[key] = value`: one section registering into another's table, needed when both are
                keep = u.section in kept_sections and u.registers in needed
            else:
                keep = u.section in kept_sections or any(
                    n in needed for n in u.uses if not any(n in v.defines for v in units if v.is_import))
            if keep:
                kept.add(i)
                why[i] = ("set-up of a kept section" if u.section in kept_sections else "uses a kept name", None)
                changed = True
                for n in u.uses - needed:
                    user.setdefault(n, i)
                todo.extend(u.uses - needed)
    kept -= {i for i in kept if not _deleted_names_bound(units[i], [units[j] for j in kept if j != i])}
    return [u for i, u in enumerate(units) if i in kept or (keep_imports and u.is_import)]


def _registry_of(node: ast.stmt) -> Optional[str]:
    """TABLE for a registration `TABLE[key] = value` into a table of the runtime."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) \
            and isinstance(node.targets[0].value, ast.Name):
        return node.targets[0].value.id
    return None


def _unit_label(unit: _Unit, lines: List[str]) -> str:
    names = sorted(unit.defines - {"__all__"})
    if isinstance(unit.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or (names and len(names) <= 3):
        return ", ".join(names)
    return lines[unit.node.lineno - 1].strip()[:60]


def why_kept(source: str, roots: Iterable[str]) -> List[dict]:
    """Each statement the closure keeps, for a report: its label, its section's title, its lines and
    the chain of uses from a root (or the rule) that keeps it, biggest first."""
    units = _units(source)
    lines = source.splitlines()
    titles = [lines[i + 1].lstrip("# ").strip() for i, line in enumerate(lines)
              if _BANNER.match(line) and i + 1 < len(lines)][::2]
    why: dict = {}
    kept = {id(u.node) for u in kept_units(source, roots, units=units, why=why)}
    rows = []
    for i, u in enumerate(units):
        if id(u.node) not in kept or u.is_import:
            continue
        chain, j, seen = [], i, set()
        while j is not None and j not in seen:
            seen.add(j)
            reason, parent = why.get(j, ("?", None))
            chain.append(_unit_label(units[j], lines) if j != i else reason)
            if parent is None:
                chain.append("root" if reason.startswith("defines") else reason)
            j = parent
        size, label = u.end - u.start + 1, _unit_label(u, lines)
        if u.members is not None and u.kept_members != set(u.members):
            text = _pruned_namespace(u, lines, source)
            size -= (u.node.end_lineno - u.node.lineno + 1) - len(text) if text is not None else \
                sum(m.end - m.start + 1 for n, m in u.members.items() if n not in u.kept_members)
            label += f" ({', '.join(sorted(u.kept_members))} of {len(u.members)} members)"
        rows.append({"label": label, "section": titles[u.section - 1] if u.section else "core",
                     "lines": size, "chain": " <- ".join(chain)})
    return sorted(rows, key=lambda r: -r["lines"])


def _module_level_stores(node: ast.AST) -> Set[str]:
    """Names a top-level statement stores outside functions and classes (loop variables included)."""
    names, todo = set(), [node]
    while todo:
        x = todo.pop()
        if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store):
            names.add(x.id)
        if not isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) or x is node:
            todo.extend(ast.iter_child_nodes(x))
    return names | _bound_names(node)


def _deleted_names_bound(unit: _Unit, others: List[_Unit]) -> bool:
    """False for a top-level `del a, b` (a section's clean-up of loop variables) when a statement that
    binds one of those names was pruned: the `del` would fail at import."""
    if not isinstance(unit.node, ast.Delete) or not all(isinstance(t, ast.Name) for t in unit.node.targets):
        return True
    bound = set().union(*(_module_level_stores(o.node) for o in others)) if others else set()
    return all(t.id in bound for t in unit.node.targets)


def prune_source(source: str, roots: Iterable[str], keep_imports: bool = False) -> str:
    """`source` with only the statements `roots` need; comments between kept statements stay, a
    section banner stays only above something kept."""
    units = _units(source)
    keep = {id(u.node) for u in kept_units(source, roots, keep_imports, units)}
    lines = source.splitlines()
    drop, replace = set(), {}
    for u in units:
        if id(u.node) not in keep:
            drop.update(range(u.start, u.end + 1))
        elif u.members is not None and isinstance(u.node, ast.Assign):
            text = _pruned_namespace(u, lines, source)
            if text is not None:
                drop.update(range(u.node.lineno - 1, u.node.end_lineno))
                replace[u.node.lineno - 1] = text
        elif u.members is not None and u.kept_members != set(u.members) and (
                u.kept_members or ast.get_docstring(u.node) is not None):
            for name, m in u.members.items():
                if name not in u.kept_members:
                    drop.update(range(m.start, m.end + 1))
    kept_lines = []
    for i, line in enumerate(lines):
        kept_lines += replace.get(i, [])
        if i not in drop:
            kept_lines.append(line)
    return _tidy(kept_lines)


def _pruned_namespace(u: _Unit, lines: List[str], source: str) -> Optional[List[str]]:
    """A table's statement with only the entries reached (None: all of them are, the text stays)."""
    if not isinstance(u.node, ast.Assign) or set(_all_paths(u.members, u.ns_name)) <= u.kept_paths:
        return None
    return f"{u.ns_name} = {_render_table(u.node.value, u.members, u.ns_name, u.kept_paths, source, 0)}".split("\n")


def _tidy(lines: List[str]) -> str:
    """Remove banners with nothing below them before the next banner, and runs of blank lines."""
    out: List[str] = []
    i = 0
    while i < len(lines):
        if _BANNER.match(lines[i]) and i + 2 < len(lines) and _BANNER.match(lines[i + 2]):
            j = i + 3   # a section with comments only (its statements all pruned) goes
            while j < len(lines) and (not lines[j].strip() or lines[j].startswith("#")) and not _BANNER.match(lines[j]):
                j += 1
            if j >= len(lines) or _BANNER.match(lines[j]):
                i = j
                continue
        out.append(lines[i])
        i += 1
    text = "\n".join(out).rstrip() + "\n"
    return re.sub(r"\n{4,}", "\n\n\n", text)


def compat_references(code: str, module: str) -> Optional[List[str]]:
    """The names one converted file reads from the helper module `module` (`module.NAME`, and
    `from module import NAME`), once per use, and `NAME.MEMBER` for a member read (`module.NAME.MEMBER`)
    or `NAME.*` for NAME held as a value (all its members, where NAME is a namespace class). None when it uses the module in a way no name list
    describes (the module passed as a value, a star import): the whole runtime is needed then."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    aliases: Set[str] = set()
    names: List[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == module:
                    aliases.add(a.asname or a.name)
                elif a.name.endswith("." + module):
                    return None
        elif isinstance(node, ast.ImportFrom):
            if node.module == module or (node.module or "").endswith("." + module):
                for a in node.names:
                    if a.name == "*":
                        return None
                    names += [a.name, f"{a.name}.*"]   # held under its own name: every member
            else:
                for a in node.names:
                    if a.name == module:
                        aliases.add(a.asname or a.name)
    if not aliases:
        return names
    attribute_bases, called, inner = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called.add(id(node.func))
        elif isinstance(node, ast.Attribute):
            inner.add(id(node.value))
    for node in ast.walk(tree):
        chain = _attribute_chain(node) if isinstance(node, ast.Attribute) and id(node) not in inner else None
        if chain and chain[0] in aliases:
            # `module.ns.member` reads one member of a namespace; `module.ns` held as a value, all of them
            names.append(chain[1])
            names += [".".join(chain[1:i]) for i in range(3, len(chain) + 1)]
            if id(node) not in called and len(chain) > 1:
                names.append(".".join(chain[1:]) + ".*")
            base = node
            while isinstance(base, ast.Attribute):
                base = base.value
            attribute_bases.add(id(base))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in aliases and id(node) not in attribute_bases \
                and isinstance(node.ctx, ast.Load):
            return None
    return names


# names every emitted helper keeps: what placeholders for unconverted code raise (Unconverted itself is
# kept only where converted code holds a placeholder, `_ms_compat.Unconverted(...)`), and `os`, which
# the --deps bootstrap section appended at write time (msmigrate/deps.py) uses
HELPER_MARK = '"""Small helpers written by msmigrate'
ALWAYS_KEPT = ("MigrationError", "os")


def helper_for_files(helper: str, files: Iterable, module: str) -> Tuple[str, dict]:
    """The helper runtime pruned to what the converted files (paths) use, and figures on it:
    lines written, lines of the whole runtime, uses of the helper in the files, their lines."""
    roots, uses, lines = helper_roots(files, module)
    text = helper if roots is None else prune_source(helper, roots)
    return text, {"lines": text.count("\n"), "runtime_lines": helper.count("\n"), "uses": uses,
                  "code_lines": lines, "uses_per_100_lines": round(100 * uses / lines, 1) if lines else 0.0}


def helper_roots(files: Iterable, module: str) -> Tuple[Optional[Set[str]], int, int]:
    """The names the converted files (paths) read from the helper module (None: all of it), the
    number of their uses and the files' lines."""
    roots: Set[str] = set(ALWAYS_KEPT)
    uses = lines = 0
    whole = native_optimizer = False
    codes: List[str] = []     # the string literals of all files name what a run-time torch_getattr may need
    for path in files:
        try:
            code = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if code.startswith(HELPER_MARK):
            continue   # an earlier helper copied along
        codes.append(code)
        lines += code.count("\n")   # every converted line counts in the uses per 100 lines
        native_optimizer = native_optimizer or "experimental.optim" in code
        if module not in code:
            continue
        used = compat_references(code, module)
        if used is None:
            whole = True
            continue
        roots.update(used)
        uses += sum(1 for n in used if "." not in n)   # `ns.member` counts once, as `ns`
    if roots & {"torch_getattr", "torch_dict_item", "torch_eval", "torch_dict_items"}:
        from .torch_namespace import helper_roots_for_names
        roots |= helper_roots_for_names(codes)
    if native_optimizer and "state_dict" in roots:
        # a mindspore.experimental.optim optimizer written in the tree (a torch.optim.Optimizer subclass)
        # names no helper: its state_dict() in torch's layout is kept by this root
        roots.add("_optimizer_state_dict")
    return (None if whole else roots), uses, lines


def shim(module: str, levels: int) -> str:
    """A helper module standing in a directory below the output's top: it is the one helper module at
    the top (`levels` directories up). Where that module is imported already (by a script at the top),
    this is the same module object; otherwise it is loaded here, under this module's own name."""
    rel = "/".join([".."] * levels + [f"{module}.py"])
    return f'''"""Small helpers written by msmigrate: this file stands for the one {module}.py at the top of
the converted tree ({rel}), so that imports of it from this directory find that module."""
import importlib.util as _importlib_util
import os
import sys as _sys

_PATH = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), {rel!r}))
_module = _sys.modules.get({module!r})
if _module is None or os.path.normpath(os.path.abspath(getattr(_module, "__file__", "") or "")) != _PATH:
    _spec = _importlib_util.spec_from_file_location(__name__, _PATH)
    _module = _importlib_util.module_from_spec(_spec)
    _sys.modules[__name__] = _module
    _spec.loader.exec_module(_module)
_sys.modules[__name__] = _module
'''
