"""torch.nn.init's structured initialisers with no mindspore.common.initializer counterpart
(eye_, dirac_, sparse_): the values are built with NumPy, as torch builds them, and written in place
like the other nn.init helpers (Parameter.set_data, or Tensor.copy_ for a plain tensor)."""
import math

import mindspore as ms
import numpy as np


def _init_np_dtype(param):
    return ms.dtype_to_nptype(param.dtype)


def eye_(param):
    """torch.nn.init.eye_: the identity matrix of a 2-D tensor's shape."""
    if len(param.shape) != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _assign(param, ms.Tensor(np.eye(param.shape[0], param.shape[1], dtype=_init_np_dtype(param))))


def dirac_(param, groups=1):
    """torch.nn.init.dirac_: a convolution kernel (3-5 dims) that passes its input channels through."""
    shape = tuple(param.shape)
    if len(shape) not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    if shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = shape[0] // groups
    value = np.zeros(shape, dtype=_init_np_dtype(param))
    centre = tuple(s // 2 for s in shape[2:])
    for g in range(groups):
        for d in range(min(out_per_group, shape[1])):
            value[(g * out_per_group + d, d) + centre] = 1
    return _assign(param, ms.Tensor(value))


def sparse_(param, sparsity, std=0.01, generator=None):
    """torch.nn.init.sparse_: N(0, std) values with ceil(sparsity * rows) zeros in every column
    (a dense tensor; the random stream differs from torch's)."""
    if len(param.shape) != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = param.shape
    num_zeros = int(math.ceil(sparsity * rows))
    value = np.random.normal(0.0, std, (rows, cols))
    for col in range(cols):
        value[np.random.permutation(rows)[:num_zeros], col] = 0
    return _assign(param, ms.Tensor(value.astype(_init_np_dtype(param))))
