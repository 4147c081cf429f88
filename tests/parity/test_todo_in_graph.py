"""A TODO reached in a forward compiled as a graph (GRAPH mode, ms.jit, the converted train step): the
placeholder's `raise MigrationError` was parsed by MindSpore's graph compiler, which raises only Python's own
exception types, so the program stopped with "RuntimeError: Unsupported exception type: MigrationError" and not
the MigrationError naming the original line. The placeholder now raises through a constexpr, in Python while
the graph compiles (templates/_ms_compat.py, _raise_migration_error)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import load_converted  # noqa: E402

SRC = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        y = self.fc(x)
        return torch.frobnicate(y) * 2
'''


@pytest.mark.parametrize("mode", ["pynative", "jit", "graph_mode"])
def test_a_todo_reached_in_a_compiled_forward_raises_migration_error(mode):
    mod, code, _ = load_converted(SRC)
    assert "msmigrate: TODO torch.frobnicate" in code, code
    line = SRC.splitlines().index("        return torch.frobnicate(y) * 2") + 1
    x = ms.Tensor(np.ones((2, 3), np.float32))
    net = mod.Net()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph_mode" else ms.PYNATIVE_MODE)
    try:
        with pytest.raises(Exception) as err:
            (ms.jit(net) if mode == "jit" else net)(x)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert type(err.value).__name__ == "MigrationError", err.value
    assert f"torch.frobnicate at " in str(err.value) and f":{line} " in str(err.value), err.value
