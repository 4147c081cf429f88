"""torch.log1p and Tensor.log1p against torch where MindSpore 2.10's CPU ops.log1p is wrong: it
computes log(1 + x), so float32 log1p(1e-6) came out 4.6% off and log1p(1e-12) as 0. The converted calls go
through _ms_compat.special_log1p: values in float32 and float64, gradients, PyNative and inside ms.jit."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import case, run_table

SMALL = np.array([1e-12, -1e-9, 1e-6, -3e-5, 1e-3, 0.5, -0.5, 3.0, 0.0], np.float64)
INTS = np.array([0, 1, 2], np.int64)


def test_log1p_small_inputs():
    cases = []
    for dt in (np.float32, np.float64):
        x = SMALL.astype(dt)
        cases += [case("torch.log1p", "x: torch.log1p(x)", [x], grad=True, rtol=1e-6, atol=0),
                  case("Tensor.log1p", "x: x.log1p()", [x], grad=True, rtol=1e-6, atol=0, typed=True)]
    # integer inputs are promoted to float32, as torch does
    cases.append(case("torch.log1p", "i: torch.log1p(i)", [INTS], rtol=1e-6, atol=0))
    failures = run_table(cases, graph_every=2)
    assert not failures, "\n".join(failures)
