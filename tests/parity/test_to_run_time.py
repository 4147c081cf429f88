"""`x.to(arg)` / `model.to(arg)` where the converter cannot tell a device from a dtype or a tensor
(`x.to(dist_util.dev())`, `model.to(get_dtype())`): decided at run time by _ms_compat.to_value, as torch
decides (these were TODOs); `model.to(torch.float64)` casts the floating parameters (_ms_compat.module_cast).
Values and dtypes against torch."""
from __future__ import annotations

import numpy as np

from tests.parity.harness import assert_close, load_converted, load_torch

SRC = '''
import torch
from torch import nn


def device_of():
    return torch.device("cpu")


def wide():
    return torch.float64


def tensors(x, idx):
    return x.to(device_of()), x.to(wide()), x.to(device_of(), wide()), x.to(idx), x.to(device_of()).to(x)


def model(x):
    m = nn.Linear(3, 2)
    nn.init.constant_(m.weight, 0.3)
    nn.init.constant_(m.bias, -0.125)
    m.to(device_of())
    m.to(wide())
    return m(x.to(wide())), m.weight


def model_known(x):
    m = nn.Linear(3, 2)
    nn.init.constant_(m.weight, 0.7)
    nn.init.zeros_(m.bias)
    m = m.to(torch.float64)
    return m(x.double())
'''


def _dtypes(values):
    return [str(v.dtype).replace("torch.", "").lower() for v in values]


def test_to_decided_at_run_time():
    import torch
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    idx = np.array([1, 2], np.int64)
    ns = load_torch(SRC)
    mod, code, sites = load_converted(SRC)
    assert "msmigrate: TODO" not in code, code
    assert code.count("_ms_compat.to_value(") == 6 and "_ms_compat.module_cast(m, ms.float64)" in code, code
    import mindspore as ms
    for entry, args in (("tensors", (x, idx)), ("model", (x,)), ("model_known", (x,))):
        t_out = ns[entry](*(torch.from_numpy(a) for a in args))
        m_out = getattr(mod, entry)(*(ms.Tensor(a) for a in args))
        assert_close(list(m_out), list(t_out), what=entry)
        assert _dtypes(m_out) == _dtypes(t_out), (entry, _dtypes(m_out), _dtypes(t_out))


def test_to_refuses_what_torch_refuses():
    import pytest
    mod, code, _ = load_converted(SRC)
    import mindspore as ms
    helper = __import__("_ms_compat")
    with pytest.raises(TypeError):
        helper.to_value(ms.Tensor(np.ones(2, np.float32)), [1, 2])
