"""Tensor reads whose MindSpore value differs from torch's (msmigrate/tensor_reads.py). A MindSpore tensor's
.device is the string 'CPU' (or 'GPU:0'), with no .type or .index, and it has no is_cuda: torch's answers
come from it ('cpu', None; 'cuda', 0). Its .real/.imag are methods, and ops.abs of a complex tensor stays
complex (torch: the real magnitude). Any other object keeps its own attribute or builtin."""
import sys

from mindspore import Tensor as _DeviceTensor
from mindspore import ops


def device_of(value):
    """torch's device of a tensor, as _ms_compat.Device ('cpu' where MindSpore says 'CPU'). While GRAPH mode
    compiles it, the context's device as a constant (_CompiledDeviceValue): a tensor's .device there is a run-time
    Python object (JIT fallback) that every value made from it becomes too (mlm-pytorch's `device = mask.device`
    fed `torch.rand(..., device=device)`, and the compiled step's random draws then ran out of the graph)."""
    if isinstance(value, _DeviceTensor):
        if _compiled_device.compiling:
            return _compiled_device.value
        return Device(value.device)
    return value.device


class _CompiledDeviceValue:
    """torch's device of every tensor inside a compiled graph (MindSpore runs one device per context): a constant
    object GRAPH mode reads there (a str subclass would become a plain string, without .type), with torch's .type
    and .index, str(), and == / != against a device or its name (torch's or MindSpore's: 'cpu', 'CPU')."""

    def __init__(self, device):
        self.text = str(device)
        self.type = device.type
        self.index = device.index
        ms_kind = {"cpu": "CPU", "cuda": "GPU", "npu": "Ascend"}.get(self.type, self.type)
        self.names = (self.text, ms_kind if device.index is None else ms_kind + ":" + str(device.index))

    def __eq__(self, other):
        return str(other) in self.names

    def __ne__(self, other):
        return str(other) not in self.names

    def __hash__(self):
        return hash(self.text)

    def __str__(self):
        return self.text

    def __format__(self, spec):
        return format(self.text, spec)

    def __repr__(self):
        return repr(Device(self.text))


class _CompiledDevice:
    """Read while GRAPH mode compiles (properties, like _Backend's): a compiled graph runs on the
    context's device, so there a tensor's device kind is a constant and a branch it guards folds."""

    @property
    def graph_mode(self):
        return ms.get_context("mode") == ms.GRAPH_MODE

    @property
    def kind(self):
        return _MS_DEVICE_TYPES.get(ms.get_context("device_target"), "")

    @property
    def compiling(self):
        """True while GRAPH mode compiles the caller (MindSpore's compile is on the stack): a Python run of the
        same code, in either mode, keeps reading the tensor's own device."""
        if not self.graph_mode:
            return False
        frame = sys._getframe(1)
        while frame is not None:
            name = frame.f_code.co_filename.replace("\\", "/")
            if frame.f_code.co_name == "compile" and name.endswith(("mindspore/graph/api.py",
                                                                     "mindspore/common/api.py")):
                return True
            frame = frame.f_back
        return False

    @property
    def value(self):
        target = ms.get_context("device_target")
        if target == "CPU":
            return _CompiledDeviceValue(Device("cpu"))
        return _CompiledDeviceValue(Device(target + ":" + str(ms.get_context("device_id"))))


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
