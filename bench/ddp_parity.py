"""DDP parity: a torchrun-style DistributedDataParallel program, converted, trained with msrun.

    python bench/ddp_parity.py [--work DIR] [--epochs 3] [--skip-torch] [--skip-msrun]

The program is examples/distributed/ddp_mlp/train_ddp.py (init_process_group, LOCAL_RANK,
DistributedSampler + set_epoch, DDP, rank-0 logging and torch.save(model.module.state_dict()),
barrier, destroy_process_group). From one initial state_dict (torch.save) it runs:

  torch_1  1 gloo process (torchrun's variables set by hand), --batch-size 2B (the single-process reference)
  torch_2  torchrun, 2 gloo processes, --batch-size B    (torch's DDP)
  ms_1     the converted program, plain python (no msrun: one process), --batch-size 2B
  ms_2     the converted program under msrun, 2 CPU workers, --batch-size B

Two processes with B samples each see, at every step, the same 2B samples as one process with
2B (DistributedSampler interleaves one permutation), and DDP averages the gradients of the two
mean losses, which is the gradient of the mean over 2B: the four runs must end with the same
weights. Printed: the conversion's TODO count, each run's wall time, and the max abs difference
of the final weights and of the logged per-step losses between the runs.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "distributed" / "ddp_mlp"
BIN = Path(sys.executable).parent

# the converted program must run without torch (the venv has it: make importing it fail)
NO_TORCH = """
import runpy, sys, os
for name in ('torch', 'torchvision', 'msmigrate'):
    sys.modules[name] = None
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(os.path.abspath(script))
runpy.run_path(script, run_name='__main__')
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(torch: bool) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"   # msrun and torchrun from this venv
    env["OMP_NUM_THREADS"] = "1"
    if torch:   # gloo on the loopback device: left to itself it takes the address the host name resolves to
        env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    else:
        env["MS_DEVICE_TARGET"] = "CPU"
        env["GLOG_v"] = "3"
    return env


class Job:
    """A program started in the background; finish() waits for it and raises, with the output and
    msrun's worker logs, when it failed."""

    def __init__(self, cmd, cwd: Path, torch: bool, env_extra=None, log_dir: Path = None):
        self.cmd, self.cwd, self.log_dir = cmd, cwd, log_dir or cwd / "msrun_log"
        self.out = open(cwd / f"job_{os.getpid()}_{id(self)}.log", "w+")
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(cmd, cwd=cwd, env={**_env(torch), **(env_extra or {})}, stdout=self.out,
                                     stderr=subprocess.STDOUT, text=True)

    def finish(self, timeout: int = 300) -> float:
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = "timeout"
        seconds = time.perf_counter() - self.start
        self.out.seek(0)
        text = self.out.read()
        self.out.close()
        if code != 0:
            logs = ""
            for log in sorted(self.log_dir.glob("worker_*.log")) if self.log_dir.exists() else []:
                lines = [ln for ln in log.read_text(errors="replace").splitlines() if not ln.startswith("[")]
                logs += f"\n--- {log.name}\n" + "\n".join(lines[-40:])
            raise RuntimeError(f"{' '.join(map(str, self.cmd))} exited {code}\n--- output\n{text[-6000:]}{logs}")
        return seconds


def run(cmd, cwd: Path, torch: bool, timeout: int = 300, env_extra=None) -> float:
    """Run a program to its end; returns its wall time."""
    return Job(cmd, cwd, torch, env_extra).finish(timeout)


def write_init_weights(path: Path) -> None:
    """The model's initial state_dict, made by the torch program's own MLP class."""
    code = (f"import importlib.util, torch\n"
            f"spec = importlib.util.spec_from_file_location('train_ddp', {str(EXAMPLE / 'train_ddp.py')!r})\n"
            f"m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            f"torch.manual_seed(1234); torch.save(m.MLP(dropout=0.0).state_dict(), {str(path)!r})\n")
    subprocess.run([sys.executable, "-c", code], check=True, env=_env(True))


def load_weights(path: Path) -> dict:
    """A torch .pt file or a converted run's MindSpore checkpoint, as {name: float64 array}."""
    if path.suffix == ".pt":
        import torch
        return {k: v.double().numpy() for k, v in torch.load(path).items()}
    import mindspore as ms
    # _ms_compat.save also stores the layout of what was saved (a string entry): only the tensors
    return {k: v.asnumpy().astype(np.float64) for k, v in ms.load_checkpoint(str(path)).items()
            if hasattr(v, "asnumpy")}


def weight_diff(a: dict, b: dict) -> float:
    assert sorted(a) == sorted(b), (sorted(a), sorted(b))
    return max(float(np.max(np.abs(a[k] - b[k]))) for k in a)


def step_losses(path: Path) -> np.ndarray:
    return np.asarray([json.loads(ln)["loss"] for ln in path.read_text().splitlines() if '"step"' in ln])


def convert(work: Path, parallel_mode: str = "data") -> int:
    """Convert the example into work/ms; returns the number of TODO sites."""
    from msmigrate.converter import convert_tree
    from msmigrate.registry import TODO

    out = work / "ms"
    if out.exists():
        shutil.rmtree(out)
    tree = convert_tree(EXAMPLE, out, jobs=1, parallel_mode=parallel_mode)
    assert (out / "train_ddp_msrun.sh").exists(), "no msrun launch script written"
    return sum(1 for s in tree.sites if s.status == TODO)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", default="", help="working directory (default: a fresh temporary one)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=16, help="B: samples per process and step")
    p.add_argument("--samples", type=int, default=256)
    p.add_argument("--skip-torch", action="store_true", help="only the converted runs")
    p.add_argument("--skip-msrun", action="store_true", help="no 2-worker runs (torch_2, ms_2)")
    p.add_argument("--skip-torch-ddp", action="store_true", help="no torchrun run with 2 processes (torch_2)")
    p.add_argument("--concurrent", action="store_true",
                   help="start all runs at once (less wall time; the seconds printed are then contended)")
    args = p.parse_args(argv)
    work = Path(args.work or tempfile.mkdtemp(prefix="ddp_parity_")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT))

    figures = {"todo_sites": convert(work)}
    init = work / "init.pt"
    write_init_weights(init)
    common = ["--deterministic", "--epochs", str(args.epochs), "--samples", str(args.samples),
              "--init-weights", str(init)]
    B = args.batch_size
    runs = {}
    if not args.skip_torch:
        # one process: what torchrun --nproc_per_node=1 would set, without torchrun's own start-up
        runs["torch_1"] = ([sys.executable, str(EXAMPLE / "train_ddp.py"), "--batch-size", str(2 * B)], True)
        if not (args.skip_msrun or args.skip_torch_ddp):
            runs["torch_2"] = ([str(BIN / "torchrun"), "--nproc_per_node=2", f"--master_port={free_port()}",
                                str(EXAMPLE / "train_ddp.py"), "--batch-size", str(B)], True)
    runs["ms_1"] = ([sys.executable, "-c", NO_TORCH, str(work / "ms" / "train_ddp.py"), "--batch-size", str(2 * B)],
                    False)
    if not args.skip_msrun:
        runs["ms_2"] = ([str(BIN / "msrun"), "--worker_num=2", "--local_worker_num=2", f"--master_port={free_port()}",
                         f"--log_dir={work / 'msrun_log'}", "--join=True", "--cluster_time_out=120",
                         str(work / "ms" / "train_ddp.py"), "--batch-size", str(B)], False)
    weights, losses, jobs = {}, {}, {}
    for name, (cmd, is_torch) in runs.items():
        save, metrics = work / f"{name}.{'pt' if is_torch else 'ckpt'}", work / f"{name}.jsonl"
        metrics.unlink(missing_ok=True)
        single = {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1",
                  "MASTER_PORT": str(free_port())} if name == "torch_1" else None
        jobs[name] = (Job(cmd + common + ["--save", str(save), "--metrics", str(metrics)], work, is_torch,
                          env_extra=single), save, metrics)
        if not args.concurrent:
            figures[f"{name}_seconds"] = round(jobs[name][0].finish(), 1)
    for name, (job, save, metrics) in jobs.items():
        if args.concurrent:
            figures[f"{name}_seconds"] = round(job.finish(), 1)
        weights[name] = load_weights(save)
        losses[name] = step_losses(metrics)
    pairs = [("ms_2", "ms_1"), ("ms_2", "torch_1"), ("ms_2", "torch_2"), ("ms_1", "torch_1"), ("torch_2", "torch_1")]
    for a, b in pairs:
        if a in weights and b in weights:
            figures[f"weights_{a}_vs_{b}"] = weight_diff(weights[a], weights[b])
            figures[f"losses_{a}_vs_{b}"] = float(np.max(np.abs(losses[a] - losses[b])))
    figures["steps"] = int(len(next(iter(losses.values()))))
    figures["moved_from_init"] = weight_diff(next(iter(weights.values())), load_weights(init))
    for k, v in figures.items():
        print(f"{k:32s} {v:.3g}" if isinstance(v, float) else f"{k:32s} {v}")
    return figures


if __name__ == "__main__":
    main()
