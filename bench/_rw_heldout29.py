"""The `heldout29` set of bench/real_world.py (`--set heldout29`): locuslab/TCN's task scripts run whole,
davda54/sam's example/train.py and lucidrains/lion-pytorch's three Lion optimizers, converted as a new user would
convert them (heldout10 drove TCN's copy-memory and adding models, heldout6 SAM and heldout4 Lion through drivers
of ours; this set runs the repositories' own training scripts where they can run).

    python bench/real_world.py --mirrors /work/.mirror --set heldout29 [--only tcn_poly,sam_train]

- locuslab/TCN (TCN/tcn.py: TemporalConvNet of weight_norm'd dilated Conv1d layers, Chomp1d): each task script
  as it is, beside the TCN package (`sys.path.append("../../")` and `from TCN.<task>...`), with `--cuda` (the
  scripts' store_false flag: CUDA off) and small sizes given as arguments:
  - tcn_adding: adding_problem/add_test.py (Adam, clip_grad_norm_ after backward, F.mse_loss); its data sizes
    (50000 and 1000 sequences, constants of the script) made small on the torch side before conversion.
  - tcn_copymem: copy_memory/copymem_test.py (RMSprop, CrossEntropyLoss over `out.view(-1, n_classes)`, the
    accuracy count `pred.eq(...).cpu().sum()`, clip_grad_norm_ between zero_grad and backward).
  - tcn_poly: poly_music/music_test.py on a synthetic ./mdata/JSB_Chorales.mat (scipy.io.savemat cell arrays of
    88-key piano rolls, the real files' layout): the model's `.double()` sigmoid output, the loss
    `-torch.trace(matmul(y, log(output).float().t()) + ...)`, np.random.shuffle'd sequences, one per step.
  - tcn_word: word_cnn/word_cnn_test.py on a synthetic ./data/penn/{train,valid,test}.txt (`--corpus`: the
    Corpus built and pickled, the repository's pickled torch corpus not read), tied encoder/decoder weights,
    SGD with clipping, the effective-history slice of outputs and targets.
  - tcn_char: char_cnn/char_cnn_test.py; its data comes from the `observations` package and `unidecode`, which
    are not installed: stand-in modules of ours beside the script (observations.ptb gives three synthetic
    strings, unidecode is the identity on ASCII text).
  - tcn_pixel: mnist_pixel's model through a driver of ours replaying pmnist_test.py's train step (its utils
    import torchvision, which does not import here): images flattened to `view(-1, 1, 784)` and permuted by a
    fixed np.random.permutation, F.nll_loss on the model's log_softmax, Adam.
- davda54/sam: example/train.py as it is, beside sam.py (`sys.path.append("..")`), with a stand-in of ours for
  example/data/cifar.py (the original builds torchvision's CIFAR10, which does not import here): the same Cifar
  interface, 32x32 synthetic images normalised by their own mean and std, DataLoaders of batch_size (train
  shuffled); --depth 10 --width_factor 1 --batch_size 8 --epochs 1:
  - sam_train: adaptive SAM (the script's default): WideResNet, smooth_crossentropy (full_like, scatter_,
    kl_div(reduction='none')), enable/disable_running_stats (BatchNorm momentum set to 0 between the two
    forward-backward passes), first_step/second_step, the StepLR object and Log's running accuracy.
  - sam_plain: the same with `--adaptive ''` (bool('') is False: plain SAM).
  - sam_closure: a driver of ours: SAM.step(closure) (torch.enable_grad()(closure) inside a no_grad step) around
    Adam on a small MLP, then its state_dict round trip.
- lucidrains/lion-pytorch (triton.py needs triton: left out):
  - lion_train: a driver of ours: lion_pytorch.Lion, foreach.Lion (torch._foreach_mul_/lerp_/sign_/add_) and
    cautious_lion.Lion, each training a small MLP a few steps (decoupled weight decay for the foreach one, a
    closure for the cautious one).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

from bench._rw_heldout27 import _patch_script

TCN = "locuslab+TCN@2f8c2b817050206397458dfd1f5a25ce8a32fe65"
SAM = "davda54+sam@3c3afdbd71cff2462ec91c734b3d1170bd0f3707"
LION = "lucidrains+lion-pytorch@6a74fdc0ba572ab5683dc0270c66c20ecbc02d09"

_WORDS = ("the cat dog sat on mat a ran to house big small red green tree under over and it was in garden bird "
          "sang song day night moon sun light").split()

# torch side, before conversion: constants made small (each must match once)
_PATCHES = {
    "add_test.py": [
        ("data_generator(50000, seq_length)", "data_generator(160, seq_length)"),
        ("data_generator(1000, seq_length)", "data_generator(32, seq_length)"),
    ],
}


def _prog(root) -> Path:
    prog = Path(root).parent / "x" / "prog"
    prog.mkdir(parents=True, exist_ok=True)
    return prog


def _patch(name):
    def writer(root):
        _patch_script(_prog(root), name, _PATCHES)
    return writer


def _jsb(root):
    """./mdata/JSB_Chorales.mat beside music_test.py: traindata/validdata/testdata as 1 x n cell arrays of
    (length, 88) 0/1 piano rolls (the real file's layout, scipy.io.loadmat's `data['traindata'][0]`)."""
    import numpy as np
    from scipy.io import savemat
    prog = _prog(root)
    (prog / "mdata").mkdir(exist_ok=True)
    rng = np.random.RandomState(29)

    def cells(n):
        out = np.empty((1, n), dtype=object)
        for i in range(n):
            roll = np.zeros((int(rng.randint(10, 16)), 88))
            for t in range(roll.shape[0]):
                roll[t, rng.choice(np.arange(30, 70), 3, replace=False)] = 1.0
            out[0, i] = roll
        return out
    savemat(prog / "mdata" / "JSB_Chorales.mat", {"traindata": cells(8), "validdata": cells(2),
                                                   "testdata": cells(2)})


def _penn(root):
    """./data/penn/{train,valid,test}.txt beside word_cnn_test.py: tokenised sentences, one a line."""
    import numpy as np
    prog = _prog(root)
    penn = prog / "data" / "penn"
    penn.mkdir(parents=True, exist_ok=True)
    rng = np.random.RandomState(29)
    for name, n in (("train", 60), ("valid", 12), ("test", 12)):
        lines = [" " + " ".join(rng.choice(_WORDS, rng.randint(4, 12))) + " " for _ in range(n)]
        (penn / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


_CHAR_STANDINS = {
    "observations.py": '''
"""A stand-in written by bench/_rw_heldout29.py for the `observations` package: ptb(path) gives the train,
test and validation texts (synthetic words)."""
import random

_WORDS = "the cat dog sat on mat a ran to house big small red green tree under over and it was in".split()


def _text(n, seed):
    rng = random.Random(seed)
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def ptb(path):
    return _text(400, 1), _text(80, 2), _text(80, 3)
''',
    "unidecode.py": '''
"""A stand-in written by bench/_rw_heldout29.py for the `unidecode` package: ASCII text unchanged."""


def unidecode(text):
    return text
''',
}

_CIFAR_STANDIN = {
    "example/data/cifar.py": '''
"""A stand-in written by bench/_rw_heldout29.py for example/data/cifar.py (torchvision does not import here):
the same interface, synthetic 32x32 images normalised by their own statistics."""
import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset


class Cifar:
    def __init__(self, batch_size, threads):
        rng = np.random.RandomState(29)
        train_x = torch.from_numpy(rng.rand(48, 3, 32, 32).astype(np.float32))
        train_y = torch.from_numpy(rng.randint(0, 10, 48).astype(np.int64))
        test_x = torch.from_numpy(rng.rand(16, 3, 32, 32).astype(np.float32))
        test_y = torch.from_numpy(rng.randint(0, 10, 16).astype(np.int64))
        mean, std = train_x.mean(dim=[0, 2, 3]), train_x.std(dim=[0, 2, 3])
        train_x = (train_x - mean.view(1, 3, 1, 1)) / std.view(1, 3, 1, 1)
        test_x = (test_x - mean.view(1, 3, 1, 1)) / std.view(1, 3, 1, 1)
        self.train = DataLoader(TensorDataset(train_x, train_y), batch_size=batch_size, shuffle=True)
        self.test = DataLoader(TensorDataset(test_x, test_y), batch_size=batch_size, shuffle=False)
        self.classes = ('plane', 'car', 'bird', 'cat', 'deer', 'dog', 'frog', 'horse', 'ship', 'truck')
''',
}

_SAM_ARGS = ["--depth", "10", "--width_factor", "1", "--batch_size", "8", "--epochs", "1", "--threads", "0"]

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("tcn_adding", TCN, "TCN,TCN/adding_problem/add_test.py", "add_test.py",
     ["--cuda", "--seq_len", "24", "--nhid", "8", "--levels", "3", "--ksize", "3", "--batch_size", "16",
      "--epochs", "1", "--clip", "0.5"], _patch("add_test.py")),
    ("tcn_copymem", TCN, "TCN,TCN/copy_memory/copymem_test.py", "copymem_test.py",
     ["--cuda", "--blank_len", "16", "--seq_len", "4", "--nhid", "8", "--levels", "3", "--ksize", "4",
      "--batch_size", "16", "--epochs", "1"], None),
    ("tcn_poly", TCN, "TCN,TCN/poly_music/music_test.py", "music_test.py",
     ["--cuda", "--data", "JSB", "--nhid", "8", "--levels", "2", "--ksize", "3", "--epochs", "1"], _jsb),
    ("tcn_word", TCN, "TCN,TCN/word_cnn/word_cnn_test.py", "word_cnn_test.py",
     ["--cuda", "--corpus", "--emsize", "16", "--nhid", "16", "--levels", "2", "--seq_len", "12",
      "--validseqlen", "6", "--batch_size", "4", "--epochs", "1", "--lr", "1"], _penn),
    ("tcn_char", TCN, "TCN,TCN/char_cnn/char_cnn_test.py", "char_cnn_test.py",
     ["--cuda", "--emsize", "16", "--nhid", "16", "--levels", "2", "--seq_len", "24", "--validseqlen", "12",
      "--batch_size", "4", "--epochs", "1", "--lr", "1"], None),
    ("tcn_pixel", TCN, "TCN", "driver.py", [], None),
    ("sam_train", SAM, "example,sam.py", "example/train.py", _SAM_ARGS, None),
    ("sam_plain", SAM, "example,sam.py", "example/train.py", _SAM_ARGS + ["--adaptive", ""], None),
    ("sam_closure", SAM, "sam.py", "driver.py", [], None),
    ("lion_train", LION, "lion_pytorch", "driver.py", [], None),
]

DEPS: dict = {}

FILES = {"tcn_char": _CHAR_STANDINS, "sam_train": _CIFAR_STANDIN, "sam_plain": _CIFAR_STANDIN}

# train.py: two backward passes a step
LOSSES = {"sam_train": 8, "sam_plain": 8, "lion_train": 12}

# Drivers: our own code, through the repositories' modules.
DRIVERS = {
    "tcn_pixel": '''
import numpy as np
import torch
import torch.nn.functional as F
import torch.optim as optim
from TCN.mnist_pixel.model import TCN

# pmnist_test.py's train(): sequences of pixels, permuted by one fixed permutation
torch.manual_seed(1111)
permute = torch.Tensor(np.random.permutation(64).astype(np.float64)).long()
model = TCN(1, 10, [8, 8, 8], kernel_size=3, dropout=0.0)
optimizer = optim.Adam(model.parameters(), lr=2e-3)
images = torch.rand(24, 1, 8, 8)
labels = torch.randint(0, 10, (24,))
model.train()
for step in range(3):
    for i in range(0, 24, 8):
        data, target = images[i:i + 8], labels[i:i + 8]
        data = data.view(-1, 1, 64)
        data = data[:, :, permute]
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        print("loss", loss.item())
model.eval()
with torch.no_grad():
    output = model(images.view(-1, 1, 64)[:, :, permute])
    pred = output.data.max(1, keepdim=True)[1]
    print("VALUE correct", float(pred.eq(labels.data.view_as(pred)).cpu().sum()))
    print("VALUE test_loss", float(F.nll_loss(output, labels, reduction='sum').item()))
''',
    "sam_closure": '''
import torch
import torch.nn.functional as F
from sam import SAM

torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
optimizer = SAM(net.parameters(), torch.optim.Adam, rho=0.1, lr=1e-2)
x = torch.randn(12, 6)
y = torch.randint(0, 3, (12,))


def closure():
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    return loss


for step in range(4):
    optimizer.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    optimizer.step(closure)
    print("loss", loss.item())
state = optimizer.state_dict()
optimizer.load_state_dict(state)
optimizer.zero_grad()
F.cross_entropy(net(x), y).backward()
optimizer.step(closure)
with torch.no_grad():
    print("VALUE out", float(net(x).abs().sum()))
''',
    "lion_train": '''
import torch
import torch.nn.functional as F
from lion_pytorch import Lion
from lion_pytorch.foreach import Lion as ForeachLion
from lion_pytorch.cautious_lion import Lion as CautiousLion

torch.manual_seed(0)
x = torch.randn(16, 8)
y = torch.randn(16, 2)
for name, make in (("lion", lambda p: Lion(p, lr=1e-2, weight_decay=1e-2)),
                   ("foreach", lambda p: ForeachLion(p, lr=1e-2, weight_decay=1e-1, decoupled_weight_decay=True)),
                   ("cautious", lambda p: CautiousLion(p, lr=1e-2, betas=(0.8, 0.95), weight_decay=1e-2))):
    net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 2))
    opt = make(net.parameters())
    for step in range(4):
        def closure():
            opt.zero_grad()
            loss = F.mse_loss(net(x), y)
            loss.backward()
            return loss
        loss = opt.step(closure)
        print(name, "loss", loss.item())
    with torch.no_grad():
        print("VALUE", name, float(net(x).sum()))
        print("VALUE", name + "_w", float(sum(p.abs().sum() for p in net.parameters())))
''',
}
