# torch.roll by a shift known at run time only, a tensor's value (Autoformer's time-delay aggregation:
# `torch.roll(values, -int(index[i]), -1)`, index from torch.topk): in GRAPH mode int() of a tensor is a
# variable, and mindspore.numpy.roll takes constant shifts only ("input shift and axis must be tuple or list or
# int"). A gather of the rolled positions takes a variable, and differentiates as the roll does.


def roll_by(x, shift, dim):
    """torch.roll(x, shift, dim) for one dimension, `shift` a value (a Python int or a variable of a compiled graph)."""
    if x.size == 0:
        return x
    n = x.shape[dim]
    return ops.gather(x, ops.remainder(ops.arange(n) - shift, n), dim % x.ndim)
