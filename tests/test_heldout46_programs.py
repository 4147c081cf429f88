"""Minimal reproductions of what bench/_rw_heldout46.py's programs (locuslab/fast_adversarial,
yaodongyu/TRADES) needed, each compared with torch in PYNATIVE and GRAPH mode where it converts.

- An input-gradient backward() and then the training step in one loop body, `opt.zero_grad()` between them (the
  fast gradient sign step): the zero_grad() empties what the first backward() added to the parameters' .grad, so
  torch steps with the second loss's gradients alone. The converter took both backward()s for one step and
  differentiated the sum of both losses, silently (a program that reads no .grad after the first: other
  weights). The backward()s before such a clear are now a group of their own: the gradient of the tensors made
  in the body whose .grad the body reads (the perturbation), or a raising TODO where it reads none.
- `optimizer.zero_grad()` of a function's parameter named like an optimizer, in a function that steps another
  optimizer in one branch (trades_loss's `optimizer_delta` of its l_2 branch): it was taken for a module's
  zero_grad() beside that optimizer's step and checked against it (clears_all_gradients), which ran with the
  branch's optimizer unbound (None) and stopped with AttributeError. A zero_grad() of a receiver named like an
  optimizer is no module's clear."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

SIGN_STEP_THEN_TRAIN = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F

net = nn.Linear(4, 3)
fill(net, 46)
sgd = torch.optim.SGD(net.parameters(), lr=0.5)
points = torch.linspace(0, 1, 20).reshape(5, 4)
kinds = torch.tensor([0, 1, 2, 0, 1])
for turn in range(2):
    nudge = torch.full_like(points, 0.05)
    nudge.requires_grad = True
    F.cross_entropy(net(points + nudge), kinds).backward()
    direction = nudge.grad.detach()
    nudge.data = torch.clamp(nudge + 0.2 * torch.sign(direction), -0.3, 0.3)
    nudge = nudge.detach()
    cost = F.cross_entropy(net(points + nudge), kinds)
    sgd.zero_grad()
    cost.backward()
    sgd.step()
weights = [p.detach() for p in net.parameters()]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_input_gradient_then_cleared_step(graph):
    code, _ = program_weights_match_torch(SIGN_STEP_THEN_TRAIN, graph=graph)
    assert "value_and_grad(" in code, code


CLEARED_UNREAD = _FILL + '''
import torch.nn as nn

net = nn.Linear(4, 3)
fill(net, 7)
sgd = torch.optim.SGD(net.parameters(), lr=0.5)
points = torch.linspace(0, 1, 20).reshape(5, 4)
for turn in range(2):
    (net(points) ** 2).sum().backward()
    cost = net(points).abs().mean()
    sgd.zero_grad()
    cost.backward()
    sgd.step()
weights = [p.detach() for p in net.parameters()]
'''


def test_backward_cleared_before_its_step_is_refused():
    """Nothing reads what the first backward() computes and the clear drops it: a raising TODO at its line, not
    a step on the sum of both losses."""
    from msmigrate.registry import TODO
    from tests.parity.harness import convert_snippet
    code, sites = convert_snippet(CLEARED_UNREAD)
    todo = [s for s in sites if s.status == TODO]
    assert [s.api for s in todo] == ["Tensor.backward"], sites
    assert "clears the gradients this backward() adds" in code, code


OUTER_OPTIMIZER_CLEARED = _FILL + '''
import torch.nn as nn


def robust_cost(net, points, optimizer, spread=None):
    shift_optimizer = None
    if spread is not None:
        shift = torch.zeros_like(points, requires_grad=True)
        shift_optimizer = torch.optim.SGD([shift], lr=0.1)
        for _ in range(2):
            shift_optimizer.zero_grad()
            (-net(points + shift).pow(2).mean()).backward()
            shift_optimizer.step()
    optimizer.zero_grad()
    return net(points).pow(2).mean()


net = nn.Linear(4, 3)
fill(net, 5)
sgd = torch.optim.SGD(net.parameters(), lr=0.3)
points = torch.linspace(-1, 1, 20).reshape(5, 4)
for turn in range(2):
    sgd.zero_grad()
    cost = robust_cost(net, points, sgd)
    cost.backward()
    sgd.step()
weights = [p.detach() for p in net.parameters()]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_zero_grad_of_an_optimizer_parameter_beside_another_step(graph):
    code, _ = program_weights_match_torch(OUTER_OPTIMIZER_CLEARED, graph=graph)
    assert "clears_all_gradients(optimizer" not in code, code


GROUP_UPDATE = _FILL + '''
import torch.nn as nn

net = nn.Linear(4, 3)
fill(net, 9)
adam = torch.optim.Adam(net.parameters(), lr=0.01)
points = torch.linspace(-1, 1, 20).reshape(5, 4)
for turn in range(3):
    adam.param_groups[0].update(lr=0.05 * (turn + 1))
    cost = net(points).pow(2).mean()
    adam.zero_grad()
    cost.backward()
    adam.step()
weights = [p.detach() for p in net.parameters()] + [torch.tensor(adam.param_groups[0]["lr"])]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_param_group_update_sets_the_learning_rate(graph):
    program_weights_match_torch(GROUP_UPDATE, graph=graph)


SLICE_FILLS = '''
import torch

box = torch.zeros(2, 3, 4)
for c in range(3):
    box[:, c, :].uniform_(0.5 * c, 0.5 * c)         # a zero-width range: the same value on both sides
box[1].normal_(-2.0, 0.0)
spread = torch.zeros(64, 2)
spread[:, 1].uniform_(-0.25, 0.25)
weights = [box, spread[:, 0], (spread[:, 1].abs() <= 0.25).float(), (spread[:, 1] != 0).float()]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_random_fill_of_a_slice_reaches_the_tensor(graph):
    code, _ = program_weights_match_torch(SLICE_FILLS, graph=graph)
    assert "box[:, c] = _ms_compat.uniform_(" in code, code


STARRED_LEGACY = '''
import torch

ref = torch.ones(2, 3)
blank = torch.FloatTensor(*ref.shape).uniform_(0.75, 0.75)
rows = [[1.5, 2.0, -3.0]]
made = torch.FloatTensor(*rows)
counts = torch.LongTensor(*ref.shape)
weights = [blank, made, torch.tensor(list(counts.shape)), torch.tensor(counts.dtype == torch.int64)]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_legacy_constructor_with_starred_sizes(graph):
    """pgd_attack_mnist's `torch.FloatTensor(*X_pgd.shape).uniform_(-epsilon, epsilon)`: sizes or data are told
    apart at run time (legacy_tensor), as torch tells them; it was a TODO for its *args."""
    program_weights_match_torch(STARRED_LEGACY, graph=graph)


PROBE_CLEARED_BY_ITS_OPTIMIZER = _FILL + '''
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
fill(net, 3)
net.eval()
points = torch.linspace(0, 1, 20).reshape(5, 4)
kinds = torch.tensor([0, 1, 2, 0, 1])
probe = Variable(points.data + 0.01, requires_grad=True)
for _ in range(3):
    holder = optim.SGD([probe], lr=1e-3)
    holder.zero_grad()
    with torch.enable_grad():
        cost = nn.CrossEntropyLoss()(net(probe), kinds)
    cost.backward()
    move = 0.05 * probe.grad.data.sign()
    probe = Variable(probe.data + move, requires_grad=True)
    probe = Variable(torch.clamp(probe, 0, 1.0), requires_grad=True)
weights = [probe.detach()]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_input_gradient_cleared_by_an_optimizer_over_it(graph):
    program_weights_match_torch(PROBE_CLEARED_BY_ITS_OPTIMIZER, graph=graph)


RESTARTED_WALK = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F


def walk(model, x, y, radius, stride, turns):
    shift = torch.full_like(x, 0.05)
    shift.requires_grad = True
    for _ in range(turns):
        scores = model(x + shift)
        still = torch.where(scores.max(1)[1] == y)[0]
        if len(still) == 0:
            break
        F.cross_entropy(scores, y).backward()
        g = shift.grad.detach()
        moved = torch.clamp(shift + stride * torch.sign(g), -radius, radius)
        shift.data[still] = moved[still]
        shift.grad.zero_()
    return shift.detach()


net = nn.Linear(4, 3)
fill(net, 11)
points = torch.linspace(0, 1, 20).reshape(5, 4)
kinds = net(points).argmax(1)
weights = [walk(net, points, kinds, 0.3, 0.1, 3)]
'''


def test_input_gradient_read_and_cleared_by_the_loop():
    """evaluate_mnist's attack_pgd: `delta.requires_grad = True` before the loop, `loss.backward()`, a read of
    `delta.grad`, `delta.grad.zero_()`, no optimizer in the module: PyNative's recorded autograd runs the
    backward() (recorded_backward.py), now also where the loop reads the .grad of a tensor the module marks as
    needing a gradient (before: a raising TODO for any .grad read in the loop), and the mark makes the tensor a
    leaf of the recorded graph. GRAPH mode records no graph: MigrationError naming the line."""
    import mindspore as ms
    program_weights_match_torch(RESTARTED_WALK, graph=False)
    from tests.parity.harness import load_converted
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(Exception, match="PYNATIVE"):
            load_converted(RESTARTED_WALK + "# GRAPH\n")
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)



PGD_TRAINING = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F

net = nn.Linear(4, 3)
fill(net, 21)
adam = torch.optim.Adam(net.parameters(), lr=0.05)
points = torch.linspace(0, 1, 20).reshape(5, 4)
kinds = torch.tensor([0, 1, 2, 0, 1])
for turn in range(2):
    shift = torch.full_like(points, 0.02)
    for _ in range(3):
        shift.requires_grad = True
        scores = net(points + shift)
        cost = F.cross_entropy(scores, kinds)
        adam.zero_grad()
        cost.backward()
        g = shift.grad.detach()            # summed over the turns: never cleared
        hit = scores.max(1)[1] == kinds
        shift.data[hit] = torch.clamp(shift + 0.1 * torch.sign(g), -0.2, 0.2)[hit]
    shift = shift.detach()
    cost = F.cross_entropy(net(torch.clamp(points + shift, 0, 1)), kinds)
    adam.zero_grad()
    cost.backward()
    adam.step()
weights = [p.detach() for p in net.parameters()]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_attack_loop_in_a_stepping_module(graph):
    """train_mnist.py's PGD training: the perturbation's .grad sums over the attack's turns (never cleared) in a
    module that steps an optimizer after the attack, whose zero_grad() empties what the attack added to the
    parameters' .grad (train_loop.attack_enclosure). Was a raising TODO at the attack's backward()."""
    code, _ = program_weights_match_torch(PGD_TRAINING, graph=graph)
    assert "add_grad(shift" in code, code


SIGN_STEP_BRANCHES = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F

net = nn.Linear(4, 3)
fill(net, 31)
sgd = torch.optim.SGD(net.parameters(), lr=0.5)
points = torch.linspace(0, 1, 20).reshape(5, 4)
kinds = torch.tensor([0, 1, 2, 0, 1])


def run(kind, rounds):
    for epoch in range(1):
        for r in range(rounds):
            if kind == "sign":
                nudge = torch.full_like(points, 0.05)
                nudge.requires_grad = True
                F.cross_entropy(net(points + nudge), kinds).backward()
                nudge.data = torch.clamp(nudge + 0.2 * torch.sign(nudge.grad.detach()), -0.3, 0.3)
                nudge = nudge.detach()
            elif kind == "none":
                nudge = torch.zeros_like(points)
            elif kind == "walk":
                nudge = torch.zeros_like(points)
                for _ in range(2):
                    nudge.requires_grad = True
                    F.cross_entropy(net(points + nudge), kinds).backward()
                    nudge.data = nudge + 0.1 * torch.sign(nudge.grad.detach())
                nudge = nudge.detach()
            cost = F.cross_entropy(net(points + nudge), kinds)
            sgd.zero_grad()
            cost.backward()
            sgd.step()


run("sign", 2)
run("walk", 2)
weights = [p.detach() for p in net.parameters()]
'''


def test_input_gradient_then_cleared_step_beside_another_loop():
    """The same in one branch of a loop another branch also steps (train_mnist.py's `if args.attack == 'fgsm':
    ... elif ...`, unswitched into one loop per branch): the other loop's backward() was taken for gradients this
    loop's first step adds to (grad_carry.py: it clears only after its first backward()), a raising TODO; the
    zero_grad() before the step empties them. The "walk" branch sums its perturbation's gradient over an attack
    loop in a module that steps (train_loop.attack_enclosure; a raising TODO before)."""
    program_weights_match_torch(SIGN_STEP_BRANCHES, graph=False)


WALK_AFTER_A_GRADIENT = RESTARTED_WALK.replace("weights = [", '''
def quick(model, x, y):
    shift = torch.zeros_like(x, requires_grad=True)
    F.cross_entropy(model(x + shift), y).backward()
    return torch.sign(shift.grad.detach())


first = quick(net, points, kinds)
weights = [first, ''')


def test_recorded_backward_after_another_gradient():
    """evaluate_mnist.py's attack_fgsm (its backward() a gradient of the input alone: mindspore's value_and_grad,
    given the batch and labels too), then attack_pgd's recorded backward() on the same tensors: value_and_grad marks
    every tensor it is given as requiring a gradient, and MindSpore's run_backward then failed where the marked
    batch met the perturbation ("The kernel Clone unregistered", measured), a MigrationError naming the line. The
    call now clears the marks it left (_ms_compat.unmarking): the values are torch's."""
    code, _ = program_weights_match_torch(WALK_AFTER_A_GRADIENT, graph=False)
    assert "unmarking(" in code, code
