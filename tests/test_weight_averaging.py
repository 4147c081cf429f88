"""Weight averaging (EMA, SWA) and two-step optimizers (SAM), as real training programs write them.

- EMA through `.data` pairs: `pairs = [(e.data, p.data) ...]; tgt.lerp_(src, w)`. The converted write
  (_ms_compat.write_into) gave the `p.data` tensor new memory (assign_value), which MindSpore's `p.data` shares with
  the Parameter only until then: the EMA weights never moved, silently. Now the value is written into that memory.
- ema-pytorch's shape: a module function `inplace_lerp(tgt, src, w)` handed on through `partial(...)`, called on
  `(ma_params.data, current_params.data)` pairs: its in-place lerp_ was a raising TODO (callers unseen); now the new
  value goes into the caller's tensor (_ms_compat.write_argument), refused where a gradient is being recorded.
- torch.optim.swa_utils: AveragedModel (the running mean; an EMA through get_ema_multi_avg_fn) and update_bn
  (templates/compat_parts/swa_utils.py): was an unmapped TODO.
- SAM (davda54/sam's shape): an Optimizer subclass with first_step()/second_step() around two backward()s per
  batch, `p.data = self.state[p]["old_p"]`, a base optimizer built on its param_groups. Was a raising TODO at both
  backward()s. Now each backward() is a step returning the gradients, handed to the optimizer as p.grad right
  before its method (_ms_compat.give_gradients), which runs as written; `p.data = v` writes into the Parameter
  (_ms_compat.store_data: the data setter gave it new memory, which the compiled steps kept not reading).

Each program trains in torch and converted, in PYNATIVE and in the GRAPH mode the converted program chooses, from
the same weights on the same data: the per-step losses, the final weights and the averaged weights must agree."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .parity.harness import load_converted, program_weights_match_torch  # noqa: E402

HEAD = '''
import copy
from functools import partial
import torch

model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) * 0.3)
x = torch.linspace(-1, 1, 24).reshape(6, 4)
y = torch.linspace(0, 1, 12).reshape(6, 2)
losses = []
'''

STEP = '''
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
'''

DATA_PAIRS = HEAD + '''
ema_model = copy.deepcopy(model)
decay = 0.8
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
for step in range(5):''' + STEP + '''
    with torch.no_grad():
        pairs = [(e.data, p.data) for e, p in zip(ema_model.parameters(), model.parameters())]
        pairs += [(e.data, b.data) for e, b in zip(ema_model.buffers(), model.buffers()) if torch.is_floating_point(b)]
        for tgt, src in pairs:
            tgt.lerp_(src, 1 - decay)
weights = list(model.parameters()) + list(ema_model.parameters()) + list(ema_model.buffers())[:2] \\
    + [torch.tensor(losses), ema_model.eval()(x)]
'''

# ema-pytorch's shape (written anew): the in-place update in a module function handed on through partial
PARTIAL = '''
def inplace_lerp(tgt, src, weight, *, coerce=False):
    if coerce:
        src = src.to(tgt.dtype)
    tgt.lerp_(src, weight)


def inplace_copy(tgt, src):
    tgt.copy_(src)


class Averager(torch.nn.Module):
    def __init__(self, model, beta=0.8):
        super().__init__()
        self.online = [model]
        self.ema_model = copy.deepcopy(model)
        self.beta = beta
        self.lerp = partial(inplace_lerp, coerce=True)
        self.copy = inplace_copy
        self.register_buffer("step", torch.tensor(0))

    @torch.no_grad()
    def update(self):
        model = self.online[0]
        pairs = [(e.data, p.data) for e, p in zip(self.ema_model.parameters(), model.parameters())]
        buffers = [(e.data, b.data) for e, b in zip(self.ema_model.buffers(), model.buffers())
                   if torch.is_floating_point(b)]
        if self.step.item() == 0:
            for tgt, src in pairs + buffers:
                self.copy(tgt, src)
        else:
            for tgt, src in pairs + buffers:
                self.lerp(tgt, src, 1. - self.beta)
        self.step += 1

    def forward(self, x):
        return self.ema_model(x)
'''

PARTIAL_PROGRAM = HEAD + PARTIAL + '''
ema = Averager(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
for step in range(5):''' + STEP + '''
    ema.update()
ema.eval()
weights = list(model.parameters()) + list(ema.ema_model.parameters()) + list(ema.ema_model.buffers())[:2] \\
    + [torch.tensor(losses), ema(x)]
'''

AVERAGED_EMA = HEAD + '''
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn, update_bn
ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.8))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
for step in range(5):''' + STEP + '''
    ema_model.update_parameters(model)
update_bn([(x[:3], y[:3]), (x[3:], y[3:])], ema_model)
ema_model.eval()
weights = list(model.parameters()) + list(ema_model.module.parameters()) + list(ema_model.module.buffers())[:2] \\
    + [torch.tensor(losses), ema_model(x)]
'''

AVERAGED_SWA = HEAD + '''
from torch.optim.swa_utils import AveragedModel
swa_model = AveragedModel(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
for step in range(5):''' + STEP + '''
    swa_model.update_parameters(model)
swa_model.eval()
weights = list(model.parameters()) + list(swa_model.parameters()) + list(swa_model.buffers())[:2] \\
    + [torch.tensor(losses), swa_model(x), swa_model.n_averaged]
'''

# davda54/sam's SAM (written anew): step(closure) too, as the original has, unused by these loops
SAM = '''
class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, adaptive=False, **kwargs):
        defaults = dict(rho=rho, adaptive=adaptive, **kwargs)
        super(SAM, self).__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups
        self.defaults.update(self.base_optimizer.defaults)

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = self._grad_norm()
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                self.state[p]["old_p"] = p.data.clone()
                e_w = (torch.pow(p, 2) if group["adaptive"] else 1.0) * p.grad * scale.to(p)
                p.add_(e_w)
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.data = self.state[p]["old_p"]
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def step(self, closure=None):
        assert closure is not None, "SAM needs a closure"
        self.first_step(zero_grad=True)
        closure()
        self.second_step()

    def _grad_norm(self):
        return torch.norm(torch.stack([
            ((torch.abs(p) if group["adaptive"] else 1.0) * p.grad).norm(p=2)
            for group in self.param_groups for p in group["params"] if p.grad is not None]), p=2)
'''

SAM_MODEL = '''
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) * 0.3)
criterion = torch.nn.MSELoss()
'''

SAM_PROGRAM = HEAD + SAM + SAM_MODEL + '''
opt = SAM(model.parameters(), torch.optim.SGD, rho=0.5, lr=0.1, momentum=0.9)
for step in range(5):
    loss = criterion(model(x), y)
    loss.backward()
    opt.first_step(zero_grad=True)
    criterion(model(x), y).backward()
    opt.second_step(zero_grad=True)
    losses.append(loss.item())
weights = list(model.parameters()) + [torch.tensor(losses)]
'''

# adaptive SAM with weight decay; the loop clears at its top and second_step() clears nothing: torch's .grad of
# the second backward() is cleared by that zero_grad() (kept), not summed into the next first_step()
SAM_ADAPTIVE = HEAD + SAM + SAM_MODEL + '''
opt = SAM(model.parameters(), torch.optim.SGD, rho=0.5, adaptive=True, lr=0.1, momentum=0.9, weight_decay=0.01)
for step in range(5):
    opt.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    opt.first_step(zero_grad=True)
    criterion(model(x), y).backward()
    opt.second_step()
    losses.append(loss.item())
weights = list(model.parameters()) + [torch.tensor(losses)]
'''

# nothing clears after second_step(): torch's next first_step() reads the sum of both backward()s' gradients
SAM_SUMMED = SAM_ADAPTIVE.replace("    opt.zero_grad()\n", "")

PROGRAMS = {
    "ema_data_pairs": DATA_PAIRS,
    "ema_partial_function": PARTIAL_PROGRAM,
    "averaged_model_ema_update_bn": AVERAGED_EMA,
    "averaged_model_swa": AVERAGED_SWA,
    "sam": SAM_PROGRAM,
    "sam_adaptive_cleared_at_top": SAM_ADAPTIVE,
    "sam_gradients_summed": SAM_SUMMED,
}


@pytest.mark.parametrize("graph", [False, True], ids=["pynative", "graph"])
@pytest.mark.parametrize("shape", sorted(PROGRAMS))
def test_averaging_and_two_step_programs_train_as_in_torch(shape, graph):
    code, _ = program_weights_match_torch(PROGRAMS[shape], graph, what=f"{shape}: ")
    assert "Unconverted" not in code, code
    assert "ms.set_context(mode=ms.GRAPH_MODE)" in code     # the mode the converted program chooses


def test_averaged_model():
    """The mapping records' test: AveragedModel, get_ema_multi_avg_fn and update_bn convert to the helpers (the
    values are checked by the program test above)."""
    code, _ = program_weights_match_torch(AVERAGED_EMA, False, what="swa_utils: ")
    for name in ("_ms_compat.AveragedModel", "_ms_compat.get_ema_multi_avg_fn", "_ms_compat.update_bn"):
        assert name in code, code


def test_sam_steps_hand_over_the_gradients():
    code, _ = program_weights_match_torch(SAM_PROGRAM, False, what="sam: ")
    assert "_ms_compat.give_gradients(opt, grads, 'first_step')" in code, code
    assert "_ms_compat.give_gradients(opt, grads, 'second_step')" in code, code
    assert "_ms_compat.store_data(p, self.state[p][\"old_p\"]" in code, code


def test_in_place_writes_through_data_land_in_the_parameter():
    """MindSpore's `p.data` is another Tensor sharing the Parameter's memory: write_into / write_data / store_data
    must write into that memory (a new value only for the `.data` object would leave the Parameter as it was)."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    mod, _, _ = load_converted("import torch\nlayer = torch.nn.Linear(2, 3)\n")
    helper = __import__("_ms_compat")
    p = mod.layer.weight
    for write in (lambda t, v: helper.write_into(t, v), lambda t, v: helper.write_data(t, v, "here"),
                  lambda t, v: helper.store_data(p, v, "here")):
        value = ms.Tensor(np.random.RandomState(0).randn(3, 2).astype(np.float32))
        write(p.data, value)
        np.testing.assert_array_equal(p.asnumpy(), value.asnumpy())


ARGUMENT_IN_FORWARD = '''
import torch
from functools import partial


def bump(t, v):
    t.add_(v)  # SITE
    return t * 2


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 3)
        self.f = partial(bump, v=1.0)

    def forward(self, x):
        h = self.fc(x)
        return self.f(h)


net = Net()
'''


def test_function_handed_on_changes_its_argument_in_a_forward():
    """A function handed on through partial that changes its argument in place, called in a forward: op by op outside
    any gradient the caller's tensor changes as torch's (the output torch's); where a gradient is being recorded, or
    in a compiled graph, the write would change a tensor MindSpore's backward reads, or cannot be made: MigrationError
    naming the line (it was a raising TODO everywhere)."""
    import sys

    import torch
    from mindspore.common.api import _pynative_executor
    from .parity.harness import load_torch

    line = next(i for i, t in enumerate(ARGUMENT_IN_FORWARD.splitlines(), 1) if "# SITE" in t)
    ref = load_torch(ARGUMENT_IN_FORWARD)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    mod, code, _ = load_converted(ARGUMENT_IN_FORWARD)
    for name, p in ref["net"].state_dict().items():
        getattr(mod.net.fc, {"fc.weight": "weight", "fc.bias": "bias"}[name]).set_data(ms.Tensor(p.numpy()))
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    with torch.no_grad():
        want = ref["net"](torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(mod.net(ms.Tensor(x)).asnumpy(), want, rtol=1e-6, atol=1e-6)
    error = sys.modules["_ms_compat"].MigrationError
    try:
        with pytest.raises(error, match=rf"\S+:{line}\b"):
            ms.value_and_grad(lambda a: mod.net(a).sum())(ms.Tensor(x))
    finally:
        _pynative_executor.clear_res()
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(error, match=rf"\S+:{line}\b"):
            mod.net(ms.Tensor(x))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
