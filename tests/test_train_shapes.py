"""Training-code shapes of real projects, written here as minimal reproductions: each converts to a
train step that computes what torch computes (parameters after the same steps from the same initial
weights, GRAPH and PYNATIVE), or stops with MigrationError naming the original line."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .parity.harness import load_converted  # noqa: E402
from .test_train_loop import MLP, _batches, run_both  # noqa: E402

# DINO's train_one_epoch: the loss computed once, the update chosen by whether a GradScaler is used
UPDATE_BY_SCALER = MLP + """

def make():
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return {"model": model, "optimizer": optimizer}


def fit(model, optimizer, batches, fp16_scaler, clip):
    losses = []
    for x, y in batches:
        out = model(x)
        loss = F.cross_entropy(out, y)
        if not math.isfinite(loss.item()):
            raise SystemExit(1)
        optimizer.zero_grad()
        if fp16_scaler is None:
            loss.backward()
            if clip:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
        else:
            fp16_scaler.scale(loss).backward()
            if clip:
                fp16_scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            fp16_scaler.step(optimizer)
            fp16_scaler.update()
        losses.append(loss.item())
    return losses


def train(objs, batches):
    scaler = torch.amp.GradScaler("cpu", init_scale=4.0) if USE_FP16 else None
    return fit(objs["model"], objs["optimizer"], batches, scaler, CLIP)
"""


@pytest.mark.parametrize("use_fp16,clip", [(False, 0.0), (False, 0.3), (True, 0.3)])
def test_update_chosen_by_a_scaler_flag(use_fp16, clip):
    src = "import math\n" + UPDATE_BY_SCALER + f"\nUSE_FP16 = {use_fp16}\nCLIP = {clip}\n"
    code, sites, _ = run_both(src, _batches())
    assert code.count("def train_step(") == 2 and ".backward()" not in code, code
    assert not [s for s in sites if s.status == TODO], code


def _line_of(src: str, text: str, nth: int = 0) -> int:
    return [i for i, ln in enumerate(src.splitlines(), 1) if ln.strip() == text][nth]


def _raises_at(src: str, run, lines):
    """The conversion reports a raising TODO for each backward() at `lines` (the original's), and running
    the converted program stops with MigrationError naming the first one reached."""
    import re
    mod, code, sites = load_converted(src)
    todo = sorted(s.line for s in sites if s.api == "Tensor.backward" and s.status == TODO)
    assert todo == sorted(lines), (todo, code)
    with pytest.raises(mod._ms_compat.MigrationError, match=rf":{lines[0]}\b"):
        run(mod)
    assert not re.search(r"^\s*def forward_fn", code, re.M), code
    return code


def _ms_batches():
    import mindspore as ms
    return [tuple(ms.Tensor(a) for a in b) for b in _batches(n=2)]


def test_update_chosen_by_a_per_iteration_value_raises_in_both_branches():
    """An update `if` whose test changes per iteration cannot be split: neither branch's step may take the
    loss computed before it as a constant; the else branch was copied through unseen before."""
    src = "import math\n" + UPDATE_BY_SCALER.replace("if fp16_scaler is None:", "if len(losses) % 2 == 0:") + \
        "\nUSE_FP16 = True\nCLIP = 0.3\n"
    _raises_at(src, lambda mod: mod.train(mod.make(), _ms_batches()),
               [_line_of(src, "loss.backward()"), _line_of(src, "fp16_scaler.scale(loss).backward()")])


# a function of the program changing the gradients between backward() and step() (DINO's clip_gradients)
GRADIENTS_CHANGED_BY_A_HELPER = MLP + """

def clip_all(model, clip):
    for p in model.parameters():
        if p.grad is not None:
            p.grad.data.clamp_(-clip, clip)


def make():
    model = Net()
    return {"model": model, "optimizer": torch.optim.SGD(model.parameters(), lr=0.1)}


def train(objs, batches):
    model, optimizer = objs["model"], objs["optimizer"]
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        clip_all(model, 0.01)
        optimizer.step()
        losses.append(loss.item())
    return losses
"""


def test_gradients_changed_by_a_helper_before_the_step_match_torch():
    """Before the last stop the helper ran after the converted step (the update unclipped), silently; then the
    backward() was a raising TODO. Now the step returns the gradients, the helper clamps them as torch's .grad
    (_ms_compat.keep_grads) and the optimizer applies what it leaves (tests/test_gradient_edits.py)."""
    code, sites, _ = run_both(GRADIENTS_CHANGED_BY_A_HELPER, _batches())
    assert "_ms_compat.kept_grads(optimizer.parameters)" in code and ".backward()" not in code, code
    assert not [s for s in sites if s.status == TODO], code


# improved-diffusion's TrainLoop: backward() over micro-batches in one method, step() and an EMA in another
BACKWARD_AND_STEP_IN_TWO_METHODS = MLP + """

class TrainLoop:
    def __init__(self, model, batches, microbatch=3, ema_rate=0.9):
        self.model = model
        self.batches = batches
        self.microbatch = microbatch
        self.ema_rate = ema_rate
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.ema_params = [p.detach().clone() for p in self.model.parameters()]
        self.losses = []

    def run_loop(self):
        for batch in self.batches:
            self.forward_backward(batch)
            self.optimize_normal()

    def forward_backward(self, batch):
        self.opt.zero_grad()
        x, y = batch
        for i in range(0, x.shape[0], self.microbatch):
            loss = F.cross_entropy(self.model(x[i:i + self.microbatch]), y[i:i + self.microbatch])
            self.losses.append(loss.item())
            loss.backward()

    def optimize_normal(self):
        self.opt.step()
        for targ, src in zip(self.ema_params, self.model.parameters()):
            targ.detach().mul_(self.ema_rate).add_(src, alpha=1 - self.ema_rate)


def make():
    return {"model": Net()}
"""


def test_backward_and_step_in_two_methods():
    """The micro-batches' gradients add up since zero_grad() and the other method's step() applies their sum
    (before, the backward() was a raising TODO)."""
    src = BACKWARD_AND_STEP_IN_TWO_METHODS + """

def train(objs, batches):
    loop = TrainLoop(objs["model"], batches)
    loop.run_loop()
    # the EMA of the weights, compared with the losses: its update reads the parameters after each step
    return loop.losses + [float((p * p).sum()) for p in loop.ema_params]
"""
    code, sites, _ = run_both(src, _batches(n=3))
    assert "_ms_compat.hold_gradients(self.opt, accum_grads)" in code and "self.opt.zero_grad()" in code, code
    assert not [s for s in sites if s.status == TODO], code


def test_step_in_another_method_without_its_zero_grad_raises():
    """No zero_grad() of that optimizer before the loop: which sum its step() applies is not followed."""
    src = BACKWARD_AND_STEP_IN_TWO_METHODS.replace("        self.opt.zero_grad()\n", "")
    _raises_at(src, lambda mod: mod.TrainLoop(mod.make()["model"], _ms_batches()).run_loop(),
               [_line_of(src, "loss.backward()")])


# annotated-transformer's loss object: backward() and step() inside __call__, the network called by its caller
LOSS_OBJECT = MLP + """

class SimpleLossCompute:
    def __init__(self, criterion, opt=None):
        self.criterion = criterion
        self.opt = opt

    def __call__(self, x, y, norm):
        loss = self.criterion(x, y) / norm
        loss.backward()
        if self.opt is not None:
            self.opt.step()
            self.opt.zero_grad()
        return loss.item() * norm


def run_epoch(batches, model, loss_compute):
    losses = []
    for x, y in batches:
        out = model(x)
        losses.append(loss_compute(out, y, x.shape[0]))
    return losses


def make():
    return {"model": Net()}


def train(objs, batches):
    model = objs["model"]
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return run_epoch(batches, model, SimpleLossCompute(nn.CrossEntropyLoss(reduction="sum"), opt))
"""


def test_loss_object_called_on_the_networks_output_raises():
    """Before, its step differentiated the loss w.r.t. the optimizer's parameters with the network's output
    a constant: every gradient zero, no error. torch does change the weights here."""
    import torch
    from .parity.harness import load_torch
    ns = load_torch(LOSS_OBJECT)
    torch.manual_seed(0)
    objs = ns["make"]()
    before = [p.detach().clone() for p in objs["model"].parameters()]
    ns["train"](objs, [tuple(torch.from_numpy(a) for a in b) for b in _batches(n=2)])
    assert all((a - p).abs().max() > 0 for a, p in zip(before, objs["model"].parameters()))
    _raises_at(LOSS_OBJECT, lambda mod: mod.train(mod.make(), _ms_batches()), [_line_of(LOSS_OBJECT, "loss.backward()")])


def test_gradients_changed_by_a_trainer_method_before_the_step_match_torch():
    """A method of the program clamping .grad between backward() and step(): it runs on the kept gradients and
    the optimizer applies what it leaves (a raising TODO before)."""
    src = MLP + """

class Trainer:
    def __init__(self, model, opt):
        self.model, self.opt = model, opt

    def clip(self, model):
        for p in model.parameters():
            p.grad.data.clamp_(-0.01, 0.01)

    def run(self, batches):
        losses = []
        for x, y in batches:
            self.opt.zero_grad()
            loss = F.cross_entropy(self.model(x), y)
            loss.backward()
            self.clip(self.model)
            self.opt.step()
            losses.append(loss.item())
        return losses


def make():
    model = Net()
    return {"model": model, "optimizer": torch.optim.SGD(model.parameters(), lr=0.1)}


def train(objs, batches):
    return Trainer(objs["model"], objs["optimizer"]).run(batches)
"""
    code, sites, _ = run_both(src, _batches())
    assert "_ms_compat.kept_grads(self.opt.parameters)" in code, code


# the same choice in a per-batch step function (no loop around the `if`)
UPDATE_BY_SCALER_PER_BATCH = MLP + """

def make():
    model = Net()
    return {"model": model, "optimizer": torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)}


def train_one(model, optimizer, x, y, scaler=None):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    if scaler is None:
        loss.backward()
        optimizer.step()
    else:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    return loss.item()


def train(objs, batches):
    scaler = torch.amp.GradScaler("cpu", init_scale=4.0) if USE_FP16 else None
    return [train_one(objs["model"], objs["optimizer"], x, y, scaler) for x, y in batches]
"""


@pytest.mark.parametrize("use_fp16", [False, True])
def test_update_chosen_by_a_scaler_flag_in_a_step_function(use_fp16):
    """Before, both backward()s were copied through unseen (no TODO, no step)."""
    src = UPDATE_BY_SCALER_PER_BATCH + f"\nUSE_FP16 = {use_fp16}\n"
    code, sites, _ = run_both(src, _batches(n=3))
    assert code.count("def train_step(") == 2 and ".backward()" not in code, code
    assert not [s for s in sites if s.status == TODO], code


def test_update_chosen_by_a_loss_value_in_a_step_function_raises():
    src = UPDATE_BY_SCALER_PER_BATCH.replace("if scaler is None:", "if loss.item() > 0.5:") + "\nUSE_FP16 = True\n"
    _raises_at(src, lambda mod: mod.train(mod.make(), _ms_batches()),
               [_line_of(src, "loss.backward()"), _line_of(src, "scaler.scale(loss).backward()")])
