"""Gradients torch keeps in .grad from one training loop to the next (msmigrate/grad_carry.py and
_ms_compat.grad_sum): two loops over one model and optimizer, with and without zero_grad(), run in torch
and converted; the parameters after both loops must agree, or the converted program must stop with
MigrationError naming the original line."""
from __future__ import annotations

import re

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .parity.harness import assert_close, load_converted, load_torch  # noqa: E402

HEAD = '''
import torch
lin = torch.nn.Linear(3, 2)
with torch.no_grad():
    lin.weight.copy_(torch.tensor([[0.2, -0.4, 0.1], [0.3, 0.5, -0.2]]))
    lin.bias.copy_(torch.tensor([0.1, -0.1]))
inp = torch.tensor([[1.0, 2.0, -1.0], [0.5, -0.5, 2.0]])
tgt = torch.tensor([[0.5, -1.0], [1.0, 0.0]])
opt = torch.optim.SGD(lin.parameters(), lr=0.05, momentum=0.5)
'''
TAIL = '''
weight = lin.weight
bias = lin.bias
'''

# shapes whose converted program computes torch's values
CONVERTED = {
    # lin.zero_grad() between them empties the held sum of lin's parameters (_ms_compat.clear_module_grads)
    "module_zero_grad_between_uncleared_loops": '''
for epoch in range(2):
    loss = ((lin(inp) - tgt) ** 2).mean()
    loss.backward()
    opt.step()
lin.zero_grad()
for epoch in range(2):
    loss = ((lin(inp) * 2 - tgt) ** 2).mean()
    loss.backward()
    opt.step()
''',
    # neither loop clears: the second loop's first step applies the first loop's sum plus its own gradient
    "two_loops_without_zero_grad": '''
for epoch in range(3):
    loss = ((lin(inp) - tgt) ** 2).mean()
    loss.backward()
    opt.step()
for epoch in range(2):
    loss = ((lin(inp) * 2 - tgt) ** 2).mean()
    loss.backward()
    opt.step()
''',
    # zero_grad() only before each loop: each loop sums its own gradients
    "zero_grad_before_each_loop": '''
opt.zero_grad()
for epoch in range(3):
    loss = ((lin(inp) - tgt) ** 2).mean()
    loss.backward()
    opt.step()
opt.zero_grad()
for epoch in range(2):
    loss = ((lin(inp) * 2 - tgt) ** 2).mean()
    loss.backward()
    opt.step()
''',
    # a per-epoch function without zero_grad(): the sum spans its calls
    "per_epoch_function_without_zero_grad": '''
def train(scale):
    for i in range(2):
        loss = ((lin(inp) * scale - tgt) ** 2).mean()
        loss.backward()
        opt.step()
train(1.0)
train(2.0)
''',
    # zero_grad() at the top of each epoch, none in the batch loop
    "zero_grad_per_epoch": '''
for epoch in range(2):
    opt.zero_grad()
    for i in range(3):
        loss = ((lin(inp) - tgt) ** 2).mean()
        loss.backward()
        opt.step()
''',
    # a loop clearing at the top of each iteration, then zero_grad(), then a loop clearing nothing
    "cleared_loop_then_zero_grad_then_uncleared_loop": '''
for epoch in range(2):
    opt.zero_grad()
    loss = ((lin(inp) - tgt) ** 2).mean()
    loss.backward()
    opt.step()
opt.zero_grad()
for epoch in range(2):
    loss = ((lin(inp) * 2 - tgt) ** 2).mean()
    loss.backward()
    opt.step()
''',
}

# PaLM's train.py shape, twice (bench/_rw_heldout18.py): each loop clears after its step, at the end of every
# iteration, so the first leaves no gradient for the second's first step
CONVERTED["loops_ending_cleared"] = '''
for epoch in range(2):
    loss = ((lin(inp) - tgt) ** 2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
for epoch in range(2):
    loss = ((lin(inp) * 2 - tgt) ** 2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
'''

# shapes whose second loop's first step would need gradients another step left: a raising TODO
RAISING = {
    # the first loop's last iteration leaves before its zero_grad(): its gradient stays
    "loop_leaving_before_its_clear": '''
for epoch in range(2):
    loss = ((lin(inp) - tgt) ** 2).mean()
    loss.backward()
    opt.step()
    if epoch == 1:
        continue
    opt.zero_grad()
for epoch in range(2):
    loss = ((lin(inp) * 2 - tgt) ** 2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
''',
    # the first loop leaves its last gradient; the second adds to it
    "cleared_loop_then_uncleared_loop": '''
for epoch in range(2):
    opt.zero_grad()
    loss = ((lin(inp) - tgt) ** 2).mean()
    loss.backward()
    opt.step()
for epoch in range(2):
    loss = ((lin(inp) * 2 - tgt) ** 2).mean()
    loss.backward()
    opt.step()
''',
    # the second loop clears at the end of its iterations: its first step adds to the first loop's last gradient
    "cleared_loop_then_loop_clearing_after_step": '''
for epoch in range(2):
    opt.zero_grad()
    loss = ((lin(inp) - tgt) ** 2).mean()
    loss.backward()
    opt.step()
for epoch in range(2):
    loss = ((lin(inp) * 2 - tgt) ** 2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
''',
}


@pytest.mark.parametrize("shape", sorted(CONVERTED))
def test_loops_sharing_gradients_match_torch(shape):
    src = HEAD + CONVERTED[shape] + TAIL
    mod, code, sites = load_converted(src)
    ref = load_torch(src)
    for name in ("weight", "bias"):
        assert_close(getattr(mod, name), ref[name].detach(), rtol=1e-5, atol=1e-6, what=f"{shape}: {name}")
    assert not [s for s in sites if s.status == TODO], code
    assert ".backward()" not in code


@pytest.mark.parametrize("shape", sorted(RAISING))
def test_loops_missing_earlier_gradients_raise(shape):
    src = HEAD + RAISING[shape] + TAIL
    lines = src.splitlines()
    # the backward() the TODO that is reached names: the second loop's, the first's where both are TODOs
    backwards = [i + 1 for i, text in enumerate(lines) if text.strip() == "loss.backward()"]
    second = backwards[0] if shape.startswith("module_zero_grad") else backwards[-1]
    with pytest.raises(Exception) as err:
        load_converted(src)
    assert type(err.value).__name__ == "MigrationError", err.value
    assert re.search(rf":{second}\b", str(err.value)), (second, str(err.value))


# ------------------------------------------------------------------ `.grad` read after backward()
GRAD_HELPER = '''

def grad_norm(model):
    total = 0.0
    for p in model.parameters():
        if p.grad is not None:
            total += p.grad.norm().item() ** 2
    return total ** 0.5


logged = []
'''

GRAD_READS = {
    # a norm summed by hand between backward() and step(), a mean after the step, a helper that skips None
    "norm_mean_and_helper": '''
for epoch in range(3):
    opt.zero_grad()
    loss = ((lin(inp) - tgt) ** 2).mean()
    loss.backward()
    total_norm = sum(p.grad.norm() ** 2 for p in lin.parameters()) ** 0.5
    logged.append(total_norm.item())
    opt.step()
    logged.append(lin.weight.grad.abs().mean().item())
    logged.append(grad_norm(lin))
''',
    # clip_grad_norm_'s result logged; the gradients read after it are the clipped ones
    "clipped": '''
for epoch in range(3):
    opt.zero_grad()
    loss = ((lin(inp) * 3 - tgt) ** 2).mean()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(lin.parameters(), 0.5)
    opt.step()
    logged.append(norm.item())
    logged.append(grad_norm(lin))
''',
    # read before the clipping (a helper), the norm clip_grad_norm_ returns, read after it: unclipped, then clipped
    "read_before_clipping": '''
for epoch in range(3):
    opt.zero_grad()
    loss = ((lin(inp) * 3 - tgt) ** 2).mean()
    loss.backward()
    logged.append(grad_norm(lin))
    norm = torch.nn.utils.clip_grad_norm_(lin.parameters(), 0.5)
    logged.append(grad_norm(lin))
    opt.step()
    logged.append(norm.item())
''',
    # a GradScaler (Pytorch-UNet's loop): after scaler.step() torch's .grad is unscaled (disabled here on CPU,
    # scaled-then-unscaled on CUDA), then clipped; logged per parameter after the step
    "grad_scaler_unscaled_and_clipped": '''
scaler = torch.cuda.amp.GradScaler(enabled=False)
for epoch in range(3):
    opt.zero_grad(set_to_none=True)
    loss = ((lin(inp) * 3 - tgt) ** 2).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(lin.parameters(), 0.5)
    scaler.step(opt)
    scaler.update()
    for name, value in lin.named_parameters():
        logged.append(value.grad.abs().sum().item())
''',
    # a check whose conversion writes the reads anew (`(isinf(g) | isnan(g)).any()` -> reduce_any(...)): the
    # reads were left as `value.grad`, MindSpore's AttributeError (Pytorch-UNet's gradient histograms)
    "finiteness_check_rewritten": '''
for epoch in range(3):
    opt.zero_grad()
    loss = ((lin(inp) - tgt) ** 2).mean()
    loss.backward()
    opt.step()
    for name, value in lin.named_parameters():
        if not (torch.isinf(value.grad) | torch.isnan(value.grad)).any():
            logged.append(value.grad.abs().sum().item())
''',
    # a loop clearing nothing: .grad is the growing sum
    "uncleared_sum": '''
for epoch in range(3):
    loss = ((lin(inp) - tgt) ** 2).mean()
    loss.backward()
    opt.step()
    logged.append(lin.bias.grad.sum().item())
''',
}


@pytest.mark.parametrize("shape", sorted(GRAD_READS))
def test_grad_reads_after_the_step_match_torch(shape):
    src = HEAD + GRAD_HELPER + GRAD_READS[shape] + TAIL
    mod, code, sites = load_converted(src)
    ref = load_torch(src)
    assert len(ref["logged"]) >= 3
    assert_close(list(mod.logged), list(ref["logged"]), rtol=1e-5, atol=1e-6, what=f"{shape}: logged values")
    for name in ("weight", "bias"):
        assert_close(getattr(mod, name), ref[name].detach(), rtol=1e-5, atol=1e-6, what=f"{shape}: {name}")
    assert not [s for s in sites if s.status == TODO], code
    assert "_ms_compat.keep_grads(" in code


def test_grad_read_before_the_backward_raises():
    """After zero_grad() torch's .grad is None until backward(); a read there would see the last step's
    gradients: the step keeps none and the read stays a TODO that raises naming its line."""
    src = HEAD + GRAD_HELPER + '''
for epoch in range(2):
    opt.zero_grad()
    logged.append(lin.weight.grad is None)
    loss = ((lin(inp) * 3 - tgt) ** 2).mean()
    loss.backward()
    opt.step()
''' + TAIL
    line = [i + 1 for i, text in enumerate(src.splitlines()) if "lin.weight.grad is None" in text][0]
    with pytest.raises(Exception) as err:
        load_converted(src)
    assert type(err.value).__name__ == "MigrationError", err.value
    assert re.search(rf":{line}\b", str(err.value)), (line, str(err.value))


def test_grad_read_after_a_step_keeping_none_raises():
    """A step that keeps no gradients (accumulation under an `if`) drops those an earlier step kept: a later read
    raises naming its line instead of reading the earlier step's gradients."""
    src = HEAD + GRAD_HELPER + '''
for epoch in range(2):
    opt.zero_grad()
    loss = ((lin(inp) - tgt) ** 2).mean()
    loss.backward()
    opt.step()
    logged.append(grad_norm(lin))
opt.zero_grad()
for i in range(4):
    loss = ((lin(inp) * 2 - tgt) ** 2).mean()
    loss.backward()
    if (i + 1) % 2 == 0:
        opt.step()
        opt.zero_grad()
    logged.append(grad_norm(lin))
''' + TAIL
    ref = load_torch(src)
    assert len(ref["logged"]) == 6
    line = [i + 1 for i, text in enumerate(src.splitlines()) if "if p.grad is not None" in text][0]
    with pytest.raises(Exception) as err:
        load_converted(src)
    assert type(err.value).__name__ == "MigrationError", err.value
    assert re.search(rf":{line}\b", str(err.value)), (line, str(err.value))


# ------------------------------------------------------------------ step functions clearing no gradients
# A per-batch step function whose body clears nothing: torch applies every gradient since the last clear, in
# whichever caller it is (grad_carry.summing_step_functions). Three steps at least, so that a step applying
# only its own gradients ends elsewhere.
STEP_FUNCTIONS = {
    # lin.zero_grad() before each call: the held sum of lin's parameters emptied (clear_module_grads)
    "module_zero_grad_in_the_caller": '''
def train_step(x, y):
    loss = ((lin(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
for i in range(3):
    lin.zero_grad()
    train_step(inp * (i + 1), tgt)
''',
    # a per-epoch function clearing nothing, its caller clearing by the model: the sum starts again there
    "per_epoch_function_cleared_by_the_model": '''
def train(scale):
    for i in range(2):
        loss = ((lin(inp) * scale - tgt) ** 2).mean()
        loss.backward()
        opt.step()
for epoch in range(3):
    lin.zero_grad()
    train(1.0 + epoch)
''',
    "step_function_without_zero_grad": '''
def train_step(x, y):
    loss = ((lin(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
for i in range(3):
    train_step(inp * (i + 1), tgt)
''',
    # zero_grad() before each call in the first loop, none in the second: its steps add up from the first call
    "zero_grad_in_some_callers": '''
def train_step(x, y):
    loss = ((lin(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
for i in range(2):
    opt.zero_grad()
    train_step(inp * (i + 1), tgt)
for i in range(3):
    train_step(inp - i, tgt)
''',
    # a trainer's method; the caller clears through the trainer's attribute once, between two loops
    "trainer_method_without_zero_grad": '''
class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def train_step(self, x, y):
        loss = ((self.model(x) - y) ** 2).mean()
        loss.backward()
        self.optimizer.step()
        return loss.item()

trainer = Trainer(lin, opt)
losses = [trainer.train_step(inp * (i + 1), tgt) for i in range(3)]
trainer.optimizer.zero_grad()
for i in range(2):
    losses.append(trainer.train_step(inp - i, tgt))
''',
    # the model and optimizer passed in, the optimizer under another name in the caller
    "step_function_taking_its_optimizer": '''
def train_step(model, optim, x, y):
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optim.step()
optimizer = opt
for i in range(3):
    if i == 2:
        optimizer.zero_grad()
    train_step(lin, optimizer, inp * (i + 1), tgt)
''',
    # a per-epoch function clearing nothing, its caller clearing before each call: the sum starts again there
    "per_epoch_function_cleared_by_its_caller": '''
def train(scale):
    for i in range(2):
        loss = ((lin(inp) * scale - tgt) ** 2).mean()
        loss.backward()
        opt.step()
for epoch in range(3):
    opt.zero_grad()
    train(1.0 + epoch)
''',
}

# step functions whose sum msmigrate cannot hold: the backward() in the function raises
STEP_FUNCTIONS_RAISING = {
    # `p.grad = None` clears one parameter another way: the held sum cannot follow it
    "grad_set_to_none_in_the_caller": '''
def train_step(x, y):
    loss = ((lin(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
for i in range(3):
    lin.weight.grad = None
    train_step(inp * (i + 1), tgt)
''',
    # a loop stepping fresh gradients leaves its last one for the function's first call to add to
    "after_a_loop_clearing_its_own": '''
def train_step(x, y):
    loss = ((lin(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
for i in range(2):
    opt.zero_grad()
    loss = ((lin(inp) * 2 - tgt) ** 2).mean()
    loss.backward()
    opt.step()
for i in range(3):
    train_step(inp * (i + 1), tgt)
''',
}


@pytest.mark.parametrize("shape", sorted(STEP_FUNCTIONS))
def test_step_functions_clearing_nothing_match_torch(shape):
    src = HEAD + STEP_FUNCTIONS[shape] + TAIL
    mod, code, sites = load_converted(src)
    ref = load_torch(src)
    for name in ("weight", "bias"):
        assert_close(getattr(mod, name), ref[name].detach(), rtol=1e-5, atol=1e-6, what=f"{shape}: {name}")
    if "losses" in ref:
        assert_close(list(mod.losses), list(ref["losses"]), rtol=1e-5, atol=1e-6, what=f"{shape}: losses")
    assert not [s for s in sites if s.status == TODO], code
    assert "_ms_compat.grad_sum(" in code


@pytest.mark.parametrize("shape", sorted(STEP_FUNCTIONS_RAISING))
def test_step_functions_missing_gradients_raise(shape):
    src = HEAD + STEP_FUNCTIONS_RAISING[shape] + TAIL
    lines = src.splitlines()
    first = [i + 1 for i, text in enumerate(lines) if text.strip() == "loss.backward()"][0]
    with pytest.raises(Exception) as err:
        load_converted(src)
    assert type(err.value).__name__ == "MigrationError", err.value
    assert re.search(rf":{first}\b", str(err.value)), (first, str(err.value))


def test_step_function_cleared_in_another_module_raises(tmp_path):
    """A step function clearing nothing, called from a module that clears: that module's zero_grad() is not kept
    for the sum, so the step is a raising TODO naming its backward()."""
    from msmigrate.converter import convert_tree

    src = tmp_path / "src"
    src.mkdir()
    (src / "steps.py").write_text(HEAD + '''
def train_step(x, y):
    loss = ((lin(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
''')
    (src / "main.py").write_text('''
from steps import train_step, opt, inp, tgt
for i in range(3):
    opt.zero_grad()
    train_step(inp, tgt)
''')
    convert_tree(src, tmp_path / "out", jobs=1)
    converted = (tmp_path / "out" / "steps.py").read_text()
    line = [i + 1 for i, t in enumerate((src / "steps.py").read_text().splitlines()) if "loss.backward()" in t][0]
    assert f"'steps.py:{line}'" in converted or f"'steps:{line}'" in converted, converted
    assert "grad_sum" not in converted


REUSED_ID = '''
import torch
import torch.nn as nn


def make(w):
    lin = nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor(w))
        lin.bias.zero_()
    return lin


def optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=0.1)


def train(model, opt, x, steps):
    for _ in range(steps):
        loss = (model(x) ** 2).sum()
        loss.backward()
        opt.step()
'''


def test_sum_of_a_collected_optimizer_is_not_inherited_through_its_id():
    """grad_sum holds torch's growing .grad under id(optimizer); Python gives a new optimizer the id of a collected
    one (an optimizer made per phase of a program), and the new one summed the old one's gradients into its first
    step, silently (the peer suite's MultiplicativeLR case 8 changed values run after another case). The state
    such a reuse leaves is made here directly: the first optimizer's held sum found under the second's id."""
    import mindspore as ms
    import torch

    w_a, w_b = [[0.2, -0.4, 0.1], [0.3, 0.5, -0.2]], [[0.1, 0.2, -0.3], [-0.5, 0.4, 0.6]]
    x = [[1.0, 2.0, -1.0], [0.5, -0.5, 2.0]]
    tns = load_torch(REUSED_ID)
    t_b = tns["make"](w_b)
    tns["train"](t_b, tns["optimizer"](t_b), torch.tensor(x), 2)

    mod, code, _ = load_converted(REUSED_ID)
    assert "_ms_compat.grad_sum(opt, grads)" in code, code
    import _ms_compat
    held = _ms_compat._HELD_GRADIENTS
    m_a = mod.make(w_a)
    opt_a = mod.optimizer(m_a)
    mod.train(m_a, opt_a, ms.Tensor(x), 2)
    m_b = mod.make(w_b)
    opt_b = mod.optimizer(m_b)
    held[(id(opt_b), "sum")] = held.pop((id(opt_a), "sum"))      # what a reused id finds
    mod.train(m_b, opt_b, ms.Tensor(x), 2)
    assert_close([m_b.weight, m_b.bias], [t_b.weight, t_b.bias], 1e-6, 1e-6, "second optimizer's parameters")
