"""A tuple assignment holding a tensor's device inside compiled code (msmigrate/graph_device_unpacks.py):
`b, *axis, _, device, dtype = *x.shape, x.device, x.dtype` in forward, `device, dtype, orig = x.device,
x.dtype, x` in a module-level helper of forward. MindSpore 2.10's GRAPH mode made the whole tuple a run-time
object and stopped compiling at `astype(dtype)` ("negative dimensions are not allowed", no line named);
split into one assignment per target, values and input gradients match torch in GRAPH and PyNative."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .test_graph_safety import check_graph, rnd  # noqa: E402

SRC = '''
import torch
import torch.nn as nn


def scaled(x, bands):
    device, dtype, orig = x.device, x.dtype, x
    scales = torch.linspace(1.0, 2.0, bands, device=device, dtype=dtype)
    return (orig.unsqueeze(-1) * scales).flatten(-2)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        b, *axis, _, device, dtype = *x.shape, x.device, x.dtype
        pos = torch.stack(torch.meshgrid(*[torch.linspace(-1.0, 1.0, n, device=device, dtype=dtype)
                                           for n in axis], indexing="ij"), dim=-1)
        h = torch.cat((x, pos.unsqueeze(0).expand(b, *pos.shape)), dim=-1)
        return self.fc(scaled(h, 2)).sum((1, 2))


def make():
    return Net()
'''


def test_device_in_a_tuple_assignment_compiles_in_graph():
    code, _ = check_graph(SRC, rnd(2, 3, 2, 1), (2, 3))
    for form in ("b, *axis, _ = x.shape; device = _ms_compat.device_of(x); dtype = x.dtype",
                 "device = _ms_compat.device_of(x); dtype = x.dtype; orig = x"):
        assert form in code, (form, code)
