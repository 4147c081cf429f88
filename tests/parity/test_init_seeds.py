"""Building a model leaves NumPy's global stream alone, as in torch (templates/compat_parts/init_stream.py).

MindSpore's initializers take their seeds from np.random; the converted program's own
np.random draws after building its models (noise, labels) must still be the original's."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .harness import load_converted, load_torch, no_todo  # noqa: E402

SRC = '''
import numpy as np
import torch
import torch.nn as nn


def build_then_draw(seed, torch_seed=None):
    if torch_seed is not None:
        torch.manual_seed(torch_seed)
    np.random.seed(seed)
    net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8, 0.8), nn.LeakyReLU(0.2))
    nn.Embedding(10, 10)
    conv = nn.Conv2d(1, 2, 3)
    noise = np.random.normal(0, 1, (2, 3))
    labels = np.random.randint(0, 10, 4)
    return noise, labels, float(net[0].weight.sum()), float(conv.weight.sum())
'''


def test_building_a_model_leaves_numpy_stream_alone():
    torch_fn = load_torch(SRC)["build_then_draw"]
    mod, code, sites = load_converted(SRC)
    no_todo(sites)
    for seed in (0, 3):
        t_noise, t_labels, *_ = torch_fn(seed)
        m_noise, m_labels, *_ = mod.build_then_draw(seed)
        np.testing.assert_array_equal(m_noise, t_noise)
        np.testing.assert_array_equal(m_labels, t_labels)
    # after torch.manual_seed too (mindspore.set_seed also seeds np.random: the program reseeds it after)
    np.testing.assert_array_equal(mod.build_then_draw(1, torch_seed=5)[0], torch_fn(1, torch_seed=5)[0])


def test_seeded_weights_repeat():
    """A seed (torch.manual_seed -> mindspore.set_seed) still fixes the initial weights; another seed changes them."""
    mod, _, _ = load_converted(SRC)
    a = mod.build_then_draw(0, torch_seed=7)[2:]
    b = mod.build_then_draw(0, torch_seed=7)[2:]
    c = mod.build_then_draw(0, torch_seed=8)[2:]
    assert a == b
    assert a != c
