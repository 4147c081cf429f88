"""Parity of torch dtype names, tensor type names and the legacy typed constructors
(records in msmigrate/mappings/dtypes.py)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import CONVERTED, TODO  # noqa: E402

from .harness import _to_ms, load_converted, load_torch  # noqa: E402

_NAMES = ["float32", "float", "float64", "double", "float16", "half", "bfloat16", "int8", "int16", "short",
          "int32", "int", "int64", "long", "uint8", "bool", "complex64", "complex128"]

NAMES_SRC = "import torch\n\ndef names():\n    return [" + ", ".join(f"torch.{n}" for n in _NAMES) + "]\n"

TYPES_SRC = '''
from typing import List, Optional, Tuple

import numpy as np
import torch


def check(x: torch.Tensor, dt: Optional[torch.dtype] = None, size: Optional[torch.Size] = None) -> Tuple[bool, ...]:
    return (isinstance(x, torch.Tensor), isinstance(dt, torch.dtype), isinstance(x.shape, torch.Size),
            isinstance(size, torch.Size))


def shape_of(n: int) -> torch.Size:
    return torch.Size([n, 2])


def typed():
    return (torch.Tensor([1, 2]), torch.FloatTensor([1, 2]), torch.LongTensor([1.0, 2.0]),
            torch.DoubleTensor([[1, 2]]), torch.IntTensor((3, 4)), torch.BoolTensor([1, 0]),
            torch.ByteTensor([255, 1]), torch.HalfTensor([0.5]), torch.CharTensor([-3]), torch.ShortTensor([7]))


def sized(n):
    return torch.Tensor(2, 3).shape, torch.FloatTensor(n, 2).shape, torch.LongTensor(n).dtype, torch.Tensor(n, 1).shape


def from_data(rows: List[List[int]], arr):
    return torch.Tensor(rows), torch.LongTensor(arr), torch.FloatTensor(torch.Tensor(rows))


def wraps(t):      # torch.Tensor(tensor): the tensor's own dtype
    return torch.Tensor(t), torch.Tensor(t * 2)
'''


def _np_of(torch_dtype):
    import torch
    return torch.empty((), dtype=torch_dtype).numpy().dtype


def test_dtype_names():
    """Every torch dtype name becomes the MindSpore dtype of the same width and kind."""
    import mindspore as ms
    import torch

    t_vals = load_torch(NAMES_SRC)["names"]()
    mod, code, sites = load_converted(NAMES_SRC)
    assert {s.status for s in sites} == {CONVERTED}, [(s.api, s.status) for s in sites]
    assert len(sites) == len(_NAMES)
    m_vals = mod.names()
    for name, t, m in zip(_NAMES, t_vals, m_vals):
        assert isinstance(m, ms.dtype.Type), (name, m)
        if t == torch.bfloat16:
            assert m == ms.bfloat16
            continue
        assert np.dtype(ms.dtype_to_nptype(m)) == _np_of(t), (name, m)
        # and the dtype really makes tensors of that kind
        a = np.ones((2,), dtype=_np_of(t))
        assert ms.Tensor(a, dtype=m).asnumpy().dtype == a.dtype, name


_MORE_NAMES = ["cfloat", "cdouble", "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2"]
ITEMSIZE_SRC = ("import torch\n\ndef sizes():\n    return ["
                + ", ".join(f"torch.{n}.itemsize" for n in _NAMES + _MORE_NAMES) + "]\n")


def test_dtype_itemsize():
    """torch.<dtype>.itemsize: the bytes per element, read from the converted MindSpore dtype."""
    t_vals = load_torch(ITEMSIZE_SRC)["sizes"]()
    mod, code, sites = load_converted(ITEMSIZE_SRC)
    assert {s.status for s in sites} == {CONVERTED}, [(s.api, s.status, s.note) for s in sites]
    assert mod.sizes() == t_vals and len(set(t_vals)) == 5 and len(t_vals) == 25, (mod.sizes(), t_vals)


def test_tensor_type_names():
    """torch.Tensor / torch.dtype / torch.Size as types (annotations, isinstance)."""
    import torch

    t = load_torch(TYPES_SRC)
    mod, code, sites = load_converted(TYPES_SRC)
    assert not [s for s in sites if s.status == TODO], [(s.api, s.note) for s in sites if s.status == TODO]
    assert "import torch" not in code
    x = np.ones((2, 3), np.float32)
    import mindspore as ms
    assert mod.check(_to_ms(x), None, (2, 3)) == t["check"](torch.from_numpy(x), None, torch.Size([2, 3])) \
        == (True, False, True, True)
    assert mod.check(_to_ms(x), ms.float32, (2, 3)) == t["check"](torch.from_numpy(x), torch.float32, None)[:3] \
        + (True,) == (True, True, True, True)
    assert mod.shape_of(3) == tuple(t["shape_of"](3)) == (3, 2)


def test_legacy_typed_constructors():
    """torch.Tensor(data) is float32 and torch.LongTensor(data) int64, whatever the data's own type."""
    import torch

    t = load_torch(TYPES_SRC)
    mod, code, sites = load_converted(TYPES_SRC)
    apis = {s.api for s in sites}
    assert {"torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.DoubleTensor", "torch.IntTensor",
            "torch.BoolTensor", "torch.ByteTensor", "torch.HalfTensor"} <= apis
    for mv, tv in zip(mod.typed(), t["typed"]()):
        assert mv.asnumpy().dtype == tv.numpy().dtype, (mv, tv)
        np.testing.assert_array_equal(mv.asnumpy(), tv.numpy())
    m_sized, t_sized = mod.sized(4), t["sized"](4)
    assert tuple(m_sized[0]) == tuple(t_sized[0]) == (2, 3)
    assert tuple(m_sized[1]) == tuple(t_sized[1]) == (4, 2)
    assert np.dtype(__import__("mindspore").dtype_to_nptype(m_sized[2])) == np.int64 == _np_of(t_sized[2])
    assert tuple(m_sized[3]) == tuple(t_sized[3]) == (4, 1)
    rows = [[1, 2], [3, 4]]
    arr = np.array([1.7, 2.2])
    for mv, tv in zip(mod.from_data(rows, arr), t["from_data"](rows, arr)):
        assert mv.asnumpy().dtype == tv.numpy().dtype
        np.testing.assert_array_equal(mv.asnumpy(), tv.numpy())
    for a in (np.array([[3, 4], [5, 8]], np.int64), np.ones((2, 2))):
        for mv, tv in zip(mod.wraps(_to_ms(a)), t["wraps"](torch.from_numpy(a))):
            assert mv.asnumpy().dtype == tv.numpy().dtype, (mv.dtype, tv.dtype)
            np.testing.assert_array_equal(mv.asnumpy(), tv.numpy())


DTYPE_USE_SRC = '''
import torch
import torch.nn as nn


def make():
    return nn.Linear(3, 2, dtype=torch.float32)
'''


def test_dtype_in_layer_arguments():
    """dtype/device arguments of layers are dropped (float32 is the default on both sides)."""
    from .harness import check_layer

    code, sites = check_layer(DTYPE_USE_SRC, [np.ones((2, 3), np.float32)], graph=False)
    assert "dtype" not in code


VARIABLE_SRC = '''
import torch
from torch.autograd import Variable
import torch.autograd as autograd


def wrap(x):
    a = Variable(x, requires_grad=False)
    b = autograd.Variable(x * 2)
    c = Variable(x + 1, volatile=True)
    return a, b, c


def needs_grad(x):
    return Variable(x, requires_grad=True)
'''


def test_variable_is_its_tensor():
    """torch.autograd.Variable(x) is x's value (a plain tensor since torch 0.4), a leaf cut from the gradient
    (ops.stop_gradient: tests/test_heldout37_programs.py); requires_grad=True a Parameter of its own, which an
    optimizer takes (tests/test_stop45_programs.py)."""
    import mindspore as ms
    import torch

    t = load_torch(VARIABLE_SRC)
    mod, code, sites = load_converted(VARIABLE_SRC)
    statuses = [(s.api, s.status) for s in sites if s.api.endswith("Variable")]
    assert statuses.count(("torch.autograd.Variable", TODO)) == 0, statuses
    assert len(statuses) == 4, statuses
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for mv, tv in zip(mod.wrap(_to_ms(x)), t["wrap"](torch.from_numpy(x))):
        assert mv.asnumpy().dtype == tv.numpy().dtype
        np.testing.assert_array_equal(mv.asnumpy(), tv.numpy())
    leaf, want = mod.needs_grad(_to_ms(x)), t["needs_grad"](torch.from_numpy(x))
    assert isinstance(leaf, ms.Parameter) and leaf.requires_grad and want.requires_grad
    np.testing.assert_array_equal(leaf.asnumpy(), want.detach().numpy())


LEGACY_VALUES_SRC = '''
import numpy as np
import torch

cuda = torch.cuda.is_available()
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
Long = torch.LongTensor


def build(n, arr):
    ones = Tensor(n, 1).fill_(1.0)
    data = Tensor(arr)
    labels = Long(arr.astype(np.int64))
    called_cuda = torch.cuda.FloatTensor([1, 2]) if cuda else torch.FloatTensor([1, 2])
    return ones, data, labels, called_cuda


def kinds(x, y):
    return isinstance(x, Tensor), isinstance(y, Tensor), isinstance(y, Long)
'''


def test_legacy_types_as_values():
    """torch.FloatTensor / torch.cuda.FloatTensor passed around as values still build tensors as torch's
    legacy constructors do (sizes or data) and work in isinstance."""
    import torch

    t = load_torch(LEGACY_VALUES_SRC)
    mod, code, sites = load_converted(LEGACY_VALUES_SRC)
    assert not [s for s in sites if s.status == TODO], [(s.api, s.note) for s in sites if s.status == TODO]
    arr = np.array([[1.5, 2.0], [3.0, 4.0]])
    for mv, tv in zip(mod.build(3, arr), t["build"](3, arr)):
        assert mv.asnumpy().dtype == tv.numpy().dtype, (mv.dtype, tv.dtype)
        np.testing.assert_array_equal(mv.asnumpy(), tv.numpy())
    x = np.ones((2, 2), np.float32)
    y = np.ones((2,), np.int64)
    assert mod.kinds(_to_ms(x), _to_ms(y)) == t["kinds"](torch.from_numpy(x), torch.from_numpy(y)) \
        == (True, False, True)


VERSIONS_SRC = '''
import torch
import torchvision
from packaging import version


def versions():
    return str(torch.__version__), torchvision.__version__, version.parse(torch.__version__) >= version.parse("2.0")


def parts():
    major, minor = (int(p) for p in torch.__version__.split(".")[:2])
    return major, minor, torch.__version__.split(sep=".", maxsplit=1)[0], torchvision.__version__.split(".")[0]
'''


def test_versions():
    """torch.__version__ / torchvision.__version__: the versions whose API the conversion follows, so a
    version check takes the branch a current torch takes."""
    import torch

    mod, code, sites = load_converted(VERSIONS_SRC)
    assert not [s for s in sites if s.status == TODO], [(s.api, s.note) for s in sites if s.status == TODO]
    tv, vv, modern = mod.versions()
    assert modern is True
    assert tv.split(".")[:2] == torch.__version__.split("+")[0].split(".")[:2], (tv, torch.__version__)
    assert vv.count(".") == 2
    # str methods of the version are called on the converted string
    major, minor, head, vhead = mod.parts()
    assert (major, minor) == tuple(int(p) for p in torch.__version__.split(".")[:2])
    assert head == torch.__version__.split(sep=".", maxsplit=1)[0] and vhead == vv.split(".")[0]


BF16_SRC = """
import numpy as np
import torch


def made(n):
    x = torch.BFloat16Tensor([1.5, 2, 3])
    return (x, x + x, torch.BFloat16Tensor(n, 3), torch.BFloat16Tensor([[1.5, 2.0], [3.0, 4.0]]),
            torch.BFloat16Tensor(np.array([1.5, 2.0, 3.0], dtype=np.float32)), torch.BFloat16Tensor((3, 2, 3)),
            torch.BFloat16Tensor())


def kinds(a, b):
    T = torch.BFloat16Tensor
    return isinstance(a, T), isinstance(b, T), a.type(T).dtype == torch.bfloat16
"""


def test_bfloat16_tensor():
    """torch.BFloat16Tensor as a constructor (data, sizes, nothing) and as a type: bfloat16 tensors of torch's
    values and shapes."""
    import mindspore as ms
    import torch

    t = load_torch(BF16_SRC)
    mod, code, sites = load_converted(BF16_SRC)
    assert not [s for s in sites if s.status == TODO], [(s.api, s.note) for s in sites if s.status == TODO]
    for i, (mv, tv) in enumerate(zip(mod.made(2), t["made"](2))):
        assert mv.dtype == ms.bfloat16 and tv.dtype == torch.bfloat16
        assert tuple(mv.shape) == tuple(tv.shape)
        if i != 2:   # sizes: torch leaves the memory uninitialised
            np.testing.assert_array_equal(mv.astype(ms.float32).asnumpy(), tv.float().numpy())
    a, b = np.ones(2, np.float32), np.ones(2, np.float32)
    got = mod.kinds(_to_ms(a).astype(ms.bfloat16), _to_ms(b))
    assert got == t["kinds"](torch.from_numpy(a).bfloat16(), torch.from_numpy(b)) == (True, False, True)
