"""Parity of devices, seeds, process-wide switches, mixed precision and TensorBoard logging
(records in msmigrate/mappings/devices.py, helpers in templates/compat_parts/runtime.py).

torch here is the CPU build, so its answers (no CUDA, autocast and GradScaler disabling
themselves) are what a MindSpore CPU run must give too."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import CONVERTED, DIFFERENCE, TODO  # noqa: E402

from .harness import _TMP, check_function, check_layer, convert_snippet, load_converted, load_torch  # noqa: E402

OK = (CONVERTED, DIFFERENCE)


def statuses(sites):
    out = {}
    for s in sites:
        out.setdefault(s.api, set()).add(s.status)
    return out


def assert_sites(sites, *apis, status=OK):
    st = statuses(sites)
    for api in apis:
        assert api in st, (api, sorted(st))
        assert st[api] <= set(status), (api, st[api])


def assert_no_todo(sites):
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, todos


def quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # torch's "CUDA is not available, disabling" warnings
        return fn(*args)


# ------------------------------------------------------------------------------ devices
DEVICE_SRC = '''
import torch

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')


def fn():
    d1 = torch.device('cuda', 1)
    d2 = torch.device('cuda:0')
    d3 = torch.device(d2)
    d4 = torch.device(type='cpu')
    return [str(device), device.type, device.index, str(d1), d1.type, d1.index, repr(d1), d2.index,
            str(d3), d4.type, f"{device}", torch.cuda.is_available(), torch.cuda.device_count(),
            torch.backends.mps.is_available(), torch.backends.mps.is_built(),
            torch.backends.cudnn.is_available(), isinstance(device, torch.device)]


def host():
    with torch.cuda.device(-1):         # torch's no-op index (SimCLR's `with torch.cuda.device(args.gpu_index)`)
        torch.cuda.set_device(0)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    return [torch.cuda.current_device(), torch.cuda.get_device_name(0), torch.cuda.memory_allocated(),
            torch.cuda.max_memory_allocated(device), torch.cuda.memory_reserved(),
            torch.cuda.max_memory_reserved()]
'''

DEVICE_NET_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.use_cuda = torch.cuda.is_available()

    def forward(self, x):
        y = self.fc(x)
        if torch.cuda.is_available() and torch.cuda.device_count() > 1:
            y = y * 2
        if not self.use_cuda:
            y = y + 1
        return y


def make():
    return Net().to(torch.device('cuda' if torch.cuda.is_available() else 'cpu'))
'''


def test_device_values():
    t = load_torch(DEVICE_SRC)["fn"]()
    mod, code, sites = load_converted(DEVICE_SRC)
    m = mod.fn()
    assert m == t, (m, t)
    assert m[0] == "cpu" and m[11] is False and m[12] == 0
    assert_no_todo(sites)
    assert_sites(sites, "torch.device", "torch.cuda.is_available", "torch.cuda.device_count",
                 "torch.backends.mps.is_available", "torch.backends.cudnn.is_available")
    assert "_ms_compat.backend.on_accelerator" in code
    # a torch.device is a string in MindSpore: comparisons with strings work (torch says False there)
    Device = mod._ms_compat.Device
    assert mod.device == "cpu" and Device("cuda", 2) == "cuda:2" and Device(3) == "cuda:3"

    # CPU-only torch raises on these; on a MindSpore CPU run they answer harmlessly
    current, name, *memory = mod.host()
    assert current == 0
    assert isinstance(name, str) and name
    assert memory == [0, 0, 0, 0]
    assert_sites(sites, "torch.cuda.device", "torch.cuda.set_device", "torch.cuda.synchronize", "torch.cuda.empty_cache",
                 "torch.cuda.current_device", "torch.cuda.get_device_name", "torch.cuda.memory_allocated",
                 "torch.cuda.max_memory_allocated", "torch.cuda.memory_reserved",
                 "torch.cuda.max_memory_reserved", "torch.cuda.reset_peak_memory_stats")

    # device queries inside construct compile in GRAPH mode (properties read while compiling)
    code, sites = check_layer(DEVICE_NET_SRC, [np.ones((2, 3), np.float32)], graph=True)
    assert_no_todo(sites)
    assert ".to(" not in code


# ------------------------------------------------------------------------------ seeds
SEED_SRC = '''
import torch


def fn(s):
    torch.cuda.manual_seed(s)
    torch.cuda.manual_seed_all(s)
    torch.cuda.random.manual_seed(s)
    torch.cuda.random.manual_seed_all(s)
    torch.random.manual_seed(s)
    g = torch.Generator(device='cpu')
    g.manual_seed(s + 1)
    return [g.initial_seed(), torch.Generator().manual_seed(s).initial_seed()]


def draw(s):
    torch.random.manual_seed(s)
    return torch.rand(3)
'''


def test_seeds():
    import mindspore as ms
    t = load_torch(SEED_SRC)["fn"](5)
    mod, code, sites = load_converted(SEED_SRC)
    assert mod.fn(5) == t == [6, 5]
    assert ms.get_seed() == 5
    assert "_ms_compat.manual_seed(s)" in code and "ms.Generator()" in code
    # the same seed gives the same MindSpore numbers, another seed other numbers
    a, b, c = mod.draw(7).asnumpy(), mod.draw(7).asnumpy(), mod.draw(8).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert_no_todo(sites)
    assert_sites(sites, "torch.cuda.manual_seed", "torch.cuda.manual_seed_all", "torch.cuda.random.manual_seed",
                 "torch.cuda.random.manual_seed_all", "torch.random.manual_seed", "torch.Generator",
                 status=(DIFFERENCE,))


# ------------------------------------------------------------------------------ switches
SWITCH_SRC = '''
import torch
from torch.backends import cudnn

torch.backends.cudnn.benchmark = True
cudnn.enabled = True
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False


def fn(x):
    torch.backends.cudnn.benchmark = x.shape[0] > 1
    return x * 2
'''


def test_backend_switches():
    code, sites = check_function(SWITCH_SRC, [np.ones((2, 3), np.float32)])
    assert "backends" not in code and "cudnn" not in code
    assert_no_todo(sites)
    assert_sites(sites, "torch.backends.cudnn.benchmark", "torch.backends.cudnn.enabled",
                 "torch.backends.cudnn.allow_tf32", "torch.backends.cuda.matmul.allow_tf32",
                 "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction")
    by_api = {s.api: s for s in sites}
    assert by_api["torch.backends.cudnn.benchmark"].test.endswith("test_backend_switches")
    assert "kernels" in by_api["torch.backends.cudnn.benchmark"].note


ONCE_SRC = '''
import warnings
import torch

print("ENABLED", torch.are_deterministic_algorithms_enabled())
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
torch.use_deterministic_algorithms(True, warn_only=True)
print("ENABLED", torch.are_deterministic_algorithms_enabled())
torch.set_num_threads(2)
torch.set_num_threads(2)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    torch.use_deterministic_algorithms(False)
    torch.set_num_threads(1)
print("WARNINGS", len(caught))
'''


def test_once_per_process_switches():
    """mindspore.set_deterministic and threads_num raise when set twice; torch programs
    set them twice. A fresh process, since both change the whole process."""
    code, sites = convert_snippet(ONCE_SRC)
    assert "_ms_compat.set_deterministic(True)" in code and "_ms_compat.set_num_threads(2)" in code
    assert_no_todo(sites)
    assert_sites(sites, "torch.backends.cudnn.deterministic", "torch.use_deterministic_algorithms",
                 "torch.set_num_threads")
    path = _TMP / "ms_once_switches.py"
    path.write_text(code + "\nimport mindspore as ms\nprint('DETERMINISTIC', ms.get_context('deterministic'))\n",
                    encoding="utf-8")
    out = subprocess.run([sys.executable, str(path)], cwd=str(_TMP), capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "DETERMINISTIC ON" in out.stdout, out.stdout
    assert "WARNINGS 2" in out.stdout, out.stdout   # the two different later values are reported
    # off at the start, on once set, as torch answers
    assert out.stdout.index("ENABLED False") < out.stdout.index("ENABLED True"), out.stdout
    torch_run = subprocess.run([sys.executable, "-c", ONCE_SRC], capture_output=True, text=True, timeout=300)
    assert [ln for ln in torch_run.stdout.splitlines() if ln.startswith("ENABLED")] == \
        [ln for ln in out.stdout.splitlines() if ln.startswith("ENABLED")], torch_run.stdout


PROCESS_SRC = '''
import torch


def fn(x):
    torch.set_float32_matmul_precision('high')
    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(False)
    with torch.set_grad_enabled(False):
        y = x * 2
    with torch.autograd.set_grad_enabled(mode=False):
        y = y + x
    torch.autograd.set_grad_enabled(True)
    torch.set_grad_enabled(True)
    return y + torch.ones(3, dtype=torch.get_default_dtype())


def wide():
    torch.set_default_dtype(torch.float64)
'''


def test_process_switches():
    code, sites = check_function(PROCESS_SRC, [np.arange(6, dtype=np.float32).reshape(2, 3)])
    assert "set_float32_matmul_precision" not in code and "set_grad_enabled" not in code
    st = statuses(sites)
    assert st["torch.set_default_dtype"] == {CONVERTED, TODO}   # float32 goes, float64 has no switch
    assert_sites(sites, "torch.set_float32_matmul_precision", "torch.set_grad_enabled",
                 "torch.autograd.set_grad_enabled", "torch.get_default_dtype")
    mod, _, _ = load_converted(PROCESS_SRC)
    with pytest.raises(mod._ms_compat.MigrationError):
        mod.wide()


# ------------------------------------------------------------------------------ default device
DEFAULT_DEVICE_SRC = '''
import torch


def fn():
    seen = [str(torch.get_default_device())]
    try:
        with torch.device("meta"):
            seen.append(str(torch.get_default_device()))
            with torch.device("cpu") as inner:
                seen.append(f"{torch.get_default_device()} {inner}")
            seen.append(torch.get_default_device().type)
        seen.append(str(torch.get_default_device()))
        torch.set_default_device("meta")
        seen.append(str(torch.get_default_device()))
        try:
            with torch.device("cpu"):
                raise KeyError("inside")
        except KeyError:
            seen.append(str(torch.get_default_device()))
        seen.append(torch.get_default_device() != torch.device("cpu"))
    finally:
        torch.set_default_device(None)
    seen.append(str(torch.get_default_device()))
    seen.append(torch.get_default_device() == torch.device("cpu"))
    # a tensor's device against the default (transformers: no device context manager in use)
    made = torch.zeros(2).device
    seen += [made == torch.get_default_device(), made != torch.device("cpu"), str(torch.device(made))]
    return seen
'''


def test_default_device():
    """get_default_device reads back set_default_device and `with torch.device(...)` (innermost
    block first, restored when a block ends, also by an exception)."""
    t = load_torch(DEFAULT_DEVICE_SRC)["fn"]()
    mod, code, sites = load_converted(DEFAULT_DEVICE_SRC)
    assert mod.fn() == t == ["cpu", "meta", "cpu cpu", "meta", "cpu", "meta", "meta", True, "cpu", True,
                                   True, False, "cpu"]
    assert_no_todo(sites)
    assert_sites(sites, "torch.get_default_device", "torch.set_default_device", "torch.device")


# ------------------------------------------------------------------------------ DataParallel
DP_SRC = '''
import torch
import torch.nn as nn

device = 'cuda' if torch.cuda.is_available() else 'cpu'


def make():
    net = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    wrapped = torch.nn.DataParallel(net)
    assert wrapped is net or device == 'cpu'
    if device == 'cuda':
        net = torch.nn.DataParallel(net, device_ids=[0, 1])
    return nn.parallel.DataParallel(net)
'''


def test_data_parallel():
    """DataParallel(net) runs the network itself (torch runs the wrapper's forward = the module's)."""
    code, sites = check_layer(DP_SRC, [np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)])
    assert "_ms_compat.DataParallel(net)" in code, code
    assert_sites(sites, "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", status=(DIFFERENCE,))


DP_MODULE_SRC = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape) * (1 - 0.3 * i))
model = nn.DataParallel(net)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 12).reshape(3, 4)
for step in range(3):
    loss = F.mse_loss(model(x), torch.ones(3, 2))
    opt.zero_grad()
    loss.backward()
    opt.step()
state = model.module.state_dict()                  # a checkpoint of the wrapped network, as programs save it
fresh = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
fresh.load_state_dict(state)
assert model.module is net
weights = [model.module[0].weight, model.module[2].bias, fresh(x)]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_data_parallel_module(graph):
    """`model.module` of a DataParallel wrapper (its layers, its state_dict for a checkpoint): an AttributeError
    when the wrapper was dropped; now the wrapper keeps the network as `.module` and trains it as torch does."""
    from .harness import program_weights_match_torch

    code, _ = program_weights_match_torch(DP_MODULE_SRC, graph)
    assert "_ms_compat.DataParallel(net)" in code, code


# ------------------------------------------------------------------------------ mixed precision
AMP_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    @torch.cuda.amp.autocast()
    def forward(self, x):
        with torch.autocast(device_type='cuda', dtype=torch.float16):
            y = self.fc(x)
        with torch.cuda.amp.autocast(enabled=False), torch.no_grad():
            z = y * 2
        with torch.cpu.amp.autocast(enabled=False):
            z = z + 1
        return z


def make():
    return Net()


@torch.cuda.amp.custom_fwd
def double(x):
    return x * 2


@torch.amp.custom_fwd(device_type='cuda')
def triple(x):
    return x * 3


def fn(x):
    ctx = torch.amp.autocast('cuda', enabled=False)
    with ctx:
        y = double(x) + 1
    with torch.autocast('cuda', enabled=False) as ac:
        y = triple(y)
    return y
'''


BWD_SRC = '''
import torch


class Scale(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, g):
        return g * 2


@torch.amp.custom_bwd(device_type='cuda')
def helper(ctx, g):
    return g
'''


def test_autocast():
    code, sites = convert_snippet(BWD_SRC)
    assert "custom_bwd" not in code
    assert_sites(sites, "torch.cuda.amp.custom_bwd", "torch.amp.custom_bwd")
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    code, sites = quiet(check_layer, AMP_SRC, [x], "make", 1e-5, 1e-5, False, True)
    assert "autocast" not in code.split("def fn")[0]      # the with lines and the decorator went away
    assert "custom_fwd" not in code and "custom_bwd" not in code
    assert "_ms_compat.autocast('cuda', enabled=False)" in code   # kept where it is assigned / named
    assert_no_todo(sites)
    assert_sites(sites, "torch.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast")
    notes = " ".join(s.note for s in sites if "autocast" in s.api)
    assert "auto_mixed_precision(net, 'O1')" in notes
    code, sites = quiet(check_function, AMP_SRC, [x], "fn")
    assert_no_todo(sites)
    assert_sites(sites, "torch.amp.autocast", "torch.autocast", "torch.cuda.amp.custom_fwd", "torch.amp.custom_fwd")


SCALER_SRC = '''
import torch


class Opt:
    def __init__(self):
        self.steps = 0

    def step(self):
        self.steps += 1


def fn(x):
    scaler = torch.cuda.amp.GradScaler()
    scaler2 = torch.amp.GradScaler('cuda', 1024.0, growth_interval=10)
    opt = Opt()
    y = scaler.scale(x * 2)
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler2.step(opt)
    scaler.update()
    scaler.load_state_dict(scaler2.state_dict())
    return y, [opt.steps, scaler.get_scale(), scaler2.get_scale(), scaler.is_enabled(), scaler.state_dict()]
'''


def test_grad_scaler():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    t_y, t_rest = quiet(load_torch(SCALER_SRC)["fn"], __import__("torch").from_numpy(x))
    mod, code, sites = load_converted(SCALER_SRC)
    m_y, m_rest = mod.fn(__import__("mindspore").Tensor(x))
    np.testing.assert_array_equal(m_y.asnumpy(), t_y.numpy())
    assert m_rest == t_rest == [2, 1.0, 1.0, False, {}]
    assert "_ms_compat.GradScaler(1024.0, growth_interval=10)" in code
    assert_no_todo(sites)
    assert_sites(sites, "torch.cuda.amp.GradScaler", "torch.amp.GradScaler", status=(DIFFERENCE,))


# ------------------------------------------------------------------------------ logging
WRITER_SRC = '''
import argparse
from torch.utils.tensorboard import SummaryWriter


def fn(log_dir, values):
    parser = argparse.ArgumentParser()
    parser.add_argument('--lr', type=float, default=0.1)
    args = parser.parse_args([])
    writer = SummaryWriter(log_dir=log_dir, flush_secs=5)
    for step in range(3):
        writer.add_scalar('train/loss', values[step], step)
    writer.add_scalars('acc', {'top1': 0.5, 'top5': 0.75}, 3)
    writer.add_histogram('weights', values, 3)
    writer.add_text('note', 'hello', 0)
    writer.add_image('img', values.reshape(1, 2, 2), 0)
    writer.add_hparams({'lr': args.lr}, {'loss': 0.25})
    writer.add_graph(None)
    writer.add_embedding(values.reshape(2, 2))
    writer.flush()
    writer.close()
    with SummaryWriter(log_dir) as w2:
        w2.add_scalar('train/loss', values[3], 3)
    return writer.get_logdir()
'''


TQDM_SRC = '''
import argparse
import torch
from tqdm import tqdm, trange


def main(loader):
    parser = argparse.ArgumentParser(description='train')
    parser.add_argument('--epochs', type=int, default=3)
    args = parser.parse_args()
    for epoch in trange(args.epochs):
        for x in tqdm(loader, desc=f'epoch {epoch}', leave=False):
            torch.relu(x)
'''


def test_summary_writer(tmp_path):
    import mindspore as ms
    # argparse and tqdm are no torch: untouched (tqdm is not installed here, so only converted)
    code, sites = convert_snippet(TQDM_SRC)
    assert "import argparse\n" in code and "from tqdm import tqdm, trange\n" in code
    assert "parser = argparse.ArgumentParser(description='train')" in code
    assert "for epoch in trange(args.epochs):" in code
    assert "for x in tqdm(loader, desc=f'epoch {epoch}', leave=False):" in code
    assert not [s for s in sites if "tqdm" in s.api or "argparse" in s.api]
    code, sites = convert_snippet(WRITER_SRC)
    assert "argparse.ArgumentParser()" in code
    assert_no_todo(sites)
    assert_sites(sites, "torch.utils.tensorboard.SummaryWriter", status=(DIFFERENCE,))
    mod, _, _ = load_converted(WRITER_SRC)
    values = np.array([0.5, 0.25, 0.125, 1.0], np.float32)
    log_dir = str(tmp_path / "run")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # add_embedding is not written: it warns once
        assert mod.fn(log_dir, ms.Tensor(values)) == log_dir
    with open(os.path.join(log_dir, "scalars.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    got = [(r["tag"], int(r["step"]), float(r["value"])) for r in rows]
    assert got == [("train/loss", 0, 0.5), ("train/loss", 1, 0.25), ("train/loss", 2, 0.125),
                   ("acc/top1", 3, 0.5), ("acc/top5", 3, 0.75), ("train/loss", 3, 1.0)]
    with open(os.path.join(log_dir, "histograms.csv"), newline="") as f:
        hist = list(csv.DictReader(f))
    assert hist[0]["tag"] == "weights" and int(hist[0]["count"]) == 4
    assert float(hist[0]["mean"]) == pytest.approx(values.mean())
    assert float(hist[0]["max"]) == pytest.approx(1.0)
    with open(os.path.join(log_dir, "text.jsonl")) as f:
        assert json.loads(f.readline())["text"] == "hello"
    with open(os.path.join(log_dir, "hparams.jsonl")) as f:
        hp = json.loads(f.readline())
    assert hp["hparams"] == {"lr": 0.1} and hp["metrics"] == {"loss": 0.25}
    img = np.load(os.path.join(log_dir, "images", "img_0.npy"))
    np.testing.assert_array_equal(img, values.reshape(1, 2, 2))


# ------------------------------------------------------------------------------ out-of-memory handlers
OOM_SRC = '''
import torch


def attempt(fail):
    if fail == "oom":
        raise torch.cuda.OutOfMemoryError("CUDA out of memory")
    if fail == "other":
        raise RuntimeError("shape mismatch")
    return "ran"


def fn(fail):
    try:
        return attempt(fail)
    except torch.cuda.OutOfMemoryError:
        return "retried"
    except torch.OutOfMemoryError:
        return "unreachable"


def kinds():
    e = torch.OutOfMemoryError("x")
    return isinstance(e, RuntimeError), isinstance(e, torch.cuda.OutOfMemoryError)
'''


def test_out_of_memory_handler():
    """`except torch.cuda.OutOfMemoryError:` (Pytorch-UNet's train.py retries with checkpointing) was a TODO: any
    exception passing the handler stopped the program. It is a RuntimeError subclass, as torch's, that only code
    raising it raises: the handler takes what torch's takes, and another error passes through it."""
    t = load_torch(OOM_SRC)
    mod, code, sites = load_converted(OOM_SRC)
    assert_no_todo(sites)
    assert_sites(sites, "torch.cuda.OutOfMemoryError", "torch.OutOfMemoryError")
    for fail in ("none", "oom"):
        assert mod.fn(fail) == t["fn"](fail) == {"none": "ran", "oom": "retried"}[fail]
    for f in (mod.fn, t["fn"]):
        with pytest.raises(RuntimeError, match="shape mismatch"):
            f("other")
    assert mod.kinds() == t["kinds"]() == (True, True)
