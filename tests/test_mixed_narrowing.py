"""isinstance() narrowing over layers that MindSpore's parameter names split (msmigrate/mixed_narrowing.py):
`if isinstance(m, (nn.BatchNorm2d, nn.Linear)): nn.init.zeros_(m.bias)` reached BatchNorm's `bias`, which
MindSpore names `beta` (AttributeError at run time). The converted init must set what torch's sets."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .parity.harness import assert_close, load_converted, load_torch, no_todo  # noqa: E402

MIXED_INIT = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3)
        self.bn = nn.BatchNorm2d(3)
        self.fc = nn.Linear(3, 2)
        self.ln = nn.LayerNorm(2)
        for m in self.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.Linear)):
                nn.init.constant_(m.bias, 0.25)
                m.weight.data.fill_(0.5)
            elif isinstance(m, (nn.Conv2d, nn.LayerNorm)):
                nn.init.constant_(m.weight, 0.1)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, (nn.LayerNorm, nn.Linear)):
                    m.bias += 1.5
                    m.weight = nn.Parameter(torch.full_like(m.weight, 2.0) * m.weight)

    def forward(self, x):
        return self.ln(self.fc(self.bn(self.conv(x)).mean((2, 3))))


def make():
    return Net()
"""

# torch's (weight, bias) of each layer, by MindSpore's names
MS_NAMES = {"conv": ("weight", "bias"), "bn": ("gamma", "beta"), "fc": ("weight", "bias"), "ln": ("gamma", "beta")}


def test_parameters_named_per_class_under_a_mixed_isinstance():
    mod, code, sites = load_converted(MIXED_INIT)
    no_todo(sites)
    assert "hasattr(m, 'beta')" in code, code
    t_net, m_net = load_torch(MIXED_INIT)["make"](), mod.make()
    for layer, (w, b) in MS_NAMES.items():
        t_layer, m_layer = getattr(t_net, layer), getattr(m_net, layer)
        np.testing.assert_allclose(getattr(m_layer, w).asnumpy(), t_layer.weight.detach().numpy(), err_msg=layer)
        np.testing.assert_allclose(getattr(m_layer, b).asnumpy(), t_layer.bias.detach().numpy(), err_msg=layer)
    # and the model computes with them (the parameter set by assignment is the one construct reads)
    x = np.random.default_rng(0).standard_normal((4, 2, 5, 5)).astype(np.float32)
    import mindspore as ms
    import torch

    assert_close(m_net(ms.Tensor(x)), t_net(torch.from_numpy(x)), rtol=1e-5, atol=1e-5)

