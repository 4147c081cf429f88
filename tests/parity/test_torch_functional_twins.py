"""Parity of torch.conv2d, torch.max_pool2d, torch.layer_norm...: torch's top-level twins of torch.nn.functional ops
(msmigrate/mappings/torch_functional_aliases.py), values and gradients in PyNative and ms.jit."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import assert_every_record_cased, case, run_table

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal((3, 4)).astype(np.float32)
T = "torch."
X1 = RNG.standard_normal((2, 3, 8)).astype(np.float32)
X2 = RNG.standard_normal((2, 4, 6, 6)).astype(np.float32)
X3 = RNG.standard_normal((1, 2, 4, 4, 4)).astype(np.float32)
TWINS = [
    case([T + "conv1d", T + "conv_transpose1d"], "x, w, v: (torch.conv1d(x, w), torch.conv1d(x, w, None, 2, 1),"
         " torch.conv_transpose1d(x, v))", [X1, RNG.standard_normal((4, 3, 3)).astype(np.float32),
                                            RNG.standard_normal((3, 4, 3)).astype(np.float32)],
         grad=True, rtol=1e-4, atol=1e-4),
    case([T + "conv2d", T + "conv_transpose2d"], "x, w, b: (torch.conv2d(x, w, b, padding=1), torch.conv2d(x, w,"
         " stride=2), torch.conv_transpose2d(x, w, b, stride=2))",
         [X2, RNG.standard_normal((4, 4, 3, 3)).astype(np.float32), RNG.standard_normal(4).astype(np.float32)],
         grad=True, rtol=1e-4, atol=1e-4),
    case(T + "conv3d", "x, w: torch.conv3d(x, w, padding=1)", [X3, RNG.standard_normal((3, 2, 3, 3, 3)).astype(
        np.float32)], grad=True, rtol=1e-4, atol=1e-4),
    case([T + "avg_pool1d", T + "max_pool1d", T + "max_pool2d", T + "adaptive_avg_pool1d"],
         "x, y: (torch.avg_pool1d(x, 2), torch.max_pool1d(x, 3, 2), torch.max_pool2d(y, 2), torch.max_pool2d(y, 3, 1,"
         " 1), torch.adaptive_avg_pool1d(x, 4))", [X1, X2], grad=True),
    case([T + "pixel_shuffle", T + "pixel_unshuffle", T + "prelu", T + "threshold"],
         "y, w: (torch.pixel_shuffle(y, 2), torch.pixel_unshuffle(y, 2), torch.prelu(y, w), torch.threshold(y, 0.1,"
         " -1.0))", [X2, np.array([0.25, 0.1, 0.5, 0.3], np.float32)], grad=True),
    case([T + "pairwise_distance", T + "layer_norm", T + "group_norm"],
         "a, b, y: (torch.pairwise_distance(a, b), torch.layer_norm(y, (6, 6)), torch.layer_norm(y, [6], None, None,"
         " 1e-3), torch.group_norm(y, 2))", [A, B, X2], grad=True, rtol=1e-4, atol=1e-4),
]


def test_functional_twins():
    failures = run_table(TWINS)
    assert not failures, "\n".join(failures)



def test_every_twin_record_has_a_case():
    assert_every_record_cased("tests/parity/test_torch_functional_twins.py", {"test_functional_twins": TWINS})
