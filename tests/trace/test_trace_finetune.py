"""Fine-tuning on the trace route (msmigrate/trace/finetune.py): a module whose forward returns its loss
is traced in training mode, then trained by torch and, in a process that never imports torch, by the
written model.py (PYNATIVE and GRAPH) with the same AdamW from the same weights on the same batches:
the per-step losses and the first step's gradients must agree. The model holds what a Hugging Face LM
brings to a fine-tuning step: an LM head tied to the token embedding, a padding row (no gradient in
torch), a float buffer on the gradient path (never trained), a frozen weight, and a cross-entropy with
ignored labels. bench/hf_zoo.py --finetune runs the same check on tiny BERT, GPT-2 and Llama."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from msmigrate.trace import trace_model
from msmigrate.trace.finetune import LOSS_RTOL, finetune_check

VOCAB, DIM, SEQ = 23, 16, 8


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, DIM, padding_idx=0)
        self.pos = nn.Embedding(SEQ, DIM)
        self.register_buffer("scale", torch.linspace(0.5, 1.5, DIM))   # trained by nobody
        self.frozen = nn.Linear(DIM, DIM)
        self.frozen.weight.requires_grad_(False)                       # its bias still trains
        self.mix = nn.Linear(DIM, DIM)
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)
        self.head.weight = self.tok.weight                             # tied: one tensor

    def forward(self, ids, labels):
        h = (self.tok(ids) + self.pos(torch.arange(ids.shape[1]))) * self.scale
        h = torch.tanh(self.frozen(h)) + F.gelu(self.mix(h))
        logits = self.head(self.norm(h))
        return F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), labels[:, 1:].reshape(-1), ignore_index=-100)


def _batches(n):
    g = torch.Generator().manual_seed(1)
    out = []
    for _ in range(n):
        ids = torch.randint(1, VOCAB, (3, SEQ), generator=g)
        ids[1, -3:] = 0                                   # padding: token 0, label ignored
        out.append((ids, ids.masked_fill(ids == 0, -100)))
    return out


def test_finetune_steps_match_torch(tmp_path):
    torch.manual_seed(0)
    row = finetune_check(TinyLM(), _batches(3), tmp_path / "lm", optimizer="adamw",
                         hp=dict(lr=0.02, weight_decay=0.01), dynamic_batch=False)
    assert row.get("ok"), row
    src = (tmp_path / "lm" / "model.py").read_text()
    assert "self.scale = buffer((16,))" in src               # a buffer: no gradient, no update
    assert "self.head.weight = self.tok.weight" in src       # one Parameter for the tied pair
    assert "freeze(self, ['frozen.weight'])" in src
    assert "embedding_lookup(self.head.weight, ids, 0)" in src   # the padding row: no gradient
    for mode in ("pynative", "graph"):
        m = row[mode]
        assert m["pass"] and len(m["losses"]) == 3, (mode, m)
        assert max(m["loss_rel_diff"]) <= LOSS_RTOL and m["grad_rel_diff"] <= 1e-4, (mode, m)
        assert m["params"] == 7   # tok (with head), pos, frozen.bias, mix.weight/bias, norm.weight/bias
    assert row["torch"][0] != row["torch"][-1]               # the steps did train


class Dropping(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.lin(x)).square().mean()


def test_training_trace_refuses_dropout(tmp_path):
    """Dropout's random masks cannot match torch's: a training-mode trace names it instead of dropping it
    (an eval-mode trace, for inference, drops it as torch's eval mode does)."""
    res = trace_model(Dropping(), (torch.randn(2, 4),), tmp_path / "d", train=True, check=False, validate=False)
    assert res.missing and "dropout" in res.missing[0][0] and "dropout probabilities to 0" in res.missing[0][1]
    assert not (tmp_path / "d" / "model.py").exists()


def test_a_tied_key_with_other_values_is_refused():
    """create_model drops the second key of a tied pair from the checkpoint only when it holds the values
    of the first (a checkpoint from an untied model would otherwise lose them silently)."""
    import mindspore as ms
    import numpy as np
    import pytest

    from msmigrate.trace.codegen import runtime_source

    ns = {}
    exec(runtime_source(), ns)  # noqa: S102 - the runtime model.py carries

    def prm(v):
        return ms.Parameter(ms.Tensor(np.full((2,), v, np.float32)))

    assert list(ns["untie_checkpoint"]({"tok": prm(1.0), "head": prm(1.0)}, {"head": "tok"})) == ["tok"]
    assert list(ns["untie_checkpoint"]({"tok": prm(1.0)}, {"head": "tok"})) == ["tok"]   # saved by MindSpore
    with pytest.raises(RuntimeError, match="head is tied to tok but holds other values"):
        ns["untie_checkpoint"]({"tok": prm(1.0), "head": prm(2.0)}, {"head": "tok"})


class Padded(nn.Module):
    """Constant padding on the gradient's path: F.pad (aten constant_pad_nd) and max/avg pooling with padding
    (the runtime's pad_or_crop), before and after a trained layer."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3)
        self.lin = nn.Linear(8, 3)

    def forward(self, x):
        h = F.pad(self.conv(x), (1, 2, 2, 0), value=0.5)                   # (2, 3, 6, 7)
        h = F.max_pool2d(h, 3, 2, 1) + F.avg_pool2d(h, 3, 2, 1, count_include_pad=False)
        return (self.lin(F.pad(h, (2, 2))) ** 2).mean()


def test_finetune_through_constant_padding(tmp_path):
    """The traced route padded with MindSpore's constant pad kernel, whose gradient inside a compiled train step
    (GRAPH, CPU, 2.10) goes wrong from the second run on and then is zero for the layers before it; padding is
    now concatenated (the runtime's constant_pad). Three SGD steps' losses and the first gradients vs torch."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(2)
    batches = [(torch.randn(2, 2, 6, 6, generator=g),) for _ in range(3)]
    row = finetune_check(Padded(), batches, tmp_path / "pad", optimizer="sgd", hp=dict(lr=0.5), dynamic_batch=False)
    assert row.get("ok"), row
    src = (tmp_path / "pad" / "model.py").read_text()
    assert "constant_pad(" in src and "ops.pad(" not in src, src
    for mode in ("pynative", "graph"):
        m = row[mode]
        assert m["pass"] and max(m["loss_rel_diff"]) <= LOSS_RTOL and m["grad_rel_diff"] <= 1e-4, (mode, m)
