"""Idioms of model libraries (timm-style code written here, not copied): factory arguments passed as a
dict (`torch.zeros(n, **dd)`), and a BatchNorm2d subclass that computes batch norm in a forward of its
own from torch's parameter names (running_mean, running_var, weight, bias), and a layer's parameters
changed in place through `.data` (`module.weight.data.mul_(s)`, an init function's head scaling), and
Module methods called on `self` in a mixin class that Modules derive from (transformers' mixins)."""
from __future__ import annotations

import pytest

import numpy as np

from tests.parity.harness import check_layer, load_converted, load_torch, rnd

pytest.importorskip("torch")
pytest.importorskip("mindspore")

SRC = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class NormAct(nn.BatchNorm2d):
    def __init__(self, c, device=None, dtype=None):
        dd = {"device": device, "dtype": dtype}
        super().__init__(c, eps=1e-3)
        self.scale = nn.Parameter(torch.ones(1, c, 1, 1, **dd) * 0.5)
        self.register_buffer("shift", torch.zeros((1, c, 1, 1), **dd) + 0.25)
        self.token = nn.Parameter(torch.empty(1, c, **dd).fill_(0.1))

    def forward(self, x):
        x = F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, False, 0.1, self.eps)
        return torch.relu(x) * self.scale + self.shift + self.token.sum()


def make():
    return NormAct(3)


class PlanMixin:
    def child_names(self):
        return [name for name, _ in self.named_children()]


class Stack(nn.Module, PlanMixin):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 3)
        self.b = nn.ReLU()


def head_init(module, scale):
    if isinstance(module, nn.Linear):
        module.weight.data.mul_(scale)
        module.bias.data.add_(1.0)


def make_head():
    return nn.Linear(3, 2)


def fans(shape):
    return nn.init._calculate_fan_in_and_fan_out(torch.zeros(shape))


def optional_mask(mask: torch.FloatTensor | None = None) -> None | torch.LongTensor:
    return mask


def wrong_key():
    return torch.zeros(2, **{"out": None})
'''


def test_library_idioms():
    _, sites = check_layer(SRC, [rnd(2, 3, 4, 4)], graph=False)
    assert not [s for s in sites if s.status == "todo"], sites
    mod, code, _ = load_converted(SRC)
    assert "_ms_compat.factory_kwargs(dd" in code, code
    from mindspore import float16
    import _ms_compat   # noqa: F401  (put on the path by load_converted)
    assert mod.NormAct(2, dtype=float16).scale.dtype == float16
    with pytest.raises(Exception, match="out= of a torch tensor factory"):
        mod.wrong_key()
    assert mod.optional_mask() is None   # `torch.FloatTensor | None` evaluated when the def runs
    for shape in ((3, 5), (4, 2, 3, 3), (6, 2, 5)):
        assert mod.fans(shape) == load_torch(SRC)["fans"](shape)


def test_parameter_data_changed_in_place():
    import torch
    from msmigrate.weights import load_torch_state_dict
    mod, code, sites = load_converted(SRC)
    assert "ms.ops.assign(module.weight, module.weight * (scale))" in code, code
    assert not [s for s in sites if s.status == "todo"], sites
    torch.manual_seed(0)
    tlin = load_torch(SRC)["make_head"]()
    mlin = mod.make_head()
    load_torch_state_dict(mlin, {k: v.detach().numpy() for k, v in tlin.state_dict().items()})
    load_torch(SRC)["head_init"](tlin, 0.5)
    mod.head_init(mlin, 0.5)
    np.testing.assert_allclose(mlin.weight.asnumpy(), tlin.weight.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(mlin.bias.asnumpy(), tlin.bias.detach().numpy(), rtol=1e-6)


def test_module_methods_in_a_mixin(tmp_path):
    mod, code, _ = load_converted(SRC)
    assert mod.Stack().child_names() == load_torch(SRC)["Stack"]().child_names() == ["a", "b"]
    # the mixin in a file of its own, which names no torch API: converted too
    from msmigrate.converter import convert_tree
    from tests.treeutil import write_tree
    write_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/mixin.py": PLAN_MIXIN, "pkg/model.py": MODEL})
    convert_tree(tmp_path / "src", tmp_path / "out", jobs=1)
    assert "_ms_compat.named_children(self)" in (tmp_path / "out" / "pkg" / "mixin.py").read_text()


PLAN_MIXIN = """
class PlanMixin:
    def child_names(self):
        return [name for name, _ in self.named_children()]
"""
MODEL = """
import torch.nn as nn
from .mixin import PlanMixin


class Net(nn.Module, PlanMixin):
    pass
"""
