"""Parity of torch.Tensor's in-place random fills (records in msmigrate/mappings/random_fills.py) and of
fill_diagonal_ (msmigrate/mappings/diagonal_fill.py): the
converted fills write into the tensor itself (a local tensor, a fresh one, a Parameter's data) and their
draws follow torch's distributions (shapes, dtypes and statistics compared with torch's own draws)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .harness import load_converted, load_torch, no_todo  # noqa: E402

N = 20000

FILLS_SRC = '''
import torch


def fill(a, b, c, d, e, f, g, h, w):
    a.exponential_(2.0)
    b.log_normal_(0.0, 0.5)
    c.cauchy_(1.0, 2.0)
    d.geometric_(0.3)
    e.bernoulli_(0.2)
    f.random_(3, 10)
    g.random_(7)
    h.random_()
    w.data.bernoulli_(torch.full_like(w, 0.7))
    fresh = torch.empty(4, 3).exponential_()
    return fresh
'''


def _stats(arrays):
    a, b, c, d, e, f, g, h, w = [np.asarray(x, np.float64) for x in arrays]
    q1, q2, q3 = np.percentile(c, [25, 50, 75])
    return {"exponential mean": (a.mean(), 0.5 / np.sqrt(N)), "exponential std": (a.std(), 0.5 / np.sqrt(N)),
            "log_normal log-mean": (np.log(b).mean(), 0.5 / np.sqrt(N)),
            "log_normal log-std": (np.log(b).std(), 0.5 / np.sqrt(N)),
            "cauchy median": (q2, 2 * 2.0 / np.sqrt(N)), "cauchy IQR": (q3 - q1, 4 * 2.0 / np.sqrt(N)),
            "geometric mean": (d.mean(), 3.0 / np.sqrt(N)), "geometric min": (d.min(), 0),
            "bernoulli mean": (e.mean(), 0.4 / np.sqrt(N)), "bernoulli values": (len(np.unique(e)), 0),
            "random(3,10) range": ((f.min(), f.max()), 0), "random(3,10) mean": (f.mean(), 2.0 / np.sqrt(N)),
            "random(7) range": ((g.min(), g.max()), 0), "random() range": ((h.min() >= 0, h.max() <= 2 ** 24), 0),
            "random() mean / 2^24": (h.mean() / 2 ** 24, 0.3 / np.sqrt(N)),
            "tensor p mean": (w.mean(), 0.5 / np.sqrt(w.size))}


def test_random_fills_match_torch_statistics():
    """exponential_, log_normal_, cauchy_, geometric_, bernoulli_ (a number or a tensor of probabilities)
    and random_ (from/to, to only, torch's dtype bound) change the tensor in place; their statistics agree
    with torch's draws within 6 standard errors; dtypes and shapes are kept."""
    import mindspore as ms
    import torch

    mod, code, sites = load_converted(FILLS_SRC)
    no_todo(sites)
    assert "_ms_compat.exponential_(a, 2.0)" in code
    shapes = [(N,)] * 8
    t_in = [torch.zeros(s) for s in shapes] + [torch.zeros(100, 50)]
    t_fresh = load_torch(FILLS_SRC)["fill"](*t_in)
    m_in = [ms.Tensor(np.zeros(s, np.float32)) for s in shapes]
    w = ms.Parameter(ms.Tensor(np.zeros((100, 50), np.float32)), name="w")
    m_fresh = mod.fill(*m_in, w)
    assert m_fresh.shape == tuple(t_fresh.shape) and m_fresh.dtype == ms.float32 and m_fresh.asnumpy().min() > 0
    t_stats = _stats([t.numpy() for t in t_in])
    m_stats = _stats([m.asnumpy() for m in m_in] + [w.asnumpy()])
    assert all(m.dtype == ms.float32 for m in m_in) and w.dtype == ms.float32
    for key, (t_val, se) in t_stats.items():
        m_val = m_stats[key][0]
        if se == 0:
            assert m_val == t_val, (key, m_val, t_val)
        else:
            assert abs(m_val - t_val) <= 6 * se, (key, m_val, t_val, se)


DIAGONAL_SRC = '''
import torch


def fn(x, tall, cube):
    y = x * 3
    y.fill_diagonal_(-1.0)
    t = tall.clone()
    t.fill_diagonal_(5.0, wrap=True)
    u = tall * 1
    u.fill_diagonal_(fill_value=7.0)
    w = x.t() * 1
    w.fill_diagonal_(0.5)
    c = cube + 0
    c.fill_diagonal_(9.0)
    return y, t, u, w, c
'''


def test_fill_diagonal_matches_torch():
    """fill_diagonal_ on square, tall (with and without wrap), wide and cubic tensors: values as torch, and
    the gradient reaches the entries off the diagonal only (GRAPH mode compiles it too: 8 s, not run here)."""
    from .harness import check_function, rnd

    code, sites = check_function(DIAGONAL_SRC, [rnd(3, 4), rnd(7, 3, seed=1), rnd(3, 3, 3, seed=2)], grad=True, graph=False)
    no_todo(sites)
    assert "y = _ms_compat.fill_diagonal(y, -1.0, False)" in code
