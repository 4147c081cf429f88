"""`cls.forward` in __init_subclass__ and `type(self).forward` in a torch module class name the converted
class's construct (transformers' GradientCheckpointingLayer wraps each subclass's forward so)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from tests.parity.harness import _to_ms, load_converted, load_torch  # noqa: E402

SRC = '''
from functools import wraps

import torch
import torch.nn as nn

CALLS = []


class WrappedLayer(nn.Module):
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        forward = cls.forward

        @wraps(forward)
        def forward_wrapped(self, *args, **kwargs):
            CALLS.append(type(self).forward is forward_wrapped)
            return forward(self, *args, **kwargs)

        cls.forward = forward_wrapped


class Double(WrappedLayer):
    def forward(self, x):
        return x * 2.0


def run(x):
    del CALLS[:]
    return Double()(x), list(CALLS)
'''


def test_forward_wrapped_in_init_subclass():
    mod, code, sites = load_converted(SRC)
    assert "cls.construct = forward_wrapped" in code and "type(self).construct is forward_wrapped" in code
    x = np.arange(4, dtype=np.float32)
    import torch
    want, want_calls = load_torch(SRC)["run"](torch.tensor(x))
    got, calls = mod.run(_to_ms(x))
    np.testing.assert_allclose(got.asnumpy(), want.numpy())
    assert calls == want_calls == [True]
