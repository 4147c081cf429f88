"""torch Dataset subclasses become plain classes that MindSpore's GeneratorDataset
reads; the same samples come out in the same order."""
import numpy as np

from tests.parity.harness import load_converted, load_torch

SRC = '''
import numpy as np
import torch
from torch.utils.data import Dataset, IterableDataset
from typing import TypeVar

T = TypeVar("T")


class Squares(Dataset[T]):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return np.array([i, i * i], dtype=np.float32)


class Stream(IterableDataset):
    def __iter__(self):
        for i in range(3):
            yield np.array([i], dtype=np.int64)
'''


def test_dataset_base():
    import mindspore.dataset as ds

    t = load_torch(SRC)
    mod, code, sites = load_converted(SRC)
    assert "class Squares(object):" in code and "class Stream(object):" in code
    assert {s.api: s.status for s in sites}["torch.utils.data.Dataset"] == "converted-with-difference"
    torch_items = [t["Squares"](5)[i] for i in range(5)]
    pipe = ds.GeneratorDataset(mod.Squares(5), column_names=["x"], shuffle=False)
    ms_items = [row[0].asnumpy() for row in pipe.create_tuple_iterator()]
    np.testing.assert_array_equal(np.stack(ms_items), np.stack(torch_items))
    stream = ds.GeneratorDataset(mod.Stream(), column_names=["x"], shuffle=False)
    assert [int(r[0].asnumpy()[0]) for r in stream.create_tuple_iterator()] == [int(a[0]) for a in t["Stream"]()]
