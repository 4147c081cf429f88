"""torch's `x.data.lerp_(new, w)` / `p.data.mul_(d)` as a statement: the value of x changed in place with no
gradient recorded (an EMA buffer, a codebook passed to a helper). MindSpore's in-place arithmetic leaves the
tensor unchanged on CPU, so the out-of-place value is written into x itself, where its holders (a Cell's
Parameter) see it (msmigrate/data_writes.py). (_compiling, _draw_probe, _refuse_compiled: host_draws.py)"""
import mindspore as ms
from mindspore import ops

_DATA_WRITE_REFUSAL = (
    "the in-place write through `.data` at {} changes a tensor that is no Parameter inside a compiled graph "
    "(GRAPH mode or ms.jit), where only a Parameter can be written. Make it a Parameter (a buffer of the "
    "module), or run this network in PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE))")


def write_data(x, value, where):
    """`value` (the out-of-place result, no gradient through it) written into x in x's dtype, as torch's
    in-place method on x.data; a Parameter through ops.assign (GRAPH and PyNative), another tensor (a `p.data`,
    sharing its Parameter's memory) through copy_ in PyNative only: compiling a graph that writes one raises
    MigrationError naming the line."""
    value = ops.stop_gradient(value)
    if value.dtype != x.dtype:
        value = value.astype(x.dtype)
    if isinstance(x, ms.Parameter):
        ops.assign(x, value)
        return x
    if _compiling(_draw_probe):
        _refuse_compiled(_DATA_WRITE_REFUSAL, where)
    if getattr(x, "_requires_grad", False):
        # a leaf of PyNative's recorded graph (`delta.requires_grad = True`): torch's .data write bypasses
        # autograd, MindSpore's in-place copy into such a leaf is refused outside no_grad
        with ms._no_grad():
            into_memory(x, value)
        return x
    into_memory(x, value)     # which the Parameter of a `p.data` shares
    return x


def store_data(x, value, where):
    """torch's `x.data = value` (SAM's `p.data = old_p`): a value of x's shape and dtype written into x's memory
    (write_data), where a step compiled before reads it (MindSpore's data setter gives a Parameter new memory, and
    such a step went on with the old); another shape or dtype, or no tensor: x takes the value, as torch's."""
    if isinstance(x, ms.Tensor) and isinstance(value, ms.Tensor) and value.shape == x.shape \
            and value.dtype == x.dtype:
        return write_data(x, value, where)
    x.data = value
    return x


def broadcast_as(value, x):
    """value broadcast to x's shape, as torch's x.copy_(value) takes it."""
    if not isinstance(value, ms.Tensor):
        value = ms.Tensor(value, x.dtype)
    if value.shape != x.shape:
        value = ops.broadcast_to(value, x.shape)
    return value


_WHOLE_STORE_REFUSAL = (
    "the store into the whole of a Parameter (`x[:] = v`) at {} runs inside a compiled graph (GRAPH mode or "
    "ms.jit), where MindSpore 2.10 leaves the Parameter unchanged. Write it under torch.no_grad() or through "
    "x.data (the store then becomes ops.assign), or run this network in PYNATIVE mode "
    "(ms.set_context(mode=ms.PYNATIVE_MODE))")


def whole_store_value(x, value, where):
    """value, for `x[:] = value` in grad mode; a Parameter inside a compiled graph refuses (msmigrate/data_writes.py)."""
    if isinstance(x, ms.Parameter) and _compiling(_draw_probe):
        _refuse_compiled(_WHOLE_STORE_REFUSAL, where)
    return value
