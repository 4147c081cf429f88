"""A value an earlier train step computed and a later step recomputes for its gradient (msmigrate/train_loop.py
_recomputed_with_value_kept: `gen = G(z)` before a discriminator step, read again by the generator step)."""
import mindspore as ms
from mindspore import ops


def value_kept(held, recomputed):
    """held in value, recomputed in gradient: `stop_gradient(held) + (r - stop_gradient(r))` for a tensor, item by
    item in tuples and lists (melgan's Discriminator returns a list per scale of each layer's features); any other
    value is held as it is (torch computed it once, before the earlier step's update)."""
    if isinstance(held, ms.Tensor) and isinstance(recomputed, ms.Tensor):
        return ops.stop_gradient(held) + (recomputed - ops.stop_gradient(recomputed))
    if isinstance(held, tuple):
        return tuple(value_kept(h, r) for h, r in zip(held, recomputed))
    if isinstance(held, list):
        return [value_kept(h, r) for h, r in zip(held, recomputed)]
    return held


def repacked(items, how):
    """A tensor made again from the names unpacked from it, after one of them changed in place (torch's change
    showed through the tensor, whose rows they are: msmigrate/inplace_views.py): `gi, gj = gij.T` ('T': the rows
    of the reversed tensor), `a, b = x.unbind(d)` ('unbind:d')."""
    if how == "T":
        stacked = ops.stack(items, 0)
        return ops.permute(stacked, tuple(range(stacked.ndim - 1, -1, -1)))
    return ops.stack(items, int(how.split(":")[1]))
