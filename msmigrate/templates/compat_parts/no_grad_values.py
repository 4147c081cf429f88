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


def unrecorded_state(fn):
    """A function decorated `@torch.no_grad()` that changes its module's state (s4's SSMKernelDPLR._setup_C, run by
    the first forward inside the train step: `self.C.copy_(...)`, `self.l_kernel = ...`): run with MindSpore's
    recording off, as torch's no_grad runs it (MindSpore refuses an in-place write into a Parameter while a
    gradient is recorded: "A leaf tensor that requires grad is being used in an inplace operator")."""
    def unrecorded(*args, **kwargs):
        with ms._no_grad():
            return fn(*args, **kwargs)
    unrecorded.__name__, unrecorded.__qualname__, unrecorded.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    unrecorded.__wrapped__ = fn
    return unrecorded
