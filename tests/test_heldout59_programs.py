"""Minimal reproductions of what bench/_rw_heldout59.py's programs (facebookresearch/DiT, facebookresearch/ConvNeXt,
microsoft/Swin-Transformer, with timm converted by --deps) met, each run under torch and converted.

- A model's `forward` passed as a function, not called (DiT's sample.py hands `model.forward_with_cfg` to
  p_sample_loop, and a DDIM sampling `model.forward` to ddim_sample_loop; here a deep copy of a trained model as
  train.py's EMA is): the reference was kept, and MindSpore's Cell has no `forward` ("The 'DiT' object has no
  attribute 'forward'"). A module's `forward` read is its construct; one of a receiver of unknown type goes
  through _ms_compat.forward_of, as the call `layer.forward(x)` does.
- timm's Mixup (ConvNeXt's and Swin's main.py): `lam = self._mix_batch(x)`, where _mix_batch mixes the batch in place
  (`x_flipped = x.flip(0).mul_(1. - lam); x.mul_(lam).add_(x_flipped)`) and returns only lam. The in-place chain
  on the flipped copy was a raising TODO, and the call a refusal ("changes the argument `x` in place"): the callee
  now writes its changes into the caller's tensor, and a chain on a copy (flip, roll, repeat...) is its
  out-of-place form."""
import re

import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

FORWARD_PASSED = _FILL + '''
from copy import deepcopy

import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x, scale=1.0):
        return torch.tanh(self.fc(x)) * scale


def sample_loop(fn, x, steps, **kwargs):
    for _ in range(steps):
        x = x - 0.1 * fn(x, **kwargs)
    return x


net = Net()
fill(net, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 6).reshape(2, 3)
for _ in range(2):
    loss = sample_loop(net.forward, x, 2).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
ema = deepcopy(net)
with torch.no_grad():
    fns = {"own": net.forward}
    a = sample_loop(ema.forward, x, 3, scale=2.0)
    b = sample_loop(fns["own"], x, 1)
weights = [p.detach().reshape(-1) for p in net.parameters()] + [a, b, loss.detach()]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_forward_passed_as_function(graph):
    code, _ = program_weights_match_torch(FORWARD_PASSED, graph=graph)
    assert ".forward" not in code.replace("forward_of", "")


# A stand-in of ours for timm (its registry and one layer), importable only from a temporary directory
_TIMM = {
    "timm/__init__.py": "from .models import create_model\n",
    "timm/models/__init__.py": "from .registry import register_model, create_model\n",
    "timm/models/registry.py": '''
_entrypoints = {}


def register_model(fn):
    _entrypoints[fn.__name__] = fn
    return fn


def create_model(name, **kwargs):
    return _entrypoints[name](**kwargs)
''',
    "timm/models/layers.py": '''
import torch
from torch import nn


class Scale(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(torch.linspace(0.5, 1.5, dim))

    def forward(self, x):
        return x * self.gamma
''',
}

# ConvNeXt's models/convnext.py: its model functions registered with timm's decorator, built by create_model
_REGISTERED = '''
import torch
import torch.nn as nn
from timm.models.layers import Scale
from timm.models.registry import register_model
from timm.models import create_model


class Net(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.fc = nn.Linear(3, dim)
        self.scale = Scale(dim)

    def forward(self, x):
        return self.scale(torch.tanh(self.fc(x)))


@register_model
def net_tiny(pretrained=False, **kwargs):
    return Net(**kwargs)


def outputs():
    torch.manual_seed(0)
    net = create_model("net_tiny", dim=5)
    with torch.no_grad():
        net.fc.weight.copy_(torch.linspace(-1, 1, 15).reshape(5, 3))
        net.fc.bias.fill_(0.1)
        return net(torch.linspace(-2, 2, 6).reshape(2, 3)).numpy()
'''


def test_dependency_decorator_kept(tmp_path):
    """timm's `@register_model` with `--deps timm` (ConvNeXt's and Swin's models): it was a TODO ("no MindSpore
    counterpart for this decorator"), the decorated model functions raising when called; it is the converted
    timm's decorator, as timm's other names are."""
    import json
    import subprocess
    import sys
    import textwrap

    import numpy as np

    from tests.test_deps import NO_TORCH, _env, _msmigrate, _write

    site, proj, out = tmp_path / "site", tmp_path / "proj", tmp_path / "out"
    _write(site, _TIMM)
    _write(proj, {"registered.py": _REGISTERED})
    env = _env(site)
    res = _msmigrate(["convert", str(proj), "-o", str(out), "--deps", "timm", "-q"], env)
    assert res.returncode == 0, res.stdout + res.stderr
    report = json.loads((out / "msmigrate-report.json").read_text())
    assert report["summary"]["todo"] == 0, [s for f in report["files"] for s in f["sites"] if s["status"] == "todo"]
    code = (out / "registered.py").read_text()
    assert "@register_model\n" in code and "unconverted_decorator" not in code
    want = subprocess.run([sys.executable, "-c", "import registered; import numpy as np; "
                           "np.save('want.npy', registered.outputs())"], cwd=str(proj), env=_env(site, proj),
                          capture_output=True, text=True, timeout=600)
    assert want.returncode == 0, want.stderr
    script = NO_TORCH + textwrap.dedent("""
        import numpy as np
        import registered
        np.save("got.npy", np.asarray(registered.outputs()))
        """)
    got = subprocess.run([sys.executable, "-c", script], cwd=str(out), env=_env(site, out), capture_output=True,
                         text=True, timeout=600)
    assert got.returncode == 0, got.stdout + got.stderr
    np.testing.assert_allclose(np.load(out / "got.npy"), np.load(proj / "want.npy"), rtol=1e-5, atol=1e-6)


MIXUP_IN_PLACE = _FILL + '''
import torch.nn as nn


class Mixup:
    def __init__(self, num_classes, lam):
        self.num_classes, self.lam = num_classes, lam

    def _mix_batch(self, x):
        lam = self.lam
        if lam == 1.:
            return 1.
        x_flipped = x.flip(0).mul_(1. - lam)
        x.mul_(lam).add_(x_flipped)
        return lam

    def __call__(self, x, target):
        lam = self._mix_batch(x)
        target = nn.functional.one_hot(target, self.num_classes).float()
        return x, target * lam + target.flip(0) * (1. - lam)


net = nn.Linear(3, 2)
fill(net, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
mixup_fn = Mixup(2, 0.7)
seen = []
for step in range(2):
    x = torch.linspace(-1, 1, 12).reshape(4, 3) * (step + 1)
    y = torch.tensor([0, 1, 1, 0])
    x, y = mixup_fn(x, y)
    loss = torch.sum(-y * nn.functional.log_softmax(net(x), dim=-1), dim=-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
    seen.append(x)
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


def test_batch_mixed_in_place_by_a_method():
    """The mixed batch and the training equal torch's: the write happens inside the train step's forward, where a
    gradient is recorded (a tensor of its own is written by copy_, which MindSpore differentiates). A compiled step
    cannot write into the caller's tensor (test_inplace_sharing.py checks its MigrationError), so the program's own
    mode line chooses PYNATIVE: asked for GRAPH, it still runs op by op and matches torch."""
    code, _ = program_weights_match_torch(MIXUP_IN_PLACE, graph=False)
    assert "write_argument" in code, code
    code, _ = program_weights_match_torch(MIXUP_IN_PLACE, graph=True)
    assert re.search(r"set_context\(mode=\w+\.PYNATIVE_MODE\)", code) and "changes its caller's tensor" in code, code


# the batch comes from a DataLoader (an argument of the converted step, which MindSpore marks as requiring a gradient
# while it records): mixed in place by mixup's chain or pasted by cutmix's slice assignment, as timm's _mix_batch
MIXUP_FROM_A_LOADER = _FILL + '''
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Mixup:
    def __init__(self, num_classes):
        self.num_classes, self.calls = num_classes, 0

    def _mix_batch(self, x):
        self.calls += 1
        if self.calls % 2 == 0:
            x[:, 1:3] = x.flip(0)[:, 1:3]
            return 0.5
        x_flipped = x.flip(0).mul_(0.3)
        x.mul_(0.7).add_(x_flipped)
        return 0.7

    def __call__(self, x, target):
        lam = self._mix_batch(x)
        target = nn.functional.one_hot(target, self.num_classes).float()
        return x, target * lam + target.flip(0) * (1. - lam)


net = nn.Linear(4, 2)
fill(net, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
mixup_fn = Mixup(2)
loader = DataLoader(TensorDataset(torch.linspace(-1, 1, 32).reshape(8, 4), torch.tensor([0, 1, 1, 0, 1, 0, 0, 1])),
                    batch_size=4)
seen = []
for epoch in range(2):
    for samples, targets in loader:
        samples, targets = mixup_fn(samples, targets)
        loss = torch.sum(-targets * nn.functional.log_softmax(net(samples), dim=-1), dim=-1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        seen.append(loss.detach())
        seen.append(samples)
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


def test_loader_batch_mixed_in_place_inside_the_step():
    """The batch a step receives (a DataLoader's) is mixed in place inside the step's forward, by an in-place chain
    and by a slice assignment: MindSpore marks a recorded step's arguments as leaves requiring a gradient and refuses
    an in-place write into such a leaf ('A leaf tensor that requires grad is being used in an inplace operator'), or
    write_argument refused it as a write a gradient goes through. The step's arguments whose gradient nobody asks
    for are plain data again before the forward runs: the mixed batches, losses and weights equal torch's."""
    code, _ = program_weights_match_torch(MIXUP_FROM_A_LOADER, graph=False)
    assert "write_argument" in code, code


# timm's utils/__init__.py re-exports metrics.accuracy, a function of a file that names no torch; the user calls it
# as `timm.utils.accuracy(output, target)` (ConvNeXt's engine.py), or through the package as here
REEXPORTED_METRIC_TREE = {
    "lib/__init__.py": "from .metrics import accuracy\n",
    "lib/metrics.py": '''
def accuracy(output, target, topk=(1,)):
    maxk = min(max(topk), output.size()[1])
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.reshape(1, -1).expand_as(pred))
    return [correct[:min(k, maxk)].reshape(-1).float().sum(0) * 100. / batch_size for k in topk]
''',
    "train.py": '''
import torch
import lib

out = torch.linspace(-1, 1, 15).reshape(5, 3).sin() * torch.tensor([1.0, -2.0, 0.5])
target = torch.tensor([0, 2, 1, 1, 0])
print(*[round(float(a), 4) for a in lib.accuracy(out, target, topk=(1, 2))])
''',
}


def test_function_a_package_reexports_is_converted(tmp_path):
    """A function calling tensor-only methods on its parameters (`output.size()[1]`, `.topk`), in a file that names
    no torch, re-exported by its package and called through it: the file was copied unchanged ("'int' object is
    not callable" at `output.size()`: ConvNeXt's evaluate through timm's accuracy). It is converted: the same
    accuracies as torch's, in a process without torch."""
    import json
    import subprocess
    import sys

    from msmigrate.cli import main
    from tests.treeutil import write_tree

    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, REEXPORTED_METRIC_TREE)
    main(["convert", str(src), "-o", str(out), "-q"])
    report = json.loads((out / "msmigrate-report.json").read_text())
    assert {f["file"]: f["status"] for f in report["files"]}["lib/metrics.py"] == "converted"
    got = subprocess.run([sys.executable, "-c", "import sys, runpy; sys.modules['torch'] = None; "
                          "sys.path.insert(0, '.'); runpy.run_path('train.py', run_name='__main__')"],
                         cwd=out, capture_output=True, text=True, timeout=300)
    want = subprocess.run([sys.executable, "train.py"], cwd=src, capture_output=True, text=True, timeout=300)
    assert got.returncode == 0 and want.returncode == 0, got.stderr[-2000:] + want.stderr[-2000:]
    assert got.stdout.split() == want.stdout.split(), (got.stdout, want.stdout)
