# torch.scatter_reduce / Tensor.scatter_reduce(_) with every reduction torch has ('sum', 'prod', 'mean', 'amax',
# 'amin'), with or without the input's own values (include_self). MindSpore 2.10's CPU TensorScatterElements
# reduces by 'add' only: each value goes to its flat target position and the unsorted segment reductions
# combine the values that share one.

_SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(input, dim, index, src, reduce, include_self=True):
    """torch.scatter_reduce(input, dim, index, src, reduce, include_self=include_self)."""
    if reduce not in _SCATTER_REDUCTIONS:
        raise ValueError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    shape = input.shape
    d = dim % max(len(shape), 1)
    src = src[tuple(slice(0, n) for n in index.shape)]    # torch reads src only where index is
    # the flat position of each value's target: index's own coordinates with dim's replaced by the index
    flat = ops.zeros(index.shape, ms.int32)
    stride = 1
    for k in range(len(shape) - 1, -1, -1):
        if k == d:
            coord = index.astype(ms.int32)
        else:
            coord = ops.arange(index.shape[k], dtype=ms.int32).reshape(
                tuple(-1 if j == k else 1 for j in range(len(shape))))
        flat = flat + coord * stride
        stride *= shape[k]
    flat, values, x = flat.reshape(-1), src.reshape(-1), input.reshape(-1)
    size = x.shape[0]
    count = ops.unsorted_segment_sum(ops.ones(values.shape, ms.float32), flat, size)
    hit = count > 0
    if reduce in ("sum", "mean"):
        seg = ops.unsorted_segment_sum(values, flat, size)
        out = x + seg if include_self else ops.where(hit, seg, x)
        if reduce == "mean":
            n = (count + 1 if include_self else ops.maximum(count, ops.ones_like(count))).astype(out.dtype)
            out = out / n if ops.is_floating_point(out) else ops.floor_divide(out, n)   # torch: integers floor
    elif reduce == "prod":
        seg = ops.unsorted_segment_prod(values, flat, size)
        out = x * seg if include_self else ops.where(hit, seg, x)
    else:
        seg = (ops.unsorted_segment_max if reduce == "amax" else ops.unsorted_segment_min)(values, flat, size)
        if include_self:
            seg = ops.maximum(x, seg) if reduce == "amax" else ops.minimum(x, seg)
        out = ops.where(hit, seg, x)
    return out.reshape(shape)


def scatter_src(input, dim, index, src):
    """Tensor.scatter(dim, index, src) / torch.scatter with a src that is no literal: torch takes a tensor (read
    only where index is: sliced to index's shape) or, by the value overload, a Python number (a float for
    ScatterValue's CPU kernels, whatever the input's dtype)."""
    if isinstance(src, ms.Tensor):
        return ops.scatter(input, dim, index, ops.slice(src, (0,) * index.ndim, index.shape))
    return ops.scatter(input, dim, index, float(src))


def scatter_with(input, dim, index, src, reduce):
    """Tensor.scatter(dim, index, src or value, reduce='add' | 'multiply') and torch.scatter(..., reduce=):
    scatter_reduce's 'sum' / 'prod' with the input's own values; a number is that value wherever index is."""
    if reduce not in ("add", "multiply"):
        raise ValueError(f"reduce argument must be either add or multiply, got {reduce}")
    if not isinstance(src, ms.Tensor):
        src = ops.full(index.shape, src, dtype=input.dtype)
    return scatter_reduce(input, dim, index, src.astype(input.dtype), "sum" if reduce == "add" else "prod")
