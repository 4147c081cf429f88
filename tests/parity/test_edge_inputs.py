"""Parity of the records that convert argument forms torch accepts and the MindSpore op does not
(msmigrate/mappings/edge_args.py and its users): a tensor or negative start (narrow, narrow_copy), a tensor of split points (tensor_split), an
empty dim tuple (squeeze), a tensor bound that broadcasts the input (clamp_min/clamp_max), a float fill of an int
tensor (masked_fill), a 0-d PReLU slope (and a PReLU input with no elements), a 1-D hsplit, area interpolation to
sizes that do not divide evenly, zero steps (linspace/logspace), a single tensor's cartesian_prod, a list of dims (Tensor.norm) and
one variable's corrcoef.
Values, dtypes and gradients against torch on the same inputs."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import assert_every_record_cased, case, run_table

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4)).astype(np.float32)
COL = RNG.standard_normal((5, 1)).astype(np.float32)
ROW = RNG.standard_normal(5).astype(np.float32)
NAN = np.array([[np.nan], [1.0], [-2.0]], np.float32)
V10 = RNG.standard_normal(10).astype(np.float32)
INTS = np.arange(-3, 5, dtype=np.int64)
X3 = RNG.standard_normal((2, 3, 7)).astype(np.float32)
X4 = RNG.standard_normal((1, 2, 5, 7)).astype(np.float32)
X5 = RNG.standard_normal((1, 2, 3, 5, 4)).astype(np.float32)
T = "torch."

EDGE = [
    case([T + "tensor_split"], "v, p, n: (torch.tensor_split(v, p), torch.tensor_split(v, n), v.tensor_split(p),"
         " torch.tensor_split(v, [2, 7]), torch.tensor_split(v.reshape(2, 5), p[:1], 1))",
         [V10, np.array([2, 5, 7], np.int64), np.array(3, np.int64)], grad=True, graph=False, typed=True),
    case([T + "hsplit"], "v, a: (torch.hsplit(v, 2), torch.hsplit(v, [3, 4]), torch.hsplit(a, 2), a.hsplit([1]))",
         [V10, A], grad=True, typed=True),
    # the keyword names of torch's other overloads: sections= (an int), indices= (split points)
    case([T + "tensor_split", T + "hsplit", T + "vsplit", T + "dsplit"],
         "a, x: (torch.tensor_split(input=a, sections=3, dim=1), torch.tensor_split(a, indices=(1, 3), dim=-1),"
         " a.tensor_split(sections=2), torch.hsplit(a, indices=[1, 2]), torch.vsplit(sections=3, input=a),"
         " torch.dsplit(x, indices=[1, 4]), a.hsplit(sections=2))", [A, X3], grad=True, typed=True),
    case([T + "narrow", "Tensor.narrow"], "a, s: (torch.narrow(a, 1, s, 2), a.narrow(0, s, 2), torch.narrow(a, 1, 1, 3))",
         [A, np.array(1, np.int64)], grad=True, graph=False, typed=True),
    # a negative start counts from the end (a literal, a name, a 0-d tensor), as in torch
    case([T + "narrow", "Tensor.narrow"],
         "a, s: (torch.narrow(a, -1, s, 1), a.narrow(0, -3, 2), torch.narrow(input=a, dim=1, start=-4, length=4),"
         " a.narrow(1, 2, 2))", [A, np.array(-2, np.int64)], grad=True, graph=False, typed=True),
    # no gradients: torch's narrow_copy backward fails on a negative start (size mismatch)
    case([T + "narrow_copy", "Tensor.narrow_copy"],
         "a, s: (torch.narrow_copy(a, 1, s, 2), a.narrow_copy(-1, -1, 1), torch.narrow_copy(a, 0, 1, 2),"
         " a.narrow_copy(0, s, 1))", [A, np.array(-2, np.int64)], graph=False, typed=True),
    case([T + "squeeze", "Tensor.squeeze"],
         "x: (torch.squeeze(x, ()), x.squeeze(()), torch.squeeze(x), x.squeeze(1), torch.squeeze(x, (0, 2)))",
         [np.ones((1, 1, 1, 3), np.float32)], grad=True, typed=True),
    case([T + "clamp_min", T + "clamp_max", "Tensor.clamp_min", "Tensor.clamp_max"],
         "c, r, n: (torch.clamp_min(c, r), torch.clamp_max(c, r), c.clamp_min(r), c.clamp_max(r), torch.clamp_min(n, 0.5),"
         " n.clamp_max(-1.0), torch.clamp_max(c, 0.25), r.clamp_min(0))", [COL, ROW, NAN], grad=True, typed=True),
    case([T + "clamp_min", "Tensor.clamp_max"], "i: (torch.clamp_min(i, 1), i.clamp_max(2))", [INTS], typed=True),
    case(["Tensor.masked_fill"], "i, a: (i.masked_fill(i > 1, 0.5), i.masked_fill(i < 0, -2.7), a.masked_fill(a > 0, 0.5),"
         " a.masked_fill(a < 0, float('-inf')), a.masked_fill(a > 1, 3))", [INTS, A], typed=True),
    case(["torch.nn.functional.prelu", T + "prelu"],
         "x, w0, w: (torch.nn.functional.prelu(x, w0), torch.nn.functional.prelu(x, weight=w), torch.prelu(x, w0))",
         [X3, np.array(0.25, np.float32), np.array([0.1, -0.3, 0.7], np.float32)], grad=True),
    case(["torch.nn.functional.prelu"], "e, w0: torch.nn.functional.prelu(e, w0)",      # no elements: itself
         [np.zeros((1, 0, 3), np.float32), np.array(0.25, np.float32)]),
    case([T + "cartesian_prod", T + "linspace", T + "logspace"],
         "v, s: (torch.cartesian_prod(v), torch.cartesian_prod(v, v[:2]), torch.linspace(-2.0, 3, 0),"
         " torch.linspace(s, 3, 0, dtype=torch.float32), torch.logspace(0, -3, 0, 2.0), torch.linspace(0, 1, 5))",
         [V10[:3].copy(), np.array(1.5, np.float32)]),   # no gradients: torch's of a 0-step linspace is NaN
    case(["Tensor.norm"], "x: (x.norm('fro', [0, 1]), x.norm(dim=[1]), x.norm(2, [0, 2], True))", [X3], grad=True,
         typed=True),
    case([T + "corrcoef"], "a, v: (torch.corrcoef(a), torch.corrcoef(v), torch.corrcoef(a[:1]), v.corrcoef())",
         [A, V10], grad=True, typed=True),
    case(["torch.nn.functional.interpolate"],
         "x3, x4, x5: (torch.nn.functional.interpolate(x3, (3,), mode='area'),"
         " torch.nn.functional.interpolate(x3, size=10, mode='area'),"
         " torch.nn.functional.interpolate(x3, scale_factor=1.7, mode='area'),"
         " torch.nn.functional.interpolate(x4, (3, 4), mode='area'),"
         " torch.nn.functional.interpolate(x5, size=(2, 3, 3), mode='area'))", [X3, X4, X5], grad=True),
]


def test_edge_inputs():
    failures = run_table(EDGE, graph_every=2)
    assert not failures, "\n".join(failures)


def test_every_edge_record_has_a_case():
    assert_every_record_cased("tests/parity/test_edge_inputs.py", {"test_edge_inputs": EDGE})
