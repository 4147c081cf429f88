"""Never silently different (issue #12, the first rule) where torch shares one tensor between names:
1. a function changes an argument in place and the caller reads its own name after the call;
2. an in-place op through a view (`c = a.view(6); c.add_(2)`, `a.narrow(0, 1, 1).zero_()`);
3. forward stores a tensor on self and reads it back (GRAPH mode lost the gradient through the attribute).
Each program is a minimal torch program written for this test, converted and run next to torch (values,
gradients in GRAPH mode), or shown to stop with `_ms_compat.MigrationError` naming its line."""
from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .parity.harness import assert_close, load_converted, load_torch  # noqa: E402
from .test_first_rule_gaps import _graph_gradients  # noqa: E402


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)     # MindSpore writes rank_0/ (compile failure dumps) into the working directory


def _line(src: str, text: str) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line)


def _refused(fn, src, text, *args):
    line = _line(src, text)
    with pytest.raises(sys.modules["_ms_compat"].MigrationError, match=rf" at \S+:{line}\b"):
        fn(*args)


# ------------------------------------------------------------------ 1. an argument changed in place
ARGUMENT = """
import torch
import torch.nn as nn


def fill(x, m):
    x.masked_fill_(m, 0.)
    return x


def bump(x):
    x.add_(1)
    return x * 2


def caller(a, m):
    x = a * 2
    y = fill(x, m)
    return x * a + y


def reads_after(a):
    x = a * 1
    z = bump(x)
    return x + z


def rebinds(a):
    x = a * 1
    x = bump(x)
    return x


def twice(x):
    x.add_(1)
    x = x * 2
    return x


def returns_another(a):
    x = a * 1
    y = twice(x)
    return x + y


class Scale(nn.Module):
    def forward(self, x):
        x.mul_(3)
        return x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.scale = Scale()

    def forward(self, x):
        h = self.fc(x)
        y = self.scale(h)
        return y + h * h
"""


def test_caller_sees_an_argument_changed_in_place_or_the_call_is_refused():
    import mindspore as ms
    import torch

    a = np.array([1.0, -2.0, 3.0], np.float32)
    m = np.array([True, False, True])
    ns = load_torch(ARGUMENT)
    mod, code, _ = load_converted(ARGUMENT)
    assert "y = x = fill(x, m)" in code and "y = h = self.scale(h)" in code, code
    expected = ns["caller"](torch.from_numpy(a), torch.from_numpy(m))
    for run in (mod.caller, ms.jit(mod.caller)):       # PyNative, then compiled (GRAPH)
        assert_close(run(ms.Tensor(a), ms.Tensor(m)), expected)
    ta = torch.from_numpy(a).requires_grad_(True)
    ns["caller"](ta, torch.from_numpy(m)).sum().backward()
    grad = ms.grad(lambda t: mod.caller(t, ms.Tensor(m)).sum())(ms.Tensor(a))
    assert_close(grad, ta.grad, what="gradient")
    assert_close(mod.rebinds(ms.Tensor(a)), ns["rebinds"](torch.from_numpy(a)))    # `x = bump(x)`: unchanged
    # a callee returning another tensor (`z = bump(x)`, `y = twice(x)`) writes its change into the caller's tensor
    # (_ms_compat.write_argument): torch's values op by op; compiled, or where the gradient goes through the write,
    # MigrationError naming the in-place line
    for name, site in (("reads_after", "    x.add_(1)\n    return x * 2"), ("returns_another", "    x.add_(1)\n    x = x")):
        assert_close(getattr(mod, name)(ms.Tensor(a)), ns[name](torch.from_numpy(a)))
        line = ARGUMENT[:ARGUMENT.index(site)].count("\n") + 1      # the callee's `x.add_(1)`
        error = sys.modules["_ms_compat"].MigrationError
        with pytest.raises(error, match=rf" at \S+:{line}\b"):
            ms.jit(getattr(mod, name))(ms.Tensor(a))
        try:
            with pytest.raises(error, match=rf" at \S+:{line}\b"):
                ms.grad(lambda t: getattr(mod, name)(t).sum())(ms.Tensor(a))
        finally:
            from mindspore.common.api import _pynative_executor
            _pynative_executor.clear_res()
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    _graph_gradients(ARGUMENT, "Net", [x])      # through `self.scale(h)`, a Module's forward


# ------------------------------------------------------------------ 2. in place through a view
VIEWS = """
import torch


def named_view(a):
    c = a.view(6)
    c.add_(2)
    return a


def chained(a):
    a.narrow(0, 1, 1).zero_()
    return a


def slice_then_base(a):
    s = a[1:]
    s.mul_(3)
    return a.sum()


def base_then_view(a):
    t = a.transpose(0, 1)
    a.add_(1)
    return t


def view_alone(a):
    b = a * 1
    c = b.view(6)
    c.add_(2)
    return c


def view_of_argument(a):
    c = a.view(6)
    c.add_(5)
    return c
"""


def test_inplace_through_a_view_is_refused_where_the_other_name_is_read():
    import mindspore as ms
    import torch

    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    ns = load_torch(VIEWS)
    mod, code, _ = load_converted(VIEWS)
    for name, text in (("named_view", "c.add_(2)"), ("chained", ".zero_()"), ("slice_then_base", "s.mul_(3)"),
                       ("base_then_view", "a.add_(1)"), ("view_of_argument", "c.add_(5)")):
        _refused(getattr(mod, name), VIEWS, text, ms.Tensor(a))
    # nothing else reads the base (a local): converts as before; the caller's tensor above is refused
    assert_close(mod.view_alone(ms.Tensor(a)), ns["view_alone"](torch.from_numpy(a.copy())))


# ------------------------------------------------------------------ 3. a tensor stored on self in forward
STORED = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        h = self.fc(x)
        self.cache = h * 2
        out = self.cache.sum(1) + h.mean(1)
        self.cache = self.cache * out.unsqueeze(1)
        return self.cache
"""


def test_tensor_stored_on_self_in_forward_keeps_its_graph_gradient():
    import mindspore as ms

    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    code = _graph_gradients(STORED, "Net", [x])
    assert "self.cache = cache = h * 2" in code, code
    mod, _, _ = load_converted(STORED)
    net = mod.Net()
    out = ms.jit(net.construct)(ms.Tensor(x))
    assert_close(net.cache, out)        # the attribute still holds the value, for reads from outside

    # the train step's `logits, self.loss = model(x, y); self.loss.backward()` (the loss stored on a trainer,
    # outside any Module): tests/test_train_loop.py::test_loss_kept_in_an_attribute
