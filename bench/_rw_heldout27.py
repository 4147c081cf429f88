"""The `heldout27` set of bench/real_world.py (`--set heldout27`): lucidrains' Perceiver family and gMLP, and
karpathy's ng-video-lecture scripts, converted as a new user would convert them (heldout3 and heldout5 ran
Perceiver/PerceiverLM, gMLP and bigram.py's training only; this set goes through what they left out).

    python bench/real_world.py --mirrors /work/.mirror --set heldout27 [--only perceiver_io,ngvideo_gpt]

- lucidrains/perceiver-pytorch (perceiver_pytorch/, einops):
  - perceiver_train: Perceiver (Fourier-encoded positions of a 5x4 image, depth 3 with weight_tie_layers (cache_fn
    keyed by block), two self-attention blocks per cross attention, the inverted cross attention of the second
    layer (softmax over queries, masked_fill of the mask, F.normalize p=1), a boolean input mask) trained a few
    Adam steps on a classification loss, then eval logits and return_embeddings.
  - perceiver_io: PerceiverIO with decoder queries (a free nn.Parameter of 2 dims, repeated over the batch),
    decoder_ff, logits_dim, tied latent layers and seq_dropout_prob (dropout_seq: torch.randn logits filled at
    the mask, topk, fancy indexing by batch and kept indices, torch.ceil(...).int() counts), a few steps, then
    eval with 3-dim queries.
  - perceiver_variants: gated.py's Perceiver (GRUCell gating over flattened latents), mixed_latents.py's (a
    Conv1d mixer over latents) and experimental.py's (LinearAttention over the data, reverse cross attention;
    fourier_encode_data=False: with it on, its input_dim counts input_channels twice, which torch rejects too),
    a few steps each.
- lucidrains/g-mlp-pytorch:
  - gmlp_train: train.py as it is, on a 12 kB synthetic enwik8.gz the data writer puts in data/ (and, torch side
    before conversion, constants made small: NUM_BATCHES 3, SEQ_LEN 16, GENERATE_LENGTH 8, a gMLP of dim 16 and
    depth 2, the 95e6/90e6 byte split at 12e3/10e3, and its `.cuda()` calls `.cpu()`: this torch has no CUDA):
    TextSamplerDataset (torch.randint starts) under DataLoader and `cycle`, AutoregressiveWrapper's loss through
    4 micro steps of accumulation, clip_grad_norm_, validation under no_grad, and generate (eval_decorator,
    top_k's scatter_ into a -inf full_like, torch.multinomial) on `random.choice(val_dataset)[:-1]`.
  - gmlp_generate: a driver of ours: a causal gMLP with the attention of aMLP (attn_dim) and token shift through
    AutoregressiveWrapper, a few Adam steps on synthetic bytes with clipping, generate from 1-dim and 2-dim
    primes (temperature 0.8, filter_thres 0.7) with the samples printed as VALUEs; gMLPVision (attn_dim, 2 heads)
    forward and a training step.
- karpathy/ng-video-lecture: bigram.py and gpt.py as they are, on a small input.txt of ours (the data writer's,
  both sides), their constants made small on the torch side before conversion (4 iterations, estimate_loss
  at iterations 0, 2 and 3 over 2 batches of each split, batch 4, block 8; gpt.py's n_embd 16, 2 heads, 2
  layers), and the final `generate` of 20 tokens (torch.multinomial draws matched by the runner); the final
  print also prints a VALUE of the generated indices (our patch), so the samples are compared.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

import gzip
from pathlib import Path

PERCEIVER = "lucidrains+perceiver-pytorch@96097c6a27cc64fc1f196d3a58d32b8a82f573e1"
GMLP = "lucidrains+g-mlp-pytorch@970966c10c10770b2098b8f88c7d1f86efbf611b"
NG = "karpathy+ng-video-lecture@52201428ed7b46804849dea0b3ccf0de9df1a5c3"

# torch side, before conversion: constants made small (each must match once)
_PATCHES = {
    "train.py": [
        ("NUM_BATCHES = int(1e5)", "NUM_BATCHES = 3"),
        ("GENERATE_LENGTH = 768", "GENERATE_LENGTH = 8"),
        ("SEQ_LEN = 768", "SEQ_LEN = 16"),
        ("dim = 512,", "dim = 16,"),
        ("depth = 8,", "depth = 2,"),
        ("file.read(int(95e6))", "file.read(int(12e3))"),
        ("np.split(X, [int(90e6)])", "np.split(X, [int(10e3)])"),
        ("model.cuda()", "model.cpu()"),
        ("full_seq.cuda()", "full_seq.cpu()"),
    ],
    "bigram.py": [
        ("batch_size = 32 #", "batch_size = 4 #"),
        ("max_iters = 3000", "max_iters = 4"),
        ("eval_interval = 300", "eval_interval = 2"),
        ("eval_iters = 200", "eval_iters = 2"),
    ],
    "gpt.py": [
        ("batch_size = 64 #", "batch_size = 4 #"),
        ("block_size = 256 #", "block_size = 8 #"),
        ("max_iters = 5000", "max_iters = 4"),
        ("eval_interval = 500", "eval_interval = 2"),
        ("eval_iters = 200", "eval_iters = 2"),
        ("n_embd = 384", "n_embd = 16"),
        ("n_head = 6", "n_head = 2"),
        ("n_layer = 6", "n_layer = 2"),
    ],
}
# the ng scripts' last line: 20 tokens, and the generated indices as a VALUE (our addition)
_GENERATE = ("print(decode(m.generate(context, max_new_tokens=500)[0].tolist()))",
             "_sample = m.generate(context, max_new_tokens=20)[0].tolist()\nprint(decode(_sample))\n"
             "print('VALUE sample', sum((i + 1) * t for i, t in enumerate(_sample)))")
_PATCHES["bigram.py"].append(_GENERATE)
_PATCHES["gpt.py"].append(_GENERATE)

_TEXT = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n"
         "First Citizen:\nYou are all resolved rather to die than to famish?\n\nAll:\nResolved. resolved.\n\n")


def _patch_script(prog: Path, name: str, patches=None):
    """On the torch side (before the conversion): each (old, new) of the script's patches, each found once."""
    script = prog / name
    if prog.parent.parent.name != "torch" or not script.exists():
        return
    text = script.read_text()
    for old, new in (_PATCHES if patches is None else patches)[name]:
        if text.count(old) != 1:
            raise RuntimeError(f"{name}: {old!r} found {text.count(old)} times")
        text = text.replace(old, new)
    script.write_text(text)


def _ng(script):
    def writer(root):
        """input.txt (a few Shakespeare-like lines, 14 times: 2.5 kB) beside the script; the script made small."""
        prog = Path(root).parent / "x" / "prog"
        prog.mkdir(parents=True, exist_ok=True)
        (prog / "input.txt").write_text(_TEXT * 14, encoding="utf-8")
        _patch_script(prog, script)
    return writer


def _enwik8(root):
    """data/enwik8.gz beside train.py: 12 kB of bytes with structure (a repeated phrase with random letters)."""
    import numpy as np
    prog = Path(root).parent / "x" / "prog"
    (prog / "data").mkdir(parents=True, exist_ok=True)
    rng = np.random.RandomState(27)
    chunks = []
    while sum(map(len, chunks)) < 12000:
        chunks.append(b"<page><title>" + bytes(rng.randint(97, 123, rng.randint(3, 9)).astype(np.uint8))
                      + b"</title> the text of it </page>\n")
    with gzip.open(prog / "data" / "enwik8.gz", "wb") as f:
        f.write(b"".join(chunks)[:12000])
    _patch_script(prog, "train.py")


# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("perceiver_train", PERCEIVER, "perceiver_pytorch", "driver.py", [], None),
    ("perceiver_io", PERCEIVER, "perceiver_pytorch", "driver.py", [], None),
    ("perceiver_variants", PERCEIVER, "perceiver_pytorch", "driver.py", [], None),
    ("gmlp_train", GMLP, "g_mlp_pytorch,train.py", "train.py", [], _enwik8),
    ("gmlp_generate", GMLP, "g_mlp_pytorch", "driver.py", [], None),
    ("ngvideo_bigram", NG, "bigram.py,", "bigram.py", [], _ng("bigram.py")),
    ("ngvideo_gpt", NG, "gpt.py,", "gpt.py", [], _ng("gpt.py")),
]

DEPS: dict = {}

# each side runs its whole program: train.py 3 steps of 4 micro steps; the ng scripts 4 iterations
LOSSES = {"gmlp_train": 13, "ngvideo_bigram": 5, "ngvideo_gpt": 5, "perceiver_variants": 10, "gmlp_generate": 7}

# Drivers: our own code, through the repositories' modules.
DRIVERS = {
    "perceiver_train": '''
import torch
import torch.nn.functional as F
from perceiver_pytorch import Perceiver

torch.manual_seed(0)
model = Perceiver(input_channels=3, input_axis=2, num_freq_bands=3, max_freq=6.0, depth=3, num_latents=4,
                  latent_dim=16, cross_heads=1, latent_heads=2, cross_dim_head=8, latent_dim_head=8, num_classes=5,
                  weight_tie_layers=True, self_per_cross_attn=2, inverted_cross_attn=(False, True, False))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
images = torch.randn(2, 5, 4, 3)
mask = torch.ones(2, 5, 4, dtype=torch.bool)
mask[1, 3:] = False
labels = torch.tensor([1, 4])
for step in range(4):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images, mask=mask), labels)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
model.eval()
with torch.no_grad():
    logits = model(images, mask=mask)
    embeddings = model(images, return_embeddings=True)
print("VALUE logits_abs", float(logits.abs().mean()))
print("VALUE logits_sum", float(logits.sum()))
print("VALUE embeddings", float(embeddings.abs().mean()))
print("VALUE parameters", sum(p.numel() for p in model.parameters()))
''',
    "perceiver_io": '''
import torch
import torch.nn.functional as F
from torch import nn
from perceiver_pytorch import PerceiverIO

torch.manual_seed(0)
model = PerceiverIO(dim=6, queries_dim=8, logits_dim=5, depth=2, num_latents=4, latent_dim=16, cross_heads=1,
                    latent_heads=2, cross_dim_head=8, latent_dim_head=8, weight_tie_layers=True, decoder_ff=True,
                    seq_dropout_prob=0.25)
queries = nn.Parameter(torch.randn(3, 8))
optimizer = torch.optim.Adam(list(model.parameters()) + [queries], lr=1e-3)
data = torch.randn(2, 8, 6)
mask = torch.ones(2, 8, dtype=torch.bool)
mask[0, 6:] = False
targets = torch.randint(0, 5, (2, 3))
for step in range(4):
    optimizer.zero_grad()
    logits = model(data, mask=mask, queries=queries)
    loss = F.cross_entropy(logits.reshape(-1, 5), targets.reshape(-1))
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
model.eval()
with torch.no_grad():
    logits = model(data, mask=mask, queries=queries.unsqueeze(0).expand(2, -1, -1))
    latents = model(data, mask=mask)
print("VALUE logits_abs", float(logits.abs().mean()))
print("VALUE logits_sum", float(logits.sum()))
print("VALUE latents", float(latents.abs().mean()))
print("VALUE queries", float(queries.detach().abs().sum()))
''',
    "perceiver_variants": '''
import torch
import torch.nn.functional as F
from perceiver_pytorch.gated import Perceiver as GatedPerceiver
from perceiver_pytorch.mixed_latents import Perceiver as MixedPerceiver
from perceiver_pytorch.experimental import Perceiver as ExperimentalPerceiver

torch.manual_seed(0)
kwargs = dict(input_channels=3, input_axis=2, num_freq_bands=2, max_freq=4.0, depth=2, num_latents=4, latent_dim=16,
              cross_heads=1, latent_heads=2, cross_dim_head=8, latent_dim_head=8, num_classes=5)
images = torch.randn(2, 4, 3, 3)
labels = torch.tensor([0, 3])
for name, model in (("gated", GatedPerceiver(**kwargs)), ("mixed", MixedPerceiver(**kwargs)),
                    ("experimental", ExperimentalPerceiver(fourier_encode_data=False, **kwargs))):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        print(name, "loss", loss.item())
    model.eval()
    with torch.no_grad():
        logits = model(images)
    print("VALUE " + name + "_abs", float(logits.abs().mean()))
    print("VALUE " + name + "_sum", float(logits.sum()))
''',
    "gmlp_generate": '''
import torch
import torch.nn.functional as F
from torch import nn
from g_mlp_pytorch import gMLP, gMLPVision
from g_mlp_pytorch.autoregressive_wrapper import AutoregressiveWrapper

torch.manual_seed(0)
net = gMLP(num_tokens=32, dim=16, depth=2, seq_len=8, causal=True, attn_dim=8, shift_tokens=1, act=nn.Tanh())
model = AutoregressiveWrapper(net)
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
seqs = (torch.arange(9).repeat(3, 1) * 3 + torch.randint(0, 5, (3, 1))) % 32
for step in range(4):
    loss = model(seqs)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
    optimizer.zero_grad()
    print("loss", loss.item())
weights = torch.arange(1, 7)
one = model.generate(seqs[0, :3], 6, temperature=0.8, filter_thres=0.7)
two = model.generate(seqs[:, :5], 6, temperature=0.8, filter_thres=0.7)
print("VALUE one", int((one * weights).sum()))
print("VALUE one_length", one.shape[0])
for i in range(3):
    print("VALUE two_%d" % i, int((two[i] * weights).sum()))
print("VALUE training", int(model.training))
with torch.no_grad():
    print("VALUE eval_loss", float(model(seqs)))

vision = gMLPVision(image_size=8, patch_size=4, num_classes=5, dim=16, depth=2, heads=2, channels=3, attn_dim=8)
images = torch.randn(2, 3, 8, 8)
optimizer = torch.optim.Adam(vision.parameters(), lr=1e-3)
for step in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(vision(images), torch.tensor([1, 4]))
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
vision.eval()
with torch.no_grad():
    print("VALUE vision_logits", float(vision(images).abs().mean()))
''',
}
