"""A placeholder for an unconverted torch API held in a table built on import (timm's create_norm:
`_NORM_TYPES = {m for n, m in _NORM_MAP.items()}` with torchvision's FrozenBatchNorm2d among them): the module
imports, membership answers by identity as the torch class did, and using the entry raises MigrationError."""
from __future__ import annotations

import pytest

pytest.importorskip("mindspore")

from tests.parity.harness import load_converted  # noqa: E402

SRC = '''
import torch.nn as nn
from torchvision.ops.misc import FrozenBatchNorm2d

_NORM_MAP = dict(batchnorm=nn.BatchNorm2d, frozenbatchnorm2d=FrozenBatchNorm2d)
_NORM_TYPES = {m for n, m in _NORM_MAP.items()}
_BY_CLASS = {m: n for n, m in _NORM_MAP.items()}


def known(name):
    layer = _NORM_MAP[name]
    return layer in _NORM_TYPES, _BY_CLASS[layer]


def build(name):
    return _NORM_MAP[name](4)
'''


def test_placeholder_in_a_set_on_import():
    import sys
    mod, code, sites = load_converted(SRC)
    assert "Unconverted('torchvision.ops.misc.FrozenBatchNorm2d'" in code
    assert mod.known("frozenbatchnorm2d") == (True, "frozenbatchnorm2d")
    assert mod.known("batchnorm") == (True, "batchnorm")
    with pytest.raises(sys.modules["_ms_compat"].MigrationError, match="FrozenBatchNorm2d"):
        mod.build("frozenbatchnorm2d")
