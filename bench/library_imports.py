"""Library import bench: convert installed torchvision and the part of transformers that
the bert, gpt2 and llama models import, then import every module of the converted packages
in a process that cannot import torch, and compare with the originals under torch.

    python bench/library_imports.py [--packages torchvision,transformers,timm] [--work DIR]

- torchvision, timm: every .py module of the installed package (the sources are copied, converted
  whole). The original is imported next to this CPU torch with bench/data_speed.py's
  workaround (the wheel's compiled ops target another torch build).
- transformers: msmigrate has no option to convert a subset, so the subset is chosen here: in
  a torch process, transformers.models.{bert,gpt2,llama}.modeling_* (and their packages,
  configuration and tokenization modules) are imported and every transformers module then
  in sys.modules is copied (with the __init__.py of each package above it) into the source
  tree that is converted. Those modules are the ones counted on both sides.

Prints, per package: modules, how many import in the original (torch present), how many
import converted (torch blocked), the conversion time, and the most frequent import errors."""
from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
MODELS = ("bert", "gpt2", "llama")

# imports a list of modules; prints one JSON line {module: error or null}
IMPORTER = r"""
import importlib, json, sys, traceback, warnings
warnings.filterwarnings("ignore")
blocked = sys.argv[1] == "blocked"
if blocked:
    for name in ("torch", "torchaudio"):
        sys.modules[name] = None
else:
    sys.path.insert(0, sys.argv[4])
    from bench.data_speed import import_torchvision
    import_torchvision()      # transformers' image utilities import torchvision too
if sys.argv[2]:
    sys.path.insert(0, sys.argv[2])
mods = json.load(open(sys.argv[3]))
out = {}
for m in mods:
    try:
        importlib.import_module(m)
        out[m] = None
    except BaseException as e:
        out[m] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
if blocked:
    bad = [m for m in sys.modules if m == "torch" or m.startswith("torch.")]
    out["__torch_loaded__"] = [m for m in bad if sys.modules[m] is not None]
print("RESULT " + json.dumps(out))
"""

CLOSURE = r"""
import importlib, json, sys, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, %r)
from bench.data_speed import import_torchvision
import_torchvision()
import transformers
for model in %r:
    for sub in ("", ".configuration_" + model, ".modeling_" + model, ".tokenization_" + model):
        try:
            importlib.import_module("transformers.models." + model + sub)
        except ImportError as e:
            print("skip", model, sub, e, file=sys.stderr)
print("RESULT " + json.dumps(sorted(m for m in sys.modules if m == "transformers" or m.startswith("transformers."))))
"""


def env():
    e = dict(os.environ)
    # a package installed outside the environment (`pip install --target DIR timm`, PYTHONPATH=DIR) is found too
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    e["GLOG_v"] = "3"
    e.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
    e["TRANSFORMERS_OFFLINE"] = "1"
    e["HF_HUB_OFFLINE"] = "1"
    return e


def result_line(stdout):
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return None


def installed(package):
    r = subprocess.run([PY, "-c", f"import importlib.util as u; print(u.find_spec({package!r}).submodule_search_locations[0])"],
                       capture_output=True, text=True, env=env())
    return Path(r.stdout.strip()) if r.returncode == 0 and r.stdout.strip() else None


def modules_of(tree: Path, package: str):
    mods = []
    for f in sorted(tree.rglob("*.py")):
        rel = f.relative_to(tree).with_suffix("")
        parts = [package, *rel.parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(not p.isidentifier() for p in parts):
            continue
        mods.append(".".join(parts))
    return mods


def import_all(mods, path, blocked, package, work, timeout):
    listing = work / f"{package}-modules.json"
    listing.write_text(json.dumps(mods))
    try:
        p = subprocess.run([PY, "-c", IMPORTER, "blocked" if blocked else "torch", str(path or ""), str(listing),
                            str(ROOT), package], capture_output=True, text=True, env=env(), timeout=timeout,
                           cwd=work)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    res = result_line(p.stdout)
    return res, (None if res is not None else p.stderr[-1500:])


def prepare_whole(work: Path, package: str):
    orig = installed(package)
    src = work / "src" / package
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(orig, src, ignore=shutil.ignore_patterns("*.so", "*.so.*", "__pycache__", "*.pyc"))
    return src, modules_of(src, package)


def prepare_transformers(work: Path, models=MODELS):
    orig = installed("transformers")
    p = subprocess.run([PY, "-c", CLOSURE % (str(ROOT), tuple(models))], capture_output=True, text=True, env=env(),
                       timeout=900)
    mods = result_line(p.stdout)
    if mods is None:
        raise RuntimeError(f"could not import transformers' models: {p.stderr[-1500:]}")
    src = work / "src" / "transformers"
    if src.exists():
        shutil.rmtree(src)
    kept = []
    for m in mods:
        rel = Path(*m.split(".")[1:])
        for candidate in (orig / rel / "__init__.py", orig / rel.with_suffix(".py")) if m != "transformers" else \
                (orig / "__init__.py",):
            if candidate.exists():
                dest = src / candidate.relative_to(orig)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(candidate, dest)
                kept.append(m)
                break
    # utils' placeholder classes for missing backends are imported lazily (by what the converted
    # process finds missing): all of them come along
    for dummy in (orig / "utils").glob("dummy_*.py"):
        shutil.copy2(dummy, src / "utils" / dummy.name)
    # every package above a copied module keeps its __init__.py
    for d in [d for d in src.rglob("*") if d.is_dir()]:
        init = orig / d.relative_to(src) / "__init__.py"
        if init.exists() and not (d / "__init__.py").exists():
            shutil.copy2(init, d / "__init__.py")
    return src, kept


def convert(src: Path, out: Path, timeout):
    if out.exists():
        shutil.rmtree(out)
    t = time.perf_counter()
    r = subprocess.run([PY, "-m", "msmigrate.cli", "convert", str(src), "-o", str(out), "-q"], cwd=ROOT,
                       env=env(), capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - t
    todo = None
    rep = out / "msmigrate-report.json"
    if rep.exists():
        todo = json.loads(rep.read_text())["summary"]["todo"]
    return r.returncode, seconds, todo


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packages", default="torchvision,transformers,timm")
    ap.add_argument("--work", type=Path, default=ROOT / "bench" / "_work" / "library_imports")
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--models", default=",".join(MODELS), help="transformers models whose modules are converted")
    a = ap.parse_args(argv)
    a.work = a.work.resolve()
    a.work.mkdir(parents=True, exist_ok=True)
    summary = {}
    for package in a.packages.split(","):
        if installed(package) is None:
            print(f"{package}: not installed")
            continue
        try:
            src, mods = prepare_transformers(a.work, a.models.split(",")) if package == "transformers" else prepare_whole(a.work, package)
        except RuntimeError as e:
            print(f"{package}: {e}")
            summary[package] = {"error": str(e)[-1500:]}
            continue
        out = a.work / "ms" / package
        rc, seconds, todo = convert(src, out, a.timeout)
        original, err_o = import_all(mods, None, False, package, a.work, a.timeout)
        converted, err_c = import_all(mods, out.parent, True, package, a.work, a.timeout)
        ok_o = sum(original.get(m) is None for m in mods) if original else 0
        ok_c = sum(converted.get(m) is None for m in mods) if converted else 0
        errors = collections.Counter(
            converted[m] for m in mods if converted and converted.get(m) is not None)
        summary[package] = {"modules": len(mods), "original_ok": ok_o, "converted_ok": ok_c, "todo": todo,
                            "convert_s": round(seconds, 1), "convert_exit": rc,
                            "torch_loaded": converted.get("__torch_loaded__") if converted else None,
                            "failures": {m: converted[m] for m in mods if converted and converted.get(m)},
                            "original_failures": {m: original[m] for m in mods if original and original.get(m)},
                            "errors": [err_o, err_c]}
        print(f"{package}: {len(mods)} modules; import with torch {ok_o}; converted without torch {ok_c} "
              f"(convert {seconds:.0f} s, exit {rc}, {todo} TODO)")
        for e, n in errors.most_common(12):
            print(f"   {n:4d}  {e}")
        if err_c:
            print(f"   converted import process failed: {err_c}")
        (a.work / f"results-{package}.json").write_text(json.dumps(summary[package], indent=1))
    return 0 if all(s.get("converted_ok", -1) == s.get("original_ok") for s in summary.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
