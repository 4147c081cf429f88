"""Reductions that give torch's value when the input has no elements.

MindSpore 2.10's CPU reduction kernels leave their output uninitialised for an empty input
(a sum of nothing is garbage, any() True, mean() -inf; torch: 0, False, nan, and -inf for
logsumexp): `loss[mask].sum()` with no positive is such a reduction. The same holds for prod over
an empty dim (torch: 1), nansum (0), nanmean (nan), vector norms (0), the median of nothing (nan),
and var/std, which MindSpore gives as 0 (torch: nan). Where torch refuses the reduction (amax /
amin / max / min of nothing, the median along an empty dim) the helper raises as torch does.
The test on the element count costs nothing in PyNative and is folded while compiling a static
shape; under GRAPH mode a dynamic one (`x[mask]`) makes it a branch, which compiles and
differentiates as well.
"""
from mindspore import ops


def _filled(x, out, value):
    """`out`, or `value` in its shape when `x` has no elements (an empty `out` stays empty)."""
    if x.size == 0:     # a Python int in PyNative (ops.size costs a dispatch, ~30 us)
        return ops.full_like(out, value)
    return out


def _nonempty(x, out, name):
    """`out`, after torch's error when a reduction of `x` has no element to pick from."""
    if x.size == 0 and out.size > 0:
        raise ValueError(name + "(): Expected reduction dim to have non-zero size (the input has no elements)")
    return out


def reduce_sum(x, dim=None, keepdim=False, dtype=None):
    return _filled(x, ops.sum(x, dim, keepdim, dtype=dtype), 0)


def reduce_mean(x, dim=None, keepdim=False):
    return _filled(x, ops.mean(x, dim, keepdim), float("nan"))


def reduce_any(x, dim=None, keepdim=False):
    return _filled(x, ops.any(x, dim, keepdim), False)


def reduce_logsumexp(x, dim, keepdim=False):
    return _filled(x, ops.logsumexp(x, dim, keepdim), float("-inf"))


def reduce_prod(input, axis=None, keep_dims=False, dtype=None):
    return _filled(input, ops.prod(input, axis, keep_dims, dtype), 1)


def reduce_nansum(input, axis=None, keepdims=False, dtype=None):
    return _filled(input, ops.nansum(input, axis, keepdims, dtype=dtype), 0)


def reduce_nanmean(input, axis=None, keepdims=False, dtype=None):
    return _filled(input, ops.nanmean(input, axis, keepdims, dtype=dtype), float("nan"))


def reduce_vector_norm(x, ord=2, axis=None, keepdims=False, dtype=None):
    axis = tuple(axis) if isinstance(axis, list) else axis   # torch takes a list of dims, ops.vector_norm a tuple
    if ord in (float("inf"), float("-inf")):      # torch: the inf norm of nothing has no identity
        return _nonempty(x, ops.vector_norm(x, ord, axis, keepdims, dtype=dtype), "linalg.vector_norm")
    return _filled(x, ops.vector_norm(x, ord, axis, keepdims, dtype=dtype), 0)


def reduce_norm(A, ord=None, dim=None, keepdim=False, dtype=None):
    """torch.linalg.norm (ops.norm): 0 for an input with no elements, torch's error for the inf norms."""
    dim = tuple(dim) if isinstance(dim, list) else dim   # torch takes a list of dims, ops.norm a tuple
    if ord in (float("inf"), float("-inf")):
        return _nonempty(A, ops.norm(A, ord, dim, keepdim, dtype=dtype), "linalg.norm")
    return _filled(A, ops.norm(A, ord, dim, keepdim, dtype=dtype), 0)


def reduce_std(input, axis=None, ddof=0, keepdims=False):
    axis = tuple(axis) if isinstance(axis, list) else axis   # torch takes a list of dims, ops.std a tuple
    return _filled(input, ops.std(input, axis, ddof, keepdims), float("nan"))


def reduce_var(input, axis=None, ddof=0, keepdims=False):
    axis = tuple(axis) if isinstance(axis, list) else axis   # torch takes a list of dims, ops.var a tuple
    return _filled(input, ops.var(input, axis, ddof, keepdims), float("nan"))


def reduce_std_mean(input, axis=None, ddof=0, keepdims=False):
    axis = tuple(axis) if isinstance(axis, list) else axis   # torch takes a list of dims, ops.std_mean a tuple
    spread, mean = ops.std_mean(input, axis, ddof, keepdims)
    return _filled(input, spread, float("nan")), _filled(input, mean, float("nan"))


def reduce_var_mean(input, axis=None, ddof=0, keepdims=False):
    axis = tuple(axis) if isinstance(axis, list) else axis   # torch takes a list of dims, ops.var_mean a tuple
    spread, mean = ops.var_mean(input, axis, ddof, keepdims)
    return _filled(input, spread, float("nan")), _filled(input, mean, float("nan"))


def reduce_amax(input, axis=None, keepdims=False):
    return _nonempty(input, ops.amax(input, axis, keepdims), "amax")


def reduce_amin(input, axis=None, keepdims=False):
    return _nonempty(input, ops.amin(input, axis, keepdims), "amin")


def median_all(x):
    """torch.median(x): the lower median of all elements, nan when there is none."""
    return _filled(x, ops.median(ops.reshape(x, (-1,)), 0)[0], float("nan"))


def median_dim(input, axis=-1, keepdims=False):
    values, indices = ops.median(input, axis, keepdims)
    return _nonempty(input, values, "median"), indices


def bincount(input, weights=None, minlength=0):
    """torch.bincount: int64 counts; weighted sums in float32 for float32 weights, else float64 (ops.bincount
    sums in float32); an input with no elements gives minlength int64 zeros, weights or not, as torch
    (ops.bincount's result is unusable)."""
    if input.size == 0:
        return ops.zeros(minlength, ms.int64)
    dtype = ms.int64 if weights is None else ms.float32 if weights.dtype == ms.float32 else ms.float64
    length = max(int(input.max()) + 1, minlength)
    if weights is None:
        return ops.bincount(input, None, minlength).astype(dtype)
    return ops.unsorted_segment_sum(weights.astype(dtype), input, length)


def histogram(input, bins, range=None, weight=None, density=False):
    """torch.histogram: (counts, bin edges) in the input's dtype. An integer bins spans range (else the data's
    min and max, read on the host), widened by 0.5 each side when empty, as torch; a float32 count without weight
    or density is ops.histc; otherwise index floor((x - lo) * bins / (hi - lo)) in the input's dtype (float64 has
    no Histogram kernel), the right edge in the last bin, values outside left out, as torch. A tensor bins gives
    the edges (bin = the last edge <= x). weight sums weights instead of counting; density divides by the total
    and the bin widths."""
    x = input.reshape(-1)
    if isinstance(bins, ms.Tensor):
        edges = bins.astype(input.dtype)
        lo, hi, n = edges[0], edges[-1], edges.shape[0] - 1
        index = ops.clamp(ops.searchsorted(edges, x, out_int32=True, right=True) - 1, 0, n - 1)
    else:
        lo, hi = (float(x.min()), float(x.max())) if range is None and x.size else (0.0, 0.0) if range is None \
            else (float(range[0]), float(range[1]))
        lo, hi, n = (lo - 0.5, hi + 0.5, bins) if lo == hi else (lo, hi, bins)
        edges = ops.linspace(ms.Tensor(lo, input.dtype), ms.Tensor(hi, input.dtype), bins + 1).astype(input.dtype)
        if weight is None and not density and input.dtype != ms.float64:
            return ops.histc(input, bins, lo, hi), edges
        index = ops.clamp(ops.floor((x - lo) * bins / (hi - lo)), 0, bins - 1).astype(ms.int32)
    inside = ops.logical_and(x >= lo, x <= hi).astype(input.dtype)
    counts = ops.unsorted_segment_sum(inside if weight is None else inside * weight.reshape(-1).astype(input.dtype),
                                      index, n)
    if density:
        counts = counts / (counts.sum() * (edges[1:] - edges[:-1]))
    return counts, edges
