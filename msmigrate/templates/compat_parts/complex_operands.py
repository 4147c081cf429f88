"""torch.mul / torch.div (and Tensor.mul / Tensor.div) of a real tensor and a complex one, or of complex64 and
complex128: torch computes in the complex dtype; MindSpore 2.10's CPU Mul/Div take complex only paired with the
same complex dtype (TypeError: Select CPU operator[Mul] fail! Unsupported data type). The dtypes are known when a
graph compiles, so ms.jit keeps only one branch; an ordinary pair goes to ops.mul / ops.div as it is."""
import mindspore as ms
from mindspore import ops


def _complex_dtype(a, b):
    """The complex dtype torch computes a op b in where one tensor is complex and the dtypes differ, else None."""
    if not isinstance(a, ms.Tensor) or not isinstance(b, ms.Tensor) or a.dtype == b.dtype:
        return None
    kinds = (a.dtype, b.dtype)
    if ms.complex64 not in kinds and ms.complex128 not in kinds:
        return None
    return ms.complex128 if ms.complex128 in kinds or ms.float64 in kinds else ms.complex64


def mul(input, other):
    dtype = _complex_dtype(input, other)
    if dtype is not None:
        input, other = input.astype(dtype), other.astype(dtype)
    return ops.mul(input, other)


def div(input, other, rounding_mode=None):
    dtype = _complex_dtype(input, other)
    if dtype is not None:
        input, other = input.astype(dtype), other.astype(dtype)
    return ops.div(input, other, rounding_mode=rounding_mode)
