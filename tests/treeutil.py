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
