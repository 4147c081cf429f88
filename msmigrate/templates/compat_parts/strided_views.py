"""torch.as_strided on a tensor's values: MindSpore tensors expose no storage or strides, so the strided view is
a gather of the elements it would read from the tensor laid out contiguously (row-major), differentiable as
torch's view is. A torch tensor that is itself a non-contiguous view (x.t(), x[:, 1:]) reads its storage there:
the record says so."""


def as_strided(x, size, stride, storage_offset=None):
    """torch.as_strided(x, size, stride, storage_offset) over x's contiguous values."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} vs {len(size)}")
    index = np.full(size, int(storage_offset or 0), np.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        index = index + (np.arange(n, dtype=np.int64) * st).reshape((1,) * d + (n,) + (1,) * (len(size) - d - 1))
    if index.size and (index.min() < 0 or index.max() >= x.size):
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                           f"{int(storage_offset or 0)} are out of bounds for {x.size} elements")
    return ops.gather(x.reshape(-1), ms.Tensor(index.reshape(-1)), 0).reshape(size)
