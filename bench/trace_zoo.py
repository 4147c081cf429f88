"""torchvision zoo through the graph-capture route (`msmigrate trace`).

For each classification architecture of bench/zoo_parity.py: build the ORIGINAL torchvision model
(seeded weights, perturbed constant initialisers, calibrated BatchNorm statistics, as zoo_parity
does), trace it with msmigrate.trace (torch.export -> model.py + model.ckpt), then check the written
model in a process that never imports torch: create_model() in PYNATIVE and GRAPH mode and the
exported MindIR through nn.GraphCell, against torch's output (max|d| <= 1e-4 * max(1, max|y|)).

    python bench/trace_zoo.py                         # all 21
    python bench/trace_zoo.py --archs resnet18,vgg11 --work /tmp/tz

Prints one row per architecture and the pass counts."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from zoo_parity import ARCHS, TORCHVISION, input_shape  # noqa: E402


def prepare(work: Path) -> Path:
    """The original torchvision package from the PyPI wheel (compiled-op registrations stubbed)."""
    work.mkdir(parents=True, exist_ok=True)
    orig = work / "orig"
    if not (orig / "torchvision").exists():
        wheels = list(work.glob("torchvision-*.whl"))
        if not wheels:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", TORCHVISION, "-d", str(work)],
                           check=True)
            wheels = list(work.glob("torchvision-*.whl"))
        with zipfile.ZipFile(wheels[0]) as z:
            z.extractall(orig)
        (orig / "torchvision" / "_meta_registrations.py").write_text("", encoding="utf-8")
    return orig


def build(arch: str, orig: Path):
    """The torch model as zoo_parity builds it: seeded, no constant parameters, realistic BN stats."""
    sys.path.insert(0, str(orig))
    import numpy as np
    import torch
    import torchvision.models as tvm

    torch.manual_seed(0)
    net = getattr(tvm, arch)(**({"init_weights": True} if arch in ("googlenet", "inception_v3") else {}))
    with torch.no_grad():
        for p in net.parameters():
            if p.numel() > 1 and bool((p == p.flatten()[0]).all()):
                p.add_(torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())) * 0.02)
    bns = [m for m in net.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    net.eval()
    for m in bns:
        m.momentum = 1.0
        m.train()
    calib = np.random.default_rng(1).standard_normal((8,) + input_shape(arch)[1:]).astype(np.float32)
    with torch.no_grad():
        net(torch.from_numpy(calib))
    for m in bns:
        m.momentum = 0.1
        m.eval()
    x = np.random.default_rng(0).standard_normal(input_shape(arch)).astype(np.float32)
    return net, torch.from_numpy(x)


def one(arch: str, work: Path, mindir: bool = True) -> dict:
    """Trace one architecture (runs in its own process: torch side + the torch-free check)."""
    import torch

    from msmigrate.trace import trace_model

    orig = prepare(work)
    net, x = build(arch, orig)
    t = time.perf_counter()
    res = trace_model(net, (x,), work / "runs" / arch, source=f"torchvision.models.{arch}", mindir=mindir)
    row = {"arch": arch, "seconds": round(time.perf_counter() - t, 1), "missing": [m[0] for m in res.missing],
           "notes": res.notes, "pynative_in_process": res.pynative_diff, "tol": res.tol,
           "phases": res.seconds}
    if res.first_bad:
        row["first_bad"] = {k: res.first_bad[k] for k in ("node", "op", "max_abs_diff", "error")}
    if res.check:
        row.update({m: res.check.get(m) for m in ("pynative", "graph", "mindir", "mindir_batch1") if m in res.check})
        if "error" in res.check:
            row["error"] = res.check["error"]
    del torch
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--work", default=str(ROOT / "bench" / "_work" / "trace_zoo"))
    p.add_argument("--archs", default=",".join(ARCHS))
    p.add_argument("--one", help=argparse.SUPPRESS)
    p.add_argument("--no-mindir", action="store_true")
    p.add_argument("--timeout", type=int, default=1500)
    a = p.parse_args(argv)
    work = Path(a.work)
    if a.one:
        print("ROW " + json.dumps(one(a.one, work, mindir=not a.no_mindir), default=str), flush=True)
        return 0
    archs = [x for x in a.archs.split(",") if x]
    prepare(work)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    rows = {}
    for arch in archs:
        cmd = [sys.executable, __file__, "--one", arch, "--work", str(work)] + (["--no-mindir"] if a.no_mindir else [])
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=env)
            line = [x for x in r.stdout.splitlines() if x.startswith("ROW ")]
            rows[arch] = json.loads(line[-1][4:]) if line else {
                "arch": arch, "error": ((r.stderr or r.stdout).strip().splitlines() or ["failed"])[-1][:300]}
        except subprocess.TimeoutExpired:
            rows[arch] = {"arch": arch, "error": f"timeout after {a.timeout} s"}
        print(json.dumps(rows[arch], default=str), flush=True)
    (work / "results.json").write_text(json.dumps(rows, indent=1, default=str))
    print(f"\n{'architecture':20} {'pynative':>12} {'graph':>12} {'mindir':>12}   seconds / problem")
    counts = {"pynative": 0, "graph": 0, "mindir": 0}
    for arch in archs:
        r = rows[arch]
        cells = []
        for m in counts:
            v = r.get(m)
            if isinstance(v, dict) and "max_abs_diff" in v:
                cells.append(f"{'pass' if v['pass'] else 'FAIL'} {v['max_abs_diff']:.1e}")
                counts[m] += bool(v["pass"])
            else:
                cells.append("FAIL" if v else "-")
        why = r.get("error") or (f"missing ops {r['missing']}" if r.get("missing") else "") or \
            (f"first bad node {r['first_bad']}" if r.get("first_bad") else "")
        for m in counts:
            if isinstance(r.get(m), dict) and "error" in r[m]:
                why = why or f"{m}: {r[m]['error'][:160]}"
            elif isinstance(r.get(m), dict) and not r[m].get("pass"):
                why = why or f"max|d| above tolerance {r.get('tol', 0):.1e} (every node matched on torch's inputs)"
        print(f"{arch:20} {cells[0]:>12} {cells[1]:>12} {cells[2]:>12}   {r.get('seconds', '')} {why}")
    n = len(archs)
    print(f"\npass: PYNATIVE {counts['pynative']}/{n}, GRAPH {counts['graph']}/{n}, MindIR {counts['mindir']}/{n}")
    return 0 if all(counts[m] == n for m in counts) else 1


if __name__ == "__main__":
    sys.exit(main())
