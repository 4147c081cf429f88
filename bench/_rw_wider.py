"""The `wider` set of bench/real_world.py (`--set wider`): programs beyond the default set, to
measure the converter on code it was not built against.

    python bench/real_world.py --mirrors /work/.mirror --set wider [--only mnist,vae]

- pytorch/examples: mnist, mnist_rnn, vae, dcgan (a synthetic image folder), word_language_model
  (LSTM and Transformer, a tiny synthetic corpus), regression, time_sequence_prediction (a small
  traindata.pt written as generate_sine_wave.py writes it), siamese_network, super_resolution (a
  synthetic BSDS300 folder): the programs as written, made small through their own flags.
- pytorch/examples, not written against: mnist_forward_forward (MNIST in its own ./data), gcn (a synthetic
  cora.tgz served for its download URL), gat (synthetic ./cora files), mnist_hogwild (one training process),
  distributed/minGPT-ddp's model and CharDataset through a one-process driver (its Trainer needs torchrun, DDP
  and an accelerator), imagenet with --dummy (torchvision's FakeData and resnet18, torchvision converted with it;
  FakeData's images come from the runner's noise stream on both sides, its get_rng_state draws nothing there).
- karpathy/nanoGPT: model.py's GPT through a driver (configure_optimizers, AdamW steps), and
  train.py itself with a config override on the command line and synthetic train.bin/val.bin/meta.pkl.
- karpathy/minGPT: GPT and its Trainer through a driver.
- lucidrains/vit-pytorch: ViT, SimpleViT and CaiT, each a driver with a few training steps.

Entries have real_world.PROGRAMS' shape; `data` is a function of RUN/<side>/data that writes the
program's files in their real on-disk format (into the torch copy of the program where the
program reads them from its own directory: the conversion copies them)."""
from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np

EXAMPLES = "pytorch+examples"
NANOGPT = "karpathy+nanoGPT"
MINGPT = "karpathy+minGPT"
VIT = "lucidrains+vit-pytorch"


def _prog(root: Path):
    """The program's directory on this side (only the torch copy exists before the conversion)."""
    p = root.parent / "x" / "prog"
    return p if p.is_dir() else None


def mnist_beside(root: Path):
    """MNIST idx files where pytorch/examples read them: '../data' from the program."""
    from tests.corpus import write_mnist
    write_mnist(root.parent / "x" / "data", n_train=200, n_test=64)   # vae's test views a full batch of 64


def image_folder(root: Path):
    """A torchvision ImageFolder: two classes of small PNGs (dcgan's --dataset folder)."""
    from PIL import Image
    rs = np.random.RandomState(7)
    for c in ("a", "b"):
        d = root / "folder" / c
        d.mkdir(parents=True, exist_ok=True)
        for i in range(8):
            Image.fromarray(rs.randint(0, 256, (20, 24, 3)).astype(np.uint8)).save(d / f"{i}.png")


def bsds300(root: Path):
    """super_resolution's dataset/BSDS300/images/{train,test} (present: nothing is downloaded)."""
    from PIL import Image
    prog = _prog(root)
    if prog is None:
        return
    rs = np.random.RandomState(8)
    for split, n in (("train", 8), ("test", 4)):
        d = prog / "dataset" / "BSDS300" / "images" / split
        d.mkdir(parents=True, exist_ok=True)
        for i in range(n):
            Image.fromarray(rs.randint(0, 256, (40, 36, 3)).astype(np.uint8)).save(d / f"{i}.jpg")


def corpus(root: Path):
    """word_language_model's data/tiny/{train,valid,test}.txt (whitespace-separated words, lines)."""
    prog = _prog(root)
    if prog is None:
        return
    rs = np.random.RandomState(9)
    words = [f"w{i}" for i in range(30)]
    d = prog / "data" / "tiny"
    d.mkdir(parents=True, exist_ok=True)
    for split, lines in (("train", 40), ("valid", 8), ("test", 8)):
        text = "\n".join(" ".join(words[j] for j in rs.randint(0, 30, 12)) for _ in range(lines))
        (d / f"{split}.txt").write_text(text + "\n", encoding="utf-8")


def sine_wave(root: Path):
    """time_sequence_prediction's traindata.pt as generate_sine_wave.py writes it (torch.save of a
    float64 numpy array), 12 waves of 60 points instead of 100 of 1000."""
    prog = _prog(root)
    if prog is None:
        return
    import torch
    rs = np.random.RandomState(2)
    x = np.empty((12, 60), "int64")
    x[:] = np.array(range(60)) + rs.randint(-80, 80, 12).reshape(12, 1)
    torch.save(np.sin(x / 1.0 / 20).astype("float64"), open(prog / "traindata.pt", "wb"))


def nanogpt_data(root: Path):
    """nanoGPT's data/<dataset>/{train,val}.bin (uint16 token ids) and meta.pkl (vocab_size)."""
    prog = _prog(root)
    if prog is None:
        return
    rs = np.random.RandomState(10)
    d = prog / "data" / "tiny"
    d.mkdir(parents=True, exist_ok=True)
    rs.randint(0, 64, 2000).astype(np.uint16).tofile(d / "train.bin")
    rs.randint(0, 64, 400).astype(np.uint16).tofile(d / "val.bin")
    with open(d / "meta.pkl", "wb") as f:
        pickle.dump({"vocab_size": 64}, f)


def mnist_in_program(root: Path):
    """MNIST idx files where mnist_forward_forward reads them: './data/' in the program's directory."""
    from tests.corpus import write_mnist
    prog = _prog(root)
    if prog is not None:
        write_mnist(prog / "data", n_train=200, n_test=64)


CORA_URL = "https://linqs-data.soe.ucsc.edu/public/lbc/cora.tgz"


def _cora_files(d: Path):
    """cora/cora.content ('<paper id> <binary word features...> <class>', tab-separated) and cora/cora.cites
    ('<cited id> <citing id>'), as LINQS's cora.tgz holds them: 1700 nodes (the programs split off 1000 and
    1200 test nodes, then validation nodes, before the training ones), 24 features, 4 classes."""
    rs = np.random.RandomState(11)
    n, f = 1700, 24
    ids = rs.choice(np.arange(1000, 900000), n, replace=False)
    labels = rs.randint(0, 4, n)
    feats = (rs.random_sample((n, f)) < 0.2).astype(int)
    feats[np.arange(n), labels * 6 + rs.randint(0, 6, n)] = 1     # every node has a word; the class shows
    classes = ["Case_Based", "Neural_Networks", "Theory", "Rule_Learning"]
    d.mkdir(parents=True, exist_ok=True)
    (d / "cora.content").write_text("".join(
        f"{ids[i]}\t" + "\t".join(map(str, feats[i])) + f"\t{classes[labels[i]]}\n" for i in range(n)))
    edges = rs.randint(0, n, (3000, 2))
    (d / "cora.cites").write_text("".join(f"{ids[a]}\t{ids[b]}\n" for a, b in edges if a != b))


def cora_download(root: Path):
    """gcn downloads cora.tgz on every run: the archive is written to RUN/<side>/data and served for its URL
    (bench/_rw_runner.py's RW_URLS)."""
    import json
    import tarfile
    _cora_files(root / "cora")
    with tarfile.open(root / "cora.tgz", "w:gz") as tgz:
        tgz.add(root / "cora", arcname="cora")
    (root / "urls.json").write_text(json.dumps({CORA_URL: str(root / "cora.tgz")}))


def cora_present(root: Path):
    """gat reads ./cora/cora.{content,cites} and downloads only when they are absent."""
    prog = _prog(root)
    if prog is not None:
        _cora_files(prog / "cora")


def shakespeare_like(root: Path):
    """minGPT-ddp's CharDataset reads one text file (fsspec.open(path)): a small one beside the driver."""
    prog = _prog(root)
    if prog is None:
        return
    rs = np.random.RandomState(12)
    (prog / "input.txt").write_text("".join(rs.choice(list("abcdefgh \n"), 600)), encoding="utf-8")


# third-party torch packages a program imports, converted with it (`msmigrate convert --deps`)
DEPS = {"ex_imagenet": ["torchvision"]}

MNIST_ARGS = ["--epochs", "2", "--batch-size", "64", "--test-batch-size", "8"]
NANOGPT_TRAIN_ARGS = [
    "--dataset=tiny", "--device=cpu", "--compile=False", "--dtype=float32", "--batch_size=2", "--block_size=16",
    "--n_layer=2", "--n_head=2", "--n_embd=32", "--max_iters=4", "--eval_interval=2", "--eval_iters=2",
    "--log_interval=1", "--gradient_accumulation_steps=2", "--warmup_iters=2", "--lr_decay_iters=4",
    "--always_save_checkpoint=False", "--out_dir=out"]
WLM_ARGS = ["--data", "./data/tiny", "--epochs", "2", "--emsize", "16", "--nhid", "16", "--nlayers", "2",
            "--batch_size", "4", "--bptt", "8", "--dropout", "0", "--save", "model.pt"]
# (--use-optimizer changes nothing converted: the step is `if args.use_optimizer: optimizer.step()
# else: for p in model.parameters(): p.data.add_(p.grad, alpha=-lr)`, an update split over an if/else)

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("ex_mnist", EXAMPLES, "mnist", "main.py", MNIST_ARGS + ["--no-accel"], mnist_beside),
    ("ex_mnist_rnn", EXAMPLES, "mnist_rnn", "main.py", MNIST_ARGS, mnist_beside),
    ("ex_vae", EXAMPLES, "vae", "main.py", ["--epochs", "2", "--batch-size", "64", "--no-accel"], mnist_beside),
    ("ex_dcgan", EXAMPLES, "dcgan", "main.py",
     ["--dataset", "folder", "--dataroot", "../../data/folder", "--batchSize", "4", "--niter", "1", "--workers",
      "0", "--ngf", "8", "--ndf", "8", "--nz", "10", "--outf", "out"], image_folder),
    ("ex_wlm_lstm", EXAMPLES, "word_language_model", "main.py", WLM_ARGS + ["--model", "LSTM"], corpus),
    ("ex_wlm_transformer", EXAMPLES, "word_language_model", "main.py",
     WLM_ARGS + ["--model", "Transformer", "--nhead", "2", "--lr", "1"], corpus),
    ("ex_regression", EXAMPLES, "regression", "main.py", [], None),
    ("ex_time_sequence", EXAMPLES, "time_sequence_prediction", "train.py", ["--steps", "2"], sine_wave),
    ("ex_siamese", EXAMPLES, "siamese_network", "main.py",
     ["--epochs", "1", "--batch-size", "16", "--test-batch-size", "8", "--no-accel"], mnist_beside),
    ("ex_super_resolution", EXAMPLES, "super_resolution", "main.py",
     ["--upscale_factor", "2", "--batchSize", "4", "--testBatchSize", "4", "--nEpochs", "2", "--threads", "0"],
     bsds300),
    ("ex_forward_forward", EXAMPLES, "mnist_forward_forward", "main.py",
     ["--epochs", "3", "--train_size", "64", "--test_size", "16", "--no_accel", "--log-interval", "1"],
     mnist_in_program),
    ("ex_gcn", EXAMPLES, "gcn", "main.py", ["--epochs", "6", "--val-every", "1", "--no-accel"], cora_download),
    ("ex_gat", EXAMPLES, "gat", "main.py",
     ["--epochs", "6", "--hidden-dim", "8", "--num-heads", "2", "--val-every", "1", "--no-accel"], cora_present),
    ("ex_hogwild", EXAMPLES, "mnist_hogwild", "main.py",
     ["--epochs", "1", "--batch-size", "32", "--test-batch-size", "16", "--num-processes", "1", "--log-interval",
      "1"], mnist_beside),
    ("ex_mingpt_ddp", EXAMPLES, "distributed/minGPT-ddp/mingpt/model.py,distributed/minGPT-ddp/mingpt/char_dataset.py",
     "driver.py", [], shakespeare_like),
    ("ex_imagenet", EXAMPLES, "imagenet", "main.py",
     ["--dummy", "-a", "resnet18", "-b", "2", "--epochs", "1", "--workers", "0", "--print-freq", "1", "--no-accel",
      "--lr", "0.01"], None),
    ("nanogpt_model", NANOGPT, "model.py", "driver.py", [], None),
    ("nanogpt_train", NANOGPT, ".", "train.py", NANOGPT_TRAIN_ARGS, nanogpt_data),
    ("mingpt", MINGPT, "mingpt", "driver.py", [], None),
    ("vit", VIT, "vit_pytorch", "driver.py", [], None),
    ("simple_vit", VIT, "vit_pytorch", "driver.py", [], None),
    ("cait", VIT, "vit_pytorch", "driver.py", [], None),
]

_VIT_STEPS = '''
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
images = torch.rand(2, 3, 16, 16)
labels = torch.tensor([1, 3])
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
model.eval()
with torch.no_grad():
    print("VALUE logits", float(model(images).abs().mean()))
'''

# nanoGPT's and minGPT-ddp's step (inside the drivers' loops): zero_grad, backward, clipping, step
_CLIPPED_STEP = '''    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    print("loss", loss.item())
'''

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    # minGPT-ddp's model and dataset, one process: its Trainer's _run_batch (no DDP, no AMP on this CPU)
    "ex_mingpt_ddp": '''
import torch
from torch.utils.data import DataLoader
from model import GPT, GPTConfig, OptimizerConfig, create_optimizer
from char_dataset import CharDataset, DataConfig

dataset = CharDataset(DataConfig(path="input.txt", block_size=16, train_split=0.9, truncate=1.0))
config = GPTConfig(n_layer=2, n_head=2, n_embd=32, vocab_size=dataset.vocab_size, block_size=dataset.block_size,
                   embd_pdrop=0.0, resid_pdrop=0.0, attn_pdrop=0.0)
model = GPT(config)
optimizer = create_optimizer(model, OptimizerConfig(learning_rate=1e-3, weight_decay=0.1))
loader = DataLoader(dataset, batch_size=4, shuffle=True)
for step, (source, targets) in enumerate(loader):
    _, loss = model(source, targets)
''' + _CLIPPED_STEP + '''    if step == 3:
        break
model.eval()
with torch.no_grad():
    logits, _ = model(source)
print("VALUE logits", float(logits.abs().mean()))
''',
    "nanogpt_model": '''
import torch
from model import GPTConfig, GPT

config = GPTConfig(block_size=16, vocab_size=64, n_layer=2, n_head=2, n_embd=32, dropout=0.0, bias=False)
model = GPT(config)
optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=1e-3, betas=(0.9, 0.95), device_type="cpu")
idx = torch.randint(0, 64, (2, 16))
targets = torch.randint(0, 64, (2, 16))
for step in range(3):
    logits, loss = model(idx, targets)
''' + _CLIPPED_STEP + '''model.eval()
with torch.no_grad():
    logits, _ = model(idx)
print("VALUE logits", float(logits.abs().mean()))
''',
    "mingpt": '''
import numpy as np
import torch
from torch.utils.data import Dataset
from mingpt.model import GPT
from mingpt.trainer import Trainer


class Sorting(Dataset):
    """minGPT's demo task: 6 digits, then the same digits sorted."""
    def __init__(self):
        self.digits = np.random.RandomState(3).randint(0, 3, (32, 6))

    def __len__(self):
        return len(self.digits)

    def __getitem__(self, i):
        seq = np.concatenate([self.digits[i], np.sort(self.digits[i])])
        x = torch.tensor(seq[:-1], dtype=torch.long)
        y = torch.tensor(seq[1:], dtype=torch.long)
        y[:5] = -1      # no loss on the unsorted half
        return x, y


model_config = GPT.get_default_config()
model_config.model_type = None
model_config.n_layer, model_config.n_head, model_config.n_embd = 2, 2, 32
model_config.vocab_size, model_config.block_size = 3, 11
model = GPT(model_config)
train_config = Trainer.get_default_config()
train_config.learning_rate = 5e-4
train_config.max_iters = 4
train_config.num_workers = 0
train_config.batch_size = 4
train_config.device = "cpu"
trainer = Trainer(train_config, model, Sorting())


def report(trainer):
    print("loss", trainer.loss.item())


trainer.set_callback("on_batch_end", report)
trainer.run()
model.eval()
x, _ = Sorting()[0]
with torch.no_grad():
    logits, _ = model(x[None])
print("VALUE logits", float(logits.abs().mean()))
''',
    "vit": '''
import torch
import torch.nn.functional as F
from vit_pytorch import ViT

model = ViT(image_size=16, patch_size=4, num_classes=5, dim=32, depth=2, heads=2, dim_head=16, mlp_dim=64)
''' + _VIT_STEPS,
    "simple_vit": '''
import torch
import torch.nn.functional as F
from vit_pytorch.simple_vit import SimpleViT

model = SimpleViT(image_size=16, patch_size=4, num_classes=5, dim=32, depth=2, heads=2, dim_head=16, mlp_dim=64)
''' + _VIT_STEPS,
    "cait": '''
import torch
import torch.nn.functional as F
from vit_pytorch.cait import CaiT

model = CaiT(image_size=16, patch_size=4, num_classes=5, dim=32, depth=2, cls_depth=1, heads=2, dim_head=16,
             mlp_dim=64, dropout=0.0, emb_dropout=0.0, layer_dropout=0.0)
''' + _VIT_STEPS,
}
