"""The `heldout25` set of bench/real_world.py (`--set heldout25`): GPT-2 pretraining and small diffusion models the
converter was never run on, converted as a new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout25 [--only nanogpt_train,tinydiff_train]

- karpathy/build-nanogpt, nanogpt_train: train_gpt2.py run as a program (no RANK in the environment: DDP off, CPU),
  with its constants made small by the data writer before conversion (the script has no arguments: micro batch
  B=4, T=16, total_batch_size 128, i.e. 2 micro steps of gradient accumulation, GPTConfig(block_size=16,
  vocab_size=64, n_layer=2, n_head=2, n_embd=32), warmup_steps 2, max_steps 4, generation to 12 tokens, and
  `torch.autocast(..., bfloat16)` given `enabled=False`: the converter runs autocast regions in float32, a
  difference it reports, so torch's bfloat16 CPU autocast would be compared with float32). The run: the GPT with
  F.scaled_dot_product_attention(is_causal=True), the tied wte/lm_head weight, `self.apply(self._init_weights)`
  with the NANOGPT_SCALE_INIT attribute, configure_optimizers' weight-decay groups by `p.dim() >= 2` and
  `'fused' in inspect.signature(torch.optim.AdamW).parameters`, DataLoaderLite reading .npy shards (the writer
  writes three small uint16 shards, edufineweb_val_000000.npy and two train shards, as fineweb.py writes them),
  the validation loss under no_grad, hellaswag.py's render_example / iterate_examples on a two-example
  hellaswag_val.jsonl the writer puts in its cache directory (so nothing is downloaded) and get_most_likely_row,
  the micro-step loop (`loss = loss / grad_accum_steps; loss_accum += loss.detach(); loss.backward()`),
  clip_grad_norm_, get_lr's warmup and cosine decay set into every param_group, the checkpoint torch.save, and the
  last step's top-k sampling through torch.multinomial with a torch.Generator. hellaswag.py imports requests,
  tiktoken and transformers (none used by the run but tiktoken's encoder): stand-in modules of ours beside it (a
  word-hash tokenizer of 64 ids).
- cloneofsimo/minDiffusion:
  - superddpm: superminddpm.py's DDPM around its DummyEpsModel (torchvision, imported at the top, gets a
    stand-in), a few Adam steps on 2x1x4x4 images (`self.sqrtab[_ts, None, None, None]`, `_ts / self.n_T` of an
    integer tensor), then `sample` under no_grad (torch.randn draws matched by the runner).
  - mindiffusion_ddpm / mindiffusion_ddim: mindiffusion's DDPM and DDIM (eta 0.5) around NaiveUnet(1, 1, n_feat=8)
    (GroupNorm, MaxPool, AvgPool, ConvTranspose2d, TimeSiren) on 2x1x32x32 images, a few Adam steps, then
    `sample` (`torch.tensor(i / self.n_T).to(device).repeat(n_sample, 1)`).
- tanelp/tiny-diffusion:
  - tinydiff_train: ddpm.py as it is (argparse: --dataset line, --num_epochs 1, --train_batch_size 1000 (8 steps
    over its 8000 points), --num_timesteps 10, small sizes, --eval_batch_size 8): datasets.py's TensorDataset under
    a shuffled DataLoader, MLP with sinusoidal embeddings, NoiseScheduler.add_noise, clip_grad_norm_, AdamW, the
    sampling loop through NoiseScheduler.step (torch.randn_like), torch.save, matplotlib's frames and np.save.
    datasets.py imports pandas and sklearn (not installed): stand-in modules.
  - tinydiff_sample: a driver of ours through ddpm.py's MLP (learnable time embedding, sinusoidal inputs) and
    NoiseScheduler (quadratic betas): a few steps, then the sampling loop, the sample's values printed.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

import json
from pathlib import Path

NANOGPT = "karpathy+build-nanogpt@6104ab1b53920f6e2159749676073ff7d815c1fa"
MINDIFF = "cloneofsimo+minDiffusion@00a3c8066d25a34d3d472ef6c87c7b6b238ea444"
TINYDIFF = "tanelp+tiny-diffusion@726b6bbbf2c9e3d23dff9eaea2fda10d0af6a78c"

# hellaswag.py's imports (tiktoken's encoder is the one the run uses)
_NANOGPT_STANDINS = {
    "requests.py": '"""A stand-in written by bench/_rw_heldout25.py: hellaswag.py imports it; the run downloads '
                   'nothing."""\n',
    "transformers.py": '"""A stand-in written by bench/_rw_heldout25.py: hellaswag.py imports GPT2LMHeadModel; '
                       'train_gpt2.py never loads it."""\n\n\nclass GPT2LMHeadModel:\n    pass\n',
    "tiktoken.py": '''"""A stand-in written by bench/_rw_heldout25.py: a word-hash tokenizer of 64 ids."""


class Encoding:
    def encode(self, text):
        return [sum(ord(c) for c in word) % 64 for word in text.split()]

    def decode(self, tokens):
        return " ".join(str(t) for t in tokens)


def get_encoding(name):
    return Encoding()
''',
}

# train_gpt2.py takes no arguments: its constants, made small (each must match once)
_NANOGPT_PATCHES = [
    ("total_batch_size = 524288", "total_batch_size = 128"),
    ("B = 64 # micro batch size", "B = 4 # micro batch size"),
    ("T = 1024 # sequence length", "T = 16 # sequence length"),
    ("GPT(GPTConfig(vocab_size=50304))",
     "GPT(GPTConfig(block_size=16, vocab_size=64, n_layer=2, n_head=2, n_embd=32))"),
    ("warmup_steps = 715", "warmup_steps = 2"),
    ("max_steps = 19073", "max_steps = 4"),
    ("max_length = 32", "max_length = 12"),
    ("dtype=torch.bfloat16)", "dtype=torch.bfloat16, enabled=False)"),
]


def _nanogpt(root):
    """The shards, hellaswag's cache and the stand-ins in the program's directory; on the torch side (written
    before the conversion) train_gpt2.py's constants made small."""
    import numpy as np
    prog = Path(root).parent / "x" / "prog"
    prog.mkdir(parents=True, exist_ok=True)
    for name, text in _NANOGPT_STANDINS.items():
        (prog / name).write_text(text)
    script = prog / "train_gpt2.py"
    if Path(root).parent.name == "torch" and script.exists():
        text = script.read_text()
        for old, new in _NANOGPT_PATCHES:
            count = text.count(old)
            if count == 0:
                raise RuntimeError(f"train_gpt2.py: {old!r} not found")
            text = text.replace(old, new)
        script.write_text(text)
    d = prog / "edu_fineweb10B"
    d.mkdir(parents=True, exist_ok=True)
    rng = np.random.RandomState(25)
    for name in ("edufineweb_val_000000", "edufineweb_train_000001", "edufineweb_train_000002"):
        toks = np.zeros(600, dtype=np.uint16)   # a learnable stream: each token mostly follows from the last
        for t in range(1, len(toks)):
            toks[t] = (toks[t - 1] * 7 + 5) % 64 if rng.rand() < 0.8 else rng.randint(64)
        np.save(d / name, toks)
    h = prog / "hellaswag"
    h.mkdir(parents=True, exist_ok=True)
    examples = [
        {"ctx": "a man sits on a roof", "label": 2,
         "endings": ["is using wrap", "rips tiles off now", "holds a cube", "starts pulling up"]},
        {"ctx": "the dog runs to the", "label": 0,
         "endings": ["park", "green ball in hand", "door and stops", "old man"]},
    ]
    (h / "hellaswag_val.jsonl").write_text("".join(json.dumps(e) + "\n" for e in examples))


_TINYDIFF_STANDINS = {
    "pandas.py": '"""A stand-in written by bench/_rw_heldout25.py: datasets.py imports it (the dino dataset '
                 'only)."""\n',
    "sklearn/__init__.py": '"""A stand-in written by bench/_rw_heldout25.py (datasets.py\'s moons dataset only)."""\n',
    "sklearn/datasets.py": '"""A stand-in written by bench/_rw_heldout25.py."""\n\n\ndef make_moons(*a, **k):\n'
                           '    raise NotImplementedError("the stand-in has no make_moons")\n',
}

_TINYDIFF_ARGS = ["--dataset", "line", "--num_epochs", "1", "--train_batch_size", "1000", "--eval_batch_size", "8",
                  "--num_timesteps", "10", "--embedding_size", "8", "--hidden_size", "16", "--hidden_layers", "2",
                  "--experiment_name", "small"]

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("nanogpt_train", NANOGPT, "train_gpt2.py,hellaswag.py", "train_gpt2.py", [], _nanogpt),
    ("superddpm", MINDIFF, "superminddpm.py,", "driver.py", [], None),
    ("mindiffusion_ddpm", MINDIFF, "mindiffusion,", "driver.py", [], None),
    ("mindiffusion_ddim", MINDIFF, "mindiffusion,", "driver.py", [], None),
    ("tinydiff_train", TINYDIFF, "ddpm.py,datasets.py,positional_embeddings.py", "ddpm.py", _TINYDIFF_ARGS, None),
    ("tinydiff_sample", TINYDIFF, "ddpm.py,datasets.py,positional_embeddings.py", "driver.py", [], None),
]

DEPS: dict = {}

FILES = {"tinydiff_train": _TINYDIFF_STANDINS, "tinydiff_sample": _TINYDIFF_STANDINS}

# each side runs its whole program: 4 steps of 2 micro steps; one epoch of 8 steps
LOSSES = {"nanogpt_train": 8, "tinydiff_train": 8}

# torchvision does not import next to this CPU torch: superminddpm.py gets a stand-in (it imports MNIST,
# transforms, save_image and make_grid at the top; the driver calls none of them)
_TORCHVISION = '''
import sys
import types

torchvision = types.ModuleType("torchvision")
torchvision.datasets = types.ModuleType("torchvision.datasets")
torchvision.datasets.MNIST = None
torchvision.transforms = types.ModuleType("torchvision.transforms")
torchvision.utils = types.ModuleType("torchvision.utils")
torchvision.utils.save_image = torchvision.utils.make_grid = None
for _name in ("datasets", "transforms", "utils"):
    sys.modules["torchvision." + _name] = getattr(torchvision, _name)
sys.modules["torchvision"] = torchvision
'''

_MINDIFF = '''
import torch
from mindiffusion.unet import NaiveUnet
from mindiffusion.{module} import {cls}

torch.manual_seed(0)
model = {cls}(eps_model=NaiveUnet(1, 1, n_feat=8), betas=(1e-4, 0.02), {extra}n_T=6)
optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
images = torch.rand(2, 1, 32, 32) * 2 - 1
for step in range(3):
    optimizer.zero_grad()
    loss = model(images)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
model.eval()
with torch.no_grad():
    xh = model.sample(2, (1, 32, 32), "cpu")
print("VALUE sample_abs", float(xh.abs().mean()))
print("VALUE sample_sum", float(xh.sum()))
'''

# Drivers: our own code, through the repositories' modules.
DRIVERS = {
    "superddpm": _TORCHVISION + '''
import torch
from superminddpm import DDPM, DummyEpsModel

torch.manual_seed(0)
ddpm = DDPM(eps_model=DummyEpsModel(1), betas=(1e-4, 0.02), n_T=5)
optim = torch.optim.Adam(ddpm.parameters(), lr=2e-4)
x = torch.rand(2, 1, 4, 4) - 0.5
for step in range(3):
    optim.zero_grad()
    loss = ddpm(x)
    loss.backward()
    optim.step()
    print("loss", loss.item())
ddpm.eval()
with torch.no_grad():
    xh = ddpm.sample(2, (1, 4, 4), "cpu")
print("VALUE sample_abs", float(xh.abs().mean()))
print("VALUE sample_sum", float(xh.sum()))
''',
    "mindiffusion_ddpm": _MINDIFF.format(module="ddpm", cls="DDPM", extra=""),
    "mindiffusion_ddim": _MINDIFF.format(module="ddim", cls="DDIM", extra="eta=0.5, "),
    "tinydiff_sample": '''
import numpy as np
import torch
import torch.nn.functional as F
from ddpm import MLP, NoiseScheduler

torch.manual_seed(0)
model = MLP(hidden_size=16, hidden_layers=2, emb_size=8, time_emb="learnable", input_emb="sinusoidal")
scheduler = NoiseScheduler(num_timesteps=8, beta_schedule="quadratic")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = torch.rand(64, 2) * 4 - 2
for step in range(4):
    batch = data[step * 16:(step + 1) * 16]
    noise = torch.randn(batch.shape)
    timesteps = torch.randint(0, scheduler.num_timesteps, (batch.shape[0],)).long()
    noisy = scheduler.add_noise(batch, noise, timesteps)
    loss = F.mse_loss(model(noisy, timesteps), noise)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad()
    print("loss", loss.item())
model.eval()
sample = torch.randn(6, 2)
for i, t in enumerate(list(range(len(scheduler)))[::-1]):
    t = torch.from_numpy(np.repeat(t, 6)).long()
    with torch.no_grad():
        residual = model(sample, t)
    sample = scheduler.step(residual, t[0], sample)
print("VALUE sample_abs", float(sample.abs().mean()))
print("VALUE sample_sum", float(sample.sum()))
print("VALUE variance", float(scheduler.get_variance(3)))
''',
}
