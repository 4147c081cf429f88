"""A backward() of a loss handed to a function (argument_backward.py): a loss-scaler object in the manner of timm's
NativeScaler and MAE's NativeScalerWithGradNormCount, whose __call__ runs `scaler.scale(loss).backward(
create_graph=create_graph)`, then, when it updates, unscale_, clip_grad_norm_ or a norm of the parameters' .grad,
and `scaler.step(optimizer)`; the loop clears the gradients every `accum_iter` calls. Before, the backward() was a
TODO (MAE's first step stopped with MigrationError). Each program is written here; each side starts from the same
weights (_FILL) and data."""
import numpy as np
import pytest

from tests.parity.harness import load_converted, program_weights_match_torch
from tests.test_taped_backward import _FILL

LOSS_SCALER = _FILL + '''
import math
import torch
import torch.nn as nn


class NormScaler:
    state_dict_key = "amp_scaler"

    def __init__(self):
        self._scaler = torch.cuda.amp.GradScaler()

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None, create_graph=False, update_grad=True):
        self._scaler.scale(loss).backward(create_graph=create_graph)
        if update_grad:
            if clip_grad is not None:
                self._scaler.unscale_(optimizer)
                norm = torch.nn.utils.clip_grad_norm_(parameters, clip_grad)
            else:
                self._scaler.unscale_(optimizer)
                norm = grad_norm(parameters)
            self._scaler.step(optimizer)
            self._scaler.update()
        else:
            norm = None
        return norm


def grad_norm(parameters, norm_type=2.0):
    parameters = [p for p in parameters if p.grad is not None]
    if len(parameters) == 0:
        return torch.tensor(0.)
    return torch.norm(torch.stack([torch.norm(p.grad.detach(), norm_type) for p in parameters]), norm_type)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.shift = nn.Parameter(torch.zeros(8))
        self.offset = nn.Parameter(torch.zeros(8))
        self.fc2 = nn.Linear(8, 2)
        self.unused = nn.Linear(3, 3)      # no gradient: AdamW skips it (no decay), as torch's step() does

    def forward(self, x):
        # two parameters meeting in one operation (`cls_token + pos_embed`)
        return self.fc2(torch.tanh(self.fc1(x) + (self.shift + self.offset)))


def train_one_epoch(model, data, optimizer, loss_scaler, accum_iter, max_norm, norms):
    model.train(True)
    optimizer.zero_grad()
    for step, (x, y) in enumerate(data):
        loss = ((model(x) - y) ** 2).mean()
        loss_value = loss.item()
        if not math.isfinite(loss_value):
            raise ValueError("Loss is {}".format(loss_value))
        loss /= accum_iter
        norm = loss_scaler(loss, optimizer, clip_grad=max_norm, parameters=model.parameters(),
                           update_grad=(step + 1) % accum_iter == 0)
        if (step + 1) % accum_iter == 0:
            optimizer.zero_grad()
        if norm is not None:
            norms.append(norm.reshape(1))


model = Net()
fill(model, 0)
rng = np.random.RandomState(1)
data = [(torch.from_numpy(rng.randn(3, 4).astype(np.float32)), torch.from_numpy(rng.randn(3, 2).astype(np.float32)))
        for _ in range(4)]
optimizer = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.1)
loss_scaler = NormScaler()
norms = []
for epoch in range(2):
    train_one_epoch(model, data, optimizer, loss_scaler, 2, None, norms)    # accumulated over two calls
train_one_epoch(model, data, optimizer, loss_scaler, 1, 0.3, norms)         # clipped
weights = [p.detach() for p in model.parameters()] + [torch.cat(norms)]
'''


def test_loss_scaler_object_trains_as_torch():
    """Weights (the unused layer's, which AdamW skips, among them) and every gradient norm equal torch's: the
    sum over accumulated calls, clipping in place, p.grad reads and zero_grad() as torch has them."""
    code, sites = program_weights_match_torch(LOSS_SCALER, graph=False)
    assert "_ms_compat.backward_to_grads(" in code, code
    assert code.count("_ms_compat.clear_module_grads(optimizer") == 2, code


def test_loss_scaler_in_graph_mode_raises_naming_the_line():
    """A compiled graph records no operations to differentiate: the backward() stops with MigrationError naming
    its original line."""
    import mindspore as ms
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(Exception) as err:
            load_converted(LOSS_SCALER + "# GRAPH\n")
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    line = LOSS_SCALER.splitlines().index(
        "        self._scaler.scale(loss).backward(create_graph=create_graph)") + 1
    assert type(err.value).__name__ == "MigrationError" and f":{line}" in str(err.value), err.value


def test_backward_adding_to_applied_gradients_raises():
    """A loop that never clears (no zero_grad()): torch adds every backward() to the gradients a step already
    applied, where a zero_grad() converted apart (another package) may have gone; the converted backward() stops
    with MigrationError naming its line, not a step on different gradients."""
    src = LOSS_SCALER.replace("        if (step + 1) % accum_iter == 0:\n            optimizer.zero_grad()\n", "")
    with pytest.raises(Exception) as err:
        load_converted(src)
    assert type(err.value).__name__ == "MigrationError" and "no zero_grad() since" in str(err.value), err.value


SCALER_LIBRARY = {
    "scalerlib/__init__.py": """
        from .scaler import LossScaler, Mixer
        """,
    "scalerlib/scaler.py": """
        import torch


        class LossScaler:
            def __init__(self):
                self._scaler = torch.cuda.amp.GradScaler()

            def __call__(self, loss, optimizer, clip_grad=None, parameters=None, create_graph=False):
                self._scaler.scale(loss).backward(create_graph=create_graph)
                if clip_grad is not None:
                    self._scaler.unscale_(optimizer)
                    torch.nn.utils.clip_grad_norm_(parameters, clip_grad)
                self._scaler.step(optimizer)
                self._scaler.update()


        class Mixer:
            def __init__(self, lam=0.75):
                self.lam = lam

            def __call__(self, x):
                x.mul_(self.lam).add_(x.flip(0).mul_(1.0 - self.lam))
                return x
        """,
}
SCALER_PROJECT = {
    "train.py": _FILL + """
import json
import torch.nn as nn
from scalerlib import LossScaler

model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
fill(model, 0)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loss_scaler = LossScaler()
rng = np.random.RandomState(1)
for step in range(4):
    x = torch.from_numpy(rng.randn(3, 4).astype(np.float32))
    y = torch.from_numpy(rng.randn(3, 2).astype(np.float32))
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss_scaler(loss, optimizer, clip_grad=0.5, parameters=model.parameters())
print(json.dumps([p.detach().flatten().tolist() for p in model.parameters()]))
""",
    "mixtrain.py": """
import torch
import torch.nn as nn
from scalerlib import Mixer

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
mixer = Mixer()
for step in range(2):
    x = mixer(torch.ones(3, 4))
    optimizer.zero_grad()
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
""",
}


def test_loss_scaler_of_a_dependency_trains_as_torch(tmp_path):
    """The loss scaler lives in a package converted by --deps (timm's NativeScaler): the project's zero_grad(),
    which a project alone would drop, stays (ProjectIndex.deps_argument_backward), and the trained weights equal
    torch's. A --deps class writing into its caller's tensor (timm's Mixup) puts a program building it in
    PYNATIVE mode (deps_write_owners)."""
    import json
    import os
    import subprocess
    import sys
    from tests.test_deps import _env, _msmigrate, _write

    site = tmp_path / "site"
    _write(site, SCALER_LIBRARY)
    for rel, text in SCALER_PROJECT.items():
        (tmp_path / "proj").mkdir(exist_ok=True)
        (tmp_path / "proj" / rel).write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    env = _env(site)
    res = _msmigrate(["convert", str(tmp_path / "proj"), "-o", str(out), "--deps", "scalerlib", "-q"], env)
    assert res.returncode == 0, res.stdout + res.stderr
    train = (out / "train.py").read_text()
    assert "_ms_compat.clear_module_grads(optimizer" in train, train
    assert "backward_to_grads" in (out / "_deps" / "scalerlib" / "scaler.py").read_text()
    assert "PYNATIVE_MODE" in (out / "mixtrain.py").read_text()
    want = subprocess.run([sys.executable, "train.py"], cwd=tmp_path / "proj", env=env, capture_output=True,
                          text=True, timeout=300)
    got = subprocess.run([sys.executable, "train.py"], cwd=out, env=dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2"),
                         capture_output=True, text=True, timeout=300)
    assert want.returncode == 0 and got.returncode == 0, (want.stderr[-2000:], got.stderr[-2000:])
    t = json.loads(want.stdout.strip().splitlines()[-1])
    m = json.loads(got.stdout.strip().splitlines()[-1])
    assert len(t) == len(m) == 4
    for a, b in zip(t, m):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=2e-6)
