"""functools.partial built in forward with tensor or function keywords, then called (performer-pytorch dd827c9,
FastAttention.forward: `partial(softmax_kernel, projection_matrix=projection_matrix, device=device)`, called with
is_query=True/False, or mapped over (q, k) with kernel_fn=self.kernel_fn). GRAPH mode could not build the
jit_class _ms_compat.partial from them ("When creating an instance of 'partial', all arguments are required to be
constants", naming no line), and a closure instead compiles keyword calls wrongly (graph_partials.py): the calls
are now the function's own calls (msmigrate/graph_partials.py). Values and weight gradients against torch, in
PyNative and GRAPH."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .harness import check_layer, convert_snippet  # noqa: E402

SRC = '''
from functools import partial

import torch
from torch import nn


def kernel(data, projection, kernel_fn=torch.relu, is_query=False, eps=1e-4):
    out = kernel_fn(data @ projection)
    return out + (eps if is_query else 2 * eps)


class Attn(nn.Module):
    def __init__(self, generalized=False):
        super().__init__()
        self.generalized = generalized
        self.kernel_fn = torch.tanh
        self.register_buffer("projection", torch.linspace(-1, 1, 16).reshape(4, 4))
        self.fc = nn.Linear(4, 4)

    def forward(self, q, k):
        projection = self.projection
        if self.generalized:
            # the kernel applied to queries and keys alike
            make = partial(kernel, kernel_fn=self.kernel_fn, projection=projection)
            q, k = map(make, (self.fc(q), k))
        else:
            make = partial(kernel, projection=projection, is_query=False)
            q = make(self.fc(q), is_query=True)
            k = make(k)
        return q * k


def plain():
    return Attn()


def generalized():
    return Attn(True)
'''


@pytest.mark.parametrize("entry", ["plain", "generalized"])
def test_partial_with_tensor_keywords_built_in_forward_computes_in_graph(entry):
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    code, _ = check_layer(SRC, [q, k], entry=entry, graph=True, grad=True)
    assert "partial(" not in code.split("def construct")[1], code
    assert "# the kernel applied to queries and keys alike" in code, code


def test_a_partial_that_escapes_is_kept():
    src = SRC.replace("            k = make(k)\n", "            k = make(k)\n            self.last = make\n")
    code, _ = convert_snippet(src)
    assert "make = _ms_compat.partial(kernel, projection=projection, is_query=False)" in code, code
    src = SRC.replace("projection = self.projection", "projection = self.projection\n        p2 = projection")\
        .replace("make = partial(kernel, projection=projection, is_query=False)",
                 "make = partial(kernel, projection=projection, is_query=False)\n            projection = p2 * 2")
    code, _ = convert_snippet(src)
    assert "make = _ms_compat.partial(kernel, projection=projection, is_query=False)" in code, code


def test_a_project_function_named_partial_is_no_functools_partial():
    src = '''
import torch
from torch import nn


def partial(f, **kw):
    return f


class Net(nn.Module):
    def forward(self, x):
        make = partial(torch.relu, scale=x)
        return make(x)
'''
    code, _ = convert_snippet(src)
    assert "make = partial(" in code and "return make(x)" in code, code
