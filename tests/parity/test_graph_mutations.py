"""Lists and dicts changed in place inside a compiled construct (msmigrate/graph_mutations.py), against torch
in PyNative and GRAPH mode (MindSpore 2.10, CPU).

- `order.sort()` / `order.remove(v)` on a list forward builds: GRAPH mode left the list as it was (measured,
  silently); converted to `order[:] = sorted(order)` / `order[:] = _ms_compat.list_removed(order, v)`.
- a method that appends to a list (or stores into a dict) it was given: compiled, the caller's list stayed
  as it was (measured: `len(acc)` the old length, silently); PyNative runs it, compiling stops naming the line."""
from __future__ import annotations

import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .harness import assert_close, load_converted, load_torch  # noqa: E402
from .test_graph_safety import check_graph, rnd  # noqa: E402

SORT_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(4)])

    def forward(self, x):
        order = [3, 0, 2, 1]
        order.sort()
        order.remove(2)
        names = ['b', 'a', 'c']
        names.sort(reverse=True)
        for i in order:
            x = self.layers[i](x) * (i + 1)
        return x * len(order) + (1.0 if names[0] == 'c' else 0.0)


def make():
    return Net()
'''


def test_local_list_sort_and_remove_in_graph():
    code, _ = check_graph(SORT_SRC, rnd(2, 4), (2, 4))
    for form in ("order[:] = sorted(order)", "order[:] = _ms_compat.list_removed(order, 2)",
                 "names[:] = sorted(names, reverse=True)"):
        assert form in code, (form, code)


def test_list_removed_keeps_list_remove_semantics():
    mod, _, _ = load_converted(SORT_SRC)
    removed = mod._ms_compat.list_removed
    for values, item in (([3, 1, 3], 3), (["a", "b"], "b"), ([1.0, 2], 2.0)):
        want = list(values)
        want.remove(item)
        assert removed(values, item) == want
    with pytest.raises(ValueError, match="not in list"):
        removed([1, 2], 5)


ARGUMENT_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def collect(self, h, acc, cache):
        acc.append(h * 2)  # SITE
        cache['last'] = h
        return h

    def forward(self, x):
        acc = [x]
        cache = {}
        y = self.collect(self.fc(x), acc, cache)
        return y + acc[-1] * len(acc) + cache['last']


def make():
    return Net()
'''


def test_list_argument_changed_runs_op_by_op_and_is_refused_when_compiled():
    import mindspore as ms
    import torch
    from msmigrate.weights import load_torch_state_dict
    line = next(i for i, t in enumerate(ARGUMENT_SRC.splitlines(), 1) if "# SITE" in t)
    x = rnd(2, 4)
    torch.manual_seed(0)
    tnet = load_torch(ARGUMENT_SRC)["make"]()
    t_out = tnet(torch.from_numpy(x))
    mod, code, _ = load_converted(ARGUMENT_SRC)
    assert "_ms_compat.graph_argument_change(acc.append(h * 2), 'acc.append'" in code, code
    net = mod.make()
    load_torch_state_dict(net, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
    assert_close(net(ms.Tensor(x)), t_out, what="pynative")
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(sys.modules["_ms_compat"].MigrationError, match=rf"acc\.append at \S+:{line}\b"):
            mod.make()(ms.Tensor(x))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
