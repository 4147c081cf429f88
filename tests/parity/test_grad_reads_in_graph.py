"""`buf.grad` read in a forward (vector-quantize's `ema_inplace`: `if exists(old.grad): new.add_(old.grad)` on a
buffer): PyNative reads torch's answer (None for a buffer, _ms_compat.tensor_grad); inside a compiled graph
neither the kept gradients nor a Parameter's flag can be read, and the MigrationError raised while the graph
ran reached the user as MindSpore's "Unsupported exception type". Compiling now stops with MigrationError
naming the original line."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import assert_close, load_converted, load_torch  # noqa: E402

SRC = '''
import torch
from torch import nn


class Ema(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("avg", torch.zeros(3))

    def forward(self, x):
        new = x.mean(0)
        if self.avg.grad is not None:
            new = new + self.avg.grad
        return x * 2 + self.avg * 0.9 + new * 0.1
'''


def test_a_buffers_grad_read_in_forward():
    import torch
    x = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3)
    want = load_torch(SRC)["Ema"]()(torch.from_numpy(x)).numpy()
    mod, code, _ = load_converted(SRC)
    assert "_ms_compat.tensor_grad(self.avg" in code, code
    assert_close(mod.Ema()(ms.Tensor(x)), want, what="PyNative")
    line = SRC.splitlines().index("        if self.avg.grad is not None:") + 1
    with pytest.raises(Exception) as err:
        ms.jit(mod.Ema())(ms.Tensor(x))
    assert type(err.value).__name__ == "MigrationError", err.value
    assert f":{line}" in str(err.value) and "inside a compiled graph" in str(err.value), err.value
