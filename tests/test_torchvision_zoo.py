"""A few torchvision architectures, end to end, at small inputs: the real torchvision
0.29.1 wheel from PyPI is converted whole by msmigrate (once, for every test here), weights go
through `msmigrate weights`, and

- the converted models (run in a process that never imports torch) match the originals in
  PYNATIVE and GRAPH mode (the full 21-model run is bench/zoo_parity.py);
- `msmigrate export` builds a converted model, loads its checkpoint, writes MindIR and proves the
  file: reloaded with mindspore.load + nn.GraphCell it must reproduce the network's output
  (max|d| <= 1e-5), and the file's output is compared with the original torch model's (the full
  21-model run is bench/export_parity.py). Export usage errors are one line, exit status 2."""
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

ARCHS = ["resnet18", "squeezenet1_0"]   # the others of bench/zoo_parity.py's 21 run there (CI time)
EXPORT_ARCHS = ["squeezenet1_0"]   # resnet18 and the others export in bench/export_parity.py (CI time)


@pytest.fixture(scope="module")
def zoo_work(tmp_path_factory):
    """The converted torchvision, the torch records and the converted weights of ARCHS, and the
    MindSpore side's results (work/ms_results.json): one conversion serves every test here."""
    work = tmp_path_factory.mktemp("zoo")
    return work, zoo_parity.run(work, ARCHS, timeout=1500)


@pytest.fixture(scope="module")
def zoo_results(zoo_work):
    return zoo_work[1]


@pytest.fixture(scope="module")
def zoo(zoo_work):
    return zoo_work[0]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_converted_torchvision_model_matches(zoo_results, arch, mode):
    res = zoo_results[arch]
    assert "error" not in res, res
    assert mode in res, res
    assert res[mode].get("pass"), res[mode]
    assert res[mode]["max_abs_diff"] < 1e-3


@pytest.mark.parametrize("arch", EXPORT_ARCHS)
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
