"""Parameters the loss did not use (issue 12): torch leaves their .grad None after backward() and its optimizers
skip them in step(); MindSpore's grad returns zeros and the converted optimizer moved them (momentum from earlier
steps, weight decay, AdamW's decay) and updated their state. jcjohnson's dynamic_net (a middle layer used 0-3
times per step) was 1.4e-4 off torch from its 4th loss.

The converted step now reads which parameters the loss reached from PyNative's autograd graph
(_ms_compat.value_and_grad_reached): the others get a None gradient, which the optimizers skip
(_skipping_unreached), a hand-written optimizer sees as `p.grad is None`, and `.grad` reads see as None. Each
program runs in torch and converted (PYNATIVE: the mode the converted program sets is replaced) on the same
initial weights and inputs; the losses of every step and the final weights must agree."""
from __future__ import annotations

import hashlib
import importlib

import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .parity import harness as H  # noqa: E402

NET = '''
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 6)
        self.mid = torch.nn.Linear(6, 6)
        self.side = torch.nn.Linear(4, 2)
        self.out = torch.nn.Linear(6, 2)

    def forward(self, x, k):
        h = self.a(x).clamp(min=0)
        for _ in range(k):
            h = self.mid(h).clamp(min=0)
        # used on every step with an exactly-zero gradient: torch's .grad is a zero tensor (not None), so weight
        # decay and momentum still move it
        return self.out(h) + 0.0 * self.side(x)


model = Net()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) * 0.3)
x = torch.linspace(-1, 1, 24).reshape(6, 4)
y = torch.linspace(0, 1, 12).reshape(6, 2)
losses = []
'''

LOOP = '''
opt = torch.optim.{optimizer}
for step, k in enumerate([1, 0, 0, 2, 0, 1]):
    opt.zero_grad({clear})
    loss = ((model(x, k) - y) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
weights = list(model.parameters()) + [torch.tensor(losses)]
'''


def run_both(src: str, mode: str = "PYNATIVE_MODE"):
    """The converted program run in `mode` and the torch program: their `weights` lists agree. Returns the
    converted code."""
    code, sites = H.convert_snippet(src)
    H.no_todo(sites)
    assert "ms.set_context(mode=ms.GRAPH_MODE)" in code, code
    code = code.replace("ms.set_context(mode=ms.GRAPH_MODE)", f"ms.set_context(mode=ms.{mode})")
    name = "ms_unused_" + hashlib.sha1(code.encode()).hexdigest()[:16]
    (H._TMP / f"{name}.py").write_text(code, encoding="utf-8")
    H.load_converted("x = 1\n")     # the whole helper imported as _ms_compat
    try:
        mod = importlib.import_module(name)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    want = H.load_torch(src)["weights"]
    assert len(mod.weights) == len(want)
    for i, (got, ref) in enumerate(zip(mod.weights, want)):
        H.assert_close(got, ref.detach(), rtol=1e-5, atol=2e-5,
                       what=f"{mode} {'losses' if i == len(want) - 1 else f'parameter {i}'}")
    return code


@pytest.mark.parametrize("optimizer", [
    "SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.05)",
    "Adam(model.parameters(), lr=0.01, weight_decay=0.05)",
    "AdamW(model.parameters(), lr=0.01, weight_decay=0.05)",
    "RMSprop(model.parameters(), lr=0.01, momentum=0.5, weight_decay=0.05)",
])
def test_a_layer_skipped_on_some_steps_does_not_move(optimizer):
    code = run_both(NET + LOOP.format(optimizer=optimizer, clear=""))
    assert "_ms_compat.value_and_grad_reached(forward_fn, opt.parameters)" in code, code


def test_set_to_none_false_keeps_zero_gradients():
    """zero_grad(set_to_none=False): a parameter that had a gradient keeps a zero one and momentum and weight
    decay move it on the steps that skip it; before its first use its .grad is None and it stays."""
    src = NET + LOOP.format(optimizer="SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.05)",
                            clear="set_to_none=False")
    code = run_both(src)
    assert "zeroed=True" in code, code


def test_an_optimizer_counting_one_step_for_all_refuses():
    """MindSpore's Adamax counts one step for all its parameters where torch counts one per parameter: a step
    skipping a parameter stops with MigrationError instead of a different bias correction."""
    src = NET + LOOP.format(optimizer="Adamax(model.parameters(), lr=0.01)", clear="")
    with pytest.raises(Exception) as err:
        run_both(src)
    assert type(err.value).__name__ == "MigrationError" and "Adamax" in str(err.value), err.value


HAND = '''
from torch.optim import Optimizer


class DecayingSGD(Optimizer):
    def __init__(self, params, lr=0.1, weight_decay=0.05):
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.mul_(1 - group["lr"] * group["weight_decay"])
                p.add_(p.grad, alpha=-group["lr"])
'''


def test_a_hand_written_optimizer_sees_none_for_an_unused_parameter():
    src = NET + HAND + LOOP.format(optimizer="DecayingSGD(model.parameters())", clear="").replace(
        "opt = torch.optim.", "opt = ")
    run_both(src)


def test_grad_is_none_read_in_user_code():
    """`p.grad is None` after the step: True for the parameters the loss did not reach."""
    src = NET + '''
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
unused = []
for step, k in enumerate([1, 0, 2, 0]):
    opt.zero_grad()
    loss = ((model(x, k) - y) ** 2).mean()
    loss.backward()
    opt.step()
    unused.append(sum(p.grad is None for p in model.parameters()))
    losses.append(loss.item())
weights = list(model.parameters()) + [torch.tensor(unused, dtype=torch.float32), torch.tensor(losses)]
'''
    run_both(src)


def test_clipping_and_accumulation_skip_an_unused_parameter():
    """clip_grad_norm_ leaves a None .grad out of the norm; gradients summed over two backward()s before one step:
    a parameter either reached has a gradient (k=1 then k=0), one neither reached has none (k=0 twice)."""
    src = NET + '''
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.05)
for step, k in enumerate([1, 0, 0, 0, 2, 0]):
    loss = ((model(x, k) - y) ** 2).mean()
    loss.backward()
    if step % 2 == 1:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        opt.zero_grad()
    losses.append(loss.item())
weights = list(model.parameters()) + [torch.tensor(losses)]
'''
    code = run_both(src)
    assert "accumulate_grads" in code and "clip_grad_norm(" in code, code


def test_adam_counts_steps_per_parameter_in_its_state_dict():
    """torch's Adam counts each parameter's own steps (bias correction, state_dict()['state'][i]['step']); a
    layer skipped on three of six steps has taken three."""
    src = NET + LOOP.format(optimizer="Adam(model.parameters(), lr=0.01)", clear="") + '''
state = opt.state_dict()["state"]
weights.append(torch.tensor([float(state[i]["step"]) for i in range(len(state))]))
'''
    run_both(src)
