"""Parity of torchvision.utils.make_grid / save_image (records in msmigrate/mappings/data.py):
the converted snippet writes the same pixels as torchvision."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from bench.data_speed import import_torchvision  # noqa: E402

from .harness import load_converted, load_torch, no_todo, rnd  # noqa: E402

import_torchvision()   # torchvision.utils imports next to the CPU torch (see bench/data_speed.py)

SRC = '''
import torch
from torchvision.utils import make_grid, save_image
import torchvision.utils as vutils


def grids(x, y):
    a = make_grid(x)
    b = make_grid(x, nrow=3, padding=1, normalize=True, pad_value=0.5)
    c = vutils.make_grid(x, nrow=4, normalize=True, value_range=(-1, 1), scale_each=True)
    d = make_grid(y, normalize=True, scale_each=True)
    e = make_grid([x[0], x[1], x[2]], nrow=2)
    return a, b, c, d, e


def write(x, y, folder):
    save_image(x, f"{folder}/a.png", nrow=5, normalize=True)
    vutils.save_image(torch.tanh(x) * 0.5 + 0.5, f"{folder}/b.png")
    save_image(y[0], f"{folder}/c.png")
'''


def _inputs():
    return rnd(7, 1, 6, 5, seed=3), rnd(4, 3, 5, 4, seed=4)


def test_make_grid():
    mod, code, sites = load_converted(SRC)
    no_todo(sites)
    import torch
    x, y = _inputs()
    want = load_torch(SRC)["grids"](torch.tensor(x), torch.tensor(y))
    import mindspore as ms
    got = mod.grids(ms.Tensor(x), ms.Tensor(y))
    for w, g in zip(want, got):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-6, atol=1e-6)


def test_save_image(tmp_path):
    from PIL import Image
    mod, code, sites = load_converted(SRC)
    no_todo(sites)
    import torch
    x, y = _inputs()
    (tmp_path / "t").mkdir()
    (tmp_path / "m").mkdir()
    load_torch(SRC)["write"](torch.tensor(x), torch.tensor(y), str(tmp_path / "t"))
    import mindspore as ms
    mod.write(ms.Tensor(x), ms.Tensor(y), str(tmp_path / "m"))
    for name in ("a.png", "b.png", "c.png"):
        want = np.asarray(Image.open(tmp_path / "t" / name))
        got = np.asarray(Image.open(tmp_path / "m" / name))
        assert want.shape == got.shape and np.array_equal(want, got), name
