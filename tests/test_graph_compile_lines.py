"""A graph MindSpore cannot compile stops naming the ORIGINAL file and line (issue 12, the first rule).

MindSpore's compile errors (its parser's, its type inference's, a layer's argument check run as the graph compiles)
name the converted file's line ("In file .../train.py:47"), or, raised in Python, no line at all (the trace is only in
the analyze_fail.ir it writes). The converter records the original line of each converted statement
(msmigrate/line_map.py, _ms_lines.json beside _ms_compat.py) and the runtime re-raises the error as a MigrationError
naming it, MindSpore's text kept (compat_parts/graph_constants.py, raise_at_original_line). Each program here is
valid torch that the converted program cannot compile; it runs converted, in a subprocess, in GRAPH mode (the
converted programs' default)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mindspore")

from msmigrate.converter import convert_code, convert_tree  # noqa: E402
from msmigrate.line_map import follow_edits, unmark  # noqa: E402

# a `try` statement in the forward: MindSpore's graph parser rejects it ("Unsupported statement 'Try'"), naming
# the converted call of the model (raised in C++: the trace is in the message)
TRY_FORWARD = '''import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        try:
            y = self.fc(x)
        except ValueError:
            y = x[:, :2]
        return y


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.ones(3, 4)
for step in range(2):
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
print("done", float(loss))
'''

# float64 parameters: MindSpore's SGD in a compiled step accepts float16/float32 only, a check raised in Python
# as the graph compiles (its trace only in analyze_fail.ir); torch trains in float64
FLOAT64_STEP = '''import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


model = Net().double()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.ones(3, 4, dtype=torch.float64)
for step in range(2):
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
print("done", float(loss))
'''


# a layer the loss skips on the second step, with Adamax: MindSpore's counts one step for all parameters (torch
# one per parameter), so the step refuses, on the host (compat_parts/unused_params.py), naming the step's line
ADAMAX_SKIP = '''import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 2)
        self.b = nn.Linear(4, 2)

    def forward(self, x, k):
        return self.a(x) + self.b(x) if k else self.a(x)


model = Net()
opt = torch.optim.Adamax(model.parameters(), lr=0.01)
x = torch.ones(3, 4)
for step, k in enumerate([1, 0]):
    opt.zero_grad()
    loss = model(x, k).pow(2).mean()
    loss.backward()
    opt.step()
print("done", float(loss))
'''


def run_converted(tmp_path: Path, source: str, mode: str = "GRAPH_MODE") -> subprocess.CompletedProcess:
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text(source)
    out = tmp_path / "out"
    convert_tree(src, out)
    code = (out / "train.py").read_text()
    assert "ms.set_context(mode=ms.GRAPH_MODE)" in code
    (out / "train.py").write_text(code.replace("ms.set_context(mode=ms.GRAPH_MODE)", f"ms.set_context(mode=ms.{mode})"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(MS_DEVICE_TARGET="CPU", GLOG_v="3", ONEDNN_MAX_CPU_ISA="AVX2")
    return subprocess.run([sys.executable, "train.py"], cwd=out, env=env, capture_output=True, text=True,
                          timeout=600)


def last_error(proc: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln and not ln.startswith((" ", "[", "#", "-"))]
    return next((ln for ln in reversed(lines) if "Error" in ln), proc.stderr[-2000:])


def test_parser_refusal_names_original_line(tmp_path):
    proc = run_converted(tmp_path, TRY_FORWARD)
    assert proc.returncode != 0
    err = last_error(proc)
    assert err.startswith("_ms_compat.MigrationError: train.py:23 "), proc.stderr[-3000:]   # loss = model(x)...
    assert "Unsupported statement 'Try'" in err


def test_python_raised_compile_check_names_original_line(tmp_path):
    proc = run_converted(tmp_path, FLOAT64_STEP)
    assert proc.returncode != 0
    err = last_error(proc)
    assert err.startswith("_ms_compat.MigrationError: train.py:21 "), proc.stderr[-3000:]   # opt.step()
    assert "For 'SGD'" in err


@pytest.mark.parametrize("mode", ["GRAPH_MODE", "PYNATIVE_MODE"])
def test_host_refusal_names_the_step_line(tmp_path, mode):
    proc = run_converted(tmp_path, ADAMAX_SKIP, mode)
    assert proc.returncode != 0
    err = last_error(proc)
    # opt.step(): its `opt(grads)` in the step (GRAPH: run op by op the first time, recording what the loss reached)
    assert err.startswith("_ms_compat.MigrationError: train.py:22: Adamax.step()"), proc.stderr[-3000:]


def test_spans_name_the_forward_lines():
    spans: list = []
    code, _, _ = convert_code(TRY_FORWARD, "train", spans=spans)
    assert "#@msmigrate-line" not in code
    assert code == convert_code(TRY_FORWARD, "train")[0]     # the marks change nothing in the converted code
    lines = code.splitlines()
    at = {lines[s - 1].strip(): o for s, e, o in spans if s == e}
    assert at["y = self.fc(x)"] == 12 and at["y = x[:, :2]"] == 14 and at["return y"] == 15
    assert at["opt(grads)"] == 25        # the train step's update: opt.step()


def test_spans_follow_added_comment_lines():
    code, spans = unmark("a = 1  #@msmigrate-line:3@\nb = 2  # kept  #@msmigrate-line:5@\n")
    assert code == "a = 1\nb = 2  # kept\n" and spans == [(1, 1, 3), (2, 2, 5)]
    assert follow_edits(spans, code, "# note\na = 1\nb = 2  # kept\n") == [(2, 2, 3), (3, 3, 5)]


def test_table_written_with_the_helper(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text(TRY_FORWARD)
    convert_tree(src, tmp_path / "out")
    table = json.loads((tmp_path / "out" / "_ms_lines.json").read_text())
    assert table["train.py"]["source"] == "train.py" and table["train.py"]["spans"]


def test_another_trees_helper_names_this_trees_lines(tmp_path):
    # two converted trees in one process: the Cell.compile hook running is the helper of the last tree imported,
    # and the converted file in a compile error's trace may be the other tree's (its _ms_lines.json, not the hook's)
    import importlib.util
    import mindspore as ms
    for name, source in (("a", TRY_FORWARD), ("b", FLOAT64_STEP)):
        (tmp_path / f"src_{name}").mkdir()
        (tmp_path / f"src_{name}" / f"train_{name}.py").write_text(source)
        convert_tree(tmp_path / f"src_{name}", tmp_path / f"out_{name}")
    spans = json.loads((tmp_path / "out_a" / "_ms_lines.json").read_text())["train_a.py"]["spans"]
    start, end, orig = next(s for s in spans if s[0] == s[1])      # one line's statement
    hooks = ms.nn.Cell.compile, ms.nn.Cell.compile_and_run
    spec = importlib.util.spec_from_file_location("tree_b_ms_compat", tmp_path / "out_b" / "_ms_compat.py")
    helper_b = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(helper_b)
        assert helper_b.original_line(tmp_path / "out_a" / "train_a.py", end) == f"train_a.py:{orig}"
        assert helper_b.original_line(tmp_path / "out_b" / "train_b.py", 10 ** 6) is None
        assert helper_b.original_line(tmp_path / "src_a" / "train_a.py", start) is None    # no converted tree's
    finally:
        ms.nn.Cell.compile, ms.nn.Cell.compile_and_run = hooks
