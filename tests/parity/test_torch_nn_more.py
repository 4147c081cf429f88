"""Parity of the parameter-free torch.nn layers of msmigrate/mappings/torch_nn_more.py: one converted snippet
builds every layer; each runs in torch and converted on the same input (PyNative, and ms.jit on a few)."""
from __future__ import annotations

import numpy as np

from msmigrate.registry import TODO, all_mappings
from tests.parity.harness import assert_close, load_converted, load_torch

RNG = np.random.default_rng(0)
IMG = (RNG.standard_normal((2, 4, 3, 5)) * 2).astype(np.float32)
VOL = RNG.standard_normal((1, 2, 3, 4, 3)).astype(np.float32)
SEQ = RNG.standard_normal((2, 3, 6)).astype(np.float32)
# (layer expression, input); the torch.nn names each proves are read from the expression
LAYERS = [
    ("nn.CELU()", IMG), ("nn.CELU(0.5, inplace=True)", IMG), ("nn.SELU()", IMG), ("nn.SELU(True)", IMG),
    ("nn.Softshrink()", IMG), ("nn.Softshrink(1.0)", IMG), ("nn.Hardshrink()", IMG), ("nn.Hardshrink(lambd=0.2)", IMG),
    ("nn.Threshold(0.1, 20.0)", IMG), ("nn.Threshold(threshold=-0.5, value=0.0, inplace=True)", IMG),
    ("nn.Softmin(dim=1)", IMG), ("nn.Softmin(-1)", SEQ), ("nn.Softmin()", IMG), ("nn.Softmin()", SEQ),
    ("nn.Softmin(dim=None)", SEQ[0]), ("nn.Softmax2d()", IMG), ("nn.GLU()", SEQ),
    ("nn.GLU(dim=1)", IMG), ("nn.PixelShuffle(2)", IMG), ("nn.PixelUnshuffle(downscale_factor=1)", IMG),
    ("nn.Unflatten(2, (2, 3))", SEQ), ("nn.Unflatten(dim=1, unflattened_size=[2, 2])", IMG),
    ("nn.ChannelShuffle(2)", IMG), ("nn.ZeroPad1d(2)", SEQ), ("nn.ZeroPad1d((1, 3))", SEQ), ("nn.ZeroPad3d(1)", VOL),
    ("nn.ZeroPad3d((1, 0, 2, 0, 0, 1))", VOL), ("nn.ReflectionPad3d(1)", VOL), ("nn.ReflectionPad3d((1, 2, 0, 1, 1, 0))", VOL),
    ("nn.ReplicationPad3d(2)", VOL), ("nn.ReplicationPad3d((0, 1, 1, 0, 2, 1))", VOL),
    ("nn.UpsamplingNearest2d(scale_factor=2)", IMG), ("nn.UpsamplingNearest2d(size=(4, 7))", IMG), ("nn.UpsamplingNearest2d(6)", IMG),
    ("nn.UpsamplingNearest2d(scale_factor=(2, 3))", IMG), ("nn.LPPool1d(2, 3)", SEQ), ("nn.LPPool1d(1, 2, stride=1)", SEQ),
    ("nn.LPPool2d(2, 2)", IMG * IMG), ("nn.LPPool2d(norm_type=3, kernel_size=(2, 3), stride=1, ceil_mode=False)", IMG * IMG),
]
X4 = RNG.standard_normal((3, 4)).astype(np.float32)
H5 = RNG.standard_normal((3, 5)).astype(np.float32)
C5 = RNG.standard_normal((3, 5)).astype(np.float32)
# layers called with several arguments (weights copied from torch by name)
LAYERS += [
    ("nn.RNNCell(4, 5)", (X4, H5)), ("nn.RNNCell(4, 5, bias=False, nonlinearity='relu')", (X4, H5)),
    ("nn.LSTMCell(4, 5)", (X4, (H5, C5))), ("nn.GRUCell(4, 5, False)", (X4, H5)), ("nn.GRUCell(4, 5)", (X4, H5)),
    # torch's zero state when hx is left out, and an unbatched input (features,) with its state (hidden,)
    ("nn.RNNCell(4, 5)", (X4,)), ("nn.LSTMCell(4, 5)", (X4,)), ("nn.GRUCell(4, 5)", (X4[0],)),
    ("nn.RNNCell(4, 5, nonlinearity='relu')", (X4[0], H5[0])), ("nn.LSTMCell(4, 5)", (X4[0], (H5[0], C5[0]))),
]
# hx omitted (torch starts from zeros) and unbatched 1-D inputs, compiled too
CELLS_AS_TORCH_CALLS = len(LAYERS)
LAYERS += [
    ("nn.RNNCell(4, 5)", (X4,)), ("nn.LSTMCell(4, 5)", (X4,)), ("nn.GRUCell(4, 5)", (X4,)),
    ("nn.RNNCell(4, 5, nonlinearity='relu')", (X4[0],)), ("nn.LSTMCell(4, 5, bias=False)", (X4[0],)),
    ("nn.GRUCell(4, 5)", (X4[0], H5[0])), ("nn.LSTMCell(4, 5)", (X4[0], (H5[0], C5[0]))),
]
GRAPH = (0, 10, 15, 22, 29, 41, 44) + tuple(range(CELLS_AS_TORCH_CALLS, len(LAYERS)))
T = "tests/parity/test_torch_nn_more.py::"


def _source() -> str:
    lines = ["import torch", "import torch.nn as nn", ""]
    for i, (expr, _) in enumerate(LAYERS):
        lines += [f"def make_{i}():", f"    return {expr}", ""]
    return "\n".join(lines)


def test_layers():
    import mindspore as ms
    import torch

    src = _source()
    tns = load_torch(src)
    mod, code, sites = load_converted(src)
    todo = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todo, todo
    failures = []
    from msmigrate.weights import load_torch_state_dict

    def as_args(x, tensor):
        if isinstance(x, tuple):
            return tuple(as_args(a, tensor) for a in x)
        return tensor(x.copy())

    for i, (expr, x) in enumerate(LAYERS):
        try:
            torch.manual_seed(0)
            tnet = tns[f"make_{i}"]().eval()
            t_args = as_args(x, torch.from_numpy) if isinstance(x, tuple) else (torch.from_numpy(x.copy()),)
            want = tnet(*t_args)
            net = getattr(mod, f"make_{i}")()
            load_torch_state_dict(net, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
            net.set_train(False)
            m_args = as_args(x, ms.Tensor) if isinstance(x, tuple) else (ms.Tensor(x.copy()),)
            assert_close(net(*m_args), want, 1e-5, 1e-5, expr)
            if i in GRAPH:
                assert_close(ms.jit(net.construct)(*m_args), want, 1e-5, 1e-5, expr + " graph")
        except Exception as exc:   # report every failing layer at once
            failures.append(f"{expr}: {type(exc).__name__}: {str(exc)[:300]}")
    assert not failures, "\n".join(failures)


def test_every_layer_record_has_a_case():
    cased = {"torch.nn." + expr.split("(")[0].split(".")[1] for expr, _ in LAYERS}
    mine = {m.source for m in all_mappings() if m.test == T + "test_layers"}
    assert mine and mine <= cased, sorted(mine - cased)



def test_selu_input_gradient():
    """nn.SELU's input gradient, negative inputs and 0 included (MindSpore 2.10's nn.SeLU gets it wrong there),
    PyNative and GRAPH."""
    import mindspore as ms
    import torch
    x = np.array([[-3.0, -1.0, -0.25, 0.0, 0.5, 2.0]], np.float32)
    src = "import torch.nn as nn\ndef make():\n    return nn.SELU()\n"
    t = torch.from_numpy(x.copy()).requires_grad_(True)
    load_torch(src)["make"]()(t).sum().backward()
    net = load_converted(src)[0].make()

    def total(v):
        return net(v).sum()
    grad = ms.grad(total)
    assert_close(grad(ms.Tensor(x)), t.grad, 1e-5, 1e-6, "pynative")
    assert_close(ms.jit(grad)(ms.Tensor(x)), t.grad, 1e-5, 1e-6, "graph")


DOUBLE_LSTM = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(4, 5)

    def forward(self, x, h, c):
        h, c = self.cell(x, (h, c))
        return self.cell(x, (h, c))


def make():
    torch.manual_seed(0)
    net = Net()
    net.double()
    return net
"""


def test_lstm_cell_in_float64():
    """A model made .double() (time_sequence_prediction) runs its LSTMCell in float64, where MindSpore's own
    cell takes float16/float32 only: values and gradients as torch's (PyNative and compiled)."""
    import mindspore as ms
    import torch
    from msmigrate.weights import load_torch_state_dict

    tnet = load_torch(DOUBLE_LSTM)["make"]()
    mod, code, sites = load_converted(DOUBLE_LSTM)
    assert not [(s.api, s.note) for s in sites if s.status == TODO], code
    net = mod.make()
    load_torch_state_dict(net, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
    args = [a.astype(np.float64) for a in (X4, H5, C5)]
    t_args = [torch.from_numpy(a.copy()).requires_grad_() for a in args]
    want = tnet(*t_args)
    sum(w.sum() for w in want).backward()
    m_args = [ms.Tensor(a) for a in args]
    got = net(*m_args)
    assert got[0].dtype == ms.float64
    assert_close(got, want, 1e-12, 1e-12, "LSTMCell float64")
    assert_close(ms.jit(net.construct)(*m_args), want, 1e-12, 1e-12, "LSTMCell float64 graph")
    grads = ms.grad(lambda *a: sum(o.sum() for o in net(*a)), grad_position=(0, 1, 2))(*m_args)
    assert_close(grads, [a.grad for a in t_args], 1e-12, 1e-12, "LSTMCell float64 gradients")
