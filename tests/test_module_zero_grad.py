"""`model.zero_grad()` beside a step function that sums gradients across calls (grad_carry.py,
`_ms_compat.grad_sum`): torch clears the .grad of that module's parameters only, so the converted
`_ms_compat.clear_module_grads(model, where)` drops those entries of the held sum and keeps the others
(an optimizer over two modules, one of them cleared). Run in torch and converted, PYNATIVE and GRAPH
(the step compiled); the parameters after several steps must agree."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .parity.harness import load_converted, load_torch, program_weights_match_torch  # noqa: E402

HEAD = '''
import torch
enc = torch.nn.Linear(3, 4)
head = torch.nn.Linear(4, 2)
with torch.no_grad():
    enc.weight.copy_(torch.tensor([[0.2, -0.4, 0.1], [0.3, 0.5, -0.2], [-0.1, 0.2, 0.4], [0.6, -0.3, 0.05]]))
    enc.bias.copy_(torch.tensor([0.1, -0.1, 0.2, 0.0]))
    head.weight.copy_(torch.tensor([[0.5, -0.2, 0.3, 0.1], [-0.4, 0.2, 0.1, 0.3]]))
    head.bias.copy_(torch.tensor([0.05, -0.05]))
inp = torch.tensor([[1.0, 2.0, -1.0], [0.5, -0.5, 2.0]])
tgt = torch.tensor([[0.5, -1.0], [1.0, 0.0]])
opt = torch.optim.SGD(list(enc.parameters()) + list(head.parameters()), lr=0.05, momentum=0.5)

def train_step(x, y):
    loss = ((head(torch.tanh(enc(x))) - y) ** 2).mean()
    loss.backward()
    opt.step()
'''
TAIL = '''
weights = [enc.weight, enc.bias, head.weight, head.bias]
'''

CALLERS = {
    # both modules cleared before every step: each step applies its own gradients
    "every_step_both_modules": '''
for i in range(4):
    enc.zero_grad()
    head.zero_grad(set_to_none=True)
    train_step(inp * (i + 1), tgt)
''',
    # the modules in a list, cleared every second step: two steps' gradients summed in between
    "every_second_step_a_list_of_modules": '''
models = [enc, head]
for i in range(5):
    if i % 2 == 0:
        for m in models:
            m.zero_grad()
    train_step(inp - i, tgt)
''',
    # only the encoder cleared: the head's gradients keep growing over every call
    "only_some_parameters": '''
for i in range(4):
    enc.zero_grad()
    train_step(inp * (i + 1), tgt)
''',
    # a trainer's method clearing its model, then the caller clearing through the optimizer
    "trainer_clearing_its_model": '''
class Trainer:
    def __init__(self, model):
        self.model = model

    def clear(self):
        self.model.zero_grad(set_to_none=False)

trainer = Trainer(head)
for i in range(3):
    trainer.clear()
    train_step(inp + i, tgt)
opt.zero_grad()
for i in range(2):
    train_step(inp * 0.5, tgt)
''',
}


def _check(src, graph):
    code, _ = program_weights_match_torch(src, graph)
    assert "_ms_compat.clear_module_grads(" in code and "_ms_compat.grad_sum(" in code, code
    return code


@pytest.mark.parametrize("graph", [False, True], ids=["pynative", "graph"])
@pytest.mark.parametrize("shape", sorted(CALLERS))
def test_module_zero_grad_in_callers_matches_torch(shape, graph):
    _check(HEAD + CALLERS[shape] + TAIL, graph)


def test_clearing_only_some_parameters_differs_from_clearing_all():
    """The shapes above would pass with a clear of the whole sum only if the test could not tell: torch's
    weights differ between clearing the encoder only and clearing the optimizer."""
    part = load_torch(HEAD + CALLERS["only_some_parameters"] + TAIL)["weights"]
    whole = load_torch(HEAD + CALLERS["only_some_parameters"].replace("enc.zero_grad()", "opt.zero_grad()")
                       + TAIL)["weights"]
    assert not (part[2] - whole[2]).abs().max().item() < 1e-4


def test_module_with_its_own_zero_grad_raises_naming_the_line():
    """A module class defining its own zero_grad() (here one clearing nothing): what it clears is not the module's
    parameters, so the converted clear stops with MigrationError naming the line."""
    src = HEAD + '''
class Counted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def zero_grad(self, set_to_none=True):
        self.calls += 1
counted = Counted()
for i in range(2):
    counted.zero_grad()
    train_step(inp, tgt)
''' + TAIL
    assert load_torch(src)["counted"].calls == 2
    line = [i + 1 for i, t in enumerate(src.splitlines()) if t.strip() == "counted.zero_grad()"][0]
    with pytest.raises(Exception) as err:
        load_converted(src)
    assert type(err.value).__name__ == "MigrationError", err.value
    assert f":{line}" in str(err.value), (line, str(err.value))


# ------------------------------------------------------------------ model.zero_grad() beside a fresh step
# A loop (or step function) clearing with `model.zero_grad()` only: the converted step applies fresh gradients,
# torch's sum only where the module owns every parameter the optimizer updates; else the others' .grad keeps
# growing in torch, and `_ms_compat.clears_all_gradients` stops the program at the line of the clear.
FRESH = {
    "loop_clearing_its_model": '''
net = torch.nn.Sequential(enc, torch.nn.Tanh(), head)
opt2 = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.5)
for i in range(3):
    net.zero_grad(set_to_none=True)
    loss = ((net(inp * (i + 1)) - tgt) ** 2).mean()
    loss.backward()
    opt2.step()
''',
    "trainer_method_clearing_its_model": '''
class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def step(self, x, y):
        self.model.zero_grad()
        loss = ((self.model(x) - y) ** 2).mean()
        loss.backward()
        self.optimizer.step()
        return loss.item()

net = torch.nn.Sequential(enc, torch.nn.Tanh(), head)
trainer = Trainer(net, torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.5))
losses = [trainer.step(inp - i, tgt) for i in range(3)]
''',
}


@pytest.mark.parametrize("graph", [False, True], ids=["pynative", "graph"])
@pytest.mark.parametrize("shape", sorted(FRESH))
def test_module_owning_the_optimizer_clears_as_torch(shape, graph):
    code, _ = program_weights_match_torch(HEAD.split("def train_step")[0] + FRESH[shape] + TAIL, graph,
                                          what=f"{shape}: ")
    assert "_ms_compat.clears_all_gradients(" in code, code


def test_module_owning_part_of_the_optimizer_raises_naming_the_line():
    """The optimizer updates enc and head, the loop clears enc only: torch's head gradients add up over the
    iterations, the converted step's would not."""
    src = HEAD.split("def train_step")[0] + '''
for i in range(3):
    enc.zero_grad()
    loss = ((head(torch.tanh(enc(inp * (i + 1)))) - tgt) ** 2).mean()
    loss.backward()
    opt.step()
''' + TAIL
    fresh = load_torch(src.replace("    enc.zero_grad()", "    opt.zero_grad()"))["weights"]
    assert (load_torch(src)["weights"][2] - fresh[2]).abs().max().item() > 1e-4   # torch tells them apart
    line = [i + 1 for i, t in enumerate(src.splitlines()) if t.strip() == "enc.zero_grad()"][0]
    with pytest.raises(Exception) as err:
        load_converted(src)
    assert type(err.value).__name__ == "MigrationError", err.value
    assert f":{line}" in str(err.value), (line, str(err.value))
