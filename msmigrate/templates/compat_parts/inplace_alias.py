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


def rows_in_place(xs):
    """`for t, m in zip(x, mean): t.sub_(m)`: torch's rows are views of x, so the change reaches x; MindSpore's
    are copies, so each row is written back into x once its iteration is over (or the loop left it)."""
    if not isinstance(xs, ms.Tensor):
        yield from xs
        return
    for i in range(xs.shape[0]):
        row = xs[i]
        try:
            yield row
        finally:
            xs[i] = row


def row_replaced(xs, i, row):
    """torch's in-place change of row i of x (a view): x with row i replaced, out of place (GRAPH-compatible,
    differentiable), in x's dtype; a list or tuple gets item i replaced."""
    if i < 0:
        i = i + len(xs)
    if isinstance(xs, list):
        return xs[:i] + [row] + xs[i + 1:]
    if isinstance(xs, tuple):
        return xs[:i] + (row,) + xs[i + 1:]
    mask = ms.ops.arange(xs.shape[0]).reshape((-1,) + (1,) * (xs.ndim - 1)) == i
    return ms.ops.where(mask, row.astype(xs.dtype), xs)
