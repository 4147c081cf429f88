"""torch's conv layers on one unbatched sample, (C, *spatial): the converted layer (_ms_compat.any_batch.<layer>,
where the input is not provably batched: msmigrate/batched_convs.py) computes torch's values and input gradient,
in PyNative and GRAPH mode; batched inputs still match; the native layer stays where a BatchNorm proves the input
batched."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .harness import _to_ms, assert_close, load_converted, load_torch, rnd  # noqa: E402

CASES = [
    # (layer expression, unbatched input shape, any_batch class)
    ("nn.Conv1d(4, 5, 3)", (4, 9), "Conv1d"),
    ("nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2)", (4, 9), "Conv1d"),
    ("nn.Conv2d(4, 5, 3)", (4, 7, 6), "Conv2d"),
    ("nn.Conv2d(4, 5, (3, 2), padding='same', bias=False)", (4, 7, 6), "Conv2d"),
    ("nn.Conv3d(2, 3, 3, padding=1)", (2, 4, 5, 5), "Conv3d"),
    ("nn.ConvTranspose1d(4, 5, 3, stride=2)", (4, 6), "Conv1dTranspose"),
    ("nn.ConvTranspose2d(4, 5, 3)", (4, 5, 5), "Conv2dTranspose"),
    ("nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1)", (4, 5, 5), "Conv2dTranspose"),
    ("nn.ConvTranspose3d(2, 3, 3, stride=2, padding=1)", (2, 3, 4, 4), "Conv3dTranspose"),
]


def _src(expr):
    return f"import torch\nimport torch.nn as nn\n\n\ndef make():\n    return {expr}\n"


def _torch_value_and_grad(net, x, w):
    import torch
    xt = torch.tensor(x, requires_grad=True)
    out = net(xt)
    (out * torch.tensor(w)).sum().backward()
    return out.detach().numpy(), xt.grad.numpy()


def _ms_value_and_grad(net, x, w):
    import mindspore as ms

    def objective(xm):
        out = net(xm)
        return (out * ms.Tensor(w)).sum(), out
    (_, out), grad = ms.value_and_grad(objective, 0, None, has_aux=True)(_to_ms(x))
    return out, grad


def _pair(src, entry="make"):
    """The torch layer and its converted Cell with torch's weights; the converted code."""
    import torch
    from msmigrate.weights import load_torch_state_dict
    torch.manual_seed(0)
    tnet = load_torch(src)[entry]()
    mod, code, _ = load_converted(src)
    mnet = getattr(mod, entry)()
    load_torch_state_dict(mnet, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
    tnet.eval()
    mnet.set_train(False)
    return tnet, mnet, code


@pytest.mark.parametrize("graph", [False, True], ids=["pynative", "graph"])
@pytest.mark.parametrize("expr,shape,ms_name", CASES, ids=[c[0] for c in CASES])
def test_unbatched_values_and_input_gradient(expr, shape, ms_name, graph):
    import mindspore as ms
    import torch
    tnet, mnet, code = _pair(_src(expr))
    assert f"_ms_compat.any_batch.{ms_name}(" in code, code
    x = rnd(*shape, seed=1)
    for sample in (x, x[None]):      # unbatched, and the same sample as a batch of one
        w = rnd(*tnet(torch.tensor(sample)).shape, seed=2)
        t_out, t_grad = _torch_value_and_grad(tnet, sample, w)
        if graph:
            ms.set_context(mode=ms.GRAPH_MODE)
        try:
            m_out, m_grad = _ms_value_and_grad(mnet, sample, w)
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE)
        assert m_out.shape == t_out.shape, (m_out.shape, t_out.shape)
        assert_close(m_out, t_out, 1e-4, 1e-4)
        assert_close(m_grad, t_grad, 1e-4, 1e-4, "input gradient")


ADAPTER_SRC = """
import torch.nn as nn


def make(conv_layer=nn.Conv2d):
    return conv_layer(4, 5, 3, padding=1)
"""


def test_class_as_value_takes_unbatched_input():
    """nn.Conv2d passed as a value becomes _ms_compat.Conv2d (torch's arguments), which takes a (C, H, W) too."""
    tnet, mnet, code = _pair(ADAPTER_SRC)
    assert "_ms_compat.Conv2d" in code, code
    x = rnd(4, 6, 6, seed=3)
    w = rnd(5, 6, 6, seed=4)
    t_out, t_grad = _torch_value_and_grad(tnet, x, w)
    m_out, m_grad = _ms_value_and_grad(mnet, x, w)
    assert_close(m_out, t_out, 1e-4, 1e-4)
    assert_close(m_grad, t_grad, 1e-4, 1e-4, "input gradient")


PROVEN_SRC = """
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4),
                                  nn.Conv2d(4, 4, 3), nn.Tanh())
        self.head = nn.Sequential(nn.Conv2d(4, 4, 1), nn.Flatten(), nn.BatchNorm1d(4 * 2 * 2))
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(4)
        self.conv3 = nn.Conv2d(4, 4, 3, padding=1)
        self.conv4 = nn.Conv1d(4, 4, 1)
        self.bn4 = nn.BatchNorm1d(4)

    def forward(self, x):
        x = self.stem(x)
        x = F.relu(self.bn1(self.conv1(x)))
        h = self.conv2(x)
        x = self.bn2(h)
        x = self.conv3(x) + self.conv3(self.bn2(x))
        y = self.bn4(self.conv4(x.flatten(2)))
        return self.head(x), y


def make():
    return Net()
"""


def test_native_layer_where_a_batch_norm_proves_the_input_batched():
    """Sequential neighbours (through rank-keeping layers) and `self.bn(self.conv(x))` / `h = self.conv(x);
    x = self.bn(h)` keep MindSpore's own layer; a use with no BatchNorm next to it (conv3's first), a 1-d conv
    (BatchNorm1d also takes an unbatched conv's (C, L)), and a Sequential whose BatchNorm lies past a Flatten
    take the helper. The model computes torch's values and input gradient."""
    tnet, mnet, code = _pair(PROVEN_SRC)
    stem = code.split("self.stem = ", 1)[1].split("self.head = ", 1)[0]
    assert stem.count("nn.Conv2d(") == 3 and "any_batch" not in stem, code
    assert "self.conv1 = nn.Conv2d(" in code and "self.conv2 = nn.Conv2d(" in code, code
    assert "self.conv3 = _ms_compat.any_batch.Conv2d(" in code, code
    assert "self.conv4 = _ms_compat.any_batch.Conv1d(" in code, code
    assert "nn.SequentialCell(_ms_compat.any_batch.Conv2d(4, 4, 1" in code, code
    x = rnd(2, 3, 4, 4, seed=5)
    import torch
    t_out = tnet(torch.tensor(x))
    w = [rnd(*o.shape, seed=6 + i) for i, o in enumerate(t_out)]

    xt = torch.tensor(x, requires_grad=True)
    sum((o * torch.tensor(wi)).sum() for o, wi in zip(tnet(xt), w)).backward()
    import mindspore as ms

    def objective(xm):
        outs = mnet(xm)
        return sum((o * ms.Tensor(wi)).sum() for o, wi in zip(outs, w)), outs
    (_, m_out), m_grad = ms.value_and_grad(objective, 0, None, has_aux=True)(_to_ms(x))
    assert_close(list(m_out), [o.detach().numpy() for o in t_out], 1e-4, 1e-4)
    assert_close(m_grad, xt.grad.numpy(), 1e-4, 1e-4, "input gradient")


def test_conv_dtype_float64_is_refused():
    """MindSpore has no float64 convolution kernel: a float64 layer is a TODO naming why, not a float32 one."""
    _, code, sites = load_converted("import torch\nimport torch.nn as nn\n\n\ndef make():\n"
                                    "    return nn.Conv2d(3, 4, 3, dtype=torch.float64)\n")
    conv = [s for s in sites if s.api == "torch.nn.Conv2d"]
    assert conv and conv[0].status == TODO and "float64" in conv[0].note, [(s.api, s.status, s.note) for s in sites]
    assert "msmigrate: TODO" in code, code
