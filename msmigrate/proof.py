"""Which converted sites a parity test proves: a site's mapping record names its test
("tests/parity/test_layers.py::test_conv"); the site counts as proven only when that test
function exists in msmigrate's own tests/ directory (read with `ast`, never run here)."""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path
from typing import FrozenSet, Optional

# the repository's tests/ next to the msmigrate package (absent in an installed wheel)
TESTS_ROOT = Path(__file__).resolve().parent.parent


def tests_dir_present() -> bool:
    return (TESTS_ROOT / "tests").is_dir()


@lru_cache(maxsize=None)
def _test_functions(file: str) -> Optional[FrozenSet[str]]:
    path = TESTS_ROOT / file
    if not file.startswith("tests/") or not path.is_file():
        return None
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    return frozenset(n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.name.startswith("test"))


def names_existing_test(test: str) -> bool:
    """`test` ("tests/...py::test_name") names a test function that exists."""
    file, sep, func = (test or "").partition("::")
    if not sep or not func:
        return False
    names = _test_functions(file)
    return names is not None and func in names
