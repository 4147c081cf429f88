"""Conversion speed: the whole torchvision 0.29.1 Python tree (185 files, ~60k lines)
converted end to end by `msmigrate convert`, timed in one run with the number of
worker processes used, and checked: every output parses.

    python bench/convert_speed.py [--jobs N]
"""
from __future__ import annotations

import argparse
import ast
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
    a = p.parse_args(argv)
    src = torchvision_sources(Path(a.work))
    files = list(src.rglob("*.py"))
    lines = sum(f.read_text(encoding="utf-8").count("\n") for f in files)
    out = Path(tempfile.mkdtemp(prefix="msmigrate-speed-"))
    try:
        cmd = [sys.executable, "-m", "msmigrate.cli", "convert", str(src), "-o", str(out / "torchvision"), "-q"]
        if a.jobs:
            cmd += ["-j", str(a.jobs)]
        t = time.perf_counter()
        rc = subprocess.run(cmd, cwd=ROOT).returncode
        dt = time.perf_counter() - t
        bad = 0
        for f in (out / "torchvision").rglob("*.py"):
            try:
                ast.parse(f.read_text(encoding="utf-8"))
            except SyntaxError:
                bad += 1
        print(f"files: {len(files)}  lines: {lines}  seconds: {dt:.1f}  lines/s: {lines / dt:.0f}  "
              f"unparsable outputs: {bad}  msmigrate exit: {rc}")
        print(f"target: under 17 s on a 2-core machine -> {'met' if dt < 17 else 'NOT met'}")
        return 0 if bad == 0 else 1
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
