"""torch.masked's reductions and normalisations of a tensor with a boolean `mask` (broadcast to the input).

torch.masked documents a masked-out element as absent: it takes the identity of the reduction (0 for sum,
1 for prod, -inf for amax / logsumexp / softmax, +inf for amin), so it changes nothing; mean, var and std count
the elements kept. A reduction whose elements are all masked out gives what the identity gives (sum 0, amax -inf,
mean/var nan, softmax nan), as torch. mask=None keeps every element. dim is an int, a tuple or None (all).
"""
import mindspore as ms
from mindspore import ops


# the smallest and largest value of each integer dtype's width (a module constant: inside ms.jit 2 ** 63 overflows)
_INT_RANGE = {bits: (-2 ** (bits - 1), 2 ** (bits - 1) - 1) for bits in (8, 16, 32, 64)}


def _extreme(dtype, sign):
    """+inf / -inf in a float dtype, the largest / smallest value of an integer one (torch's identities)."""
    if dtype in (ms.float16, ms.float32, ms.float64, ms.bfloat16):
        return float("inf") * sign
    if dtype == ms.uint8:
        return 255 if sign > 0 else 0
    if dtype == ms.bool_:
        return sign > 0
    bits = 8 if dtype == ms.int8 else 16 if dtype == ms.int16 else 32 if dtype == ms.int32 else 64
    return _INT_RANGE[bits][1] if sign > 0 else _INT_RANGE[bits][0]


def _kept(x, mask):
    """The mask as a bool tensor of x's shape (None: every element kept)."""
    if mask is None:
        return ops.ones(x.shape, ms.bool_)
    return ops.broadcast_to(mask.astype(ms.bool_), x.shape)


def _fill(x, mask, value, dtype=None):
    """x (cast to dtype) with the masked-out elements replaced by `value`."""
    if dtype is not None:
        x = x.astype(dtype)
    if mask is None:
        return x
    # ms.Tensor, not ops.full: inside ms.jit ops.full keeps only an int32 of an int64 value
    return ops.where(_kept(x, mask), x, ms.Tensor(value, x.dtype))


def _reduced(op, x, dim, keepdim):
    """op(x, one_dim, keepdim) over dim: None is every dimension, a tuple each of its dimensions (a 0-d x has
    none to reduce: torch's dim 0 of a 0-d tensor is the tensor)."""
    if x.ndim == 0:
        return x
    dims = range(x.ndim) if dim is None else (dim,) if isinstance(dim, int) else dim
    dims = [d % x.ndim for d in dims]
    out = x
    for d in range(x.ndim - 1, -1, -1):    # last first: each reduced dimension stays (size 1) until the end
        if d in dims:
            out = op(out, d, True)
    if keepdim:
        return out
    return out.reshape(tuple(n for d, n in enumerate(x.shape) if d not in dims))


def _accumulator(x, dtype):
    """torch sums and multiplies bool/int tensors in int64."""
    if dtype is None and x.dtype in (ms.bool_, ms.int8, ms.int16, ms.int32, ms.uint8):
        return ms.int64
    return dtype


def masked_sum(input, dim=None, keepdim=False, dtype=None, mask=None):
    x = _fill(input, mask, 0, _accumulator(input, dtype))
    return _reduced(lambda v, d, k: ops.sum(v, d, k), x, dim, keepdim)


def masked_prod(input, dim=None, keepdim=False, dtype=None, mask=None):
    x = _fill(input, mask, 1, _accumulator(input, dtype))
    return _reduced(lambda v, d, k: ops.prod(v, d, k), x, dim, keepdim)


def masked_amax(input, dim=None, keepdim=False, dtype=None, mask=None):
    x = _fill(input.astype(dtype) if dtype is not None else input, mask, _extreme(dtype or input.dtype, -1))
    return _reduced(lambda v, d, k: ops.amax(v, d, k), x, dim, keepdim)


def masked_amin(input, dim=None, keepdim=False, dtype=None, mask=None):
    x = _fill(input.astype(dtype) if dtype is not None else input, mask, _extreme(dtype or input.dtype, 1))
    return _reduced(lambda v, d, k: ops.amin(v, d, k), x, dim, keepdim)


def masked_argmax(input, dim=None, keepdim=False, dtype=None, mask=None):
    """The index of the largest element kept, in the input's dtype (or dtype), as torch.masked.argmax returns it."""
    x = _fill(input, mask, _extreme(input.dtype, -1))
    flat = dim is None or x.ndim == 0
    out = ops.argmax(x.reshape(-1) if flat else x, 0 if flat else dim, keepdim and not flat)
    if flat and keepdim:
        out = out.reshape((1,) * x.ndim)
    return out.astype(dtype or input.dtype)


def masked_argmin(input, dim=None, keepdim=False, dtype=None, mask=None):
    return masked_argmax(-input, dim, keepdim, dtype or input.dtype, mask)


def masked_mean(input, dim=None, keepdim=False, dtype=None, mask=None):
    """The sum of the elements kept over their count (nan where none is kept)."""
    x = _fill(input, mask, 0, dtype)
    count = _reduced(lambda v, d, k: ops.sum(v, d, k), _kept(x, mask).astype(x.dtype), dim, keepdim)
    return _reduced(lambda v, d, k: ops.sum(v, d, k), x, dim, keepdim) / count


def masked_logsumexp(input, dim=None, keepdim=False, dtype=None, mask=None):
    x = _fill(input, mask, float("-inf"), dtype)
    return _reduced(_logsumexp, x, dim, keepdim)


def _logsumexp(x, dim, keepdim):
    """-inf where every element is -inf, as torch (ops.logsumexp gives nan there)."""
    top = ops.amax(x, dim, True)
    top = ops.where(ops.isinf(top), ops.zeros_like(top), ops.stop_gradient(top))
    out = ops.log(ops.sum(ops.exp(x - top), dim, True)) + top
    return out if keepdim else out.squeeze(dim)


def masked_norm(input, ord=2.0, dim=None, keepdim=False, dtype=None, mask=None):
    """The vector norm of the elements kept (torch's identity: 0, or inf for ord=-inf)."""
    ord = 2.0 if ord is None else ord
    x = _fill(input, mask, float("inf") if ord == float("-inf") else 0.0, dtype)
    if x.ndim == 0:
        return ops.abs(x) if ord != 0 else (x != 0).astype(x.dtype)
    dims = tuple(range(x.ndim)) if dim is None else dim
    return ops.vector_norm(x, ord, dims, keepdim)


def masked_var(input, dim=None, unbiased=None, correction=None, keepdim=False, dtype=None, mask=None):
    """The variance of the elements kept: squared deviations from their mean over (count - correction);
    unbiased (the default) is correction 1."""
    if correction is None:
        correction = 0 if unbiased is False else 1
    x = _fill(input, mask, 0, dtype)
    kept = _kept(x, mask)
    count = _reduced(lambda v, d, k: ops.sum(v, d, k), kept.astype(x.dtype), dim, True)
    mean = _reduced(lambda v, d, k: ops.sum(v, d, k), x, dim, True) / count
    dev = ops.where(kept, x - mean, ops.zeros_like(x))
    total = _reduced(lambda v, d, k: ops.sum(v, d, k), dev * dev, dim, keepdim)
    left = count - correction
    return total / ops.maximum(left if keepdim else left.reshape(total.shape), ops.zeros_like(total))


def masked_std(input, dim=None, unbiased=None, correction=None, keepdim=False, dtype=None, mask=None):
    return ops.sqrt(masked_var(input, dim, unbiased, correction, keepdim, dtype, mask))


def _none_kept(x, mask, dim):
    """Where no element along dim is kept (torch.masked's softmax gives nan there)."""
    return ops.logical_not(ops.any(_kept(x, mask), dim, True))


def masked_softmax(input, dim, dtype=None, mask=None):
    x = _fill(input, mask, float("-inf"), dtype)
    if mask is None:
        return _softmax_kernel(x, dim)   # compat_parts/softmax_slices.py
    none = _none_kept(x, mask, dim)
    # MindSpore 2.10's CPU softmax gives 0 for a slice of all -inf, and garbage in the slices after it
    out = _softmax_kernel(ops.where(none, ops.zeros_like(x), x), dim)
    return ops.where(none, ops.full((), float("nan"), dtype=x.dtype), out)


def masked_log_softmax(input, dim, dtype=None, mask=None):
    x = _fill(input, mask, float("-inf"), dtype)
    out = log_softmax(x, dim)   # compat_parts/softmax_slices.py: float64 kept (ops.log_softmax: float32)
    return out if mask is None else ops.where(_none_kept(x, mask, dim), ops.full((), float("nan"), dtype=x.dtype), out)


def masked_softmin(input, dim, dtype=None, mask=None):
    return masked_softmax(-input, dim, dtype, mask)


def masked_normalize(input, ord, dim, eps=1e-12, dtype=None, mask=None):
    """The elements kept (0 elsewhere) over their norm along dim, clamped to eps."""
    x = _fill(input, mask, 0.0, dtype)
    norm = masked_norm(input, ord, dim, True, dtype, mask)
    return x / ops.maximum(norm, ops.full((), eps, dtype=norm.dtype))


def masked_cumsum(input, dim, dtype=None, mask=None):
    return ops.cumsum(_fill(input, mask, 0, _accumulator(input, dtype)), dim)


def masked_cumprod(input, dim, dtype=None, mask=None):
    return ops.cumprod(_fill(input, mask, 1, _accumulator(input, dtype)), dim)


def masked_median(input, dim=-1, keepdim=False, dtype=None, mask=None):
    """The median of the elements kept (nan where none is): the masked-out elements are NaN to ops.nanmedian."""
    x = _fill(input, mask, float("nan"), dtype)
    if x.ndim == 0:
        return x
    return ops.nanmedian(x, dim, keepdim)[0]


def masked_logaddexp(input, other, dtype=None, input_mask=None, other_mask=None):
    return ops.logaddexp(_fill(input, input_mask, float("-inf"), dtype), _fill(other, other_mask, float("-inf"), dtype))
