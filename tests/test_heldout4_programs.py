"""Constructs found by bench/real_world.py --set heldout4 (bench/_rw_heldout4.py: MorvanZhou/PyTorch-Tutorial,
hunkim/PyTorchZeroToAll, lucidrains' lion, byol and mlp-mixer) in programs the converter was not built against,
each reduced to a minimal torch snippet of our own run against its conversion."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .parity.harness import load_converted  # noqa: E402
from .test_train_loop import MLP, _batches, run_both  # noqa: E402

OPTIMIZER_PER_NETWORK = MLP + """
net_sgd, net_adam = Net(), Net()
nets = [net_sgd, net_adam]
optimizers = [torch.optim.SGD(net_sgd.parameters(), lr=0.1, momentum=0.8),
              torch.optim.Adam(net_adam.parameters(), lr=0.01)]
criterion = nn.CrossEntropyLoss()


def make():
    return {"model": net_sgd, "other": net_adam}


def train(objs, batches):
    losses = []
    for x, y in batches:
        for net, opt in zip(nets, optimizers):
            loss = criterion(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_optimizer_bound_by_the_loop_itself(mode):
    """MorvanZhou's 306_optimizer / 504_batch_normalization: `for net, opt in zip(nets, optimizers)` around the
    step. The step's definitions read the optimizer where they are made (`opt.parameters`, `opt(grads)`): made
    before the loop they raised NameError; made in it (run op by op, GRAPH too), each network trains under its own
    optimizer (losses and final weights of both networks as torch's). One mode a run: the networks and optimizers
    are module-level."""
    # a source of its own per mode: load_converted imports one module per source, whose module-level optimizers
    # would carry the other mode's momentum into this run
    code, sites, results = run_both(OPTIMIZER_PER_NETWORK + f"# {mode}\n", _batches(n=3), modes=(mode,),
                                    models=("model", "other"))
    assert set(results) == {mode}
    assert not [s for s in sites if s.status == TODO], [s for s in sites if s.status == TODO]
    assert "grad_fn = _ms_compat.value_and_grad_reached(forward_fn, opt.parameters)" in code, code


HAND_WRITTEN_OPTIMIZER = MLP + """
from torch.optim import Optimizer


class SignSGD(Optimizer):
    def __init__(self, params, lr=0.01):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad.sign(), alpha=-group["lr"])


def make():
    model = Net()
    return {"model": model, "opt": SignSGD(model.parameters(), lr=0.01)}


def train(objs, batches):
    model, optimizer = objs["model"], objs["opt"]
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
"""


def test_hand_written_optimizer_trains_as_in_torch():
    """lucidrains' Lion: a torch.optim.Optimizer subclass whose step() reads p.grad. The converted train step
    calls the optimizer with the gradients, and MindSpore's Optimizer base raised a bare NotImplementedError
    (GRAPH: a compile error); then a TODO that raised MigrationError. Now the class is rebased on
    _ms_compat.HandWrittenOptimizer and its own step() runs with the gradients as p.grad: per-step losses and
    final weights as torch's, PYNATIVE and GRAPH (tests/test_hand_written_optimizers.py: more optimizers)."""
    code, sites, _ = run_both(HAND_WRITTEN_OPTIMIZER, _batches(n=3))
    assert "class SignSGD(_ms_compat.HandWrittenOptimizer):" in code, code
    assert not [s for s in sites if s.status == TODO], [s for s in sites if s.status == TODO]


def test_hand_written_optimizer_converted_again_is_unchanged():
    """Converting the converted file again changes nothing (crash_free's idempotence check on timm's
    optim/lars.py, madgrad.py, nadam.py)."""
    from msmigrate.converter import convert_code
    once, _, _ = convert_code(HAND_WRITTEN_OPTIMIZER)
    twice, _, _ = convert_code(once)
    assert once.count("(_ms_compat.HandWrittenOptimizer)") == 1
    assert twice == once
