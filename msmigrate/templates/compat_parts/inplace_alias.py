"""Tensors that other holders share, changed in place by torch.

`d_loss = d_real; d_loss += d_fake` (msmigrate/aug_aliases.py): torch's `+=` changed the one tensor both
names held; MindSpore's PyNative `+=` made a new one. The alias follows the changed tensor.

`for p in model.parameters(): p.mul_(0.5)`, `mu = state['mu']; mu.mul_(m)` (msmigrate/inplace_holders.py):
MindSpore's own in-place arithmetic leaves the tensor unchanged on CPU, so the new value is computed out of
place and written into the tensor itself, where every holder sees it."""
import mindspore as ms


def inplace_alias(changed, alias):
    """`changed` when the alias held a tensor (torch changed it in place), else the alias as it is."""
    return changed if isinstance(alias, ms.Tensor) else alias


def write_into(x, value):
    """torch's `x.op_(...)` on a tensor others hold: `value` (the out-of-place result) written into x, in
    x's dtype as torch keeps it; returns x."""
    if not isinstance(x, ms.Tensor):
        return value
    if value.dtype != x.dtype:
        value = value.astype(x.dtype)
    if isinstance(x, ms.Parameter):
        ms.ops.assign(x, value)
    else:
        x.assign_value(value)
    return x
