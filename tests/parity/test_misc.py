"""Constants, predicates and torch's small argument helpers."""
import math

import numpy as np

from tests.parity.harness import check_function, load_converted, load_torch


def _statuses(sites):
    return {s.api: s.status for s in sites}


def test_constants():
    src = '''
import torch
def fn(x: torch.Tensor):
    return x * torch.pi + torch.e, torch.isinf(x * torch.inf), x * 0 + 1
'''
    x = np.array([0.5, -1.0, 2.0], np.float32)
    code, sites = check_function(src, [x])
    assert "math.pi" in code and "import math" in code
    st = _statuses(sites)
    assert st["torch.pi"] == st["torch.e"] == st["torch.inf"] == "converted"
    mod, code, sites = load_converted("import torch\nN = torch.nan\n")
    assert math.isnan(mod.N)


def test_predicates():
    src = '''
import torch
def fn(x, i):
    torch._check(x.shape[0] == 3, lambda: "three")
    return torch.is_floating_point(x), torch.is_floating_point(i), torch.is_tensor(x), torch.is_tensor(3)
'''
    x = np.ones(3, np.float32)
    i = np.ones(3, np.int64)
    t = load_torch(src)["fn"]
    mod, code, sites = load_converted(src)
    import mindspore as ms
    import torch
    assert mod.fn(ms.Tensor(x), ms.Tensor(i)) == t(torch.from_numpy(x), torch.from_numpy(i)) == (True, False, True, False)
    st = _statuses(sites)
    assert st["torch._check"] == "converted-with-difference" and "_check" not in code.split("def fn")[1]


def test_ntuple():
    src = '''
from torch.nn.modules.utils import _pair, _single, _triple, _quadruple, _ntuple
def fn():
    return _pair(3), _pair((1, 2)), _single(4), _triple(1), _quadruple(0), _ntuple(5, "x")(2)
'''
    t = load_torch(src)["fn"]()
    mod, code, sites = load_converted(src)
    assert mod.fn() == t
    assert all(s.status == "converted" for s in sites), sites


BUFFER_SRC = '''
import torch
import torch.nn as nn


class Rope(nn.Module):
    def __init__(self):
        super().__init__()
        inv = 1.0 / (10000 ** (torch.arange(0, 8, 2, dtype=torch.float) / 8))
        self.inv_freq = nn.Buffer(inv, persistent=False)
        self.scale = nn.Buffer(torch.ones(4) * 2)

    def forward(self, pos):
        return pos[..., None].float() * self.inv_freq.to(device=pos.device, dtype=torch.float32) * self.scale


def make():
    return Rope()
'''


def test_buffer_class():
    """torch.nn.Buffer (torch >= 2.5): persistent ones are checkpointed, others are not."""
    from tests.parity.harness import check_layer
    pos = np.arange(6, dtype=np.int64).reshape(2, 3)
    code, sites = check_layer(BUFFER_SRC, [pos])
    st = _statuses(sites)
    assert st["torch.nn.Buffer"] == "converted" and "Tensor.to" in st
    mod, _, _ = load_converted(BUFFER_SRC)
    names = [p.name for p in mod.make().get_parameters()]
    assert names == ["scale"], names
