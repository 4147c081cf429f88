"""torchvision zoo parity: convert the whole torchvision package with msmigrate, then
for each classification architecture compare the original (torch) with the converted
model (MindSpore, in a process that never imports torch) on the same input, with
weights converted by `msmigrate weights`, in PYNATIVE and GRAPH mode.

    python bench/zoo_parity.py                      # all 21 architectures
    python bench/zoo_parity.py --archs resnet18,vgg11 --work /tmp/zoo

Prints one row per architecture and a pass count per mode."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TORCHVISION = "torchvision==0.29.1"
ARCHS = ["alexnet", "vgg11", "resnet18", "resnet50", "resnext50_32x4d", "wide_resnet50_2", "squeezenet1_0",
         "densenet121", "mobilenet_v2", "mobilenet_v3_small", "shufflenet_v2_x1_0", "mnasnet0_5", "googlenet",
         "inception_v3", "efficientnet_b0", "efficientnet_v2_s", "regnet_y_400mf", "convnext_tiny", "vit_b_16",
         "swin_t", "maxvit_t"]
# small inputs keep it fast; some architectures fix or bound the image size
INPUT = {"inception_v3": (2, 3, 80, 80), "vit_b_16": (1, 3, 224, 224), "maxvit_t": (1, 3, 224, 224)}
DEFAULT_INPUT = (2, 3, 64, 64)
RTOL = 1e-4


def input_shape(arch):
    return INPUT.get(arch, DEFAULT_INPUT)


# ----------------------------------------------------------------- preparation
def prepare(work: Path) -> None:
    """Download the torchvision wheel, unpack the original (for torch) and its Python
    sources (for msmigrate), and convert the sources."""
    work.mkdir(parents=True, exist_ok=True)
    wheels = list(work.glob("torchvision-*.whl"))
    if not wheels:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", TORCHVISION, "-d", str(work)],
                       check=True)
        wheels = list(work.glob("torchvision-*.whl"))
    orig, src, ms = work / "orig", work / "src", work / "ms"
    if not (orig / "torchvision").exists():
        with zipfile.ZipFile(wheels[0]) as z:
            z.extractall(orig)
        # the compiled ops of this wheel target a newer torch: stub the registrations (classification
        # models need none of them)
        (orig / "torchvision" / "_meta_registrations.py").write_text("", encoding="utf-8")
    if not (src / "torchvision").exists():
        with zipfile.ZipFile(wheels[0]) as z:
            for n in z.namelist():
                if n.startswith("torchvision/") and n.endswith(".py"):
                    z.extract(n, src)
    if not (ms / "torchvision").exists():
        t = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "msmigrate.cli", "convert", str(src / "torchvision"),
                            "-o", str(ms / "torchvision"), "-q"], cwd=ROOT)
        print(f"converted torchvision in {time.perf_counter() - t:.1f} s (msmigrate exit {r.returncode})")


# ----------------------------------------------------------------- torch side
def torch_side(work: Path, archs) -> None:
    """Runs in its own process: original torchvision, seeded weights and inputs."""
    sys.path.insert(0, str(work / "orig"))
    import torch
    import torchvision.models as tvm

    for arch in archs:
        out = work / "runs" / arch
        out.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(0)
        net = getattr(tvm, arch)(**({"init_weights": True} if arch in ("googlenet", "inception_v3") else {}))
        x = np.random.default_rng(0).standard_normal(input_shape(arch)).astype(np.float32)
        # trained weights are never constant: perturb parameters that an initialiser set to one
        # value (zero heads, unit norm scales), or a transposed/misnamed copy could still match
        with torch.no_grad():
            for p in net.parameters():
                if p.numel() > 1 and bool((p == p.flatten()[0]).all()):
                    p.add_(torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())) * 0.02)
        # realistic BatchNorm statistics (not 0/1, so a layout mistake cannot hide): one
        # train-mode pass with momentum 1 makes the running stats a calibration batch's statistics
        bns = [m for m in net.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
        net.eval()
        for m in bns:  # only the norms train: dropout and auxiliary heads stay as in eval
            m.momentum = 1.0
            m.train()
        calib = np.random.default_rng(1).standard_normal((8,) + input_shape(arch)[1:]).astype(np.float32)
        with torch.no_grad():
            net(torch.from_numpy(calib))   # statistics of a separate, larger batch
        for m in bns:
            m.momentum = 0.1
            m.eval()
        with torch.no_grad():
            y = net(torch.from_numpy(x))
        if isinstance(y, tuple):
            y = y[0]
        torch.save(net.state_dict(), out / "weights.pth")
        # a float64 run of the same model: how far float32 itself is from the exact result
        with torch.no_grad():
            y64 = net.double()(torch.from_numpy(x).double())
        y64 = (y64[0] if isinstance(y64, tuple) else y64).numpy()
        np.savez(out / "io.npz", x=x, y=y.numpy(), y64=y64)
        print(f"torch: {arch} recorded", flush=True)


# ----------------------------------------------------------------- MindSpore side
def ms_side(work: Path, archs) -> None:
    """Runs in a process that never imports torch."""
    sys.modules["torch"] = None  # any torch import in converted code fails loudly
    sys.path.insert(0, str(work / "ms"))
    import mindspore as ms

    results = {}
    for arch in archs:
        run = work / "runs" / arch
        res = {"arch": arch}
        try:
            import torchvision.models as tvm
            io = np.load(run / "io.npz")
            x, y = io["x"], io["y"]
            tol = RTOL * max(1.0, float(np.abs(y).max()))
            # one network, built and loaded once, run in both modes
            ms.set_context(mode=ms.PYNATIVE_MODE)
            net = getattr(tvm, arch)()
            not_loaded, unused = ms.load_param_into_net(net, ms.load_checkpoint(str(run / "weights.ckpt")),
                                                        strict_load=True)
            if not_loaded or unused:
                raise RuntimeError(f"checkpoint mismatch: not loaded {not_loaded[:3]}, unused {unused[:3]}")
            net.set_train(False)
            for mode in ("pynative", "graph"):
                ms.set_context(mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE)
                try:
                    out = net(ms.Tensor(x))
                    if isinstance(out, tuple):
                        out = out[0]
                    d = float(np.abs(out.asnumpy() - y).max())
                    res[mode] = {"max_abs_diff": d, "tol": tol, "pass": bool(d <= tol)}
                    if "y64" in io:
                        res[mode]["mindspore_vs_float64"] = float(np.abs(out.asnumpy() - io["y64"]).max())
                        res[mode]["torch_vs_float64"] = float(np.abs(y - io["y64"]).max())
                except Exception as exc:  # report and go on with the next
                    msg = str(exc).strip().splitlines()
                    res[mode] = {"error": f"{type(exc).__name__}: {msg[0][:200] if msg else ''}", "pass": False}
            ms.set_context(mode=ms.PYNATIVE_MODE)
        except Exception as exc:
            res["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        results[arch] = res
        print("ms: " + json.dumps(res), flush=True)
    (work / "ms_results.json").write_text(json.dumps(results, indent=1))


# ----------------------------------------------------------------- driver
def record_and_convert_weights(work: Path, archs, timeout: int = 3600) -> dict:
    """prepare(), the torch records (runs/ARCH/weights.pth, io.npz) and `msmigrate weights`
    (runs/ARCH/weights.ckpt) for each architecture; returns {arch: [error line]} for the
    architectures whose weights did not convert. Also used by bench/export_parity.py."""
    prepare(work)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    todo = [a for a in archs if not (work / "runs" / a / "io.npz").exists()]
    if todo:
        subprocess.run([sys.executable, __file__, "_torch", "--work", str(work), "--archs", ",".join(todo)],
                       check=True, env=env, timeout=timeout)
    weight_errors = {}
    for arch in archs:
        run_dir = work / "runs" / arch
        r = subprocess.run([sys.executable, "-m", "msmigrate.cli", "weights", str(run_dir / "weights.pth"),
                            "-o", str(run_dir / "weights.ckpt"), "--net", f"torchvision.models:{arch}",
                            "--path", str(work / "ms")], env=env, capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            weight_errors[arch] = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["failed"]
    return weight_errors


def run(work: Path, archs, timeout: int = 3600) -> dict:
    weight_errors = record_and_convert_weights(work, archs, timeout)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, __file__, "_ms", "--work", str(work), "--archs",
                    ",".join(a for a in archs if a not in weight_errors)], env=env, timeout=timeout)
    results = json.loads((work / "ms_results.json").read_text()) if (work / "ms_results.json").exists() else {}
    for arch, err in weight_errors.items():
        results[arch] = {"arch": arch, "error": "msmigrate weights: " + err[0]}
    return results


def print_table(results: dict, archs) -> None:
    print(f"\n{'architecture':22} {'pynative':>26} {'graph':>26}")
    n_py = n_gr = 0
    for arch in archs:
        r = results.get(arch, {"error": "not run"})
        cells = []
        for mode in ("pynative", "graph"):
            m = r.get(mode)
            if m is None:
                cells.append(("FAIL " + r.get("error", "?"))[:26])
            elif "error" in m:
                cells.append(("FAIL " + m["error"])[:26])
            else:
                cells.append(f"{'pass' if m['pass'] else 'FAIL'} {m['max_abs_diff']:.2e}/{m['tol']:.1e}")
        n_py += bool(r.get("pynative", {}).get("pass"))
        n_gr += bool(r.get("graph", {}).get("pass"))
        print(f"{arch:22} {cells[0]:>26} {cells[1]:>26}")
    print(f"\npass: PYNATIVE {n_py}/{len(archs)}, GRAPH {n_gr}/{len(archs)}   (cells: max|d| vs torch / tolerance)")
    print("distance from a float64 run of the torch model (float32 error of each framework), PYNATIVE:")
    for arch in archs:
        m = results.get(arch, {}).get("pynative", {})
        if "mindspore_vs_float64" in m:
            print(f"  {arch:22} torch {m['torch_vs_float64']:.2e}   mindspore {m['mindspore_vs_float64']:.2e}")
    for arch in archs:
        r = results.get(arch, {})
        for mode in ("pynative", "graph"):
            if "error" in r.get(mode, {}):
                print(f"  {arch} {mode}: {r[mode]['error']}")
        if "error" in r:
            print(f"  {arch}: {r['error']}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("phase", nargs="?", default="all", choices=["all", "_torch", "_ms"])
    p.add_argument("--work", default=str(ROOT / "bench" / "_work" / "zoo"))
    p.add_argument("--archs", default=",".join(ARCHS))
    a = p.parse_args(argv)
    work, archs = Path(a.work), [x for x in a.archs.split(",") if x]
    if a.phase == "_torch":
        torch_side(work, archs)
        return 0
    if a.phase == "_ms":
        ms_side(work, archs)
        return 0
    results = run(work, archs)
    print_table(results, archs)
    ok = all(results.get(x, {}).get(m, {}).get("pass") for x in archs for m in ("pynative", "graph"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
