"""Minimal reproductions of what bench/_rw_heldout25.py's programs (karpathy/build-nanogpt's train_gpt2.py,
cloneofsimo/minDiffusion, tanelp/tiny-diffusion) needed, each compared with torch.

- The device pick `elif hasattr(torch.backends, "mps") and torch.backends.mps.is_available():` (train_gpt2.py):
  `torch.backends` as hasattr's object was a TODO that raised when the line ran, so the program stopped before
  training. hasattr/dir over torch.backends now answer as torch does (msmigrate/torch_names.py), like torch.nn's.
- `'fused' in inspect.signature(torch.optim.AdamW).parameters` (train_gpt2.py's configure_optimizers) read the
  signature of the converted optimizer (_ms_compat.AdamW has no `fused`): False where torch says True, silently.
  inspect.signature of a torch API is torch's parameter list, resolved while converting.
- torch.save of a checkpoint holding a dataclass (`{'model': ..., 'config': raw_model.config}`, a GPTConfig)
  raised TypeError; the dataclass is kept (its class by module and name, its fields) and torch.load gives back an
  instance of that class.
- A diffusion step's timesteps (`_ts = torch.randint(...)`) used both as an index (`self.sqrtab[_ts, None, None,
  None]`) and through true division (`self.eps_model(x_t, _ts / self.n_T)`, mindiffusion's DDPM with NaiveUnet's
  time embedding): the compiled (GRAPH) step did not compile (MindSpore summed an int64 and a float32 gradient of
  `_ts`, "For primitive[AddN], the input type must be same"). The true division of an integer tensor now casts it
  to float first, as torch promotes it."""
import pytest

from tests.parity.harness import load_converted, load_torch, program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

BACKENDS = '''
import inspect
import torch

device = "cpu"
if torch.cuda.is_available():
    device = "cuda"
elif hasattr(torch.backends, "mps") and torch.backends.mps.is_available():
    device = "mps"
has_mps = hasattr(torch.backends, "mps")
has_nothing = hasattr(torch.backends, "no_such_backend")
fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
sig = inspect.signature(torch.optim.AdamW)
lr_default = sig.parameters["lr"].default
names = list(sig.parameters)
'''


def test_backends_hasattr_and_torch_signature():
    ref = load_torch(BACKENDS)
    mod, code, _ = load_converted(BACKENDS, pynative=True)
    assert "TODO" not in code, code
    for name in ("device", "has_mps", "has_nothing", "fused_available", "lr_default", "names"):
        assert getattr(mod, name) == ref[name], name
    assert ref["fused_available"] is True and ref["has_mps"] is True


CHECKPOINT = '''
import os
import tempfile
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class Config:
    block_size: int = 16
    n_embd: int = 8
    label: str = "tiny"


model = nn.Linear(4, 3)
with torch.no_grad():
    model.weight.copy_(torch.arange(12.0).reshape(3, 4) / 10)
config = Config(n_embd=4)
path = os.path.join(tempfile.mkdtemp(), "model_00003.pt")
torch.save({"model": model.state_dict(), "config": config, "step": 3, "val_loss": 1.25}, path)
loaded = torch.load(path, weights_only=False)
same_class = type(loaded["config"]) is Config
fields = (loaded["config"].block_size, loaded["config"].n_embd, loaded["config"].label)
restored = nn.Linear(4, 3)
restored.load_state_dict(loaded["model"])
weight_sum = float(restored.weight.sum())
step, val_loss = loaded["step"], loaded["val_loss"]
'''


def _import_torch_module(src, tmp_path):
    """The torch snippet imported as a module (torch.load unpickles its dataclass by module and name)."""
    import importlib.util
    import sys
    path = tmp_path / "torch_checkpoint_snippet.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("torch_checkpoint_snippet", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        del sys.modules[spec.name]
    return mod


def test_checkpoint_with_a_dataclass_config(tmp_path):
    ref = _import_torch_module(CHECKPOINT, tmp_path)
    mod, code, _ = load_converted(CHECKPOINT, pynative=True)
    assert "TODO" not in code, code
    assert ref.same_class and mod.same_class
    for name in ("fields", "step", "val_loss"):
        assert getattr(mod, name) == getattr(ref, name), name
    assert abs(mod.weight_sum - ref.weight_sum) < 1e-6


def test_replayed_integer_draw_used_as_index_and_divided_in_graph():
    """bench's matched draws (msmigrate/draw_replay.py) in a compiled step: a randint whose result indexes a
    buffer and is divided (minDiffusion's `self.sqrtab[_ts, None, None, None]` and `_ts / self.n_T`) compiles, and
    its value and gradient are those of the same step with the draws as constants."""
    import mindspore as ms
    import numpy as np
    from mindspore import nn, ops
    from msmigrate.draw_replay import replay_functions

    draws = np.array([1, 3], np.int64)
    stand_in = replay_functions(ms, lambda op, kind, template, params: draws)["randint"]

    class Step(nn.Cell):
        def __init__(self, draw):
            super().__init__()
            self.draw = draw
            self.lin = nn.Dense(1, 3)
            self.table = ms.Parameter(ms.Tensor(np.linspace(0.1, 1, 5).astype(np.float32)), requires_grad=False)

        def construct(self, x):
            t = self.draw(1, 5, (2,))
            return (self.lin((t / 4).reshape(-1, 1)) * (self.table[t, None] * x)).sum()

    x = ms.Tensor(np.linspace(-1, 1, 6).reshape(2, 3).astype(np.float32))
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        replayed = Step(stand_in)
        loss, grads = ms.value_and_grad(replayed, None, replayed.trainable_params())(x)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    constant = Step(lambda low, high, size: ms.Tensor(draws))
    for p, q in zip(constant.trainable_params(), replayed.trainable_params()):
        p.set_data(q.value())
    ref_loss, ref_grads = ms.value_and_grad(constant, None, constant.trainable_params())(x)
    assert abs(float(loss) - float(ref_loss)) < 1e-6
    for g, r in zip(grads, ref_grads):
        np.testing.assert_allclose(g.asnumpy(), r.asnumpy(), rtol=1e-6, atol=1e-7)
    assert float(abs(ref_grads[0]).sum()) > 0
