"""torch.meshgrid for any count of tensors: MindSpore's Meshgrid primitive rejects one tensor in a compiled
graph (`*[t]`, `*axes` holding one) and a 0-d tensor everywhere; torch takes both (a 0-d tensor counts as one
element). Each input becomes a view along its own axis, broadcast to the grid's shape: values as torch's, and
the gradient of each input is the sum over the other axes, as torch's.
"""
from mindspore import ops


def meshgrid(*tensors, indexing="ij"):
    """torch.meshgrid(*tensors, indexing=...): one grid tensor per input, all of the grid's shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        if t.ndim > 1:      # torch refuses it too; flattening would be a silent other grid
            raise ValueError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of "
                             "{} dimensions".format(t.ndim))
    flat = [ops.reshape(t, (-1,)) for t in tensors]
    axes = list(range(len(flat)))
    if indexing == "xy" and len(flat) > 1:
        axes[0], axes[1] = 1, 0          # 'xy': the first two inputs swap places in the grid's shape
    shape = [0] * len(flat)
    for t, axis in zip(flat, axes):
        shape[axis] = t.shape[0]
    grids = []
    for t, axis in zip(flat, axes):
        view = [1] * len(flat)
        view[axis] = t.shape[0]
        grids.append(ops.broadcast_to(ops.reshape(t, tuple(view)), tuple(shape)))
    return tuple(grids)
