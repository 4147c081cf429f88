"""Parity of attention: F.scaled_dot_product_attention and the nn.Transformer family
(records in msmigrate/mappings/attention.py)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .harness import check_function, check_layer, load_converted  # noqa: E402


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def no_todo(sites):
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, todos


SDPA_SRC = '''
import torch
import torch.nn.functional as F


def fn(q, k, v, bmask, fmask, q8):
    a = F.scaled_dot_product_attention(q, k, v)
    b = F.scaled_dot_product_attention(q, k, v, attn_mask=bmask)
    c = F.scaled_dot_product_attention(q, k, v, fmask, 0.0, False)
    d = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3)
    e = F.scaled_dot_product_attention(q, k, v, attn_mask=bmask, is_causal=True)
    f = F.scaled_dot_product_attention(q8, k, v, enable_gqa=True)
    g = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0, attn_mask=fmask[0])
    return a, b, c, d, e, f, g
'''


def test_sdpa():
    # (N, H, L, E) queries against S = 5 keys; the masks leave query row 1 with no key at all
    bmask = np.ones((2, 1, 3, 5), dtype=bool)
    bmask[:, :, 1] = False
    bmask[0, 0, 2, 3:] = False
    fmask = rnd(2, 1, 3, 5, seed=4) * 0.5
    fmask[:, :, 1] = -np.inf
    inputs = [rnd(2, 2, 3, 4), rnd(2, 2, 5, 4, seed=1), rnd(2, 2, 5, 4, seed=2), bmask, fmask,
              rnd(2, 4, 3, 4, seed=3)]
    code, sites = check_function(SDPA_SRC, inputs, grad=True)
    no_todo(sites)
    assert "_ms_compat.scaled_dot_product_attention" in code


def test_sdpa_dropout_statistics():
    """dropout_p > 0 drops weights even outside training, as torch's function does."""
    src = SDPA_SRC.replace("def fn(", "def drop(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v, "
                           "dropout_p=0.5)\n\n\ndef fn(")
    mod, code, sites = load_converted(src)
    import mindspore as ms
    q = ms.Tensor(rnd(4, 2, 16, 8))
    k = ms.Tensor(rnd(4, 2, 16, 8, seed=1))
    v = ms.Tensor(np.ones((4, 2, 16, 8), np.float32))
    out = mod.drop(q, k, v).asnumpy()      # each weight row sums to 1 before dropout; ones as values
    assert 0.85 < out.mean() < 1.15 and out.std() > 0.2   # kept weights scaled by 2, others zero
