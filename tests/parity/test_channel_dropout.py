"""Parity of channel-wise dropout (nn.Dropout1d/2d/3d, F.dropout1d/2d/3d) on every input
rank torch 2.13 accepts: identity in eval mode (PyNative and GRAPH), and in train mode
the same mask structure (which dimensions share one draw), drop rate and scaling, and the
same refusals (records in msmigrate/mappings/channel_dropout.py)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")


from .harness import check_layer, load_converted, load_torch, no_todo  # noqa: E402

P = 0.4


def layer_src(name):
    return f'''
import torch.nn as nn


def make():
    return nn.Sequential(nn.{name}(p={P}))
'''


FN_SRC = f'''
import torch.nn.functional as F


def d1(x, training):
    return F.dropout1d(x, {P}, training)


def d2(x, training):
    return F.dropout2d(x, p={P}, training=training, inplace=False)


def d3(x, training):
    return F.dropout3d(x, {P}, training=training)
'''

# every rank torch accepts in train mode (Dropout1d: 2-3; Dropout2d: >= 2; Dropout3d: any)
CASES = [("Dropout1d", r) for r in (2, 3)] + [("Dropout2d", r) for r in (2, 3, 4, 5)] + \
        [("Dropout3d", r) for r in (1, 2, 3, 4, 5)]
SIZES = {1: (64,), 2: (32, 8), 3: (32, 8, 3), 4: (16, 4, 3, 2), 5: (4, 16, 2, 3, 2)}   # >= 16 draws each


def shared_axes(out: np.ndarray) -> tuple:
    """Axes along which the mask of a dropout over ones() does not vary (one draw per slice)."""
    return tuple(a for a in range(out.ndim) if out.shape[a] > 1 and np.all(out == out.take([0], axis=a)))


def train_stats(out: np.ndarray):
    kept = out[out != 0]
    np.testing.assert_allclose(kept, 1 / (1 - P), rtol=1e-5)
    return shared_axes(out), float((out == 0).mean())


@pytest.mark.parametrize("name,rank", CASES)
def test_channel_dropout_layers(name, rank):
    import mindspore as ms
    import torch
    src = layer_src(name)
    x = np.random.default_rng(0).standard_normal(SIZES[rank]).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # torch warns about deprecated ranks
        code, sites = check_layer(src, [x], train=False, graph=True)   # eval: identity
        no_todo(sites)
        assert f"_ms_compat.{name}(p={P})" in code
        tnet = load_torch(src)["make"]().train()
        t_out = tnet(torch.ones(SIZES[rank])).numpy()
    mod, _, _ = load_converted(src)
    mnet = mod.make()
    mnet.set_train(True)
    m_out = mnet(ms.Tensor(np.ones(SIZES[rank], np.float32))).asnumpy()
    t_axes, t_rate = train_stats(t_out)
    m_axes, m_rate = train_stats(m_out)
    assert m_axes == t_axes, (m_axes, t_axes)          # the same channel structure
    draws = np.prod(SIZES[rank]) / np.prod([SIZES[rank][a] for a in t_axes] or [1])
    assert abs(m_rate - P) < 4 * np.sqrt(P * (1 - P) / draws) + 1e-6, (m_rate, draws)
    g = ms.grad(lambda v: (mnet(v) * 3.0).sum())(ms.Tensor(np.ones(SIZES[rank], np.float32))).asnumpy()
    g = g / 3.0                                         # the gradient is the mask: 0 or 1/(1-p)
    assert np.all(np.isclose(g, 0.0) | np.isclose(g, 1 / (1 - P), rtol=1e-5)), np.unique(g)
    assert 0 < (g == 0).mean() < 1


@pytest.mark.filterwarnings("ignore::UserWarning")   # torch warns about the rank before refusing
@pytest.mark.parametrize("name,rank", [("Dropout1d", 1), ("Dropout1d", 4), ("Dropout2d", 1)])
def test_channel_dropout_refusals(name, rank):
    import mindspore as ms
    import torch
    src = layer_src(name)
    with pytest.raises(RuntimeError):
        load_torch(src)["make"]().train()(torch.ones((4,) * rank))
    mnet = load_converted(src)[0].make()
    mnet.set_train(True)
    with pytest.raises(RuntimeError):
        mnet(ms.Tensor(np.ones((4,) * rank, np.float32)))


def test_channel_dropout_functions():
    import mindspore as ms
    import torch
    mod, code, sites = load_converted(FN_SRC)
    no_todo(sites)
    ref = load_torch(FN_SRC)
    for fn, shapes in (("d1", (SIZES[2], SIZES[3])), ("d2", (SIZES[3], SIZES[4])), ("d3", (SIZES[4], SIZES[5]))):
        for shape in shapes:
            x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
            np.testing.assert_array_equal(getattr(mod, fn)(ms.Tensor(x), False).asnumpy(), x)
            np.testing.assert_array_equal(ms.jit(getattr(mod, fn))(ms.Tensor(x), False).asnumpy(), x)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t_axes = train_stats(ref[fn](torch.ones(shape), True).numpy())[0]
            assert train_stats(getattr(mod, fn)(ms.Tensor(np.ones(shape, np.float32)), True).asnumpy())[0] == t_axes
