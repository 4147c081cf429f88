"""torch.nn.Module's own dictionaries, read by name in real code (issue 12): Beta-VAE's weight_init walks
`self._modules` (block name -> Sequential) and initialises each layer; `self._parameters` holds a module's own
Parameters. Left as written, MindSpore's Cell has neither (AttributeError when the model is built); they are the
Cell's `_cells` and `_params`, the same ordered name -> object dictionaries. The converted model is built and
compared with torch's from the same state: the walk reached every layer (the initialisation is constant, so the
weights agree), and the forward agrees."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .parity import harness as H  # noqa: E402

SRC = '''
import torch
import torch.nn as nn


def constant_init(m, v):
    if isinstance(m, (nn.Linear, nn.Conv2d)):
        nn.init.constant_(m.weight, v)
        if m.bias is not None:
            m.bias.data.fill_(0.1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten())
        self.decoder = nn.Sequential(nn.Linear(8, 4), nn.Tanh(), nn.Linear(4, 2))
        self.scale = nn.Parameter(torch.ones(2) * 0.5)
        for i, block in enumerate(self._modules):
            for m in self._modules[block]:
                constant_init(m, 0.05 * (i + 1))
        self.own = sorted(self._parameters)

    def forward(self, x):
        return self.decoder(self.encoder(x)) * self.scale


net = Net()
x = torch.linspace(-1, 1, 16).reshape(1, 1, 4, 4)
out = net(x)
names = list(net._modules)
own = net.own
'''


def test_modules_and_parameters_by_name():
    code, sites = H.convert_snippet(SRC)
    H.no_todo(sites)
    assert "self._cells" in code and "self._params" in code and "net._cells" in code, code
    mod, _, _ = H.load_converted(SRC)
    want = H.load_torch(SRC)
    assert mod.names == want["names"] == ["encoder", "decoder"]
    assert mod.own == want["own"] == ["scale"]
    H.assert_close(mod.out, want["out"].detach(), rtol=1e-5, atol=1e-6, what="forward")
    # every layer was reached: the constants of each block, not MindSpore's random initialisation
    dense = [p for n, p in mod.net.parameters_and_names() if n.startswith("decoder") and n.endswith("weight")]
    assert dense and all(np.allclose(p.asnumpy(), 0.1) for p in dense)


PLAIN = '''
import types
import torch.nn as nn


class LazyModule(types.ModuleType):
    def __init__(self, name, keys):
        super().__init__(name)
        self._modules = set()
        self._parameters = {"n": len(keys)}
        for k in keys:
            self._modules = self._modules.union({k})
        self.count = self._parameters["n"]

    def __getattr__(self, name):
        if name in self._modules:
            return name.upper()
        raise AttributeError(name)


lazy = LazyModule("lazy", ["a", "b"])
value = lazy.a
count = lazy.count
layer = nn.Linear(2, 2)
'''


def test_a_plain_class_keeps_its_own_modules_attribute():
    """A class that is no torch Module, with attributes of its own named `_modules` / `_parameters`
    (transformers' `_LazyModule(ModuleType)`: `self._modules = self._modules.union(...)`): rewritten to the
    Cell's names, `self._cells` was read where only `self._modules` was set, and its `__getattr__` recursed
    without end (RecursionError importing the converted transformers)."""
    code, sites = H.convert_snippet(PLAIN)
    assert "_cells" not in code and "_params" not in code, code
    mod, _, _ = H.load_converted(PLAIN)
    want = H.load_torch(PLAIN)
    assert mod.value == want["value"] == "A" and mod.count == want["count"] == 2
