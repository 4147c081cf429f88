"""msmigrate verify of a model whose forward draws random numbers (msmigrate/draw_replay.py): torch's draws are
recorded and replayed, in order, into the converted model, in PyNative and GRAPH mode."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from msmigrate import draw_replay as D

REPO = Path(__file__).resolve().parents[1]

# a forward that draws three ways (timesteps, noise, a mask), as a diffusion model's training forward does
NOISY = '''
import torch
from torch import nn


class Noisy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        t = torch.randint(0, 3, (x.shape[0],))
        noise = torch.randn_like(x)
        keep = torch.bernoulli(torch.full_like(x, 0.5))
        return self.fc(x + noise) * keep + t[:, None]


def noisy():
    return Noisy()
'''

# a conversion that draws the noise before the timesteps: the replay must refuse it, naming torch's line
SWAPPED = '''
from mindspore import nn, ops


class Noisy(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def construct(self, x):
        noise = ops.randn_like(x)
        t = ops.randint(0, 3, (x.shape[0],))
        return self.fc(x + noise) + t[:, None]


def noisy():
    return Noisy()
'''


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    from msmigrate import converter

    root = tmp_path_factory.mktemp("draws")
    (root / "tsrc").mkdir()
    (root / "tsrc" / "models.py").write_text(NOISY)
    converter.convert_tree(root / "tsrc", root / "msrc", jobs=1)
    (root / "swapped").mkdir()
    (root / "swapped" / "models.py").write_text(SWAPPED)
    return root


def verify(root, ms_path, *extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return subprocess.run([sys.executable, "-m", "msmigrate.verify", "--torch", "models:noisy", "--torch-path", "tsrc",
                           "--ms", "models:noisy", "--ms-path", ms_path, "--input", "3,4", *extra], cwd=root, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)


def test_converted_noisy_forward_passes_in_both_modes(roots):
    p = verify(roots, "msrc")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "random draws: 3 in torch's forward" in p.stdout
    assert f"torch.randint at {roots / 'tsrc' / 'models.py'}:12" in p.stdout
    assert p.stdout.count(" ok") == 2 and "RESULT: PASS" in p.stdout


def test_draws_that_differ_are_named(roots):
    p = verify(roots, "swapped", "--no-per-layer")
    assert p.returncode == 1, p.stdout + p.stderr
    # PyNative checks each draw; the compiled GRAPH forward counts the numbers it took
    assert ("ERROR: random draw 1: the converted model calls ops.randn_like (normal numbers) where torch "
            f"called torch.randint (integer) at {roots / 'tsrc' / 'models.py'}:12") in p.stdout
    assert "ERROR: the compiled model took 15 random numbers where torch's forward drew 27" in p.stdout


def test_recorded_draws_check_count_kind_and_shape():
    draws = [{"api": "torch.randn", "kind": "normal", "where": "m.py:3", "shape": [2], "dtype": "float32"},
             {"api": "torch.randperm", "kind": "permutation", "where": "m.py:4", "shape": [3], "dtype": "int64"}]
    src = D.RecordedDraws(draws, [np.array([0.5, -1.0], np.float32), np.array([2, 0, 1])])
    assert src("ops.randn", "normal", np.zeros(2, np.float32), None).tolist() == [0.5, -1.0]
    # ops.shuffle(x) of torch.randperm(n): x's rows in torch's order
    assert src("ops.shuffle", "permutation", np.array([10, 11, 12]), None).tolist() == [12, 10, 11]
    assert src.problem() is None
    with pytest.raises(D.ReplayError, match=r"draw 3 \(ops.rand\) has no counterpart"):
        src("ops.rand", "uniform", np.zeros(2), None)
    src.reset()
    with pytest.raises(D.ReplayError, match=r"draws shape \[3\] where torch's torch.randn at m.py:3 drew \[2\]"):
        src("ops.randn", "normal", np.zeros(3, np.float32), None)
    src.reset()
    src("ops.randn", "normal", np.zeros(2, np.float32), None)
    assert "made 1 of torch's 2 random draws: draw 2 (torch.randperm at m.py:4)" in src.problem()


def test_torch_draws_recorded_and_stray_generator_use_reported():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F

    torch.manual_seed(0)
    x = torch.ones(2, 3)
    with D.TorchDraws(torch) as rec:
        a = torch.randn_like(x)
        b = x.clone().uniform_(2.0, 3.0)
        F.dropout(x, 0.5, training=True)    # draws through no replayed API
    assert [d["api"] for d in rec.draws] == ["torch.randn_like", "Tensor.uniform_"]
    assert rec.draws[0]["where"] == f"{__file__}:{test_torch_draws_recorded_and_stray_generator_use_reported.__code__.co_firstlineno + 7}"
    np.testing.assert_array_equal(rec.arrays[0], a.numpy())
    np.testing.assert_array_equal(rec.arrays[1], b.numpy())
    assert len(rec.unrecorded) == 1 and rec.unrecorded[0].startswith("after the last recorded draw")
    assert torch.randn is not None and torch.Tensor.uniform_.__name__ == "uniform_"   # patches undone
