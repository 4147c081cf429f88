"""A value bound under a removed `with torch.no_grad():` inside a train step (msmigrate/no_grad_values.py)."""
import mindspore as ms
from mindspore import ops


def no_grad_value(value):
    """The value with no gradient flowing through it, as torch's no_grad made it: tensors (also in tuples
    and lists) through ops.stop_gradient; Parameters, Cells and other objects unchanged (a Parameter keeps
    its identity, which later in-place updates need)."""
    if isinstance(value, ms.Parameter):
        return value
    if isinstance(value, ms.Tensor):
        return ops.stop_gradient(value)
    if isinstance(value, tuple):
        return tuple(no_grad_value(v) for v in value)
    if isinstance(value, list):
        return [no_grad_value(v) for v in value]
    return value
