"""Weight initialisation leaves the program's NumPy stream alone (templates/compat_parts/init_stream.py):
a converted program that seeds np.random, builds its networks and then draws noise with np.random
draws what the torch program draws (torch's initializers use torch's generator)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .parity.harness import load_converted, load_torch, no_todo  # noqa: E402

SRC = """
import numpy as np
import torch
import torch.nn as nn


def noise_after_building(seed):
    np.random.seed(seed)
    G = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))
    nn.init.uniform_(G[0].weight, -0.1, 0.1)
    z = np.random.normal(0, 1, (3, 4))
    labels = np.random.randint(0, 10, 5)
    return z, labels, G


def weights(seed):
    return noise_after_building(seed)[2][2].weight
"""


def test_noise_drawn_after_building_networks_is_torchs():
    t_ns = load_torch(SRC)
    mod, code, sites = load_converted(SRC)
    no_todo(sites)
    for seed in (0, 3):
        t_z, t_labels, _ = t_ns["noise_after_building"](seed)
        z, labels, _ = mod.noise_after_building(seed)
        np.testing.assert_array_equal(z, t_z)
        np.testing.assert_array_equal(labels, t_labels)
    # the converted weights still follow the seed: the same seed gives the same weights, another seed others
    first = mod.weights(0).asnumpy()
    np.testing.assert_array_equal(mod.weights(0).asnumpy(), first)
    assert not np.array_equal(mod.weights(1).asnumpy(), first)
