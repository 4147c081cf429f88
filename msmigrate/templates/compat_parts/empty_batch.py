"""Batch-first ops whose MindSpore kernel rejects an input with no samples (N = 0), which torch takes: padding
in reflect / replicate / circular mode, unfold (im2col), adaptive average pooling. The op runs on one sample
of zeros to learn the shape of a sample's result, and the result has that shape with N = 0, as torch's.
"""
from mindspore import ops


def on_empty_batch(op, x, *args):
    """op(x, *args); when x has no samples (its first dimension is 0), the empty result of torch's shape."""
    if x.ndim == 0 or x.shape[0]:
        return op(x, *args)
    return op(ops.zeros((1,) + x.shape[1:], x.dtype), *args)[:0]
