"""`dist.rsample()` in a forward compiled as a graph (GRAPH mode, ms.jit, msmigrate verify's GRAPH run).
MindSpore 2.10 runs a distribution object built in a graph through its Python fallback: Normal's sample came out
with a zero gradient (the weights below it never moved: a silent lost gradient), and Gamma's refusal (no
reparameterised gamma sampler) arrived as MindSpore's RuntimeError when the graph ran. rsample_at now stops the
compilation with MigrationError naming the original line (compat_parts/distributions.py); PyNative runs as
before (tests/parity/test_distributions*.py)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import load_converted  # noqa: E402

SRC = '''
import torch
from torch import nn
from torch.distributions import Normal, Gamma


class NormalNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        d = Normal(self.fc(x), torch.ones_like(x))
        return d.rsample()


class GammaNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        d = Gamma(self.fc(x).exp(), torch.ones_like(x))
        return d.rsample()
'''
LINES = [i + 1 for i, line in enumerate(SRC.splitlines()) if line.strip() == "return d.rsample()"]


@pytest.mark.parametrize("mode", ["jit", "graph_mode"])
@pytest.mark.parametrize("cls, line", [("NormalNet", LINES[0]), ("GammaNet", LINES[1])])
def test_rsample_in_a_compiled_forward_raises_migration_error_naming_the_line(cls, line, mode):
    mod, _, _ = load_converted(SRC)
    net = getattr(mod, cls)()
    x = ms.Tensor(np.ones((2, 4), np.float32))
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph_mode" else ms.PYNATIVE_MODE)
    try:
        with pytest.raises(Exception) as err:
            (ms.jit(net) if mode == "jit" else net)(x)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert type(err.value).__name__ == "MigrationError", err.value
    assert f"rsample at __main__:{line} inside a compiled graph" in str(err.value), err.value


def test_rsample_in_pynative_keeps_its_gradient():
    mod, _, _ = load_converted(SRC)
    net = mod.NormalNet()
    x = ms.Tensor(np.ones((2, 4), np.float32))
    _, grads = ms.value_and_grad(lambda x: net(x).sum(), None, net.trainable_params())(x)
    np.testing.assert_allclose(grads[1].asnumpy(), np.full(4, 2.0, np.float32))   # d sum(fc(x) + eps)/d bias
