"""In-place changes of a tensor that other holders share: a loop over parameters or a list, a dict entry
(an optimizer's momentum buffer), an attribute, and chains of in-place methods on such a name or on a fresh
copy (inplace_holders.py, inplace_chains.py). torch changes the one tensor everybody holds; the converted code
must too (it rebound the local name before: the parameters, the state and the buffer kept their old values with
no error). Each case runs the torch program and its conversion on the same values and compares every holder."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests.parity.harness import load_converted, load_torch

SRC = '''
import torch
from torch import nn


def scale_params(net, s):
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(s)


def ema(target, source, rate):
    with torch.no_grad():
        for t, s in zip(target.parameters(), source.parameters()):
            t.mul_(rate)
            t.add_(s, alpha=1 - rate)


def momentum_step(state, dp, m):
    mu = state["mu"]
    mu.mul_(m).add_(dp)
    cnt = state.get("count")
    cnt.add_(1)


def shift_all(tensors, by):
    for t in tensors:
        t.sub_(by).clamp_(min=-1.0)


class Tracker:
    def __init__(self):
        self.total = torch.zeros(3)

    def update(self, x):
        total = self.total
        total.add_(x)
        return self.total


def color_normalize(x, mean=(0.485, 0.456, 0.406), std=(0.228, 0.224, 0.225)):
    for t, m, s in zip(x, mean, std):
        t.sub_(m).div_(s)
    return x


def first_rows_halved(x, n):
    for i, row in enumerate(x):
        if i == n:
            break
        row.mul_(0.5)
    return x


class EmaNet(nn.Module):
    """An EMA copy kept by the model itself, updated from the training loop, not from forward."""

    def __init__(self):
        super().__init__()
        self.online = nn.Linear(3, 2)
        self.ema = nn.Linear(3, 2)

    @torch.no_grad()
    def update_ema(self, decay):
        for e, p in zip(self.ema.parameters(), self.online.parameters()):
            e.mul_(decay).add_(p, alpha=1 - decay)

    def forward(self, x):
        return self.online(x) + self.ema(x)


def softened(d, T):
    w = d.clone().div_(T).exp_()
    return w, d
'''

RNG = np.random.default_rng(3)


def _arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.fixture(scope="module")
def both():
    return load_torch(SRC), load_converted(SRC)


def _net_pair(ns, mod, seed):
    import mindspore as ms
    import torch
    from msmigrate.weights import load_torch_state_dict
    torch.manual_seed(seed)
    t = torch.nn.Linear(3, 2)
    m = ms.nn.Dense(3, 2)
    load_torch_state_dict(m, {k: v.detach().numpy() for k, v in t.state_dict().items()})
    return t, m


def _params(t, m):
    return ([p.detach().numpy().copy() for p in t.parameters()], [p.asnumpy().copy() for p in m.get_parameters()])


def test_loops_over_parameters_change_the_parameters(both):
    ns, (mod, code, _) = both
    t, m = _net_pair(ns, mod, 0)
    before = _params(t, m)[0]
    ns["scale_params"](t, 0.5)
    mod.scale_params(m, 0.5)
    t_after, m_after = _params(t, m)
    for a, b, old in zip(t_after, m_after, before):
        assert not np.allclose(a, old)
        np.testing.assert_allclose(b, a, rtol=1e-6)
    t2, m2 = _net_pair(ns, mod, 1)
    ns["ema"](t2, t, 0.9)
    mod.ema(m2, m, 0.9)
    for a, b in zip(*_params(t2, m2)):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
    assert "write_into" in code, code


def test_dict_entries_lists_and_attributes_change_in_place(both):
    import mindspore as ms
    import torch
    ns, (mod, code, sites) = both
    mu, dp = _arr(4), _arr(4)
    t_state = {"mu": torch.from_numpy(mu.copy()), "count": torch.zeros((), dtype=torch.int64)}
    m_state = {"mu": ms.Tensor(mu.copy()), "count": ms.Tensor(np.zeros((), np.int64))}
    for _ in range(2):
        ns["momentum_step"](t_state, torch.from_numpy(dp), 0.9)
        mod.momentum_step(m_state, ms.Tensor(dp), 0.9)
    np.testing.assert_allclose(m_state["mu"].asnumpy(), t_state["mu"].numpy(), rtol=1e-6)
    assert int(m_state["count"].asnumpy()) == int(t_state["count"]) == 2
    assert m_state["count"].dtype == ms.int64

    xs = [_arr(3), _arr(2, 2)]
    t_xs = [torch.from_numpy(x.copy()) for x in xs]
    m_xs = [ms.Tensor(x.copy()) for x in xs]
    ns["shift_all"](t_xs, 0.5)
    mod.shift_all(m_xs, 0.5)
    for a, b in zip(t_xs, m_xs):
        np.testing.assert_allclose(b.asnumpy(), a.numpy(), rtol=1e-6)

    t_tr, m_tr = ns["Tracker"](), mod.Tracker()
    for _ in range(2):
        x = _arr(3)
        t_out = t_tr.update(torch.from_numpy(x))
        m_out = m_tr.update(ms.Tensor(x))
    np.testing.assert_allclose(m_out.asnumpy(), t_out.numpy(), rtol=1e-6)
    np.testing.assert_allclose(m_tr.total.asnumpy(), t_tr.total.numpy(), rtol=1e-6)
    assert not [s for s in sites if s.status == "todo"], [s for s in sites if s.status == "todo"]


def test_chain_on_a_fresh_copy_leaves_the_original(both):
    import mindspore as ms
    import torch
    ns, (mod, code, _) = both
    d = _arr(5)
    t_w, t_d = ns["softened"](torch.from_numpy(d.copy()), 2.0)
    m_w, m_d = mod.softened(ms.Tensor(d.copy()), 2.0)
    np.testing.assert_allclose(m_w.asnumpy(), t_w.numpy(), rtol=1e-5)
    np.testing.assert_allclose(m_d.asnumpy(), d)
    np.testing.assert_allclose(t_d.numpy(), d)


def test_rows_of_a_tensor_changed_in_a_loop_reach_the_tensor(both):
    """`for t, m, s in zip(x, mean, std): t.sub_(m).div_(s)`: torch's rows are views of x; MindSpore's are
    copies, written back into x (_ms_compat.rows_in_place), also where the loop leaves early."""
    import mindspore as ms
    import torch
    ns, (mod, code, _) = both
    x = _arr(3, 2, 2)
    t_out = ns["color_normalize"](torch.from_numpy(x.copy()))
    m_in = ms.Tensor(x.copy())
    m_out = mod.color_normalize(m_in)
    np.testing.assert_allclose(m_in.asnumpy(), t_out.numpy(), rtol=1e-6)
    np.testing.assert_allclose(m_out.asnumpy(), t_out.numpy(), rtol=1e-6)
    assert not np.allclose(t_out.numpy(), x)
    t_out = ns["first_rows_halved"](torch.from_numpy(x.copy()), 2)
    m_out = mod.first_rows_halved(ms.Tensor(x.copy()), 2)
    np.testing.assert_allclose(m_out.asnumpy(), t_out.numpy(), rtol=1e-6)
    assert "rows_in_place(x), mean, std)" in code, code


def test_a_module_method_forward_does_not_run_changes_parameters(both):
    import mindspore as ms
    import torch
    from msmigrate.weights import load_torch_state_dict
    ns, (mod, code, _) = both
    torch.manual_seed(2)
    t = ns["EmaNet"]()
    m = mod.EmaNet()
    load_torch_state_dict(m, {k: v.detach().numpy() for k, v in t.state_dict().items()})
    before = t.ema.weight.detach().numpy().copy()
    t.update_ema(0.5)
    m.update_ema(0.5)
    assert not np.allclose(t.ema.weight.detach().numpy(), before)
    np.testing.assert_allclose(m.ema.weight.asnumpy(), t.ema.weight.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(m.ema.bias.asnumpy(), t.ema.bias.detach().numpy(), rtol=1e-6)
    x = _arr(4, 3)
    np.testing.assert_allclose(m(ms.Tensor(x)).asnumpy(), t(torch.from_numpy(x)).detach().numpy(), rtol=1e-5)


FILL_CHAINS_SRC = '''
import math
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(300, 200), nn.Linear(200, 4)])
        self.norm = nn.LayerNorm(4)
        for name, param in self.named_parameters():
            if "layers" in name and "weight" in name:
                param.data.normal_().mul_(math.sqrt(2. / param.size(1)))
            elif "norm" in name and "weight" in name:
                param.data.fill_(0.5).add_(0.25)
        self.layers[1].bias.data.zero_().add_(-0.5)
        self.norm.bias.data.copy_(torch.arange(4.0)).div_(8)
'''


def test_chains_that_start_with_a_fill():
    """`param.data.normal_().mul_(s)` (a hand-written He initialization), `.fill_(v).add_(w)`,
    `self.layers[1].bias.data.zero_().add_(b)`, `.copy_(t).div_(d)`: the fill returns the tensor itself, so the
    chain is its links one by one. Before: a raising TODO at the chain (the fill has no out-of-place twin). The
    deterministic fills compare exactly; the scaled normal draw by its spread."""
    import mindspore as ms
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ns = load_torch(FILL_CHAINS_SRC)
    mod, code, sites = load_converted(FILL_CHAINS_SRC)
    assert "TODO" not in code, code
    t, m = ns["Net"](), mod.Net()
    np.testing.assert_allclose(m.norm.gamma.asnumpy(), t.norm.weight.detach().numpy())
    np.testing.assert_allclose(m.norm.beta.asnumpy(), t.norm.bias.detach().numpy())
    np.testing.assert_allclose(m.layers[1].bias.asnumpy(), t.layers[1].bias.detach().numpy())
    for k, fan_in in ((0, 300), (1, 200)):
        w = m.layers[k].weight.asnumpy()
        # He's scale: N(0, 1) times sqrt(2 / fan_in); a draw left unscaled has std 1
        assert abs(w.std() / math.sqrt(2. / fan_in) - 1) < 0.1, (k, w.std())
        assert abs(w.mean()) < 0.1 * math.sqrt(2. / fan_in) + 0.01, (k, w.mean())
