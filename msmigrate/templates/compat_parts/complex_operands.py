"""torch.mul / torch.div (and Tensor.mul / Tensor.div) where a complex operand meets another dtype (a real tensor,
complex64 with complex128, a Python number; a real tensor with a Python complex): torch computes in the complex
dtype; MindSpore 2.10's CPU Mul/Div take complex only paired with the same complex dtype (TypeError: Select CPU
operator[Mul] fail! Unsupported data type). The dtypes are known when a graph compiles, so ms.jit keeps only one
branch; an ordinary pair goes to ops.mul / ops.div as it is."""
import mindspore as ms
from mindspore import ops


_COMPLEX = (ms.complex64, ms.complex128)


def _dtype_of(v):
    """A tensor's dtype; complex64 for a Python complex (torch's default complex dtype); None for another scalar."""
    if isinstance(v, ms.Tensor):
        return v.dtype
    return ms.complex64 if isinstance(v, complex) else None


def _cast(v, dtype):
    return v.astype(dtype) if isinstance(v, ms.Tensor) else ms.Tensor(v, dtype)


def _operands(a, b):
    """(a, b) in the complex dtype torch computes a op b in where a complex operand meets another dtype (a real
    tensor, complex128, a Python number); else as they are."""
    da, db = _dtype_of(a), _dtype_of(b)
    if da not in _COMPLEX and db not in _COMPLEX:
        return a, b
    if isinstance(a, ms.Tensor) and isinstance(b, ms.Tensor) and da == db:
        return a, b
    dtype = ms.complex128 if ms.complex128 in (da, db) or ms.float64 in (da, db) else ms.complex64
    return _cast(a, dtype), _cast(b, dtype)


def mul(input, other):
    return ops.mul(*_operands(input, other))


def div(input, other, rounding_mode=None):
    input, other = _operands(input, other)
    return ops.div(input, other, rounding_mode=rounding_mode)
