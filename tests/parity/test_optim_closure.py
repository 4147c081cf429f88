"""optimizer.step(closure) against torch: torch.optim.LBFGS (written in templates/compat_parts/optim_lbfgs.py,
MindSpore 2.10 has none) and the other optimizers' closure form, through msmigrate/step_closure.py's
rewrite of the closure (it returns the loss and value_and_grad's gradients).

A small sigmoid MLP with weights drawn from NumPy (the same in both programs) is trained a few
step(closure) calls; every loss the closure sees (appended inside it, as a side effect the
conversion keeps) and the final parameters are compared. Closures whose shape the conversion cannot
prove (no zero_grad() before backward(), also called directly, taking arguments) must raise
MigrationError at their backward() line instead of returning a loss without gradients.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .harness import load_converted, load_torch  # noqa: E402

SRC = '''
import numpy as np
import torch
import torch.nn as nn

DTYPE = np.{dtype}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        rs = np.random.RandomState(0)
        self.w1 = nn.Parameter(torch.from_numpy(rs.randn(5, 4).astype(DTYPE)))
        self.b1 = nn.Parameter(torch.from_numpy(rs.randn(5).astype(DTYPE)))
        self.w2 = nn.Parameter(torch.from_numpy(rs.randn(1, 5).astype(DTYPE)))
        self.b2 = nn.Parameter(torch.from_numpy(rs.randn(1).astype(DTYPE)))

    def forward(self, x):
        return torch.sigmoid(x @ self.w1.t() + self.b1) @ self.w2.t() + self.b2


def data():
    rs = np.random.RandomState(1)
    return torch.from_numpy(rs.randn(64, 4).astype(DTYPE)), torch.from_numpy(rs.randn(64, 1).astype(DTYPE))


def train(steps):
    model = Net()
    x, y = data()
    optimizer = {optimizer}
    losses = []
    for i in range(steps):
        def closure():
            optimizer.zero_grad()
            out = model(x)
            loss = ((out - y) ** 2).mean()
            losses.append(loss.item())
            loss.backward()
            return loss
        returned = optimizer.step(closure)
        losses.append(float(returned))
    return model, losses
'''
LBFGS = "torch.optim.LBFGS(model.parameters(), lr={lr}, max_iter={max_iter}, history_size=3, line_search_fn={ls})"


def _initial(dtype):
    rs = np.random.RandomState(0)
    return [rs.randn(*shape).astype(dtype) for shape in ((5, 4), (5,), (1, 5), (1,))]


def _train_both(optimizer, dtype="float64", steps=2, graph=False):
    src = SRC.format(dtype=dtype, optimizer=optimizer)
    t_model, t_losses = load_torch(src)["train"](steps)
    mod, code, sites = load_converted(src)
    assert not [(s.api, s.note) for s in sites if s.status == TODO], code
    if graph:
        ms.set_context(mode=ms.GRAPH_MODE)
    try:
        m_model, m_losses = mod.train(steps)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    t_params = [p.detach().numpy() for p in t_model.parameters()]
    m_params = [p.asnumpy() for p in m_model.trainable_params()]
    return code, (np.array(t_losses), np.array(m_losses)), (t_params, m_params)


def _check(losses, params, rtol, dtype="float64"):
    t_losses, m_losses = losses
    # as many closure evaluations, each with torch's loss
    assert len(t_losses) == len(m_losses), (t_losses, m_losses)
    np.testing.assert_allclose(m_losses, t_losses, rtol=rtol)
    scale = max(np.abs(t).max() for t in params[0])     # a parameter near 0 is compared at the others' scale
    for t, m, start in zip(*params, _initial(dtype)):
        np.testing.assert_allclose(m, t, rtol=rtol, atol=rtol * scale)
        # what torch changed has changed here too (no zero gradients)
        moved = np.abs(t - start) > 1e-3 * np.abs(start).max()
        assert moved.any() and (np.abs(m - start)[moved] > 0).all()


@pytest.mark.parametrize("ls,dtype,lr,search,rtol", [
    (None, "float64", 0.8, set(), 1e-9),
    # lr=0.05: the first trial is too short, the search extrapolates; lr=30: too long, it zooms in
    ("'strong_wolfe'", "float64", 0.05, {"extrapolate"}, 1e-9),
    ("'strong_wolfe'", "float64", 30, {"zoom"}, 1e-9),
    ("'strong_wolfe'", "float32", 0.8, set(), 1e-5),
])
def test_lbfgs(ls, dtype, lr, search, rtol, monkeypatch):
    import _ms_compat  # emitted next to the converted snippets
    seen = set()
    cubic = _ms_compat._cubic_minimum

    def spy(*args, bounds=None):
        seen.add("zoom" if bounds is None else "extrapolate")
        return cubic(*args, bounds=bounds)
    monkeypatch.setattr(_ms_compat, "_cubic_minimum", spy)
    code, losses, params = _train_both(LBFGS.format(lr=lr, max_iter=3, ls=ls), dtype)
    assert "_ms_compat.LBFGS(" in code and "return loss, grads" in code, code
    assert seen == search      # the line search's branch this case is about was taken
    _check(losses, params, rtol, dtype)


def test_lbfgs_graph_mode():
    """The closure's gradient step compiled (GRAPH mode, as converted programs run), L-BFGS op by op."""
    _, losses, params = _train_both(LBFGS.format(lr=0.8, max_iter=3, ls="'strong_wolfe'"), graph=True)
    _check(losses, params, 1e-9)


@pytest.mark.parametrize("optimizer", [
    "torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)",
    "torch.optim.Adam(model.parameters(), lr=0.05)",
])
def test_other_optimizers_step_closure(optimizer):
    """SGD/Adam evaluate the closure once, then update with its gradients, and return its loss (float32:
    MindSpore's SGD kernel takes no float64)."""
    _, losses, params = _train_both(optimizer, "float32", steps=3)
    _check(losses, params, 1e-5, "float32")


REFUSED = {
    "no zero_grad": ('''
def fit(model, x, y, steps):
    optimizer = torch.optim.LBFGS(model.parameters())
    for i in range(steps):
        def closure():
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            return loss
        optimizer.step(closure)
''', "zero_grad"),
    "called directly": ('''
def fit(model, x, y, steps):
    optimizer = torch.optim.LBFGS(model.parameters())
    for i in range(steps):
        def closure():
            optimizer.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            return loss
        optimizer.step(closure)
        print(closure())
''', "used besides"),
    "arguments": ('''
def fit(model, x, y, steps):
    optimizer = torch.optim.LBFGS(model.parameters())
    for i in range(steps):
        def closure(scale=1.0):
            optimizer.zero_grad()
            loss = scale * ((model(x) - y) ** 2).mean()
            loss.backward()
            return loss
        optimizer.step(closure)
''', "takes arguments"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_unprovable_closure_raises_at_its_backward(case):
    body, why = REFUSED[case]
    src = SRC.format(dtype="float64", optimizer="None") + body
    mod, code, sites = load_converted(src)
    todo = [s for s in sites if s.status == TODO and s.api == "Tensor.backward"]
    assert len(todo) == 1 and why in todo[0].note, [(s.api, s.note) for s in sites]
    from _ms_compat import MigrationError  # emitted next to the converted snippets
    x, y = mod.data()
    with pytest.raises(MigrationError, match=r"Tensor\.backward at \w+:\d+"):
        mod.fit(mod.Net(), x, y, 1)


def test_step_closure_of_an_unconverted_closure_raises():
    """A closure msmigrate did not convert returns no gradients: step() refuses it rather than update
    with none."""
    mod, _, _ = load_converted(SRC.format(dtype="float64", optimizer=LBFGS.format(lr=1, max_iter=2, ls=None)))
    from _ms_compat import MigrationError
    model = mod.Net()
    x, y = mod.data()
    for optimizer in (mod._ms_compat.LBFGS(model.trainable_params()), mod._ms_compat.SGD(model.trainable_params())):
        with pytest.raises(MigrationError, match="returned no gradients"):
            optimizer.step(lambda: ((model(x) - y) ** 2).mean())
    with pytest.raises(MigrationError, match="outside a converted train step"):
        mod._ms_compat.SGD(model.trainable_params(), lr=0.1).step()
