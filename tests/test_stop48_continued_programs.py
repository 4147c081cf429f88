"""Minimal reproductions of real-code constructs found this stop, each compared with torch.

- DRAGAN's step (znxlwm's GAN collection): the gradient penalty's noise and its torch.autograd.grad each written
  once per device, `if self.gpu_mode: <...>.cuda() else: <...>`. Once converted, both branches are the same
  statement, but the `if` hid the draw from the loop's passes: the step was taped (op by op) and stopped at its
  line (MigrationError: a gradient of a gradient through a convolution). An `if` on a plain flag whose branches
  are the same once converted is now its body (same_branches.py), and the step compiles.
- `teacher[1][0].running_mean.fill_(v)` (RepDistiller): the layer's class is not known where it is read, so the
  attribute kept torch's name and MindSpore raised AttributeError, naming no original line. torch gives only its
  norm layers running_mean/running_var: the converted read takes the name the cell has, at run time. Stored
  (`layers[0].running_mean = v`, `+=`), the name was MindSpore's new attribute beside the statistics, silently:
  the store takes the cell's name too."""
import libcst as cst
import numpy as np
import pytest

from tests.test_taped_backward import _FILL     # the same starting weights on both sides

PENALTY_PER_DEVICE = _FILL + '''
import torch.nn as nn
from torch.autograd import grad


class Trainer:
    def __init__(self, gpu_mode):
        self.gpu_mode = gpu_mode
        self.D = nn.Sequential(nn.Conv2d(1, 3, 3, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(12, 1))
        fill(self.D, 1)
        if self.gpu_mode:
            self.D.cuda()
            self.loss = nn.MSELoss().cuda()
        else:
            self.loss = nn.MSELoss()
        self.opt = torch.optim.SGD(self.D.parameters(), lr=0.05)

    def train(self, batches):
        rng = np.random.RandomState(3)
        for x in batches:
            self.opt.zero_grad()
            fit = self.loss(self.D(x), torch.ones(x.size(0), 1))
            if self.gpu_mode:
                x_p = x + 0.5 * x.std() * torch.from_numpy(rng.rand(*x.shape).astype(np.float32)).cuda()
            else:
                x_p = x + 0.5 * x.std() * torch.from_numpy(rng.rand(*x.shape).astype(np.float32))
            between = x + 0.5 * (x_p - x)
            between.requires_grad = True
            judged = self.D(between)
            if self.gpu_mode:
                slopes = grad(outputs=judged, inputs=between, grad_outputs=torch.ones(judged.size()).cuda(),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
            else:
                slopes = grad(outputs=judged, inputs=between, grad_outputs=torch.ones(judged.size()),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
            penalty = 10.0 * ((slopes.view(slopes.size()[0], -1).norm(2, 1) - 1) ** 2).mean()
            total = fit + penalty
            total.backward()
            self.opt.step()


rng = np.random.RandomState(0)
trainer = Trainer(gpu_mode=False)
trainer.train([torch.from_numpy(rng.randn(5, 1, 4, 4).astype(np.float32)) for _ in range(3)])
print("OUT", [float(v) for p in trainer.D.parameters() for v in p.detach().reshape(-1)])
'''


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_penalty_written_once_per_device_compiles(tmp_path, mode):
    from msmigrate.cli import main
    from tests.treeutil import run_printed, write_tree

    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {"train.py": PENALTY_PER_DEVICE})
    main(["convert", str(src), "-o", str(out), "-q"])
    code = (out / "train.py").read_text()
    assert "compile_step" in code and "tape_step" not in code and "if self.gpu_mode:\n" not in code, code
    np.testing.assert_allclose(run_printed(out, "ms", mode), run_printed(src, "torch"), rtol=1e-5, atol=1e-6)


def _merged(code: str):
    from msmigrate.same_branches import merged

    return merged(cst.parse_module(code).body[0])


def test_branches_merge_only_when_the_same_and_the_test_calls_nothing():
    """Before/after: the same code (comments and layout aside) under a plain flag is one branch; different code,
    a test that calls something, or an `elif` stays an `if`."""
    same = "if self.gpu_mode:\n    a = f(x)  # on the GPU\nelse:\n    a = f( x )\n"
    body = _merged(same)
    assert [cst.Module(body=[st]).code for st in body] == [
        "# msmigrate: `if self.gpu_mode:` and its `else:` are the same once converted (a branch per device): "
        "one of them\na = f(x)  # on the GPU\n"]
    assert _merged("if flag:\n    a = f(x)\nelse:\n    a = g(x)\n") is None
    assert _merged("if ready():\n    a = f(x)\nelse:\n    a = f(x)\n") is None
    assert _merged("if not args.no_cuda:\n    a = f(x)\nelse:\n    a = f(x)\n") is not None
    assert _merged("if args.device == 'cuda':\n    a = f(x)\nelse:\n    a = f(x)\n") is not None
    assert _merged("if args.device == g():\n    a = f(x)\nelse:\n    a = f(x)\n") is None
    assert _merged("if n < 2:\n    a = f(x)\nelse:\n    a = f(x)\n") is None
    assert _merged("if flag:\n    a = f(x)\nelif other:\n    a = f(x)\nelse:\n    a = f(x)\n") is None
    assert _merged("if flag:\n    a = f(x)\n") is None


def test_an_if_the_conversion_emptied_goes():
    """`if self.gpu_mode: self.G.cuda()` is `if self.gpu_mode: pass` once converted: it does nothing either way,
    and goes; one with an `else`, a comment, or a test that calls something stays."""
    from msmigrate.same_branches import emptied

    def first(code):
        return cst.parse_module(code).body[0]

    assert emptied(first("if self.gpu_mode:\n    pass\n"))
    assert emptied(first("if use_cuda:  #@msmigrate-line:7@\n    pass\n"))
    assert not emptied(first("if use_cuda:\n    pass  # keep: the user's note\n"))
    assert not emptied(first("if use_cuda:\n    pass\nelse:\n    a = 1\n"))
    assert not emptied(first("if ready():\n    pass\n"))
    assert not emptied(first("if use_cuda:\n    a = 1\n"))


NORM_STATS_OF_AN_INDEXED_LAYER = '''
import numpy as np
import torch
import torch.nn as nn


class Stats(nn.Module):
    """A module of the user's with its own running_mean: it keeps the name."""
    def __init__(self):
        super().__init__()
        self.register_buffer("running_mean", torch.zeros(3))


teacher = nn.ModuleList([nn.Linear(4, 3), nn.ModuleList([nn.BatchNorm1d(3), Stats()])])
with torch.no_grad():
    teacher[0].weight.copy_(torch.linspace(-1, 1, 12).reshape(3, 4))
    teacher[0].bias.zero_()
teacher[1][0].running_mean.fill_(0.5)
teacher[1][0].running_var.fill_(2.0)
teacher[1][1].running_mean.fill_(0.25)


def shift(layers):
    layers[0].running_mean = layers[0].running_mean - 0.125
    layers[0].running_var += 1.0
    layers[1].running_mean += 1.0


shift(teacher[1])
teacher.eval()
x = torch.from_numpy(np.arange(8, dtype=np.float32).reshape(2, 4))
y = teacher[1][0](teacher[0](x))
print("OUT", [float(v) for v in y.detach().reshape(-1)] + [float(teacher[1][1].running_mean.sum())])
'''


def test_norm_statistics_of_a_layer_read_by_index(tmp_path):
    from msmigrate.cli import main
    from tests.treeutil import run_printed, write_tree

    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {"train.py": NORM_STATS_OF_AN_INDEXED_LAYER})
    main(["convert", str(src), "-o", str(out), "-q"])
    code = (out / "train.py").read_text()
    assert "hasattr(teacher[1][0], 'moving_variance')" in code and "setattr(layers[0], 'moving_mean' if" in code, code
    np.testing.assert_allclose(run_printed(out, "ms"), run_printed(src, "torch"), rtol=1e-6)


def test_same_branches_of_an_elif_are_the_chains_else(tmp_path):
    """`elif gpu: <a>.cuda() else: <a>`: the `elif` is no statement of a block (it cannot become its body's
    statements): it becomes the chain's `else:`. It stopped the file's conversion before (a FlattenSentinel where
    libcst takes an If or an Else)."""
    from msmigrate.cli import main
    from tests.treeutil import write_tree

    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {"prog.py": "import torch\n\n\ndef f(x, mode, gpu):\n    if mode == 1:\n        y = x + 1\n"
                                "    elif gpu:\n        y = (x * 2).cuda()\n    else:\n        y = x * 2\n"
                                "    return y\n"})
    main(["convert", str(src), "-o", str(out), "-q"])
    code = (out / "prog.py").read_text()
    assert "    else:\n        # msmigrate: `if gpu:` and its `else:` are the same once converted" in code, code
    namespace = {}
    exec(compile(code, "prog.py", "exec"), namespace)
    assert namespace["f"](3, 1, True) == 4 and namespace["f"](3, 2, True) == 6 and namespace["f"](3, 2, False) == 6


PENALTY_READING_THE_TRAINERS_LABELS = _FILL + '''
import torch.nn as nn
from torch.autograd import grad


class Trainer:
    def __init__(self):
        self.D = nn.Sequential(nn.Conv2d(1, 3, 3, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(12, 1))
        fill(self.D, 2)
        self.opt = torch.optim.SGD(self.D.parameters(), lr=0.05)
        self.y_real_ = torch.ones(5, 1)

    def train(self, batches):
        for k, x in enumerate(batches):
            if k == 2:
                self.y_real_ = torch.full((5, 1), 0.5)     # rebound: the step reads the new labels
            self.opt.zero_grad()
            fit = ((self.D(x) - self.y_real_) ** 2).mean()
            x_hat = x * 0.5
            x_hat.requires_grad = True
            judged = self.D(x_hat)
            slopes = grad(outputs=judged, inputs=x_hat, grad_outputs=torch.ones(judged.size()),
                          create_graph=True, retain_graph=True, only_inputs=True)[0]
            total = fit + 10.0 * ((slopes.view(slopes.size(0), -1).norm(2, 1) - 1) ** 2).mean()
            total.backward()
            self.opt.step()


rng = np.random.RandomState(0)
trainer = Trainer()
trainer.train([torch.from_numpy(rng.randn(5, 1, 4, 4).astype(np.float32)) for _ in range(4)])
print("OUT", [float(v) for p in trainer.D.parameters() for v in p.detach().reshape(-1)])
'''


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_penalty_step_reading_a_tensor_the_trainer_holds(tmp_path, mode):
    """DRAGAN's critic step reads the trainer's `self.y_real_`, a tensor a plain object holds: such a step ran op
    by op (a compiled graph keeps the tensor it was compiled with), and op by op the gradient of a gradient
    through a convolution is wrong in MindSpore 2.10, so it stopped (MigrationError). Such a step now compiles,
    the held tensors' values (up to 4096 entries) choosing its graph as numbers' do: rebinding the labels
    compiles anew (graph_constants.keyed_tensor)."""
    from msmigrate.cli import main
    from tests.treeutil import run_printed, write_tree

    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {"train.py": PENALTY_READING_THE_TRAINERS_LABELS})
    main(["convert", str(src), "-o", str(out), "-q"])
    assert "compile_step" in (out / "train.py").read_text()
    np.testing.assert_allclose(run_printed(out, "ms", mode), run_printed(src, "torch"), rtol=1e-5, atol=1e-6)
