"""Tensors that other holders share, changed in place by torch.

`d_loss = d_real; d_loss += d_fake` (msmigrate/aug_aliases.py): torch's `+=` changed the one tensor both
names held; MindSpore's PyNative `+=` made a new one. The alias follows the changed tensor.

`for p in model.parameters(): p.mul_(0.5)`, `mu = state['mu']; mu.mul_(m)` (msmigrate/inplace_holders.py):
MindSpore's own in-place arithmetic leaves the tensor unchanged on CPU, so the new value is computed out of
place and written into the tensor itself, where every holder sees it."""
import operator

import mindspore as ms
from mindspore.common.api import _pynative_executor as _argument_grad_executor


def inplace_alias(changed, alias):
    """`changed` when the alias held a tensor (torch changed it in place), else the alias as it is."""
    return changed if isinstance(alias, ms.Tensor) else alias


def write_into(x, value, reshapes=False):
    """torch's `x.op_(...)` on a tensor others hold: `value` (the out-of-place result) written into x, in
    x's dtype as torch keeps it; returns x. reshapes: t_(), squeeze_(), unsqueeze_(), transpose_(), which
    give x itself a new shape, as every holder of x sees it in torch (assign_value: x's new shape and memory)."""
    if not isinstance(x, ms.Tensor):
        return value
    if value.dtype != x.dtype:
        value = value.astype(x.dtype)
    if reshapes and value.shape != x.shape and not isinstance(x, ms.Parameter):
        x.assign_value(value)
    elif isinstance(x, ms.Parameter):
        ms.ops.assign(x, value)
    else:
        into_memory(x, value)
    return x


def item_in_place(holder, key, value):
    """torch's `holder[key].op_(...)` (and `.copy_(src)`), `value` its out-of-place result, where the converter cannot
    tell what holder is (msmigrate/held_items.py). A dict's or list's entry is a tensor others may hold too (an EMA's
    shadow weights, `dict(model.named_parameters())`): value written into it (write_into, broadcast to it as copy_
    does), as torch changes it. A tensor's row or slice at an integer key is a view in torch: value assigned into the
    tensor (setitem, in place). A key that is a tensor of indices or a mask selects a copy in torch, so the tensor
    stays as it was. Returns the entry as torch's call returns it."""
    if isinstance(holder, ms.Tensor):
        if isinstance(key, ms.Tensor) and (key.ndim > 0 or key.dtype == ms.bool_):
            return value
        holder[key] = value
        return holder[key]
    item = holder[key]
    if isinstance(item, ms.Tensor) and isinstance(value, ms.Tensor) and value.shape != item.shape:
        value = ms.ops.broadcast_to(value, item.shape)
    elif isinstance(item, ms.Tensor) and not isinstance(value, ms.Tensor):
        value = ms.ops.full(item.shape, value, dtype=item.dtype)
    return write_into(item, value)


def into_memory(x, value):
    """value written into x's memory (copy_), which a `p.data` shares with its Parameter (assign_value gives x
    new memory: the Parameter behind it kept its old value). A view into a larger tensor (a row `x[i]`, which
    MindSpore 2.10's copy_ leaves unchanged or refuses, measured) gets new memory of its own, as before: the
    rows a loop changes are written back into their tensor (rows_in_place)."""
    if x.storage_offset() == 0 and x.untyped_storage().nbytes() == x.nbytes:
        x.copy_(value)
    else:
        x.assign_value(value)


_ARGUMENT_WRITE_IN_GRAPH = (
    "the in-place change at {} of a tensor its function was given runs inside a compiled graph (GRAPH mode or "
    "ms.jit), which cannot write into the caller's tensor; run it in PYNATIVE mode "
    "(ms.set_context(mode=ms.PYNATIVE_MODE))")


def write_argument(x, value, where):
    """torch's `x.op_(...)` on a parameter of a function passed on as a value (`partial(inplace_lerp, ...)`), or whose
    caller reads the tensor after and gets something else back (inplace_callers.py): the new value written into the
    caller's tensor (write_into), as torch changes it. Where MindSpore is recording a gradient (inside a train step's
    forward), a write the gradient goes through raises MigrationError naming the line (_data_write says which);
    where a graph compiles, any write does."""
    if not isinstance(x, ms.Tensor):
        return value
    if _compiling(_draw_probe):
        _refuse_compiled(_ARGUMENT_WRITE_IN_GRAPH, where)
    if _argument_grad_executor.requires_grad() and not _data_write(x, value):
        _argument_write_recorded(where)
    return write_into(x, value)


def _data_write(x, value):
    """While a gradient is recorded, a write no gradient goes through: x owns its memory whole (no view, no
    Parameter; copy_ into it) and neither x nor the value is on the gradient's path (no grad node: data, timm's Mixup
    mixing the batch inside the train step). On the path, MindSpore's out-of-place op saved the old x for the
    backward pass, which the write would change (a RuntimeError naming no line, where torch's in-place op saved
    nothing)."""
    return (not isinstance(x, ms.Parameter) and x.storage_offset() == 0 and x.untyped_storage().nbytes() == x.nbytes
            and getattr(x, "_grad_node", None) is None
            and (not isinstance(value, ms.Tensor) or getattr(value, "_grad_node", None) is None))


def write_unrecorded(x, value):
    """torch's in-place change, in a Cell's construct, of a tensor unpacked from a parameter (a kv cache the caller
    keeps: gemma's `k_cache.index_copy_(1, positions, xk)`): written into the caller's tensor, as torch changes it,
    also where a gradient is being recorded (a train step's forward, a taped program's whole run, which records
    what torch's no_grad left out): PyNative's copy_ is differentiated and version-checked as torch's is (a tensor
    saved for the backward pass and changed after raises RuntimeError, measured on 2.10). Where a graph compiles
    the new value only (the caller's tensor stays: the report marks the site as a difference)."""
    if not isinstance(x, ms.Tensor) or _compiling(_draw_probe):
        return value
    return write_into(x, value)


def augmented_argument(x, op, value, where):
    """`x += value` (op "add", "sub", "mul"...) on a parameter of a function: on a tensor torch changes the caller's
    tensor, so the new value is written into it (write_argument); anything else as Python's own augmented
    assignment (a number rebound, a list extended in place)."""
    if isinstance(x, ms.Tensor):
        return write_argument(x, _AUGMENTED[op](x, value), where)
    return _AUGMENTED["i" + op](x, value)


_AUGMENTED = {name: getattr(operator, name) for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow",
                                                         "iadd", "isub", "imul", "itruediv", "ifloordiv", "imod",
                                                         "ipow")}


def _argument_write_recorded(where):
    # through the constexpr: a graph's parser refuses a `raise` of a non-builtin exception in a function it calls
    _raise_migration_error(f"the in-place change at {where} writes into a tensor its function was given while a "
                         "gradient is being recorded (inside a train step's forward): MindSpore's backward pass "
                         "would read the changed tensor; return the new tensor and assign it in the caller")


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
