"""RandomSampler used as an endless sampler (replacement=True, num_samples=10**10) is lazy,
as torch's is: the converted sampler and a DataLoader over it hand out their first batches
at once, in bounded memory (it once materialised a 75 GiB index array)."""
from __future__ import annotations

import itertools
import tracemalloc

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .harness import load_converted, load_torch  # noqa: E402

SRC = '''
import itertools

import torch
from torch.utils.data import DataLoader, RandomSampler, TensorDataset


def make(n, replacement, num_samples):
    data = TensorDataset(torch.arange(n, dtype=torch.float32).reshape(n, 1))
    sampler = RandomSampler(data, replacement=replacement, num_samples=num_samples)
    return sampler, DataLoader(data, batch_size=8, sampler=sampler)


def first(n, replacement, num_samples, count):
    sampler, loader = make(n, replacement, num_samples)
    idx = list(itertools.islice(iter(sampler), count))
    batches = [b[0] for b in itertools.islice(iter(loader), 3)]
    return len(sampler), len(loader), idx, batches
'''


@pytest.mark.parametrize("replacement", [True, False])
def test_endless_random_sampler_is_lazy(replacement):
    mod, code, sites = load_converted(SRC)
    assert not [s for s in sites if s.status == TODO]
    ref = load_torch(SRC)
    n, endless = 50, 10 ** 10
    t_len, t_loader_len, t_idx, t_batches = ref["first"](n, replacement, endless, 1000)
    tracemalloc.start()
    m_len, m_loader_len, m_idx, m_batches = mod.first(n, replacement, endless, 1000)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 64 * 2 ** 20, f"peak {peak / 2 ** 20:.0f} MiB: the index array was materialised"
    assert (m_len, m_loader_len) == (t_len, t_loader_len) == (endless, endless // 8)
    assert len(m_idx) == len(t_idx) == 1000 and set(m_idx) <= set(range(n))
    for b in m_batches:
        assert tuple(b.shape) == (8, 1)
    if not replacement:   # each epoch of n indices is a permutation, as in torch
        for k in range(1000 // n):
            assert sorted(m_idx[k * n:(k + 1) * n]) == sorted(t_idx[k * n:(k + 1) * n]) == list(range(n))
    else:                 # uniform draws: every index turns up in 1000 draws from 50
        assert len(set(m_idx)) == len(set(t_idx)) == n


def test_finite_sampler_counts():
    mod, _, _ = load_converted(SRC)
    for replacement, num in ((True, 23), (False, 123), (False, 50)):
        sampler, _ = mod.make(50, replacement, num)
        idx = list(sampler)
        assert len(idx) == len(sampler) == num
        if not replacement:
            assert sorted(idx[:50]) == list(range(50))
