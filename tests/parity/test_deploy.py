"""Deployment in converted programs (records in msmigrate/mappings/deploy.py, helpers in
templates/compat_parts/deploy.py): torch.jit.trace/save/load, torch.export.export/save/load and
torch.onnx.export. A torch program that exports a model and loads it back is converted; torch runs
the original, MindSpore the conversion with the same weights, and the reloaded file's output must
equal the torch model's output."""
from __future__ import annotations

import io
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from msmigrate.registry import DIFFERENCE, TODO  # noqa: E402
from msmigrate.weights import load_torch_state_dict  # noqa: E402

from .harness import assert_close, load_converted, load_torch  # noqa: E402

PROGRAM = '''
import io

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(self.drop(torch.flatten(x, 1)))


class Small(nn.Module):
    """ONNX check: only ops every ONNX runtime (onnx.reference included) runs as in inference."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 8 * 8, 5)

    def forward(self, x):
        return self.fc(torch.flatten(F.relu(self.conv(x)), 1))


def make():
    return Net()


def make_small():
    return Small()


def trace_save_load(model, x, path):
    model.eval()
    traced = torch.jit.trace(model, (x,), check_trace=False)
    torch.jit.save(traced, path)
    loaded = torch.jit.load(path, map_location="cpu", _extra_files=None)
    return loaded(x)


def trace_save_load_buffer(model, x):
    traced = torch.jit.trace(model.eval(), x)
    buf = io.BytesIO()
    torch.jit.save(traced, buf)
    buf.seek(0)
    return torch.jit.load(buf)(x)


def export_save_load(model, x, path):
    model.eval()
    ep = torch.export.export(model, (x,))
    torch.export.save(ep, path)
    loaded = torch.export.load(path)
    return loaded.module()(x)


def onnx_export(model, x, path):
    model.train()  # torch exports in inference mode anyway (training=TrainingMode.EVAL)
    torch.onnx.export(model, (x,), path, input_names=["image"], output_names=["logits"], opset_version=17,
                      dynamic_axes={"image": {0: "batch"}}, dynamo=False, kwargs=None)
'''


def _pair(make="make"):
    """The torch model and its conversion with the same weights."""
    torch.manual_seed(0)
    ns = load_torch(PROGRAM)
    tnet = ns[make]()
    if make == "make":  # non-trivial BatchNorm statistics
        with torch.no_grad():
            tnet.bn.running_mean.uniform_(-0.5, 0.5)
            tnet.bn.running_var.uniform_(0.5, 2.0)
            tnet.bn.weight.uniform_(0.5, 1.5)
            tnet.bn.bias.uniform_(-0.2, 0.2)
    mod, code, sites = load_converted(PROGRAM)
    mnet = getattr(mod, make)()
    load_torch_state_dict(mnet, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
    return ns, tnet, mod, mnet, code, sites


def _x(shape=(2, 3, 8, 8)):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def _statuses(sites):
    return {s.api: s.status for s in sites}


def test_converted_program_has_no_todo():
    _, code, sites = load_converted(PROGRAM)
    st = _statuses(sites)
    assert TODO not in st.values(), [s for s in sites if s.status == TODO]
    for api in ("torch.jit.trace", "torch.jit.save", "torch.jit.load", "torch.export.export", "torch.export.save",
                "torch.export.load", "torch.onnx.export"):
        assert st.get(api) == DIFFERENCE, (api, st.get(api))
    assert "_ms_compat.jit_trace(model, (x,))" in code, code
    assert "input_names" not in code and "dynamo" not in code and "map_location" not in code, code


def test_jit_trace_save_load(tmp_path):
    ns, tnet, mod, mnet, code, _ = _pair()
    x = _x()
    want = ns["trace_save_load"](tnet, torch.from_numpy(x), str(tmp_path / "torch.pt")).detach().numpy()
    got = mod.trace_save_load(mnet, ms.Tensor(x), str(tmp_path / "model.pt"))
    # the file is written at exactly the given name (MindSpore would append .mindir), as MindIR
    assert (tmp_path / "model.pt").is_file() and not (tmp_path / "model.pt.mindir").exists()
    assert type(got).__name__ == "Tensor"
    assert_close(got, want, rtol=1e-5, atol=1e-5, what="jit.load(jit.save(jit.trace(model)))")
    assert float(np.abs(want).max()) > 0.1  # a real output, not zeros
    # into a file object and back
    got_buf = mod.trace_save_load_buffer(mnet, ms.Tensor(x))
    want_buf = ns["trace_save_load_buffer"](tnet, torch.from_numpy(x)).detach().numpy()
    assert_close(got_buf, want_buf, rtol=1e-5, atol=1e-5, what="through BytesIO")
    # the reloaded graph runs in GRAPH mode too
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        cell = mod._ms_compat.jit_load(str(tmp_path / "model.pt"))
        assert isinstance(cell, ms.nn.GraphCell)
        assert_close(cell(ms.Tensor(x)), want, rtol=1e-5, atol=1e-5, what="GraphCell in GRAPH mode")
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_jit_errors_are_clear(tmp_path):
    _, _, mod, mnet, _, _ = _pair()
    with pytest.raises(mod._ms_compat.MigrationError, match="example inputs"):
        mod._ms_compat.jit_save(mnet, str(tmp_path / "untraced.pt"))  # e.g. torch.jit.script(model) then save
    # a TorchScript archive written by PyTorch cannot be read by MindSpore: say so
    torch.jit.save(torch.jit.trace(load_torch(PROGRAM)["make"]().eval(), torch.zeros(1, 3, 8, 8)),
                   str(tmp_path / "ts.pt"))
    with pytest.raises(mod._ms_compat.MigrationError, match="TorchScript archive"):
        mod._ms_compat.jit_load(str(tmp_path / "ts.pt"))


def test_torch_export_save_load(tmp_path):
    ns, tnet, mod, mnet, _, _ = _pair()
    x = _x()
    want = ns["export_save_load"](tnet, torch.from_numpy(x), str(tmp_path / "torch.pt2")).detach().numpy()
    got = mod.export_save_load(mnet, ms.Tensor(x), str(tmp_path / "model.pt2"))
    assert (tmp_path / "model.pt2").is_file()
    assert_close(got, want, rtol=1e-5, atol=1e-5, what="torch.export.load(...).module()")
    ep = mod._ms_compat.export_load(str(tmp_path / "model.pt2"))
    assert isinstance(ep.module(), ms.nn.GraphCell)


def test_onnx_export(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx.reference import ReferenceEvaluator

    ns, tnet, mod, mnet, _, _ = _pair("make_small")
    x = _x()
    with torch.no_grad():
        want = tnet.eval()(torch.from_numpy(x)).numpy()
    ns["onnx_export"](tnet, torch.from_numpy(x), str(tmp_path / "torch.onnx"))
    mod.onnx_export(mnet, ms.Tensor(x), str(tmp_path / "model.onnx"))
    assert mnet.training, "the converted helper must restore the network's train mode"

    def run(model):
        onnx.checker.check_model(model)
        return ReferenceEvaluator(model).run(None, {model.graph.input[0].name: x})[0]

    assert_close(run(onnx.load(str(tmp_path / "torch.onnx"))), want, rtol=1e-5, atol=1e-5, what="torch's ONNX file")
    assert_close(run(onnx.load(str(tmp_path / "model.onnx"))), want, rtol=1e-5, atol=1e-5,
                 what="MindSpore's ONNX file")
    # a name without .onnx and a file object are written as given
    mod._ms_compat.onnx_export(mnet, (ms.Tensor(x),), str(tmp_path / "model.bin"))
    assert (tmp_path / "model.bin").is_file() and not (tmp_path / "model.bin.onnx").exists()
    assert_close(run(onnx.load(str(tmp_path / "model.bin"))), want, rtol=1e-5, atol=1e-5, what="model.bin")
    buf = io.BytesIO()
    mod._ms_compat.onnx_export(mnet, ms.Tensor(x), buf)
    assert_close(run(onnx.load_from_string(buf.getvalue())), want, rtol=1e-5, atol=1e-5, what="file object")


LOGGING_PROGRAM = '''
import torch
import torch.nn as nn


def _log_api_usage_once(obj):
    # torchvision's pattern: plain Python on a function object inside forward
    module = str(obj.__module__)
    if not module.startswith("torchvision"):
        module = f"torchvision.internal.{module}"
    torch._C._log_api_usage_once(f"{module}.{obj.__name__}")


def scale(x):
    if not torch.jit.is_scripting() and not torch.jit.is_tracing():
        _log_api_usage_once(scale)
    return x * 2.0


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return scale(self.fc(x))


def make():
    return Net()


def round_trip(model, x, path):
    torch.jit.save(torch.jit.trace(model.eval(), x), path)
    return torch.jit.load(path)(x)
'''


def test_export_of_graph_mode_python_fallback(tmp_path):
    """mindspore.export compiles in strict syntax mode, which refuses `fn.__module__`; the helper
    exports such a network in lax mode, as GRAPH mode runs it, and the file still computes the same."""
    torch.manual_seed(0)
    ns = load_torch(LOGGING_PROGRAM)
    tnet = ns["make"]()
    mod, _, _ = load_converted(LOGGING_PROGRAM)
    mnet = mod.make()
    load_torch_state_dict(mnet, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    want = ns["round_trip"](tnet, torch.from_numpy(x), str(tmp_path / "t.pt")).detach().numpy()
    got = mod.round_trip(mnet, ms.Tensor(x), str(tmp_path / "m.pt"))
    assert_close(got, want, rtol=1e-5, atol=1e-5, what="lax-mode export")
    assert ms.get_context("jit_syntax_level") != ms.STRICT and "MS_DEV_JIT_SYNTAX_LEVEL" not in os.environ
