"""A trainer class that splits its step over its own methods, as hand-written trainers and Lightning-style loops
do: `self.backward(loss)` (a method whose body is `loss.backward()`) and `self.optimizer_step()` (a method that
clips, steps and clears). Before: `self.backward(loss)` was read as a tensor's `y.backward(gradient)` with
`self` the tensor (the converted step multiplied `self` by the loss: a TypeError), and the clip in the
wrapper method raised MigrationError. Now the method's call is the loss's backward(), the wrapper method runs
on the gradients held for its optimizer (its clip_grad_norm_ clips them where they are held), and the weights
after a few steps match torch's, PYNATIVE and GRAPH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .parity.harness import assert_close, load_converted, load_torch  # noqa: E402

TRAINER = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, lr=0.1, grad_clip=0.5):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        self.grad_clip = grad_clip

    def training_step(self, x, y):
        return F.cross_entropy(self.model(x), y)

    def backward(self, loss):
        # a hook for mixed precision
        loss.backward()

    def optimizer_step(self):
        if self.grad_clip:
            nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
        self.optimizer.step()
        self.optimizer.zero_grad()

    def fit(self, batches, epochs):
        for epoch in range(epochs):
            for x, y in batches:
                loss = self.training_step(x, y)
                self.backward(loss)
                self.optimizer_step()


model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape) * (1.5 - 0.3 * i))
x = torch.linspace(-2, 2, 32).reshape(8, 4)
y = torch.tensor([0, 1, 2, 0, 1, 2, 1, 0])
Trainer(model).fit([(x[:4], y[:4]), (x[4:], y[4:])], 3)
weights = list(model.parameters())
"""


@pytest.mark.parametrize("graph", [False, True])
def test_trainer_backward_and_step_methods(graph):
    import mindspore as ms

    src = TRAINER + ("# GRAPH\n" if graph else "")
    ms.set_context(mode=ms.GRAPH_MODE if graph else ms.PYNATIVE_MODE)
    try:
        mod, code, sites = load_converted(src, pynative=not graph)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    ref = load_torch(src)
    for i, (got, want) in enumerate(zip(mod.weights, ref["weights"])):
        assert_close(got, want.detach(), rtol=1e-5, atol=2e-5, what=f"parameter {i} (graph={graph})")
    assert len(mod.weights) == len(ref["weights"]) == 4
    assert "hold_gradients(self.optimizer, grads)" in code, code
    assert "self.backward(loss)" not in code, code     # the loop's call became the step's gradient
    # the method's own backward() stays a TODO that raises if anything else calls it
    todos = [s for s in sites if s.status == "todo"]
    assert [(s.api, s.line) for s in todos] == [("Tensor.backward", 18)], todos
