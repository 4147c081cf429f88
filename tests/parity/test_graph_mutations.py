"""Lists and dicts changed in place inside a compiled construct (msmigrate/graph_mutations.py), against torch
in PyNative and GRAPH mode (MindSpore 2.10, CPU).

- `order.sort()` / `order.remove(v)` on a list forward builds: GRAPH mode left the list as it was (measured,
  silently); converted to `order[:] = sorted(order)` / `order[:] = _ms_compat.list_removed(order, v)`.
- a method that appends to a list (or stores into a dict) it was given: compiled, the caller's list stayed
  as it was (measured: `len(acc)` the old length, silently); PyNative runs it, compiling stops naming the line.
- a list or dict another holder shares, changed in place (`seen = hs; hs.append(v)`: compiled, len(seen) stayed 1,
  silently; msmigrate/graph_aliases.py): refused the same way; lists built and changed through one name, or
  shared only after their last change, are kept and compute torch's values in GRAPH mode."""
from __future__ import annotations

import re
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


def _torch_and_converted(src, form):
    """The line marked `# SITE`, an input, torch's output, and the converted Cell (holding `form`) with torch's
    weights."""
    import torch
    from msmigrate.weights import load_torch_state_dict
    line = next(i for i, t in enumerate(src.splitlines(), 1) if "# SITE" in t)
    x = rnd(2, 4)
    torch.manual_seed(0)
    tnet = load_torch(src)["make"]()
    t_out = tnet(torch.from_numpy(x))
    mod, code, _ = load_converted(src)
    assert form in code, code
    net = mod.make()
    load_torch_state_dict(net, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
    return line, x, t_out, mod, net


def check_refused_when_compiled(src, form, what):
    """The converted `src` holds `form`, computes torch's output in PyNative, and compiled raises MigrationError
    naming `what` at the line marked `# SITE`."""
    import mindspore as ms
    line, x, t_out, mod, net = _torch_and_converted(src, form)
    assert_close(net(ms.Tensor(x)), t_out, what="pynative")
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(sys.modules["_ms_compat"].MigrationError, match=rf"{re.escape(what)} at \S+:{line}\b"):
            mod.make()(ms.Tensor(x))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def check_op_by_op_in_graph_mode(src, form, what):
    """The converted `src` holds `form` and reads a value on the host (`.item()`) in its forward: called in GRAPH
    mode the cell runs op by op (graph_constants.reads_on_host) and computes torch's output; compiled explicitly
    (ms.jit) it raises MigrationError naming `what` at the line marked `# SITE`."""
    import mindspore as ms
    line, x, t_out, _, net = _torch_and_converted(src, form)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        assert_close(net(ms.Tensor(x)), t_out, what="graph mode, op by op")
        with pytest.raises(sys.modules["_ms_compat"].MigrationError, match=rf"{re.escape(what)} at \S+:{line}\b"):
            ms.jit(net)(ms.Tensor(x))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_list_argument_changed_runs_op_by_op_and_is_refused_when_compiled():
    check_refused_when_compiled(ARGUMENT_SRC, "_ms_compat.graph_argument_change(acc.append(h * 2), 'acc.append'",
                                "acc.append")


# ------------------------------------------------------------------------------ a list two holders share
SHARED_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        hs = [h]
        seen = hs
        hs.append(h * 2)  # SITE
        return h * len(seen)


def make():
    return Net()
'''

SHARED_FORMS = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.cache = [1]

    def forward(self, x):
        h = self.fc(x)
        a = b = []
        a.append(h)
        pair = ([h], 1)
        kept = pair[0]
        kept.append(h)
        d = {'h': h}
        groups = [d]
        d['g'] = h * 2
        cached = self.cache
        cached += [2]
        for m in (a, [h]):
            m.append(h)
        q = [h, h * 2]
        r = q
        last = q.pop()
        return h + last * len(r)
'''

UNSHARED_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        outs, extra = [], {}
        h = x
        groups = []
        for i in range(2):
            h = self.fc(h)
            outs.append(h)
            outs += [h * i]
            extra['last'] = h
            row = []
            row.append(h)
            groups.append(row)
        for o in outs:
            h = h + o
        pick = {'a': [x], 'b': [h]}['a']
        pick.append(h)
        more = outs + [x]
        more.append(x)
        final = outs
        grouped = (final, extra)
        return torch.cat(grouped[0] + more + pick + groups[0], dim=1) * grouped[1]['last'].sum()


def make():
    return Net()
'''


REBOUND_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x, hooks):
        groups, group = [], []
        for row in x:
            if len(group) > 1:
                groups.append(group)
                group = []
            group.append(row)
        copy = groups[:]
        copy.append(group)
        for hook in hooks:
            hook.remove()
        return copy
'''


def test_list_another_name_holds_changed_is_refused_when_compiled():
    """Measured on 2.10, GRAPH: `seen = hs; hs.append(v)` left len(seen) 1 (Python 2), silently."""
    check_refused_when_compiled(SHARED_SRC, "_ms_compat.graph_shared_change(hs.append(h * 2), 'hs.append'",
                                "hs.append")


def test_shared_list_forms_refused_and_unshared_ones_kept():
    from .harness import convert_snippet
    code, _ = convert_snippet(SHARED_FORMS)
    for what in ("a.append", "kept.append", "d[...] =", "cached +=", "m.append", "q.pop"):
        assert f"'{what}'" in code, (what, code)
    assert code.count("graph_shared_change(") == 6 and "q[:-1]" not in code, code
    code, _ = check_graph(UNSHARED_SRC, rnd(2, 4), (2, 52))
    assert "graph_shared_change" not in code, code
    code, _ = convert_snippet(REBOUND_SRC)       # vit-pytorch's group_by_max_seq_len, a copy, a no-arg remove
    assert "graph_shared_change" not in code, code
