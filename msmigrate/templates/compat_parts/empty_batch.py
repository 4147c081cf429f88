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


def repeat_tile(x, reps):
    """Tensor.repeat as ops.tile; an input with no elements gives torch's empty result of the repeated shape
    (MindSpore 2.10's CPU Tile kernel fails on it when it runs, "For 'Tile', fast stride can not be equal to 0":
    YOLOv5's build_targets, where an output layer keeps no target)."""
    if 0 in x.shape:
        shape = (1,) * (len(reps) - x.ndim) + tuple(x.shape)
        return ops.zeros(tuple(s * r for s, r in zip(shape, reps)), x.dtype)
    return ops.tile(x, reps)
