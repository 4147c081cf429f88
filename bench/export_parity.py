"""Deployment parity over the torchvision zoo: `msmigrate export` on every converted
architecture, and the MindIR file, reloaded with mindspore.load + nn.GraphCell, must
reproduce the converted network's output (max|d| <= 1e-5).

The converted torchvision tree and the converted weights are bench/zoo_parity.py's
(torchvision 0.29.1 converted whole by msmigrate; weights from `msmigrate weights`),
made once in the work folder. Each architecture is then exported through the real CLI
(`python -m msmigrate.cli export ... --ckpt weights.ckpt`), in a process that never imports
torch. The CLI's seeded input is the one zoo_parity gave the torch model, so the table also
shows how far the reloaded file is from torch's own output.

    python bench/export_parity.py                       # all 21 architectures
    python bench/export_parity.py --archs resnet18,vgg11 --work /tmp/zoo

Prints one row per architecture (export seconds, max|d| file vs network, max|d| file vs
torch, pass) and a pass count."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import zoo_parity  # noqa: E402

ROOT = zoo_parity.ROOT
ATOL = 1e-5


def export_one(work: Path, arch: str, mode: str = "graph", timeout: int = 1800) -> dict:
    """`msmigrate export` for one converted architecture; returns the row's values."""
    run_dir = work / "runs" / arch
    out_dir = work / "export"
    out_dir.mkdir(parents=True, exist_ok=True)
    res_json, io_npz = out_dir / f"{arch}.json", out_dir / f"{arch}-outputs.npz"
    for f in (res_json, io_npz):
        if f.exists():
            f.unlink()
    cmd = [sys.executable, "-m", "msmigrate.cli", "export", "--ms", f"torchvision.models:{arch}",
           "--path", str(work / "ms"), "--input", ",".join(map(str, zoo_parity.input_shape(arch))),
           "--ckpt", str(run_dir / "weights.ckpt"), "-o", str(out_dir / f"{arch}.mindir"), "--mode", mode,
           "--atol", str(ATOL), "--json", str(res_json), "--save-outputs", str(io_npz)]
    t = time.perf_counter()
    try:
        r = subprocess.run(cmd, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"arch": arch, "pass": False, "error": f"timed out after {timeout} s"}
    row = {"arch": arch, "wall_s": time.perf_counter() - t, "exit": r.returncode}
    if not res_json.exists():
        lines = (r.stderr or r.stdout).strip().splitlines()
        return dict(row, **{"pass": False, "error": lines[-1] if lines else f"exit {r.returncode}"})
    res = json.loads(res_json.read_text())
    row.update({"pass": bool(res["passed"]) and r.returncode == 0, "max_abs": res.get("max_abs"),
                "export_s": res.get("timings", {}).get("export_s"),
                "reload_run_s": res.get("timings", {}).get("reload_run_s"),
                "mib": res.get("file_bytes", 0) / 2**20, "error": res.get("error")})
    torch_io = run_dir / "io.npz"
    if io_npz.exists() and torch_io.exists():
        got, ref = np.load(io_npz), np.load(torch_io)
        if np.array_equal(got["in/0"], ref["x"]) and "mindir/0" in got.files:
            row["vs_torch"] = float(np.abs(got["mindir/0"].astype(np.float64) - ref["y"]).max())
    return row


def print_table(rows: list) -> int:
    print(f"\n{'architecture':20} {'export s':>9} {'MiB':>7} {'max|d| file vs net':>19} {'vs torch':>9}  result")
    n = 0
    for r in rows:
        n += bool(r["pass"])
        if r.get("max_abs") is None:
            print(f"{r['arch']:20} {'-':>9} {'-':>7} {'-':>19} {'-':>9}  FAIL {r.get('error') or ''}")
            continue
        vt = f"{r['vs_torch']:.2e}" if "vs_torch" in r else "-"
        print(f"{r['arch']:20} {r['export_s'] or 0:9.2f} {r['mib']:7.1f} {r['max_abs']:19.2e} {vt:>9}  "
              f"{'pass' if r['pass'] else 'FAIL'}{' ' + r['error'] if r.get('error') else ''}")
    print(f"\npass: {n}/{len(rows)}  (file = the MindIR written by msmigrate export, reloaded with mindspore.load "
          f"+ nn.GraphCell; pass: max|d| file vs net <= {ATOL:g})")
    return n


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", default=str(ROOT / "bench" / "_work" / "zoo"))
    p.add_argument("--archs", default=",".join(zoo_parity.ARCHS))
    p.add_argument("--mode", default="graph", choices=["graph", "pynative"])
    p.add_argument("--json", help="also write the rows as JSON")
    a = p.parse_args(argv)
    work, archs = Path(a.work), [x for x in a.archs.split(",") if x]
    weight_errors = zoo_parity.record_and_convert_weights(work, archs)
    rows = []
    for arch in archs:
        if arch in weight_errors:
            rows.append({"arch": arch, "pass": False, "error": "msmigrate weights: " + weight_errors[arch][0]})
        else:
            rows.append(export_one(work, arch, a.mode))
        print("export: " + json.dumps(rows[-1]), flush=True)
    n = print_table(rows)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0 if n == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
