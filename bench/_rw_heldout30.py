"""The `heldout30` set of bench/real_world.py (`--set heldout30`): MorvanZhou/PyTorch-Tutorial's tutorial-contents/
scripts, all twenty, run whole (heldout4 ran nine of them to the runner's step cap), converted as a new user would
convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout30 [--only m401_cnn,m405_dqn]

Each script's loop constants are made small in the torch copy before the conversion (the data writer below: e.g.
`for t in range(200):` to `range(8)`, `EPOCH = 10` to `EPOCH = 2`), so each program ends on its own: its per-step
losses are compared, what it draws (a matplotlib stand-in beside each program prints the arrays given to plot,
scatter, hist and imshow as VALUE lines, and the strings given to text as TEXT lines) and the lines it prints (a
set's PRINTED: accuracies, predictions, episode returns, batches).

- m201_numpy, m202_variable, m203_activation: numpy interop (`torch.from_numpy`, `.numpy()`, abs / sin / mean /
  mm, a 2-D `tensor.dot`), `Variable(..., requires_grad=True)` and its `.grad`, relu / sigmoid / tanh / softplus.
- m301_regression, m302_classification, m303_quick, m304_save_reload: the first networks; 304 saves the whole
  net (`torch.save(net1, 'net.pkl')`) and its state dict and reloads both.
- m305_batch, m306_optimizer: TensorDataset / DataLoader (shuffle, num_workers=2); SGD, momentum, RMSprop and Adam
  on four copies of one net.
- m401_cnn, m402_rnn_classifier, m404_autoencoder, m502_gpu: torchvision's MNIST (synthetic idx files in
  ./mnist/MNIST/raw, written by the data writer) with ToTensor and the deprecated `train_data` / `train_labels` /
  `test_data` / `test_labels` attributes. torchvision does not import next to this torch: the torch side gets a
  stand-in of ours (datasets.MNIST reading the idx files, transforms.ToTensor) written after the conversion, so the
  converter sees the import as the user's. 502 moves tensors and the net with `.cuda()`: on the torch side (no GPU
  here) `.cuda()` is made `.cpu()` after the conversion; the converted side is the conversion of `.cuda()`.
- m403_rnn_regressor, m501_dynamic: nn.RNN with the hidden state carried over (`h_state.data`), per-step Linear
  over `r_out[:, t, :]` and torch.stack; 501 draws its sequence lengths with np.random.
- m405_dqn: DQN on a CartPole stand-in of ours (gym is not installed; the old gym API: reset() returns the state,
  step() four values, `env.unwrapped`, `x_threshold`): a replay memory of 64 (2000 in the script), target net
  by load_state_dict, `gather`, `.detach()`, `max(1)[0]`.
- m406_gan, m406_cgan: the painting GANs (`torch.randn(..., requires_grad=True)`, `backward(retain_graph=True)`).
- m503_dropout, m504_batchnorm: two nets stepped side by side, eval()/train() switches; BatchNorm1d(momentum=0.5)
  kept in a list and registered with setattr, `init.normal_` / `init.constant_`.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

from bench._rw_heldout26 import _patched

MORVAN = "MorvanZhou+PyTorch-Tutorial@dbe154a9e56635e51c6b0c2ccea8ae36cfb585a7"
DIR = "tutorial-contents"


def _writer(script, patches, mnist=None, gym=False):
    """A data writer: on the torch side (written before the conversion) the script's loop constants made small
    (each must be found); on both sides the synthetic MNIST idx files and the gym stand-in beside the program."""
    def write(root):
        prog = Path(root).parent / "x" / "prog"
        prog.mkdir(parents=True, exist_ok=True)
        if mnist:
            from tests.corpus import write_mnist
            write_mnist(prog / "mnist", n_train=mnist[0], n_test=mnist[1])
        if gym:
            (prog / "gym.py").write_text(_GYM.lstrip(), encoding="utf-8")
        _patched(script, patches)(root)
    return write


# (name, script, patches, MNIST (train, test) sizes, gym stand-in, loss budget)
_PROGRAMS = [
    ("m201_numpy", "201_torch_numpy.py", [], None, False, 1),
    ("m202_variable", "202_variable.py", [], None, False, 1),
    ("m203_activation", "203_activation.py", [], None, False, 1),
    ("m301_regression", "301_regression.py", [("for t in range(200):", "for t in range(8):")], None, False, 10),
    ("m302_classification", "302_classification.py", [("for t in range(100):", "for t in range(8):")], None, False,
     10),
    ("m303_quick", "303_build_nn_quickly.py", [], None, False, 1),
    ("m304_save_reload", "304_save_reload.py", [("for t in range(100):", "for t in range(8):")], None, False, 10),
    ("m305_batch", "305_batch_train.py", [], None, False, 1),
    ("m306_optimizer", "306_optimizer.py", [("EPOCH = 12", "EPOCH = 2"),
                                            ("torch.linspace(-1, 1, 1000)", "torch.linspace(-1, 1, 100)")],
     None, False, 40),
    ("m401_cnn", "401_CNN.py", [], (150, 16), False, 6),
    ("m402_rnn_classifier", "402_RNN_classifier.py", [], (128, 16), False, 6),
    ("m403_rnn_regressor", "403_RNN_regressor.py", [("for step in range(100):", "for step in range(8):")], None,
     False, 10),
    ("m404_autoencoder", "404_autoencoder.py", [("EPOCH = 10", "EPOCH = 2")], (128, 16), False, 10),
    ("m405_dqn", "405_DQN_Reinforcement_learning.py", [("MEMORY_CAPACITY = 2000", "MEMORY_CAPACITY = 64")], None,
     True, 12),
    ("m406_gan", "406_GAN.py", [("for step in range(10000):", "for step in range(8):")], None, False, 20),
    ("m406_cgan", "406_conditional_GAN.py", [("for step in range(10000):", "for step in range(8):")], None, False,
     20),
    ("m501_dynamic", "501_why_torch_dynamic_graph.py", [("for i in range(60):", "for i in range(8):")], None,
     False, 10),
    ("m502_gpu", "502_GPU.py", [], (150, 16), False, 6),
    ("m503_dropout", "503_dropout.py", [("for t in range(500):", "for t in range(12):")], None, False, 30),
    ("m504_batchnorm", "504_batch_normalization.py", [("EPOCH = 12", "EPOCH = 2"), ("N_SAMPLES = 2000",
                                                                                   "N_SAMPLES = 200")],
     None, False, 20),
]

# our CartPole for the old gym API the DQN script was written for
_GYM = '''
"""A stand-in for gym written by bench/_rw_heldout30.py: CartPole-v0 with the old API (reset() gives the state,
step() four values)."""
import math

import numpy as np


class _Discrete:
    def __init__(self, n, rng):
        self.n, self.shape, self._rng = n, (), rng

    def sample(self):
        return int(self._rng.randint(self.n))


class _Box:
    def __init__(self, shape):
        self.shape = shape


class CartPole:
    x_threshold = 2.4
    theta_threshold_radians = 12 * 2 * math.pi / 360

    def __init__(self):
        self._rng = np.random.RandomState(0)
        self.action_space = _Discrete(2, self._rng)
        self.observation_space = _Box((4,))
        self.unwrapped = self

    def reset(self):
        self.state = self._rng.uniform(-0.05, 0.05, size=4)
        return np.array(self.state)

    def step(self, action):
        x, v, theta, omega = self.state
        push = 10.0 if int(action) == 1 else -10.0
        c, s = math.cos(theta), math.sin(theta)
        # cart of 1 kg, pole of 0.1 kg and half length 0.5 m, g = 9.8, Euler steps of 0.02 s
        tmp = (push + 0.05 * omega * omega * s) / 1.1
        alpha = (9.8 * s - c * tmp) / (0.5 * (4.0 / 3.0 - 0.1 * c * c / 1.1))
        acc = tmp - 0.05 * alpha * c / 1.1
        self.state = np.array([x + 0.02 * v, v + 0.02 * acc, theta + 0.02 * omega, omega + 0.02 * alpha])
        done = bool(abs(self.state[0]) > self.x_threshold or abs(self.state[2]) > self.theta_threshold_radians)
        return np.array(self.state), 1.0, done, {}

    def render(self):
        return None


def make(name):
    if not name.startswith("CartPole"):
        raise ValueError(f"no environment {name} in this stand-in")
    return CartPole()
'''

# PROGRAMS of real_world's shape
PROGRAMS = [(name, MORVAN, DIR, script, [], _writer(script, patches, mnist, gym))
            for name, script, patches, mnist, gym, _ in _PROGRAMS]

DEPS: dict = {}
DRIVERS: dict = {}

# matplotlib as the scripts use it, a stand-in beside each program: the arrays drawn printed as VALUE lines (their
# mean magnitude), the strings written on the figure as TEXT lines; everything else does nothing
_PYPLOT = '''
"""A stand-in written by bench/_rw_heldout30.py: what the program draws, printed as VALUE and TEXT lines."""
import numpy as np

_drawn = {}


def _value(kind, args):
    for arg in args:
        if isinstance(arg, str):
            continue
        try:
            a = np.asarray(arg, dtype=np.float64)
        except (TypeError, ValueError):
            continue
        if a.size < 2:
            continue
        n = _drawn.get(kind, 0)
        _drawn[kind] = n + 1
        print(f"VALUE {kind}{n}_abs {float(np.abs(a).mean())!r}")


def _nothing(*args, **kwargs):
    return None


class _Axes:
    def plot(self, *args, **kwargs):
        _value("plot", args)

    def scatter(self, *args, **kwargs):
        _value("scatter", args[:2])

    def hist(self, *args, **kwargs):
        _value("hist", args[:1])

    def imshow(self, *args, **kwargs):
        _value("imshow", args[:1])

    def text(self, *args, **kwargs):
        print("TEXT", *[a for a in args if isinstance(a, str)])

    def __getattr__(self, name):
        return _nothing


_axes = _Axes()
plot, scatter, hist, imshow, text = _axes.plot, _axes.scatter, _axes.hist, _axes.imshow, _axes.text


def subplots(rows=1, cols=1, *args, **kwargs):
    grid = np.empty((rows, cols), dtype=object)
    for i in range(rows):
        for j in range(cols):
            grid[i, j] = _Axes()
    return _Axes(), grid


def figure(*args, **kwargs):
    return _Axes()


def __getattr__(name):
    return _nothing
'''

_STANDINS = {
    "matplotlib/__init__.py": '"""A stand-in written by bench/_rw_heldout30.py."""\n',
    "matplotlib/pyplot.py": _PYPLOT,
    "matplotlib/cm.py": '"""A stand-in written by bench/_rw_heldout30.py."""\n\n\ndef rainbow(x):\n'
                        '    return (0.0, 0.0, 0.0, 1.0)\n',
    "mpl_toolkits/__init__.py": '"""A stand-in written by bench/_rw_heldout30.py."""\n',
    "mpl_toolkits/mplot3d.py": '"""A stand-in written by bench/_rw_heldout30.py."""\nfrom matplotlib.pyplot import '
                               '_Axes\n\n\ndef Axes3D(fig, *args, **kwargs):\n    return _Axes()\n',
}

FILES = {name: dict(_STANDINS) for name, *_ in _PROGRAMS}

# torchvision does not import next to this CPU torch: the torch side's stand-in, written beside the torch program
# after the conversion (the converted program's torchvision is the converter's own)
_TV_DATASETS = '''
"""A stand-in written by bench/_rw_heldout30.py: MNIST from the idx files in root/MNIST/raw."""
import os

import numpy as np
import torch


def _idx(path):
    with open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(shape).copy()


class MNIST:
    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        raw = os.path.join(root, "MNIST", "raw")
        prefix = "train" if train else "t10k"
        self.data = torch.from_numpy(_idx(os.path.join(raw, prefix + "-images-idx3-ubyte")))
        self.targets = torch.from_numpy(_idx(os.path.join(raw, prefix + "-labels-idx1-ubyte")).astype(np.int64))
        self.transform, self.target_transform = transform, target_transform

    # torchvision's deprecated names
    train_data = test_data = property(lambda self: self.data)
    train_labels = test_labels = property(lambda self: self.targets)

    def __getitem__(self, index):
        img, target = self.data[index].numpy(), int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)
'''

_TV_TRANSFORMS = '''
"""A stand-in written by bench/_rw_heldout30.py: ToTensor of a (H, W) or (H, W, C) uint8 array."""
import numpy as np
import torch


class ToTensor:
    def __call__(self, pic):
        a = np.asarray(pic)
        if a.ndim == 2:
            a = a[:, :, None]
        return torch.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1))).float().div(255)
'''

_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout30.py."""\nfrom . import datasets, '
                               'transforms\n',
    "torchvision/datasets.py": _TV_DATASETS,
    "torchvision/transforms.py": _TV_TRANSFORMS,
}


def _cuda_to_cpu(proj):
    """No GPU here: the torch program's `.cuda()` made `.cpu()` (after the conversion, which saw `.cuda()`)."""
    path = Path(proj) / "502_GPU.py"
    path.write_text(path.read_text().replace(".cuda()", ".cpu()"))


# written beside the torch program after the conversion ({relative path: text}, or a function of the directory)
TORCH_FILES = {name: dict(_TORCHVISION) for name in ("m401_cnn", "m402_rnn_classifier", "m404_autoencoder",
                                                     "m502_gpu")}
TORCH_FILES["m502_gpu"]["502_GPU.py"] = _cuda_to_cpu

# each runs to its end: a budget over its steps (the runner stops a side at the budget's next loss)
LOSSES = {name: budget for name, *_, budget in _PROGRAMS}

# the lines each program prints that must be the same on both sides
PRINTED = {name: r"^(?:TEXT |Epoch: |Ep: ).*$|^.* (?:prediction|real) number$" for name, *_ in _PROGRAMS}
# 502's predictions are tensors (printed as torch's and MindSpore's reprs): its losses, accuracy lines and drawings
PRINTED["m502_gpu"] = r"^(?:TEXT |Epoch: ).*$"

# 201 ends where torch refuses the dot product of 2-D tensors (modern torch; the script's comment expects 30.0):
# the converted runs must stop there too, after the same printed lines
RAISES = {"m201_numpy": r"RuntimeError: 1D tensors expected, but got 2D and 2D tensors",
          # the conditional GAN steps D, then differentiates G's loss through D's graph of before that step: torch
          # (>= 1.5) refuses it (the saved weights were changed in place)
          "m406_cgan": r"RuntimeError: one of the variables needed for gradient computation has been modified by an "
                       r"inplace operation"}
# (the first row of each array: torch's tensors print as torch's repr, continued on the lines below)
PRINTED["m201_numpy"] = r"^(?:numpy:|tensor to array:|numpy array:).*$"
# 501 prints each random sequence length it draws (np.random.randint after the RNN is built)
PRINTED["m501_dynamic"] = r"^\d+$"
