"""No import cycle between msmigrate's modules, function-level imports included.

The knowledge (msmigrate/mappings/) imports only the record types (records.py) and the rule API
(callsite.py); the engine reads the loaded records through registry.py. A cycle hidden behind a
function-level import is still a cycle: each module here must be understandable (and testable)
after the modules it imports. Imports under `if __name__ == "__main__":` (the module runs as
__main__ there, another module object) and `if TYPE_CHECKING:` (never run) do not count.
"""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Set

PACKAGE = Path(__file__).resolve().parents[1] / "msmigrate"


@lru_cache(maxsize=None)
def _parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def _modules() -> Dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent)
        if "templates" in rel.parts:      # source text of the emitted runtime, not msmigrate's modules
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _skipped_blocks(tree: ast.Module) -> Set[int]:
    """ids of the statements under `if __name__ == "__main__":` and `if TYPE_CHECKING:`."""
    skipped: Set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        test = ast.unparse(node.test)
        if test in ("__name__ == '__main__'", "TYPE_CHECKING", "typing.TYPE_CHECKING"):
            for st in node.body:
                skipped.update(id(n) for n in ast.walk(st))
    return skipped


@lru_cache(maxsize=None)
def _import_graph() -> Dict[str, frozenset]:
    return {m: frozenset(d) for m, d in _build_graph().items()}


def import_graph() -> Dict[str, Set[str]]:
    return {m: set(d) for m, d in _import_graph().items()}


def _build_graph() -> Dict[str, Set[str]]:
    """module -> the msmigrate modules it imports anywhere in its body (`from . import x` names the
    submodule x, not the package)."""
    modules = _modules()
    graph: Dict[str, Set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = _parsed(path)
        skipped = _skipped_blocks(tree)
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            targets: List[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base_parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
                targets = subs if len(subs) == len(node.names) else subs + [base]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_cycle_finder_sees_function_level_imports():
    """The checker itself: a two-module cycle through a function-level import is found, a chain is not."""
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    graph = import_graph()
    # registry loads the records: a function-level or top-level import, it must be seen
    assert "msmigrate.mappings" in graph["msmigrate.registry"]
    assert "msmigrate.records" in graph["msmigrate.mappings.layers"]


def test_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles between msmigrate modules: " + "; ".join(" <-> ".join(c) for c in found)


def test_knowledge_never_imports_the_engine():
    """msmigrate/mappings/ imports only the record types, the rule API and its own modules."""
    allowed = {"msmigrate.records", "msmigrate.callsite", "msmigrate.inplace_forms", "msmigrate.sites",
               "msmigrate.torch_aliases", "msmigrate.torch_names", "msmigrate.torch_tensor_names",
               "msmigrate.torch_api_surface", "msmigrate.torch_signature_data"}   # the last five: data generated
    # from torch
    graph = import_graph()
    wrong = {m: sorted(t for t in deps if not t.startswith("msmigrate.mappings") and t not in allowed)
             for m, deps in graph.items() if m.startswith("msmigrate.mappings")}
    wrong = {m: d for m, d in wrong.items() if d}
    assert not wrong, wrong


def test_no_dynamic_import_of_msmigrate_modules():
    """importlib.import_module(f"{__name__}.x") would hide an edge from the checks above."""
    hidden = []
    for name, path in _modules().items():
        for node in ast.walk(_parsed(path)):
            if (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("import_module") and node.args):
                arg = ast.unparse(node.args[0])
                if "msmigrate" in arg or "__name__" in arg or "__package__" in arg:
                    hidden.append(f"{name}: import_module({arg})")
    assert not hidden, hidden
