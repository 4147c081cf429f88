"""Data loading parity: torch.utils.data, torchvision.transforms and torchvision.datasets
against their msmigrate conversions (_ms_compat.DataLoader, _ms_compat.transforms.*,
_ms_compat.datasets.*), on the same inputs and the same files on disk.

torchvision is imported through bench/data_speed.py's import_torchvision(): the wheel
on the package index is a CUDA build whose C++ ops cannot load next to torch's CPU build."""
import collections
import gzip
import itertools
import os
import pickle

import numpy as np
import pytest
from PIL import Image

from bench.data_speed import allow_synthetic_cifar, import_torchvision, write_cifar10
from tests.parity.harness import load_converted, load_torch, site_statuses

tv = import_torchvision()


def _np(x):
    """torch tensor / mindspore Tensor / PIL image / array -> NumPy array."""
    if hasattr(x, "detach"):
        return x.detach().numpy()
    if hasattr(x, "asnumpy"):
        return x.asnumpy()
    return np.asarray(x)


def _kind(x):
    if isinstance(x, Image.Image):
        return "pil:" + x.mode
    if hasattr(x, "detach") or hasattr(x, "asnumpy"):
        return "tensor"
    return type(x).__name__


def _same(ours, theirs, atol=0.0, what=""):
    assert _kind(ours) == _kind(theirs), f"{what}: {_kind(ours)} vs torch {_kind(theirs)}"
    a, b = _np(ours), _np(theirs)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs torch {b.shape}"
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} vs torch {b.dtype}"
    if atol:
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), atol=atol, rtol=0, err_msg=what)
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


def _same_batch(ours, theirs, what="batch"):
    """Same nested structure (lists, dicts, namedtuples), same values and dtypes."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and list(ours) == list(theirs), what
        for k in theirs:
            _same_batch(ours[k], theirs[k], f"{what}[{k!r}]")
    elif isinstance(theirs, (list, tuple)) and not hasattr(theirs, "detach"):
        assert type(ours).__name__ == type(theirs).__name__, f"{what}: {type(ours)} vs torch {type(theirs)}"
        assert len(ours) == len(theirs), what
        for i, (o, t) in enumerate(zip(ours, theirs)):
            _same_batch(o, t, f"{what}[{i}]")
    elif hasattr(theirs, "detach"):
        assert hasattr(ours, "asnumpy"), f"{what}: {type(ours)} is not a mindspore Tensor"
        _same(ours, theirs, what=what)
    else:
        assert ours == theirs, what


def _rgb(h=37, w=50, seed=0):
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8))


def _gray(h=37, w=50, seed=1):
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, (h, w), dtype=np.uint8))


# ====================================================================== DataLoader
LOADER_SRC = '''
import torch
from torch.utils.data import DataLoader, TensorDataset, Subset


class Doubled(TensorDataset):
    def __getitem__(self, i):
        x, y = super().__getitem__(i)
        return x * 2, y


def make(x, y, **kw):
    return DataLoader(TensorDataset(x, y), **kw)


def make_subset(x, y, idx, **kw):
    return DataLoader(Subset(TensorDataset(x, y), idx), **kw)


def make_doubled(x, y, **kw):
    return DataLoader(Doubled(x, y), **kw)
'''


def test_loader_tensor_dataset():
    import mindspore as ms
    import torch

    t = load_torch(LOADER_SRC)
    mod, code, sites = load_converted(LOADER_SRC)
    assert "_ms_compat.DataLoader(" in code and "_ms_compat.TensorDataset(" in code
    assert site_statuses(sites)["torch.utils.data.DataLoader"] == "converted"
    rng = np.random.default_rng(0)
    x = rng.standard_normal((37, 3, 4)).astype(np.float32)
    y = rng.integers(0, 10, 37)
    tx, ty, mx, my = torch.from_numpy(x), torch.from_numpy(y), ms.Tensor(x), ms.Tensor(y)
    for kw in ({"batch_size": 8}, {"batch_size": 8, "drop_last": True}, {"batch_size": 1}, {"batch_size": 40}):
        t_loader, m_loader = t["make"](tx, ty, **kw), mod.make(mx, my, **kw)
        assert len(m_loader) == len(t_loader), kw
        t_batches, m_batches = list(t_loader), list(m_loader)
        assert len(m_batches) == len(t_batches) == len(t_loader)
        for mb, tb in zip(m_batches, t_batches):
            _same_batch(mb, tb, f"batch {kw}")
    # a Subset of a TensorDataset (vectorised too) and a subclass that overrides __getitem__
    idx = [5, 3, 30, 0, 7, 7]
    _same_batch(list(mod.make_subset(mx, my, idx, batch_size=4)), list(t["make_subset"](tx, ty, idx, batch_size=4)))
    _same_batch(list(mod.make_doubled(mx, my, batch_size=5)), list(t["make_doubled"](tx, ty, batch_size=5)))
    # shuffle: every sample once per epoch, a new order each epoch, reproducible from the seed
    loader = mod.make(mx, my, batch_size=8, shuffle=True)
    ms.set_seed(1)
    e1 = np.concatenate([b[1].asnumpy() for b in loader])
    e2 = np.concatenate([b[1].asnumpy() for b in loader])
    ms.set_seed(1)
    e1_again = np.concatenate([b[1].asnumpy() for b in loader])
    assert sorted(e1.tolist()) == sorted(y.tolist()) == sorted(e2.tolist())
    assert not np.array_equal(e1, e2) and np.array_equal(e1, e1_again)
    xs = np.concatenate([b[0].asnumpy() for b in loader])
    assert sorted(map(tuple, xs.reshape(37, -1).tolist())) == sorted(map(tuple, x.reshape(37, -1).tolist()))
    # generator= (torch.Generator().manual_seed(s) becomes mindspore.Generator().manual_seed(s))
    orders = [np.concatenate([b[1].asnumpy() for b in mod.make(mx, my, batch_size=8, shuffle=True,
                                                                generator=ms.Generator().manual_seed(3))])
              for _ in range(2)]
    assert np.array_equal(orders[0], orders[1])


COLLATE_SRC = '''
import collections
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, default_collate
from torch.utils.data.dataloader import default_collate as dc2

Point = collections.namedtuple("Point", ["x", "y"])


class Mixed(Dataset):
    def __len__(self):
        return 7

    def __getitem__(self, i):
        return {"img": np.full((2, 3), i, np.float32), "label": i, "w": i / 2, "flag": i % 2 == 0,
                "name": f"s{i}", "pair": (np.int64(i), [1.5 * i, np.float32(i)]), "pt": Point(i, 2.0 * i),
                "t": torch.tensor([i, i + 1])}


def loader(**kw):
    return DataLoader(Mixed(), **kw)


def collate_direct(samples):
    return default_collate(samples), dc2(samples)
'''


def test_default_collate_structures():
    t = load_torch(COLLATE_SRC)
    mod, code, _ = load_converted(COLLATE_SRC)
    for kw in ({"batch_size": 3}, {"batch_size": 3, "drop_last": True}):
        t_batches, m_batches = list(t["loader"](**kw)), list(mod.loader(**kw))
        assert len(t_batches) == len(m_batches)
        for mb, tb in zip(m_batches, t_batches):
            assert type(mb["pt"]).__name__ == "Point"
            _same_batch(mb, tb)
    # dtypes as torch: Python float -> float64, int -> int64, bool -> bool
    b = next(iter(mod.loader(batch_size=2)))
    assert str(b["w"].dtype) == "Float64" and str(b["label"].dtype) == "Int64" and str(b["flag"].dtype) == "Bool"
    samples = [mod.Mixed()[i] for i in range(3)]
    t_samples = [t["Mixed"]()[i] for i in range(3)]
    for ours, theirs in zip(mod.collate_direct(samples), t["collate_direct"](t_samples)):
        _same_batch(ours, theirs)
    # batch_size=None: samples one by one, arrays made tensors (default_convert)
    t_one, m_one = next(iter(t["loader"](batch_size=None))), next(iter(mod.loader(batch_size=None)))
    _same_batch(m_one["img"], t_one["img"])
    assert m_one["label"] == t_one["label"] == 0 and m_one["name"] == "s0"
    with pytest.raises(TypeError, match="default_collate"):
        import _ms_compat
        _ms_compat.default_collate([np.array(["a"]), np.array(["b"])])


SAMPLER_SRC = '''
import torch
from torch.utils.data import (DataLoader, TensorDataset, SequentialSampler, RandomSampler, SubsetRandomSampler,
                              WeightedRandomSampler, BatchSampler)
from torch.utils.data.sampler import Sampler


class EveryOther(Sampler):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def __iter__(self):
        return iter(range(0, self.n, 2))

    def __len__(self):
        return (self.n + 1) // 2


def samplers(n):
    return {
        "seq": SequentialSampler(range(n)),
        "rand": RandomSampler(range(n)),
        "rand_repl": RandomSampler(range(n), replacement=True, num_samples=25),
        "rand_more": RandomSampler(range(n), num_samples=2 * n + 3),
        "subset": SubsetRandomSampler([3, 5, 7, 9]),
        "weighted": WeightedRandomSampler([0.0, 1.0, 3.0], 4000),
        "weighted_norepl": WeightedRandomSampler([0.0, 1.0, 3.0, 1.0], 3, replacement=False),
        "batch": BatchSampler(SequentialSampler(range(n)), batch_size=3, drop_last=False),
        "batch_drop": BatchSampler(SequentialSampler(range(n)), 3, True),
        "every_other": EveryOther(n),
    }


def loaders(x):
    ds = TensorDataset(x)
    return {
        "batch_sampler": DataLoader(ds, batch_sampler=BatchSampler(EveryOther(len(ds)), 2, False)),
        "sampler": DataLoader(ds, batch_size=3, sampler=EveryOther(len(ds))),
        "collate": DataLoader(ds, batch_size=4, collate_fn=lambda b: len(b)),
    }


def bad(x):
    return DataLoader(TensorDataset(x), sampler=SequentialSampler(x), shuffle=True)
'''


def test_samplers():
    import mindspore as ms
    import torch

    t = load_torch(SAMPLER_SRC)
    mod, code, sites = load_converted(SAMPLER_SRC)
    assert "class EveryOther(_ms_compat.Sampler):" in code
    n = 10
    ts, ms_ = t["samplers"](n), mod.samplers(n)
    for name in ("seq", "batch", "batch_drop", "every_other"):
        assert list(ms_[name]) == list(ts[name]), name
    for name in ts:
        assert len(ms_[name]) == len(ts[name]), name
    assert sorted(ms_["rand"]) == list(range(n))
    assert len(list(ms_["rand_repl"])) == 25 and set(ms_["rand_repl"]) <= set(range(n))
    more = list(ms_["rand_more"])
    assert len(more) == 23 and sorted(more[:10]) == sorted(more[10:20]) == list(range(n))
    assert sorted(ms_["subset"]) == [3, 5, 7, 9]
    counts = np.bincount(list(ms_["weighted"]), minlength=3)
    assert counts[0] == 0 and 2.6 < counts[2] / counts[1] < 3.4
    norepl = list(ms_["weighted_norepl"])
    assert len(set(norepl)) == 3 and 0 not in norepl
    x = np.arange(11, dtype=np.float32)
    tl, ml = t["loaders"](torch.from_numpy(x)), mod.loaders(ms.Tensor(x))
    for name in tl:
        assert len(ml[name]) == len(tl[name]), name
        _same_batch(list(ml[name]), list(tl[name]), name)
    for fn in (t["bad"], mod.bad):
        with pytest.raises(ValueError, match="mutually exclusive"):
            fn(torch.from_numpy(x) if fn is t["bad"] else ms.Tensor(x))


SPLIT_SRC = '''
import torch
from torch.utils.data import TensorDataset, ConcatDataset, Subset, random_split


def split(x, lengths, seed):
    return random_split(TensorDataset(x), lengths, generator=torch.Generator().manual_seed(seed))


def split_global(x, lengths):
    return random_split(TensorDataset(x), lengths)


def concat(a, b):
    return ConcatDataset([TensorDataset(a), TensorDataset(b), Subset(TensorDataset(a), [2, 0])])
'''


def test_random_split_subset_concat():
    import mindspore as ms
    import torch

    t = load_torch(SPLIT_SRC)
    mod, code, sites = load_converted(SPLIT_SRC)
    assert "generator=ms.Generator().manual_seed(" in code
    x = np.arange(11, dtype=np.float32)
    for lengths in ([3, 8], [0.8, 0.2], [0.5, 0.3, 0.2], [0.34, 0.33, 0.33]):
        parts = mod.split(ms.Tensor(x), lengths, 42)
        t_parts = t["split"](torch.from_numpy(x), lengths, 42)
        assert [len(p) for p in parts] == [len(p) for p in t_parts], lengths
        values = [float(p[i][0].asnumpy()) for p in parts for i in range(len(p))]
        assert sorted(values) == x.tolist()                      # disjoint, complete
        again = mod.split(ms.Tensor(x), lengths, 42)
        assert [p.indices for p in again] == [p.indices for p in parts]   # the seed decides
    seeds = [[p.indices for p in mod.split(ms.Tensor(x), [3, 8], seed)] for seed in (1, 2)]
    assert seeds[0] != seeds[1]
    ms.set_seed(5)
    a = [p.indices for p in mod.split_global(ms.Tensor(x), [5, 6])]
    ms.set_seed(5)
    assert a == [p.indices for p in mod.split_global(ms.Tensor(x), [5, 6])]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        mod.split(ms.Tensor(x), [3, 3], 0)
    a_np, b_np = np.arange(4, dtype=np.float32), np.arange(10, 13, dtype=np.float32)
    c, tc = mod.concat(ms.Tensor(a_np), ms.Tensor(b_np)), t["concat"](torch.from_numpy(a_np), torch.from_numpy(b_np))
    assert len(c) == len(tc) == 9 and c.cumulative_sizes == tc.cumulative_sizes
    for i in list(range(9)) + [-1, -9]:
        _same_batch(list(c[i]), list(tc[i]), f"concat[{i}]")


WORKER_SRC = '''
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info


class Slow(Dataset):
    def __init__(self, n, fail_at=None):
        self.n, self.fail_at = n, fail_at

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise ValueError(f"bad sample {i}")
        info = get_worker_info()
        return np.full((2,), i, np.float32), i, -1 if info is None else info.id, np.random.random()


def loader(n, workers, fail_at=None, **kw):
    return DataLoader(Slow(n, fail_at), batch_size=4, num_workers=workers, **kw)
'''


def test_loader_workers():
    mod, code, _ = load_converted(WORKER_SRC)
    assert "_ms_compat.get_worker_info()" in code
    single, multi = list(mod.loader(22, 0)), list(mod.loader(22, 2))
    assert len(single) == len(multi) == len(mod.loader(22, 2)) == 6
    for s, m in zip(single, multi):
        np.testing.assert_array_equal(s[0].asnumpy(), m[0].asnumpy())   # same batches, same order
        np.testing.assert_array_equal(s[1].asnumpy(), m[1].asnumpy())
    assert set(np.concatenate([b[2].asnumpy() for b in single]).tolist()) == {-1}
    assert set(np.concatenate([b[2].asnumpy() for b in multi]).tolist()) == {0, 1}
    # each worker has its own random stream (torch reseeds workers too)
    draws = [b[3].asnumpy() for b in multi]
    assert not np.allclose(draws[0], draws[1])
    # shuffled with workers: still every sample once
    labels = np.concatenate([b[1].asnumpy() for b in mod.loader(22, 2, shuffle=True)])
    assert sorted(labels.tolist()) == list(range(22))
    # worker_init_fn runs in each worker
    seen = list(mod.loader(8, 2, worker_init_fn=lambda wid: np.random.seed(100 + wid)))
    assert len(seen) == 2
    with pytest.raises(ValueError, match="Caught ValueError in DataLoader worker process"):
        list(mod.loader(22, 2, fail_at=9))


ITER_SRC = '''
import torch
from torch.utils.data import DataLoader, IterableDataset


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        for i in range(self.n):
            yield torch.tensor([i, 2 * i]), i

    def __len__(self):
        return self.n


def loader(n, **kw):
    return DataLoader(Stream(n), **kw)
'''


def test_iterable_dataset_loader():
    t = load_torch(ITER_SRC)
    mod, code, _ = load_converted(ITER_SRC)
    for kw in ({"batch_size": 4}, {"batch_size": 4, "drop_last": True}, {"batch_size": None}):
        tl, ml = t["loader"](10, **kw), mod.loader(10, **kw)
        assert len(ml) == len(tl), kw
        _same_batch(list(ml), list(tl), str(kw))
    with pytest.raises(ValueError, match="shuffle"):
        mod.loader(10, batch_size=2, shuffle=True)


def test_to_dataset():
    import mindspore as ms
    from mindspore import nn
    from mindspore.train import Model

    mod, _, _ = load_converted(LOADER_SRC)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((20, 4)).astype(np.float32)
    y = rng.integers(0, 3, 20).astype(np.int32)
    loader = mod.make(ms.Tensor(x), ms.Tensor(y), batch_size=8)
    pipe = loader.to_dataset(["x", "y"])
    assert pipe.get_dataset_size() == len(loader) == 3
    rows = list(pipe.create_tuple_iterator(num_epochs=1, output_numpy=True))
    for (rx, ry), (bx, by) in zip(rows, loader):
        np.testing.assert_array_equal(rx, bx.asnumpy())
        np.testing.assert_array_equal(ry, by.asnumpy())
    assert mod.make(ms.Tensor(x), ms.Tensor(y), batch_size=8).to_dataset().get_col_names() == ["column_0", "column_1"]
    net = nn.Dense(4, 3)
    model = Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.1))
    before = net.weight.asnumpy().copy()
    model.train(2, mod.make(ms.Tensor(x), ms.Tensor(y), batch_size=8, shuffle=True).to_dataset(),
                dataset_sink_mode=False)
    assert not np.allclose(before, net.weight.asnumpy())


# ====================================================================== transforms
TRANSFORM_SRC = '''
import torch
import torchvision
import torchvision.transforms as T
from torchvision.transforms import v2
from torchvision.transforms import InterpolationMode


def pil_transforms():
    return {
        "to_tensor": T.ToTensor(),
        "pil_to_tensor": T.PILToTensor(),
        "center_crop": T.CenterCrop(20),
        "center_crop_hw": T.CenterCrop((21, 30)),
        "center_crop_big": T.CenterCrop(60),
        "pad": T.Pad(3),
        "pad2": T.Pad((2, 5), fill=7),
        "pad4_reflect": T.Pad((1, 2, 3, 4), padding_mode="reflect"),
        "pad_edge": T.Pad(2, padding_mode="edge"),
        "pad_symmetric": T.Pad(padding=2, padding_mode="symmetric"),
        "gray": T.Grayscale(),
        "gray3": T.Grayscale(num_output_channels=3),
        "lambda": T.Lambda(lambda img: img.crop((1, 2, 20, 30))),
        "compose": T.Compose([T.Resize(40), T.CenterCrop(32), T.ToTensor()]),
        "v2_image": v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)]),
        "v2_image_noscale": v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32)]),
        "v2_pad_crop": v2.Compose([v2.Pad(4), v2.CenterCrop(16), v2.Grayscale(3), v2.PILToTensor()]),
        "convert_dtype": T.Compose([T.PILToTensor(), T.ConvertImageDtype(torch.float32)]),
        "torchvision_dotted": torchvision.transforms.Compose([torchvision.transforms.ToTensor()]),
    }


def rgb_tensor_transforms():
    return {
        "normalize": T.Normalize(mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3)),
        "normalize_v2": v2.Normalize([0.5, 0.4, 0.3], [0.2, 0.25, 0.3]),
        "center_crop": T.CenterCrop(20),
        "center_crop_big": T.CenterCrop((40, 61)),
        "pad": T.Pad((1, 2, 3, 4), fill=0.5),
        "pad_reflect": T.Pad(3, padding_mode="reflect"),
        "pad_edge": T.Pad((2, 1), padding_mode="edge"),
        "pad_symmetric": T.Pad(2, padding_mode="symmetric"),
        "gray": T.Grayscale(),
        "gray3": T.Grayscale(3),
        "to_uint8": T.ConvertImageDtype(torch.uint8),
        "to_float64": T.ConvertImageDtype(torch.float64),
        "to_pil": T.ToPILImage(),
    }


def uint8_tensor_transforms():
    return {
        "to_float": T.ConvertImageDtype(torch.float32),
        "to_int16": T.ConvertImageDtype(torch.int16),
        "v2_float": v2.ToDtype(torch.float32, scale=True),
        "to_pil": T.ToPILImage(),
        "gray": T.Grayscale(),
        "center_crop": T.CenterCrop(30),
    }
'''


def _check_transforms(ours, theirs, inputs, atol=0.0):
    assert ours.keys() == theirs.keys()
    for name in theirs:
        for label, (m_in, t_in) in inputs.items():
            _same(ours[name](m_in), theirs[name](t_in), atol, f"{name} on {label}")


def test_transforms_deterministic():
    import mindspore as ms
    import torch

    t = load_torch(TRANSFORM_SRC)
    mod, code, sites = load_converted(TRANSFORM_SRC)
    assert "torchvision." not in code and "import torchvision" not in code
    assert all(s.status != "todo" for s in sites), [s.api for s in sites if s.status == "todo"]
    pil_inputs = {"rgb": (_rgb(), _rgb()), "gray": (_gray(), _gray())}
    ours, theirs = mod.pil_transforms(), t["pil_transforms"]()
    for name in list(theirs):
        if name in ("convert_dtype",):
            continue
        for label, (m_in, t_in) in pil_inputs.items():
            _same(ours[name](m_in), theirs[name](t_in), what=f"{name} on {label}")
    _same(ours["convert_dtype"](_rgb()), theirs["convert_dtype"](_rgb()), atol=0, what="convert_dtype")
    # tensors (what ToTensor returns): mindspore Tensors on our side, torch tensors on theirs
    chw = np.random.default_rng(2).random((3, 37, 50)).astype(np.float32)
    _check_transforms(mod.rgb_tensor_transforms(), t["rgb_tensor_transforms"](),
                      {"float CHW": (ms.Tensor(chw), torch.from_numpy(chw))})
    u8 = np.random.default_rng(3).integers(0, 256, (3, 37, 50), dtype=np.uint8)
    u8_1 = u8[:1].copy()
    _check_transforms(mod.uint8_tensor_transforms(), t["uint8_tensor_transforms"](),
                      {"uint8 CHW": (ms.Tensor(u8), torch.from_numpy(u8)),
                       "uint8 1HW": (ms.Tensor(u8_1), torch.from_numpy(u8_1))})
    # NumPy HWC arrays into ToTensor (uint8 scaled, other dtypes kept)
    to_tensor, t_to_tensor = mod.pil_transforms()["to_tensor"], t["pil_transforms"]()["to_tensor"]
    for arr in (np.asarray(_rgb()), np.asarray(_gray()), np.asarray(_rgb()).astype(np.float32)):
        _same(to_tensor(arr), t_to_tensor(arr.copy()), what=f"ToTensor on ndarray {arr.dtype} {arr.shape}")
    with pytest.raises(TypeError, match="float tensor"):
        mod.rgb_tensor_transforms()["normalize"](ms.Tensor(u8))


RESIZE_SRC = '''
import torchvision.transforms as T
from torchvision.transforms import v2, InterpolationMode
from torchvision.transforms.functional import InterpolationMode as IM


def resizes():
    return {
        "int": T.Resize(20),
        "int_up": T.Resize(64),
        "hw": T.Resize((16, 24)),
        "list1": T.Resize([30]),
        "max_size": T.Resize(20, max_size=25),
        "nearest": T.Resize((16, 24), interpolation=InterpolationMode.NEAREST),
        "nearest_exact": T.Resize((16, 24), interpolation=InterpolationMode.NEAREST_EXACT),
        "bicubic": T.Resize((16, 24), IM.BICUBIC),
        "bicubic_up": T.Resize((50, 70), T.InterpolationMode.BICUBIC),
        "box": T.Resize((16, 24), InterpolationMode.BOX),
        "lanczos": T.Resize((16, 24), InterpolationMode.LANCZOS),
        "v2": v2.Resize(size=(16, 24), interpolation=v2.InterpolationMode.BILINEAR, antialias=True),
        "same_size": T.Resize((37, 50)),
    }
'''


def test_transforms_resize():
    import mindspore as ms
    import torch

    t = load_torch(RESIZE_SRC)
    mod, code, sites = load_converted(RESIZE_SRC)
    assert "_ms_compat.transforms.InterpolationMode.NEAREST" in code
    ours, theirs = mod.resizes(), t["resizes"]()
    for name in theirs:
        for label, img in (("rgb", _rgb()), ("gray", _gray()), ("rgb tall", _rgb(50, 37))):
            _same(ours[name](img), theirs[name](img.copy()), what=f"Resize {name} on PIL {label}")
    # tensors: torchvision's antialiased tensor resize vs PIL's, channel by channel
    chw = np.random.default_rng(4).random((3, 37, 50)).astype(np.float32)
    u8 = np.random.default_rng(5).integers(0, 256, (3, 37, 50), dtype=np.uint8)
    for name in ("int", "int_up", "hw", "max_size", "nearest", "nearest_exact", "v2", "same_size", "bicubic_up"):
        atol = 0 if name.startswith(("nearest", "same")) else 5e-6
        _same(ours[name](ms.Tensor(chw)), theirs[name](torch.from_numpy(chw)), atol, f"Resize {name} float tensor")
        _same(ours[name](ms.Tensor(u8)), theirs[name](torch.from_numpy(u8)), 0 if atol == 0 else 1,
              f"Resize {name} uint8 tensor")


RANDOM_SRC = '''
import torch
import torchvision.transforms as T
from torchvision.transforms import v2


def fixed():
    return {
        "hflip": T.RandomHorizontalFlip(p=1.0),
        "hflip0": T.RandomHorizontalFlip(0.0),
        "vflip": T.RandomVerticalFlip(p=1),
        "vflip0": v2.RandomVerticalFlip(p=0),
        "crop_full": T.RandomCrop((37, 50)),
        "rrc_full": T.RandomResizedCrop(24, scale=(1.0, 1.0), ratio=(50 / 37, 50 / 37)),
        "apply1": T.RandomApply([T.Grayscale(3)], p=1.0),
        "apply0": T.RandomApply([T.Grayscale(3)], p=0.0),
        "gray1": T.RandomGrayscale(p=1.0),
    }


def joint_crop(img, mask):
    i, j, h, w = T.RandomCrop.get_params(img, output_size=(20, 30))
    a, b, c, d = T.RandomResizedCrop.get_params(img, scale=(0.5, 1.0), ratio=(0.75, 1.33))
    order, bright, contrast, sat, hue = T.ColorJitter.get_params((0.5, 1.5), None, (1.0, 1.0), None)
    return (i, j, h, w), (a, b, c, d), sorted(int(k) for k in order), (contrast, hue), \
        T.functional.crop(img, i, j, h, w), T.functional.crop(mask, i, j, h, w)


def random_ones():
    return {
        "crop_pad": T.RandomCrop(32, padding=4),
        "crop_pad_if_needed": T.RandomCrop(60, pad_if_needed=True, fill=9),
        "crop_v2": v2.RandomCrop(size=(20, 30), padding=(2, 3), padding_mode="reflect"),
        "rrc": T.RandomResizedCrop(24),
        "rrc_v2": v2.RandomResizedCrop((20, 28), scale=(0.2, 0.9), antialias=True),
        "hflip": T.RandomHorizontalFlip(),
    }
'''


def _windows(padded, size):
    """All size windows of an HW(C) array, by (top, left)."""
    h, w = size
    return {(i, j): padded[i:i + h, j:j + w] for i in range(padded.shape[0] - h + 1)
            for j in range(padded.shape[1] - w + 1)}


def _which_window(out, padded):
    hits = [k for k, win in _windows(padded, out.shape[:2]).items() if np.array_equal(win, out)]
    assert hits, "the crop is no window of the padded image"
    return hits[0]


def test_transforms_random():
    import mindspore as ms
    import torch
    from torchvision.transforms import functional as TF

    t = load_torch(RANDOM_SRC)
    mod, code, sites = load_converted(RANDOM_SRC)
    statuses = site_statuses(sites)
    assert statuses["torchvision.transforms.RandomCrop"] == "converted-with-difference"
    ours, theirs = mod.fixed(), t["fixed"]()
    chw = np.random.default_rng(6).random((3, 37, 50)).astype(np.float32)
    for name in theirs:
        for label, (m_in, t_in) in {"rgb": (_rgb(), _rgb()), "gray": (_gray(), _gray()),
                                    "tensor": (ms.Tensor(chw), torch.from_numpy(chw))}.items():
            if name == "rrc_full" and label == "tensor":
                _same(ours[name](m_in), theirs[name](t_in), 5e-6, f"{name} on {label}")
                continue
            _same(ours[name](m_in), theirs[name](t_in), what=f"{name} on {label}")
    rnd = mod.random_ones()
    ms.set_seed(0)
    # RandomCrop(32, padding=4): a window of the zero-padded image, offsets spread uniformly
    img32 = _rgb(32, 32, seed=7)
    padded = np.asarray(TF.pad(img32, 4))
    offsets = [_which_window(np.asarray(rnd["crop_pad"](img32)), padded) for _ in range(300)]
    assert len(set(offsets)) > 50 and 2.5 < np.mean([o[0] for o in offsets]) < 5.5
    padded = np.asarray(TF.pad(TF.pad(_rgb(), (10, 0), fill=9), (0, 23), fill=9))
    for _ in range(5):
        _which_window(np.asarray(rnd["crop_pad_if_needed"](_rgb())), padded)
    out = rnd["crop_v2"](ms.Tensor(chw))
    assert tuple(out.shape) == (3, 20, 30)
    padded = np.pad(chw, ((0, 0), (3, 3), (2, 2)), mode="reflect").transpose(1, 2, 0)
    _which_window(out.asnumpy().transpose(1, 2, 0), padded)
    for name, shape in (("rrc", (24, 24)), ("rrc_v2", (20, 28))):
        assert rnd[name](_rgb()).size == shape[::-1]
        assert tuple(rnd[name](ms.Tensor(chw)).shape) == (3,) + shape
    # RandomResizedCrop's crop boxes: area fraction within scale, aspect within ratio (torchvision's rule)
    rrc = rnd["rrc"]
    boxes = [rrc.get_params(_rgb(100, 120), rrc.scale, rrc.ratio) for _ in range(300)]
    fracs = [h * w / (100 * 120) for _, _, h, w in boxes]
    assert min(fracs) >= 0.07 and max(fracs) <= 1.0 and np.std(fracs) > 0.1
    assert all(0 <= i <= 100 - h and 0 <= j <= 120 - w for i, j, h, w in boxes)
    # get_params, as joint image/mask transforms call them
    img, mask = _rgb(), _gray()
    (i, j, h, w), (a, b, c, d), order, nones, img_c, mask_c = mod.joint_crop(img, mask)
    assert (h, w) == (20, 30) and 0 <= i <= 17 and 0 <= j <= 20 and order == [0, 1, 2, 3] and nones == (None, None)
    assert 0 <= a <= 37 - c and 0 <= b <= 50 - d
    np.testing.assert_array_equal(np.asarray(img_c), np.asarray(img)[i:i + 20, j:j + 30])
    np.testing.assert_array_equal(np.asarray(mask_c), np.asarray(mask)[i:i + 20, j:j + 30])
    flips = [np.array_equal(np.asarray(rnd["hflip"](_rgb())), np.asarray(_rgb())) for _ in range(400)]
    assert 0.4 < np.mean(flips) < 0.6
    # the seed decides
    ms.set_seed(3)
    first = [np.asarray(rnd["crop_pad"](img32)) for _ in range(3)]
    ms.set_seed(3)
    assert all(np.array_equal(a, np.asarray(rnd["crop_pad"](img32))) for a in first)


JITTER_SRC = '''
import torchvision.transforms as T


def jitters():
    return {
        "brightness": T.ColorJitter(brightness=(1.5, 1.5)),
        "brightness_down": T.ColorJitter(brightness=(0.4, 0.4)),
        "contrast": T.ColorJitter(contrast=(0.5, 0.5)),
        "contrast_up": T.ColorJitter(contrast=(1.8, 1.8)),
        "saturation": T.ColorJitter(saturation=(1.7, 1.7)),
        "hue": T.ColorJitter(hue=(0.1, 0.1)),
        "hue_neg": T.ColorJitter(hue=(-0.3, -0.3)),
    }


def all_four():
    return T.ColorJitter(brightness=(1.3, 1.3), contrast=(0.7, 0.7), saturation=(1.4, 1.4), hue=(0.05, 0.05))


def ranged():
    return T.ColorJitter(0.4, 0.4, 0.4, 0.1)
'''


def test_color_jitter():
    import mindspore as ms
    import torch
    from torchvision.transforms import functional as TF

    t = load_torch(JITTER_SRC)
    mod, code, sites = load_converted(JITTER_SRC)
    ours, theirs = mod.jitters(), t["jitters"]()
    chw = np.random.default_rng(8).random((3, 37, 50)).astype(np.float32)
    u8 = np.random.default_rng(9).integers(0, 256, (3, 37, 50), dtype=np.uint8)
    for name in theirs:
        _same(ours[name](_rgb()), theirs[name](_rgb()), what=f"{name} PIL rgb")
        _same(ours[name](_gray()), theirs[name](_gray()), what=f"{name} PIL gray")
        _same(ours[name](ms.Tensor(chw)), theirs[name](torch.from_numpy(chw)), 1e-5, f"{name} float tensor")
        _same(ours[name](ms.Tensor(u8)), theirs[name](torch.from_numpy(u8)), 1, f"{name} uint8 tensor")
    # all four factors: the order is random; the result is torchvision's for one of the 24 orders
    fns = [lambda im: TF.adjust_brightness(im, 1.3), lambda im: TF.adjust_contrast(im, 0.7),
           lambda im: TF.adjust_saturation(im, 1.4), lambda im: TF.adjust_hue(im, 0.05)]
    candidates = []
    for order in itertools.permutations(range(4)):
        im = _rgb()
        for k in order:
            im = fns[k](im)
        candidates.append(np.asarray(im))
    jitter = mod.all_four()
    seen = set()
    for _ in range(40):
        out = np.asarray(jitter(_rgb()))
        hits = [k for k, c in enumerate(candidates) if np.array_equal(c, out)]
        assert hits, "not torchvision's result for any order"
        seen.add(hits[0])
    assert len(seen) > 5
    r = mod.ranged()
    assert r.brightness == (0.6, 1.4) and r.hue == (-0.1, 0.1)
    assert r(_rgb()).size == (50, 37)


BLUR_SRC = '''
import torch
import torchvision.transforms as T


def blurs():
    return {"fixed": T.GaussianBlur(5, sigma=1.1), "range_fixed": T.GaussianBlur((3, 5), (0.7, 0.7))}


def ranged():
    return T.GaussianBlur((3, 3), (1.0, 2.0))


def in_sequence():
    return T.Compose([T.RandomApply([T.GaussianBlur((3, 3), (1.5, 1.5))], p=1.0), T.Normalize([0.5] * 3, [0.2] * 3)])


class Augment(torch.nn.Module):
    """BYOL's shape: torchvision's transforms are torch Modules, held by nn.Sequential in a model."""

    def __init__(self):
        super().__init__()
        self.aug = torch.nn.Sequential(T.RandomApply(torch.nn.ModuleList([T.ColorJitter(0.8, 0.8, 0.8, 0.2)]), p=0.0),
                                       T.RandomGrayscale(p=0.0), T.RandomHorizontalFlip(p=1.0),
                                       T.RandomApply([T.GaussianBlur((3, 3), (1.0, 1.0))], p=1.0),
                                       T.Normalize(mean=torch.tensor([0.485, 0.456, 0.406]),
                                                   std=torch.tensor([0.229, 0.224, 0.225])))
        self.fc = torch.nn.Linear(50, 2)

    def forward(self, x):
        return self.fc(self.aug(x))
'''


def test_gaussian_blur():
    """torchvision's GaussianBlur on PIL images, float and uint8 tensors; a fixed sigma is exact, a range
    draws within it; the BYOL augmentation shape (RandomApply of a blur, then Normalize) composes."""
    import mindspore as ms
    import torch

    t = load_torch(BLUR_SRC)
    mod, code, sites = load_converted(BLUR_SRC)
    assert all(s.status != "todo" for s in sites), [s.api for s in sites if s.status == "todo"]
    ours, theirs = mod.blurs(), t["blurs"]()
    chw = np.random.default_rng(8).random((3, 37, 50)).astype(np.float32)
    u8 = np.random.default_rng(9).integers(0, 256, (2, 3, 37, 50), dtype=np.uint8)
    for name in theirs:
        _same(ours[name](_rgb()), theirs[name](_rgb()), 1, f"{name} PIL rgb")
        _same(ours[name](_gray()), theirs[name](_gray()), 1, f"{name} PIL gray")
        _same(ours[name](ms.Tensor(chw)), theirs[name](torch.from_numpy(chw)), 1e-6, f"{name} float tensor")
        _same(ours[name](ms.Tensor(u8)), theirs[name](torch.from_numpy(u8)), 1, f"{name} uint8 batch")
    r = mod.ranged()
    sigmas = [r.get_params(*r.sigma) for _ in range(50)]
    assert min(sigmas) >= 1.0 and max(sigmas) <= 2.0 and len(set(sigmas)) > 40
    _same(mod.in_sequence()(ms.Tensor(chw)), t["in_sequence"]()(torch.from_numpy(chw)), 2e-6, "composed")
    # in nn.Sequential inside a model (a Cell): the augmentation then a layer, the layer's parameters only
    net, tnet = mod.Augment(), t["Augment"]()
    assert [n for n, _ in net.parameters_and_names()] == ["fc.weight", "fc.bias"]
    net.fc.weight.set_data(ms.Tensor(tnet.fc.weight.detach().numpy()))
    net.fc.bias.set_data(ms.Tensor(tnet.fc.bias.detach().numpy()))
    batch = np.random.default_rng(3).random((2, 3, 37, 50)).astype(np.float32)
    _same(net(ms.Tensor(batch)), tnet(torch.from_numpy(batch)), 1e-5, "augment then linear")


FUNCTIONAL_SRC = '''
import torch
import torchvision.transforms.functional as F
import torchvision.transforms.v2.functional as F2
from torchvision.transforms import InterpolationMode


def apply(img):
    return {
        "hflip": F.hflip(img), "vflip": F.vflip(img),
        "crop": F.crop(img, 2, 3, 20, 25), "crop_outside": F.crop(img, -2, 40, 20, 25),
        "center_crop": F.center_crop(img, [21, 30]), "pad": F.pad(img, [1, 2], padding_mode="edge"),
        "resize": F.resize(img, 20), "resize_hw": F.resize(img, [16, 24], InterpolationMode.NEAREST),
        "resized_crop": F.resized_crop(img, 1, 2, 30, 40, [12, 18]),
        "gray": F.rgb_to_grayscale(img, num_output_channels=3),
        "brightness": F.adjust_brightness(img, 1.4), "contrast": F.adjust_contrast(img, 0.6),
        "saturation": F.adjust_saturation(img, 1.5), "hue": F.adjust_hue(img, -0.2),
        "v2_hflip": F2.hflip(img), "v2_crop": F2.crop(img, 2, 3, 20, 25), "v2_resize": F2.resize(img, [16, 24]),
        "v2_pad": F2.pad(img, [1, 2, 3, 4], fill=5), "v2_center_crop": F2.center_crop(img, [21, 30]),
        "v2_resized_crop": F2.resized_crop(img, 1, 2, 30, 40, [12, 18]),
        "blur": F.gaussian_blur(img, [3, 5], [0.8, 1.3]), "blur_default_sigma": F.gaussian_blur(img, 5),
    }


def sizes(img):
    return F.get_dimensions(img), F.get_image_size(img)


def conversions(pil):
    t = F.to_tensor(pil)
    return {"to_tensor": t, "normalize": F.normalize(t, [0.5, 0.4, 0.3], [0.2, 0.3, 0.4]),
            "v2_normalize": F2.normalize(t, [0.5, 0.4, 0.3], [0.2, 0.3, 0.4]), "pil_to_tensor": F.pil_to_tensor(pil),
            "v2_pil_to_tensor": F2.pil_to_tensor(pil),
            "to_float": F.convert_image_dtype(F.pil_to_tensor(pil), torch.float32),
            "round_trip": F.to_pil_image(t), "v2_round_trip": F2.to_pil_image(t), "to_gray": F.to_grayscale(pil)}
'''


def test_transforms_functional():
    import mindspore as ms
    import torch

    t = load_torch(FUNCTIONAL_SRC)
    mod, code, sites = load_converted(FUNCTIONAL_SRC)
    assert all(s.status != "todo" for s in sites), [s.api for s in sites if s.status == "todo"]
    chw = np.random.default_rng(10).random((3, 37, 50)).astype(np.float32)
    for label, m_in, t_in in (("PIL", _rgb(), _rgb()), ("tensor", ms.Tensor(chw), torch.from_numpy(chw))):
        ours, theirs = mod.apply(m_in), t["apply"](t_in)
        for name in theirs:
            atol = 5e-6 if label == "tensor" and ("resize" in name or name in ("contrast", "hue")) else 0
            if name.startswith("blur"):
                atol = 1e-6 if label == "tensor" else 1      # uint8: a sum at .5 may round the other way
            _same(ours[name], theirs[name], atol, f"{name} on {label}")
        assert mod.sizes(m_in) == t["sizes"](t_in)
    ours, theirs = mod.conversions(_rgb()), t["conversions"](_rgb())
    for name in theirs:
        _same(ours[name], theirs[name], what=name)


# ====================================================================== datasets
DATASET_SRC = '''
import torchvision
import torchvision.transforms as T
from torchvision import datasets
from torchvision.datasets import MNIST, FashionMNIST, CIFAR10, CIFAR100, ImageFolder, DatasetFolder
from torchvision.datasets.folder import default_loader


def mnist(root, train=True, transform=None, download=False):
    return MNIST(root, train=train, transform=transform, download=download)


def fashion(root):
    return datasets.FashionMNIST(root=root, train=False, transform=T.ToTensor(), target_transform=lambda y: y + 100)


def cifar10(root, train=True, transform=None, download=False):
    return torchvision.datasets.CIFAR10(root, train, transform, download=download)


def cifar100(root):
    return CIFAR100(root=root, train=True, transform=T.Compose([T.ToTensor()]))


def folder(root, transform=None):
    return ImageFolder(root, transform=transform)


def dataset_folder(root):
    return DatasetFolder(root, default_loader, extensions=(".png",), target_transform=lambda y: -y)
'''


def _write_idx(path, arr, compress=False):
    codes = {np.uint8: 8, np.int8: 9, np.int16: 11, np.int32: 12, np.float32: 13, np.float64: 14}
    header = bytes([0, 0, codes[arr.dtype.type], arr.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
    data = header + arr.astype(arr.dtype.newbyteorder(">")).tobytes()
    if compress:
        with gzip.open(str(path) + ".gz", "wb") as f:
            f.write(data)
    else:
        path.write_bytes(data)


def _write_mnist(root, name="MNIST", n=(12, 7), compress=False, seed=0):
    rng = np.random.default_rng(seed)
    raw = root / name / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    for prefix, count in zip(("train", "t10k"), n):
        _write_idx(raw / f"{prefix}-images-idx3-ubyte", rng.integers(0, 256, (count, 28, 28), dtype=np.uint8),
                   compress)
        _write_idx(raw / f"{prefix}-labels-idx1-ubyte", rng.integers(0, 10, count).astype(np.uint8), compress)


def _compare_datasets(ours, theirs, atol=0.0):
    assert len(ours) == len(theirs)
    for i in range(len(theirs)):
        (m_img, m_y), (t_img, t_y) = ours[i], theirs[i]
        _same(m_img, t_img, atol, f"sample {i}")
        assert m_y == t_y and type(m_y) is type(t_y), f"target {i}: {m_y!r} vs {t_y!r}"


def test_datasets_mnist(tmp_path):
    import mindspore as ms

    t = load_torch(DATASET_SRC)
    mod, code, sites = load_converted(DATASET_SRC)
    assert site_statuses(sites)["torchvision.datasets.MNIST"] == "converted-with-difference"
    _write_mnist(tmp_path)
    _write_mnist(tmp_path, "FashionMNIST", seed=1)
    for train in (True, False):
        ours, theirs = mod.mnist(str(tmp_path), train), t["mnist"](str(tmp_path), train)
        _compare_datasets(ours, theirs)
        assert ours.classes == theirs.classes and ours.class_to_idx == theirs.class_to_idx
        assert isinstance(ours.data, ms.Tensor) and ours.data.shape == tuple(theirs.data.shape)
        np.testing.assert_array_equal(ours.targets.asnumpy(), theirs.targets.numpy())
        assert str(ours.targets.dtype) == "Int64"
    _compare_datasets(mod.fashion(str(tmp_path)), t["fashion"](str(tmp_path)))
    assert mod.fashion(str(tmp_path)).classes[0] == "T-shirt/top"
    # filtering by assigning data/targets, as torch users do
    ours, theirs = mod.mnist(str(tmp_path)), t["mnist"](str(tmp_path))
    keep = theirs.targets.numpy() < 5
    theirs.data, theirs.targets = theirs.data[keep], theirs.targets[keep]
    ours.data, ours.targets = ours.data.asnumpy()[keep], ours.targets[ms.Tensor(keep)]
    _compare_datasets(ours, theirs)
    # only the .gz files (as downloaded): read too
    gz_root = tmp_path / "gz"
    _write_mnist(gz_root, compress=True)
    _write_mnist(tmp_path / "plain", seed=0)
    _compare_datasets(mod.mnist(str(gz_root)), mod.mnist(str(tmp_path / "plain")))
    with pytest.raises(RuntimeError, match="download=True cannot fetch"):
        mod.mnist(str(tmp_path / "missing"), download=True)
    with pytest.raises(RuntimeError, match="not found"):
        mod.mnist(str(tmp_path / "missing"))
    # in a DataLoader with ToTensor: the same batches as torch
    import torch
    from torch.utils.data import DataLoader
    import _ms_compat
    tl = DataLoader(t["mnist"](str(tmp_path), transform=tv.transforms.ToTensor()), batch_size=5)
    ml = _ms_compat.DataLoader(mod.mnist(str(tmp_path), transform=_ms_compat.transforms.ToTensor()), batch_size=5)
    _same_batch(list(ml), list(tl))


def _write_cifar100(root, n_train=9, n_test=4, seed=0):
    rng = np.random.default_rng(seed)
    base = root / "cifar-100-python"
    base.mkdir(parents=True)
    for name, n in (("train", n_train), ("test", n_test)):
        entry = {"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
                 "fine_labels": rng.integers(0, 100, n).tolist(), "coarse_labels": rng.integers(0, 20, n).tolist()}
        with open(base / name, "wb") as f:
            pickle.dump(entry, f)
    with open(base / "meta", "wb") as f:
        pickle.dump({"fine_label_names": [f"c{i}" for i in range(100)],
                     "coarse_label_names": [f"s{i}" for i in range(20)]}, f)


def test_datasets_cifar(tmp_path):
    t = load_torch(DATASET_SRC)
    mod, code, sites = load_converted(DATASET_SRC)
    allow_synthetic_cifar()   # torchvision checks the real download's md5
    write_cifar10(tmp_path, n_train=23, n_test=6)
    for train in (True, False):
        ours, theirs = mod.cifar10(str(tmp_path), train), t["cifar10"](str(tmp_path), train)
        _compare_datasets(ours, theirs)
        assert ours.classes == theirs.classes and ours.targets == theirs.targets
        np.testing.assert_array_equal(ours.data, theirs.data)
    tf = tv.transforms.Compose([tv.transforms.ToTensor(), tv.transforms.Normalize((0.5, 0.5, 0.5), (0.2, 0.3, 0.4))])
    import _ms_compat
    mtf = _ms_compat.transforms.Compose([_ms_compat.transforms.ToTensor(),
                                         _ms_compat.transforms.Normalize((0.5, 0.5, 0.5), (0.2, 0.3, 0.4))])
    _compare_datasets(mod.cifar10(str(tmp_path), transform=mtf), t["cifar10"](str(tmp_path), transform=tf))
    _write_cifar100(tmp_path)
    ours, theirs = mod.cifar100(str(tmp_path)), t["cifar100"](str(tmp_path))
    _compare_datasets(ours, theirs)
    assert ours.classes == theirs.classes
    with pytest.raises(RuntimeError, match="download=True cannot fetch"):
        mod.cifar10(str(tmp_path / "nothing"), download=True)


def test_datasets_image_folder(tmp_path):
    import _ms_compat

    t = load_torch(DATASET_SRC)
    mod, code, sites = load_converted(DATASET_SRC)
    rng = np.random.default_rng(0)
    for cls, count in (("dog", 3), ("cat", 2), ("bird", 1)):
        (tmp_path / cls / "nested").mkdir(parents=True)
        for k in range(count):
            Image.fromarray(rng.integers(0, 256, (9 + k, 11, 3), dtype=np.uint8)).save(tmp_path / cls / f"{k}.png")
        Image.fromarray(rng.integers(0, 256, (8, 8), dtype=np.uint8)).save(tmp_path / cls / "nested" / "g.PNG")
        (tmp_path / cls / "notes.txt").write_text("not an image")
    ours, theirs = mod.folder(str(tmp_path)), t["folder"](str(tmp_path))
    assert ours.classes == theirs.classes == ["bird", "cat", "dog"]
    assert ours.class_to_idx == theirs.class_to_idx and ours.samples == theirs.samples == ours.imgs
    assert ours.targets == theirs.targets
    _compare_datasets(ours, theirs)
    tf = tv.transforms.Compose([tv.transforms.Resize((6, 6)), tv.transforms.ToTensor()])
    mtf = _ms_compat.transforms.Compose([_ms_compat.transforms.Resize((6, 6)), _ms_compat.transforms.ToTensor()])
    _compare_datasets(mod.folder(str(tmp_path), mtf), t["folder"](str(tmp_path), tf))
    ours, theirs = mod.dataset_folder(str(tmp_path)), t["dataset_folder"](str(tmp_path))
    assert ours.samples == theirs.samples
    _compare_datasets(ours, theirs)
    assert _ms_compat.datasets.IMG_EXTENSIONS == tv.datasets.folder.IMG_EXTENSIONS
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="Found no valid file for the classes empty"):
        mod.folder(str(tmp_path))


# ====================================================================== a whole pipeline
PIPELINE_SRC = '''
import torch
from torch.utils.data import DataLoader
import torchvision.transforms as transforms
import torchvision


def loaders(root, augment, workers=0):
    steps = [transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip()] if augment else []
    transform = transforms.Compose(steps + [transforms.ToTensor(),
                                            transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))])
    trainset = torchvision.datasets.CIFAR10(root=root, train=True, download=True, transform=transform)
    trainloader = torch.utils.data.DataLoader(trainset, batch_size=16, shuffle=augment, num_workers=workers)
    return trainloader


def first_batch(loader):
    for images, labels in loader:
        images = images.to("cpu")
        return images, labels
'''


def test_full_pipeline(tmp_path):
    t = load_torch(PIPELINE_SRC)
    mod, code, sites = load_converted(PIPELINE_SRC)
    assert all(s.status != "todo" for s in sites)
    allow_synthetic_cifar()
    write_cifar10(tmp_path, n_train=50, n_test=5)
    # deterministic transforms, no shuffle: identical batches, with and without workers
    t_batches = list(t["loaders"](str(tmp_path), False))
    for workers in (0, 2):
        m_batches = list(mod.loaders(str(tmp_path), False, workers))
        assert len(m_batches) == len(t_batches) == 4
        for mb, tb in zip(m_batches, t_batches):
            _same(mb[0], tb[0], 1e-6, f"images, workers={workers}")
            _same(mb[1], tb[1], what=f"labels, workers={workers}")
    # with augmentation: same shapes, dtypes and label multiset
    m_loader, t_loader = mod.loaders(str(tmp_path), True, 2), t["loaders"](str(tmp_path), True, 0)
    mx, my = mod.first_batch(m_loader)
    tx, ty = t["first_batch"](t_loader)
    assert tuple(mx.shape) == tuple(tx.shape) and str(mx.dtype) == "Float32" and str(my.dtype) == "Int64"
    labels = sorted(np.concatenate([b[1].asnumpy() for b in m_loader]).tolist())
    assert labels == sorted(np.concatenate([b[1].numpy() for b in t_loader]).tolist())


def test_mindspore_vision_facts():
    """Why the transforms are emitted as helpers rather than mindspore.dataset.vision ops
    (see the notes in templates/compat_parts/data.py); if MindSpore changes, revisit."""
    import mindspore as ms
    import mindspore.dataset as ds
    import mindspore.dataset.transforms as mt
    import mindspore.dataset.vision as vision
    import _ms_compat

    # on PIL images MindSpore's ops call PIL too: the same pixels as torchvision and the helpers
    img = _rgb()
    for ours, theirs in ((vision.Resize(20), tv.transforms.Resize(20)),
                         (vision.Pad((2, 5)), tv.transforms.Pad((2, 5))),
                         (vision.CenterCrop(20), tv.transforms.CenterCrop(20))):
        np.testing.assert_array_equal(np.asarray(ours(img)), np.asarray(theirs(img)))
    np.testing.assert_array_equal(np.asarray(vision.Resize(20)(img)),
                                  np.asarray(_ms_compat.transforms.Resize(20)(img)))
    # 1. eager Compose with a Python (PIL) step returns a tuple
    out = mt.Compose([vision.CenterCrop(20), vision.ToTensor()])(img)
    assert isinstance(out, tuple) and len(out) == 1
    # 2. NumPy input is read as HWC: a CHW tensor (what ToTensor gives) is resized on the wrong axes
    chw = np.random.default_rng(0).random((3, 37, 50)).astype(np.float32)
    assert vision.Resize((16, 24))(chw).shape != (3, 16, 24)
    # 3. with a seed set (mindspore.set_seed, as torch.manual_seed is converted), eager random
    #    ops on NumPy input draw the same crop every call
    ms.set_seed(0)
    hwc = np.arange(32 * 32 * 3, dtype=np.uint8).reshape(32, 32, 3)
    crops = {vision.RandomCrop(32, padding=4)(hwc).tobytes() for _ in range(10)}
    assert len(crops) == 1 and ds.config.get_seed() == 0
    helper_crops = {np.asarray(_ms_compat.transforms.RandomCrop(32, padding=4)(Image.fromarray(hwc))).tobytes()
                    for _ in range(10)}
    assert len(helper_crops) > 5


def test_bench_measure_pipelines_runs():
    """bench/data_speed.py's measure_pipelines (imported by bench/train_speed.py) on a tiny
    run: the converted pipeline sees as many samples as torch's, and ratios come back."""
    from bench.data_speed import format_results, measure_pipelines

    results = measure_pipelines(images=64, tensor_samples=300, workers=(0,), repeats=1)
    assert set(results) == {"cifar_workers=0", "tensor_dataset"}
    for r in results.values():
        assert r["torch"] > 0 and r["converted"] > 0 and r["ratio"] == r["converted"] / r["torch"]
    assert "ratio" in format_results(results)
