"""The `heldout24` set of bench/real_world.py (`--set heldout24`): language-model and flow code of the LLaMA era the
converter was never run on, converted as a new user would convert it.

    python bench/real_world.py --mirrors /work/.mirror --set heldout24 [--only llama2c_train,mamba_train]

- karpathy/llama2.c:
  - llama2c_train: train.py as it is (`--key=value` overrides read by configurator.py's exec, a custom 64-token
    vocabulary, CPU, float32, no compile): an IterableDataset over memory-mapped uint16 shards (the data writer
    writes two small ones, and stand-ins for `requests` and `sentencepiece`, which tinystories.py imports and the
    run never calls), grouped-query attention with rotary embeddings in real arithmetic, `self.last_loss` set in
    forward and read by the loop, gradient accumulation, clipping, a cosine schedule set into the param groups,
    `@torch.no_grad()` estimate_loss, the checkpoint torch.save writes and export.py's legacy binary export.
  - llama2c_generate: model.py's Transformer through a driver: a few AdamW steps from configure_optimizers, then
    `generate` (`@torch.inference_mode()`, top-k filtering by a boolean-mask write of -inf, greedy at
    temperature 0).
- johnma2006/mamba-minimal, mamba_train: model.py's Mamba (einops rearrange/repeat/einsum, a depthwise causal
  Conv1d, the selective scan written as a Python loop over time) trained a few steps on random tokens.
- hkproj/pytorch-llama, pllama_decode: model.py's Transformer decoding one token at a time with its KV cache
  (rotary embeddings as complex numbers: torch.polar, view_as_complex / view_as_real; cache tensors written by
  slice assignment), logits compared.
- cloneofsimo/minRF, minrf_train: rf.py's RF (a plain object: sigmoid of a normal draw for t, randn_like noise, a
  per-sample MSE, `.tolist()` of its detached losses) around dit.py's DiT_Llama (adaLN modulation, complex rotary
  frequencies, patchify/unpatchify), a few Adam steps, then RF.sample's Euler steps under `@torch.no_grad()`.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

LLAMA2C = "karpathy+llama2.c@350e04fe35433e6d2941dce5a1f53308f87058eb"
MAMBA = "johnma2006+mamba-minimal@03de542a36d873f6e6c4057ad687278cc6ae944d"
PLLAMA = "hkproj+pytorch-llama@067f8a37fe36ac8b52dca9cc6f2a2e8d6aa372d6"
MINRF = "cloneofsimo+minRF@4fc10e0cc8ba976152c7936a1af9717209f03e18"

# tinystories.py imports both at the top; the training run never calls them
_STANDINS = {
    "requests.py": '"""A stand-in written by bench/_rw_heldout24.py: tinystories.py imports it, train.py never calls it."""\n',
    "sentencepiece.py": '"""A stand-in written by bench/_rw_heldout24.py (tokenizer.py imports it; train.py never '
                        'tokenizes)."""\n\n\nclass SentencePieceProcessor:\n    pass\n',
}


def _shards(root):
    """Two shards of uint16 tokens of a 64-token vocabulary (shard 0 is the test split) and the stand-ins, in the
    program's directory (RUN/SIDE/x/prog, its working directory: tinystories.py reads data/tok64/*.bin)."""
    import numpy as np
    prog = Path(root).parent / "x" / "prog"
    prog.mkdir(parents=True, exist_ok=True)
    for name, text in _STANDINS.items():
        (prog / name).write_text(text)
    d = prog / "data" / "tok64"
    d.mkdir(parents=True, exist_ok=True)
    rng = np.random.RandomState(0)
    for i in range(2):
        # a learnable stream: each token mostly follows from the one before
        toks = np.zeros(2000, dtype=np.uint16)
        for t in range(1, len(toks)):
            toks[t] = (toks[t - 1] * 5 + 3) % 64 if rng.rand() < 0.8 else rng.randint(64)
        toks.tofile(d / f"data{i:02d}.bin")


_TRAIN_ARGS = ["--vocab_source=custom", "--vocab_size=64", "--device=cpu", "--compile=False", "--dtype=float32",
               "--batch_size=4", "--max_seq_len=16", "--dim=32", "--n_layers=2", "--n_heads=4", "--n_kv_heads=2",
               "--multiple_of=16", "--max_iters=4", "--eval_interval=2", "--eval_iters=2",
               "--gradient_accumulation_steps=2", "--warmup_iters=2", "--log_interval=1", "--out_dir=out"]

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("llama2c_train", LLAMA2C, "model.py,train.py,tinystories.py,tokenizer.py,export.py,configurator.py",
     "train.py", _TRAIN_ARGS, _shards),
    ("llama2c_generate", LLAMA2C, "model.py,", "driver.py", [], None),
    ("mamba_train", MAMBA, "model.py,", "driver.py", [], None),
    ("pllama_decode", PLLAMA, "model.py,", "driver.py", [], None),
    ("minrf_train", MINRF, "rf.py,dit.py", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the repositories' modules.
DRIVERS = {
    "llama2c_generate": '''
import torch
from model import ModelArgs, Transformer

torch.manual_seed(0)
args = ModelArgs(dim=32, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=48, multiple_of=16, max_seq_len=16,
                 dropout=0.0)
model = Transformer(args)
optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), "cpu")
data = torch.randint(0, 48, (4, 17))
for step in range(4):
    logits = model(data[:, :-1], data[:, 1:].contiguous())
    loss = model.last_loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
model.eval()
greedy = model.generate(data[:2, :4], 6, temperature=0.0)
print("VALUE greedy", float(greedy.float().sum()))
with torch.no_grad():
    logits = model(data[:2, :8])
print("VALUE logits", float(logits.abs().mean()))
''',
    "mamba_train": '''
import torch
import torch.nn.functional as F
from model import Mamba, ModelArgs

torch.manual_seed(0)
args = ModelArgs(d_model=16, n_layer=2, vocab_size=40, d_state=4, expand=2, d_conv=3)
model = Mamba(args)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
tokens = torch.randint(0, 40, (2, 9))
for step in range(4):
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
with torch.no_grad():
    logits = model(tokens)
print("VALUE logits", float(logits.abs().mean()))
print("VALUE argmax", float(logits.argmax(-1).float().sum()))
''',
    "pllama_decode": '''
import torch
from model import ModelArgs, Transformer

torch.manual_seed(0)
args = ModelArgs(dim=32, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=50, multiple_of=16, max_batch_size=2,
                 max_seq_len=16, device="cpu")
model = Transformer(args)
tokens = torch.randint(0, 50, (2, 6))
total = 0.0
with torch.no_grad():
    for pos in range(tokens.shape[1]):
        logits = model(tokens[:, pos:pos + 1], pos)
        total += float(logits.abs().mean())
        print("VALUE logits_%d" % pos, float(logits.abs().mean()))
print("VALUE total", total)
print("VALUE cache", float(model.layers[0].attention.cache_k.abs().sum()))
''',
    "minrf_train": '''
import torch
from dit import DiT_Llama
from rf import RF

torch.manual_seed(0)
model = DiT_Llama(1, 8, patch_size=2, dim=64, n_layers=2, n_heads=4, multiple_of=16, class_dropout_prob=0.0,
                  num_classes=4)
rf = RF(model)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
x = torch.randn(4, 1, 8, 8)
c = torch.randint(0, 4, (4,))
for step in range(4):
    optimizer.zero_grad()
    loss, blsct = rf.forward(x, c)
    loss.backward()
    optimizer.step()
    print("VALUE bins_%d" % step, sum(l for _, l in blsct))
model.eval()
images = rf.sample(torch.randn(2, 1, 8, 8), torch.tensor([1, 2]), sample_steps=4)
print("VALUE sample", float(images[-1].abs().mean()))
''',
}
