"""Training-code shapes of real projects, written here as minimal reproductions: each converts to a
train step that computes what torch computes (parameters after the same steps from the same initial
weights, GRAPH and PYNATIVE), or stops with MigrationError naming the original line."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .parity.harness import load_converted  # noqa: E402
from .test_train_loop import MLP, _batches, run_both  # noqa: E402

# DINO's train_one_epoch: the loss computed once, the update chosen by whether a GradScaler is used
UPDATE_BY_SCALER = MLP + """

def make():
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return {"model": model, "optimizer": optimizer}


def fit(model, optimizer, batches, fp16_scaler, clip):
    losses = []
    for x, y in batches:
        out = model(x)
        loss = F.cross_entropy(out, y)
        if not math.isfinite(loss.item()):
            raise SystemExit(1)
        optimizer.zero_grad()
        if fp16_scaler is None:
            loss.backward()
            if clip:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
        else:
            fp16_scaler.scale(loss).backward()
            if clip:
                fp16_scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            fp16_scaler.step(optimizer)
            fp16_scaler.update()
        losses.append(loss.item())
    return losses


def train(objs, batches):
    scaler = torch.amp.GradScaler("cpu", init_scale=4.0) if USE_FP16 else None
    return fit(objs["model"], objs["optimizer"], batches, scaler, CLIP)
"""


@pytest.mark.parametrize("use_fp16,clip", [(False, 0.0), (False, 0.3), (True, 0.3)])
def test_update_chosen_by_a_scaler_flag(use_fp16, clip):
    src = "import math\n" + UPDATE_BY_SCALER + f"\nUSE_FP16 = {use_fp16}\nCLIP = {clip}\n"
    code, sites, _ = run_both(src, _batches())
    assert code.count("def train_step(") == 2 and ".backward()" not in code, code
    assert not [s for s in sites if s.status == TODO], code
