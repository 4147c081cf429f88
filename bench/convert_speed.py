"""Conversion speed: the whole torchvision 0.29.1 Python tree (185 files, ~60k lines)
converted end to end by `msmigrate convert`, timed in one run with the number of
worker processes used, and checked: every output parses.

    python bench/convert_speed.py [--jobs N] [--under models] [--compare-visit]

--compare-visit converts the same tree three times in one run: with msmigrate's visit (msmigrate/fast_visit.py:
a read-only walk for visitors, no rebuild of unchanged nodes for transformers), with libcst's own visit for
transformers only (MSMIGRATE_LIBCST_TRANSFORM=1) and for everything (MSMIGRATE_LIBCST_VISIT=1), and prints the
times, their ratios to the last and whether the outputs are byte-identical.
"""
from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def torchvision_sources(work: Path) -> Path:
    src = work / "src"
    if not (src / "torchvision").exists():
        work.mkdir(parents=True, exist_ok=True)
        if not list(work.glob("torchvision-*.whl")):
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "torchvision==0.29.1",
                            "-d", str(work)], check=True)
        with zipfile.ZipFile(next(work.glob("torchvision-*.whl"))) as z:
            for n in z.namelist():
                if n.startswith("torchvision/") and n.endswith(".py"):
                    z.extract(n, src)
    return src / "torchvision"


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--work", default=str(ROOT / "bench" / "_work" / "zoo"))
    p.add_argument("--jobs", type=int, default=None)
    p.add_argument("--under", default="", help="convert only this subfolder of torchvision (e.g. models)")
    p.add_argument("--compare-visit", action="store_true")
    a = p.parse_args(argv)
    src = torchvision_sources(Path(a.work))
    if a.under:
        src = src / a.under
    files = list(src.rglob("*.py"))
    lines = sum(f.read_text(encoding="utf-8").count("\n") for f in files)
    p_keep = os.environ.get("CONVERT_SPEED_KEEP")   # a folder: keep both outputs there (to diff them)
    out = Path(p_keep) if p_keep else Path(tempfile.mkdtemp(prefix="msmigrate-speed-"))
    try:
        runs = [("msmigrate walk", {})]
        if a.compare_visit:
            runs.append(("libcst transform", {"MSMIGRATE_LIBCST_TRANSFORM": "1"}))
            runs.append(("libcst visit", {"MSMIGRATE_LIBCST_VISIT": "1"}))
        seconds, bad, rc = {}, 0, 0
        for name, extra in runs:
            dst = out / name.replace(" ", "_") / "torchvision"
            cmd = [sys.executable, "-m", "msmigrate.cli", "convert", str(src), "-o", str(dst), "-q"]
            if a.jobs:
                cmd += ["-j", str(a.jobs)]
            t = time.perf_counter()
            rc |= subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, **extra)).returncode
            seconds[name] = time.perf_counter() - t
            for f in dst.rglob("*.py"):
                try:
                    ast.parse(f.read_text(encoding="utf-8"))
                except SyntaxError:
                    bad += 1
        dt = seconds["msmigrate walk"]
        print(f"files: {len(files)}  lines: {lines}  seconds: {dt:.1f}  lines/s: {lines / dt:.0f}  "
              f"unparsable outputs: {bad}  msmigrate exit: {rc}")
        if a.compare_visit:
            def _files(run):
                d = out / run
                return sorted(p.relative_to(d) for p in d.rglob("*") if p.is_file())

            def _text(run, f):   # the reports name their own output folder
                return (out / run / f).read_bytes().replace(str(out / run).encode(), b"OUT")

            same = True
            for other in ("libcst_transform", "libcst_visit"):
                mine, theirs = _files("msmigrate_walk"), _files(other)
                differ = sorted(set(mine) ^ set(theirs)) + [
                    f for f in set(mine) & set(theirs) if _text("msmigrate_walk", f) != _text(other, f)]
                for f in differ[:10]:
                    print(f"  differs from {other}: {f}")
                same = same and not differ
            lv, lt = seconds["libcst visit"], seconds["libcst transform"]
            print(f"libcst visit: {lv:.1f} s; libcst transform only: {lt:.1f} s; msmigrate / libcst visit: {dt / lv:.2f}; "
                  f"libcst transform only / libcst visit: {lt / lv:.2f}; outputs byte-identical (reports: but for "
                  f"their output folder): {same}")
            if not same:
                return 1
        if not a.under:
            print(f"target: under 17 s on a 2-core machine -> {'met' if dt < 17 else 'NOT met'}")
        return 0 if bad == 0 else 1
    finally:
        if not p_keep:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
