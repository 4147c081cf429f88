"""torch.conv2d, torch.max_pool2d, torch.layer_norm...: torch's top-level copies of torch.nn.functional ops.

Where the top-level function takes the same parameters in the same order as its torch.nn.functional twin, its record
is the twin's record under the torch.* name (same conversion and notes); the proof is its own parity case in
tests/parity/test_torch_functional_twins.py. Top-level ops whose signature differs from the functional one
(torch.batch_norm, torch.embedding, torch.dropout, the losses with an integer reduction) are not aliased.
"""
from __future__ import annotations

import dataclasses

from ..records import REGISTRY

T = "tests/parity/test_torch_functional_twins.py::test_functional_twins"
SAME_SIGNATURE = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "avg_pool1d", "max_pool1d",
                  "max_pool2d", "adaptive_avg_pool1d", "pixel_shuffle", "pixel_unshuffle", "prelu", "threshold",
                  "pairwise_distance", "layer_norm", "group_norm")
for _name in SAME_SIGNATURE:
    _twin = REGISTRY.get(f"torch.nn.functional.{_name}")
    REGISTRY.add(dataclasses.replace(_twin, source=f"torch.{_name}", test=T))
