"""Parity of torch.utils.checkpoint (activation checkpointing): the converted code computes
the same values and the same parameter and input gradients (records in mappings/module_api.py)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")


from .harness import check_function, check_layer, rnd, no_todo  # noqa: E402


CKPT_SRC = '''
import torch
import torch.nn as nn
import torch.utils.checkpoint as cp
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, mask=None, scale=1.0):
        h = torch.tanh(self.fc(x)) * scale
        if mask is not None:
            h = h * mask
        return h


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Block()
        self.b = Block()
        self.head = nn.Linear(4, 2)

    def forward(self, x, mask):
        h = checkpoint(self.a, x, mask, use_reentrant=False)
        h = cp.checkpoint(self.b, h, mask=mask, scale=0.5, use_reentrant=False, preserve_rng_state=False)
        h = checkpoint(self.head, h, use_reentrant=True)
        return h


def make():
    return Net()
'''


def test_checkpoint():
    mask = (np.arange(12).reshape(3, 4) % 3 != 0).astype(np.float32)
    code, sites = check_layer(CKPT_SRC, [rnd(3, 4), mask], grad=True)
    no_todo(sites)
    assert "self.b, h, mask=mask, scale=0.5)" in code, code   # the function's keywords survive
    assert "use_reentrant" not in code and "preserve_rng_state" not in code


FN_SRC = '''
import torch
from torch.utils.checkpoint import checkpoint


def body(x, w, bias=0.0):
    return torch.sin(x @ w) + bias


def fn(x, w):
    return checkpoint(body, x, w, bias=1.5, use_reentrant=False)
'''


def test_checkpoint_function_input_gradients():
    code, sites = check_function(FN_SRC, [rnd(3, 4), rnd(4, 2, seed=1)], grad=True)
    no_todo(sites)


SEQ_SRC = '''
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint_sequential


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 4))
        self.p = nn.Linear(4, 4)
        self.q = nn.Linear(4, 3)

    def forward(self, x):
        h = checkpoint_sequential(self.seq, 2, x, use_reentrant=False)
        return checkpoint_sequential([self.p, nn.functional.relu, self.q], 1, h, use_reentrant=False)


def make():
    return Net()
'''


def test_checkpoint_sequential():
    code, sites = check_layer(SEQ_SRC, [rnd(3, 4)], grad=True)
    no_todo(sites)
    assert "_ms_compat.checkpoint_sequential(self.seq, 2, x)" in code, code


STARRED_SRC = '''
import torch
import torch.nn as nn
import torch.utils.checkpoint as cp


def _joined(norm, conv):
    def run(*inputs):
        return conv(torch.relu(norm(torch.cat(inputs, 1))))
    return run


class Layer(nn.Module):
    def __init__(self, width, growth):
        super().__init__()
        self.norm = nn.BatchNorm1d(width)
        self.conv = nn.Conv1d(width, growth, 3, padding=1)

    def forward(self, *prev_features):
        fn = _joined(self.norm, self.conv)
        if any(f.requires_grad for f in prev_features):
            return cp.checkpoint(fn, *prev_features, use_reentrant=False)
        return fn(*prev_features)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer(2 + 3 * i, 3) for i in range(3)])

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            features.append(layer(*features))
        return torch.cat(features, 1)


def make():
    return Block()
'''


def test_checkpoint_of_starred_inputs():
    """`cp.checkpoint(fn, *prev_features)` (a memory-efficient DenseNet layer over the features so far): before, a
    raising TODO ("*args/**kwargs cannot be translated argument by argument"); now `fn(*prev_features)`. Values in
    training mode (batch statistics) in both modes, and gradients."""
    x = rnd(2, 2, 5)
    code, sites = check_layer(STARRED_SRC, [x], train=True, grad=True)
    no_todo(sites)
    assert "fn, *prev_features)" in code and "use_reentrant" not in code, code


# three SGD steps of `model` on (x, y), then its eval-mode output (read through the running statistics they left)
_TRAIN_THEN_EVAL = '''
for step in range(3):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
model.eval()
with torch.no_grad():
    evaluated = model(x)
'''

TRAINED_SRC = STARRED_SRC.replace("def make():\n    return Block()\n", '''
torch.manual_seed(0)
model = nn.Sequential(nn.Conv1d(2, 2, 1), Block(), nn.Flatten(), nn.Linear(11 * 5, 2))
for p in model.parameters():
    p.data.copy_(torch.linspace(-0.5, 0.7, p.numel()).reshape(p.shape))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x = torch.linspace(-2, 2, 30).reshape(3, 2, 5)
y = torch.tensor([0, 1, 1])
''' + _TRAIN_THEN_EVAL + '''
weights = [model[1].layers[0].norm.running_mean, model[1].layers[2].norm.running_var, model[3].weight, evaluated]
''')


@pytest.mark.parametrize("graph", [False, True])
def test_checkpoint_recomputes_batch_norm_statistics(graph):
    """torch's backward runs a checkpointed function again: the BatchNorm inside updates its running statistics
    twice per training step (the layers' inputs come from the stem convolution, so they require a gradient).
    Before: the converted call ran once, and the running statistics (and everything evaluated with them
    afterwards) differed silently (a DenseNet's 12 of 77 tensors, 2.9e-01). Now the function
    runs a second time where a gradient is recorded (_ms_compat.recomputed): the statistics after three steps
    and the evaluation in eval mode match torch, in the compiled train step too."""
    from .harness import program_weights_match_torch

    code, _ = program_weights_match_torch(TRAINED_SRC, graph)
    assert "_ms_compat.recomputed(" in code, code


SEQ_TRAINED_SRC = '''
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint_sequential


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 3)
        self.body = nn.Sequential(nn.BatchNorm1d(3), nn.Tanh(), nn.Linear(3, 3), nn.BatchNorm1d(3), nn.ReLU(),
                                  nn.Linear(3, 3), nn.BatchNorm1d(3))
        self.head = nn.Linear(3, 2)

    def forward(self, x):
        return self.head(checkpoint_sequential(self.body, 3, self.stem(x), use_reentrant=False))


model = Net()
for p in model.parameters():
    p.data.copy_(torch.linspace(-0.6, 0.8, p.numel()).reshape(p.shape))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.linspace(-2, 2, 20).reshape(5, 4)
y = torch.tensor([0, 1, 1, 0, 1])
''' + _TRAIN_THEN_EVAL + '''
weights = [model.body[0].running_mean, model.body[3].running_var, model.body[6].running_mean, model.head.weight,
           evaluated]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_checkpoint_sequential_recomputes_all_but_the_last_segment(graph):
    """checkpoint_sequential(body, 3, x): torch recomputes the first two segments in backward (their BatchNorms
    update twice per step), not the last. Before: each ran once (the running statistics differed silently)."""
    from .harness import program_weights_match_torch

    program_weights_match_torch(SEQ_TRAINED_SRC, graph)
