"""`next(self.parameters())` in a module's forward (DiT's `t_freq.to(dtype=next(self.parameters()).dtype)`):
MindSpore compiles no parameter enumeration in GRAPH mode, so the pre-pass (msmigrate/first_parameters.py) writes
the parameter torch would return as an attribute path where __init__ fixes it. Each model here reads the
parameter's values too, so a wrong choice shows in the outputs and gradients; compared with torch in PYNATIVE and
GRAPH mode."""
import numpy as np
import pytest

from tests.parity.harness import check_layer, convert_snippet, no_todo

SEQUENTIAL_FIRST = '''
import torch
import torch.nn as nn


class TimestepEmbedder(nn.Module):
    def __init__(self, freq=4):
        super().__init__()
        self.freq = freq
        self.mlp = nn.Sequential(nn.SiLU(), nn.Linear(freq, 6), nn.SiLU(), nn.Linear(6, 3))

    def forward(self, t):
        h = t.to(dtype=next(self.parameters()).dtype)
        return self.mlp(h) * next(self.parameters()).mean()


def make():
    return TimestepEmbedder()
'''

# torch lists a module's own Parameters before its submodules', whatever order __init__ assigns them in
OWN_PARAMETER_FIRST = '''
import torch
import torch.nn as nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(3, elementwise_affine=False)
        self.emb = nn.Embedding(5, 3)
        self.scale = nn.Parameter(torch.linspace(0.5, 1.5, 3))

    def forward(self, ids):
        return self.norm(self.emb(ids)) * next(iter(self.parameters()))


def make():
    return Scaled()
'''

# the first submodule holding a parameter, found through a class of the same file; an Embedding's weight
NESTED_CLASS = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(3, elementwise_affine=False)
        self.emb = nn.Embedding(5, 3)

    def forward(self, ids):
        return self.ln(self.emb(ids))


class Outer(nn.Module):
    def __init__(self, dim=3):
        super().__init__()
        self.dim = dim
        self.drop = nn.Dropout(0.0)
        self.block = Block()
        self.head = nn.Linear(dim, 2)

    def forward(self, ids):
        table = next(self.parameters())
        return self.head(self.block(ids) + table[ids] * 0.5)


def make():
    return Outer()
'''


@pytest.mark.parametrize("src", [SEQUENTIAL_FIRST, OWN_PARAMETER_FIRST, NESTED_CLASS],
                         ids=["sequential", "own_parameter", "nested_class"])
def test_first_parameter_in_forward_matches_torch_in_both_modes(src):
    ids = np.array([[0, 3, 4], [1, 1, 2]], np.int32)
    inputs = [np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)] if src is SEQUENTIAL_FIRST else [ids]
    code, sites = check_layer(src, inputs, grad=True, graph=True)
    assert "parameters(" not in code.split("def construct", 1)[1], code
    no_todo(sites)


@pytest.mark.parametrize("init", [
    # a Parameter under a condition: which one is first depends on the run
    "self.lin = nn.Linear(3, 3)\n        if flag:\n            self.w = nn.Parameter(torch.ones(3))",
    # a registration the pre-pass does not read
    "self.add_module('lin', nn.Linear(3, 3))",
    # a module made by a function: what it holds is not known
    "self.lin = make_layer(3)",
    # a method that assigns attributes may register a module first
    "self.build()\n        self.lin = nn.Linear(3, 3)",
    # a Parameter of another module assigned to an attribute is one of this module's own, which come first
    "self.lin = nn.Linear(3, 3)\n        self.tied = self.lin.weight",
])
def test_first_parameter_left_as_written_when_init_does_not_fix_it(init):
    src = f'''
import torch
import torch.nn as nn


def make_layer(n):
    return nn.Linear(n, n)


class Net(nn.Module):
    def __init__(self, flag=True):
        super().__init__()
        {init}

    def build(self):
        self.first = nn.Linear(3, 3)

    def forward(self, x):
        return x.to(next(self.parameters()).dtype)
'''
    code, _ = convert_snippet(src)
    assert "next(_ms_compat.parameters(self))" in code, code
