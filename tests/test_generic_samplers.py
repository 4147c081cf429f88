"""torch's samplers are generic (Sampler[int]); timm subclasses `Sampler[List[Tuple[Any, int]]]` on import."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mindspore")

from tests.parity.harness import load_converted, load_torch  # noqa: E402

SRC = '''
from typing import Iterator, List

from torch.utils.data import Sampler
from torch.utils.data.distributed import DistributedSampler


class EveryOther(Sampler[int]):
    def __init__(self, n):
        self.n = n

    def __iter__(self) -> Iterator[int]:
        return iter(range(0, self.n, 2))


def run(sampler: "DistributedSampler[List[int]]" = None):
    return list(EveryOther(7)), DistributedSampler[int] is not None
'''


def test_samplers_are_generic():
    mod, code, sites = load_converted(SRC)
    assert mod.run() == load_torch(SRC)["run"]() == ([0, 2, 4, 6], True)
