"""Parity of torch.finfo / torch.iinfo and of memory-format hints (records in
msmigrate/mappings/numerics.py)."""
from __future__ import annotations

import sys
import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")


from .harness import check_function, check_layer, load_converted, load_torch, rnd, no_todo  # noqa: E402


INFO_SRC = '''
import torch


def fields():
    out = []
    for dt in (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.complex64):
        f = torch.finfo(dt)
        out.append((f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution, f.dtype))
    f = torch.finfo()
    out.append((f.bits, f.eps, f.max, f.min, f.tiny, f.dtype))
    for dt in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8):
        i = torch.iinfo(dt)
        out.append((i.bits, i.min, i.max, i.dtype))
    return out


def refuses():
    errors = []
    for call in (lambda: torch.finfo(torch.int32), lambda: torch.iinfo(torch.float32)):
        try:
            call()
        except TypeError:
            errors.append("TypeError")
    return errors
'''


def test_finfo_iinfo_fields():
    mod, code, sites = load_converted(INFO_SRC)
    no_todo(sites)
    ref = load_torch(INFO_SRC)
    assert mod.fields() == ref["fields"]()   # exact: the same Python numbers and dtype names
    assert mod.refuses() == ref["refuses"]() == ["TypeError", "TypeError"]


MASK_SRC = '''
import torch


def fn(x, m):
    # the attention-masking idiom: the most negative value of the score's dtype
    scores = x.masked_fill(m, torch.finfo(x.dtype).min)
    probs = scores.softmax(-1)
    big = torch.clamp(x * 1e30, max=torch.finfo(x.dtype).max, min=torch.finfo(torch.float32).min)
    small = x + torch.finfo(x.dtype).eps + torch.finfo(x.dtype).tiny
    ints = torch.full((2,), torch.iinfo(torch.int32).max - torch.finfo(x.dtype).bits)
    return probs, big, small, ints
'''


def test_finfo_masking_idiom():
    mask = np.zeros((3, 5), dtype=bool)
    mask[:, 3:] = True
    mask[1, :] = False
    code, sites = check_function(MASK_SRC, [rnd(3, 5), mask], grad=True)
    no_todo(sites)
    assert "_ms_compat.finfo(x.dtype).min" in code


LAYOUT_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        fmt = torch.channels_last
        x = x.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=fmt)
        y = self.conv(x).contiguous(memory_format=torch.contiguous_format)
        z = torch.zeros_like(y, memory_format=torch.channels_last) + torch.ones_like(y, memory_format=torch.preserve_format)
        w = y.clone(memory_format=torch.channels_last)
        v = torch.ones_like(torch.zeros(2, 3, 2, 2, 2), memory_format=torch.channels_last_3d).sum()
        return y + z + w + v


def make():
    net = Net()
    return net.to(memory_format=torch.channels_last)
'''


def test_memory_format_is_a_layout_hint():
    code, sites = check_layer(LAYOUT_SRC, [rnd(2, 3, 5, 5)], grad=True)
    no_todo(sites)
    assert "memory_format" not in code and "channels_last" in code


FLOAT8_SRC = '''
import torch


class Quantized:
    fp8_dtype = torch.float8_e4m3fn
    fp8_max = torch.finfo(fp8_dtype).max


def fields():
    out = [Quantized.fp8_max]
    for dt in (torch.float8_e4m3fn, torch.float8_e5m2):
        f = torch.finfo(dt)
        out.append((f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution, f.dtype))
    return out
'''


def test_float8_names_and_limits():
    """torch.float8_e4m3fn / float8_e5m2 name MindSpore's float8 types; finfo gives torch's numbers
    (transformers' cache_utils reads them while its classes are defined)."""
    import mindspore as ms
    mod, code, sites = load_converted(FLOAT8_SRC)
    no_todo(sites)
    assert mod.Quantized.fp8_dtype == ms.float8_e4m3fn
    assert mod.fields() == load_torch(FLOAT8_SRC)["fields"]()


STRIDED_SRC = """
import torch


def made(x):
    a = torch.zeros(2, 3, layout=torch.strided, dtype=torch.float64)
    b = torch.arange(1, 6, layout=torch.strided)
    c = torch.hann_window(6, layout=torch.strided)
    d = x.new_ones((2,), layout=torch.strided)
    e = torch.full((2,), 3.5, layout=torch.strided)
    f = torch.torch.tril(x, diagonal=-1)      # the module is its own attribute
    return a, b, c, d, e, f, torch.torch.finfo(torch.float32).eps
"""


def test_strided_is_the_dense_layout():
    """`layout=torch.strided` (the dense layout, MindSpore's only one) converts with no TODO; values and dtypes
    as torch's. `torch.torch.X` is torch.X."""
    import mindspore as ms
    import torch

    code, sites = check_function(STRIDED_SRC, [rnd(3, 3)], entry="made")
    no_todo(sites)
    assert "strided" not in code and "torch." not in code, code
    mod, _, _ = load_converted(STRIDED_SRC)
    got = mod.made(ms.Tensor(rnd(3, 3)))
    want = load_torch(STRIDED_SRC)["made"](torch.from_numpy(rnd(3, 3)))
    for g, w in zip(got[:-1], want[:-1]):
        assert str(g.dtype).lower() == str(w.dtype).replace("torch.", ""), (g.dtype, w.dtype)


FLOAT8_CAST_SRC = """
import torch


def quantize(x: torch.Tensor):
    return x.to(torch.float8_e4m3fn).float()


def quantize_kw(x: torch.Tensor):
    return x.to(dtype=torch.float8_e5m2).float()


def quantize_type(x: torch.Tensor):
    return x.type(torch.float8_e4m3fn)
"""


def test_float8_cast_stops_with_migration_error_on_cpu():
    """x.to(torch.float8_*) where MindSpore 2.10 has no float8 kernels (CPU: Cast raises TypeError, a bare
    error from inside MindSpore before): MigrationError naming the original line. Torch computes it."""
    import mindspore as ms
    import torch
    mod, code, sites = load_converted(FLOAT8_CAST_SRC)
    assert code.count("_ms_compat.float8_cast(") == 3, code
    ref = load_torch(FLOAT8_CAST_SRC)
    x = np.array([1.0, 2.0, 3.3], np.float32)
    assert ref["quantize"](torch.from_numpy(x)).tolist() == [1.0, 2.0, 3.25]     # torch rounds to float8
    helper = sys.modules["_ms_compat"]
    for fn, line in (("quantize", 6), ("quantize_kw", 10), ("quantize_type", 14)):
        with pytest.raises(helper.MigrationError, match=rf":{line}: MindSpore 2\.10 has no float8"):
            getattr(mod, fn)(ms.Tensor(x))
