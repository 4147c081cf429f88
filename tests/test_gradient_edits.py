"""Statements between backward() and step() that change the gradients (issue 12): a program's own
`clip_gradient(optimizer, c)` clamping `param.grad.data` (the a-PyTorch-Tutorial-to-* trainers), a loop
clamping or scaling `p.grad` in place, `p.grad = None` to leave a layer untouched this step (DINO's
cancel_gradients_last_layer). torch's optimizer applies the gradients as those statements leave them.

Before, a statement in the loop body was moved after the converted train step (which had applied the
gradients already), and its `p.grad` stayed as written: MindSpore's AttributeError, reported as converted; a
module function of that kind went unnoticed. Now the step returns the gradients, keeps them as torch's .grad
(_ms_compat.keep_grads), the statements run on them, and the optimizer applies what they leave
(_ms_compat.kept_grads). Each program runs in torch and converted (the mode it sets) from the same weights;
every loss and the final weights must agree."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .parity.harness import assert_close, load_converted, load_torch  # noqa: E402

HEAD = '''
import torch

net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-0.8, 0.9, p.numel()).reshape(p.shape) * (1 + 0.1 * i))
inp = torch.tensor([[1.0, 2.0, -1.0], [0.5, -0.5, 2.0], [3.0, -2.0, 0.5]])
tgt = torch.tensor([[0.5, -1.0], [1.0, 0.0], [-2.0, 3.0]])
losses = []


def clip_gradient(optimizer, grad_clip):
    for group in optimizer.param_groups:
        for param in group['params']:
            if param.grad is not None:
                param.grad.data.clamp_(-grad_clip, grad_clip)


def cancel_gradients_last_layer(epoch, model, freeze_epochs):
    if epoch >= freeze_epochs:
        return
    for n, p in model.named_parameters():
        if n.startswith("2."):
            p.grad = None
'''

TAIL = '''
weights = [p.detach() for p in net.parameters()]
'''

LOOPS = {
    # the tutorial's clip_gradient, called from a training function (SGD with momentum)
    "function_clamping_param_groups": '''
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)


def train():
    for epoch in range(4):
        opt.zero_grad()
        loss = ((net(inp) * 3 - tgt) ** 2).mean()
        loss.backward()
        clip_gradient(opt, 0.05)
        opt.step()
        losses.append(loss.item())


train()
''',
    # the clamp written in the loop, at a script's top level
    "inline_clamp_loop": '''
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
for epoch in range(4):
    opt.zero_grad()
    loss = ((net(inp) * 3 - tgt) ** 2).mean()
    loss.backward()
    for p in net.parameters():
        p.grad.data.clamp_(-0.05, 0.05)
    opt.step()
    losses.append(loss.item())
''',
    # scaled in place, one parameter at a time
    "inline_scaling": '''
opt = torch.optim.Adam(net.parameters(), lr=0.05)
for epoch in range(4):
    opt.zero_grad()
    loss = ((net(inp) - tgt) ** 2).mean()
    loss.backward()
    for p in net.parameters():
        p.grad.data.mul_(0.5 if p.dim() == 2 else 2.0)
    opt.step()
    losses.append(loss.item())
''',
    # DINO: the last layer's gradients dropped for the first epochs, so AdamW neither decays nor moves it
    "grad_set_to_none": '''
opt = torch.optim.AdamW(net.parameters(), lr=0.05, weight_decay=0.1)


def train():
    for epoch in range(4):
        opt.zero_grad()
        loss = ((net(inp) - tgt) ** 2).mean()
        loss.backward()
        cancel_gradients_last_layer(epoch, net, 2)
        opt.step()
        losses.append(loss.item())


train()
''',
}


@pytest.mark.parametrize("shape", sorted(LOOPS))
def test_gradient_changes_before_the_step_match_torch(shape):
    src = HEAD + LOOPS[shape] + TAIL
    mod, code, sites = load_converted(src)
    ref = load_torch(src)
    assert len(ref["losses"]) == 4
    assert_close(list(mod.losses), list(ref["losses"]), rtol=1e-5, atol=1e-6, what=f"{shape}: losses")
    for i, (w, r) in enumerate(zip(mod.weights, ref["weights"])):
        assert_close(w, r, rtol=1e-5, atol=1e-6, what=f"{shape}: parameter {i}")
    assert not [s for s in sites if s.status == TODO], code
    assert "_ms_compat.kept_grads(" in code


def test_gradient_changes_a_step_cannot_hold_raise():
    """Clipping folded into the step and a change of .grad after it: the step would clip and apply before the
    change ran (before: silently, the change after the update). The backward() is a TODO raising at its line."""
    import re

    src = HEAD + '''
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for epoch in range(2):
    opt.zero_grad()
    loss = ((net(inp) - tgt) ** 2).mean()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
    for p in net.parameters():
        p.grad.data.mul_(2.0)
    opt.step()
''' + TAIL
    line = [i + 1 for i, text in enumerate(src.splitlines()) if text.strip() == "loss.backward()"][-1]
    with pytest.raises(Exception) as err:
        load_converted(src)
    assert type(err.value).__name__ == "MigrationError", err.value
    assert re.search(rf":{line}\b", str(err.value)), (line, str(err.value))
