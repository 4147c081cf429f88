"""Constructs found by bench/real_world.py --set heldout2 (bench/_rw_heldout2.py: kuangliu/pytorch-cifar,
graykode/nlp-tutorial) in programs the converter was not built against, each reduced to a minimal torch
snippet of our own run against its conversion."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .test_train_loop import MLP, _batches, run_both  # noqa: E402

LEGACY_TENSOR_IN_STEP = MLP + """
import numpy as np


def make():
    model = Net()
    return {"model": model, "opt": torch.optim.Adam(model.parameters(), lr=0.01)}


def train(objs, batches):
    model, optimizer = objs["model"], objs["opt"]
    losses = []
    for x, y in batches:
        rows = [np.asarray(r, np.float64) for r in x.tolist()]      # a list of numpy rows, as random_batch() gives
        labels = [float(v) + 0.5 for v in y.tolist()]              # LongTensor truncates
        inputs = torch.Tensor(rows)
        targets = torch.LongTensor(labels)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
"""


def test_legacy_tensor_of_host_data_inside_a_compiled_step():
    """nlp-tutorial's Word2Vec: `torch.Tensor(list of numpy rows)` and `torch.LongTensor(list)` in the training
    loop become part of the converted step; in GRAPH mode the step compiles them (the helper once called
    ms.dtype_to_nptype, whose deprecation warning a graph cannot call: the step failed to compile)."""
    code, sites, results = run_both(LEGACY_TENSOR_IN_STEP, _batches(n=3))
    assert "legacy_tensor" in code, code
    assert set(results) == {"graph", "pynative"}
    assert not [s for s in sites if s.status == TODO], [s for s in sites if s.status == TODO]


LOOP_INDEX_THEN_COMPREHENSION = MLP + """

def make():
    model = Net()
    return {"model": model, "opt": torch.optim.Adam(model.parameters(), lr=0.01), "crit": nn.CrossEntropyLoss()}


def train(objs, batches):
    model, optimizer, criterion = objs["model"], objs["opt"], objs["crit"]
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        output = model(x)
        loss = 0
        for i in range(0, 6):
            loss += criterion(output[i:i + 1], y[i:i + 1])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    names = {i: n for i, n in enumerate("abc")}
    return [l + 0 * len([names[i] for i in range(3)]) for l in losses]
"""


def test_comprehension_variables_are_not_reads_after_the_step():
    """nlp-tutorial's Seq2Seq: the loss summed over `for i in range(...)` in the step, and `i` read afterwards
    only by comprehensions (their own variable): the step must not return `i` (a Python int as an auxiliary
    output of value_and_grad fails in PYNATIVE, and a loop variable read after its loop fails in GRAPH)."""
    code, sites, results = run_both(LOOP_INDEX_THEN_COMPREHENSION, _batches(n=3))
    assert set(results) == {"graph", "pynative"}
    assert "return loss, i" not in code, code
