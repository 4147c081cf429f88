"""The `heldout22` set of bench/real_world.py (`--set heldout22`): karpathy/makemore run whole, as its user runs
it (the transformer and BoW long enough to reach its sampling), its pieces driven through sampling, a saved
and reloaded state_dict and evaluation, and kuangliu/pytorch-cifar's
models/ trained by a driver of ours on a batch of two images.

    python bench/real_world.py --mirrors /work/.mirror --set heldout22 [--only makemore_gru,cifar_dpn26]

- karpathy/makemore (makemore.py, one file): `python makemore.py -i names.txt -o out --type T --max-steps N` with
  small sizes (n-layer 2, n-head 2, n-embd 8, n-embd2 12, batch 4, --top-k 5, -n 0), on 60 synthetic lowercase
  names the data writer puts beside it. The whole program runs: argparse, `@dataclass` ModelConfig, the
  torch.randperm split, CharDataset (`y[len(ix)+1:] = -1` ignored by cross_entropy's ignore_index=-1), the
  InfiniteDataLoader (a RandomSampler with replacement=True and num_samples=int(1e10) under a DataLoader,
  `next(iter)` each step), AdamW with betas (0.9, 0.99), `model.zero_grad(set_to_none=True)`, the `step % 10`
  loss lines, torch.utils.tensorboard's SummaryWriter (tensorboard is installed on the torch side; the
  converted side's is _ms_compat's own). The models: Transformer (NewGELU, a causal mask buffer sliced
  `[:, :, :T, :T]`, an nn.ModuleDict MLP called through a lambda), BoW (`torch.zeros(...).masked_fill` of -inf
  and softmax), RNN and GRU cells in a Python loop over time (`self.start.expand((b, -1))`), MLP
  (`torch.roll` then `idx[:, 0] = vocab_size`, an in-place write into the loop's tensor), Bigram
  (`self.logits[idx]`).
  - makemore_transformer and makemore_bow run --max-steps 201: step 200 calls print_samples: `generate` under
    @torch.no_grad() (torch.topk, `logits[logits < v[:, [-1]]] = -float('Inf')`, F.softmax, torch.multinomial,
    torch.cat of the growing sequence), decoding, dataset membership tests. The runner draws torch.multinomial
    and the converted ops.multinomial from one numpy stream (outside compiled steps), and RandomSampler's
    indices likewise, so both sides sample the same names (printed, not compared: the program prints no
    numbers of them). makemore_rnn, _gru, _mlp and _bigram run --max-steps 21 (a PYNATIVE step takes about a
    second on two shared cores: 201 steps of BoW went over the first run's 240 s).
  - makemore_sample_<type> (transformer, gru, mlp, bigram): a driver of ours through makemore's own pieces:
    create_datasets, the model, AdamW, `X, Y = loader.next()` of the InfiniteDataLoader as the loop's first
    statement, four steps; torch.save of the state_dict and load_state_dict(torch.load(...)) (what --resume
    and --sample-only do); print_samples with top_k 3 (the module's globals `args`, `model`, datasets set by
    the driver); generate greedy and sampled (temperature 0.8, top_k 4), the indices printed as VALUEs
    (weighted sums per row, the decoded word's length and code sum), evaluate()'s mean loss
    (@torch.inference_mode, a shuffled DataLoader, `max_batches`) and model.training after it.
  Each side's budget (LOSSES below) covers the whole run: the program ends by its own --max-steps.
- kuangliu/pytorch-cifar (models/; main.py needs torchvision, which does not import next to this torch): the
  driver builds one model from the package, trains four SGD steps (momentum 0.9, weight decay 5e-4, main.py's
  CosineAnnealingLR stepped each step) with CrossEntropyLoss on two synthetic 3x32x32 images, main.py's
  accuracy bookkeeping (`outputs.max(1)`, `predicted.eq(targets).sum().item()`), then prints the eval-mode logits.
  With two images, BatchNorm's batch statistics at the last stages run over few values (2x2x2 or 2x4x4), which
  amplifies rounding: the judge's float64 references say how far torch's own float32 runs part.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

import numpy as np

MAKEMORE = "karpathy+makemore@988aa59e4d8fefa526d06f3b453ad116258398d4"
CIFAR = "kuangliu+pytorch-cifar@49b7aa97b0c12fe0d4054e670403a16b6b834ddd"


def names(root: Path):
    """makemore's input file: 60 synthetic lowercase names (3 to 7 letters of 12), one a line, beside makemore.py."""
    prog = Path(root).parent / "x" / "prog"
    if not prog.is_dir():
        return
    rs = np.random.RandomState(22)
    letters = list("aeiloumnrsty")
    lines = ["".join(rs.choice(letters, rs.randint(3, 8))) for _ in range(60)]
    (prog / "names.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


MAKEMORE_ARGS = ["-i", "names.txt", "-o", "out", "-n", "0", "--n-layer", "2", "--n-head", "2", "--n-embd", "8",
                 "--n-embd2", "12", "-b", "4", "--top-k", "5", "--seed", "22"]
MAKEMORE_TYPES = {"transformer": 201, "bow": 201, "rnn": 21, "gru": 21, "mlp": 21, "bigram": 21}

# pytorch-cifar's models: (program name, constructor expression in models/)
ARCHITECTURES = [
    ("cifar_resnet18", "ResNet18()"),
    ("cifar_preact_resnet18", "PreActResNet18()"),
    ("cifar_vgg11", "VGG('VGG11')"),
    ("cifar_densenet", "densenet_cifar()"),
    ("cifar_dpn26", "DPN26()"),
    ("cifar_googlenet", "GoogLeNet()"),
    ("cifar_mobilenetv2", "MobileNetV2()"),
    ("cifar_shufflenetv2", "ShuffleNetV2(0.5)"),
    ("cifar_regnetx", "RegNetX_200MF()"),
    ("cifar_senet18", "SENet18()"),
    ("cifar_efficientnet", "EfficientNetB0()"),
    ("cifar_dla", "DLA()"),
    ("cifar_simple_dla", "SimpleDLA()"),
    ("cifar_pnasnet", "PNASNetA()"),
    ("cifar_resnext", "ResNeXt29_2x64d()"),
]

_CIFAR_DRIVER = '''
import torch
import torch.nn as nn
import torch.optim as optim
from models import *

torch.manual_seed(0)
net = {ctor}
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.02, momentum=0.9, weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=8)
inputs = torch.randn(2, 3, 32, 32)
targets = torch.tensor([3, 8])
net.train()
correct = total = 0
for step in range(4):
    optimizer.zero_grad()
    outputs = net(inputs)
    loss = criterion(outputs, targets)
    loss.backward()
    optimizer.step()
    scheduler.step()
    _, predicted = outputs.max(1)
    total += targets.size(0)
    correct += predicted.eq(targets).sum().item()
    print("step", step, loss.item(), "lr", scheduler.get_last_lr()[0], "acc", 100. * correct / total)
net.eval()
with torch.no_grad():
    logits = net(inputs)
print("VALUE logits_abs", float(logits.abs().sum()))
print("VALUE logits_sq", float((logits ** 2).sum()))
print("VALUE lr", scheduler.get_last_lr()[0])
print("VALUE correct", correct)
'''

# makemore's pieces driven by us: training, a torch.save / load_state_dict(torch.load) round trip (what --resume
# and --sample-only do), print_samples with --top-k, generate greedy and sampled (temperature, top_k) with the
# generated indices printed as VALUEs, and evaluate()'s mean loss
_MAKEMORE_DRIVER = '''
import argparse
import torch
import makemore as mm

torch.manual_seed(3)
train_dataset, test_dataset = mm.create_datasets("names.txt")
config = mm.ModelConfig(vocab_size=train_dataset.get_vocab_size(), block_size=train_dataset.get_output_length(),
                        n_layer=1, n_head=2, n_embd=8, n_embd2=12)
model = {ctor}
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01, betas=(0.9, 0.99), eps=1e-8)
loader = mm.InfiniteDataLoader(train_dataset, batch_size=4, pin_memory=True, num_workers=0)
for step in range(4):
    X, Y = loader.next()
    logits, loss = model(X, Y)
    model.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    print("step", step, loss.item())
torch.save(model.state_dict(), "model.pt")
model.load_state_dict(torch.load("model.pt"))
mm.args = argparse.Namespace(device="cpu", top_k=3)
mm.model, mm.train_dataset, mm.test_dataset = model, train_dataset, test_dataset
model.eval()
mm.print_samples(num=4)
weights = torch.arange(1, 8)
greedy = mm.generate(model, torch.zeros(3, 1, dtype=torch.long), 6, do_sample=False)
sampled = mm.generate(model, torch.zeros(3, 1, dtype=torch.long), 6, temperature=0.8, do_sample=True, top_k=4)
for i in range(3):
    print("VALUE greedy", i, int((greedy[i] * weights).sum()))
    print("VALUE sampled", i, int((sampled[i] * weights).sum()))
    row = sampled[i, 1:].tolist()
    word = train_dataset.decode(row[:row.index(0)] if 0 in row else row)
    print("VALUE word", i, len(word), sum(ord(c) for c in word))
print("VALUE eval_loss", mm.evaluate(model, test_dataset, batch_size=3, max_batches=2))
print("VALUE training", int(model.training))
'''

SAMPLERS = {
    "makemore_sample_transformer": "mm.Transformer(config)",
    "makemore_sample_gru": "mm.RNN(config, cell_type='gru')",
    "makemore_sample_mlp": "mm.MLP(config)",
    "makemore_sample_bigram": "mm.Bigram(config)",
}

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    (f"makemore_{t}", MAKEMORE, ".", "makemore.py", MAKEMORE_ARGS + ["--type", t, "--max-steps", str(steps)], names)
    for t, steps in MAKEMORE_TYPES.items()
] + [(name, MAKEMORE, "makemore.py,", "driver.py", [], names) for name in SAMPLERS] + [
    (name, CIFAR, "models", "driver.py", [], None) for name, _ in ARCHITECTURES]

# each side's loss budget where the set's default (--losses) is too small: the whole run
LOSSES = {f"makemore_{t}": steps + 1 for t, steps in MAKEMORE_TYPES.items()}

DEPS: dict = {}

DRIVERS = {name: _CIFAR_DRIVER.format(ctor=ctor) for name, ctor in ARCHITECTURES}
DRIVERS.update({name: _MAKEMORE_DRIVER.format(ctor=ctor) for name, ctor in SAMPLERS.items()})
