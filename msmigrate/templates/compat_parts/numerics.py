"""torch.finfo / torch.iinfo for MindSpore dtypes (MindSpore has no such objects).

The numbers are torch's (its `resolution` is a rounded power of ten, not NumPy's). The
functions pick them with plain comparisons, so `finfo(x.dtype).min` also compiles inside
a GRAPH-mode construct (the dtype is known when the graph is built).
"""
import mindspore as ms
from mindspore import ops


class _FloatInfo:
    """The fields of torch.finfo."""

    def __init__(self, bits, eps, max, tiny, resolution, dtype):
        self.bits = bits
        self.eps = eps
        self.max = max
        self.min = -max
        self.tiny = tiny
        self.smallest_normal = tiny
        self.resolution = resolution
        self.dtype = dtype

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class _IntInfo:
    """The fields of torch.iinfo."""

    def __init__(self, bits, min, max, dtype):
        self.bits = bits
        self.min = min
        self.max = max
        self.dtype = dtype

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def finfo(dtype=None):
    """torch.finfo(dtype): bits, eps, max, min, tiny, smallest_normal, resolution, dtype.
    No argument means the default float type (float32). Complex types give their parts'."""
    if dtype is None or dtype == ms.float32 or dtype == ms.complex64:
        return _FloatInfo(32, 1.1920928955078125e-07, 3.4028234663852886e+38, 1.1754943508222875e-38, 1e-06,
                          "float32")
    if dtype == ms.float16:
        return _FloatInfo(16, 0.0009765625, 65504.0, 6.103515625e-05, 0.001, "float16")
    if dtype == ms.bfloat16:
        return _FloatInfo(16, 0.0078125, 3.3895313892515355e+38, 1.1754943508222875e-38, 0.01, "bfloat16")
    if dtype == ms.float64 or dtype == ms.complex128:
        return _FloatInfo(64, 2.220446049250313e-16, 1.7976931348623157e+308, 2.2250738585072014e-308, 1e-15,
                          "float64")
    if dtype == ms.float8_e4m3fn:
        return _FloatInfo(8, 0.125, 448.0, 0.015625, 1.0, "float8_e4m3fn")
    if dtype == ms.float8_e5m2:
        return _FloatInfo(8, 0.25, 57344.0, 6.103515625e-05, 1.0, "float8_e5m2")
    raise TypeError(f"finfo() requires a floating point input type, got {dtype}; use iinfo for integers")


def iinfo(dtype):
    """torch.iinfo(dtype): bits, min, max, dtype."""
    for ms_type, bits, signed, name in ((ms.int8, 8, True, "int8"), (ms.int16, 16, True, "int16"),
                                        (ms.int32, 32, True, "int32"), (ms.int64, 64, True, "int64"),
                                        (ms.uint8, 8, False, "uint8"), (ms.uint16, 16, False, "uint16"),
                                        (ms.uint32, 32, False, "uint32"), (ms.uint64, 64, False, "uint64")):
        if dtype == ms_type:
            if signed:
                return _IntInfo(bits, -2 ** (bits - 1), 2 ** (bits - 1) - 1, name)
            return _IntInfo(bits, 0, 2 ** bits - 1, name)
    raise TypeError(f"iinfo() requires an integer input type, got {dtype}; use finfo for floating point")


def invert(x):
    """torch's ~x: bitwise not on integer tensors (MindSpore's ~ gives a logical not there),
    logical not on bool tensors; anything else keeps its own ~."""
    if isinstance(x, ms.Tensor) and x.dtype != ms.bool_:
        return ops.invert(x)
    return ~x


def max_or_maximum(x, other):
    """torch.max(x, other) where the converter could not tell a dim from a tensor: a tensor is
    the elementwise maximum, an int the (values, indices) along that dim (a constant in GRAPH mode)."""
    if isinstance(other, ms.Tensor):
        return ops.maximum(x, other)
    return ops.max(x, other)


def min_or_minimum(x, other):
    """torch.min(x, other): the elementwise minimum for a tensor, (values, indices) along an int dim."""
    if isinstance(other, ms.Tensor):
        return ops.minimum(x, other)
    return ops.min(x, other)
