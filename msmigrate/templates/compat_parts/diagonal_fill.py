"""torch's Tensor.fill_diagonal_ as a value: the main diagonal (i, i, ..., i) set to fill_value; wrap=True
restarts it every N + 1 rows of a tall matrix, as torch. Built from ops (graph-safe, differentiable in x)."""
import mindspore as ms
from mindspore import ops


def fill_diagonal(x, fill_value, wrap=False):
    shape = tuple(x.shape)
    if len(shape) < 2 or (len(shape) > 2 and len(set(shape)) != 1):
        raise ValueError("fill_diagonal_: torch needs a 2-D tensor or one whose dimensions are all equal")
    numel, step, stride = 1, 0, 1
    for n in reversed(shape):    # the flat step between (i, ..., i) and (i + 1, ..., i + 1): the sum of strides
        step += stride
        stride *= n
    numel = stride
    limit = numel if (wrap and len(shape) == 2) else (min(shape) - 1) * step + 1
    flat = ops.arange(numel).reshape(shape)
    mask = ops.logical_and(flat % step == 0, flat < limit)
    return ops.masked_fill(x, mask, ms.Tensor(fill_value, x.dtype))
