"""Converting the --deps packages after the project (`msmigrate convert --deps NAME`): each into
OUT/_deps/NAME with its own reports, then the sys.path bootstrap appended to the project's helpers.
The names, paths and texts these steps share with the converter live in deps.py."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence

from . import deps_cache as DC
from .converter import convert_tree
from .deps import DEPS_DIR, DependencyResult, bootstrap, locate
from .records import COMPAT, TODO
from .report import write_reports


def convert_dependencies(names: Sequence[str], out_root: Path, jobs: Optional[int] = None,
                         time_limit: Optional[float] = None, cache: bool = True) -> List[DependencyResult]:
    """Convert each package into OUT/_deps/NAME (OUT/_deps/NAME.py for a single module), with its
    own reports next to it. A package converted before with the same sources and the same msmigrate is
    copied from the cache (deps_cache.py)."""
    results = []
    for name in names:
        src = locate(name)
        dst = out_root / DEPS_DIR / src.name
        report = out_root / DEPS_DIR / f"{name}-msmigrate-report"
        others = [n for n in names if n != name]
        root = DC.cache_root() if cache and src.is_dir() else None
        entry = DC.key(src, others) if root is not None else ""
        counts = DC.load(root, entry, dst, report) if root is not None else None
        if counts is None:
            tree = convert_tree(src, dst if src.is_dir() else dst.parent, force=True, jobs=jobs,
                                time_limit=time_limit, deps=others, dependency=True)
            # next to the package, in a directory no import can find (a hyphen in its name)
            write_reports(tree, report)
            py = [f for f in tree.files if f.rel.endswith(".py")]
            counts = dict(files=len(py), converted_files=sum(1 for f in py if f.status == "converted"),
                          failed_files=sum(1 for f in py if f.status == "failed"),
                          sites=len(tree.sites), todo=sum(1 for s in tree.sites if s.status == TODO))
            # a file that ran past its time limit (a loaded machine) is no result to keep
            if root is not None and not any(f.status == "failed" and "time limit" in (f.reason or "") for f in py):
                DC.store(root, entry, dst, report, counts)
        results.append(DependencyResult(name, str(src), str(dst.relative_to(out_root)), **counts))
    return results


def finish(tree, names: Sequence[str], jobs: Optional[int] = None, cache: bool = True) -> List[dict]:
    """After the project's conversion: convert the dependencies and append the sys.path bootstrap
    to the project's _ms_compat.py files. Returns the report entries."""
    single = tree.src.is_file() and tree.out.suffix == ".py"
    out_root = tree.out.parent if single else tree.out
    results = convert_dependencies(names, out_root, jobs, cache=cache)
    for d in sorted({f.compat_dir for f in tree.files if f.compat_dir is not None}):
        helper = out_root / d / f"{COMPAT}.py"
        if helper.exists():
            with helper.open("a", encoding="utf-8") as fh:
                fh.write(bootstrap(helper.parent, out_root, names))
    return [r.to_json() for r in results]
