"""A module that trains itself: a method other than forward holds the zero_grad/backward/step loop, with an
optimizer the module keeps as an attribute, and the method is named `train` with arguments of its own
(pytorch/examples' mnist_forward_forward). The loop becomes a train step inside the method; the call keeps
the program's own `train` (it is not nn.Module.train); the optimizer's state is no part of the weights."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .test_train_loop import run_both  # noqa: E402

SRC = '''
import torch
import torch.nn as nn


class SelfTrained(nn.Linear):
    def __init__(self, i, o, steps):
        super().__init__(i, o)
        self.opt = torch.optim.Adam(self.parameters(), lr=0.05)
        self.steps = steps

    def forward(self, x):
        return torch.relu(torch.mm(x, self.weight.T) + self.bias.unsqueeze(0))

    def train(self, x_pos, x_neg):
        losses = []
        for i in range(self.steps):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            loss = torch.log1p(torch.exp(torch.cat([-g_pos + 2.0, g_neg - 2.0]))).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            losses.append(loss.item())
        return losses


def make():
    return {"model": SelfTrained(4, 3, 4)}


def train(objs, batches):
    x, _ = batches[0]
    return objs["model"].train(x, -x)
'''


def test_a_module_method_that_trains_the_module_matches_torch():
    x = np.random.default_rng(3).standard_normal((6, 4)).astype(np.float32)
    code, sites, results = run_both(SRC, [(x, np.zeros(6, np.int64))])
    assert "set_train(x" not in code and ".train(x, -x)" in code, code
    assert "loss.backward()" not in code, code
    assert not [s for s in sites if s.status == TODO], code
    assert len(results["graph"]) == 4 and results["graph"][0] != results["graph"][-1]


def test_the_optimizer_state_is_no_part_of_the_weights():
    """load_torch_state_dict(strict) of a torch state_dict: a torch optimizer is no Module, so torch's state_dict
    never has its moments; the converted cell keeps self.opt as a plain attribute (no sub-cell), so it holds none
    either (tests/test_held_optimizers.py)."""
    import torch
    from msmigrate.weights import load_torch_state_dict, optimizer_state
    from tests.parity.harness import load_converted, load_torch

    torch.manual_seed(0)
    tnet = load_torch(SRC)["make"]()["model"]
    net = load_converted(SRC)[0].make()["model"]
    assert not optimizer_state(net) and "opt" not in net._cells and net.opt.parameters, net._cells
    report = load_torch_state_dict(net, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
    assert sorted(k for _, k in report.loaded) == ["bias", "weight"], report.loaded
    np.testing.assert_array_equal(net.weight.asnumpy(), tnet.weight.detach().numpy())
