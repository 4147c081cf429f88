"""`x.device`, `x.is_cuda`, `x.is_cpu` read on a tensor (msmigrate/device_reads.py). A MindSpore tensor's
.device is the string 'CPU' (or 'GPU:0'), with no .type or .index, and it has no is_cuda: torch's answers
come from it ('cpu', None; 'cuda', 0). Any other object keeps its own attribute."""
from mindspore import Tensor as _DeviceTensor


def device_of(value):
    """torch's device of a tensor, as _ms_compat.Device ('cpu' where MindSpore says 'CPU')."""
    if isinstance(value, _DeviceTensor):
        return Device(value.device)
    return value.device


def is_on_device(value, kind, attribute):
    """`x.is_cuda` (kind 'cuda') / `x.is_cpu` (kind 'cpu') of a tensor; another object's own attribute."""
    if isinstance(value, _DeviceTensor):
        return Device(value.device).type == kind
    return getattr(value, attribute)
