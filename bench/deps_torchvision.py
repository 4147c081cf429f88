"""Bench (not CI): `msmigrate convert --deps torchvision` on a two-function project.

Converts the project with the installed torchvision, then, in a process that cannot import torch:
imports every module of the converted torchvision and counts those that import; builds
resnet18 through the converted project, fills it with `msmigrate weights` from a torch
resnet18 checkpoint and compares its output with torch's.

    python bench/deps_torchvision.py [--work DIR] [--keep]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PROJECT = '''import torch
import torchvision
from torchvision import transforms


def build():
    return torchvision.models.resnet18(num_classes=10)


def preprocess():
    return transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
'''

IMPORT_ALL = '''
import sys, importlib, json, pkgutil
sys.modules["torch"] = None          # any `import torch` fails
sys.path.insert(0, OUT)
import _ms_compat                    # puts OUT/_deps first on sys.path
import torchvision
assert torchvision.__file__.startswith(OUT), torchvision.__file__
names = ["torchvision"] + [m.name for m in pkgutil.walk_packages(torchvision.__path__, "torchvision.")]
ok, failed = [], {}
for n in names:
    try:
        importlib.import_module(n)
        ok.append(n)
    except BaseException as exc:
        failed[n] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:160]
print(json.dumps({"modules": len(names), "imported": len(ok), "failed": failed}))
'''

RUN_MODEL = '''
import sys, json
import numpy as np
sys.modules["torch"] = None
sys.path.insert(0, OUT)
import mindspore as ms
import model
net = model.build()
missing, unused = ms.load_param_into_net(net, ms.load_checkpoint(CKPT))
net.set_train(False)
out = net(ms.Tensor(np.load(X))).asnumpy()
np.save(GOT, out)
print(json.dumps({"missing": missing, "unused": unused}))
'''


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", help="working directory (default: a temporary one)")
    p.add_argument("--keep", action="store_true", help="keep the working directory")
    p.add_argument("--reuse", action="store_true", help="reuse a converted WORK/out from an earlier run")
    args = p.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="msmigrate-deps-tv-"))
    env = dict(os.environ, PYTHONPATH=str(REPO), ONEDNN_MAX_CPU_ISA="AVX2")
    proj, out = work / "proj", work / "out"
    proj.mkdir(parents=True, exist_ok=True)
    (proj / "model.py").write_text(PROJECT, encoding="utf-8")
    if not (args.reuse and (out / "msmigrate-report.json").exists()):
        shutil.rmtree(out, ignore_errors=True)
        t0 = time.time()
        conv = subprocess.run([sys.executable, "-m", "msmigrate.cli", "convert", str(proj), "-o", str(out),
                               "--deps", "torchvision"], capture_output=True, text=True, env=env)
        print(conv.stdout.strip())
        print(f"convert: exit {conv.returncode}, {time.time() - t0:.0f} s")
    (dep,) = json.loads((out / "msmigrate-report.json").read_text())["dependencies"]
    print(f"torchvision: {dep['files']} files, {dep['converted_files']} converted, {dep['failed_files']} failed; "
          f"{dep['sites']} sites, {dep['todo']} TODO ({dep['conversion_rate'] * 100:.1f}%)")

    imp = subprocess.run([sys.executable, "-c", f"OUT = {str(out)!r}\n" + IMPORT_ALL], capture_output=True,
                         text=True, env=env, cwd=str(work))
    line = imp.stdout.strip().splitlines()[-1] if imp.stdout.strip() else "{}"
    res = json.loads(line) if line.startswith("{") else {}
    if not res:
        print(imp.stdout[-2000:], imp.stderr[-3000:])
        return 1
    print(f"modules importing without torch: {res['imported']} of {res['modules']}")
    for n, why in sorted(res["failed"].items()):
        print(f"  {n}: {why}")

    # resnet18 through the converted project, weights from a torch checkpoint
    import importlib.util
    import types

    import numpy as np
    import torch
    # the reference: torchvision's own resnet18. Its package __init__ registers C++ operators, which fails
    # with some torch builds ("operator torchvision::nms does not exist"); the models need none of it
    if "torchvision" not in sys.modules:
        package = types.ModuleType("torchvision")
        package.__path__ = list(importlib.util.find_spec("torchvision").submodule_search_locations)
        sys.modules["torchvision"] = package
    from torchvision.models import resnet18
    torch.manual_seed(0)
    tnet = resnet18(num_classes=10).eval()
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype(np.float32)
    with torch.no_grad():
        want = tnet(torch.from_numpy(x)).numpy()
    torch.save(tnet.state_dict(), work / "r18.pth")
    np.save(work / "x.npy", x)
    w = subprocess.run([sys.executable, "-m", "msmigrate.cli", "weights", str(work / "r18.pth"), "-o",
                        str(work / "r18.ckpt"), "--net", "model:build", "--path", str(out)],
                       capture_output=True, text=True, env=env)
    print(f"weights: exit {w.returncode} {w.stdout.strip()[-300:]} {w.stderr.strip()[-600:]}")
    if w.returncode == 0:
        prelude = (f"OUT = {str(out)!r}\nCKPT = {str(work / 'r18.ckpt')!r}\nX = {str(work / 'x.npy')!r}\n"
                   f"GOT = {str(work / 'got.npy')!r}\n")
        run = subprocess.run([sys.executable, "-c", prelude + RUN_MODEL], capture_output=True, text=True,
                             env=env, cwd=str(work))
        if run.returncode == 0:
            got = np.load(work / "got.npy")
            print(f"resnet18 via the converted torchvision: {run.stdout.strip()}; max |diff| vs torch "
                  f"{np.abs(got - want).max():.2e}")
        else:
            print("resnet18 run failed:", run.stderr[-1500:])
    if not args.keep and not args.work:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"kept: {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
