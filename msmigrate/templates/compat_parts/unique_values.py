"""torch.unique: the sorted distinct values, each element's position among them, their counts. ops.unique keeps
first-appearance order; its own inverse, mapped through the sort's ranks, is exact. MindSpore 2.10's CPU sort
compares float64 as float32 (it rounded the values too), so float64 is done on the host, as dim= is (the distinct
slices along dim: NumPy's lexicographic order is torch's; torch.unique has no gradient either)."""


def unique(x, return_inverse=False, return_counts=False, dim=None):
    """torch.unique(x, sorted=True, return_inverse, return_counts, dim): the values alone, or a tuple."""
    if dim is not None or x.dtype == ms.float64:
        found = np.unique(x.asnumpy(), return_inverse=True, return_counts=True, axis=dim)
        values, counts = ms.Tensor(found[0]), ms.Tensor(found[2].astype(np.int64))
        inverse = ms.Tensor(found[1].astype(np.int64).reshape(-1 if dim is not None else x.shape))
    else:
        first, idx = ops.unique(x.reshape(-1))
        values, order = ops.sort(first)
        rank = ops.argsort(order.astype(ms.int32)).astype(ms.int64)
        inverse = ops.gather(rank, idx, 0).reshape(x.shape)
        counts = ops.bincount(inverse.reshape(-1).astype(ms.int32), minlength=values.shape[0]).astype(ms.int64)
    extra = ([inverse] if return_inverse else []) + ([counts] if return_counts else [])
    return (values, *extra) if extra else values
