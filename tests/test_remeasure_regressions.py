"""Regressions found by re-measuring the earlier held-out sets (bench/_rw_heldout3.py ... _rw_heldout14.py) on
stop 42's converter: all three were in bench/_rw_runner.py, which runs a program and its conversion from the same
weights and noise. Each test here is a small program of ours converted with msmigrate and run under the runner
as bench/real_world.py runs it: torch, then the conversion in PYNATIVE and in GRAPH mode, losses compared.

- A program in a directory below the converted tree's top (spro/practical-pytorch's char-rnn drivers, heldout11)
  imports `_ms_compat` through msmigrate's stand-in beside it, which hands it the one helper module at the top.
  The runner's `own_modules_first` (added for heldout26's matplotlib stand-ins) dropped that module from
  sys.modules because its file is not beside the program, so the program imported a second copy that the runner
  had not patched: its compile_step recorded nothing and, in GRAPH mode, the step compiled the runner's
  recording value_and_grad ("NameError: The name 'STATE' is not defined"). A helper stand-in is kept now.
- The runner's _ms_compat.normal_/uniform_ stand-ins (aligned with the torch side's Tensor.normal_/uniform_ of a
  plain tensor) named the runner's globals; in a compiled step MindSpore looked them up in the program's module
  (heldout9's mlm: "NameError: The name 'NOISE' is not defined"). Their draws are functions reached through
  closure names now.
- `t = torch.empty(...); nn.init.kaiming_uniform_(t)` (vector-quantize-pytorch's codebook, heldout3's vq): since
  the runner drew Tensor.uniform_ of a plain tensor from the shared noise stream (torchattacks' random starts),
  torch's kaiming_uniform_, which fills through Tensor.uniform_, took numbers from that stream on the torch side
  only (the converted _ms_compat.kaiming_uniform_ draws from the initializers' own stream), and every later draw
  (the program's inputs) was shifted: 4.4e-1 at the first loss. torch.nn.init's initialisers other than its
  normal_ and uniform_ (which convert to the stream-drawing _ms_compat.normal_/uniform_) keep torch's own draws.

Found re-measuring heldout5-8, wider, heldout2, 15 and 17 on stop 43's converter, again in the runner:
- Models built one after another that share a stateless layer (performer-pytorch's default-argument
  `nn.ReLU()`, heldout6's performer): the runner took the second for a wrapper of the first (a rule made for
  torchdiffeq's odeint wrappers), never recorded it, and the converted side trained it from MindSpore's own
  initial weights. Only parts holding parameters or buffers make a module a wrapper now."""
from __future__ import annotations


import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from bench import real_world  # noqa: E402

STEPS = 3


def _run_everywhere(tmp_path, files, script):
    """Converts the tree FILES (path -> source) and runs SCRIPT in it under the runner: torch, then the
    conversion in PYNATIVE and GRAPH. Returns the three records."""
    src = tmp_path / "src"
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    out = tmp_path / "out"
    rc, _, _, msg = real_world.convert(src, out)
    assert rc == 0 and (out / script).exists(), msg
    weights = tmp_path / "weights"
    weights.mkdir()
    records = {}
    for side, mode, root in (("torch", "pynative", src), ("ms", "pynative", out), ("ms", "graph", out)):
        record = tmp_path / f"{side}_{mode}.json"
        records[(side, mode)] = real_world.run_side(side, root / script, [], record, weights, STEPS, 600, mode=mode)
    return out, records


def _assert_losses_match(records):
    torch_rec = records[("torch", "pynative")]
    assert torch_rec["status"] in ("finished", "stopped"), torch_rec.get("error")
    assert len(torch_rec["losses"]) == STEPS
    for key in (("ms", "pynative"), ("ms", "graph")):
        rec = records[key]
        assert rec["status"] in ("finished", "stopped"), (key, rec.get("error"))
        np.testing.assert_allclose(rec["losses"], torch_rec["losses"], rtol=1e-5, atol=1e-6, err_msg=str(key))


TRAIN_BELOW_TOP = '''
import torch
import torch.nn as nn
from layers import Small

model = Small()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(4, 5)
    optimizer.zero_grad()
    loss = ((model(x) - 1.0) ** 2).mean()
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
'''

LAYERS = '''
import torch.nn as nn


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 2)

    def forward(self, x):
        return self.fc(x).tanh()
'''


def test_a_program_below_the_converted_trees_top_runs_under_the_runners_patches(tmp_path):
    out, records = _run_everywhere(tmp_path, {"experiment/train.py": TRAIN_BELOW_TOP,
                                              "experiment/layers.py": LAYERS}, "experiment/train.py")
    stand_in = (out / "experiment" / "_ms_compat.py").read_text()
    assert "stands for the one _ms_compat.py" in stand_in      # what this test is about: the helper's stand-in
    _assert_losses_match(records)


TRAIN_WITH_INIT_FILL = '''
import torch
import torch.nn as nn


class Coded(nn.Module):
    """a fixed table filled by an initialiser on a plain tensor, then kept as a buffer"""
    def __init__(self):
        super().__init__()
        table = torch.empty(3, 4)
        nn.init.kaiming_uniform_(table)
        self.register_buffer("table", table)
        spread = torch.empty(3, 4)
        nn.init.xavier_normal_(spread)
        self.register_buffer("spread", spread)
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x) @ (self.table + self.spread).t()


model = Coded()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(3):
    x = torch.randn(6, 4)
    optimizer.zero_grad()
    loss = (model(x) ** 2).mean()
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
'''


def test_an_initialiser_filling_a_plain_tensor_leaves_the_shared_noise_where_the_conversion_leaves_it(tmp_path):
    out, records = _run_everywhere(tmp_path, {"train.py": TRAIN_WITH_INIT_FILL}, "train.py")
    converted = (out / "train.py").read_text()
    assert "_ms_compat.kaiming_uniform_(table)" in converted and "_ms_compat.xavier_normal_(spread)" in converted
    _assert_losses_match(records)


TRAIN_WITH_FILLS_IN_STEP = '''
import torch
import torch.nn as nn


class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        jitter = torch.empty_like(x).normal_(0.0, 0.1)           # a plain tensor filled in the step
        return self.fc(x + jitter)


model = Masked()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(5, 4)
    optimizer.zero_grad()
    loss = (model(x) ** 2).mean()
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
'''


def test_plain_tensors_filled_in_a_compiled_step_compile_under_the_runner(tmp_path):
    """mlm-pytorch (heldout9): a mask drawn by a uniform_ fill of a zeros_like tensor in the trainer's forward.
    The runner's aligned _ms_compat.uniform_/normal_ named the runner's own globals (NOISE), which MindSpore looks
    up in the program's module when a compiled step holds the call: GRAPH stopped with "NameError: The name 'NOISE'
    is not defined". Here with normal_, whose draws inside a compiled step the runner replays from the stream (a
    uniform_ fill there compiles now too, but its in-graph draws are not the stream's: the losses after the first,
    op-by-op step differ, so it is not compared here)."""
    out, records = _run_everywhere(tmp_path, {"train.py": TRAIN_WITH_FILLS_IN_STEP}, "train.py")
    converted = (out / "train.py").read_text()
    assert "_ms_compat.normal_(" in converted
    _assert_losses_match(records)


TRAIN_MODELS_SHARING_A_DEFAULT_LAYER = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, width, squash=nn.Tanh()):            # one Tanh for every Block ever built
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.squash = squash

    def forward(self, x):
        return self.squash(self.proj(x))


class Stack(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.blocks = nn.Sequential(Block(width), Block(width))
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        return self.head(self.blocks(x))


x = torch.randn(6, 4)
for trial in range(2):
    model = Stack(4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(2):
        optimizer.zero_grad()
        loss = ((model(x) - 0.5) ** 2).mean()
        loss.backward()
        optimizer.step()
        print("loss", loss.item())
'''


def test_a_second_model_sharing_a_stateless_default_layer_with_the_first_starts_from_torchs_weights(tmp_path):
    """performer-pytorch (heldout6's performer): three PerformerLMs built one after another, each holding the
    one `nn.ReLU()` of a default argument. The runner took a module holding any part of a recorded model for a
    wrapper of it (torchdiffeq's odeint, heldout16), so the second and third models were never recorded: the
    converted side trained them from MindSpore's own initial weights (2.4e-1 at the second model's first loss).
    Only parts holding parameters or buffers count now."""
    out, records = _run_everywhere(tmp_path, {"train.py": TRAIN_MODELS_SHARING_A_DEFAULT_LAYER}, "train.py")
    _assert_losses_match(records)
    assert len(records[("torch", "pynative")]["models"]) == 2
