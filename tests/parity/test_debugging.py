"""Parity of debugging and profiling code (records in msmigrate/mappings/debugging.py,
helpers in templates/compat_parts/debugging.py): torch.profiler loops, anomaly detection,
module and tensor hooks. Torch and the converted code run side by side on CPU."""
from __future__ import annotations

import glob
import json
import os
import warnings

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import CONVERTED, DIFFERENCE, TODO  # noqa: E402

from .harness import assert_close, check_layer, load_converted, load_torch  # noqa: E402


def _statuses(sites):
    out = {}
    for s in sites:
        out.setdefault(s.api, set()).add(s.status)
    return out


def _no_todo(sites):
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, todos


# ------------------------------------------------------------------------------ profiler
PROFILE_SRC = '''
import torch
from torch.profiler import profile, record_function, schedule, tensorboard_trace_handler, ProfilerActivity


def compute(x, w, step):
    return torch.relu(torch.matmul(x, w)) * (step + 1)


def profiled(x, w):
    calls = []

    def on_ready(p):
        calls.append(p.step_num)

    outs = []
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=on_ready, record_shapes=True, profile_memory=False, with_stack=False) as prof:
        for step in range(6):
            with record_function("forward"):
                outs.append(compute(x, w, step))
            prof.step()
    return outs, calls, prof.step_num


def to_dir(x, w, logdir):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                on_trace_ready=torch.profiler.tensorboard_trace_handler(logdir)) as prof:
        out = compute(x, w, 0)
    return out


def unprofiled(x, w):
    return [compute(x, w, step) for step in range(6)]
'''


def test_profiler_schedule_and_handler(tmp_path, monkeypatch):
    import torch

    monkeypatch.chdir(tmp_path)
    tns = load_torch(PROFILE_SRC)
    mod, code, sites = load_converted(PROFILE_SRC)
    _no_todo(sites)
    st = _statuses(sites)
    for api in ("torch.profiler.profile", "torch.profiler.schedule", "torch.profiler.tensorboard_trace_handler",
                "torch.profiler.record_function", "torch.profiler.ProfilerActivity.CPU",
                "torch.profiler.ProfilerActivity.CUDA"):
        assert st.get(api, {TODO}) <= {CONVERTED, DIFFERENCE}, (api, st.get(api))
    assert "record_function" not in code          # the `with` line goes, its body stays
    assert "ms.profiler.schedule(wait=1, warmup=1, active=2, repeat=1)" in code

    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    import mindspore as ms
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_outs, t_calls, t_steps = tns["profiled"](torch.from_numpy(x), torch.from_numpy(w))
    m_outs, m_calls, m_steps = mod.profiled(ms.Tensor(x), ms.Tensor(w))
    # the schedule counts steps and fires the handler as torch does
    assert (m_calls, m_steps) == (t_calls, t_steps) == ([4], 6)
    # profiling leaves the computation unchanged: same values as torch and as the unprofiled run
    assert_close(m_outs, t_outs, what="profiled")
    assert_close(m_outs, mod.unprofiled(ms.Tensor(x), ms.Tensor(w)), rtol=0, atol=0, what="unprofiled")
    # without a tensorboard_trace_handler the results go to ./ms_profiler
    traces = glob.glob(str(tmp_path / "ms_profiler" / "*_ascend_ms" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"))
    assert len(traces) == 1, traces
    names = {e.get("name") for e in json.load(open(traces[0]))}
    assert "MatMul" in names or any("MatMul" in str(n) for n in names), names

    logdir = str(tmp_path / "tb")
    t_out = tns["to_dir"](torch.from_numpy(x), torch.from_numpy(w), str(tmp_path / "torch_tb"))
    assert_close(mod.to_dir(ms.Tensor(x), ms.Tensor(w), logdir), t_out)
    written = glob.glob(os.path.join(logdir, "*_ascend_ms", "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
    ops_csv = glob.glob(os.path.join(logdir, "*_ascend_ms", "FRAMEWORK", "cpu_op_detail_info_*.csv"))
    assert written and ops_csv, os.listdir(logdir)


AUTOGRAD_PROFILE_SRC = '''
import torch


def run(x, w, trace_path):
    with torch.autograd.profiler.profile(use_cuda=False, record_shapes=True) as prof:
        y = torch.matmul(x, w) + 1
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    prof.export_chrome_trace(trace_path)
    return y, table, len(prof.key_averages())
'''


def test_autograd_profiler_table(tmp_path, monkeypatch):
    import mindspore as ms
    import torch

    monkeypatch.chdir(tmp_path)
    mod, code, sites = load_converted(AUTOGRAD_PROFILE_SRC)
    _no_todo(sites)
    assert "_ms_compat.Profile(use_cuda=False, record_shapes=True)" in code
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    w = rng.standard_normal((4, 2)).astype(np.float32)
    t_y, t_table, t_n = load_torch(AUTOGRAD_PROFILE_SRC)["run"](torch.from_numpy(x), torch.from_numpy(w),
                                                                str(tmp_path / "t.json"))
    m_y, m_table, m_n = mod.run(ms.Tensor(x), ms.Tensor(w), str(tmp_path / "m.json"))
    assert_close(m_y, t_y)
    # the same table layout; MindSpore's rows are its kernels, torch's are aten:: ops
    for col in ("Name", "Self CPU %", "Self CPU", "CPU total", "CPU time avg", "# of Calls", "Self CPU time total"):
        assert col in t_table and col in m_table, col
    assert "aten::" in t_table and "MatMul" in m_table and m_n >= 1
    # both chrome traces load; MindSpore's is a plain event list, torch's has "traceEvents"
    assert "traceEvents" in json.load(open(tmp_path / "t.json"))
    events = json.load(open(tmp_path / "m.json"))
    assert isinstance(events, list) and any(e.get("ph") == "X" for e in events)


def test_profiler_disabled_and_before_results():
    mod, code, _ = load_converted('''
import torch


def run(x):
    with torch.autograd.profiler.profile(enabled=False) as prof:
        y = x * 2
    return y, prof
''')
    import mindspore as ms
    from mindspore.profiler import ProfilerActivity
    y, prof = mod.run(ms.Tensor(np.ones(3, np.float32)))
    np.testing.assert_array_equal(y.asnumpy(), 2 * np.ones(3))
    with pytest.raises(Exception, match="no profiling results"):
        prof.key_averages()
    compat = __import__("_ms_compat")
    # CUDA means the accelerator MindSpore runs on; on a CPU run only CPU is collected
    assert compat._profiler_activities([compat.ProfilerActivity.CUDA]) == [ProfilerActivity.CPU]
    assert compat._profiler_activities(None, use_cuda=True) == [ProfilerActivity.CPU]


# ------------------------------------------------------------------------------ anomaly detection
ANOMALY_SRC = '''
import torch


def fn(x):
    torch.autograd.set_detect_anomaly(True)
    with torch.autograd.detect_anomaly():
        y = torch.log(x) * 2
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        z = y + 1
    torch.autograd.set_detect_anomaly(False)
    return z, torch.is_anomaly_enabled()
'''


def test_anomaly_detection_removed():
    import mindspore as ms
    import torch
    from mindspore import ops

    mod, code, sites = load_converted(ANOMALY_SRC)
    _no_todo(sites)
    assert "anomaly" not in code.replace("# msmigrate", "")
    st = _statuses(sites)
    assert st["torch.autograd.set_detect_anomaly"] == {DIFFERENCE}
    assert st["torch.autograd.detect_anomaly"] == {DIFFERENCE}
    x = np.array([0.5, 1.0, 2.0], np.float32)
    t_z, _ = load_torch(ANOMALY_SRC)["fn"](torch.from_numpy(x))
    m_z, enabled = mod.fn(ms.Tensor(x))
    assert_close(m_z, t_z)
    assert enabled is False
    # what the note offers instead works on CPU: finiteness checks on gradients and tensors
    good = (ms.Tensor(x), ms.Tensor(x * 2))
    bad = (ms.Tensor(x), ms.Tensor(np.array([1.0, np.nan, 0.0], np.float32)))
    assert bool(ms.amp.all_finite(good)) and not bool(ms.amp.all_finite(bad))
    assert not bool(ops.isfinite(bad[1]).all())


# ------------------------------------------------------------------------------ hooks
HOOK_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.fc2 = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def make():
    return Net()


def probe(net, x):
    acts = {}

    def save(name):
        def hook(module, inputs, output):
            acts[name] = output.detach()
            acts[name + ".in"] = inputs[0].detach()
        return hook

    handles = [net.fc1.register_forward_hook(save("fc1")), net.fc2.register_forward_hook(save("fc2"))]
    y = net(x)
    for h in handles:
        h.remove()

    def double(module, inputs, output):
        return output * 2

    def shift(module, args):
        return (args[0] + 1,)

    h = net.fc1.register_forward_hook(double)
    pre = net.fc2.register_forward_pre_hook(shift)
    y2 = net(x)
    h.remove()
    pre.remove()
    y3 = net(x)
    return acts["fc1"], acts["fc2"], acts["fc2.in"], y, y2, y3, len(acts)
'''


def test_forward_hooks_capture_and_modify():
    import mindspore as ms

    x = np.random.default_rng(3).standard_normal((5, 4)).astype(np.float32)
    code, sites = check_layer(HOOK_SRC, [x], call=lambda net, x: load_converted(HOOK_SRC)[0].probe(net, x)
                              if isinstance(x, ms.Tensor) else load_torch(HOOK_SRC)["probe"](net, x), graph=False)
    _no_todo(sites)
    st = _statuses(sites)
    assert st["Module.register_forward_hook"] == {DIFFERENCE}
    assert st["Module.register_forward_pre_hook"] == {DIFFERENCE}
    assert "_ms_compat.register_forward_hook(net.fc1, double)" in code
    # GRAPH mode never calls Cell hooks: the helper says so instead of failing silently
    mod = load_converted(HOOK_SRC)[0]
    net = mod.make()
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.warns(UserWarning, match="PYNATIVE mode only"):
            h = mod._ms_compat.register_forward_hook(net.fc1, lambda c, i, o: o * 0)
        h.remove()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


LAZY_HOOK_SRC = '''
import torch
import torch.nn as nn


class Wrapper(nn.Module):
    """BYOL's shape: the forward registers a hook on a hidden layer the first time it runs, and reads it."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
        self.hidden = {}
        self.registered = False

    def _hook(self, module, inputs, output):
        self.hidden["h"] = output

    def forward(self, x):
        if not self.registered:
            self.net[1].register_forward_hook(self._hook)
            self.registered = True
        out = self.net(x)
        return out, self.hidden["h"]


def make():
    return Wrapper()


if __name__ == "__main__":
    torch.manual_seed(0)
    net = make()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.randn(5, 4)
    for step in range(3):
        out, h = net(x)
        loss = out.pow(2).mean() + h.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("loss", loss.item())
'''


def test_a_program_that_registers_hooks_runs_in_pynative_mode_and_a_compiled_registration_stops():
    """MindSpore calls Cell hooks in PYNATIVE mode only. A program whose tree registers a Module hook starts in
    PYNATIVE_MODE (its hooks run: the hidden output is read as in torch); a hook registered inside a compiled
    forward (GRAPH mode, ms.jit) stops compiling with MigrationError instead of MindSpore's "get_context is not
    supported" or a hook that never runs."""
    import mindspore as ms
    import torch

    mod, code, sites = load_converted(LAZY_HOOK_SRC)
    assert "set_context(mode=ms.PYNATIVE_MODE)" in code and "Module hook is registered" in code, code
    torch.manual_seed(0)
    tnet = load_torch(LAZY_HOOK_SRC)["make"]()
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    want = tnet(torch.from_numpy(x))
    net = mod.make()
    from msmigrate.weights import load_torch_state_dict
    load_torch_state_dict(net, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
    assert_close(net(ms.Tensor(x)), want, 1e-6, 1e-6)
    fresh = mod.make()
    with pytest.raises(mod._ms_compat.MigrationError, match="register_forward_hook: a hook registered inside a "
                                                             "compiled graph"):
        ms.jit(fresh.construct)(ms.Tensor(x))


BACKWARD_HOOK_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.fc2 = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def make():
    return Net()


def attach(net, seen):
    def grads(module, grad_input, grad_output):
        seen["grad_input"] = grad_input[0]
        seen["grad_output"] = grad_output[0]

    def before(module, grad_output):
        seen["pre"] = grad_output[0]

    def cut(module, grad_input, grad_output):
        return (grad_input[0] * 0,)

    def old_style(module, grad_input, grad_output):
        seen["old_grad_output"] = grad_output[0]
        seen["old_inputs"] = len(grad_input)

    return [net.fc2.register_full_backward_hook(grads), net.fc2.register_full_backward_pre_hook(before),
            net.fc1.register_full_backward_hook(cut), net.register_backward_hook(old_style)]
'''


def test_backward_hooks_see_torch_gradients():
    import mindspore as ms
    import torch
    from msmigrate.weights import load_torch_state_dict

    torch.manual_seed(0)
    tnet = load_torch(BACKWARD_HOOK_SRC)["make"]()
    mod, code, sites = load_converted(BACKWARD_HOOK_SRC)
    _no_todo(sites)
    assert "_ms_compat.register_backward_hook(net.fc2, grads)" in code
    assert "_ms_compat.register_backward_pre_hook(net.fc2, before)" in code
    mnet = mod.make()
    load_torch_state_dict(mnet, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    w = rng.standard_normal((5, 2)).astype(np.float32)

    t_seen, m_seen = {}, {}
    t_handles = load_torch(BACKWARD_HOOK_SRC)["attach"](tnet, t_seen)
    m_handles = mod.attach(mnet, m_seen)
    tx = torch.from_numpy(x).requires_grad_(True)
    (tnet(tx) * torch.from_numpy(w)).sum().backward()
    m_gx, m_gw = ms.grad(lambda x: (mnet(x) * ms.Tensor(w)).sum(), grad_position=0,
                         weights=mnet.trainable_params())(ms.Tensor(x))
    for key in ("grad_input", "grad_output", "pre", "old_grad_output"):
        assert_close(m_seen[key], t_seen[key], what=key)
    # torch's deprecated hook on a module of several ops sees only its last op's inputs (torch warns
    # "will be missing some grad_input"); MindSpore's sees the cell's inputs: one tensor here
    assert m_seen["old_inputs"] == 1
    # the hook on fc1 replaced its input gradient with zeros in both frameworks
    assert_close(m_gx, tx.grad, what="input gradient")
    assert float(np.abs(tx.grad.numpy()).max()) == 0.0
    named = dict(zip([p.name for p in mnet.trainable_params()], m_gw))
    assert_close(named["fc2.weight"], tnet.fc2.weight.grad, what="fc2.weight gradient")
    for h in t_handles + m_handles:
        h.remove()
    m_seen.clear()
    ms.grad(lambda x: mnet(x).sum())(ms.Tensor(x))
    assert not m_seen        # removed hooks no longer fire


TENSOR_HOOK_SRC = '''
import torch


def double(grad):
    return grad * 2


def fn(x):
    y = x * 3
    y.register_hook(double)
    return (y * y).sum()


def spy(x, seen):
    y = x * 3

    def keep(grad):
        seen.append(grad)

    y.register_hook(keep)
    return (y * y).sum()
'''


def test_tensor_hook_gradients():
    import mindspore as ms
    import torch

    mod, code, sites = load_converted(TENSOR_HOOK_SRC)
    _no_todo(sites)
    assert _statuses(sites)["Tensor.register_hook"] == {DIFFERENCE}
    tns = load_torch(TENSOR_HOOK_SRC)
    x = np.array([0.5, -1.0, 2.0], np.float32)
    tx = torch.from_numpy(x).requires_grad_(True)
    tns["fn"](tx).backward()
    # PyNative and a compiled (GRAPH) gradient both apply the returned gradient
    assert_close(ms.grad(mod.fn)(ms.Tensor(x)), tx.grad, what="pynative")
    assert_close(ms.grad(ms.jit(mod.fn))(ms.Tensor(x)), tx.grad, what="graph")
    # a hook that only looks at the gradient sees torch's values (PyNative)
    t_seen, m_seen = [], []
    tx2 = torch.from_numpy(x).requires_grad_(True)
    tns["spy"](tx2, t_seen).backward()
    ms.grad(lambda v: mod.spy(v, m_seen))(ms.Tensor(x))
    assert len(m_seen) == 1
    assert_close(m_seen[0], t_seen[0], what="hooked gradient")


PARAM_HOOK_SRC = '''
import torch
import torch.nn as nn


def clip(grad):
    return torch.clamp(grad, -0.01, 0.01)


def make():
    net = nn.Linear(3, 2)
    for p in net.parameters():
        p.register_hook(clip)
    return net
'''


def test_parameter_hooks_in_compiled_step():
    """Gradient clipping by parameter hooks (defined with def) holds in a compiled step too."""
    import mindspore as ms
    import torch
    from msmigrate.weights import load_torch_state_dict

    torch.manual_seed(0)
    tnet = load_torch(PARAM_HOOK_SRC)["make"]()
    mod, code, sites = load_converted(PARAM_HOOK_SRC)
    _no_todo(sites)
    assert "p.register_hook(clip)" in code
    mnet = mod.make()
    load_torch_state_dict(mnet, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
    x = np.full((4, 3), 5.0, np.float32)
    (tnet(torch.from_numpy(x)) ** 2).sum().backward()
    t_grads = [tnet.weight.grad, tnet.bias.grad]
    def loss(v):
        return (mnet(v) ** 2).sum()
    grad_fn = ms.value_and_grad(loss, None, mnet.trainable_params())

    def step(v):
        return grad_fn(v)[1]
    assert_close(list(step(ms.Tensor(x))), t_grads, what="pynative")
    assert_close(list(ms.jit(step)(ms.Tensor(x))), t_grads, what="graph")
    assert float(np.abs(t_grads[0].numpy()).max()) == pytest.approx(0.01)
