"""Writing the output of `msmigrate convert` safely.

- Nothing is written through a link: a symbolic link (or a hard link's shared file) already
  inside OUT is replaced by a new file, never followed, so --force cannot rewrite a source
  file or a file outside OUT.
- Files are written under a temporary name and renamed: a file is either old or complete.
- A new OUT is built in a hidden folder next to it and renamed at the end: an interrupted run
  (Ctrl-C) leaves no half-written OUT. An existing OUT (--force) gets a marker file for the
  duration of the run, which stays there if the run does not finish.
- Existing files are overwritten only with --force, and problems with OUT (a file where a
  folder is needed, no permission) are one-line errors before anything is written.
"""
from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

REPORT_NAMES = ("msmigrate-report.json", "msmigrate-report.md", "msmigrate-report.html")
INCOMPLETE_MARK = "MSMIGRATE-INCOMPLETE.txt"
# written next to a single converted file besides the reports: the helper runtime it imports, its requirements
SINGLE_FILE_EXTRAS = ("_ms_compat.py", "requirements-mindspore.txt")


def single_file_target(src: Path, out: Path) -> Path:
    """Where the converted file goes when SRC is one file."""
    return out if out.suffix == ".py" else out / src.name


def _blocking_file(folder: Path) -> Optional[Path]:
    """The first existing non-directory on the way to `folder` (which then cannot be created)."""
    p = folder.absolute()
    for q in [p] + list(p.parents):
        if q.exists() or q.is_symlink():
            return None if q.is_dir() else q
    return None


def _not_writable(folder: Path) -> Optional[Path]:
    """The nearest existing folder on the way to `folder`, if this process cannot write into it."""
    for q in [folder.absolute()] + list(folder.absolute().parents):
        if q.is_dir():
            return None if os.access(q, os.W_OK | os.X_OK) else q
    return None


def output_problem(src: Path, out: Path, force: bool) -> Optional[str]:
    """Why OUT cannot be written (one line), or None."""
    if src.is_file():
        if out.suffix != ".py" and out.exists() and not out.is_dir():
            return f"output {out} is a file (give a folder, or a .py file name)"
        target = single_file_target(src, out)
        folder = target.parent
        if target.is_dir():
            return f"output {target} is a folder"
        if not force:
            if folder.resolve() == src.resolve().parent:   # the source's folder is not ours to fill
                return (f"output {target} is in the folder of {src}, and msmigrate also writes "
                        f"{', '.join(SINGLE_FILE_EXTRAS + REPORT_NAMES)} next to it: give another folder "
                        f"(or --force)")
            existing = [p for p in [target] + [folder / n for n in SINGLE_FILE_EXTRAS + REPORT_NAMES]
                        if p.exists() or p.is_symlink()]
            if existing:
                return f"output {existing[0]} exists (use --force to overwrite it)"
    else:
        if out.exists() and not out.is_dir():
            return f"output {out} is a file"
        folder = out
    blocking = _blocking_file(folder)
    if blocking is not None:
        return f"cannot create {folder}: {blocking} is a file"
    locked = _not_writable(folder)
    if locked is not None:
        return f"cannot write into {locked}: permission denied"
    return None


def ensure_folder(root: Path, folder: Path) -> None:
    """Create `folder` (inside `root`) as real folders: a link on the way is removed, not followed."""
    root.mkdir(parents=True, exist_ok=True)
    p = root
    for part in folder.relative_to(root).parts:
        p = p / part
        if p.is_symlink():
            p.unlink()
        if not p.exists():
            p.mkdir()
        elif not p.is_dir():
            raise NotADirectoryError(20, "a file is in the way", str(p))


def _temporary(dst: Path) -> Path:
    tmp = dst.with_name(f".{dst.name}.msmigrate-{os.getpid()}.tmp")
    if tmp.exists() or tmp.is_symlink():     # left over, or planted: never written through
        tmp.unlink()
    return tmp


def write_file(root: Path, dst: Path, data: bytes) -> None:
    """Write `data` at `dst` (inside `root`): a new file renamed into place, never through a link."""
    ensure_folder(root, dst.parent)
    tmp = _temporary(dst)
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
        os.replace(tmp, dst)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_text(root: Path, dst: Path, text: str) -> None:
    write_file(root, dst, text.encode("utf-8"))


def copy_file(root: Path, src: Path, dst: Path) -> None:
    """Copy `src`'s bytes to `dst` (inside `root`), as write_file does."""
    ensure_folder(root, dst.parent)
    tmp = _temporary(dst)
    try:
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
    finally:
        if tmp.exists():
            tmp.unlink()


def unlink_links(paths) -> None:
    """Remove symbolic links and hard-linked files at `paths`, so that writing there creates new files."""
    for p in paths:
        try:
            if p.is_symlink() or (p.is_file() and p.stat().st_nlink > 1):
                p.unlink()
        except OSError:
            pass


_MARK_TEXT = ("msmigrate is writing into this folder. If this file is still here, that run did not finish and the "
              "folder is incomplete: run msmigrate convert again.\n")


@contextmanager
def staged_output(out: Path) -> Iterator[Path]:
    """The folder to write into: for a new OUT a hidden folder next to it, renamed to OUT when the block
    ends; for an existing OUT, OUT itself. Either way OUT holds a marker file (INCOMPLETE_MARK) until
    finish_output(OUT) is called."""
    if out.exists() or out.is_symlink():
        mark = out / INCOMPLETE_MARK
        unlink_links([mark])
        mark.write_text(_MARK_TEXT, encoding="utf-8")
        yield out
        return
    stage = out.with_name(f".{out.name}.msmigrate-partial-{os.getpid()}")
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    try:
        (stage / INCOMPLETE_MARK).write_text(_MARK_TEXT, encoding="utf-8")
        yield stage
        try:
            os.rename(stage, out)
        except OSError:
            if not out.is_dir():
                raise
            _merge(stage, out)      # another run created OUT meanwhile: add the files to it
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)


def finish_output(out: Path) -> None:
    """The run is complete: remove the marker."""
    (out / INCOMPLETE_MARK).unlink(missing_ok=True)


def _merge(stage: Path, out: Path) -> None:
    for dirpath, _, filenames in os.walk(stage):
        for n in filenames:
            p = Path(dirpath) / n
            dst = out / p.relative_to(stage)
            ensure_folder(out, dst.parent)
            os.replace(p, dst)
