"""msmigrate verify --train: N optimizer steps in torch and in the converted MindSpore code.

A small CNN with BatchNorm (and a conv bias before BatchNorm, and Dropout) is converted with
`msmigrate convert`; every verify run starts one torch and one MindSpore interpreter, so the
optimizer/scheduler configurations share one library call (one pair of processes).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from msmigrate import verify_train as VT
from msmigrate.verify import VerifyUsageError

REPO = Path(__file__).resolve().parents[1]

TORCH_MODELS = '''
import torch
from torch import nn
import torch.nn.functional as F


class SmallCNN(nn.Module):
    def __init__(self, num_classes=10, p=0.0):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)      # a bias before BatchNorm: its gradient is noise
        self.bn2 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        self.drop = nn.Dropout(p)
        self.fc = nn.Linear(16 * 4 * 4, num_classes)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.pool(F.relu(self.bn2(self.conv2(x))))
        return self.fc(self.drop(torch.flatten(x, 1)))


def small_cnn():
    return SmallCNN()


def small_cnn_dropout():
    return SmallCNN(p=0.3)
'''

STEP_LR = [0.1, 0.1, 0.05, 0.05, 0.025]


@pytest.fixture(scope="module")
def proj(tmp_path_factory):
    root = tmp_path_factory.mktemp("train_proj")
    (root / "tsrc").mkdir()
    (root / "tsrc" / "models.py").write_text(TORCH_MODELS)
    p = subprocess.run([sys.executable, "-m", "msmigrate.cli", "convert", str(root / "tsrc"), "-o",
                        str(root / "msrc"), "-q"], capture_output=True, text=True, env=_env())
    assert p.returncode == 0, p.stdout + p.stderr
    converted = (root / "msrc" / "models.py").read_text()
    assert "nn.BatchNorm2d(8)" in converted and "import torch" not in converted
    # a hand-broken conversion: BatchNorm momentum 0.8 (torch 0.2) instead of 0.9 (torch's 0.1)
    shutil.copytree(root / "msrc", root / "broken")
    (root / "broken" / "models.py").write_text(
        converted.replace("nn.BatchNorm2d(8)", "nn.BatchNorm2d(8, momentum=0.8)"))
    return root


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def run_verify(root, *args, ms_dir="msrc"):
    return subprocess.run([sys.executable, "-m", "msmigrate.cli", "verify", "--torch-path", str(root / "tsrc"),
                           "--ms-path", str(root / ms_dir), *args], capture_output=True, text=True, env=_env(),
                          cwd=str(root))


# ----------------------------------------------------------------------------- end to end


def test_cli_sgd_momentum_nesterov_weight_decay_steplr(proj):
    out = proj / "sgd.json"
    p = run_verify(proj, "--torch", "models:small_cnn", "--input", "8,3,16,16", "--train", "5",
                   "--optimizer", "SGD(lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)",
                   "--scheduler", "StepLR(step_size=2, gamma=0.5)", "--json", str(out))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "RESULT: PASS (1/1 configurations)" in p.stdout
    assert "converted: optimizer = _ms_compat.SGD(model.trainable_params(), lr=0.1, momentum=0.9" in p.stdout
    assert "scheduler = _ms_compat.StepLR(optimizer, step_size=2, gamma=0.5)" in p.stdout
    assert "loss cross_entropy (10 classes)" in p.stdout
    d = json.loads(out.read_text())
    assert d["exit_code"] == 0 and d["loss"] == "cross_entropy" and d["classes"] == 10
    (cfg,) = d["configs"]
    assert [m["mode"] for m in cfg["modes"]] == ["pynative", "graph"]
    for m in cfg["modes"]:
        assert m["status"] == "pass" and len(m["steps"]) == 5
        assert [s["lr_torch"] for s in m["steps"]] == pytest.approx(STEP_LR)
        assert [s["lr_ms"] for s in m["steps"]] == pytest.approx(STEP_LR, rel=1e-6)
        for s in m["steps"]:
            assert abs(s["loss_torch"] - s["loss_ms"]) <= 1e-4 * max(1.0, abs(s["loss_torch"]))
        assert len({round(s["loss_torch"], 4) for s in m["steps"]}) == 5  # it really trained
        # 9 trainable tensors + 4 BatchNorm running statistics, all within rtol
        assert m["params_compared"] == 13 and m["params_failed"] == 0 and m["max_rel"] <= 1e-4
    names = {w["name"] for m in cfg["modes"] for w in m["worst"]}
    assert names and all("." in n for n in names)


def test_optimizers_and_schedules_in_one_pair_of_processes(proj):
    configs = [("Adam(lr=1e-2)", "CosineAnnealingLR(T_max=5)"),
               ("AdamW(lr=1e-2, weight_decay=0.05)", "OneCycleLR(max_lr=0.05)"),  # total_steps=5 added
               ("RMSprop(lr=1e-3, momentum=0.5)", None),
               ("Adagrad(lr=0.05)", None)]
    r = VT.verify_train("models:small_cnn_dropout", "models:small_cnn_dropout", "8,3,16,16",
                        torch_path=proj / "tsrc", ms_path=proj / "msrc", configs=configs, steps=5,
                        eval_mode_dropout=True)
    report = VT.format_train_report(r)
    assert r.passed and r.exit_code == 0, report
    assert r.dropout == [{"name": "drop", "type": "Dropout", "p": 0.3}]
    assert "Dropout layers in eval mode on both sides" in report
    assert "OneCycleLR(max_lr=0.05, total_steps=5)" in report
    for opt, sched in configs:
        c = r.config(opt, sched)
        assert c.ms_optimizer.startswith("_ms_compat." + opt.split("(")[0] + "(model.trainable_params()")
        assert [m.mode for m in c.modes] == ["pynative", "graph"]
        for m in c.modes:
            assert m.status == "pass" and len(m.steps) == 5
            assert all(s.rel <= 1e-4 and s.passed for s in m.steps)
            assert m.params_failed == 0 and m.max_rel <= 1e-4
    cos = r.config(*configs[0]).modes[0].steps
    assert [s.lr_ms for s in cos][:2] == pytest.approx([0.01, 0.00904508], rel=1e-5)
    onecycle = r.config(*configs[1]).modes[1].steps
    assert onecycle[0].lr_torch == pytest.approx(0.002) and max(s.lr_torch for s in onecycle) > 0.04
    assert [s.lr_ms for s in onecycle] == pytest.approx([s.lr_torch for s in onecycle], rel=1e-6)
    # Adam's step on conv2.bias (gradient = rounding noise, cancelled by bn2) cannot match: reported, not judged
    adam = r.config(*configs[0]).modes[0]
    excused = {p.name: p for p in adam.worst if not p.judged}
    assert "conv2.bias" in excused and "rounding noise" in excused["conv2.bias"].note
    assert all(p.name in ("conv2.bias", "bn2.running_mean") for p in excused.values())
    assert "not judged" in report


def test_broken_conversion_fails_and_names_the_tensors(proj):
    p = run_verify(proj, "--torch", "models:small_cnn", "--input", "8,3,16,16", "--train", "3",
                   "--optimizer", "SGD(lr=0.1)", "--mode", "pynative", ms_dir="broken")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "RESULT: FAIL (0/1 configurations)" in p.stdout
    # train-mode BatchNorm normalises with batch statistics: the losses agree...
    rows = [ln.split() for ln in p.stdout.splitlines() if ln.strip().startswith("pynative")]
    assert len(rows) == 3 and all(r[-1] == "ok" for r in rows), p.stdout
    # ...but the running statistics, updated with the wrong momentum, do not
    line = next(ln for ln in p.stdout.splitlines() if "final weights (pynative)" in ln)
    assert "FAIL (2 of 13 differ)" in line, line
    assert "bn1.running_mean (bn1.moving_mean)" in line and "bn1.running_var (bn1.moving_variance)" in line


def test_dropout_makes_runs_incomparable_and_says_so(proj):
    p = run_verify(proj, "--torch", "models:small_cnn_dropout", "--input", "8,3,16,16", "--train", "2",
                   "--mode", "pynative", "--optimizer", "SGD(lr=0.1)")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "the model has Dropout with p>0 (drop (Dropout p=0.3))" in p.stdout
    assert "--eval-mode-dropout" in p.stdout and "RESULT: FAIL" in p.stdout


def test_train_usage_errors_exit_2_with_one_line(proj):
    base = ["--torch", "models:small_cnn", "--input", "8,3,16,16"]
    for extra, needle in ((["--train", "--optimizer", "SGD(lr="], "bad --optimizer"),
                          (["--train", "--scheduler", "nn.StepLR(step_size=1)"], "not in torch.optim.lr_scheduler"),
                          (["--optimizer", "Adam(lr=1e-3)"], "only apply with --train"),
                          (["--train", "0"], "positive number of steps"),
                          (["--train", "2", "--classes", "11"], "returns 10 class scores"),
                          (["--train", "2", "--optimizer", "SGD(lrr=0.1)"], "lrr")):
        p = run_verify(proj, *base, *extra)
        assert p.returncode == 2, (extra, p.stdout, p.stderr)
        assert p.stdout == "" and len(p.stderr.strip().splitlines()) == 1, (extra, p.stderr)
        assert needle in p.stderr and "Traceback" not in p.stderr, (extra, p.stderr)


# ----------------------------------------------------------------------------- in process


def test_parse_optim_spec():
    assert VT.parse_optim_spec("SGD(lr=0.1, momentum=0.9)") == "SGD(lr=0.1, momentum=0.9)"
    assert VT.parse_optim_spec("torch.optim.AdamW( lr = 1e-3 )") == "AdamW(lr=0.001)"
    assert VT.parse_optim_spec("Adam") == "Adam()"
    assert VT.parse_optim_spec("lr_scheduler.StepLR(step_size=2)", "scheduler") == "StepLR(step_size=2)"
    assert VT.parse_optim_spec("OneCycleLR(max_lr=0.1)", "scheduler", steps=7) == \
        "OneCycleLR(max_lr=0.1, total_steps=7)"
    assert VT.parse_optim_spec("OneCycleLR(max_lr=0.1, epochs=2, steps_per_epoch=3)", "scheduler", steps=7) == \
        "OneCycleLR(max_lr=0.1, epochs=2, steps_per_epoch=3)"
    for bad in ("SGD(lr=", "nn.SGD(lr=1)", "sgd(lr=1)", "SGD(**kw)", "1 + 2"):
        with pytest.raises(VerifyUsageError):
            VT.parse_optim_spec(bad)


def test_training_loop_source_converts_as_the_converter_emits_it():
    src = VT.torch_train_source(VT.TrainConfig("SGD(lr=0.1, momentum=0.9)", "ReduceLROnPlateau(patience=0)"),
                                "mse", 2)
    assert "for x0, x1, y in batches:" in src and "F.mse_loss(out, y)" in src
    assert "scheduler.step(losses[-1])" in src
    compile(src, "<torch loop>", "exec")
    ms = VT.convert_train_source(src)
    assert "from . import _ms_compat" in ms and "import torch" not in ms
    assert "_ms_compat.SGD(model.trainable_params(), lr=0.1, momentum=0.9)" in ms
    assert "_ms_compat.ReduceLROnPlateau(optimizer, patience=0)" in ms
    assert "value_and_grad_reached(forward_fn, optimizer.parameters" in ms and "optimizer(grads)" in ms
    assert "_ms_compat.compile_step(train_step)" in ms and "_ms_compat.mse_loss" in ms
    with pytest.raises(VT.ConversionProblem, match="SparseAdam"):  # no MindSpore counterpart: a TODO
        VT.convert_train_source(VT.torch_train_source(VT.TrainConfig("SparseAdam(lr=1)"), "cross_entropy", 1))
    # LBFGS converts, but this loop's step() has no closure (torch raises TypeError): a TODO at backward()
    with pytest.raises(VT.ConversionProblem, match="without a closure"):
        VT.convert_train_source(VT.torch_train_source(VT.TrainConfig("LBFGS(lr=1)"), "cross_entropy", 1))


def test_train_result_json_round_trip_and_report():
    r = VT.TrainVerifyResult(torch_spec="a:b", ms_spec="c:d", steps=1, loss="mse",
                             inputs=[{"shape": [2, 3], "dtype": "float32"}])
    m = VT.TrainModeResult(mode="graph", status="fail", params_compared=2, params_failed=1, max_rel=float("inf"))
    m.steps.append(VT.StepDiff(step=1, loss_torch=1.5, loss_ms=float("nan"), rel=float("nan"), lr_torch=0.1,
                               lr_ms=0.1, passed=False))
    m.worst.append(VT.ParamDiff(name="fc.weight", ms_name="fc.weight", max_abs=float("inf"), max_rel=float("inf"),
                                tol=1e-4, passed=False, note="inf mismatch", rel=float("inf")))
    r.configs.append(VT.TrainConfigResult(optimizer="SGD(lr=0.1)", modes=[m]))
    d = json.loads(json.dumps(r.to_dict()))
    assert d["exit_code"] == 1 and d["configs"][0]["passed"] is False
    r2 = VT.TrainVerifyResult.from_dict(d)
    assert r2.configs[0].modes[0].worst[0].max_abs == float("inf")
    text = VT.format_train_report(r2)
    assert "RESULT: FAIL (0/1 configurations)" in text and "fc.weight inf FAIL" in text
