"""Small helpers for tests that build and compare file trees."""
from __future__ import annotations

import hashlib
import os
import textwrap
from pathlib import Path


def write_tree(root: Path, files: dict) -> None:
    """Write {relative path: dedented text} under root."""
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")


def tree_digest(root: Path) -> str:
    """Names, link targets and bytes of everything under root (links are not followed)."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for n in sorted(dirnames + filenames):
            p = Path(dirpath) / n
            h.update(str(p.relative_to(root)).encode())
            if p.is_symlink():
                h.update(b"->" + os.readlink(p).encode())
            elif p.is_file():
                with open(p, "rb") as fh:          # not Path.read_bytes: one test patches it
                    h.update(fh.read())
    return h.hexdigest()


# a program run as its own process: converted ("ms"), with torch made unimportable
_RUN = """
import runpy
import sys
sys.path.insert(0, ".")
if sys.argv[1] == "ms":
    sys.modules["torch"] = None
runpy.run_path(sys.argv[2], run_name="__main__")
"""


def run_printed(folder: Path, side: str, mode: str = "", script: str = "train.py"):
    """What `script` in `folder` prints after `OUT` (a Python literal), run under torch (side "torch") or converted
    ("ms", torch unimportable); mode "pynative": the converted program's mode line turned to PYNATIVE in a copy,
    else as converted (GRAPH)."""
    import ast
    import subprocess
    import sys

    if mode == "pynative":
        code = (folder / script).read_text()
        assert "mode=ms.GRAPH_MODE" in code
        script = script[:-3] + "_pynative.py"
        (folder / script).write_text(code.replace("mode=ms.GRAPH_MODE", "mode=ms.PYNATIVE_MODE"))
    r = subprocess.run([sys.executable, "-c", _RUN, side, script], cwd=folder, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return ast.literal_eval(r.stdout.split("OUT", 1)[1].strip())
