"""Inputs with no elements that torch takes and a MindSpore kernel rejects: roll of an empty tensor (itself),
reflect / replicate / circular padding, unfold and adaptive average pooling of a batch with no samples (torch's
empty result, templates/compat_parts/empty_batch.py), conj / real of an empty real tensor (itself), mm with an inner
dimension of 0 (zeros); and complex() of parts that broadcast. Each case also runs an ordinary input: values, dtypes
and shapes against torch."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import case, run_table

RNG = np.random.default_rng(5)
E3 = np.zeros((0, 3, 3), np.float32)
E4 = np.zeros((0, 1, 5, 5), np.float32)
X3 = RNG.standard_normal((2, 3, 5)).astype(np.float32)
X4 = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
EMPTY = np.zeros((1, 0, 3), np.float32)
V = RNG.standard_normal(4).astype(np.float32)
COL = RNG.standard_normal((4, 1)).astype(np.float32)
Z = (RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3))).astype(np.complex64)
F = "torch.nn.functional."

EMPTIES = [
    case(["torch.roll", "Tensor.roll"],
         "e, x: (torch.roll(e, 1, 2), e.roll(0, 0), torch.roll(e, 2), e.roll(3), torch.roll(x, 1, 2), x.roll(-1, 1))",
         [np.zeros((0, 0, 0), np.float32), X3], grad=True, typed=True),
    case([F + "pad"],
         "e, x: (torch.nn.functional.pad(e, (1, 2), 'reflect'), torch.nn.functional.pad(e, (1, 2), 'replicate'),"
         " torch.nn.functional.pad(e, (0, 1), 'circular'),"
         " torch.nn.functional.pad(x, (1, 2), 'reflect'), torch.nn.functional.pad(x, (2, 1), mode='replicate'))",
         [E3, X3], grad=True),
    case([F + "unfold"],
         "e, x: (torch.nn.functional.unfold(e, 2, 1, 0, 1), torch.nn.functional.unfold(e, 2, 2, 0, (1, 2)),"
         " torch.nn.functional.unfold(x, 2))", [E4, X4], grad=True),
    case([F + "adaptive_avg_pool1d", F + "adaptive_avg_pool3d"],
         "e, x, e5: (torch.nn.functional.adaptive_avg_pool1d(e, (5,)), torch.nn.functional.adaptive_avg_pool1d(x, 3),"
         " torch.nn.functional.adaptive_avg_pool3d(e5, (2, 3, 1)),"
         " torch.nn.functional.adaptive_avg_pool3d(x[None], (1, 2, 2)))",
         [np.zeros((0, 8, 8), np.float32), X3, np.zeros((0, 2, 4, 4, 4), np.float32)], grad=True),
    case(["torch.mm", "Tensor.mm"], "a, b, m: (torch.mm(a, b), a.mm(b), torch.mm(m, m.T), m.T.mm(m))",
         [np.zeros((5, 0), np.float32), np.zeros((0, 10), np.float32), X3[0]], typed=True),
    case(["torch.conj", "Tensor.conj", "torch.real", "torch.complex"],
         "e, z, v, c: (torch.conj(e), e.conj(), torch.real(e), torch.conj(z), z.conj(), torch.real(z), torch.real(v),"
         " torch.complex(v, c), torch.complex(c, v[0]))", [EMPTY, Z, V, COL], typed=True),
]


def test_empty_inputs():
    failures = run_table(EMPTIES, graph_every=2)
    assert not failures, "\n".join(failures)
