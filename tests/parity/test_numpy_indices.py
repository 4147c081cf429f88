"""NumPy integers and integer/bool arrays indexing a tensor on the host (locuslab/TCN's adding-problem data
generator writes `X_mask[i, 0, positions[0]] = 1`, positions from np.random.choice): torch takes them, MindSpore's
tensor indexing refused them ("IndexError: Unsupported Python object type received: <class 'numpy.int64'>",
naming no line of the program). Such an index is now read through _ms_compat.host_index
(msmigrate/numpy_indices.py): each form below reads and writes what torch does."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import load_converted, load_torch  # noqa: E402

SRC = '''
import numpy as np
import torch


def generate(n, length):
    np.random.seed(0)
    mask = torch.zeros([n, 1, length])
    target = torch.zeros([n, 1])
    values = torch.arange(n * length, dtype=torch.float32).reshape(n, 1, length) / 10
    for i in range(n):
        positions = np.random.choice(length, size=2, replace=False)
        mask[i, 0, positions[0]] = 1
        mask[i, 0, positions[1] - 0] = 1
        target[i, 0] = values[i, 0, positions[0]] + values[i, 0, positions[1]]
    return mask, target


def reads(x):
    np.random.seed(1)
    perm = np.random.permutation(x.shape[0])
    keep = np.array([1, 0, 1, 1, 0]) > 0
    rows = np.array([[0, 1], [2, 3]])
    best = np.argmax(np.array([3.0, 9.0, 1.0]))
    out = []
    for j in np.arange(3):
        out.append(x[j, best].sum())
    return [x[perm], x[keep], x[rows], x[:, best], x[np.int64(4)], torch.stack(out)]


class Table:
    """Not a tensor (a DataFrame, an h5py dataset): its own indexing sees the NumPy index it was given."""
    def __getitem__(self, key):
        return type(key).__name__


def table_keys(table):
    rows = np.array([0, 2])
    first = rows[0]
    return [table[rows], table[first], table[rows[1:]]]


class Pick(torch.nn.Module):
    def forward(self, x):
        order = np.array([2, 0, 1])
        return x[order] * 2 + x[order[0]]
'''


def test_numpy_indices_read_and_write_as_torch():
    mod, code, _ = load_converted(SRC)
    assert code.count("_ms_compat.host_index(") == 16, code
    assert "perm = np.random.permutation" in code      # NumPy's own calls stay as written
    want = load_torch(SRC)
    for got, ref in zip(mod.generate(4, 7), want["generate"](4, 7)):
        np.testing.assert_array_equal(got.asnumpy(), ref.numpy())
    x = np.arange(60, dtype=np.float32).reshape(5, 3, 4)
    got = mod.reads(ms.Tensor(x))
    ref = want["reads"](torch.from_numpy(x))
    assert len(got) == len(ref) == 6
    for g, r in zip(got, ref):
        assert tuple(g.shape) == tuple(r.shape)
        np.testing.assert_array_equal(g.asnumpy(), r.numpy())


def test_a_value_not_known_to_be_a_tensor_keeps_its_numpy_array_index():
    mod, code, _ = load_converted(SRC)
    assert "table[_ms_compat.host_index(rows, table)]" in code, code
    assert load_torch(SRC)["table_keys"](load_torch(SRC)["Table"]()) == ["ndarray", "int64", "ndarray"]
    assert mod.table_keys(mod.Table()) == ["ndarray", "int", "ndarray"]    # a Python int for a NumPy one


@pytest.mark.parametrize("mode", ["pynative", "graph_mode"])
def test_numpy_index_in_a_forward(mode):
    # MindSpore refuses a NumPy index in a compiled graph too; the helper compiles
    mod, code, _ = load_converted(SRC)
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    want = load_torch(SRC)["Pick"]()(torch.from_numpy(x)).numpy()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph_mode" else ms.PYNATIVE_MODE)
    try:
        got = mod.Pick()(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_array_equal(got, want)


def test_numpy_indexing_numpy_is_left_alone():
    from msmigrate.converter import convert_code
    src = '''import numpy as np
import torch
from torch import nn


def pick(a, x):
    idx = np.argsort(a)
    first = idx[0]
    lst = [1, 2, 3]
    return idx[first], np.sort(a)[idx], x[first], lst[first]


class Net(nn.Module):
    def forward(self, x):
        order = np.arange(3)
        return x[order], order[1:]
'''
    code = convert_code(src, "m")[0]
    # values not known to be tensors give the helper themselves; a Python list takes the Python int as it took
    # the NumPy one
    assert ("return idx[first], np.sort(a)[idx], x[_ms_compat.host_index(first, x)], "
            "lst[_ms_compat.host_index(first, lst)]") in code, code
    assert "return x[_ms_compat.host_index(order)], order[1:]" in code, code


SCALAR_MASKS = '''
import torch


def r2(rss, tss):
    # torchmetrics' R2Score compute over one output: 0-d values, 0-d masks
    cond_rss = ~torch.isclose(rss, torch.zeros_like(rss), atol=1e-4)
    cond_tss = ~torch.isclose(tss, torch.zeros_like(tss), atol=1e-4)
    cond = cond_rss & cond_tss
    raw = torch.ones_like(rss)
    raw[cond] = 1 - (rss[cond] / tss[cond])
    raw[cond_rss & ~cond_tss] = 0.0
    return raw, rss[cond], rss[~cond], torch.arange(6.0).reshape(2, 3)[cond].shape[0]
'''


@pytest.mark.parametrize("rss, tss", [(0.5, 2.0), (0.5, 0.0), (0.0, 2.0)])
def test_zero_dim_mask_reads_and_writes_as_torch(rss, tss):
    """A 0-d bool tensor indexing a tensor: torch reads one row (a new leading dimension) where it holds and none
    where not, and writes the whole tensor or nothing; MindSpore 2.10 refused it ("The input data's dim must in the
    range of [1, 7], but got '0'", torchmetrics' R2Score, naming no line)."""
    mod, _, _ = load_converted(SCALAR_MASKS)
    ref = load_torch(SCALAR_MASKS)
    got = mod.r2(ms.Tensor(rss, ms.float32), ms.Tensor(tss, ms.float32))
    want = ref["r2"](torch.tensor(rss), torch.tensor(tss))
    for g, w in zip(got[:3], want[:3]):
        assert tuple(g.shape) == tuple(w.shape), (g.shape, w.shape)
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-6)
    assert int(got[3]) == int(want[3])
