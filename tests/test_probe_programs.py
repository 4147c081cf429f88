"""Constructs that held-out training programs written for probing (UNet, seq2seq, SimCLR/BYOL, distillation,
mixture of experts, GNN, char-RNN...) reached, each reduced to a minimal torch snippet of our own and run
against its conversion: values, gradients and what code inspecting the model sees."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .parity.harness import load_converted, load_torch  # noqa: E402

FROZEN_NORMS = """
import copy
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, aff=False):
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.bn = nn.BatchNorm1d(6)
        self.bn_plain = nn.BatchNorm1d(6, affine=False)
        self.bn_var = nn.BatchNorm2d(3, affine=aff)
        self.bn3 = nn.BatchNorm3d(3, affine=False)
        self.inorm = nn.InstanceNorm2d(3, affine=True)
        self.gn = nn.GroupNorm(3, 6)
        self.head = nn.Linear(6, 2)


def make():
    online = Net()
    target = copy.deepcopy(online)
    for p in target.parameters():
        p.requires_grad = False
    frozen = Net()
    frozen.requires_grad_(False)
    return online, target, frozen


def names(m):
    return [(n, tuple(p.shape)) for n, p in m.named_parameters()]


def keys(m):
    return sorted(m.state_dict().keys())


def pairs(a, b):
    return [(tuple(p.shape), tuple(q.shape)) for p, q in zip(a.parameters(), b.parameters())]
"""


def test_frozen_norm_parameters_stay_parameters():
    """A momentum target network (deepcopy, then every parameter frozen) or a frozen backbone: its BatchNorm's
    gamma/beta frozen looked like affine=False, so parameters() left them out and `zip(online.parameters(),
    target.parameters())` paired a bias with the next weight (BYOL's update raised a broadcast error). torch's
    affine=False is now recorded by the layer; frozen affine parameters stay in parameters() and state_dict()."""
    ns = load_torch(FROZEN_NORMS)
    mod, code, _ = load_converted(FROZEN_NORMS)
    t_nets, m_nets = ns["make"](), mod.make()
    import _ms_compat
    for t, m in zip(t_nets, m_nets):
        assert [n for n, _ in _ms_compat.named_parameters(m)] == [n for n, _ in t.named_parameters()]
        assert mod.names(m) == ns["names"](t)
        # torch's checkpoint of the frozen network loads strictly: nothing missing, nothing unexpected
        t_sd = {k: v.detach().numpy() + 0.5 for k, v in t.state_dict().items()}
        _ms_compat.load_state_dict(m, t_sd, strict=True)
        assert np.allclose(dict(_ms_compat.named_parameters(m))["bn.weight"].asnumpy(), t_sd["bn.weight"])
    assert mod.pairs(m_nets[0], m_nets[1]) == ns["pairs"](t_nets[0], t_nets[1])
    assert all(a == b for a, b in mod.pairs(m_nets[0], m_nets[1]))


MASKED_CROSS_ENTROPY = """
import torch
import torch.nn as nn
import torch.nn.functional as F


def fn(z, y, y3, x3):
    w = torch.tensor([1.0, 2.0, 0.5, 1.5, 1.0, 3.0])
    sim = z @ z.t()
    sim = sim.masked_fill(torch.eye(z.shape[0], dtype=torch.bool), float("-inf"))
    crit = nn.CrossEntropyLoss(ignore_index=1)
    x3 = x3.masked_fill(x3 > 1.0, float("-inf"))
    return (F.cross_entropy(sim, y), F.cross_entropy(sim, y, reduction="none"),
            F.cross_entropy(sim, y, weight=w, reduction="sum"), F.cross_entropy(sim, y, weight=w, ignore_index=2),
            crit(sim, y), F.cross_entropy(x3, y3), F.cross_entropy(sim[0], y[0]))
"""


def test_cross_entropy_beside_minus_inf_logits():
    """NT-Xent (SimCLR): the similarity matrix's diagonal is masked with -inf before cross_entropy. MindSpore's
    ops.cross_entropy takes the target's log-probability through a one-hot product, 0 * -inf: the loss was nan
    from the first step. Gathered as torch does: values and gradients, weights, ignore_index, reductions, an
    (N, C, d) input and an unbatched one, in PyNative and GRAPH."""
    from .parity.harness import check_function, rnd
    y = np.array([3, 2, 1, 0, 5, 4], np.int64)
    y3 = np.array([[0, 2, 1], [1, 1, 3]], np.int64)
    x3 = rnd(2, 4, 3, seed=3)
    x3[:, :, :] = np.where(np.arange(4)[None, :, None] == np.array([[0, 2, 1], [1, 1, 3]])[:, None, :],
                           np.minimum(x3, 0.5), x3)   # no target masked: torch's loss stays finite
    code, sites = check_function(MASKED_CROSS_ENTROPY, [rnd(6, 4), y, y3, x3], grad=True, rtol=1e-5,
                                 atol=1e-6)
    assert "_ms_compat.cross_entropy" in code and "ops.cross_entropy" not in code, code


MIXUP = """
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def make():
    model = Net()
    return {"model": model, "opt": torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)}


def train(objs, batches):
    model, optimizer = objs["model"], objs["opt"]
    X = torch.cat([b[0] for b in batches])
    Y = torch.cat([b[1] for b in batches])
    rng = np.random.RandomState(0)
    losses = []
    for i in range(0, len(X), 6):
        x, y = X[i:i + 6], Y[i:i + 6]
        lam = float(rng.beta(0.4, 0.4))
        perm = torch.from_numpy(rng.permutation(x.size(0)))
        mixed = lam * x + (1 - lam) * x[perm]
        y_a, y_b = y, y[perm]
        out = model(mixed)
        loss = lam * F.cross_entropy(out, y_a) + (1 - lam) * F.cross_entropy(out, y_b)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
"""


def test_mixup_targets_indexed_from_a_sliced_batch():
    """Mixup: `x, y = X[i:i + n], Y[i:i + n]`, a permutation drawn from len(x), then `y_a, y_b = y, y[perm]`.
    The slice's index arithmetic counted as computing, so the slice went into the step while the draw and the
    target pair stayed data reading it: the backward() was refused ('the loss passes through y_a, y_b = ...').
    Index arithmetic is data now; per-step losses and final weights as torch's, GRAPH and PyNative."""
    from msmigrate.registry import TODO
    from .test_train_loop import _batches, run_both
    code, sites, results = run_both(MIXUP, _batches(n=4))
    assert not [s for s in sites if s.status == TODO], code
    assert set(results) == {"graph", "pynative"}


RUNNING_BUFFERS = """
import torch
import torch.nn as nn


class RunningNorm(nn.Module):
    def __init__(self, dim, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("var", torch.ones(dim))
        self.register_buffer("count", torch.zeros(()))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.mean.mul_(1 - self.momentum)
                self.mean.add_(self.momentum * x.mean(0))
                self.var.mul_(1 - self.momentum)
                self.var.add_(self.momentum * x.var(0, unbiased=False))
                self.count.add_(1)
        return (x - self.mean) / torch.sqrt(self.var + 1e-5)


def make():
    return RunningNorm(3)
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_buffer_updated_in_place_in_forward(mode):
    """A normaliser's running statistics kept in buffers and updated in forward under no_grad:
    `self.mean.mul_(1 - m)`, `self.count.add_(1)`. In-place methods on an attribute were a raising TODO
    (MindSpore's in-place arithmetic changes nothing on CPU); on a registered buffer they are the same change
    through `.data`, assigned into the buffer: outputs and buffers as torch's over three calls."""
    import mindspore as ms
    import torch
    ns = load_torch(RUNNING_BUFFERS)
    mod, code, sites = load_converted(RUNNING_BUFFERS)
    assert "Unconverted" not in code, code
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    t = ns["make"]()
    t_out = [t(torch.from_numpy(x * (k + 1))).numpy() for k in range(3)]
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        m = mod.make()
        m_out = [m(ms.Tensor(x * (k + 1))).asnumpy() for k in range(3)]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    for a, b in zip(m_out, t_out):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for name in ("mean", "var", "count"):
        np.testing.assert_allclose(getattr(m, name).asnumpy(), getattr(t, name).numpy(), rtol=1e-5, atol=1e-6)
