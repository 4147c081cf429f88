"""Constructs found by bench/real_world.py --set heldout14 (bench/_rw_heldout14.py: sthalles/SimCLR's trainer) in a
program the converter was never run on, each reduced to a minimal torch snippet of our own run against its
conversion."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .parity.harness import program_weights_match_torch  # noqa: E402

# ------------------------------------------------------------------ boolean-mask selections joined in a train step
MASKED_CONTRAST = """
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(4, 3)
with torch.no_grad():
    model.weight.copy_(torch.linspace(-1, 1, 12).reshape(3, 4))
    model.bias.fill_(0.1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
criterion = nn.CrossEntropyLoss()


def contrast(features, batch, views, temperature):
    labels = torch.cat([torch.arange(batch) for i in range(views)], dim=0)
    labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()
    features = F.normalize(features, dim=1)
    sim = torch.matmul(features, features.T)
    mask = torch.eye(labels.shape[0], dtype=torch.bool)
    labels = labels[~mask].view(labels.shape[0], -1)
    sim = sim[~mask].view(sim.shape[0], -1)
    positives = sim[labels.bool()].view(labels.shape[0], -1)
    negatives = sim[~labels.bool()].view(sim.shape[0], -1)
    logits = torch.cat([positives, negatives], dim=1) / temperature
    return logits, torch.zeros(logits.shape[0], dtype=torch.long)


x = torch.linspace(-2, 2, 24).reshape(6, 4)
for step in range(3):
    logits, labels = contrast(model(x), 3, 2, 0.5)
    loss = criterion(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
weights = [model.weight, model.bias]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_boolean_mask_selections_joined_by_cat_in_a_compiled_step(graph):
    """SimCLR's info_nce_loss: `sim[~mask].view(n, -1)` and `sim[labels.bool()]` give tensors whose sizes a
    compiled graph does not know; torch.cat of them stopped GRAPH compilation in _ms_compat.cat's plan (which
    compared the unknown size, None, with 0). The parameters after three Adam steps, PYNATIVE and GRAPH, vs torch."""
    code, _ = program_weights_match_torch(MASKED_CONTRAST, graph)
    assert "_ms_compat.cat([positives, negatives]" in code, code


# ------------------------------------------------------------------ an optimizer over tensors made with requires_grad
FROM_SCRATCH = """
import torch
from torch.autograd import Variable

x = torch.linspace(-1, 1, 12).reshape(4, 3)
y = torch.linspace(0, 1, 4).reshape(4, 1)
w = torch.full((3, 1), 0.1, requires_grad=True)
v = Variable(torch.full((3, 1), 0.2), requires_grad=True)
b = torch.nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([w, v, b], lr=0.1)
for t in range(3):
    loss = ((x @ w + x @ v + b - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
weights = [w, v, b]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_tensors_made_to_train_given_to_an_optimizer(graph):
    """The from-scratch regression idiom: `w = torch.full(..., requires_grad=True)`, `Variable(t,
    requires_grad=True)` and `nn.Parameter(...)` in `torch.optim.SGD([w, v, b])`, the loss computed from them with no
    network call. Before: the tensors became plain MindSpore tensors (the optimizer helper failed on them with an
    AttributeError) and backward() was a TODO ("not computed from a call of the network"). Now they are Parameters
    (trained_tensors.py) and the step differentiates with respect to them: the weights after three SGD steps vs
    torch, both modes."""
    code, _ = program_weights_match_torch(FROM_SCRATCH, graph)
    assert "w = ms.Parameter(ops.full((3, 1), 0.1" in code, code


GROUPED = """
import torch

x = torch.linspace(-1, 1, 12).reshape(4, 3)
y = torch.linspace(0, 1, 4).reshape(4, 1)
w = torch.full((3, 1), 0.1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
c = torch.ones(1, requires_grad=True)
params = [w]
opt = torch.optim.SGD([{"params": params}, {"params": b, "lr": 0.05}], lr=0.1)
opt2 = torch.optim.Adam(params=(c,), lr=0.01)
for t in range(3):
    loss = ((x @ w * c + b - y) ** 2).mean()
    opt.zero_grad()
    opt2.zero_grad()
    loss.backward()
    opt.step()
    opt2.step()
weights = [w, b, c]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_tensors_made_to_train_listed_apart_or_in_param_groups(graph):
    """The tensors reach the optimizer through a name bound once to a literal list (`params = [w]`), through literal
    param groups (`[{"params": params}, {"params": b, "lr": 0.05}]`) and a `params=` tuple. Before, only a literal
    first argument was followed, and these stopped with MigrationError at the optimizer. The weights after three
    steps of both optimizers vs torch, both modes."""
    code, _ = program_weights_match_torch(GROUPED, graph)
    assert "b = ms.Parameter(" in code and "c = ms.Parameter(" in code, code


INDIRECT = """\
    import torch

    x = torch.linspace(-1, 1, 12).reshape(4, 3)
    y = torch.linspace(0, 1, 4).reshape(4, 1)
    w = torch.full((3, 1), 0.1, requires_grad=True)
    params = []
    params.append(w)
    opt = torch.optim.SGD(params, lr=0.1)
    for t in range(3):
        loss = ((x @ w - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(w.detach().numpy().ravel())
"""


def test_optimizer_over_plain_tensors_stops_naming_the_line(tmp_path):
    """The same idiom with the list built by appends (`params = []; params.append(w)`), which the rewrite does not
    follow:
    the optimizer helper read `p.requires_grad` of the plain tensor (AttributeError, no line of the program). It
    stops with MigrationError naming the optimizer's line."""
    import subprocess
    import sys

    from msmigrate.cli import main
    from tests.treeutil import write_tree

    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {"prog.py": INDIRECT})
    main(["convert", str(src), "-o", str(out), "-q"])
    r = subprocess.run([sys.executable, "prog.py"], cwd=out, capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert "MigrationError: prog.py:8: the optimizer is given a Tensor that is no Parameter" in r.stderr, \
        r.stderr[-2000:]
