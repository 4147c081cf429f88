"""torch.distributed / DistributedDataParallel / DistributedSampler -> MindSpore data parallel.

Fast checks run in this process (the sampler's index order against torch's, a group of one
process against torch's gloo group of one). One check launches real 2-process jobs on this
machine's CPU: the same program under torchrun (gloo) and, converted, under msrun, comparing
every collective's result, DDP's initial broadcast and the averaged gradients. The DDP
example (examples/distributed/ddp_mlp) converted with no TODO, trained by 2 msrun workers,
ending with the weights of a single-process run over the same global batches (torch and
converted), which runs in bench/ddp_parity.py (measured there: weights within 2e-7, per-step losses
within 8e-7); CI converts that example only. Set MSMIGRATE_SKIP_MSRUN=1 to skip the multi-process test.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.parity.harness import load_converted, load_torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

needs_msrun = pytest.mark.skipif(os.environ.get("MSMIGRATE_SKIP_MSRUN") == "1" or
                                 not (Path(sys.executable).parent / "msrun").exists(),
                                 reason="msrun multi-process runs disabled or msrun not installed")


# ------------------------------------------------------------------ DistributedSampler
SAMPLER_SRC = '''
from torch.utils.data.distributed import DistributedSampler

def orders(dataset, num_replicas, rank, shuffle, seed, drop_last, epochs):
    s = DistributedSampler(dataset, num_replicas=num_replicas, rank=rank, shuffle=shuffle, seed=seed,
                           drop_last=drop_last)
    out = []
    for epoch in range(epochs):
        s.set_epoch(epoch)
        out.append([int(i) for i in s])
    return out, len(s)
'''


def test_distributed_sampler_matches_torch():
    t = load_torch(SAMPLER_SRC)
    mod, code, sites = load_converted(SAMPLER_SRC)
    assert "_ms_compat.DistributedSampler(" in code
    assert all(s.status != "todo" for s in sites)
    for n, replicas, shuffle, seed, drop_last in [(10, 2, True, 0, False), (11, 3, True, 7, False),
                                                  (11, 3, True, 7, True), (5, 4, False, 0, False),
                                                  (2, 5, True, 1, False), (1000, 8, True, 2 ** 33 + 5, True),
                                                  (257, 2, False, 0, True)]:
        data = list(range(n))
        for rank in range(replicas):
            args = (data, replicas, rank, shuffle, seed, drop_last, 3)
            assert mod.orders(*args) == t["orders"](*args), (n, replicas, rank, shuffle, seed, drop_last)


# ------------------------------------------------------------------ one process, no launcher
SINGLE_SRC = '''
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def fn():
    dist.init_process_group(backend="gloo")
    t = torch.tensor([1.0, 2.0])
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    m = torch.tensor([4.0, -1.0])
    dist.all_reduce(m, op=dist.ReduceOp.MAX)
    parts = [torch.zeros(2)]
    dist.all_gather(parts, t)
    b = torch.tensor([3.0])
    dist.broadcast(b, 0)
    dist.barrier()
    r = [dist.get_rank(), dist.get_world_size(), dist.is_initialized(), dist.is_available()]
    model = DDP(nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)))
    keys = [sorted(model.state_dict()), sorted(model.module.state_dict())]
    # freed while its group is alive: a DDP freed after destroy_process_group can hang in gloo's destructor
    del model
    dist.destroy_process_group()
    return r, t.tolist(), m.tolist(), [x.tolist() for x in parts], b.tolist(), keys, dist.is_initialized()
'''


def test_single_process_group(monkeypatch):
    """Started with plain python (no torchrun, no msrun) the converted program is rank 0 of 1."""
    from bench.ddp_parity import free_port

    for name, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                        ("MASTER_PORT", str(free_port()))):
        monkeypatch.setenv(name, value)
    expected = load_torch(SINGLE_SRC)["fn"]()
    mod, code, sites = load_converted(SINGLE_SRC)
    assert "_ms_compat.init_process_group()" in code      # the backend is dropped
    assert all(s.status != "todo" for s in sites)
    with pytest.warns(UserWarning, match="not started by msrun"):
        got = mod.fn()
    assert got == expected
    assert expected[0] == [0, 1, True, True] and expected[-1] is False


def test_launch_script_and_parallel_mode(tmp_path):
    """A converted program that calls init_process_group gets <name>_msrun.sh next to it (a module
    without a __main__ block does not); --parallel-mode writes the one setting line of the helper."""
    from msmigrate.converter import convert_tree

    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "train.py").write_text(SINGLE_SRC + "\n\nif __name__ == '__main__':\n    fn()\n")
    (src / "pkg" / "lib.py").write_text(SINGLE_SRC)
    tree = convert_tree(src, tmp_path / "out", jobs=1, parallel_mode="auto")
    assert tree.launch_scripts == ["pkg/train_msrun.sh"]
    script = (tmp_path / "out" / "pkg" / "train_msrun.sh").read_text()
    assert "msrun --worker_num=\"$NPROC\" --local_worker_num=\"$NPROC\"" in script
    assert '"$(dirname "$0")/train.py" "$@"' in script and os.access(tmp_path / "out" / "pkg" / "train_msrun.sh", os.X_OK)
    helper = (tmp_path / "out" / "_ms_compat.py").read_text()   # the one helper, at the output's top
    assert 'PARALLEL_MODE = "auto_parallel"' in helper and 'PARALLEL_MODE = "data_parallel"' not in helper
    default = convert_tree(src, tmp_path / "out2", jobs=1)
    assert 'PARALLEL_MODE = "data_parallel"' in (tmp_path / "out2" / "_ms_compat.py").read_text()
    report = (tmp_path / "out2" / "msmigrate-report.md")
    from msmigrate.report import write_reports
    write_reports(default, tmp_path / "out2")
    assert "pkg/train_msrun.sh" in report.read_text()


SPAWN_SRC = '''
import torch.multiprocessing as mp

calls = []


def worker(rank, a, b):
    calls.append((rank, a, b))


def fn():
    mp.spawn(worker, args=(1, "x"), nprocs=1)
    return calls
'''


def test_spawn_calls_fn_with_rank():
    """torch.multiprocessing.spawn(fn, args, nprocs) calls fn(rank, *args) in each process it starts;
    msrun starts the processes, so the converted call runs fn once, with this process's rank."""
    mod, code, sites = load_converted(SPAWN_SRC)
    assert "_ms_compat.spawn(worker, args=(1, \"x\"), nprocs=1)" in code
    assert mod.fn() == [(0, 1, "x")]


# ------------------------------------------------------------------ two processes
MAIN_SRC = '''
import json
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from trainer import fit


def main(out_dir):
    dist.init_process_group(backend="gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    out = {"rank": rank, "world": world, "initialized": dist.is_initialized(), "available": dist.is_available()}
    t = torch.tensor([1.0 + rank, -2.0 * rank, 3.0])
    alias = t
    dist.all_reduce(t)
    out["sum"] = t.tolist()
    out["alias"] = alias.tolist()
    for name, op in (("max", dist.ReduceOp.MAX), ("min", dist.ReduceOp.MIN), ("prod", dist.ReduceOp.PRODUCT)):
        t = torch.tensor([1.0 + rank, -2.0 * rank, 3.0])
        dist.all_reduce(t, op=op)
        out[name] = t.tolist()
    s = torch.tensor(2.0 + rank)
    dist.all_reduce(s, op=dist.ReduceOp.MAX)
    out["scalar_max"] = s.item()
    n = torch.tensor([rank + 1, 5])
    work = dist.all_reduce(n, async_op=True)
    work.wait()
    out["int_sum"] = n.tolist()
    b = torch.tensor([[rank + 0.5, 2.0]])
    dist.broadcast(b, src=1)
    out["broadcast"] = b.tolist()
    parts = [torch.zeros(2) for _ in range(world)]
    dist.all_gather(parts, torch.tensor([float(rank), 10.0 * rank]))
    out["all_gather"] = [p.tolist() for p in parts]

    # every rank starts from different weights: DDP copies rank 0's to all of them
    net = nn.Linear(3, 2)
    net.load_state_dict({"weight": torch.arange(6.0).reshape(2, 3) / 10 + rank, "bias": torch.tensor([rank, -1.0])})
    model = DDP(net)
    out["synced"] = model.module.weight.tolist()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.arange(12.0).reshape(4, 3) * (rank + 1) / 10       # each rank its own batch
    fit(model, optimizer, x, steps=3)
    out["trained"] = {k: v.tolist() for k, v in model.module.state_dict().items()}
    dist.barrier()
    with open(f"{out_dir}/out_{rank}.json", "w") as f:
        json.dump(out, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
'''

# no torch.distributed here: the converted train step gets no GradReducer line, and compile_step's
# safety net makes the optimizer average the gradients (the DDP model was built in main.py)
TRAINER_SRC = '''
import torch


def fit(model, optimizer, x, steps):
    model.train()
    for _ in range(steps):
        optimizer.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        optimizer.step()
'''


def _env(torch: bool) -> dict:
    from bench.ddp_parity import _env as bench_env
    return bench_env(torch)


def _close(a, b, path=""):
    if isinstance(a, dict):
        assert sorted(a) == sorted(b), (path, sorted(a), sorted(b))
        for k in a:
            _close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (bool, str)) or a is None:
        assert a == b, (path, a, b)
    else:
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=1e-6, atol=1e-6,
                                   err_msg=path)


@needs_msrun
def test_collectives_two_workers(tmp_path):
    from bench.ddp_parity import Job, free_port
    from msmigrate.converter import convert_tree

    src = tmp_path / "src"
    src.mkdir()
    (src / "main.py").write_text(MAIN_SRC)
    (src / "trainer.py").write_text(TRAINER_SRC)
    tree = convert_tree(src, tmp_path / "ms", jobs=1)
    assert not [s for s in tree.sites if s.status == "todo"], [s for s in tree.sites if s.status == "todo"]
    assert tree.launch_scripts == ["main_msrun.sh"]
    ms_main = (tmp_path / "ms" / "main.py").read_text()
    assert "_ms_compat.DistributedDataParallel(net)" in ms_main and "GradReducer" not in ms_main
    (tmp_path / "torch_out").mkdir()
    (tmp_path / "ms_out").mkdir()
    bin_dir = Path(sys.executable).parent
    # both jobs at once: most of their time is start-up and waiting for the other processes
    def torch_run():
        return Job([str(bin_dir / "torchrun"), "--nproc_per_node=2", "--master_addr=127.0.0.1",
                    f"--master_port={free_port()}", str(src / "main.py"), str(tmp_path / "torch_out")],
                   tmp_path, torch=True)
    torch_job = torch_run()
    ms_job = Job([str(bin_dir / "msrun"), "--worker_num=2", "--local_worker_num=2", f"--master_port={free_port()}",
                  f"--log_dir={tmp_path / 'msrun_log'}", "--join=True", "--cluster_time_out=120",
                  str(tmp_path / "ms" / "main.py"), str(tmp_path / "ms_out")], tmp_path, torch=False)
    torch_error = None
    try:
        torch_job.finish()
    except RuntimeError as exc:   # the reference, not the conversion: torch's gloo worker has aborted
        if "exitcode: -6" not in str(exc):   # ("terminate called without an active exception") beside msrun
            raise
        torch_error = exc
    ms_job.finish()
    for _ in range(2 if torch_error else 0):   # run it again alone, once msrun is done
        try:
            torch_run().finish()
            break
        except RuntimeError as exc:
            if "exitcode: -6" not in str(exc):
                raise
    else:
        if torch_error:
            raise torch_error
    for rank in (0, 1):
        expected = json.loads((tmp_path / "torch_out" / f"out_{rank}.json").read_text())
        got = json.loads((tmp_path / "ms_out" / f"out_{rank}.json").read_text())
        _close(got, expected)
    # the gradients were averaged: both ranks end with the same weights, and they moved
    a, b = (json.loads((tmp_path / "ms_out" / f"out_{r}.json").read_text()) for r in (0, 1))
    _close(a["trained"], b["trained"])
    assert not np.allclose(a["trained"]["weight"], a["synced"])
    log = "\n".join(p.read_text(errors="replace") for p in (tmp_path / "msrun_log").glob("worker_*.log"))
    assert "averaged across processes in the optimizer" in log       # the safety net's warning


def test_ddp_example_converts_with_no_todo_and_a_launch_script(tmp_path):
    """The DDP example converts with 0 TODO and gets its msrun script. Its 2-worker training against a
    single process (weights within 2e-7) runs in bench/ddp_parity.py: the collectives test above already
    trains a DDP model under msrun in CI, and a second msrun job would cost a minute of CI time."""
    from bench.ddp_parity import convert

    assert convert(tmp_path) == 0


SYNC_BN_SRC = '''
import torch
import torch.nn as nn


def make():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
    return nn.SyncBatchNorm.convert_sync_batchnorm(model)
'''


def test_convert_sync_batchnorm():
    """One process: the converted model is the model (torch's SyncBatchNorm computes plain batch statistics
    there), train mode compared with torch's converted model; several processes: MigrationError."""
    import numpy as np
    from tests.parity.harness import check_layer

    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    code, sites = check_layer(SYNC_BN_SRC, [x], train=True)
    assert "_ms_compat.convert_sync_batchnorm(model)" in code and all(s.status != "todo" for s in sites)
    mod, _, _ = load_converted(SYNC_BN_SRC)
    _refused_with_two_processes(mod.make, "per process")


def _refused_with_two_processes(make, match):
    """`make()` with the converted helper's process group set to two processes raises MigrationError."""
    helper = __import__("_ms_compat")
    saved = dict(helper._GROUP)
    helper._GROUP.update(initialized=True, size=2)
    try:
        with pytest.raises(helper.MigrationError, match=match):
            make()
    finally:
        helper._GROUP.clear()
        helper._GROUP.update(saved)


SYNC_BN_LAYERS_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, norm_layer=nn.SyncBatchNorm):
        super().__init__()
        self.conv = nn.Conv1d(3, 4, 3)
        self.bn = nn.SyncBatchNorm(4, momentum=0.2)
        self.fc = nn.Linear(4, 5)
        self.bn2 = norm_layer(5, affine=False)

    def forward(self, x):
        h = self.bn(self.conv(x))
        return self.bn2(self.fc(h.mean(-1)))


def make():
    return Net()
'''


@pytest.mark.parametrize("train", [True, False])
def test_sync_batchnorm_layer(train):
    """nn.SyncBatchNorm as a layer (on a (N, C, L) input and a (N, C) one, and passed as norm_layer): in one
    process torch's computes plain batch statistics; the converted layer's outputs, gradients (train) and running
    statistics after the call match torch's. Several processes: building one raises MigrationError naming the
    line."""
    import numpy as np
    from tests.parity.harness import check_layer

    x = np.random.default_rng(0).standard_normal((4, 3, 7)).astype(np.float32)
    code, sites = check_layer(SYNC_BN_LAYERS_SRC, [x], train=train, grad=train)
    assert "_ms_compat.SyncBatchNorm(4, momentum=0.2)" in code and all(s.status != "todo" for s in sites), code
    mod, _, _ = load_converted(SYNC_BN_LAYERS_SRC)
    import mindspore as ms
    import torch
    from msmigrate.weights import load_torch_state_dict
    tnet, mnet = load_torch(SYNC_BN_LAYERS_SRC)["make"](), mod.make()
    load_torch_state_dict(mnet, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
    tnet.train(train)
    mnet.set_train(train)
    for _ in range(2):
        tnet(torch.from_numpy(x))
        mnet(ms.Tensor(x))
    for t_bn, m_bn in ((tnet.bn, mnet.bn), (tnet.bn2, mnet.bn2)):
        np.testing.assert_allclose(m_bn.moving_mean.asnumpy(), t_bn.running_mean.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(m_bn.moving_variance.asnumpy(), t_bn.running_var.numpy(), rtol=1e-5, atol=1e-6)
    _refused_with_two_processes(mod.make, "nn.SyncBatchNorm with several processes")
