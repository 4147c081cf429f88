"""PGD adversarial training as real projects write it: an attack loop of backward()s whose only use is the
perturbation's .grad, in a loop body that then clears the parameters' gradients and steps an optimizer
(locuslab/fast_adversarial's MNIST/train_mnist.py and CIFAR10/train_pgd.py, measured in bench/_rw_heldout46.py).

torch adds each backward()'s gradient to the perturbation's .grad: where the program never clears it
(train_mnist.py) the attack steps along the sum over its turns; where it clears it after each read
(`delta.grad.zero_()`, train_pgd.py) along each turn's own. The attack's backward() also adds to the parameters'
.grad, which the zero_grad() before the training step empties. Converted: the attack's backward() is
mindspore.value_and_grad with respect to the perturbation, its gradient added to the one the tensor holds
(_ms_compat.add_grad); the training step compiled after it, taking the detached perturbation as an input."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

# the raw gradient (not its sign) moves the perturbation: a sum that was not summed would give other weights
SUMMED_WALK = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3))
fill(net, 3)
sgd = torch.optim.SGD(net.parameters(), lr=0.2, momentum=0.5)
points = torch.linspace(-1, 1, 20).reshape(5, 4)
kinds = torch.tensor([0, 1, 2, 0, 1])
walked = []
for turn in range(3):
    shift = torch.zeros_like(points)
    for _ in range(3):
        shift.requires_grad = True
        cost = F.cross_entropy(net(points + shift), kinds)
        cost.backward()
        shift.data = shift + 2.0 * shift.grad.detach()
    shift = shift.detach()
    walked.append(shift)
    cost = F.cross_entropy(net(points + shift), kinds)
    sgd.zero_grad()
    cost.backward()
    sgd.step()
weights = [p.detach() for p in net.parameters()] + walked
'''

# train_pgd.py's shape: marked before the attack loop, its .grad cleared after each read
CLEARED_WALK = SUMMED_WALK.replace('''    shift = torch.zeros_like(points)
    for _ in range(3):
        shift.requires_grad = True
        cost = F.cross_entropy(net(points + shift), kinds)
        cost.backward()
        shift.data = shift + 2.0 * shift.grad.detach()
''', '''    shift = torch.zeros_like(points)
    shift.requires_grad = True
    for _ in range(3):
        cost = F.cross_entropy(net(points + shift), kinds)
        cost.backward()
        shift.data = shift + 2.0 * shift.grad.detach()
        shift.grad.zero_()
''')


@pytest.mark.parametrize("graph", [False, True])
def test_summed_perturbation_gradient(graph):
    code, _ = program_weights_match_torch(SUMMED_WALK, graph=graph)
    assert "add_grad(shift" in code and "compile_step(" in code, code


@pytest.mark.parametrize("graph", [False, True])
def test_perturbation_gradient_cleared_each_turn(graph):
    assert CLEARED_WALK != SUMMED_WALK
    code, _ = program_weights_match_torch(CLEARED_WALK, graph=graph)
    assert "add_grad(shift" in code, code


ATTACKS = '''
import torch
import torch.nn.functional as F


def attack(model, X, y, eps, alpha, iters):
    """fast_adversarial's utils.attack_pgd shape, in a module that steps no optimizer: its backward() is run by
    PyNative's recorded autograd, which importing the converted module starts (_ms_compat.record_autograd())"""
    delta = torch.zeros_like(X)
    delta.requires_grad = True
    for _ in range(iters):
        loss = F.cross_entropy(model(X + delta), y)
        loss.backward()
        grad = delta.grad.detach()
        delta.data = torch.clamp(delta + alpha * torch.sign(grad), -eps, eps)
        delta.grad.zero_()
    return delta.detach()
'''

# SUMMED_WALK with a module imported first, before the torch imports (where the converted mode line goes)
TRAINER = "import attacks51" + SUMMED_WALK.replace(
    "weights = [p.detach() for p in net.parameters()] + walked",
    'print("OUT", float(sum(p.detach().abs().sum() for p in net.parameters())))')


def test_attack_in_graph_mode_beside_a_recording_module(tmp_path):
    """A module whose backward() PyNative's recorded autograd runs, imported before the main script's mode line
    (its record_autograd() found PYNATIVE mode and started the record), beside a GRAPH-mode program: the record left
    on broke it. MindSpore refused the in-place weight fill (`A leaf tensor that requires grad is being used in an
    inplace operator`), and differentiating a function that calls the network failed with 'Bprop "GatherDGradV2"
    encounter a problem: The pointer[value] is null' (fast_adversarial's CIFAR driver beside utils.py's evaluation
    attack, bench/_rw_heldout46.py). The mode line's set_device() now stops the record in GRAPH mode, where a
    recorded backward() raises MigrationError anyway. In PYNATIVE mode the record stays on, and MindSpore refused the
    fill's in-place write on a Parameter (a RuntimeError naming no line): a program importing a recording module now
    starts in PYNATIVE mode (project_index.reaches_recorded_backward) and keeps its no_grad regions (converter.py),
    checked in both modes."""
    import numpy as np
    from msmigrate.converter import convert_tree
    from tests.test_heldout45_programs import _run_torch, _run_tree
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "attacks51.py").write_text(ATTACKS.lstrip())
    (src / "main.py").write_text(TRAINER.lstrip())
    convert_tree(src, out)
    assert "record_autograd()" in (out / "attacks51.py").read_text()
    want = float(_run_torch(src, "attacks51").split()[-1])
    main = (out / "main.py").read_text()
    # as converted: PYNATIVE (a module imported records), the weight fill kept under no_grad, where MindSpore takes
    # an in-place write on a Parameter while the record is on
    assert "mode=ms.PYNATIVE_MODE" in main and "with ms._no_grad():" in main, main
    got = float(_run_tree(out, "PYNATIVE_MODE", ("attacks51",)).split("OUT")[-1].split()[0])
    assert np.isclose(got, want, rtol=1e-5, atol=1e-6), (got, want)
    (out / "main.py").write_text(main.replace("mode=ms.PYNATIVE_MODE", "mode=ms.GRAPH_MODE"))
    got = float(_run_tree(out, "GRAPH_MODE", ("attacks51",)).split("OUT")[-1].split()[0])
    assert np.isclose(got, want, rtol=1e-5, atol=1e-6), (got, want)


# an FGSM step (one backward(), its .grad read at once: a value_and_grad) and a PGD walk (backward()s run by
# PyNative's recorded autograd) on the same batch, the perturbation made by a factory's flag or by requires_grad_()
BOTH_ATTACKS = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3))
fill(net, 5)


def fgsm(X, y, eps):
    delta = torch.zeros_like(X, requires_grad=True)
    loss = F.cross_entropy(net(X + delta), y)
    loss.backward()
    return eps * torch.sign(delta.grad.detach())


def pgd(X, y, eps, alpha, iters):
    delta = torch.zeros_like(X, requires_grad=True)
    for _ in range(iters):
        loss = F.cross_entropy(net(X + delta), y)
        loss.backward()
        delta.data = torch.clamp(delta + alpha * delta.grad.detach(), -eps, eps)
        delta.grad.zero_()
    return delta.detach()


def pgd_marked_by_call(X, y, alpha, iters):
    delta = torch.zeros_like(X).requires_grad_()
    for _ in range(iters):
        loss = F.cross_entropy(net(X + delta), y)
        loss.backward()
        delta.data = delta + alpha * delta.grad.detach()
        delta.grad.zero_()
    return delta.detach()


points = torch.linspace(-1, 1, 20).reshape(5, 4)
kinds = torch.tensor([0, 1, 2, 0, 1])
weights = [fgsm(points, kinds, 0.1), pgd(points, kinds, 0.3, 0.5, 3), pgd_marked_by_call(points, kinds, 0.5, 2)]
'''


def test_fgsm_then_recorded_attacks_on_the_same_batch():
    """fast_adversarial's evaluate_mnist.py: attack_fgsm (a value_and_grad, given the batch and its labels) then
    attack_pgd on the same tensors, whose backward()s PyNative's recorded autograd runs (bench/_rw_heldout46.py's
    fa_mnist_eval). MindSpore marks every tensor value_and_grad is given as needing a gradient; the recorded graph
    then met the marked batch and the perturbation in one addition and failed ('Clone unregistered'): the call now
    clears the marks it left (_ms_compat.unmarking). The perturbation made by `zeros_like(X, requires_grad=True)` or
    by `.requires_grad_()` lost its flag in the conversion (its .grad read raised): it is now a marked leaf."""
    code, _ = program_weights_match_torch(BOTH_ATTACKS, graph=False)
    assert code.count("recorded=True") == 2 and "unmarking(" in code, code


# fast_adversarial's train_free.py shape: each minibatch replayed; one backward() fills both the parameters' .grad
# (the optimizer's step) and the perturbation's, which moves it
FREE_TRAINING = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3))
fill(net, 7)
opt = torch.optim.SGD(net.parameters(), lr=0.2, momentum=0.9)
points = torch.linspace(-1, 1, 40).reshape(10, 4)
kinds = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2, 0])
eps = 0.3
delta = torch.zeros(5, 4)
delta.requires_grad = True
losses = []
for epoch in range(2):
    for i in range(2):
        X, y = points[5 * i:5 * i + 5], kinds[5 * i:5 * i + 5]
        for _ in range(3):
            output = net(X + delta[:X.size(0)])
            loss = F.cross_entropy(output, y)
            opt.zero_grad()
            loss.backward()
            grad = delta.grad.detach()
            delta.data = torch.clamp(delta + 0.1 * grad, -eps, eps)
            opt.step()
            delta.grad.zero_()
            losses.append(loss.detach())
weights = [p.detach() for p in net.parameters()] + [delta.detach(), torch.stack(losses)]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_free_adversarial_training(graph):
    """One backward() serves the optimizer's step and the perturbation's .grad (free adversarial training): the
    step also differentiates the perturbation and returns its gradient, which the body reads where it read .grad
    (before: the .grad read raised MigrationError). The raw gradient moves the perturbation, so a wrong or stale
    gradient changes every later weight."""
    code, _ = program_weights_match_torch(FREE_TRAINING, graph=graph)
    assert "inputs=(0,)" in code and "delta_grad" in code and "tensor_grad(delta" not in code, code
