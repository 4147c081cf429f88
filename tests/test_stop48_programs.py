"""Minimal reproductions of real-code constructs found this stop, each compared with torch.

- WGAN-GP's gradient penalty as most GAN collections write it: `grad(outputs=d, inputs=x_hat,
  grad_outputs=torch.ones(d.size()), create_graph=True)[0]` with a critic holding BatchNorm in training mode. The
  grad_outputs read the critic's output outside the gradient's function, so the statements from x_hat to d stayed
  in the block and the function ran them again: refused at the line (the BatchNorm's statistics would move
  twice). A grad_outputs computed from the output alone is now computed inside the function
  (higher_order_grad._sens_inside), and the critic's forward moves into it and runs once, as in torch.
- The same penalty differentiated op by op (a PYNATIVE program, and in GRAPH mode the first call of a step, which
  ran op by op to find the weights the loss does not use): MindSpore 2.10 gives the Dense layers after a
  convolution zero gradients there, silently (BatchNorm's come out wrong when the same computation runs again on
  the same values; LayerNorm's raise inside MindSpore). A step taking the gradient of a gradient through such
  layers now always runs compiled (compat_parts/train.py, second_order_wrong_op_by_op). Each mode runs in its own
  process, as a user's program does."""
import numpy as np
import pytest

from tests.test_taped_backward import _FILL     # the same starting weights on both sides

PENALTY_OF_A_NORMALIZED_CRITIC = _FILL + '''
import torch.nn as nn
from torch.autograd import grad


critic = nn.Sequential(nn.Conv2d(1, 3, 3, 2, 1), nn.BatchNorm2d(3), nn.LeakyReLU(0.2), nn.Flatten(),
                       nn.Linear(12, 6, bias=False), nn.BatchNorm1d(6), nn.LeakyReLU(0.2), nn.Linear(6, 1))
fill(critic, 1)
opt = torch.optim.SGD(critic.parameters(), lr=0.05)
rng = np.random.RandomState(0)
real = torch.from_numpy(rng.randn(5, 1, 4, 4).astype(np.float32))
fake = torch.from_numpy(rng.randn(5, 1, 4, 4).astype(np.float32))
mix = torch.from_numpy(rng.rand(5, 1, 1, 1).astype(np.float32))
critic.train()
for it in range(3):
    opt.zero_grad()
    gap = critic(fake).mean() - critic(real).mean()
    blend = mix * real.data + (1 - mix) * fake.data
    blend.requires_grad = True
    judged = critic(blend)
    slopes = grad(outputs=judged, inputs=blend, grad_outputs=torch.ones(judged.size()),
                  create_graph=True, retain_graph=True, only_inputs=True)[0]
    penalty = 10.0 * ((slopes.view(slopes.size()[0], -1).norm(2, 1) - 1) ** 2).mean()
    loss = gap + penalty
    loss.backward()
    opt.step()
weights = list(critic.parameters()) + [critic[1].running_mean, critic[5].running_var]
print("OUT", [float(v) for w in weights for v in w.detach().reshape(-1)])
'''


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_gradient_penalty_whose_grad_outputs_read_the_output(tmp_path, mode):
    """The penalty's second-order gradients and the running statistics (three training-mode forwards per step, as
    in torch); no forward run again."""
    from msmigrate.cli import main
    from tests.treeutil import run_printed, write_tree

    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {"train.py": PENALTY_OF_A_NORMALIZED_CRITIC})
    main(["convert", str(src), "-o", str(out), "-q"])
    code = (out / "train.py").read_text()
    assert "forward_run_again" not in code and "stop_gradient(ops.ones(judged.shape" in code, code
    np.testing.assert_allclose(run_printed(out, "ms", mode), run_printed(src, "torch"), rtol=1e-5, atol=2e-5)


TAPED_PENALTY = '''
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import grad

critic = CRITIC
with torch.no_grad():
    for k, p in enumerate(critic.parameters()):
        p.copy_(torch.linspace(-0.5, 0.4 + 0.01 * k, p.numel()).reshape(p.shape))
opt = torch.optim.SGD(critic.parameters(), lr=0.05)
rng = np.random.RandomState(0)
batches = [torch.from_numpy(rng.randn(5, 1, 4, 4).astype(np.float32)) for _ in range(2)]
saved = []
for x in batches:
    x.requires_grad = True
    score = critic(x)
    slopes = grad(outputs=score, inputs=x, grad_outputs=torch.ones(score.size()), create_graph=True)[0]
    saved.append(((slopes.view(slopes.size(0), -1).norm(2, 1) - 1) ** 2).mean())
opt.zero_grad()
torch.stack(saved).sum().backward()
opt.step()
print("OUT", [float(p.detach().sum()) for p in critic.parameters()])
'''


@pytest.mark.parametrize("conv", [True, False])
def test_taped_penalty_through_a_convolution_stops(tmp_path, conv):
    """Penalties kept over a loop and summed before one backward(): differentiated from PyNative's record, op by op
    (taped_backward.py). Through a convolution that would be wrong: MigrationError naming the step's line
    (unused_params.wrong_second_order); through Dense layers the record's gradients are torch's."""
    import subprocess
    import sys

    from msmigrate.cli import main
    from tests.treeutil import run_printed, write_tree

    critic = ("nn.Sequential(nn.Conv2d(1, 3, 3, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(12, 1))" if conv
              else "nn.Sequential(nn.Flatten(), nn.Linear(16, 3), nn.Tanh(), nn.Linear(3, 1))")
    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {"train.py": TAPED_PENALTY.replace("CRITIC", critic)})
    main(["convert", str(src), "-o", str(out), "-q"])
    assert "_ms_compat.tape_step(opt)" in (out / "train.py").read_text()
    if conv:
        r = subprocess.run([sys.executable, "train.py"], cwd=out, capture_output=True, text=True, timeout=300)
        assert r.returncode != 0 and "MigrationError: train.py:22: the loss holds the gradient of a gradient " \
            "through Conv2DBackpropInput" in r.stderr, r.stderr[-2000:]
    else:
        np.testing.assert_allclose(run_printed(out, "ms"), run_printed(src, "torch"), rtol=1e-5, atol=1e-6)


TWO_STEPS_IN_A_LOOP_OVER_NAMES = '''
import numpy as np
import torch
import torch.nn as nn

D, G = nn.Linear(3, 1), nn.Linear(3, 3)
with torch.no_grad():
    for k, p in enumerate(list(D.parameters()) + list(G.parameters())):
        p.copy_(torch.linspace(-0.5, 0.4 + 0.01 * k, p.numel()).reshape(p.shape))
d_opt = torch.optim.SGD(D.parameters(), lr=0.1)
g_opt = torch.optim.SGD(G.parameters(), lr=0.1)
rng = np.random.RandomState(0)


def reset_grad():
    d_opt.zero_grad()
    g_opt.zero_grad()


def train(steps):
    for i in range(steps):
        for part in ["a", "b"]:
            x = torch.from_numpy(rng.randn(4, 3).astype(np.float32))
            d_loss = D(x).mean() - D(G(x)).mean()
            reset_grad()
            d_loss.backward()
            d_opt.step()
            if (i + 1) % 2 == 0:
                g_loss = -D(G(x)).mean()
                reset_grad()
                g_loss.backward()
                g_opt.step()


train(2)
weights = list(D.parameters()) + list(G.parameters())
'''


def test_two_steps_in_a_loop_over_a_list_of_names():
    """StarGAN's train_multi: a D step and, every n-th iteration, a G step inside `for dataset in [...]` inside the
    iteration loop. loop_unswitch took `if (i + 1) % 2 == 0` for a setting fixed for the whole loop (the loop's
    own target was not counted as bound) and hoisted it out of `for i`: the test read `i` before the loop bound it
    (here UnboundLocalError; with an `i` bound earlier, the wrong branch silently), and grad_carry then met the
    copies' nodes (StopIteration: solver.py was copied unconverted, heldout34's stargan_gp `No module named
    'torch'`). The loop's target counts as bound now (loop_unswitch._fixed); grad_carry._enclosing_of no longer
    assumes the loop among a backward()'s recorded blocks."""
    from tests.parity.harness import program_weights_match_torch

    program_weights_match_torch(TWO_STEPS_IN_A_LOOP_OVER_NAMES, graph=False)


ATTACK_IN_EVAL_MODE_INSIDE_THE_LOSS = '''
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Conv2d(1, 3, 3, 1, 1), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(48, 2))
with torch.no_grad():
    for k, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-0.5, 0.4 + 0.01 * k, p.numel()).reshape(p.shape))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
rng = np.random.RandomState(0)


def robust_loss(model, x, y, eps=0.1):
    model.eval()
    x_adv = x.detach() + 0.01 * torch.cos(x.detach() * 7.0)
    for _ in range(2):
        x_adv.requires_grad_()
        with torch.enable_grad():
            cost = F.cross_entropy(model(x_adv), y)
        g = torch.autograd.grad(cost, [x_adv])[0]
        x_adv = torch.min(torch.max(x_adv.detach() + 0.05 * torch.sign(g.detach()), x - eps), x + eps)
    model.train()
    return F.cross_entropy(model(x), y) + F.cross_entropy(model(x_adv.detach()), y)


for it in range(3):
    x = torch.from_numpy(rng.randn(4, 1, 4, 4).astype(np.float32))
    y = torch.from_numpy(rng.randint(0, 2, 4))
    opt.zero_grad()
    loss = robust_loss(net, x, y)
    loss.backward()
    opt.step()
print("OUT", [float(v) for p in net.parameters() for v in p.detach().reshape(-1)[:4]])
'''


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_loss_switching_the_mode_around_an_attack(tmp_path, mode):
    """TRADES' trades_loss: `model.eval()`, an attack on the input through torch.autograd.grad (detached), then
    `model.train()`, inside the function the step differentiates. Compiled (GRAPH mode), set_train inside the
    graph failed at the second step with MindSpore's TypeError ("cannot convert dictionary update sequence"), no
    MigrationError; a step reaching a set_train runs op by op now, in either mode (compile_step). Not taken for
    the gradient of a gradient: the attack's gradient is detached, so nothing is differentiated through it."""
    from msmigrate.cli import main
    from tests.treeutil import run_printed, write_tree

    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {"train.py": ATTACK_IN_EVAL_MODE_INSIDE_THE_LOSS})
    main(["convert", str(src), "-o", str(out), "-q"])
    code = (out / "train.py").read_text()
    assert "compile_step" in code and "set_train(False)" in code, code
    np.testing.assert_allclose(run_printed(out, "ms", mode), run_printed(src, "torch"), rtol=1e-5, atol=1e-6)
