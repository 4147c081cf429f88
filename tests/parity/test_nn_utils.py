"""torch.nn.utils: parameters_to_vector / vector_to_parameters, get_total_norm, fuse_*_bn_weights,
rnn.pad_sequence. torch and the converted program run on the same inputs (a network's weights copied
with msmigrate.weights); values must match. One converted snippet for the file."""
from __future__ import annotations

import numpy as np
import pytest

from msmigrate.registry import TODO
from tests.parity.harness import assert_close, load_converted, load_torch, rnd

SRC = '''
import torch
import torch.nn as nn
from torch.nn.utils import parameters_to_vector, vector_to_parameters
from torch.nn.utils.rnn import pad_sequence


def make():
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def flat(model):
    return parameters_to_vector(model.parameters())


def load_vector(model, vec, x):
    vector_to_parameters(vec, model.parameters())
    return model(x)


def total_norms(a, b, c):
    return (torch.nn.utils.get_total_norm([a, b, c]),
            torch.nn.utils.get_total_norm([a, b], norm_type=1),
            torch.nn.utils.get_total_norm([a, c], norm_type=float("inf")),
            torch.nn.utils.get_total_norm(tensors=b, norm_type=3.0, error_if_nonfinite=True))


def nonfinite(a):
    return torch.nn.utils.get_total_norm([a / 0.0], error_if_nonfinite=True)


def fuse_conv(w, b, rm, rv, g, beta):
    fw, fb = torch.nn.utils.fuse_conv_bn_weights(w, b, rm, rv, 1e-5, g, beta)
    nw, nb = torch.nn.utils.fuse_conv_bn_weights(w, None, rm, rv, 1e-3, g, beta)
    return fw, fb, nw, nb


def fuse_conv_t(w, b, rm, rv, g, beta):
    return torch.nn.utils.fuse_conv_bn_weights(w, b, rm, rv, 1e-5, g, beta, transpose=True)


def fuse_linear(w, b, rm, rv, g, beta):
    return torch.nn.utils.fuse_linear_bn_weights(w, b, rm, rv, 1e-5, g, beta)


def padded(a, b, c):
    return (pad_sequence([a, b, c]),
            pad_sequence([a, b, c], batch_first=True, padding_value=-1.0),
            pad_sequence(sequences=[b, a], batch_first=True, padding_side="left"))
'''


@pytest.fixture(scope="module")
def both():
    tns = load_torch(SRC)
    mod, code, sites = load_converted(SRC)
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, (todos, code)
    return tns, mod


def _t(a):
    import torch
    return torch.from_numpy(np.array(a))


def _m(a):
    import mindspore as ms
    return ms.Tensor(np.array(a))


def test_parameter_vectors(both):
    import torch
    from msmigrate.weights import load_torch_state_dict

    tns, mod = both
    torch.manual_seed(0)
    tnet, mnet = tns["make"](), mod.make()
    load_torch_state_dict(mnet, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
    t_vec = tns["flat"](tnet)
    m_vec = mod.flat(mnet)
    assert t_vec.shape == (3 * 4 + 4 + 4 * 2 + 2,)
    assert_close(m_vec, t_vec)
    new = rnd(t_vec.shape[0], seed=3)
    x = rnd(5, 3, seed=4)
    with torch.no_grad():
        want = tns["load_vector"](tnet, _t(new), _t(x))
    assert_close(mod.load_vector(mnet, _m(new), _m(x)), want)
    assert_close(mod.flat(mnet), _t(new))                        # the parameters hold the new values
    with pytest.raises(TypeError):
        mod.load_vector(mnet, new, _m(x))                        # torch refuses a non-tensor too


def test_total_norm(both):
    tns, mod = both
    a, b, c = rnd(3, 4, seed=1), rnd(5, seed=2), rnd(2, 2, 2, seed=3)
    assert_close(mod.total_norms(_m(a), _m(b), _m(c)), tns["total_norms"](_t(a), _t(b), _t(c)))
    with pytest.raises(RuntimeError):
        tns["nonfinite"](_t(a))
    with pytest.raises(RuntimeError, match="non-finite"):
        mod.nonfinite(_m(a))


def test_fuse_bn_weights(both):
    tns, mod = both
    rv = np.abs(rnd(4, seed=5)) + 0.5
    conv = [rnd(4, 3, 3, 3, seed=6), rnd(4, seed=7), rnd(4, seed=8), rv, rnd(4, seed=9), rnd(4, seed=10)]
    want = tns["fuse_conv"](*map(_t, conv))
    got = mod.fuse_conv(*map(_m, conv))
    import mindspore as ms
    assert all(isinstance(p, ms.Parameter) for p in got)
    assert_close(got, want, rtol=1e-5, atol=1e-6)
    conv_t = [rnd(3, 4, 3, 3, seed=11)] + conv[1:]                 # ConvTranspose: (in, out, k, k)
    assert_close(mod.fuse_conv_t(*map(_m, conv_t)), tns["fuse_conv_t"](*map(_t, conv_t)), rtol=1e-5, atol=1e-6)
    lin = [rnd(4, 6, seed=12)] + conv[1:]
    assert_close(mod.fuse_linear(*map(_m, lin)), tns["fuse_linear"](*map(_t, lin)), rtol=1e-5, atol=1e-6)


def test_pad_sequence(both):
    tns, mod = both
    seqs = [rnd(4, 3, seed=13), rnd(2, 3, seed=14), rnd(5, 3, seed=15)]
    assert_close(mod.padded(*map(_m, seqs)), tns["padded"](*map(_t, seqs)))
    ints = [np.arange(3, dtype=np.int64), np.arange(5, dtype=np.int64), np.arange(1, dtype=np.int64)]
    got, want = mod.padded(*map(_m, ints)), tns["padded"](*map(_t, ints))
    assert [str(g.dtype) for g in got] == ["Int64"] * 3 and all(str(w.dtype) == "torch.int64" for w in want)
    assert_close(got, want)


FUSE_SRC = '''
import torch
import torch.nn as nn
from torch.nn.utils import fuse_conv_bn_eval, fuse_linear_bn_eval


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(5, 4)
        self.bn1 = nn.BatchNorm1d(4)

    def forward(self, x, v):
        return self.bn(self.conv(x)), self.bn1(self.fc(v))


def make():
    return Net()


def skipped(v):
    fc = torch.nn.utils.skip_init(nn.Linear, 5, out_features=2)
    nn.init.constant_(fc.weight, 0.5)
    nn.init.zeros_(fc.bias)
    return fc(v)


def fused(net, x, v):
    net.eval()
    conv = fuse_conv_bn_eval(net.conv, net.bn)
    conv = torch.nn.utils.convert_conv2d_weight_memory_format(conv, torch.channels_last)
    fc = fuse_linear_bn_eval(net.fc, net.bn1)
    return conv(x), fc(v)
'''


def test_fuse_bn_eval():
    """A conv (no bias) and a linear fused with trained-looking BatchNorm statistics compute what the
    unfused pair computes in eval mode, as in torch."""
    import torch
    from msmigrate.weights import load_torch_state_dict

    tns = load_torch(FUSE_SRC)
    mod, code, sites = load_converted(FUSE_SRC)
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, (todos, code)
    torch.manual_seed(0)
    tnet = tns["make"]()
    with torch.no_grad():
        for bn in (tnet.bn, tnet.bn1):
            bn.running_mean.copy_(torch.randn(4))
            bn.running_var.copy_(torch.rand(4) + 0.5)
            bn.weight.copy_(torch.randn(4))
            bn.bias.copy_(torch.randn(4))
    mnet = mod.make()
    load_torch_state_dict(mnet, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
    x, v = rnd(2, 3, 6, 6, seed=20), rnd(3, 5, seed=21)
    with torch.no_grad():
        want = tns["fused"](tnet, _t(x), _t(v))
        unfused = tnet(_t(x), _t(v))
    assert_close(want, unfused, rtol=1e-4, atol=1e-5)            # torch's own fusion is exact
    assert_close(mod.fused(mnet, _m(x), _m(v)), want, rtol=1e-4, atol=1e-5)
    assert_close(mod.skipped(_m(v)), tns["skipped"](_t(v)), rtol=1e-5, atol=1e-6)
