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
  time embedding): with bench's matched draws (msmigrate/draw_replay.py, a Custom op with a bprop in place of
  ops.randint) the compiled step did not compile (MindSpore summed an int64 and a float32 gradient of `_ts` for
  the op's bprop: "For primitive[AddN], the input type must be same"). The converted program alone compiled (ops'
  own randint has no gradient); the replayed integer draws now carry none either.
- build-nanogpt's optimisation step in small (weight-decay groups, micro-step accumulation, clipping, the
  schedule set into param_groups, causal SDPA, a tied embedding), PYNATIVE and GRAPH: it passed on the set as
  converted; kept as the pattern's regression test."""
import pytest

from tests.parity.harness import load_converted, load_torch, program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

# build-nanogpt's training step in small: weight-decay groups chosen by p.dim() with the fused check on torch's
# signature, micro steps of `loss / grad_accum_steps` backward()s, clip_grad_norm_, a hand-written cosine
# schedule set into every param_group, is_causal scaled_dot_product_attention and a tied embedding
NANOGPT_STEP = _FILL + '''
import inspect
import math

import torch.nn as nn
import torch.nn.functional as F


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(12, 8)
        self.c_attn = nn.Linear(8, 24, bias=False)   # a key bias has no gradient but rounding (softmax shift)
        self.ln = nn.LayerNorm(8)
        self.lm_head = nn.Linear(8, 12, bias=False)
        self.wte.weight = self.lm_head.weight

    def forward(self, idx, targets):
        B, T = idx.size()
        x = self.wte(idx)
        q, k, v = self.c_attn(x).split(8, dim=2)
        q, k, v = (t.view(B, T, 2, 4).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).contiguous().view(B, T, 8)
        logits = self.lm_head(self.ln(x + y))
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    def configure_optimizers(self, weight_decay, learning_rate):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        groups = [{"params": decay_params, "weight_decay": weight_decay},
                  {"params": nodecay_params, "weight_decay": 0.0}]
        fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and False
        return torch.optim.AdamW(groups, lr=learning_rate, betas=(0.9, 0.95), eps=1e-8, fused=use_fused)


def get_lr(it, max_lr=3e-2, warmup_steps=2, max_steps=4):
    if it < warmup_steps:
        return max_lr * (it + 1) / warmup_steps
    decay_ratio = (it - warmup_steps) / (max_steps - warmup_steps)
    return 0.1 * max_lr + 0.5 * (1.0 + math.cos(math.pi * decay_ratio)) * 0.9 * max_lr


model = TinyGPT()
fill(model, 25)
optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=3e-2)
data = torch.tensor([(i * 5 + 3) % 12 for i in range(41)])
grad_accum_steps = 2
losses = []
for step in range(4):
    optimizer.zero_grad()
    loss_accum = 0.0
    for micro_step in range(grad_accum_steps):
        start = (step * grad_accum_steps + micro_step) * 4
        x, y = data[start:start + 8].view(2, 4), data[start + 1:start + 9].view(2, 4)
        logits, loss = model(x, y)
        loss = loss / grad_accum_steps
        loss_accum += loss.detach()
        loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    lr = get_lr(step)
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    optimizer.step()
    losses.append(loss_accum.item())
weights = [p.detach() for p in model.parameters()] + [torch.tensor(losses)]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_nanogpt_accumulated_step_with_schedule(graph):
    program_weights_match_torch(NANOGPT_STEP, graph=graph)
    ref = load_torch(NANOGPT_STEP)
    assert ref["losses"][0] != ref["losses"][-1]       # torch trained

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
