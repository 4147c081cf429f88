"""Tensor reads whose MindSpore value differs from torch's (msmigrate/tensor_reads.py). A MindSpore tensor's
.device is the string 'CPU' (or 'GPU:0'), with no .type or .index, and it has no is_cuda: torch's answers
come from it ('cpu', None; 'cuda', 0). Its .real/.imag are methods, and ops.abs of a complex tensor stays
complex (torch: the real magnitude). Any other object keeps its own attribute or builtin."""
from mindspore import Tensor as _DeviceTensor
from mindspore import ops


def device_of(value):
    """torch's device of a tensor, as _ms_compat.Device ('cpu' where MindSpore says 'CPU')."""
    if isinstance(value, _DeviceTensor):
        return Device(value.device)
    return value.device


class _CompiledDevice:
    """Read while GRAPH mode compiles (properties, like _Backend's): a compiled graph runs on the
    context's device, so there a tensor's device kind is a constant and a branch it guards folds."""

    @property
    def graph_mode(self):
        return ms.get_context("mode") == ms.GRAPH_MODE

    @property
    def kind(self):
        return _MS_DEVICE_TYPES.get(ms.get_context("device_target"), "")


_compiled_device = _CompiledDevice()


def is_on_device(value, kind, attribute):
    """`x.is_cuda` (kind 'cuda') / `x.is_cpu` (kind 'cpu') of a tensor; another object's own attribute."""
    if isinstance(value, _DeviceTensor):
        if kind not in ("cpu", "cuda", "npu"):
            return False    # is_xpu, is_mps...: never MindSpore's; a constant, so GRAPH mode drops the branch
        if _compiled_device.graph_mode:
            # dcgan's `if input.is_cuda and self.ngpu > 1: data_parallel(...)`: a constant in GRAPH mode
            return _compiled_device.kind == kind
        return Device(value.device).type == kind
    return getattr(value, attribute)


def magnitude(value):
    """torch.abs: a complex tensor's |z| is a real tensor (MindSpore's ops.abs keeps the complex dtype)."""
    if isinstance(value, _DeviceTensor):
        if ops.is_complex(value):
            return ops.real(ops.abs(value))
        return ops.abs(value)
    return abs(value)


def transposed_read(value, name):
    """`x.H`, `x.mH`, `x.mT` (name): a 0-d tensor, which torch takes (its conjugate for H/mH, itself for mT) and
    MindSpore's properties refuse; any other value's own property."""
    if isinstance(value, _DeviceTensor) and value.ndim == 0:
        return value if name == "mT" else ops.conj(value)
    return getattr(value, name)


def real_part(value):
    """`z.real` of a tensor (MindSpore's Tensor.real is a method): the real part, a real tensor itself."""
    if isinstance(value, _DeviceTensor):
        return ops.real(value)
    return value.real


def imag_part(value):
    """`z.imag` of a tensor (MindSpore's Tensor.imag is a method)."""
    if isinstance(value, _DeviceTensor):
        return ops.imag(value)
    return value.imag
