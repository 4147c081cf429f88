"""`msmigrate dump-config`: the configuration it writes makes MindSpore 2.10 (CPU, GRAPH mode)
dump exactly the chosen layers of a converted network, and the dumped tensors equal torch's
activations of the same layers (msmigrate/dump_config.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from msmigrate.cli import main
from msmigrate.dump_config import build_config, layer_pattern, layer_tensor

ROOT = Path(__file__).resolve().parent.parent

TORCH_SRC = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.conv(x)) + x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.layer1 = nn.Sequential(Block(4), Block(4))
        self.fc = nn.Linear(4 * 6 * 6, 2)

    def forward(self, x):
        x = self.conv1(x)
        x = self.layer1(x)
        return self.fc(torch.flatten(x, 1))
'''

RUN_MS = '''
import sys
import numpy as np
import mindspore as ms
sys.path.insert(0, sys.argv[1])
ms.set_context(mode=ms.GRAPH_MODE)
import net_ms
from msmigrate.weights import load_torch_state_dict
net = net_ms.Net()
sd = dict(np.load(sys.argv[2]))
load_torch_state_dict(net, sd, strict=True)
net.set_train(False)
out = net(ms.Tensor(np.load(sys.argv[3])))
np.save(sys.argv[4], out.asnumpy())
'''


def test_layer_pattern_and_config_fields(tmp_path):
    assert layer_pattern("conv1") == "Default/conv1-[^/]+/.*"
    assert layer_pattern("layer1.0") == "Default/layer1-[^/]+/0-[^/]+/.*"
    cfg = build_config(["conv1"], str(tmp_path / "d"), iteration="all", inputs=True, outputs=True)
    c = cfg["common_dump_settings"]
    assert c["dump_mode"] == 1 and c["kernels"] == ["name-regex(Default/conv1-[^/]+/.*)"]
    assert c["input_output"] == 0 and c["iteration"] == "all" and os.path.isabs(c["path"])
    assert cfg["e2e_dump_settings"] == {"enable": True, "trans_flag": True}
    assert build_config([], "d")["common_dump_settings"]["dump_mode"] == 0     # no layers: everything
    assert build_config(["a"], "d", inputs=True, outputs=False)["common_dump_settings"]["input_output"] == 1
    grads = build_config(["fc"], "d", grads=True)["common_dump_settings"]["kernels"]
    assert grads[1] == "name-regex(Gradients/Default/fc-[^/]+/.*)"


def test_dump_config_dumps_chosen_layers_equal_to_torch(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    pytest.importorskip("mindspore")
    from msmigrate.converter import compat_source, convert_code
    from msmigrate.dump_config import save_torch_activations

    # the converted network and its helper module
    code, _, _ = convert_code(TORCH_SRC)
    (tmp_path / "net_ms.py").write_text(code, encoding="utf-8")
    (tmp_path / "_ms_compat.py").write_text(compat_source(), encoding="utf-8")
    ns: dict = {}
    exec(compile(TORCH_SRC, "<torch net>", "exec"), ns)
    torch.manual_seed(0)
    tnet = ns["Net"]()
    np.savez(tmp_path / "sd.npz", **{k: v.detach().numpy() for k, v in tnet.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    acts = save_torch_activations(tnet, x, ["conv1", "layer1.0"], str(tmp_path / "torch_acts.npz"))

    dumps = tmp_path / "dumps"
    cfg_file = tmp_path / "dump.json"
    assert main(["dump-config", "--layers", "conv1,layer1.0", "--path", str(dumps), "-o", str(cfg_file)]) == 0
    printed = capsys.readouterr().out
    assert f"export MINDSPORE_DUMP_CONFIG={cfg_file}" in printed and "GRAPH" in printed
    assert json.loads(cfg_file.read_text())["common_dump_settings"]["input_output"] == 2

    (tmp_path / "run_ms.py").write_text(RUN_MS, encoding="utf-8")
    env = dict(os.environ, MINDSPORE_DUMP_CONFIG=str(cfg_file), PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, str(tmp_path / "run_ms.py"), str(tmp_path), str(tmp_path / "sd.npz"),
                    str(tmp_path / "x.npy"), str(tmp_path / "out.npy")],
                   check=True, cwd=tmp_path, env=env, timeout=240, capture_output=True)
    with torch.no_grad():
        np.testing.assert_allclose(np.load(tmp_path / "out.npy"), tnet(torch.from_numpy(x)).numpy(), atol=1e-4)

    dumped = [p.name for p in dumps.rglob("*.npy")]
    assert dumped, "MindSpore wrote no dump files"
    # only the chosen layers' kernels: conv1 and layer1.0, not layer1.1 nor fc
    assert all("conv1-" in n or "layer1-SequentialCell_0-" in n for n in dumped), dumped
    assert any("layer1-SequentialCell_0-" in n for n in dumped) and any("conv1-" in n for n in dumped)
    for layer in ("conv1", "layer1.0"):
        np.testing.assert_allclose(layer_tensor(str(dumps), layer), acts[layer], rtol=1e-4, atol=1e-4,
                                   err_msg=layer)
    # the documented offline comparison
    assert main(["dump-config", "--layers", "conv1,layer1.0", "--path", str(dumps),
                 "--compare", str(tmp_path / "torch_acts.npz")]) == 0
    report = capsys.readouterr().out
    assert "conv1: shape (2, 4, 6, 6)" in report and "layer1.0: shape (2, 4, 6, 6)" in report
