"""`fmtstr.format(**self.__dict__)` (msmigrate/format_values.py, format_str): pytorch/examples' imagenet
AverageMeter builds its format string at run time and formats values that are 0-d tensors (accuracy) with a
spec; torch formats them as their numbers, MindSpore's Tensor.__format__ raises TypeError."""
from __future__ import annotations

import numpy as np

from tests.parity.harness import load_converted, load_torch

SRC = """
import torch


class AverageMeter:
    def __init__(self, name, fmt=":f"):
        self.name, self.fmt = name, fmt
        self.val = self.avg = self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        fmtstr = "{name} {val" + self.fmt + "} ({avg" + self.fmt + "}) [{count}]"
        return fmtstr.format(**self.__dict__)


class Greeting:
    def format(self, **kw):
        return "own " + ",".join(sorted(kw))


def fn(x):
    acc = AverageMeter("Acc@1", ":6.2f")
    acc.update(x.sum(), 2)
    acc.update(x.max(), 3)
    own = Greeting()
    return str(acc), own.format(**{"a": 1})
"""


def test_format_of_a_mapping_matches_torch():
    import mindspore as ms
    import torch

    x = np.array([0.25, 1.5, 3.0], np.float32)
    mod, code, _ = load_converted(SRC)
    assert "_ms_compat.format_str(fmtstr, **self.__dict__)" in code, code
    got = mod.fn(ms.Tensor(x))
    assert got == load_torch(SRC)["fn"](torch.from_numpy(x)), got



BUILTIN_SRC = """
import torch


def fn(x):
    loss = x.sum()
    count = (x > 1).sum()
    return format(loss, ".3f"), format(count, "05d"), format(x[0], "+.1e"), format(3.14159, ".1f")
"""


def test_builtin_format_of_a_0d_tensor_matches_torch():
    """`format(loss, ".3f")`: torch formats a 0-d tensor as its number; MindSpore's Tensor.__format__ raised
    TypeError."""
    import mindspore as ms
    import torch

    x = np.array([0.25, 1.5, 3.0], np.float32)
    mod, code, _ = load_converted(BUILTIN_SRC)
    assert 'format(_ms_compat.format_value(loss), ".3f")' in code, code
    got = mod.fn(ms.Tensor(x))
    assert got == load_torch(BUILTIN_SRC)["fn"](torch.from_numpy(x)), got
