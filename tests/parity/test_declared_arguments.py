"""Arguments the mapping records declare (argument_check.py): each passes to a MindSpore target that takes it with
torch's meaning. Found where the peer suite's programs and PaConvert's per-API programs use them; before they were
declared, the converter passed them through unchecked (and now it makes any undeclared one a TODO). Each is run by
torch and converted, values and dtypes compared."""
from __future__ import annotations

import numpy as np
import pytest

from tests.parity.harness import load_converted, load_torch, no_todo

SRC = """
import torch
import torch.nn as nn


def creation(x):
    return (torch.arange(0, 5, dtype=torch.float64), torch.arange(3, dtype=torch.int32),
            torch.eye(3, dtype=torch.int64), torch.full_like(x, 2.5, dtype=torch.float64),
            torch.zeros_like(x, dtype=torch.int32), torch.ones_like(x, dtype=torch.float64))


def size(x):
    return torch.Size([2, x.shape[0]])


def shapes_only(x):
    return (torch.empty_like(x, dtype=torch.float64), torch.rand_like(x, dtype=torch.float64),
            torch.randn_like(x, dtype=torch.float64))


def division(x, y):
    return (torch.div(x, y, rounding_mode='floor'), torch.divide(x, y, rounding_mode='trunc'),
            x.div(y, rounding_mode='floor'), torch.true_divide(input=x, other=y))


def norms(x, m):
    return (torch.linalg.vector_norm(x, dtype=torch.float64), torch.linalg.norm(x, dtype=torch.float64),
            torch.linalg.matrix_norm(m, dtype=torch.float64))


def methods(x):
    return (x.softmax(1, torch.float64), x.softmax(dim=1, dtype=torch.float64),
            x.to(device='cpu', dtype=torch.float64), x.permute(dims=(1, 0)), x.reshape(shape=(3, 2)),
            x.reshape(shape=[6]), x.prod(dtype=torch.float64))


def products(a, m1, m2, b, b1, b2):
    return (torch.addmm(a, m1, m2, beta=0.5, alpha=2.0), a.addmm(m1, m2, beta=0.5, alpha=2.0),
            torch.baddbmm(b, b1, b2, beta=0.5, alpha=2.0), torch.cumprod(m1, 0, dtype=torch.float64),
            torch.prod(m1, 1, dtype=torch.float64))


def identity(x):
    return nn.Identity(54, unused_argument1=0.1, unused_argument2=False)(x)


def autocast_off(x):
    ctx = torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=False)
    with ctx:
        return x * 2


def loader(x):
    data = torch.utils.data.TensorDataset(x)
    return [b[0] for b in torch.utils.data.DataLoader(data, batch_size=2, in_order=False)]
"""

RNG = np.random.default_rng(5)
X = RNG.standard_normal((2, 3)).astype(np.float32)
Y = (RNG.standard_normal((2, 3)) * 2 + 0.5).astype(np.float32)
M = RNG.standard_normal((3, 3)).astype(np.float32)
A, M1, M2 = (RNG.standard_normal(s).astype(np.float32) for s in ((2, 4), (2, 3), (3, 4)))
B, B1, B2 = (RNG.standard_normal(s).astype(np.float32) for s in ((2, 2, 4), (2, 2, 3), (2, 3, 4)))


def _flat(v):
    if isinstance(v, (tuple, list)):
        return [y for x in v for y in _flat(x)]
    return [v]


def _dtype_name(v) -> str:
    return str(v.dtype).replace("torch.", "").lower()


def _compare(name, inputs, values=True):
    import mindspore as ms
    import torch

    mod, code, sites = _converted()
    no_todo(sites)
    t_out = _flat(load_torch(SRC)[name](*[torch.from_numpy(a.copy()) for a in inputs]))
    m_out = _flat(getattr(mod, name)(*[ms.Tensor(a.copy()) for a in inputs]))
    assert len(t_out) == len(m_out), code
    for i, (t, m) in enumerate(zip(t_out, m_out)):
        if isinstance(t, int):
            assert type(m) is int and m == t, (name, i)
            continue
        assert _dtype_name(m) == _dtype_name(t), (name, i, _dtype_name(m), _dtype_name(t))
        assert tuple(m.shape) == tuple(t.shape), (name, i)
        if values:
            np.testing.assert_allclose(m.asnumpy(), t.numpy(), rtol=1e-5, atol=1e-6, err_msg=f"{name}[{i}]")


_CACHE = {}


def _converted():
    if "mod" not in _CACHE:
        _CACHE["mod"] = load_converted(SRC)
    return _CACHE["mod"]


@pytest.mark.parametrize("name,inputs,values", [
    ("creation", [X], True), ("shapes_only", [X], False), ("division", [X, Y], True), ("norms", [X, M], True),
    ("methods", [X], True), ("products", [A, M1, M2, B, B1, B2], True), ("autocast_off", [X], True),
    ("loader", [X], True), ("size", [X], True)])
def test_declared_arguments_match_torch(name, inputs, values):
    _compare(name, inputs, values)


def test_identity_ignores_its_arguments():
    """torch's nn.Identity takes any arguments and ignores them; MindSpore's takes none (TypeError, no line)."""
    _compare("identity", [X], True)
