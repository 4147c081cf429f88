"""Bench (not CI): models of the converted timm, built and run without torch, against timm under torch.

Uses the timm tree that bench/library_imports.py converted (WORK/ms/timm; run that first, or pass
--convert to convert the installed timm here). For each model: timm.create_model(name) under torch
(seeded, eval mode, every parameter moved by noise so that no zero-initialised head hides a
difference) gives the reference output on one random input and a state_dict file; in a
process that cannot import torch, the converted timm builds the same model, msmigrate.weights loads
that file into it, and the output on the same input is compared.

    python bench/library_imports.py --packages timm      # converts timm into bench/_work/library_imports
    python bench/timm_models.py [--models resnet18,vit_tiny_patch16_224] [--work DIR]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
MODELS = "resnet18,vit_tiny_patch16_224,mobilenetv3_small_050,efficientnet_b0,convnext_atto,deit_tiny_patch16_224"

# under torch: the reference outputs and state_dicts
REFERENCE = r"""
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from bench.data_speed import import_torchvision
import_torchvision()
import torch, timm
work, names = sys.argv[2], sys.argv[3].split(",")
x = np.random.default_rng(0).standard_normal((2, 3, 224, 224)).astype(np.float32)
np.save(f"{work}/x.npy", x)
out = {}
for name in names:
    try:
        torch.manual_seed(0)
        net = timm.create_model(name, pretrained=False).eval()
        with torch.no_grad():
            # timm zero-initialises some heads and layer scales: random values everywhere make the outputs
            # depend on every parameter
            for p in net.parameters():
                p.add_(torch.randn_like(p) * 0.05)
            np.save(f"{work}/{name}.want.npy", net(torch.from_numpy(x)).numpy())
        torch.save(net.state_dict(), f"{work}/{name}.pth")
        out[name] = None
    except Exception as e:
        out[name] = f"{type(e).__name__}: {e}"[:300]
print("RESULT " + json.dumps(out))
"""

# without torch: build, load, run
CONVERTED = r"""
import json, sys, time, traceback
sys.modules["torch"] = None
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import numpy as np
import mindspore as ms
from msmigrate.weights import load_torch_state_dict
import timm
work, names = sys.argv[3], sys.argv[4].split(",")
x = ms.Tensor(np.load(f"{work}/x.npy"))
out = {}
for name in names:
    step = "build"
    try:
        net = timm.create_model(name, pretrained=False)
        step = "weights"
        load_torch_state_dict(net, f"{work}/{name}.pth")
        net.set_train(False)
        step = "forward"
        t = time.perf_counter()
        got = net(x).asnumpy()
        want = np.load(f"{work}/{name}.want.npy")
        out[name] = {"ok": True, "max_abs_diff": float(np.abs(got - want).max()),
                     "scale": float(np.abs(want).max()), "forward_s": round(time.perf_counter() - t, 2)}
    except Exception as e:
        tb = traceback.extract_tb(e.__traceback__)[-1]
        out[name] = {"ok": False, "step": step,
                     "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300],
                     "at": f"{tb.filename}:{tb.lineno}"}
print("RESULT " + json.dumps(out))
"""


def env():
    """library_imports' environment: this checkout first, then a PYTHONPATH given (a timm installed elsewhere)."""
    sys.path.insert(0, str(ROOT))
    from bench.library_imports import env as library_env

    return library_env()


def result(p):
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(p.stderr[-2000:])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=MODELS)
    ap.add_argument("--work", type=Path, default=ROOT / "bench" / "_work" / "library_imports")
    ap.add_argument("--convert", action="store_true", help="convert the installed timm into WORK/ms first")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="max |diff| relative to the output's scale")
    a = ap.parse_args(argv)
    work = a.work.resolve()
    if a.convert:
        sys.path.insert(0, str(ROOT))
        from bench.library_imports import convert, prepare_whole
        src, _ = prepare_whole(work, "timm")
        convert(src, work / "ms" / "timm", 3600)
    if not (work / "ms" / "timm" / "__init__.py").exists():
        print(f"no converted timm under {work / 'ms'}: run bench/library_imports.py --packages timm or pass --convert")
        return 2
    models_dir = work / "timm_models"
    models_dir.mkdir(parents=True, exist_ok=True)
    ref = result(subprocess.run([PY, "-c", REFERENCE, str(ROOT), str(models_dir), a.models],
                                capture_output=True, text=True, env=env()))
    names = [n for n in a.models.split(",") if ref.get(n) is None]
    for n in a.models.split(","):
        if ref.get(n):
            print(f"{n}: reference failed under torch: {ref[n]}")
    got = result(subprocess.run([PY, "-c", CONVERTED, str(ROOT), str(work / "ms"), str(models_dir), ",".join(names)],
                                capture_output=True, text=True, env=env(), cwd=str(models_dir)))
    matched = 0
    for n in names:
        r = got[n]
        if r["ok"]:
            good = r["max_abs_diff"] <= a.tolerance * r["scale"]
            matched += good
            print(f"{n}: builds, runs; max |diff| vs torch {r['max_abs_diff']:.2e} (output scale {r['scale']:.2f}) "
                  f"{'MATCH' if good else 'MISMATCH'}; forward {r['forward_s']} s")
        else:
            print(f"{n}: fails at {r['step']}: {r['error']} ({r['at']})")
    print(f"timm models: {len(names)} built under torch; {sum(got[n]['ok'] for n in names)} run converted; "
          f"{matched} match torch")
    (work / "results-timm-models.json").write_text(json.dumps(got, indent=1))
    return 0 if matched == len(names) else 1


if __name__ == "__main__":
    sys.exit(main())
