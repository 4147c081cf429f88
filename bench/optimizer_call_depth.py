"""A train step over many parameter tensors, compiled: MindSpore unrolls an optimizer's loop over the parameters
into nested calls (about two per parameter), and at its default call depth limit of 1000 a model of ~500
parameter tensors stopped before its first step. The converted optimizers raise the limit with the model
(_ms_compat's _allow_call_depth). This converts a program of N one-vector parameters (default 600) trained by
SGD with momentum and by Adam, runs it in GRAPH mode and compares the losses with torch's.
Minutes per optimizer (the compile of a 600-parameter step), hence here and not in the tests.

    python bench/optimizer_call_depth.py [--n 600]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROGRAM = '''
import json
import sys

import torch
import torch.nn as nn


class Many(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.ps = nn.ParameterList([nn.Parameter(torch.full((2,), 0.001 * i)) for i in range(n)])

    def forward(self, x):
        return x * torch.stack(list(self.ps)).sum(0)


model = Many(int(sys.argv[2]))
if sys.argv[1] == "sgd":
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
else:
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.ones(3, 2)
losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = (model(x) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
print("LOSSES", json.dumps(losses))
'''


def _losses(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=1800,
                       env=dict(os.environ, PYTHONPATH=str(cwd)))
    for line in r.stdout.splitlines():
        if line.startswith("LOSSES "):
            return json.loads(line[7:]), ""
    return None, (r.stderr.strip().splitlines() or ["no output"])[-1][:160]


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=600)
    a = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="msmigrate-depth-"))
    (work / "src").mkdir()
    (work / "src" / "many.py").write_text(PROGRAM, encoding="utf-8")
    subprocess.run([sys.executable, "-m", "msmigrate.cli", "convert", str(work / "src"), "-o", str(work / "ms"),
                    "-q"], cwd=ROOT, check=False)
    ok = True
    for opt in ("sgd", "adam"):
        torch_losses, _ = _losses([sys.executable, str(work / "src" / "many.py"), opt, str(a.n)], work / "src")
        ms_losses, err = _losses([sys.executable, "many.py", opt, str(a.n)], work / "ms")
        if ms_losses is None:
            ok = False
            print(f"{opt:5} {a.n} parameters: converted run failed: {err}")
            continue
        rel = max(abs(m - t) / max(abs(t), 1e-12) for m, t in zip(ms_losses, torch_losses))
        ok &= rel < 1e-4
        print(f"{opt:5} {a.n} parameters, GRAPH: losses {ms_losses} vs torch {torch_losses}: largest relative "
              f"difference {rel:.1e} -> {'pass' if rel < 1e-4 else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
