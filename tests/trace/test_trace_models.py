"""The graph-capture route end to end (msmigrate trace): a GPT-style decoder, a 2-layer LSTM
classifier and torchvision's resnet18 are traced; the written model.py + model.ckpt are run in a
process that never imports torch, in PYNATIVE and GRAPH mode and as MindIR through nn.GraphCell,
and must match torch within 1e-4 * max(1, max|y|)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from msmigrate.trace import CaptureError, trace_model

from . import models

ROOT = Path(__file__).resolve().parents[2]


def _assert_all_modes(res):
    assert not res.missing, res.missing
    assert res.first_bad is None, res.first_bad
    assert res.check and res.check.get("ok"), res.check
    for mode in ("pynative", "graph", "mindir"):
        assert res.check[mode]["pass"], (mode, res.check)
        assert res.check[mode]["max_abs_diff"] <= res.check["tol"]
    assert res.ok


def _ckpt_names(path):
    import mindspore as ms

    return set(ms.load_checkpoint(str(path)).keys())


def test_gpt_decoder(tmp_path):
    m = models.gpt()
    ids = torch.randint(0, 101, (2, 12), generator=torch.Generator().manual_seed(1))
    res = trace_model(m, (ids,), tmp_path / "gpt", source="tests.trace.models:gpt", mindir=True)
    _assert_all_modes(res)
    src = (tmp_path / "gpt" / "model.py").read_text()
    assert "import torch" not in src and "mindspore.mint" not in src and "mint." not in src
    assert "self.h[0].ln_1(" in src and "sdpa(" in src          # readable: one attribute per torch submodule
    assert set(m.state_dict()) <= _ckpt_names(tmp_path / "gpt" / "model.ckpt")
    assert "Node by node" in (tmp_path / "gpt" / "trace-report.md").read_text()


def test_lstm_classifier_through_the_cli(tmp_path):
    out = tmp_path / "lstm"
    r = subprocess.run([sys.executable, "-m", "msmigrate.cli", "trace", "--torch", "tests.trace.models:lstm_classifier",
                        "--path", str(ROOT), "--input", "3,7:int64", "-o", str(out), "--mindir"],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert '"graph": {"max_abs_diff"' in r.stdout and '"ok": true' in r.stdout, r.stdout
    for f in ("model.py", "model.ckpt", "model.mindir", "trace-report.md"):
        assert (out / f).exists(), f
    assert set(models.lstm_classifier().state_dict()) == _ckpt_names(out / "model.ckpt")
    assert "rnn(" in (out / "model.py").read_text()


def test_resnet18_from_torchvision(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    import trace_zoo

    orig = trace_zoo.prepare(ROOT / "bench" / "_work" / "trace_zoo")
    net, _ = trace_zoo.build("resnet18", orig)
    x = torch.from_numpy(__import__("numpy").random.default_rng(0).standard_normal((1, 3, 64, 64)).astype("float32"))
    res = trace_model(net, (x,), tmp_path / "resnet18", source="torchvision.models.resnet18", mindir=True)
    _assert_all_modes(res)
    src = (tmp_path / "resnet18" / "model.py").read_text()
    assert "self.layer1[0].conv1(" in src and "BatchNorm(64" in src
    names = _ckpt_names(tmp_path / "resnet18" / "model.ckpt")
    assert "layer1.0.bn1.running_mean" in names and set(net.state_dict()) == names


class DataDependent(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:          # control flow on a tensor value
            return x * 2
        return x - 1


def test_export_failure_names_the_construct_and_line(tmp_path):
    with pytest.raises(CaptureError) as info:
        trace_model(DataDependent(), (torch.randn(2, 3),), tmp_path / "dd", check=False,
                    roots=[Path(__file__).resolve().parent])
    msg = str(info.value)
    assert "data-dependent" in msg
    assert "test_trace_models.py" in msg and "if x.sum() > 0" in msg


class Bessel(torch.nn.Module):
    def forward(self, x):
        return torch.special.bessel_j0(x) + 1   # an ATen op without a MindSpore converter


def test_unconverted_op_is_named_with_its_source_line(tmp_path):
    res = trace_model(Bessel(), (torch.randn(2, 3),), tmp_path / "b", check=False)
    assert not res.ok
    ops_missing = [m for m in res.missing if "bessel_j0" in m[0]]
    assert ops_missing and "test_trace_models.py" in ops_missing[0][2], res.missing
    report = (tmp_path / "b" / "trace-report.md").read_text()
    assert "Not converted" in report and "bessel_j0" in report
    assert not (tmp_path / "b" / "model.py").exists()
