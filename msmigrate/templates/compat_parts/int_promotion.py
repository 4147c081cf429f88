"""torch's float functions (exp, log, sqrt, sin, sigmoid...) take an integer or bool tensor and compute in the
default float dtype, float32; MindSpore 2.10's CPU kernels refuse one (TypeError: Select CPU operator[Exp]
fail! Unsupported data type). The dtype is known when a graph compiles, so ms.jit keeps only one branch."""
import mindspore as ms

_PROMOTED_DTYPES = (ms.bool_, ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8, ms.uint16, ms.uint32, ms.uint64)


def float_input(x):
    """x as a float function's input: an integer or bool tensor as float32, as torch promotes it; else x."""
    return x.astype(ms.float32) if x.dtype in _PROMOTED_DTYPES else x


def float_pair(a, b):
    """(a, b) in the float dtype torch computes a float function of two tensors in (logaddexp, igamma): an
    integer or bool one takes the other's, two integer ones float32, float32 with float64 float64; MindSpore
    2.10's kernels refuse an integer input or a mixed pair."""
    floats = [t.dtype for t in (a, b) if t.dtype not in _PROMOTED_DTYPES]
    dtype = ms.float64 if ms.float64 in floats else ms.float32 if ms.float32 in floats or not floats else floats[0]
    return a.astype(dtype), b.astype(dtype)
