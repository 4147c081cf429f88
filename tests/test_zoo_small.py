"""A few torchvision architectures, end to end, at small inputs: the real torchvision
0.29.1 wheel from PyPI is converted whole by msmigrate, weights go through
`msmigrate weights`, and the converted models (run in a process that never imports
torch) match the originals in PYNATIVE and GRAPH mode. The full 21-model run is
bench/zoo_parity.py."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import zoo_parity  # noqa: E402

ARCHS = ["resnet18", "mobilenet_v3_small", "squeezenet1_0", "shufflenet_v2_x1_0"]


@pytest.fixture(scope="module")
def zoo_results(tmp_path_factory):
    work = tmp_path_factory.mktemp("zoo")
    return zoo_parity.run(work, ARCHS, timeout=1500)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_converted_torchvision_model_matches(zoo_results, arch, mode):
    res = zoo_results[arch]
    assert "error" not in res, res
    assert mode in res, res
    assert res[mode].get("pass"), res[mode]
    assert res[mode]["max_abs_diff"] < 1e-3
