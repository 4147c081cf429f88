"""Lists popped from the front and iterators read by next() inside construct, GRAPH and PyNative
against torch (values and input gradients): x-transformers' AttentionLayers copies its `mems`
argument (`mems = mems.copy() if exists(mems) else [None] * n`), takes `mems.pop(0) if mems else
None` per layer and `next(iter_attn_cache, None)` per attention block. GRAPH mode's own pop and next
compute something else (msmigrate/graph_pops.py, msmigrate/graph_iters.py)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .test_graph_safety import check_graph, rnd  # noqa: E402

SRC = '''
import torch
import torch.nn as nn


class Layers(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x, mems=None, scales=None):
        mems = mems.copy() if mems is not None else [None] * 2
        it = iter(scales if scales is not None else [])
        rows = iter(x)                       # a tensor: its rows
        outs = [x]
        for layer in self.layers:
            mem = mems.pop(0) if mems else None
            x = layer(x)
            if mem is not None:
                x = x + mem
            s = next(it, None)
            if s is not None:
                x = x * s
            x = x + next(rows)
            outs.append(x)
        last = outs.pop()
        first = outs.pop(0)
        return last * first + outs.pop(-1)


class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Layers()

    def forward(self, x):
        mems = [None, x.sin()]
        a = self.inner(x, mems=mems, scales=(x.cos(), x * 0.5))
        b = self.inner(x)                    # no mems, no scales: the empty iterator's default
        return a + b + len(mems)             # the caller's list keeps its length


def make():
    return Wrapper()
'''


def test_pops_and_next_compile_with_torchs_values_and_gradients():
    code, _ = check_graph(SRC, rnd(3, 4), (3, 4))
    # the rewritten forms, not GRAPH mode's pop/next
    assert "mems_popped = mems[0] if mems_popping else None" in code
    assert "mems = mems[1:] if mems_popping else mems" in code
    assert "it_next = it[0] if len(it) else None" in code
    assert "rows_next = rows[0]" in code
    assert "outs_popped = outs[0]" in code and "outs = outs[1:]" in code
    assert "next(" not in code and ".pop(" not in code


PARTIAL_SRC = '''
import functools
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F


def scaled(x, scale=1.0, power=2):
    return (x ** power) * scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        softmax_fn = partial(F.softmax, dim=-1)
        self.attn_fn = partial(softmax_fn, dtype=torch.float32)      # a partial of a partial
        self.sq = functools.partial(scaled, scale=3.0)

    def forward(self, x):
        block = partial(self.proj)
        return self.attn_fn(x) + self.sq(x, power=3) + self.sq(x, scale=0.5) + block(x)


def make():
    return Net()
'''


def test_partial_held_by_a_module_keeps_its_gradient_in_graph_mode():
    """functools.partial objects held by a Module: GRAPH mode calls them through its Python fallback
    (no static shape, a zero gradient); _ms_compat.partial compiles. Call-time keywords override."""
    code, _ = check_graph(PARTIAL_SRC, rnd(3, 4), (3, 4), rtol=1e-4)
    assert "self.attn_fn = _ms_compat.partial(softmax_fn, dtype=ms.float32)" in code
    assert "self.sq = _ms_compat.partial(scaled, scale=3.0)" in code


OBJECT_SRC = '''
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class Intermediates:
    hidden: torch.Tensor = None


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        h = self.fc(x)
        inter = Intermediates(hidden=h * 2)
        return h + inter.hidden
'''


def test_plain_object_built_in_forward_is_right_op_by_op_and_compiled():
    """A dataclass instance built in forward: GRAPH mode built it through its Python fallback, where the
    gradient of every tensor it holds is 0, and compiling stopped naming the line. As a record
    (graph_records.py) it is the object op by op and a dict compiled: both match torch, gradients included."""
    import mindspore as ms
    import numpy as np
    import torch
    from msmigrate.weights import load_torch_state_dict

    from .harness import load_converted, load_torch

    x = rnd(2, 3)
    torch.manual_seed(0)
    tnet = load_torch(OBJECT_SRC)["Net"]()
    t_x = torch.from_numpy(x)
    tnet(t_x).sum().backward()
    mod, code, _ = load_converted(OBJECT_SRC)
    mnet = mod.Net()
    load_torch_state_dict(mnet, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)

    def loss_of(xs):
        return mnet(xs).sum()
    step = ms.value_and_grad(loss_of, None, mnet.trainable_params())
    loss, grads = step(ms.Tensor(x))
    np.testing.assert_allclose(float(loss), float(tnet(t_x).sum()), rtol=1e-5)
    np.testing.assert_allclose(grads[0].asnumpy(), tnet.fc.weight.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert "_ms_compat.graph_record_dict(Intermediates, {'hidden': h * 2})" in code, code
    assert type(mnet.construct.__globals__["Intermediates"]) is type     # the class itself, op by op
    loss, grads = ms.jit(step)(ms.Tensor(x))
    np.testing.assert_allclose(float(loss), float(tnet(t_x).sum()), rtol=1e-5)
    np.testing.assert_allclose(grads[0].asnumpy(), tnet.fc.weight.grad.numpy(), rtol=1e-4, atol=1e-5)
