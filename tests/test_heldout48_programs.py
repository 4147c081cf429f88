"""Minimal reproductions of what bench/_rw_heldout48.py's programs (adambielski/siamese-triplet,
kevinzakka/recurrent-visual-attention) needed, each compared with torch (PYNATIVE and GRAPH where a step is
compiled).

- `if type(outputs) not in (tuple, list): outputs = (outputs,)` and `loss = out[0] if type(out) in (tuple, list)
  else out` in a training loop's body (siamese-triplet's trainer.train_epoch, which serves a model returning one
  tensor or a tuple and a loss returning one value or a tuple): in GRAPH mode the comparison of type(x) was not
  folded, the `if` became a run-time switch between a tuple and a tensor, and the step did not compile ("Cannot
  join the return values of different branches", or, under the gradient, MindSpore's "Primal graph ... is not a
  ValueNode of Parameter", a RuntimeError, not a MigrationError). `type(x) in (tuple, list)` and its `not in`,
  `==`, `is`, `!=`, `is not` forms are written as `_ms_compat.exact_type_in(x, (tuple, list))`: isinstance() and
  hasattr(x, '_fields') (a named tuple is not exactly a tuple), which GRAPH mode folds
  (graph_idioms.exact_type_test). x is read once there, as in the original: a first form reading it twice hid
  from the train-loop rewrite that the loop reads `outputs` after the step (it was no longer returned from it: a
  NameError at the metrics' call).
- A module that names no torch but whose class's method gets tensors (siamese-triplet's metrics.py:
  AccumulatedAccuracyMetric.__call__(self, outputs, target, loss) calls `outputs[0].data.max(1, keepdim=True)`,
  `.cpu()`, `target[0].size(0)`) was copied unchanged: `.cpu()` on a MindSpore tensor is an AttributeError at the
  first step. A module-level function was already taken as serving torch code where it calls a tensor-only method
  on a parameter (heldout34); a class with a method doing so, also on an entry or attribute of a parameter, is too
  (project_index._tensor_method_functions).
- A loss cell whose forward calls a method of a plain object it holds, which reads the values on the host to
  choose rows (siamese-triplet's OnlineContrastiveLoss and OnlineTripletLoss: `self.pair_selector.get_pairs(
  embeddings, target)`, `.data.numpy()`, np.argpartition, np.random.choice, then `torch.LongTensor(...)` indices):
  in GRAPH mode the step was compiled and stopped (MindSpore's RuntimeError "The pointer[old_param] is null" in the
  reproduction, "Primal graph ... is not a ValueNode of Parameter" or a MigrationError at the .numpy() line in the
  bench). compile_step now runs a step op by op in GRAPH mode too where a cell it reaches reads a tensor on the host
  in its construct or in a method of a plain object it holds (graph_constants.reads_on_host), as it does for the
  other host work a graph cannot hold; such a cell called directly in GRAPH mode (the evaluation's loss in
  test_epoch) runs op by op too (graph_constants._compile_and_run_for_constants)."""
import json
import subprocess
import sys

import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

TYPE_TESTS = _FILL + '''
import torch.nn as nn


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 2)

    def forward(self, a, b):
        return self.body(a), self.body(b)


def gap(u, v, same):
    d = (u - v).pow(2).sum(1)
    per = same * d + (1 - same) * torch.relu(1.0 - d)
    return per.mean(), d.sum()


def mean_sq(u):
    return (u ** 2).mean()


single = nn.Linear(3, 2)
pair = Pair()
fill(single, 1)
fill(pair, 2)
runs = [(single, mean_sq, False), (pair, gap, True)]
seen = []
for net, loss_fn, with_target in runs:
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    for k in range(3):
        x = torch.linspace(-1, 1, 12).reshape(4, 3) * (k + 1)
        data = (x, x.flip(0)) if with_target else x
        target = torch.tensor([1.0, 0.0, 1.0, 0.0]) if with_target else None
        if not type(data) in (tuple, list):
            data = (data,)
        opt.zero_grad()
        outputs = net(*data)
        if type(outputs) not in (tuple, list):
            outputs = (outputs,)
        inputs = outputs
        if target is not None:
            inputs += (target,)
        result = loss_fn(*inputs)
        loss = result[0] if type(result) in (tuple, list) else result
        loss.backward()
        opt.step()
        for kept in (outputs[0], loss):   # read after the step (siamese-triplet's metrics)
            seen.append(kept.detach())
weights = [p.detach() for p in single.parameters()] + [p.detach() for p in pair.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_exact_type_tests_in_a_train_step(graph):
    program_weights_match_torch(TYPE_TESTS, graph=graph)


def test_type_tests_keep_named_tuples_apart(tmp_path):
    """`type(x) in (tuple, list)` is False for a named tuple; the rewrite keeps it so."""
    from msmigrate.cli import main
    from tests.treeutil import run_printed, write_tree

    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {"prog.py": '''import torch
from collections import namedtuple

Two = namedtuple("Two", "a b")
seen = []
for value in (Two(1, 2), (1, 2), [1], torch.zeros(2)):
    seen.append((type(value) in (tuple, list), type(value) is tuple, type(value) != list,
                 not type(value) not in [tuple]))
print("OUT", seen)
'''})
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    assert "type(value)" not in (out / "prog.py").read_text()
    want = run_printed(src, "torch", script="prog.py")
    assert want[0] == (False, False, True, False) and want[1] == (True, True, True, True)
    assert run_printed(out, "ms", script="prog.py") == want


METRIC_CLASS_TREE = {
    "metrics.py": '''
class Hits:
    """counts the rows whose best score is the label (outputs and target are tuples, as a trainer passes them)"""

    def __init__(self):
        self.correct = 0
        self.total = 0

    def __call__(self, outputs, target):
        pred = outputs[0].data.max(1, keepdim=True)[1]
        self.correct += pred.eq(target[0].data.view_as(pred)).cpu().sum()
        self.total += target[0].size(0)
        return 100 * float(self.correct) / self.total
''',
    "loop.py": '''
import numpy as np
import torch
from metrics import Hits

meter = Hits()
s = np.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], np.float32)
first = meter((torch.tensor(s),), (torch.tensor([1, 1, 0, 0]),))
second = meter((torch.tensor(s[::-1].copy()),), (torch.tensor([0, 2, 0, 1]),))
print("OUT", [first, second])
''',
}


def test_torch_free_class_whose_method_gets_tensors_is_converted(tmp_path):
    from msmigrate.cli import main
    from tests.treeutil import run_printed, write_tree

    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, METRIC_CLASS_TREE)
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    report = json.loads((out / "msmigrate-report.json").read_text())
    assert {f["file"]: f["status"] for f in report["files"]}["metrics.py"] == "converted"
    want = run_printed(src, "torch", script="loop.py")
    assert want == [50.0, 75.0]
    assert run_printed(out, "ms", script="loop.py") == want


HOST_SELECTION = _FILL + '''
import torch.nn as nn


class NearestOther:
    """a plain object choosing, for each row, the nearest row of another label (reads the values on the host)"""

    def pick(self, codes, labels):
        d = ((codes[:, None, :] - codes[None, :, :]) ** 2).sum(2).data.numpy().copy()
        tags = labels.cpu().data.numpy()
        same = tags[:, None] == tags[None, :]
        d[same] = np.inf
        return torch.LongTensor(d.argmin(1))


class PairLoss(nn.Module):
    def __init__(self, margin, chooser):
        super().__init__()
        self.margin = margin
        self.chooser = chooser

    def forward(self, codes, labels):
        other = self.chooser.pick(codes, labels)
        gap = (codes - codes[other]).pow(2).sum(1)
        return torch.relu(self.margin - gap).mean()


net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
fill(net, 3)
crit = PairLoss(2.0, NearestOther())
opt = torch.optim.SGD(net.parameters(), lr=0.2, momentum=0.9)
labels = torch.tensor([0, 1, 0, 1, 2, 2])
with torch.no_grad():   # the loss cell called outside a step, before it (siamese-triplet's test_epoch after it)
    before = crit(net(torch.linspace(-2, 1, 18).reshape(6, 3)), labels)
for k in range(3):
    x = torch.linspace(-1, 1, 18).reshape(6, 3) * (k + 1)
    loss = crit(net(x), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
with torch.no_grad():
    held_out = crit(net(torch.linspace(-2, 1, 18).reshape(6, 3)), labels)
weights = [p.detach() for p in net.parameters()] + [before, held_out]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_loss_choosing_rows_on_the_host_in_a_step(graph):
    """A loss cell whose forward calls a method of a plain object it holds that reads the values on the host
    (siamese-triplet's online pair and triplet selectors): in GRAPH mode the step now runs op by op (before: "MindSpore
    cannot compile this in GRAPH mode" at the .numpy() line)."""
    program_weights_match_torch(HOST_SELECTION, graph=graph)
