"""An update guarded by a fixed test after the loss is computed for every pass (torch's fine-tuning tutorial:
`for phase in ['train', 'val']: ... with torch.set_grad_enabled(phase == 'train'): outputs = model(x); loss =
...; if phase == 'train': loss.backward(); optimizer.step()`; karpathy/pytorch-made's `if split == 'train':`).
Before, the step of the `if` alone would take the loss as a constant, so it was a raising TODO. Now the loop
body is written once per branch (step_choice.guarded_update): the first holds the forward and its train step,
the other the forward alone. Weights match torch after the training and evaluation passes, PYNATIVE and GRAPH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .parity.harness import program_weights_match_torch  # noqa: E402

PHASES = """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.8, 0.8, p.numel()).reshape(p.shape) * (1 + 0.2 * i))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
x = torch.linspace(-2, 2, 48).reshape(12, 4)
y = torch.tensor([0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0])
batches = {"train": [(x[:4], y[:4]), (x[4:8], y[4:8])], "val": [(x[8:], y[8:])]}
seen = []
for epoch in range(2):
    for phase in ["train", "val"]:
        model.train() if phase == "train" else model.eval()
        running = 0.0
        for inputs, labels in batches[phase]:
            optimizer.zero_grad()
            with torch.set_grad_enabled(phase == "train"):
                outputs = model(inputs)
                _, preds = torch.max(outputs, 1)
                loss = criterion(outputs, labels)
                if phase == "train":
                    loss.backward()
                    optimizer.step()
            running += loss.item() * inputs.size(0)
        seen.append(running)
weights = list(model.parameters()) + [torch.tensor(seen)]
"""

SPLIT = """
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(5, 5)
with torch.no_grad():
    model.weight.copy_(torch.linspace(-0.5, 0.5, 25).reshape(5, 5))
    model.bias.fill_(0.1)
opt = torch.optim.Adam(model.parameters(), lr=0.02)
x = (torch.linspace(-1, 1, 30).reshape(6, 5) > 0).float()


def run_epoch(split):
    losses = []
    for step in range(3):
        logits = model(x) * (1.0 if split == "train" else 0.5)
        loss = F.binary_cross_entropy_with_logits(logits, x, reduction="sum") / x.size(0)
        losses.append(loss.item())
        if split == "train":
            opt.zero_grad()
            loss.backward()
            opt.step()
        else:
            losses.append(-loss.item())
    return losses


out = run_epoch("train") + run_epoch("test") + run_epoch("train")
weights = [model.weight, model.bias, torch.tensor(out)]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_phase_guarded_update_under_set_grad_enabled(graph):
    code, _ = program_weights_match_torch(PHASES, graph)
    assert 'if phase == "train":' in code and "grad_fn" in code, code


@pytest.mark.parametrize("graph", [False, True])
def test_split_guarded_update_after_the_loss(graph):
    code, _ = program_weights_match_torch(SPLIT, graph)
    assert 'if split == "train":' in code and "losses.append(-loss.item())" in code, code
