"""torch.mul / torch.div (and Tensor.mul / Tensor.div) where a complex operand meets another dtype (a real tensor,
complex64 with complex128, a Python number; a real tensor with a Python complex): torch computes in the complex
dtype; MindSpore 2.10's CPU Mul/Div take complex only paired with the same complex dtype (TypeError: Select CPU
operator[Mul] fail! Unsupported data type). The dtypes are known when a graph compiles, so ms.jit keeps only one
branch; an ordinary pair goes to ops.mul / ops.div as it is. A real Python number with a complex tensor works in
MindSpore's `*` and `/` (a failed complex Mul in the same process makes it fail too: measure in a fresh one)."""
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


def _real_with_complex(a, b):
    return isinstance(a, ms.Tensor) and isinstance(b, ms.Tensor) and (a.dtype in _COMPLEX) != (b.dtype in _COMPLEX)


def _per_part(a, b, divide):
    """A complex tensor times (over) a real one, on the real and imaginary parts: MindSpore 2.10 has no gradient
    for a complex Mul ("gradient not support for complex type"), these real products have torch's."""
    dtype = _operands(a, b)[0].dtype
    real = ms.float64 if dtype == ms.complex128 else ms.float32
    z_first = a.dtype in _COMPLEX     # (not `z is a`: identity is no test in a compiled graph)
    z, r = (a, b) if z_first else (b, a)
    re, im, r = ops.real(z).astype(real), ops.imag(z).astype(real), r.astype(real)
    if not divide:
        return ops.Complex()(re * r, im * r)
    if z_first:
        return ops.Complex()(re / r, im / r)
    norm = re * re + im * im
    return ops.Complex()(r * re / norm, -r * im / norm)


def _both_complex(a, b):
    return isinstance(a, ms.Tensor) and isinstance(b, ms.Tensor) and a.dtype in _COMPLEX and b.dtype in _COMPLEX


def _complex_parts(a, b, divide):
    """Two complex tensors multiplied (divided) on their real and imaginary parts, for the same reason: the rotary
    embedding of LLaMA-style models, `view_as_real(view_as_complex(xq) * freqs_cis)`, trains through it."""
    a, b = _operands(a, b)
    real = ms.float64 if a.dtype == ms.complex128 else ms.float32
    ar, ai, br, bi = ops.real(a).astype(real), ops.imag(a).astype(real), ops.real(b).astype(real), \
        ops.imag(b).astype(real)
    if not divide:
        return ops.Complex()(ar * br - ai * bi, ar * bi + ai * br)
    norm = br * br + bi * bi
    return ops.Complex()((ar * br + ai * bi) / norm, (ai * br - ar * bi) / norm)


def mul(input, other):
    if _real_with_complex(input, other):
        return _per_part(input, other, False)
    if _both_complex(input, other):
        return _complex_parts(input, other, False)
    return ops.mul(*_operands(input, other))


def div(input, other, rounding_mode=None):
    if rounding_mode is None and _real_with_complex(input, other):
        return _per_part(input, other, True)
    if rounding_mode is None and _both_complex(input, other):
        return _complex_parts(input, other, True)
    input, other = _operands(input, other)
    return ops.div(input, other, rounding_mode=rounding_mode)


def _cast_for_operator(a, b):
    """Two tensors as for torch.mul; a Python complex with a tensor cast; a real Python number with a complex
    tensor as it is (MindSpore's operator takes it, with its gradient); no tensor: as Python has them."""
    tensors = isinstance(a, ms.Tensor) + isinstance(b, ms.Tensor)
    if tensors == 2 or tensors == 1 and (isinstance(a, complex) or isinstance(b, complex)):
        return _operands(a, b)
    return a, b


def times(a, b):
    """`a * b` in a module that makes complex tensors (msmigrate/complex_operators.py): as torch.mul where a complex
    tensor meets another dtype; anything else (ints, strings, lists) as Python does."""
    if _real_with_complex(a, b):
        return _per_part(a, b, False)
    if _both_complex(a, b):
        return _complex_parts(a, b, False)
    a, b = _cast_for_operator(a, b)
    if _both_complex(a, b):     # a Python complex with a tensor (S4D's `1j * self.A_imag`), cast: differentiable parts
        return _complex_parts(a, b, False)
    return a * b


def over(a, b):
    """`a / b`, the same way."""
    if _real_with_complex(a, b):
        return _per_part(a, b, True)
    if _both_complex(a, b):
        return _complex_parts(a, b, True)
    a, b = _cast_for_operator(a, b)
    if _both_complex(a, b):     # a Python complex with a tensor (S4D's `1j * self.A_imag`), cast: differentiable parts
        return _complex_parts(a, b, True)
    return a / b


def imaginary_tensor(value):
    """An imaginary literal (`1j`) operand of `*` or `/` in code a Cell's construct runs (S4D's `1j * self.A_imag`):
    MindSpore's graph parser refuses a complex constant ("Unsupported Constant type : 1j"). A 0-d complex64 tensor,
    which times/over take as torch promotes a Python complex with a tensor (complex64 with float32, complex128
    with float64 or complex128)."""
    return ops.Complex()(ms.Tensor(0.0, ms.float32), ms.Tensor(value, ms.float32))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """torch.diag_embed: ops.diag_embed, on the real and imaginary parts of a complex input (MindSpore 2.10's
    kernel takes real dtypes only: s4's DPLR initialization, `V @ torch.diag_embed(W) @ V.conj().transpose(-1, -2)`
    of complex eigenvalues)."""
    if input.dtype in _COMPLEX:
        return ops.Complex()(ops.diag_embed(ops.real(input), offset, dim1, dim2),
                             ops.diag_embed(ops.imag(input), offset, dim1, dim2))
    return ops.diag_embed(input, offset, dim1, dim2)
