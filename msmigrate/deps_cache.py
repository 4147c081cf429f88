"""A cache of `--deps` conversions: a package converts the same way whatever the project is (deps_convert.py
converts it as a tree of its own), so the converted copy, its reports and its figures are kept and reused while
the package's sources, msmigrate's own sources and the other --deps names stay the same. Converting timm takes
minutes of CPU; a project converted again (or a second project on the same timm) takes a copy.

The cache lives in $MSMIGRATE_CACHE_DIR, else $XDG_CACHE_HOME/msmigrate, else ~/.cache/msmigrate (under deps/);
MSMIGRATE_CACHE_DIR=off (or `convert --no-cache`) turns it off. An entry is written whole into a temporary folder
and renamed into place, so a run stopped half-way leaves no entry; an entry without its figures is no entry."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import List, Optional, Sequence

KEEP = 8                     # entries kept; the least recently used go first
META = "meta.json"
_SKIP_DIRS = {"__pycache__", ".git"}


def cache_root() -> Optional[Path]:
    env = os.environ.get("MSMIGRATE_CACHE_DIR", "")
    if env.lower() == "off":
        return None
    if env:
        return Path(env) / "deps"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "msmigrate" / "deps"


def _files(root: Path):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for f in sorted(filenames):
            if not f.endswith((".pyc", ".pyo")):
                yield Path(dirpath) / f


def _feed(h, root: Path) -> None:
    for f in _files(root):
        h.update(str(f.relative_to(root)).encode() + b"\0")
        h.update(f.read_bytes() + b"\0")


_MSMIGRATE_DIGEST: List[str] = []     # msmigrate's own files as this process found them (msmigrate_digest)


def msmigrate_digest() -> str:
    """The digest of msmigrate's files, taken once per process: the convert command takes it when it starts (cli),
    so a file edited while a conversion runs does not key what the code loaded before the edit converted."""
    if not _MSMIGRATE_DIGEST:
        h = hashlib.sha256()
        _feed(h, Path(__file__).resolve().parent)
        _MSMIGRATE_DIGEST.append(h.hexdigest())
    return _MSMIGRATE_DIGEST[0]


def key(src: Path, others: Sequence[str]) -> str:
    """What the conversion of the package at `src` depends on: its files, msmigrate's files (the converter, its
    records and templates), libcst's and Python's versions (the code's printed form), the other --deps names (their
    imports are kept as references)."""
    import libcst

    h = hashlib.sha256()
    h.update(repr((sys.version_info[:2], getattr(libcst, "__version__", ""), sorted(others))).encode())
    h.update(msmigrate_digest().encode())
    _feed(h, src)
    return h.hexdigest()[:32]


def load(root: Path, entry: str, dst: Path, report: Path) -> Optional[dict]:
    """Copy a cached conversion into dst (the package) and report (its reports); its figures, or None."""
    where = root / entry
    if not where.is_dir():
        return None
    try:
        meta = json.loads((where / META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        meta = {}
    if meta.get("key") != entry or not (where / "package").is_dir():
        shutil.rmtree(where, ignore_errors=True)     # damaged: the conversion stores a whole one again
        return None
    shutil.copytree(where / "package", dst, dirs_exist_ok=True)
    if (where / "report").is_dir():
        shutil.copytree(where / "report", report, dirs_exist_ok=True)
    os.utime(where)          # recently used
    return meta["result"]


def store(root: Path, entry: str, dst: Path, report: Path, result: dict) -> None:
    """Keep a conversion (best effort: a cache that cannot be written costs only the next conversion's time)."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".part-", dir=root))
        shutil.copytree(dst, tmp / "package")
        if report.is_dir():
            shutil.copytree(report, tmp / "report")
        (tmp / META).write_text(json.dumps({"key": entry, "result": result}), encoding="utf-8")
        try:
            os.replace(tmp, root / entry)
        except OSError:      # another run stored it first
            shutil.rmtree(tmp, ignore_errors=True)
        _prune(root)
    except OSError:
        pass


def _prune(root: Path) -> None:
    import time

    entries = sorted((p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")),
                     key=lambda p: p.stat().st_mtime, reverse=True)
    # a run killed while storing leaves its .part- folder: gone after a day
    stale = [p for p in root.glob(".part-*") if p.stat().st_mtime < time.time() - 86400]
    for old in entries[KEEP:] + stale:
        shutil.rmtree(old, ignore_errors=True)
