"""Crash-free benchmark: `msmigrate convert` over the Python sources of real projects.

Wheels: torchvision==0.29.1, timm and transformers (latest available; `pip download --no-deps`), and torch
2.13.0 (the wheel at /opt/wheels/torch-2.13.0+cpu-*.whl when present, else `pip download torch==2.13.0`).
Their .py files are extracted, each package is converted with `msmigrate convert -q` (worker processes in
parallel), and the run prints, per package and in total:

  files, lines, crashes (files the converter reported as failed with an exception type: converter bugs; input
  problems such as invalid Python or non-UTF-8 text are counted separately), unparsable outputs, seconds,
  idempotence (a second conversion of the output changes no .py file) and whether the input tree is
  byte-identical afterwards.

    python bench/crash_free.py [--packages timm,transformers] [--jobs N] [--max-files N]

Exit 0 when there are no crashes, no unparsable outputs, every package is idempotent and no input changed.
"""
from __future__ import annotations

import argparse
import ast
import glob
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "_work" / "crash_free"
PACKAGES = {  # name: (pip requirement, top-level package directory inside the wheel)
    "torchvision": ("torchvision==0.29.1", "torchvision"),
    "timm": ("timm", "timm"),
    "transformers": ("transformers", "transformers"),
    "torch": ("torch==2.13.0", "torch"),
}
# reasons the converter gives for bad input (not crashes): see converter.convert_tree / _walk
INPUT_PROBLEMS = ("not valid Python", "not UTF-8", "binary file", "larger than", "symbolic link", "unreadable",
                  "not a regular file", "could not copy")


def wheel_for(name: str, wheels: Path) -> Path:
    wheels.mkdir(parents=True, exist_ok=True)
    if name == "torch":
        local = sorted(glob.glob("/opt/wheels/torch-2.13.0+cpu-*.whl"))
        if local:
            return Path(local[0])
    found = sorted(wheels.glob(f"{name}-*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", PACKAGES[name][0],
                        "-d", str(wheels)], check=True)
        found = sorted(wheels.glob(f"{name}-*.whl"))
    return found[-1]


def extract_sources(name: str, work: Path = WORK) -> Path:
    """The package's .py files, extracted once under work/src/<name>/<top>."""
    whl = wheel_for(name, work / "wheels")
    top = PACKAGES[name][1]
    dest = work / "src" / name
    done = dest / ".complete"
    if not done.exists() or done.read_text() != whl.name:
        shutil.rmtree(dest, ignore_errors=True)
        with zipfile.ZipFile(whl) as z:
            for n in z.namelist():
                if n.startswith(top + "/") and n.endswith(".py"):
                    z.extract(n, dest)
        done.write_text(whl.name)
    return dest / top


def digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def classify(report: dict) -> Dict[str, List[str]]:
    crashes, inputs = [], []
    for f in report["files"]:
        if f["status"] != "failed":
            continue
        (inputs if f["reason"].startswith(INPUT_PROBLEMS) else crashes).append(f"{f['file']}: {f['reason']}")
    return {"crashes": crashes, "input_problems": inputs}


def convert(src: Path, out: Path, jobs: Optional[int]) -> int:
    cmd = [sys.executable, "-m", "msmigrate.cli", "convert", str(src), "-o", str(out), "-q", "--force"]
    if jobs:
        cmd += ["-j", str(jobs)]
    return subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).returncode


def run_tree(src: Path, jobs: Optional[int] = None, keep: Optional[Path] = None) -> Dict:
    """Convert one tree twice (input, then output) and check everything. Returns the figures."""
    files = sorted(src.rglob("*.py"))
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    before = digest(src)
    tmp = Path(tempfile.mkdtemp(prefix="msmigrate-crashfree-", dir=keep))
    try:
        # same directory name in both passes: a project's absolute imports (`from timm.layers import ...`)
        # resolve through the name of its root directory
        out, out2 = tmp / "out" / src.name, tmp / "out2" / src.name
        t = time.perf_counter()
        rc = convert(src, out, jobs)
        seconds = time.perf_counter() - t
        report = json.loads((out / "msmigrate-report.json").read_text(encoding="utf-8"))
        cls = classify(report)
        unparsable = []
        for p in sorted(out.rglob("*.py")):
            try:
                ast.parse(p.read_bytes().decode("utf-8-sig"))
            except (SyntaxError, ValueError, UnicodeDecodeError) as e:
                rel = str(p.relative_to(out))
                if not any(x.startswith(rel + ": ") for x in cls["input_problems"]):  # copied bad input
                    unparsable.append(f"{rel}: {type(e).__name__}")
        for r in ("msmigrate-report.json", "msmigrate-report.md", "msmigrate-report.html"):
            (out / r).unlink()
        out_before = digest(out)
        rc2 = convert(out, out2, jobs)
        changed = [str(p.relative_to(out)) for p in sorted(out.rglob("*.py"))
                   if (out2 / p.relative_to(out)).read_bytes() != p.read_bytes()]
        return {
            "files": len(files), "lines": lines, "crashes": len(cls["crashes"]),
            "input_problems": len(cls["input_problems"]), "unparsable_outputs": len(unparsable),
            "seconds": round(seconds, 1), "idempotent": not changed, "not_idempotent": changed[:20],
            "input_unchanged": digest(src) == before and digest(out) == out_before,
            "exit": rc, "exit_second_pass": rc2, "crash_list": cls["crashes"][:50],
            "unparsable_list": unparsable[:50], "sites": report["summary"]["sites"],
            "todo": report["summary"]["todo"],
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def ok(r: Dict) -> bool:
    return r["crashes"] == 0 and r["unparsable_outputs"] == 0 and r["idempotent"] and r["input_unchanged"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--packages", default="torchvision,timm,transformers,torch")
    p.add_argument("--jobs", type=int, default=None)
    p.add_argument("--work", default=str(WORK))
    a = p.parse_args(argv)
    work = Path(a.work)
    results = {}
    print(f"{'package':<14}{'files':>7}{'lines':>10}{'crashes':>9}{'bad input':>10}{'unparsable':>11}"
          f"{'seconds':>9}  idempotent  input unchanged", flush=True)
    for name in [n.strip() for n in a.packages.split(",") if n.strip()]:
        src = extract_sources(name, work)
        r = run_tree(src, a.jobs)
        results[name] = r
        print(f"{name:<14}{r['files']:>7}{r['lines']:>10}{r['crashes']:>9}{r['input_problems']:>10}"
              f"{r['unparsable_outputs']:>11}{r['seconds']:>9.1f}  {str(r['idempotent']):<10}  "
              f"{r['input_unchanged']}", flush=True)
        for line in r["crash_list"]:
            print(f"    crash: {line}")
        for line in r["unparsable_list"]:
            print(f"    unparsable: {line}")
        for line in r["not_idempotent"]:
            print(f"    changed on second pass: {line}")
    tot = {k: sum(r[k] for r in results.values())
           for k in ("files", "lines", "crashes", "input_problems", "unparsable_outputs", "seconds")}
    print(f"{'total':<14}{tot['files']:>7}{tot['lines']:>10}{tot['crashes']:>9}{tot['input_problems']:>10}"
          f"{tot['unparsable_outputs']:>11}{tot['seconds']:>9.1f}  "
          f"{str(all(r['idempotent'] for r in results.values())):<10}  "
          f"{all(r['input_unchanged'] for r in results.values())}")
    (work / "last_run.json").write_text(json.dumps(results, indent=1))
    return 0 if all(ok(r) for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
