"""Constructs found by bench/real_world.py --set wider (bench/_rw_wider.py) in real programs the
converter was not built against, each reduced to a minimal torch snippet run against its conversion."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .test_train_loop import MLP, _batches, run_both  # noqa: E402


def test_hand_written_update_one_data_add():
    """pytorch/examples regression: `for p in fc.parameters(): p.data.add_(-0.1 * p.grad)` alone in its loop
    (no no_grad, no if), the loss read with .item() before backward(): the step differentiates it (the loop
    was taken for an update of the values outside any step, which read p.grad and left backward() a TODO)."""
    src = MLP + """

def make():
    return {"model": Net()}


def train(objs, batches):
    model = objs["model"]
    losses = []
    for x, y in batches:
        model.zero_grad()
        output = F.cross_entropy(model(x), y)
        loss = output.item()
        output.backward()
        for param in model.parameters():
            param.data.add_(-0.1 * param.grad)
        losses.append(loss)
    return losses
"""
    code, sites, _ = run_both(src, _batches(n=3))
    assert "Unconverted" not in code and ".grad" not in code, code
    assert not [s for s in sites if s.status == TODO], [s for s in sites if s.status == TODO]
