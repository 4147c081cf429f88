"""Bench (not CI): `msmigrate convert --deps torchmetrics` on a project that computes common metrics.

Lightning projects compute their metrics with torchmetrics. The project below updates classification, regression
and aggregation metrics over three batches (update() and the forward call, as training_step does) and prints each
computed value. It runs under torch; it is converted with the installed torchmetrics and run in a process that
cannot import torch; the values are compared. The conversion runs twice: the second copies torchmetrics from the
--deps cache (msmigrate/deps_cache.py), and the bench prints both times side by side. Finally every module of the
converted torchmetrics is imported without torch and counted.

    python bench/deps_torchmetrics.py [--work DIR] [--keep]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
import deps_torchvision as _deps_torchvision  # noqa: E402

PROJECT = '''import torch
import torchmetrics
from torchmetrics import classification as C, regression as R, aggregation as A

metrics = {
    "acc_multiclass": torchmetrics.Accuracy(task="multiclass", num_classes=3),
    "acc_top2": C.MulticlassAccuracy(num_classes=3, top_k=2, average="micro"),
    "f1_macro": C.MulticlassF1Score(num_classes=3, average="macro"),
    "precision_weighted": C.MulticlassPrecision(num_classes=3, average="weighted"),
    "recall_none_sum": C.MulticlassRecall(num_classes=3, average="none"),
    "confusion_sum": C.MulticlassConfusionMatrix(num_classes=3),
    "auroc_multiclass": C.MulticlassAUROC(num_classes=3),
    "acc_binary": C.BinaryAccuracy(),
    "f1_binary": C.BinaryF1Score(),
    "auroc_binary": C.BinaryAUROC(),
    "ap_binary": C.BinaryAveragePrecision(),
    "mse": R.MeanSquaredError(),
    "rmse": R.MeanSquaredError(squared=False),
    "mae": R.MeanAbsoluteError(),
    "r2": R.R2Score(),
    "pearson": R.PearsonCorrCoef(),
    "cosine": R.CosineSimilarity(reduction="mean"),
    "mean": A.MeanMetric(),
    "sum": A.SumMetric(),
    "max": A.MaxMetric(),
}
batches = []
for i in range(3):
    # no ties, not even within float32 rounding (a curve's points follow ties: AUROC of equal scores is decided by
    # their last bits, which linspace rows shifted by a constant leave to each library's arithmetic)
    logits = torch.sin(torch.linspace(-1, 1, 24).reshape(8, 3) * (3 + i)) * 2 + torch.tensor([0.1, -0.2, 0.3]) * i
    target = torch.tensor([0, 2, 1, i % 3, 1, 0, 2, (i + 1) % 3])
    batches.append((logits, target))


def arguments(name, logits, target):
    if name.endswith("binary"):
        return torch.sigmoid(logits[:, 0] - logits[:, 1]), (target > 0).long()
    if name in ("mse", "rmse", "mae", "r2", "pearson"):
        return logits[:, 0] * 0.5 + 0.1 * target.float(), logits[:, 1] + logits[:, 2] * 0.25
    if name == "cosine":
        return logits, logits.flip(0)
    if name in ("mean", "sum", "max"):
        return (logits.sum(1),)
    return logits, target


for name, m in metrics.items():
    try:              # one metric's failure hides no other's figure
        for i, (logits, target) in enumerate(batches):
            if i == 1:
                m(*arguments(name, logits, target))     # the forward call, as a training_step logs it
            else:
                m.update(*arguments(name, logits, target))
        print("VALUE", name, float(m.compute().float().sum()))
    except Exception as exc:
        print("ERROR", name, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:200])
'''

NO_TORCH = '''
import importlib.machinery
import sys


class _NoTorchPath(importlib.machinery.PathFinder):
    # as if torch were not installed: `import torch` is a ModuleNotFoundError and importlib.util.find_spec("torch")
    # None, which libraries probe (transformers' is_torch_available); a None in sys.modules breaks such probes
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            return None
        return importlib.machinery.PathFinder.find_spec(name, path, target)


sys.meta_path[:] = [_NoTorchPath if f is importlib.machinery.PathFinder else f for f in sys.meta_path]
'''

# deps_torchvision.py's walk over every module of the converted package, for torchmetrics, torch hidden as above
IMPORT_ALL = NO_TORCH + _deps_torchvision.IMPORT_ALL.replace(
    'sys.modules["torch"] = None          # any `import torch` fails\n', "").replace("torchvision", "torchmetrics")

TORCH_SIDE = '''
import sys
sys.path.insert(0, REPO)
from bench.data_speed import import_torchvision
import_torchvision()       # torchmetrics imports torchvision, whose CUDA ops cannot load beside CPU torch
exec(open("project/metrics_run.py").read())
'''


def _env():
    env = dict(os.environ, MS_DEVICE_TARGET="CPU", GLOG_v="3")
    env.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
    env.pop("PYTHONPATH", None)
    return env


def _values(text):
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^VALUE (\S+) (\S+)$", text, re.M)}


def _convert(work, out, cache):
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "msmigrate.cli", "convert", str(work / "project"), "-o", str(out),
                        "--deps", "torchmetrics", "-q"], cwd=REPO, capture_output=True, text=True, timeout=3600,
                       env=dict(_env(), PYTHONPATH=str(REPO), MSMIGRATE_CACHE_DIR=str(cache)))
    return time.perf_counter() - t, r


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", type=Path, default=None)
    p.add_argument("--keep", action="store_true")
    args = p.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="deps_torchmetrics-"))
    (work / "project").mkdir(parents=True, exist_ok=True)
    (work / "project" / "metrics_run.py").write_text(PROJECT)
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    try:
        torch_run = subprocess.run([sys.executable, "-c", TORCH_SIDE.replace("REPO", repr(str(REPO)))], cwd=work,
                                   capture_output=True, text=True, timeout=600, env=_env())
        want = _values(torch_run.stdout)
        if not want:
            print("torch side failed:", torch_run.stderr[-2000:])
            return 1
        cold, r = _convert(work, work / "out", cache)
        warm, r2 = _convert(work, work / "out2", cache)
        dep = json.loads((work / "out" / "msmigrate-report.json").read_text())["dependencies"][0]
        print(f"conversion with --deps torchmetrics: {cold:.1f} s; again from the cache: {warm:.1f} s "
              f"(ratio {cold / warm:.1f}x); exit {r.returncode}/{r2.returncode}")
        print(f"torchmetrics: {dep['files']} files, {dep['converted_files']} converted, {dep['failed_files']} failed, "
              f"{dep['sites']} sites, {dep['todo']} TODO ({dep['conversion_rate']:.1%})")
        run = subprocess.run([sys.executable, "-c", NO_TORCH + "import runpy\nsys.path.insert(0, '.')\n"
                              "runpy.run_path('metrics_run.py', run_name='__main__')\n"], cwd=work / "out2",
                             capture_output=True, text=True, timeout=900, env=_env())
        got = _values(run.stdout)
        errors = dict(re.findall(r"^ERROR (\S+) (.*)$", run.stdout, re.M))
        if run.returncode != 0:
            print("converted run failed:", run.stderr[-2000:])
        passed = 0
        for name, w in want.items():
            g = got.get(name)
            ok = g is not None and abs(g - w) <= 1e-5 + 1e-4 * abs(w)
            passed += ok
            print(f"  {name:20s} torch {w:.7g}  converted {'-' if g is None else f'{g:.7g}'}  "
                  f"{'ok' if ok else errors.get(name, 'DIFF')}")
        print(f"{passed}/{len(want)} metrics equal torch's (1e-4 relative)")
        imp = subprocess.run([sys.executable, "-c", f"OUT = {str(work / 'out2')!r}\n" + IMPORT_ALL], cwd=work,
                             capture_output=True, text=True, timeout=1800, env=_env())
        res = json.loads(imp.stdout.strip().splitlines()[-1]) if imp.returncode == 0 else None
        if res is None:
            print("import of the converted torchmetrics failed:", imp.stderr[-1500:])
        else:
            print(f"converted torchmetrics modules importing without torch: {res['imported']}/{res['modules']}")
            for n, why in sorted(res["failed"].items())[:15]:
                print(f"  {n}: {why}")
        return 0 if res is not None and passed == len(want) else 1
    finally:
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
