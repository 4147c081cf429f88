"""torch.mode: MindSpore has no mode op. Every pair along dim is compared (memory n^2 per row); the value is the
smallest of the most frequent ones and the index the last position holding it, as torch on CPU; a 0-d input is
its own mode at index 0. A plain (values, int64 indices) tuple: `.values`/`.indices` reads of the result become
[0]/[1] (msmigrate/unmapped_tensor_api.py)."""


def mode(input, dim=-1, keepdim=False):
    """torch.mode(input, dim, keepdim) -> (values, indices)."""
    if input.ndim == 0:
        return input, ops.zeros((), ms.int64)
    d = dim % input.ndim
    y = ops.moveaxis(input, d, -1)
    counts = (y[..., :, None] == y[..., None, :]).astype(ms.int32).sum(-1)
    values = ops.amin(ops.where(counts == ops.amax(counts, -1, True), y, ops.amax(y, -1, True)), -1)
    indices = ops.amax(ops.arange(y.shape[-1], dtype=ms.int64) * (y == values[..., None]).astype(ms.int64), -1)
    if keepdim:
        return ops.expand_dims(values, d), ops.expand_dims(indices, d)
    return values, indices
