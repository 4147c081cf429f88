"""Parameters the loss did not use (issue 12): torch leaves their .grad None after backward() and its optimizers
skip them in step(); MindSpore's grad returns zeros and the converted optimizer moved them (momentum from earlier
steps, weight decay, AdamW's decay) and updated their state. jcjohnson's dynamic_net (a middle layer used 0-3
times per step) was 1.4e-4 off torch from its 4th loss.

The converted step now reads which parameters the loss reached from PyNative's autograd graph
(_ms_compat.value_and_grad_reached): the others get a None gradient, which the optimizers skip
(_skipping_unreached), a hand-written optimizer sees as `p.grad is None`, and `.grad` reads see as None. In GRAPH
mode (converted programs' default) the compiled step's gradients were zeros for them, and SGD's momentum and weight
decay, Adam's and AdamW's moved them: the step now runs op by op the first time it meets arguments of a new kind,
which records what the loss reached, and the compiled step puts the others back (skipping_unreached_compiled).
Each program runs in torch and converted, in PYNATIVE and GRAPH mode, on the same initial weights and inputs; the
losses of every step and the final weights must agree."""
from __future__ import annotations

import hashlib
import importlib
import sys

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


def run_both(src: str, mode: str = "PYNATIVE_MODE", probed: dict = None):
    """The converted program run in `mode` and the torch program: their `weights` lists agree. Returns the
    converted code. probed: filled with what the compiled steps recorded (GRAPH: the kinds of their arguments
    -> which weights the loss reached, or that the step branches on tensor values)."""
    code, sites = H.convert_snippet(src)
    H.no_todo(sites)
    assert "ms.set_context(mode=ms.GRAPH_MODE)" in code, code
    code = code.replace("ms.set_context(mode=ms.GRAPH_MODE)", f"ms.set_context(mode=ms.{mode})")
    name = "ms_unused_" + hashlib.sha1(code.encode()).hexdigest()[:16]
    (H._TMP / f"{name}.py").write_text(code, encoding="utf-8")
    H.load_converted("x = 1\n")     # the whole helper imported as _ms_compat
    helper = sys.modules["_ms_compat"]
    reached_by_graph = getattr(helper, "_REACHED_BY_GRAPH", {})
    before = set(reached_by_graph)
    try:
        mod = importlib.import_module(name)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    if probed is not None:
        probed.update(v for k, v in reached_by_graph.items() if k not in before for v in v.items())
    want = H.load_torch(src)["weights"]
    assert len(mod.weights) == len(want)
    for i, (got, ref) in enumerate(zip(mod.weights, want)):
        H.assert_close(got, ref.detach(), rtol=1e-5, atol=2e-5,
                       what=f"{mode} {'losses' if i == len(want) - 1 else f'parameter {i}'}")
    return code


MODES = pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])


@MODES
@pytest.mark.parametrize("optimizer", [
    "SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.05)",
    "Adam(model.parameters(), lr=0.01, weight_decay=0.05)",
    "AdamW(model.parameters(), lr=0.01, weight_decay=0.05)",
    "RMSprop(model.parameters(), lr=0.01, momentum=0.5, weight_decay=0.05)",
])
def test_a_layer_skipped_on_some_steps_does_not_move(optimizer, mode):
    code = run_both(NET + LOOP.format(optimizer=optimizer, clear=""), mode)
    assert "_ms_compat.value_and_grad_reached(forward_fn, opt.parameters)" in code, code


@MODES
def test_set_to_none_false_keeps_zero_gradients(mode):
    """zero_grad(set_to_none=False): a parameter that had a gradient keeps a zero one and momentum and weight
    decay move it on the steps that skip it; before its first use its .grad is None and it stays."""
    src = NET + LOOP.format(optimizer="SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.05)",
                            clear="set_to_none=False")
    code = run_both(src, mode)
    assert "zeroed=True" in code, code


@MODES
def test_an_optimizer_counting_one_step_for_all_refuses(mode):
    """MindSpore's Adamax counts one step for all its parameters where torch counts one per parameter: a step
    skipping a parameter stops with MigrationError instead of a different bias correction."""
    src = NET + LOOP.format(optimizer="Adamax(model.parameters(), lr=0.01)", clear="")
    with pytest.raises(Exception) as err:
        run_both(src, mode)
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


@MODES
def test_a_hand_written_optimizer_sees_none_for_an_unused_parameter(mode):
    src = NET + HAND + LOOP.format(optimizer="DecayingSGD(model.parameters())", clear="").replace(
        "opt = torch.optim.", "opt = ")
    run_both(src, mode)


@MODES
def test_grad_is_none_read_in_user_code(mode):
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
    run_both(src, mode)


@MODES
def test_clipping_and_accumulation_skip_an_unused_parameter(mode):
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
    code = run_both(src, mode)
    assert "accumulate_grads" in code and "clip_grad_norm(" in code, code


@MODES
def test_adam_counts_steps_per_parameter_in_its_state_dict(mode):
    """torch's Adam counts each parameter's own steps (bias correction, state_dict()['state'][i]['step']); a
    layer skipped on three of six steps has taken three."""
    src = NET + LOOP.format(optimizer="Adam(model.parameters(), lr=0.01)", clear="") + '''
state = opt.state_dict()["state"]
weights.append(torch.tensor([float(state[i]["step"]) for i in range(len(state))]))
'''
    run_both(src, mode)


LEFTOVER = '''
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 6)
        self.head = torch.nn.Linear(6, 2)
        self.old_head = torch.nn.Linear(6, 3)     # defined, never used in forward (a leftover head)

    def forward(self, x):
        h = self.a(x).clamp(min=0)
        {forward}


model = Net()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) * 0.3)
xs = [torch.linspace(-1, 1, 24).reshape(6, 4) * (1 if step % 3 else -1) for step in range(6)]
y = torch.linspace(0, 1, 12).reshape(6, 2)
losses = []
opt = torch.optim.{optimizer}
for step in range(6):
    x = xs[step]
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
weights = list(model.parameters()) + [torch.tensor(losses)]
'''


@pytest.mark.parametrize("optimizer", [
    "SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.05)",
    "AdamW(model.parameters(), lr=0.01, weight_decay=0.05)",
])
def test_a_leftover_layer_does_not_move_in_a_compiled_step(optimizer):
    """GRAPH mode: the compiled step's gradients of old_head were zeros, and weight decay (SGD's, AdamW's) and
    SGD's momentum moved it. The first step runs op by op and records that the loss never reaches it; the
    later steps run compiled, and old_head and its optimizer state are put back after each."""
    probed = {}
    run_both(LEFTOVER.format(forward="return self.head(h)", optimizer=optimizer), "GRAPH_MODE", probed)
    assert [[p.name for _, p in v] for v in probed.values()] == [["old_head.weight", "old_head.bias"]], probed


def test_a_branch_on_a_tensor_choosing_layers_runs_op_by_op():
    """`if x.sum() > 0` in forward, compiled, chooses its way as the graph runs: which weights the loss reaches
    changes from step to step (old_head on steps 1, 2, 4, 5), which a probe of the first step cannot tell. The
    graph holds a Switch, so the step runs op by op, as torch."""
    probed = {}
    with pytest.warns(UserWarning, match="branches on tensor values"):
        run_both(LEFTOVER.format(forward="return self.head(h) + self.old_head(h)[:, :2] if x.sum() > 0 "
                                         "else self.head(h)",
                                 optimizer="SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.05)"),
                 "GRAPH_MODE", probed)
    assert list(probed.values()) == ["branches on tensor values"], probed


@MODES
def test_set_to_none_false_a_layer_first_used_later(mode):
    """zero_grad(set_to_none=False) with the middle layer unused on the first steps: its .grad is None (it does
    not move) until its first use, a zero tensor after (momentum and weight decay move it)."""
    src = NET + LOOP.format(optimizer="SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.05)",
                            clear="set_to_none=False").replace("[1, 0, 0, 2, 0, 1]", "[0, 0, 1, 0, 2, 0]")
    probed = {}
    run_both(src, mode, probed)
    if mode == "GRAPH_MODE":    # k=0 is met again, compiled: before and after the first use of `mid`
        assert sorted(probed) == [("tuple", ("int", k)) for k in range(3)], probed
