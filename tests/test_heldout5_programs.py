"""Constructs found by bench/real_world.py --set heldout5 (bench/_rw_heldout5.py: karpathy/ng-video-lecture,
L1aoXingyu/pytorch-beginner, lucidrains' siren, g-mlp, lambda-networks and CoCa) in programs the converter was
never run on, each reduced to a minimal torch snippet of our own run against its conversion."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .parity.harness import load_converted, load_torch  # noqa: E402

ACCUMULATED_ACCURACY = """
import torch

out = torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
label = torch.tensor([1, 0, 0])
lines = []
running_acc = 0.0
for i in range(1, 3):
    _, pred = torch.max(out * i, 1)
    running_acc += (pred == label).float().mean()
    lines.append(f'Acc: {running_acc / i:.6f}')


def fn(out, label):
    acc = 0
    shown = []
    for i in range(1, 3):
        values, pred = torch.max(out, 1)
        acc += (pred == label).float().mean()
        shown.append(f'{acc / i:.3f} {values.sum():.2f}')
    return shown
"""


def test_accumulated_tensor_formatted_with_a_spec():
    """pytorch-beginner's Logistic_Regression.py / neural_network.py: `running_acc = 0.0`, then
    `running_acc += (pred == label).float().mean()` (a 0-d tensor from then on) and
    `f'{running_acc/i:.6f}'`: MindSpore's Tensor has no __format__ (TypeError: unsupported format string passed
    to Tensor.__format__). The augmented name is a tensor from the `+=` on, at a script's top level (with `pred`
    unpacked from torch.max there) and in a function: the field formats through format_value, as torch's
    0-d tensor formats its number."""
    import mindspore as ms
    import numpy as np
    import torch

    mod, code, _ = load_converted(ACCUMULATED_ACCURACY)
    assert "_ms_compat.format_value(running_acc / i):.6f" in code, code
    assert "_ms_compat.format_value(acc / i):.3f" in code, code
    torch_ns = load_torch(ACCUMULATED_ACCURACY)
    assert mod.lines == torch_ns["lines"] == ["Acc: 0.666667", "Acc: 0.666667"]
    out = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]], np.float32)
    label = np.array([1, 0, 1], np.int64)
    assert mod.fn(ms.Tensor(out), ms.Tensor(label)) == torch_ns["fn"](torch.from_numpy(out),
                                                                        torch.from_numpy(label))

