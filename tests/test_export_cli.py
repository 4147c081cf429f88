"""`msmigrate export` end to end on converted torchvision models: the torchvision 0.29.1
wheel converted whole by msmigrate and weights converted by `msmigrate weights` (bench/zoo_parity.py's
preparation), then the CLI builds each converted model, loads its checkpoint, writes MindIR and
proves the file: reloaded with mindspore.load + nn.GraphCell it must reproduce the network's output
(max|d| <= 1e-5). The file's output is also compared with the original torch model's. The full
21-model run is bench/export_parity.py. Usage errors are one line, exit status 2."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mindspore")
pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import export_parity  # noqa: E402
import zoo_parity  # noqa: E402

ARCHS = ["squeezenet1_0", "resnet18"]


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    work = tmp_path_factory.mktemp("zoo_export")
    errors = zoo_parity.record_and_convert_weights(work, ARCHS, timeout=900)
    assert not errors, errors
    return work


@pytest.mark.parametrize("arch", ARCHS)
def test_export_cli_mindir_reproduces_network(zoo, arch):
    row = export_parity.export_one(zoo, arch, timeout=600)
    assert row.get("exit") == 0 and row["pass"], row
    assert row["max_abs"] <= 1e-5, row
    assert (zoo / "export" / f"{arch}.mindir").stat().st_size > 1_000_000
    res = json.loads((zoo / "export" / f"{arch}.json").read_text())
    assert res["checkpoint"].endswith("all loaded)"), res["checkpoint"]
    # the seeded input is the one the torch model saw: the deployed file computes what torch computed
    assert row["vs_torch"] < 1e-4, row
    out = np.load(zoo / "export" / f"{arch}-outputs.npz")
    assert out["mindir/0"].shape == (2, 1000) and float(np.abs(out["net/0"]).max()) > 1e-3


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "msmigrate.cli", "export", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def test_export_cli_checkpoint_mismatch_is_listed(zoo, tmp_path):
    # resnet18's weights into squeezenet: every mismatched name listed, exit 1, no traceback
    r = _cli("--ms", "torchvision.models:squeezenet1_0", "--path", str(zoo / "ms"), "--input", "1,3,64,64",
             "--ckpt", str(zoo / "runs" / "resnet18" / "weights.ckpt"), "-o", str(tmp_path / "x"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "does not match the network" in r.stdout and "not in the checkpoint: features.0.weight" in r.stdout
    assert "not used by the network: conv1.weight" in r.stdout
    assert "Traceback" not in r.stdout + r.stderr
    assert not (tmp_path / "x.mindir").exists()


@pytest.mark.parametrize("args, message", [
    (["--ms", "no_colon", "--input", "1,3"], "bad model spec"),
    (["--ms", "nosuchmodule_xyz:f", "--input", "1,3"], "cannot import module"),
    (["--ms", "torchvision.models:nosuch", "--input", "1,3,8,8"], "has no attribute"),
    (["--ms", "torchvision.models:resnet18", "--input", "1,x,8"], "bad input shape"),
    (["--ms", "torchvision.models:resnet18"], "at least one --input"),
    (["--ms", "torchvision.models:resnet18", "--input", "1,3,8,8", "--ckpt", "missing.ckpt"], "does not exist"),
])
def test_export_cli_usage_errors(zoo, tmp_path, args, message):
    r = _cli(*args, "--path", str(zoo / "ms"), "-o", str(tmp_path / "m.mindir"), cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("msmigrate export: error:"), r.stderr
