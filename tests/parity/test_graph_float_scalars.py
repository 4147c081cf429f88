"""Python float arithmetic inside a compiled construct (MindSpore 2.10, CPU), against torch.

Measured: GRAPH mode computes Python floats as float32 scalars (`0.1 + 0.2` is 0.30000001192092896 there,
`1.0 / 3.0` 0.3333333432674408, `16777217.0 + 1.0` 16777216.0; an attribute set in __init__ keeps its
double until arithmetic touches it). Where such a scalar multiplies, divides or shifts a float32 tensor
it makes no difference: torch and PyNative cast the double to the tensor's float32, and one float32
rounding of the double equals the float32 operation (checked here: GRAPH's values are PyNative's bit
for bit, its input gradient within one float32 rounding of PyNative's, both torch's within 1e-5).
What does differ: a float turned into an int (`int(0.29 * 100)` is 29 in GRAPH mode, 28 in Python), converted
to _ms_compat.float_rounded, which computes it on the host as Python does (msmigrate/graph_scalars.py, tested
here); and any float64 tensor times a Python float (the scalar becomes float32 in PyNative too: 3e-8 relative,
docs/converter.md "Python floats in GRAPH mode").
`"%d rows" % x.shape[0]` then `h * len(label)` had a gradient of 0 in GRAPH mode (measured): converted to
_ms_compat.percent_format, tested here too."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .harness import assert_close  # noqa: E402
from .test_graph_safety import check_graph, ms_value_and_grad, rnd, torch_value_and_grad  # noqa: E402

SRC = '''
import math

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, dim=4, temperature=0.07):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.dim = dim
        self.temperature = temperature

    def forward(self, x):
        h = self.fc(x)
        scale = 1.0 / 3.0
        third = h * scale
        norm = h / math.sqrt(self.dim) + h * self.dim ** -0.5
        shifted = (h - 0.1) * (0.1 + 0.2) / self.temperature
        return third + norm + shifted * 1e-3 + 2.5e-8


def make():
    return Net()
'''


def test_float_scalars_on_float32_tensors_in_graph_are_pynatives_bit_for_bit():
    x, weights = rnd(3, 4), rnd(3, 4, seed=3)
    t_out, t_grad, sd = torch_value_and_grad(SRC, x, weights)
    graph = ms_value_and_grad(SRC, x, weights, sd, graph=True)
    pynative = ms_value_and_grad(SRC, x, weights, sd, graph=False)
    assert "scale = 1.0 / 3.0" in graph[2] and "(0.1 + 0.2) / self.temperature" in graph[2], graph[2]
    for what, (out, grad) in (("graph", graph[:2]), ("pynative", pynative[:2])):
        assert_close(out, t_out, what=what)
        assert_close(grad, t_grad, what=what + " gradient")
    assert (graph[0] == pynative[0]).all(), (graph[0], pynative[0])
    np.testing.assert_allclose(graph[1], pynative[1], rtol=3e-7, atol=3e-7)   # the backward's own order


ROUNDING_SRC = '''
import math
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, ratio=0.29, prob=0.71):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.ratio = ratio
        self.prob = prob

    def forward(self, x):
        h = self.fc(x)
        n = x.shape[0] * 50
        keep = int(self.ratio * n)                    # 28.999999999999996: 28 (float32: 29.0)
        low = math.floor(0.29 * n)                    # 28 (float32: 29)
        up = math.ceil(n * 0.07)                      # 7.000000000000001: 8 (float32: 7.0)
        rest = int(n * (1 - self.prob))               # 29.000000000000004: 29
        label = "%d rows" % x.shape[0]                # GRAPH, before: h * len(label) had no gradient
        return h * keep + low * 100 + up * 10000 + rest + h * len(label)


def make():
    return Net()
'''


def test_float_rounding_and_percent_format_in_graph_are_pythons():
    code, _ = check_graph(ROUNDING_SRC, rnd(2, 4), (2, 3))
    for form in ("_ms_compat.float_rounded('int', ('*', self.ratio, n),",
                 "_ms_compat.float_rounded('floor', ('*', 0.29, n),", "_ms_compat.float_rounded('ceil', ('*', n, 0.07),",
                 "('*', n, ('-', 1, self.prob))", '_ms_compat.percent_format("%d rows", x.shape[0])'):
        assert form in code, (form, code)


def test_float_rounded_is_pythons_rounding():
    from .harness import load_converted
    rounded = load_converted(ROUNDING_SRC)[0]._ms_compat.float_rounded
    for kind, tree, want in (("int", ("*", 0.29, 100), 28), ("floor", ("-", ("/", 7, 2), 0.1), 3),
                             ("ceil", ("*", 100, 0.07), 8), ("int", ("+", -2.5, 0), -2)):
        got = rounded(kind, tree, "m.py:1")
        assert got == want and type(got) is int, (kind, tree, got, want)


RUNTIME_OPERAND_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, half=0.5):
        super().__init__()
        self.half = half
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        k = int(x.abs().sum().item() * self.half)     # SITE: known only when the graph runs
        return self.fc(x) * k


def make():
    return Net()
'''


def test_float_rounding_of_a_runtime_value_runs_op_by_op_in_graph_mode():
    """`.item()` in the forward: called in GRAPH mode the cell runs op by op, so int(...) is Python's (heldout51's
    reads_on_host; before, it stopped with MigrationError there); compiled by ms.jit it is refused, naming the line."""
    from .test_graph_mutations import check_op_by_op_in_graph_mode
    check_op_by_op_in_graph_mode(RUNTIME_OPERAND_SRC, "_ms_compat.float_rounded('int', ('*', ", "int(...)")
