"""`msmigrate convert --deps NAME[,NAME]`: convert installed torch packages the project imports
(torchvision, a lab's own model library...) together with the project.

Each package's sources, found with importlib in the interpreter running msmigrate, are
converted into OUT/_deps/NAME/ like any project (its own absolute imports stay as they are).
The project keeps `import NAME`; the `_ms_compat.py` written next to the project's converted
code puts OUT/_deps first on sys.path when it is imported, and converted files import
`_ms_compat` before any such package, so `import torchvision` finds the converted copy (which
needs no torch). Registry records win: an API msmigrate maps itself (torchvision.transforms,
torchvision.datasets) is converted by its record; every other name of the package refers to
the converted copy.
"""
from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence

DEPS_DIR = "_deps"
NOTE = "refers to the converted dependency in _deps/ (msmigrate convert --deps)"


class DependencyError(Exception):
    """A --deps name that cannot be converted: one line for the user."""


@dataclass
class DependencyResult:
    name: str
    source: str           # where its sources were read
    output: str           # relative to the project's output
    files: int = 0
    converted_files: int = 0
    failed_files: int = 0
    sites: int = 0
    todo: int = 0

    def to_json(self) -> dict:
        rate = round((self.sites - self.todo) / self.sites, 4) if self.sites else 1.0
        return {"name": self.name, "source": self.source, "output": self.output, "files": self.files,
                "converted_files": self.converted_files, "failed_files": self.failed_files,
                "sites": self.sites, "todo": self.todo, "conversion_rate": rate}


def parse_names(text: Optional[Sequence[str]]) -> List[str]:
    """--deps a,b --deps c -> [a, b, c] (top-level package names, each once)."""
    names: List[str] = []
    for chunk in text or ():
        for n in chunk.split(","):
            n = n.strip()
            if not n:
                continue
            if not n.isidentifier():
                raise DependencyError(f"--deps {n!r}: give top-level package names (e.g. torchvision)")
            if n not in names:
                names.append(n)
    return names


def locate(name: str) -> Path:
    """The package directory (or single module file) of an installed package, without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as exc:
        raise DependencyError(f"--deps {name}: cannot be located: {exc}") from None
    if spec is None:
        raise DependencyError(f"--deps {name}: not installed in the Python running msmigrate")
    if spec.submodule_search_locations:
        locations = [Path(p) for p in spec.submodule_search_locations]
        if len(locations) != 1 or not locations[0].is_dir():
            raise DependencyError(f"--deps {name}: a namespace package spread over {len(locations)} directories")
        return locations[0]
    if spec.origin and spec.origin.endswith(".py"):
        return Path(spec.origin)
    raise DependencyError(f"--deps {name}: no Python sources (it is {spec.origin or 'built in'})")


def is_dependency_name(index, qname: str) -> bool:
    """A qualified name inside one of the converted dependencies of this conversion."""
    deps = getattr(index, "converted_deps", ())
    return bool(deps) and qname.split(".", 1)[0] in deps


def needs_bootstrap(index, module_name: str) -> bool:
    """A module of the project (not of a converted dependency): it imports _ms_compat, which puts
    _deps/ on sys.path, before a dependency."""
    return getattr(index, "deps_bootstrap", False) and module_name.split(".", 1)[0] != DEPS_DIR


def converted_before(root: Path) -> List[str]:
    """Packages an earlier `--deps` conversion left in root/_deps (converting its output again must keep
    their imports)."""
    d = root / DEPS_DIR
    if not d.is_dir():
        return []
    return sorted(p.stem for p in d.iterdir() if p.stem.isidentifier()
                  and ((p / "__init__.py").is_file() or p.suffix == ".py"))


def imports_dependency(index, text: str) -> bool:
    """The file imports one of the converted dependencies (it then needs the sys.path bootstrap even
    when it has no torch code)."""
    deps = getattr(index, "converted_deps", ())
    if not deps:
        return False
    names = "|".join(re.escape(n) for n in sorted(deps))
    return re.search(rf"^\s*(import|from)\s+({names})\b", text, re.M) is not None


BOOTSTRAP = '''

# {rule}
# converted dependencies (msmigrate convert --deps {names})
# {rule}
# The packages converted with this project live in {where}; putting that directory first on
# sys.path makes `import {first}` find the converted copy (which needs no torch). Converted files
# import this module before those packages.
import sys as _sys

_DEPS_PATH = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), {rel!r}))
if _DEPS_PATH not in _sys.path:
    _sys.path.insert(0, _DEPS_PATH)
'''


def bootstrap(helper_dir: Path, out_root: Path, names: Sequence[str]) -> str:
    """The section appended to the _ms_compat.py in helper_dir (a directory inside out_root)."""
    rel = os.path.relpath(out_root / DEPS_DIR, helper_dir).replace(os.sep, "/")
    return BOOTSTRAP.format(rule="=" * 70, names=",".join(names), where=f"{DEPS_DIR}/ at the output's top",
                            first=names[0], rel=rel)


def markdown(dependencies: List[dict]) -> List[str]:
    """The report's section on converted dependencies (empty without --deps)."""
    if not dependencies:
        return []
    out = ["## Converted dependencies (--deps)\n",
           f"Converted with the project into `{DEPS_DIR}/`; the project's `import NAME` finds them there "
           "(`_ms_compat` puts that directory first on sys.path). APIs msmigrate maps itself are converted by "
           "their records; other names refer to these copies. Each has its own report in "
           f"`{DEPS_DIR}/NAME-msmigrate-report/`.\n",
           "| package | from | files | converted | failed | sites | TODO | rate |",
           "|---|---|---|---|---|---|---|---|"]
    for d in dependencies:
        out.append(f"| `{d['name']}` | `{d['source']}` | {d['files']} | {d['converted_files']} | "
                   f"{d['failed_files']} | {d['sites']} | {d['todo']} | {d['conversion_rate'] * 100:.1f}% |")
    out.append("")
    return out
