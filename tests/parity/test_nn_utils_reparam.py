"""torch.nn.utils.weight_norm / spectral_norm and their remove_* (msmigrate/mappings/nn_utils_reparam.py): torch's
state_dict (weight_g/weight_v, weight_orig/weight_u/weight_v) loads into the converted network under the same
names; outputs, gradients of every parameter and the power-iteration buffers then match torch in training and
eval mode, in PyNative and inside ms.jit. One converted snippet for the file."""
from __future__ import annotations

import numpy as np
import pytest

from msmigrate.registry import TODO
from tests.parity.harness import assert_close, load_converted, load_torch, rnd

SRC = '''
import torch
import torch.nn as nn
from torch.nn.utils import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm


class WN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = weight_norm(nn.Linear(3, 4))
        self.conv = nn.utils.weight_norm(nn.Conv2d(2, 3, 3, padding=1), dim=None)
        self.out = nn.Linear(4, 2)
        weight_norm(self.out, name="weight", dim=1)
        self.seq = weight_norm(nn.Conv1d(2, 3, 3, padding=1), dim=2)

    def forward(self, x, img):
        return self.out(torch.tanh(self.fc(x))), self.conv(img), self.seq(img.flatten(2))


class SN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.utils.spectral_norm(nn.Linear(5, 4), eps=1e-6)
        self.up = spectral_norm(nn.ConvTranspose2d(2, 3, 3, stride=2), n_power_iterations=2)

    def forward(self, x, img):
        return self.fc(x), self.up(img)


def make_wn():
    return WN()


def make_sn():
    return SN()


def set_mode(net, training):
    net.train(training)
    return net


def removed_wn(net, x, img):
    remove_weight_norm(net.fc)
    remove_weight_norm(net.conv, "weight")
    remove_weight_norm(net.seq)
    return net(x, img)


def removed_sn(net, x, img):
    remove_spectral_norm(net.fc)
    remove_spectral_norm(module=net.up)
    return net(x, img)
'''

_KEYS_WN = {"fc.weight_g", "fc.weight_v", "fc.bias", "conv.weight_g", "conv.weight_v", "conv.bias",
            "out.weight_g", "out.weight_v", "out.bias", "seq.weight_g", "seq.weight_v", "seq.bias"}


@pytest.fixture(scope="module")
def both():
    tns = load_torch(SRC)
    mod, code, sites = load_converted(SRC)
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, (todos, code)
    return tns, mod


def _pair(both, make):
    import torch
    from msmigrate.weights import load_torch_state_dict

    tns, mod = both
    torch.manual_seed(0)
    tnet = tns[make]()
    with torch.no_grad():   # weight_g away from ||weight_v|| so that the reparametrization shows in the output
        for name, p in tnet.named_parameters():
            if name.endswith(("weight_g", "bias")):
                p.mul_(1.5).add_(0.1)
    state = {k: v.detach().numpy() for k, v in tnet.state_dict().items()}
    mnet = getattr(mod, make)()
    report = load_torch_state_dict(mnet, state, strict=True)
    assert not report.renamed, report.renamed            # torch's names, as they are
    return tnet, mnet, state


def _grads(tnet, mnet, inputs, weights):
    """Outputs, then the gradients of sum(out * w) for every parameter, keyed by name."""
    import mindspore as ms
    import torch

    tnet.zero_grad()
    t_out = tnet(*[torch.from_numpy(a) for a in inputs])
    sum((o * torch.from_numpy(w)).sum() for o, w in zip(t_out, weights)).backward()
    t_grads = {n: p.grad.numpy() for n, p in tnet.named_parameters() if p.grad is not None}   # the ones used
    params = [p for p in mnet.trainable_params() if p.name in t_grads]

    def loss(*xs):
        return sum((o * ms.Tensor(w)).sum() for o, w in zip(mnet(*xs), weights))
    m_grads = ms.grad(loss, grad_position=None, weights=params)(*[ms.Tensor(a) for a in inputs])
    assert {p.name for p in params} == set(t_grads)
    for p, g in zip(params, m_grads):
        np.testing.assert_allclose(g.asnumpy(), t_grads[p.name], rtol=1e-4, atol=1e-5, err_msg=p.name)
    return t_out


def _jit_call(net, *xs):
    import mindspore as ms

    def call(a, b):
        return net(a, b)
    return ms.jit(call)(*xs)


def test_weight_norm(both):
    import mindspore as ms
    import torch

    tns, mod = both
    tnet, mnet, state = _pair(both, "make_wn")
    assert set(state) == _KEYS_WN and {p.name for p in mnet.get_parameters()} == _KEYS_WN
    assert state["fc.weight_g"].shape == (4, 1) and state["conv.weight_g"].shape == ()
    x, img = rnd(2, 3, seed=1), rnd(1, 2, 4, 4, seed=2)
    mx, mimg = ms.Tensor(x), ms.Tensor(img)
    weights = [rnd(2, 2, seed=3), rnd(1, 3, 4, 4, seed=4), rnd(1, 3, 16, seed=9)]
    t_out = _grads(tnet, mnet, [x, img], weights)
    assert_close(mnet(mx, mimg), t_out, rtol=1e-5, atol=1e-5)   # (the same property compiles: test_spectral_norm)
    with torch.no_grad():
        want = tns["removed_wn"](tnet, torch.from_numpy(x), torch.from_numpy(img))
    assert_close(mod.removed_wn(mnet, mx, mimg), want, rtol=1e-5, atol=1e-5)
    names = {p.name for p in mnet.get_parameters()}
    assert names == set(tnet.state_dict()) and "fc.weight" in names and "out.weight_g" in names
    with pytest.raises(ValueError):
        mod.removed_wn(mnet, mx, mimg)                 # nothing left to remove: torch raises too


def test_spectral_norm(both):
    import mindspore as ms
    import torch

    tns, mod = both
    tnet, mnet, state = _pair(both, "make_sn")
    assert {k.rsplit(".", 1)[1] for k in state} == {"weight_orig", "weight_u", "weight_v", "bias"}
    x, img = rnd(3, 5, seed=5), rnd(1, 2, 3, 3, seed=6)
    mx, mimg = ms.Tensor(x), ms.Tensor(img)
    weights = [rnd(3, 4, seed=7), rnd(1, 3, 7, 7, seed=8)]
    tns["set_mode"](tnet, True)
    mod.set_mode(mnet, True)
    _grads(tnet, mnet, [x, img], weights)              # training: each forward runs the power iterations
    with torch.no_grad():
        t_train = tnet(torch.from_numpy(x), torch.from_numpy(img))
    assert_close(_jit_call(mnet, mx, mimg), t_train, rtol=1e-4, atol=1e-5)   # a second forward, compiled
    buffers = {k: v.numpy() for k, v in tnet.state_dict().items() if k.endswith(("_u", "_v"))}
    got = {p.name: p.asnumpy() for p in mnet.get_parameters() if p.name in buffers}
    assert set(got) == set(buffers)
    assert_close(list(got.values()), [buffers[k] for k in got], rtol=1e-4, atol=1e-5)
    tns["set_mode"](tnet, False)
    mod.set_mode(mnet, False)
    with torch.no_grad():
        t_eval = tnet(torch.from_numpy(x), torch.from_numpy(img))
    assert_close(mnet(mx, mimg), t_eval, rtol=1e-4, atol=1e-5)   # eval: the stored u, v, no iteration
    with torch.no_grad():
        want = tns["removed_sn"](tnet, torch.from_numpy(x), torch.from_numpy(img))
    assert_close(mod.removed_sn(mnet, mx, mimg), want, rtol=1e-4, atol=1e-5)
    assert {p.name for p in mnet.get_parameters()} == set(tnet.state_dict())


PARAM_SRC = '''
import torch
import torch.nn as nn
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import weight_norm


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(2.0))

    def forward(self, X):
        return X * self.scale

    def right_inverse(self, W):
        return W / 2.0


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.sq = nn.Linear(4, 4)
        parametrize.register_parametrization(self.sq, "weight", Symmetric())
        parametrize.register_parametrization(self.sq, "weight", Scaled())
        self.fc = weight_norm(nn.Linear(4, 3))
        self.conv = nn.utils.parametrizations.weight_norm(nn.Conv2d(2, 3, 3), dim=1)
        self.out = nn.Linear(3, 2)
        parametrize.register_parametrization(self.out, "weight", Scaled(), unsafe=True)
        self.sn = nn.utils.parametrizations.spectral_norm(nn.ConvTranspose2d(3, 2, 2), n_power_iterations=2)
        self.pos = weight_norm(nn.Conv1d(2, 2, 3, padding=1), name="weight", dim=2)   # as wav2vec2's pos_conv

    def forward(self, x, img):
        return self.out(torch.tanh(self.fc(self.sq(x)))), self.sn(self.conv(img)), self.pos(img.flatten(2))


def make():
    return Net()


def states(net):
    return (parametrize.is_parametrized(net.sq), parametrize.is_parametrized(net.sq, "bias"),
            parametrize.is_parametrized(net.fc, tensor_name="weight"))


def removed(net, x, img):
    parametrize.remove_parametrizations(net.sq, "weight")
    parametrize.remove_parametrizations(net.out, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(net.conv, tensor_name="weight")
    return net(x, img), parametrize.is_parametrized(net.sq)
'''


def _jit_parts(net, x, img):
    import mindspore as ms

    def parts(a, b):
        return net.sq(a), net.pos(b.flatten(start_dim=2))
    return ms.jit(parts)(x, img)


def test_parametrize():
    """register_parametrization with user cells (chained, with right_inverse and a parameter of its own),
    parametrizations.weight_norm and spectral_norm (ConvTranspose: dim 1, two iterations per training forward): torch's state_dict names load, outputs and every gradient match (PyNative and
    ms.jit); remove_parametrizations leaves what torch leaves."""
    import mindspore as ms
    import torch
    from msmigrate.weights import load_torch_state_dict

    tns = load_torch(PARAM_SRC)
    mod, code, sites = load_converted(PARAM_SRC)
    assert not [(s.api, s.note) for s in sites if s.status == TODO], code
    torch.manual_seed(0)
    tnet = tns["make"]()
    with torch.no_grad():
        tnet.fc.parametrizations.weight.original0.mul_(1.5)
        tnet.out.parametrizations.weight[0].scale.fill_(0.7)
    state = {k: v.detach().numpy() for k, v in tnet.state_dict().items()}
    assert "sq.parametrizations.weight.original" in state and "out.parametrizations.weight.0.scale" in state
    mnet = mod.make()
    assert {p.name for p in mnet.get_parameters()} == set(state)
    report = load_torch_state_dict(mnet, state, strict=True)
    assert not report.renamed, report.renamed
    x, img = rnd(3, 4, seed=11), rnd(1, 2, 5, 5, seed=12)
    mx, mimg = ms.Tensor(x), ms.Tensor(img)
    t_out = _grads(tnet, mnet, [x, img], [rnd(3, 2, seed=13), rnd(1, 2, 4, 4, seed=14), rnd(1, 2, 25, seed=15)])
    with torch.no_grad():   # compiled: the chained parametrizations and two originals
        t_out = tnet.sq(torch.from_numpy(x)), tnet.pos(torch.from_numpy(img).flatten(2))
    assert_close(_jit_parts(mnet, mx, mimg), t_out, rtol=1e-4, atol=1e-5)
    with torch.no_grad():   # spectral_norm's second iteration
        t_sn = tnet.sn(tnet.conv(torch.from_numpy(img)))
    assert_close(mnet.sn(mnet.conv(mimg)), t_sn, rtol=1e-4, atol=1e-5)
    sn_buffers = ("sn.parametrizations.weight.0._u", "sn.parametrizations.weight.0._v")
    got = {p.name: p.asnumpy() for p in mnet.get_parameters()}
    assert_close([got[k] for k in sn_buffers], [tnet.state_dict()[k] for k in sn_buffers], rtol=1e-4, atol=1e-5)
    assert mod.states(mnet) == tns["states"](tnet) == (True, False, True)
    with torch.no_grad():
        want = tns["removed"](tnet, torch.from_numpy(x), torch.from_numpy(img))
    assert_close(mod.removed(mnet, mx, mimg)[0], want[0], rtol=1e-5, atol=1e-5)
    assert want[1] is False and mod.states(mnet)[0] is False
    assert {p.name for p in mnet.get_parameters()} == set(tnet.state_dict())



ORTH_SRC = '''
import torch
import torch.nn as nn
from torch.nn.utils.parametrizations import orthogonal


def orthogonalize(sq, tall, wide):
    orthogonal(sq)
    torch.nn.utils.parametrizations.orthogonal(tall, "weight", orthogonal_map="cayley")
    orthogonal(wide, name="weight", use_trivialization=True)


class Three(nn.Module):
    def __init__(self, sq, tall, wide):
        super().__init__()
        self.sq, self.tall, self.wide = sq, tall, wide

    def forward(self, x, y):
        return self.tall(x[:, :3]), self.wide(y)

    def square(self, x):
        return self.sq(x), self.sq.weight.T @ self.sq.weight
'''


def test_orthogonal():
    """parametrizations.orthogonal: a square weight (matrix_exp) becomes torch's orthogonalization of the same
    weight; with torch's state (original, base) loaded, it gives torch's output (matrix_exp's gradient: the
    test_linalg_values case), a tall (cayley) and a wide (householder) weight torch's outputs and gradients.
    PyNative only: compiling matrix_exp's squaring loop takes seconds."""
    import mindspore as ms
    import mindspore.nn as mnn
    import torch
    from msmigrate.weights import load_torch_state_dict

    tns = load_torch(ORTH_SRC)
    mod, code, sites = load_converted(ORTH_SRC)
    assert not [(s.api, s.note) for s in sites if s.status == TODO], code
    torch.manual_seed(0)
    t_layers = [torch.nn.Linear(4, 4), torch.nn.Linear(3, 5), torch.nn.Linear(6, 2)]
    m_layers = [mnn.Dense(4, 4), mnn.Dense(3, 5), mnn.Dense(6, 2)]
    for t, m in zip(t_layers, m_layers):
        load_torch_state_dict(m, {k: v.detach().numpy() for k, v in t.state_dict().items()}, strict=True)
    tns["orthogonalize"](*t_layers)
    mod.orthogonalize(*m_layers)
    assert_close(m_layers[0].weight, t_layers[0].weight.detach(), rtol=1e-4, atol=1e-5)   # the same start
    tnet, mnet = tns["Three"](*t_layers), mod.Three(*m_layers)
    with torch.no_grad():
        for p in tnet.parameters():
            p.add_(0.2 * torch.randn(p.shape))
    state = {k: v.detach().numpy() for k, v in tnet.state_dict().items()}
    assert "wide.parametrizations.weight.0.base" in state
    assert {p.name for p in mnet.get_parameters()} == set(state)
    load_torch_state_dict(mnet, state, strict=True)
    x, y = rnd(2, 4, seed=31), rnd(2, 6, seed=32)
    _grads(tnet, mnet, [x, y], [rnd(2, 5, seed=34), rnd(2, 2, seed=35)])
    with torch.no_grad():
        want = tnet.square(torch.from_numpy(x))
    assert_close(mnet.square(ms.Tensor(x)), want, rtol=1e-4, atol=1e-5)     # and Q^T Q = I


PACK_SRC = '''
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pack_sequence, pad_packed_sequence


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(8, 2)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, (h, c) = self.lstm(packed)
        out, lens = pad_packed_sequence(out, batch_first=True, padding_value=-1.0)
        seq = pack_padded_sequence(out.transpose(0, 1), lens, enforce_sorted=False)
        out2, h2 = self.gru(seq)
        out2, _ = pad_packed_sequence(out2, total_length=6)
        return out, lens, h, c, out2, h2, packed.data, packed.batch_sizes, packed.sorted_indices


def make():
    return Tagger()


def packed_parts(a, b, c):
    p = pack_sequence([a, b, c])
    return p.data, p.batch_sizes, pad_packed_sequence(p)[0]


def unsorted(a, b):
    return pack_sequence([b, a])


def round_trip(a, b, c):
    p = torch.nn.utils.rnn.pack_sequence([b, a, c], enforce_sorted=False)
    padded, lens = pad_packed_sequence(p)
    return (torch.nn.utils.rnn.unpack_sequence(p), torch.nn.utils.rnn.unpad_sequence(padded, lens),
            isinstance(p, torch.nn.utils.rnn.PackedSequence))
'''


def test_rnn_packing():
    """pack_padded_sequence (unsorted lengths) into a bidirectional LSTM, pad_packed_sequence (padding_value,
    total_length) and again into a GRU: outputs, lengths, final states and torch's packed layout (.data,
    .batch_sizes, .sorted_indices) match; pack_sequence refuses unsorted lengths as torch."""
    import mindspore as ms
    import torch
    from msmigrate.weights import load_torch_state_dict

    tns = load_torch(PACK_SRC)
    mod, code, sites = load_converted(PACK_SRC)
    assert not [(s.api, s.note) for s in sites if s.status == TODO], code
    torch.manual_seed(0)
    tnet, mnet = tns["make"](), mod.make()
    load_torch_state_dict(mnet, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
    x, lengths = rnd(3, 5, 3, seed=41), [2, 5, 3]
    with torch.no_grad():
        want = tnet(torch.from_numpy(x), torch.tensor(lengths))
    got = mnet(ms.Tensor(x), ms.Tensor(np.array(lengths)))
    assert [str(g.dtype) for g in (got[1], got[7], got[8])] == ["Int64"] * 3
    assert_close(got, want, rtol=1e-4, atol=1e-5)
    seqs = [rnd(4, 2, seed=42), rnd(3, 2, seed=43), rnd(1, 2, seed=44)]
    assert_close(mod.packed_parts(*map(ms.Tensor, seqs)), tns["packed_parts"](*map(torch.from_numpy, seqs)))
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        tns["unsorted"](*map(torch.from_numpy, seqs[1:]))
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        mod.unsorted(*map(ms.Tensor, seqs[1:]))
    got, want = mod.round_trip(*map(ms.Tensor, seqs)), tns["round_trip"](*map(torch.from_numpy, seqs))
    assert got[2] is True is want[2]
    assert_close(got[:2], want[:2])


FIELDS_SRC = '''
import torch
from torch.nn.utils.rnn import PackedSequence, pad_packed_sequence


def fields(data, batch_sizes, sorted_indices):
    p = PackedSequence(data, batch_sizes, sorted_indices=sorted_indices)
    q = torch.nn.utils.rnn.PackedSequence(data=data, batch_sizes=batch_sizes)
    padded, lens = pad_packed_sequence(p, batch_first=True, padding_value=-2.0)
    return p.data, p.batch_sizes, p.sorted_indices, p.unsorted_indices, q.data, q[1], padded, lens


def given_unsorted(data, batch_sizes):
    p = PackedSequence(data, batch_sizes, torch.tensor([1, 0, 2]), torch.tensor([0, 1, 2]))
    return p.unsorted_indices, pad_packed_sequence(p)[0]


def casts(data, batch_sizes):
    p = PackedSequence(data, batch_sizes)
    d = p.double()
    return d.data, d.batch_sizes, p.to("cpu").data, p.is_cuda


def inverted(perm):
    return (torch.nn.utils.rnn.invert_permutation(perm), torch.nn.utils.rnn.invert_permutation(perm * 1),
            torch.nn.utils.rnn.invert_permutation(None))


def padded_sum(data, batch_sizes, sorted_indices, w):
    p = PackedSequence(data, batch_sizes, sorted_indices)
    return (pad_packed_sequence(p, batch_first=True)[0] * w).sum()
'''


def test_packed_sequence_from_fields():
    """PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices) built directly, as torch's namedtuple:
    the fields read back as given, unsorted_indices inverted from sorted_indices when not given (kept when
    given), pad_packed_sequence unpacks it into the original order (values, lengths, gradient of data),
    .double()/.to('cpu')/.is_cuda as torch; invert_permutation."""
    import mindspore as ms
    import torch

    tns = load_torch(FIELDS_SRC)
    mod, code, sites = load_converted(FIELDS_SRC)
    assert not [(s.api, s.note) for s in sites if s.status == TODO], code
    # three sequences of lengths 3, 2, 1 (sorted order), 2 features; packed step by step
    data, sizes, order = rnd(6, 2, seed=51), np.array([3, 2, 1]), np.array([2, 0, 1])
    want = tns["fields"](torch.from_numpy(data), torch.from_numpy(sizes), torch.from_numpy(order))
    got = mod.fields(ms.Tensor(data), ms.Tensor(sizes), ms.Tensor(order))
    assert_close(got, want, rtol=0, atol=0)
    assert str(got[-1].dtype) == "Int64"
    assert_close(mod.given_unsorted(ms.Tensor(data), ms.Tensor(sizes)),
                 tns["given_unsorted"](torch.from_numpy(data), torch.from_numpy(sizes)), rtol=0, atol=0)
    flat, flat_sizes = rnd(4, seed=52), np.array([2, 2])
    got = mod.casts(ms.Tensor(flat), ms.Tensor(flat_sizes))
    want = tns["casts"](torch.from_numpy(flat), torch.from_numpy(flat_sizes))
    assert got[3] is False is want[3]
    assert_close(got[:3], want[:3], rtol=0, atol=0)
    assert str(got[0].dtype) == "Float64" and str(got[1].dtype) == "Int64"
    perm = np.array([2, 0, 3, 1], np.int64)
    got, want = mod.inverted(ms.Tensor(perm)), tns["inverted"](torch.from_numpy(perm))
    assert got[2] is None is want[2] and str(got[0].dtype) == "Int64"
    assert_close(got[:2], want[:2], rtol=0, atol=0)
    w = rnd(3, 3, 2, seed=53)
    t_data = torch.from_numpy(data).requires_grad_(True)
    tns["padded_sum"](t_data, torch.from_numpy(sizes), torch.from_numpy(order), torch.from_numpy(w)).backward()
    m_grad = ms.grad(mod.padded_sum)(ms.Tensor(data), ms.Tensor(sizes), ms.Tensor(order), ms.Tensor(w))
    assert_close(m_grad, t_data.grad, rtol=0, atol=0, what="gradient")
