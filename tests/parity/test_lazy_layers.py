"""torch's lazy layers (-> _ms_compat.Lazy*, templates/compat_parts/lazy_layers.py): built at the first call from
the input's size. torch and the conversion on the same inputs and the same weights (torch's state_dict loaded
after the first call, as a program restoring a checkpoint does): outputs, the input gradient, the running
statistics a train-mode call leaves, parameter names unique across several lazy layers of one model."""
from __future__ import annotations

import numpy as np

from msmigrate.registry import TODO
from tests.parity.harness import convert_snippet, load_converted, load_torch, rnd, assert_close

SRC = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.LazyConv2d(4, 3, padding=1)
        self.bn = nn.LazyBatchNorm2d()
        self.inorm = nn.LazyInstanceNorm2d(affine=False, track_running_stats=False)
        self.head = nn.Sequential(nn.Flatten(), nn.LazyLinear(5))

    def forward(self, x):
        return self.head(self.inorm(self.bn(self.conv(x))))


def make():
    return Net()


def fresh():
    return nn.LazyBatchNorm1d(affine=False)


def layers():
    return (nn.LazyLinear(3), nn.LazyConv1d(2, 3, stride=2), nn.LazyConv3d(2, (1, 2, 2), bias=False),
            nn.LazyBatchNorm1d(momentum=0.3), nn.LazyBatchNorm3d(), nn.LazyInstanceNorm1d(),
            nn.LazyConv2d(3, 2), nn.LazyConvTranspose1d(2, 3, stride=2, padding=1),
            nn.LazyConvTranspose2d(3, 3, stride=2, padding=1, output_padding=1), nn.LazyConvTranspose3d(2, 2, bias=False),
            nn.LazyConvTranspose2d(2, (2, 3)))
"""
IMG = rnd(2, 3, 5, 5, seed=1)
INPUTS = [rnd(4, 6, seed=2), rnd(2, 3, 9, seed=3), rnd(2, 2, 3, 4, 4, seed=4), rnd(4, 3, seed=5),
          rnd(2, 2, 3, 3, 3, seed=6), rnd(2, 3, 7, seed=7), rnd(3, 5, 5, seed=8),    # unbatched
          rnd(2, 3, 6, seed=9), rnd(2, 2, 4, 5, seed=10), rnd(1, 2, 3, 3, 3, seed=11),
          rnd(3, 4, 4, seed=12)]   # unbatched


def _to_ms(net, tnet):
    from msmigrate.weights import load_torch_state_dict
    load_torch_state_dict(net, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)


def test_lazy_layers():
    import mindspore as ms
    import torch

    code, sites = convert_snippet(SRC)
    assert not [s.api for s in sites if s.status == TODO], code
    tns = load_torch(SRC)
    mod, _, _ = load_converted(SRC)
    torch.manual_seed(0)
    # a fresh one computes in training mode, as torch's (batch statistics)
    fresh_t, fresh_m = tns["fresh"](), mod.fresh()
    assert_close(fresh_m(ms.Tensor(INPUTS[3])), fresh_t(torch.from_numpy(INPUTS[3])), 1e-4, 1e-5, "fresh")
    for tl, ml, x in zip(tns["layers"](), mod.layers(), INPUTS):
        tx, mx = torch.from_numpy(x), ms.Tensor(x)
        tl(tx)
        ml(mx)          # built here
        _to_ms(ml, tl)
        for train in (True, False):
            tl.train(train)
            ml.set_train(train)
            assert_close(ml(mx), tl(tx), 1e-4, 1e-5, f"{type(tl).__name__} train={train}")
        if hasattr(tl, "running_mean") and tl.running_mean is not None:
            assert_close(ml.running_mean, tl.running_mean, 1e-5, 1e-6, "running_mean")
        txg = tx.clone().requires_grad_(True)
        w = np.random.default_rng(0).standard_normal(tuple(tl(tx).shape)).astype(np.float32)
        (tl(txg) * torch.from_numpy(w)).sum().backward()
        g = ms.grad(lambda v: (ml(v) * ms.Tensor(w)).sum())(mx)
        assert_close(g, txg.grad, 1e-4, 1e-5, f"{type(tl).__name__} input gradient")

    tnet, mnet = tns["make"](), mod.make()
    tnet(torch.from_numpy(IMG))
    mnet(ms.Tensor(IMG))
    names = [p.name for p in mnet.trainable_params()]
    assert len(names) == len(set(names)) and "head.1.layer.weight" in names, names
    _to_ms(mnet, tnet)
    for train in (False, True):
        tnet.train(train)
        mnet.set_train(train)
        assert_close(mnet(ms.Tensor(IMG)), tnet(torch.from_numpy(IMG)), 1e-4, 1e-5, f"Net train={train}")
    assert_close(mnet.bn.running_var, tnet.bn.running_var, 1e-5, 1e-6, "Net running_var")
