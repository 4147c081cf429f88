"""Minimal reproductions of what bench/_rw_heldout51.py's programs (rosinality/glow-pytorch,
orobix/Prototypical-Networks-for-Few-shot-Learning-PyTorch) met, each run under torch and converted.

- A network called on a value drawn in its own argument (glow's `model(image + torch.rand_like(image) / n_bins)`,
  its dequantization noise): the statement was taken for a source of data (a draw) and left out of the train step,
  whose forward function then took the network's output as an input: the parameters got no gradient and the
  optimizer skipped them, silently (train_loop._network_of_draw).
- glow's train loop: `if i == 0: with torch.no_grad(): model.module(x); continue` / `else: out = model(x)`, then
  the loss, backward(), the learning rate written into param_groups and the step. The loss was computed from the
  `if` statement, which the step cannot hold: a raising TODO (exit_branches.py writes the `else` after the `if`).
  Then the step was gathered ahead of that `if` (the image's preparation before it is part of the loss), so it ran
  in the iteration the `if` leaves too, before the initialization (train_loop._before_exits: what comes before a
  statement that may leave the iteration stays before it; a network call there stops with MigrationError).
- ActNorm's `if self.initialized.item() == 0:` in forward, called first outside the training under no_grad (glow's
  first iteration), in GRAPH mode: the cell called directly was compiled and MindSpore's CPU kernels refused the
  uint8 scalar read (a MigrationError at the line); a cell reading `.item()` in its construct now runs op by op,
  called directly or in a step (graph_constants.reads_on_host).
- prototypical_loss (a function the step calls) reads `.item()` and builds Python lists as long as the batch's
  classes: GRAPH mode did not compile; such a step runs op by op (train._reaches_host_reads_in_functions).
- Prototypical-Networks' src/ is a package (its __init__.py) whose train.py runs as a script and imports its
  siblings by their own names: the converted files' `from . import _ms_compat` was an ImportError run so; the
  top's files import it relatively only where they are a package's modules (`if __package__:`)."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

NOISY_INPUT = _FILL + '''
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
fill(net, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
seen = []
for k in range(3):
    x = torch.linspace(-1, 1, 18).reshape(6, 3) * (k + 1)
    out = net(x + torch.rand_like(x) * 0)    # a draw in the network's argument (zero here: the same on both sides)
    loss = (out - 1).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach() for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_network_called_on_a_draw_is_trained(graph):
    program_weights_match_torch(NOISY_INPUT, graph=graph)


FIRST_BATCH_INIT = _FILL + '''
import torch.nn as nn


class Shift(nn.Module):
    """a layer whose offset is set from the first batch it sees (under no_grad, outside the training)"""

    def __init__(self, c):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, c))
        self.ready = False

    def forward(self, x):
        if not self.ready:
            self.loc.data.copy_(-x.mean(0, keepdim=True))
            self.ready = True
        return x + self.loc


net = nn.Sequential(nn.Linear(3, 4), Shift(4), nn.Tanh(), nn.Linear(4, 1))
fill(net, 4)
opt = torch.optim.Adam(net.parameters(), lr=0.05)
seen = []
for i in range(4):
    x = torch.linspace(-1, 1, 18).reshape(6, 3) * (i + 1)
    x = x - 0.25
    if i == 0:
        with torch.no_grad():
            out = net(x)
            continue
    else:
        out = net(x)
    loss = (out - 1).pow(2).mean()
    net.zero_grad()
    loss.backward()
    opt.param_groups[0]["lr"] = 0.05 / i
    opt.step()
    seen.append(loss.detach())
weights = [p.detach() for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_step_after_a_branch_that_continues(graph):
    code, _ = program_weights_match_torch(FIRST_BATCH_INIT, graph=graph)
    # the `else` is written after the `if`, and the step after both
    assert "else:" not in code and code.index("continue") < code.rindex("_step(")


NETWORK_BEFORE_EXIT = _FILL + '''
import torch.nn as nn

net = nn.Linear(3, 1)
fill(net, 7)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for i in range(3):
    x = torch.linspace(-1, 1, 6).reshape(2, 3) * (i + 1)
    out = net(x)
    if i == 0:
        continue
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
weights = [p.detach() for p in net.parameters()]
'''


def test_network_call_before_a_continue():
    """The loss computed from a network call made before a statement that may leave the iteration: no train step
    can run both before and after it (gathered ahead of the `if`, it trained in the iteration the `if` leaves;
    kept before it, the network's output was a constant); the loop runs as written, differentiated from PyNative's
    record (taped_steps.py), as torch's."""
    code, _ = program_weights_match_torch(NETWORK_BEFORE_EXIT, graph=False)
    assert "tape_backward" in code


ACTNORM = _FILL + '''
import torch.nn as nn


class ActNorm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, c))
        self.scale = nn.Parameter(torch.ones(1, c))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

    def forward(self, x):
        if self.initialized.item() == 0:
            with torch.no_grad():
                self.loc.data.copy_(-x.mean(0, keepdim=True))
                self.scale.data.copy_(1 / (x.std(0, keepdim=True) + 1e-6))
            self.initialized.fill_(1)
        return self.scale * (x + self.loc)


net = nn.Sequential(nn.Linear(3, 4), ActNorm(4), nn.Tanh(), nn.Linear(4, 1))
fill(net, 5)
opt = torch.optim.Adam(net.parameters(), lr=0.05)
with torch.no_grad():     # the initialization, by a first call outside the training (glow's train())
    first = net(torch.linspace(-2, 1, 18).reshape(6, 3))
seen = [first]
for i in range(3):
    x = torch.linspace(-1, 1, 18).reshape(6, 3) * (i + 1) - 0.25
    loss = (net(x) - 1).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach() for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_data_dependent_initialization_read_by_item(graph):
    program_weights_match_torch(ACTNORM, graph=graph)


PROTO_LOSS = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F


def proto_loss(emb, target, n_support):
    classes = torch.unique(target)
    n_query = target.eq(classes[0].item()).sum().item() - n_support
    support = [target.eq(c).nonzero()[:n_support].squeeze(1) for c in classes]
    prototypes = torch.stack([emb[idx].mean(0) for idx in support])
    query = torch.stack([target.eq(c).nonzero()[n_support:] for c in classes]).view(-1)
    d = (emb[query].unsqueeze(1) - prototypes.unsqueeze(0)).pow(2).sum(2)
    log_p = F.log_softmax(-d, dim=1).view(len(classes), n_query, -1)
    index = torch.arange(0, len(classes)).view(len(classes), 1, 1).expand(len(classes), n_query, 1)
    return -log_p.gather(2, index).squeeze().view(-1).mean()


net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
fill(net, 6)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
seen = []
for k in range(3):
    n = 2 + k        # classes of this episode: Python lists as long as the batch's classes
    x = torch.linspace(-1, 1, 9 * n).reshape(3 * n, 3) * (k + 1)
    y = torch.arange(n).repeat(3)
    loss = proto_loss(net(x), y, 1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach() for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_loss_function_reading_values_on_the_host(graph):
    program_weights_match_torch(PROTO_LOSS, graph=graph)


def test_script_of_a_package_directory_imports_the_helper(tmp_path):
    """A converted directory holding an __init__.py whose script imports its siblings by their own names: run as a
    script (no package) and imported as a package's module, both find the helper."""
    import subprocess
    import sys

    from msmigrate.cli import main
    from tests.treeutil import run_printed, write_tree

    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {
        "__init__.py": "",
        "scale.py": "import torch\n\n\ndef double(x):\n    return torch.cat([x, x]).sum()\n",
        "train.py": "import torch\nfrom scale import double\n\nprint('OUT', float(double(torch.ones(3)) + "
                    "torch.zeros(1).sum()))\n",
    })
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    want = run_printed(src, "torch", script="train.py")
    assert want == 6.0
    assert run_printed(out, "ms", script="train.py") == want
    # imported as a package's module, from the directory above
    r = subprocess.run([sys.executable, "-c", "import out.scale as s; import out; print('OK', s._ms_compat.__name__)"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "OK out._ms_compat" in r.stdout, r.stderr[-2000:]
