"""torch's ops along a dimension take a 0-d tensor as a one-element vector (dim 0 or -1): index_select /
index_add / index_copy / index_fill / index_reduce, cummax / cummin / logcumsumexp, quantile. The MindSpore ops
reject a 0-d input (no axis 0), so the 0-d tensors run as shape (1,) and each result is 0-d again.
"""
import mindspore as ms
from mindspore import ops


def as_vector(op, x, *args):
    """op(x, *args); when x is 0-d, x and the 0-d tensors among args run as shape (1,) and every result (one
    tensor or a tuple) is reshaped to 0-d, as torch returns it."""
    if x.ndim:
        return op(x, *args)
    out = op(ops.reshape(x, (1,)), *(ops.reshape(a, (1,)) if isinstance(a, ms.Tensor) and a.ndim == 0 else a
                                     for a in args))
    if isinstance(out, tuple):
        return tuple(ops.reshape(o, ()) for o in out)
    return ops.reshape(out, ())
