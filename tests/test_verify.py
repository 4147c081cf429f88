"""msmigrate verify: torch vs MindSpore parity through the real CLI (subprocesses).

Each CLI run starts one torch and one MindSpore interpreter (~5 s together here), so
the end-to-end cases are few and each covers several features.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from msmigrate import verify as V

REPO = Path(__file__).resolve().parents[1]

TORCH_SRC = '''
import torch
from torch import nn


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.fc = nn.Linear(4 * 8 * 8, 5)
        with torch.no_grad():  # non-trivial running statistics and affine parameters
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.2, 0.2)

    def forward(self, x):
        x = self.relu(self.bn(self.conv(x)))
        return self.fc(torch.flatten(x, 1))


class TwoInputs(nn.Module):
    """float + int64 index inputs, dict/tuple output, a module called twice."""
    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(10, 6))
        self.proj = nn.Linear(6, 6)
        self.act = nn.Tanh()

    def forward(self, x, idx):
        e = self.table[idx].sum(1)
        h = self.act(self.proj(x + e))
        h2 = self.act(self.proj(h))
        return {"h": h, "pair": (h2, e)}


class LNNet(nn.Module):
    """LayerNorm on low-variance activations (eps matters)."""
    def __init__(self):
        super().__init__()
        self.pre = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.norm(self.pre(x) * 1e-3))


class GeluNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 64)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(64, 4)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def cnn():
    return CNN()


def two_inputs():
    return TwoInputs()


def ln_net():
    return LNNet()


def gelu_net():
    return GeluNet()
'''

# Hand-written MindSpore counterparts whose parameter names equal the torch names.
MS_SRC = '''
import mindspore as ms
from mindspore import nn, ops, Parameter
import numpy as np


class CNN(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm2d(4, momentum=0.9)
        self.relu = nn.ReLU()
        self.fc = nn.Dense(4 * 8 * 8, 5)

    def construct(self, x):
        x = self.relu(self.bn(self.conv(x)))
        return self.fc(ops.flatten(x, start_dim=1))


class TwoInputs(nn.Cell):
    def __init__(self):
        super().__init__()
        self.table = Parameter(ms.Tensor(np.zeros((10, 6), np.float32)), name="table")
        self.proj = nn.Dense(6, 6)
        self.act = nn.Tanh()

    def construct(self, x, idx):
        e = ops.gather(self.table, idx, 0).sum(1)
        h = self.act(self.proj(x + e))
        h2 = self.act(self.proj(h))
        return {"h": h, "pair": (h2, e)}


class LNNet(nn.Cell):
    def __init__(self, eps):
        super().__init__()
        self.pre = nn.Dense(8, 8)
        self.norm = nn.LayerNorm((8,), epsilon=eps)   # gamma/beta <- weight/bias via msmigrate.weights
        self.head = nn.Dense(8, 4)

    def construct(self, x):
        return self.head(self.norm(self.pre(x) * 1e-3))


class GeluNet(nn.Cell):
    def __init__(self, approximate):
        super().__init__()
        self.fc1 = nn.Dense(16, 64)
        self.act = nn.GELU(approximate=approximate)
        self.fc2 = nn.Dense(64, 4)

    def construct(self, x):
        return self.fc2(self.act(self.fc1(x)))


def cnn():
    return CNN()


def two_inputs():
    return TwoInputs()


def ln_net():
    return LNNet(1e-5)


def ln_net_wrong_eps():      # MindSpore's nn.LayerNorm default epsilon
    return LNNet(1e-7)


def gelu_net_wrong():        # MindSpore's nn.GELU default: tanh approximation
    return GeluNet(True)


class BadReshape(nn.Cell):
    def construct(self, x):
        return ops.reshape(x, (7, -1))


def gelu_net_raises():       # fails inside 'act', after fc1 ran fine
    net = GeluNet(False)
    net.act = BadReshape()
    return net
'''

MS_BUILD_FAILS = '''
from mindspore import nn


def cnn():
    return nn.Dense(2, 2, has_bias="maybe")  # line 6: MindSpore refuses the value
'''

MS_IMPORTS_TORCH = '''
import torch  # a conversion that forgot a torch import
from mindspore import nn


def cnn():
    return nn.Dense(2, 2)
'''


@pytest.fixture(scope="module")
def srcs(tmp_path_factory):
    root = tmp_path_factory.mktemp("verify")
    (root / "tsrc").mkdir()
    (root / "msrc").mkdir()
    (root / "tsrc" / "models.py").write_text(TORCH_SRC)
    (root / "msrc" / "models.py").write_text(MS_SRC)
    (root / "msrc" / "bad_models.py").write_text(MS_IMPORTS_TORCH)
    (root / "msrc" / "broken_models.py").write_text(MS_BUILD_FAILS)
    return root


def run_cli(root, *args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return subprocess.run([sys.executable, "-m", "msmigrate.verify", *map(str, args)], cwd=root, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)


def verify(root, torch_spec, ms_spec, *extra):
    return run_cli(root, "--torch", torch_spec, "--torch-path", "tsrc",
                   "--ms", ms_spec, "--ms-path", "msrc", *extra)


# ----------------------------------------------------------------------------- end to end


def test_cnn_passes_in_both_modes(srcs):
    out = srcs / "cnn.json"
    p = verify(srcs, "models:cnn", "models:cnn", "--input", "2,3,8,8", "--json", out)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "RESULT: PASS" in p.stdout and "Traceback" not in p.stderr
    d = json.loads(out.read_text())
    assert d["passed"] and d["exit_code"] == 0
    assert [m["mode"] for m in d["modes"]] == ["pynative", "graph"]
    for m in d["modes"]:
        assert m["status"] == "pass"
        (o,) = m["outputs"]
        assert o["shape_torch"] == o["shape_ms"] == [2, 5]
        assert o["max_abs"] < 1e-5
    assert d["torch_imported_on_ms_side"] is False
    assert "loaded" in d["weights"]  # msmigrate.weights mapped BatchNorm gamma/beta/moving_*
    assert d["versions"]["mindspore"].startswith("2.")


def test_multi_input_int64_and_nested_outputs(srcs):
    out = srcs / "two.json"
    p = verify(srcs, "models:two_inputs", "models:two_inputs", "--mode", "graph",
               "--input", "2,6", "--input", "2,3", "--dtype", "int64", "--json", out)
    assert p.returncode == 0, p.stdout + p.stderr
    d = json.loads(out.read_text())
    assert d["inputs"] == [{"shape": [2, 6], "dtype": "float32"}, {"shape": [2, 3], "dtype": "int64"}]
    assert [m["mode"] for m in d["modes"]] == ["graph"]
    for m in d["modes"]:
        paths = [o["path"] for o in m["outputs"]]
        assert paths == ["out['h']", "out['pair'][0]", "out['pair'][1]"]
        assert all(o["passed"] and o["max_abs"] < 1e-5 for o in m["outputs"])


def test_wrong_layernorm_eps_fails_and_is_localised(srcs):
    out = srcs / "ln.json"
    p = verify(srcs, "models:ln_net", "models:ln_net_wrong_eps", "--input", "4,8", "--json", out)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "RESULT: FAIL" in p.stdout
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("first divergent layer"))
    assert "'norm'" in line and "torch LayerNorm / mindspore LayerNorm" in line
    assert "inputs agree" in line
    d = json.loads(out.read_text())
    assert all(m["status"] == "fail" for m in d["modes"])
    div = d["divergence"]
    assert div["name"] == "norm" and div["inputs_differ"] is False
    assert div["max_abs"] > 0.1          # eps 1e-7 vs 1e-5 on variance ~1e-6
    # layers before 'norm' agree, so it is not the first torch layer
    assert div["index"] == 1


def test_wrong_gelu_fails_and_is_localised(srcs):
    p = verify(srcs, "models:gelu_net", "models:gelu_net_wrong", "--input", "8,16",
               "--mode", "pynative", "--rtol", "1e-5")
    assert p.returncode == 1, p.stdout + p.stderr
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("first divergent layer"))
    assert "'act'" in line and "torch GELU / mindspore GELU" in line and "inputs agree" in line
    rows = [ln.split()[0] for ln in p.stdout.splitlines() if ln.startswith(("pynative", "graph"))]
    assert rows == ["pynative"]  # --mode pynative: graph mode not run


def test_pynative_exception_is_localised(srcs):
    p = verify(srcs, "models:gelu_net", "models:gelu_net_raises", "--input", "8,16", "--mode", "pynative")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "ERROR: ValueError" in p.stdout and "Traceback" not in p.stdout + p.stderr
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("first divergent layer"))
    # launch_blocking in the worker makes the error surface in the cell that caused it
    assert "'act'" in line and "torch GELU / mindspore BadReshape" in line and "raised" in line


def test_bad_spec_and_inputs_exit_2_with_one_line(srcs):
    cases = [
        ["--torch", "models.cnn", "--input", "2,3,8,8"],                      # no colon
        ["--torch", "models:cnn", "--input", "2,x,8"],                        # bad shape
        ["--torch", "models:cnn", "--input", "2,3", "--dtype", "complex7"],   # bad dtype
        ["--torch", "models:cnn", "--dtype", "int64", "--input", "2,3"],      # dtype before input
        ["--torch", "models:cnn"],                                            # no input
        ["--torch", "models:cnn", "--input", "2,3,8,8", "--mode", "eager"],   # bad mode
        ["--torch", "models:cnn", "--input", "2,3,8,8", "--torch-path", "nope"],
    ]
    for args in cases:
        p = run_cli(srcs, *args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert p.stdout == "", (args, p.stdout)
        assert len(p.stderr.strip().splitlines()) == 1, (args, p.stderr)
        assert p.stderr.startswith("msmigrate verify: error:") and "Traceback" not in p.stderr


def test_missing_modules_exit_2(srcs):
    p = verify(srcs, "nosuchpkg.models:cnn", "models:cnn", "--input", "2,3,8,8")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "nosuchpkg" in p.stderr and "Traceback" not in p.stderr
    p = verify(srcs, "models:cnn", "nosuchpkg:cnn", "--input", "2,3,8,8")  # caught before any worker
    assert p.returncode == 2 and p.stderr.startswith("msmigrate verify: error: mindspore: cannot import")
    p = verify(srcs, "models:cnn", "models:no_such_factory", "--input", "2,3,8,8")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "no_such_factory" in p.stderr and "Traceback" not in p.stderr
    p = verify(srcs, "models:cnn", "models:cnn", "--input", "2,3,5,5")  # torch forward cannot run
    assert p.returncode == 2 and "torch: forward" in p.stderr and "Traceback" not in p.stderr


def test_mindspore_side_never_imports_torch(srcs):
    p = verify(srcs, "models:cnn", "bad_models:cnn", "--input", "2,3,8,8")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "must not import torch" in p.stdout and "Traceback" not in p.stdout + p.stderr
    # the message names the module that imported torch, at its line
    assert "bad_models.py:2 (bad_models) imports torch" in p.stdout, p.stdout


def test_build_failure_names_the_users_line_and_json_has_the_traceback(srcs, tmp_path):
    out = tmp_path / "result.json"
    p = verify(srcs, "models:cnn", "broken_models:cnn", "--input", "2,3,8,8", "--json", str(out))
    assert p.returncode == 1, p.stdout + p.stderr
    assert "building the MindSpore net broken_models:cnn failed" in p.stdout, p.stdout
    assert "broken_models.py:6)" in p.stdout and "Traceback" not in p.stdout + p.stderr, p.stdout
    detail = json.dumps(json.loads(out.read_text()))
    assert "Traceback (most recent call last)" in detail and "broken_models.py" in detail, detail[:2000]


# ----------------------------------------------------------------------------- helpers, in process


def test_verify_module_imports_no_framework():
    code = ("import sys, msmigrate.verify; "
            "assert 'torch' not in sys.modules and 'mindspore' not in sys.modules")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_parse_input_spec_and_make_inputs():
    assert V.parse_input_spec("2,3,64,64") == V.InputSpec((2, 3, 64, 64), "float32")
    assert V.parse_input_spec("2,16:int64") == V.InputSpec((2, 16), "int64")
    assert V.parse_input_spec("2,16", "long") == V.InputSpec((2, 16), "int64")
    assert V.parse_input_spec(((4, 5), "int32")) == V.InputSpec((4, 5), "int32")
    with pytest.raises(V.VerifyUsageError):
        V.parse_input_spec("2,-3")
    assert V.parse_input_spec("2,0") == V.InputSpec((2, 0), "float32")   # an empty dimension, as torch takes it
    a1 = V.make_inputs(["2,3", "4:int64"], seed=3, int_high=7)
    a2 = V.make_inputs(["2,3", "4:int64"], seed=3, int_high=7)
    assert a1[0].dtype == np.float32 and a1[1].dtype == np.int64
    assert (a1[1] >= 0).all() and (a1[1] < 7).all()
    assert all(np.array_equal(x, y) for x, y in zip(a1, a2))


def test_compare_arrays_tolerance_rule():
    t = np.array([10.0, -2.0], np.float32)
    ok = V.compare_arrays(t, t + np.float32(9e-4), 1e-4)           # tol = 1e-4 * 10
    assert ok["passed"] and ok["tol"] == pytest.approx(1e-3)
    bad = V.compare_arrays(t, t + np.float32(2e-3), 1e-4)
    assert not bad["passed"] and bad["max_abs"] == pytest.approx(2e-3, rel=1e-3)
    small = np.array([1e-3], np.float32)                            # tol floor: rtol * 1
    assert V.compare_arrays(small, small * 1.05, 1e-4)["passed"]
    assert not V.compare_arrays(t, t[:1], 1e-4)["passed"]          # shape mismatch
    nan = np.array([np.nan, 1.0])
    assert V.compare_arrays(nan, nan.copy(), 1e-4)["passed"]
    assert not V.compare_arrays(nan, np.array([0.0, 1.0]), 1e-4)["passed"]


def test_result_json_round_trip():
    r = V.VerifyResult(torch_spec="a:b", ms_spec="c:d", inputs=[{"shape": [1], "dtype": "float32"}])
    r.modes.append(V.ModeResult(mode="pynative", status="fail", outputs=[V.OutputDiff(
        path="out", shape_torch=[1], dtype_torch="float32", shape_ms=[1], dtype_ms="float32",
        max_abs=float("inf"), max_rel=float("inf"), tol=1e-4, passed=False, note="NaN mismatch")]))
    r.divergence = V.LayerDivergence(name="x", call=0, type_torch="A", type_ms="B", max_abs=1.0,
                                     max_rel=1.0, tol=1e-4, inputs_differ=False, index=0)
    d = json.loads(json.dumps(r.to_dict()))
    assert d["exit_code"] == 1 and d["modes"][0]["outputs"][0]["max_abs"] == "inf"
    r2 = V.VerifyResult.from_dict(d)
    assert r2.modes[0].outputs[0].max_abs == float("inf") and r2.divergence.name == "x"
    assert "RESULT: FAIL" in V.format_report(r2) and "'x'" in V.format_report(r2)


def test_an_empty_dimension_is_a_shape_a_negative_one_is_not():
    """TabTransformer's categories-only model is called with a (6, 0) continuous input (bench/_rw_heldout18.py):
    torch takes the empty tensor, and verify builds it too; a negative size stays a usage error."""
    assert V._parse_shape("6,0") == (6, 0)
    with pytest.raises(V.VerifyUsageError, match="must not be negative"):
        V._parse_shape("6,-1")
