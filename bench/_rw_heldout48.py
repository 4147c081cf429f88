"""The `heldout48` set of bench/real_world.py (`--set heldout48`): adambielski/siamese-triplet (metric learning:
siamese and triplet networks, online pair and triplet mining) and kevinzakka/recurrent-visual-attention (the
Recurrent Attention Model: glimpses, a Gaussian location policy trained by REINFORCE), converted as a new user
would convert them, on synthetic MNIST idx files in torchvision's on-disk layout.

    python bench/real_world.py --mirrors /work/.mirror --set heldout48 [--only st_softmax,ram_main]

- adambielski/siamese-triplet (datasets.py, networks.py, losses.py, utils.py, trainer.py, metrics.py, as they
  are; 40 training and 16 test images of 28x28 under x/data, the driver's `../data`): a driver of ours, one per
  kind (its first argument), builds torchvision's MNIST with ToTensor and Normalize, the kind's loaders, model
  and loss, SGD (lr 1e-2, momentum 0.9; the notebooks' Adam moves
  every weight by +-lr at its first step whatever the gradient's size, which turns float32 rounding into
  differences of 1e-2 in a few steps) and StepLR(8, 0.1), and calls trainer.fit() for one epoch (`cuda` False,
  `log_interval` 1): scheduler.step(), train_epoch (optimizer.zero_grad(), `model(*data)`, the loss over the
  outputs plus the target tuple, `loss.item()`, backward(), step(), the metrics, the log lines) and test_epoch
  under no_grad in eval mode. Then the sum of |embedding| of 4 test images and the metrics' values, as VALUEs.
  - st_softmax: ClassificationNet(EmbeddingNet(), 10) (PReLU, log_softmax), NLLLoss, AccumulatedAccuracyMetric;
    batches of 8 (shuffled training set: the runner's matched RandomSampler order).
  - st_siamese: SiameseMNIST over both sets (training pairs drawn with np.random in __getitem__, fixed test
    pairs from RandomState(29)), SiameseNet, ContrastiveLoss(1.0).
  - st_triplet: TripletMNIST, TripletNet, TripletLoss(1.0) (the loaders' targets are empty lists: no target).
  - st_online_pair: BalancedBatchSampler (3 classes x 3 samples; np.random's class choice and shuffles) as the
    loaders' batch_sampler, EmbeddingNet, OnlineContrastiveLoss(1.0, HardNegativePairSelector()): inside the
    loss, pdist, the label pairs from itertools.combinations through numpy, `.nonzero()` row selection, the
    hardest negatives by np.argpartition of the distances read back with `.data.numpy()`.
  - st_online_random: the same sampler, OnlineTripletLoss(1.0, RandomNegativeTripletSelector(1.0)) (per
    anchor-positive pair, loss values read back to numpy and a negative drawn by np.random.choice), the loss
    returning `(mean, len(triplets))`, AverageNonzeroTripletsMetric.
  - st_online_semihard: the same with SemihardNegativeTripletSelector(1.0) (a lambda over semihard_negative).
- kevinzakka/recurrent-visual-attention (main.py, config.py, data_loader.py, trainer.py, model.py, modules.py,
  utils.py, as they are; 24 training and 8 test images under x/data, the driver's `../data`): tqdm,
  tensorboard_logger and matplotlib are not installed: stand-ins of ours on both sides (a progress bar that draws
  nothing, log_value that logs nothing, use_tensorboard staying False; pyplot and patches modules that raise if
  used: utils.py imports them for plots nothing here draws).
  - ram_main: a driver of ours runs main.main() twice through config.get_config(): training (`--use_gpu False
    --epochs 1 --batch_size 4 --num_glimpses 3 --patch_size 8 --glimpse_scale 2 --num_patches 2 --loc_hidden
    32 --glimpse_hidden 32 --hidden_size 64 --valid_size 0.25 --M 2`: SubsetRandomSampler splits with 4 worker
    processes, Trainer.reset's `FloatTensor(B, 2).uniform_(-1, 1)` start location with requires_grad, the
    retina's padded per-image patches and avg_pool2d, Normal(mu, std).rsample() and log_prob, the hybrid loss
    of nll_loss, mse_loss on the baselines and REINFORCE's `-log_pi * adjusted_reward`, Adam, validate()
    under no_grad with M repeats, ReduceLROnPlateau on -valid_acc, pickle dumps of the glimpses, torch.save of
    the checkpoint and shutil's copy as the best model), then testing (`--is_train False`: load_checkpoint of
    the last checkpoint (`--best False`: the best one exists only where the validation accuracy rose above 0)
    with the optimizer's state, test() over the test set, its "[*] Test Acc" line). PRINTED:
    the "Train on", "Epoch", "[*] Loaded" and "[*] Test Acc" lines.

torchvision does not import next to this CPU torch: the torch side gets the MNIST and transforms stand-ins of
heldout36/44 (written after the conversion; the converted side's torchvision is the converter's own).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

from bench._rw_heldout44 import _TV_DATASETS as _MNIST_DATASETS, _TV_TRANSFORMS as _MNIST_TRANSFORMS

ST = "adambielski+siamese-triplet@0c719f9e8f59fa386e8c59d10b2ddde9fac46276"
RAM = "kevinzakka+recurrent-visual-attention@a38ac8958ebf1c61a10c4d5320f1e31d3d0b73dd"


def _mnist(n_train, n_test):
    """MNIST idx files under RUN/SIDE/x/data/MNIST/raw: the drivers read `../data` from their directory."""
    def write(root):
        from tests.corpus import write_mnist
        write_mnist(Path(root).parent / "x" / "data", n_train=n_train, n_test=n_test, seed=48)
    return write


# heldout36's MNIST stand-in keeps no `train` attribute, which siamese-triplet's datasets read (torchvision's has it)
_MNIST_WITH_TRAIN = _MNIST_DATASETS + '''

_FIRST_INIT = MNIST.__init__


def _init_keeping_train(self, root, train=True, *args, **kwargs):
    _FIRST_INIT(self, root, train, *args, **kwargs)
    self.train = train


MNIST.__init__ = _init_keeping_train
'''

_MNIST_TV = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout48.py."""\nfrom . import datasets, '
                               'transforms\n',
    "torchvision/datasets.py": _MNIST_WITH_TRAIN,
    "torchvision/transforms.py": _MNIST_TRANSFORMS,
}

_ST_DRIVER = '''
"""A driver written by bench/_rw_heldout48.py: trainer.fit() for one kind of siamese-triplet's models (argv[1])."""
import sys

import numpy as np
import torch
from torch.optim import lr_scheduler
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

from datasets import BalancedBatchSampler, SiameseMNIST, TripletMNIST
from losses import ContrastiveLoss, OnlineContrastiveLoss, OnlineTripletLoss, TripletLoss
from metrics import AccumulatedAccuracyMetric, AverageNonzeroTripletsMetric
from networks import ClassificationNet, EmbeddingNet, SiameseNet, TripletNet
from trainer import fit
from utils import HardNegativePairSelector, RandomNegativeTripletSelector, SemihardNegativeTripletSelector

kind = sys.argv[1]
np.random.seed(48)
torch.manual_seed(48)
to_input = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
seen = datasets.MNIST("../data", train=True, transform=to_input)
unseen = datasets.MNIST("../data", train=False, transform=to_input)

trunk = EmbeddingNet()
watch = []
if kind == "softmax":
    net = ClassificationNet(trunk, n_classes=10)
    fitting = DataLoader(seen, batch_size=8, shuffle=True)
    checking = DataLoader(unseen, batch_size=8, shuffle=False)
    criterion = torch.nn.NLLLoss()
    watch = [AccumulatedAccuracyMetric()]
elif kind == "siamese":
    net = SiameseNet(trunk)
    fitting = DataLoader(SiameseMNIST(seen), batch_size=8, shuffle=True)
    checking = DataLoader(SiameseMNIST(unseen), batch_size=8, shuffle=False)
    criterion = ContrastiveLoss(1.0)
elif kind == "triplet":
    net = TripletNet(trunk)
    fitting = DataLoader(TripletMNIST(seen), batch_size=8, shuffle=True)
    checking = DataLoader(TripletMNIST(unseen), batch_size=8, shuffle=False)
    criterion = TripletLoss(1.0)
else:
    net = trunk
    fitting = DataLoader(seen, batch_sampler=BalancedBatchSampler(seen.train_labels, n_classes=3, n_samples=3))
    checking = DataLoader(unseen, batch_sampler=BalancedBatchSampler(unseen.test_labels, n_classes=3,
                                                                     n_samples=3))
    if kind == "online_pair":
        criterion = OnlineContrastiveLoss(1.0, HardNegativePairSelector())
    elif kind == "online_random":
        criterion = OnlineTripletLoss(1.0, RandomNegativeTripletSelector(1.0))
        watch = [AverageNonzeroTripletsMetric()]
    else:
        criterion = OnlineTripletLoss(1.0, SemihardNegativeTripletSelector(1.0))
        watch = [AverageNonzeroTripletsMetric()]

sgd = torch.optim.SGD(net.parameters(), lr=1e-2, momentum=0.9)
schedule = lr_scheduler.StepLR(sgd, 8, gamma=0.1, last_epoch=-1)
fit(fitting, checking, net, criterion, sgd, schedule, 1, False, 1, metrics=watch)

probe = torch.stack([unseen[k][0] for k in range(4)])
with torch.no_grad():
    trunk.eval()
    codes = trunk(probe)
print("VALUE", "embedding_abs", float(codes.abs().sum()))
for k, meter in enumerate(watch):
    print("VALUE", "metric_%d" % k, float(meter.value()))
'''

_RAM_DRIVER = '''
"""A driver written by bench/_rw_heldout48.py: main.main() trains the Recurrent Attention Model for one epoch,
then tests its best checkpoint."""
import sys

import main as entry
from config import get_config

shape = ["--use_gpu", "False", "--batch_size", "4", "--num_glimpses", "3", "--patch_size", "8",
         "--glimpse_scale", "2", "--num_patches", "2", "--loc_hidden", "32", "--glimpse_hidden", "32",
         "--hidden_size", "64", "--M", "2", "--data_dir", "../data"]
sys.argv = ["main.py"] + shape + ["--epochs", "1", "--valid_size", "0.25"]
config, unparsed = get_config()
entry.main(config)
sys.argv = ["main.py"] + shape + ["--is_train", "False", "--best", "False"]
config, unparsed = get_config()
entry.main(config)
'''

_STANDINS = {
    "tqdm.py": '''
"""A stand-in written by bench/_rw_heldout48.py: tqdm is not installed; a progress bar that draws nothing."""


class tqdm:
    def __init__(self, iterable=None, total=None, **kwargs):
        self.iterable, self.total, self.n = iterable, total, 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __iter__(self):
        return iter(self.iterable)

    def set_description(self, text):
        self.text = text

    def update(self, n=1):
        self.n += n
''',
    "matplotlib/__init__.py": '''
"""A stand-in written by bench/_rw_heldout48.py: matplotlib is not installed; utils.py imports pyplot and patches
at its top for plots the programs do not draw."""
''',
    "matplotlib/pyplot.py": '''
"""A stand-in written by bench/_rw_heldout48.py: nothing of it may be called."""


def __getattr__(name):
    raise RuntimeError("matplotlib stand-in: pyplot." + name)
''',
    "matplotlib/patches.py": '''
"""A stand-in written by bench/_rw_heldout48.py: nothing of it may be called."""


def __getattr__(name):
    raise RuntimeError("matplotlib stand-in: patches." + name)
''',
    "tensorboard_logger.py": '''
"""A stand-in written by bench/_rw_heldout48.py: tensorboard_logger is not installed; nothing is logged."""


def configure(folder):
    pass


def log_value(name, value, step):
    pass
''',
}

_ST_FILES = "datasets.py,networks.py,losses.py,utils.py,trainer.py,metrics.py"
_RAM_FILES = "main.py,config.py,data_loader.py,trainer.py,model.py,modules.py,utils.py"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [(f"st_{kind}", ST, _ST_FILES, "driver.py", [kind], _mnist(40, 16))
            for kind in ("softmax", "siamese", "triplet", "online_pair", "online_random", "online_semihard")]
PROGRAMS.append(("ram_main", RAM, _RAM_FILES, "driver.py", [], _mnist(24, 8)))

DEPS: dict = {}

DRIVERS = {name: _ST_DRIVER for name, *_ in PROGRAMS if name.startswith("st_")}
DRIVERS["ram_main"] = _RAM_DRIVER

FILES = {"ram_main": dict(_STANDINS)}

TORCH_FILES = {name: dict(_MNIST_TV) for name, *_ in PROGRAMS}

# siamese-triplet: 5 training batches of 8 (the online kinds: 4 of 9); RAM: 18 training images in batches of 4
LOSSES = {name: 8 for name, *_ in PROGRAMS}

PRINTED = {"ram_main": r"^\[\*\] (Train on|Loaded|Test Acc).*$|^Epoch: .*$"}
