# A slice with a step on an axis that has axes after it (`x[:, 1::2]` of a 3-D x, swin's
# `dots[:, :, k - 1::k]`): MindSpore 2.10's CPU gradient of that slice stops ("For 'StridedSliceGrad, N input
# memory out of bounds", naming no line; measured PYNATIVE and GRAPH; the same step on the first or the last
# axis differentiates). msmigrate/stepped_slices.py writes such reads through every_nth.


def every_nth(x, axis, step):
    """torch's `x[..., ::step, ...]` along `axis`: for a tensor the axis is moved last, sliced there and moved
    back (the same values, and a gradient MindSpore computes); anything else (a NumPy array) indexed as written."""
    if isinstance(x, ms.Tensor):
        return ops.moveaxis(ops.moveaxis(x, axis, -1)[..., ::step], -1, axis)
    if axis < 0:
        return x[(Ellipsis, slice(None, None, step)) + (slice(None),) * (-axis - 1)]
    return x[(slice(None),) * axis + (slice(None, None, step),)]
