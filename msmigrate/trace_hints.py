"""Which classes the source route left with TODOs, and the `msmigrate trace` command that would carry them
over instead (the graph-capture route does not need to understand the class's code, only to run it)."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List

from .registry import TODO


def _top_level_classes(source: str) -> List[ast.ClassDef]:
    """Module-level classes (importable as MODULE:CLASS); classes nested in functions are not."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    return [n for n in tree.body if isinstance(n, ast.ClassDef)]


def _module_name(rel: str) -> str:
    parts = list(Path(rel).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def trace_candidates(tree) -> List[Dict]:
    """One entry per class holding TODO sites: file, class, its line, TODO count and a trace command.
    Only module-level classes count: they are what `--torch MODULE:CLASS` can import."""
    found: List[Dict] = []
    for f in tree.files:
        todo_lines = [s.line for s in f.sites if s.status == TODO]
        if not todo_lines:
            continue
        try:
            source = (Path(tree.src) / f.rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        counts: Dict[int, int] = {}
        classes = _top_level_classes(source)
        for line in todo_lines:
            around = [c for c in classes if c.lineno <= line <= (c.end_lineno or c.lineno)]
            if around:
                counts[id(around[0])] = counts.get(id(around[0]), 0) + 1
        for cls in classes:
            if id(cls) in counts:
                target = f"{_module_name(f.rel)}:{cls.name}"
                found.append({"file": f.rel, "class": cls.name, "line": cls.lineno, "todo": counts[id(cls)],
                              "command": f"msmigrate trace --torch {target} --path {tree.src} "
                                         f"--input SHAPE -o {cls.name.lower()}_traced/"})
    return found
