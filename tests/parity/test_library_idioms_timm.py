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
        self.lab = nn.Parameter(torch.tensor([0.75], **dd))     # timm's hgnet LearnableAffineBlock
        self.register_buffer("steps", torch.tensor([1, 2, 3][:c], **dd))   # int64 when dd's dtype is None

    def forward(self, x):
        x = F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, False, 0.1, self.eps)
        return torch.relu(x) * self.scale + self.shift + self.token.sum() + self.lab * self.steps.sum()


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


def norm_name(norm_layer):
    """timm's get_norm_act_layer: a partial unwrapped once, then the class's name."""
    from functools import partial
    if isinstance(norm_layer, partial):
        norm_layer = norm_layer.func
    return norm_layer.__name__


def nested_partial():
    from functools import partial
    inner = partial(nn.LayerNorm, eps=1e-3)
    outer = partial(inner, elementwise_affine=False)
    layer = outer(4)
    return norm_name(outer), layer.eps, len(list(layer.parameters()))
'''


def test_library_idioms():
    _, sites = check_layer(SRC, [rnd(2, 3, 4, 4)], graph=False)
    assert not [s for s in sites if s.status == "todo"], sites
    mod, code, _ = load_converted(SRC)
    assert "_ms_compat.factory_kwargs(dd" in code and "_ms_compat.factory_dtype(dd" in code, code
    assert str(mod.make().steps.dtype) == "Int64"
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


PARTIAL_SRC = '''
import functools
import types
from functools import partial

import torch.nn as nn


def norm_act(norm_layer, act=True):
    # timm's get_norm_act_layer: a partial is asserted, unbound, and its keywords bound again
    assert isinstance(norm_layer, (type, str, types.FunctionType, functools.partial))
    kwargs = {}
    if isinstance(norm_layer, functools.partial):
        kwargs.update(norm_layer.keywords)
        norm_layer = norm_layer.func
    return partial(norm_layer, **kwargs)


def make():
    bn = norm_act(norm_act(nn.BatchNorm2d))
    return nn.Sequential(bn(3), nn.ReLU())
'''


def test_partial_is_a_functools_partial():
    """A partial made by converted code is a functools.partial (timm's EfficientNet/MobileNetV3 norm layers
    failed to build: AssertionError), and unbinding and binding it again builds the same layers."""
    _, sites = check_layer(PARTIAL_SRC, [rnd(2, 3, 4, 4)], graph=True)
    assert not [s for s in sites if s.status == "todo"], sites


NARROW_SRC = '''
import torch.nn as nn


def fan_out(m):
    # timm's _init_weight_goog: the layer's class narrowed by isinstance, its settings read
    if isinstance(m, nn.Conv2d):
        return m.kernel_size[0] * m.kernel_size[1] * m.out_channels // m.groups, m.weight.shape[1]
    if isinstance(m, nn.Conv1d):
        return m.kernel_size[0] * m.out_channels, m.weight.shape[2]
    if isinstance(m, nn.BatchNorm3d):
        return m.weight.shape[0], m.bias.shape[0]
    return None


def layers():
    return [nn.Conv2d(4, 6, (3, 5), groups=2), nn.Conv1d(2, 3, 7), nn.BatchNorm3d(5)]
'''


def test_isinstance_narrows_to_the_class_itself():
    """`isinstance(m, nn.Conv2d)` narrows m to Conv2d, not to the first class of its family (Conv1d, whose
    kernel_size reads [1:]: timm's EfficientNet/MobileNetV3 init failed with IndexError)."""
    mod, code, sites = load_converted(NARROW_SRC)
    assert not [s for s in sites if s.status == "todo"], sites
    want = load_torch(NARROW_SRC)
    got = [tuple(int(v) for v in mod.fan_out(m)) for m in mod.layers()]
    assert got == [tuple(int(v) for v in want["fan_out"](m)) for m in want["layers"]()] == [(45, 2), (21, 7), (5, 5)]


ALIAS_SRC = '''
import torch.nn as nn


class NormAct(nn.Module):
    def __init__(self, c, inplace=False):
        super().__init__()
        self.bn = nn.BatchNorm2d(c)
        self.act = nn.ReLU(inplace=inplace)

    def forward(self, x):
        return self.act(self.bn(x))


class Block(nn.Module):
    # timm's DepthwiseSeparableConv: the input kept as the shortcut, the norm+activation built with inplace=True
    # by a callable passed in, applied to the convolution's new tensor
    def __init__(self, norm_act_layer):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        self.bn1 = norm_act_layer(3, inplace=True)

    def forward(self, x):
        shortcut = x
        x = self.conv(x)
        x = self.bn1(x)
        return x + shortcut


def make():
    return Block(NormAct).eval()
'''


def test_alias_of_a_rebound_input_is_no_alias():
    """`shortcut = x; x = self.conv(x); x = self.bn1(x)`: the activation's input is the convolution's tensor, not
    the one `shortcut` holds (timm's EfficientNet/MobileNetV3 blocks stopped with MigrationError in forward)."""
    _, sites = check_layer(ALIAS_SRC, [rnd(2, 3, 4, 4)], graph=False, grad=True)
    assert not [s for s in sites if s.status == "todo"], sites


def test_alias_of_the_activated_tensor_still_refused():
    """Where `shortcut` may still hold the activated tensor (no rebinding between, or one in a branch only),
    the call stays a refusal."""
    from msmigrate.converter import convert_code
    for between in ("", "        if x.sum() > 0:\n            x = self.conv(x)\n"):
        src = ALIAS_SRC.replace("        x = self.conv(x)\n", between)
        code = convert_code(src)[0]
        assert "_ms_compat.Unconverted('argument changed in place'" in code, code


def test_partial_of_a_partial_is_flattened():
    """functools flattens partial(partial(f, a=1), b=2) to partial(f, a=1, b=2) (timm's dpn: get_norm_act_layer
    unwraps `.func` once and reads `__name__`); _ms_compat.partial, a subclass, did not: AttributeError."""
    mod, code, _ = load_converted(SRC)
    assert mod.nested_partial() == load_torch(SRC)["nested_partial"]() == ("LayerNorm", 1e-3, 0)
