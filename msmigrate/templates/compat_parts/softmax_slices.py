import mindspore as ms
from mindspore import nn, ops

# torch's softmax on MindSpore's kernel. Measured on MindSpore 2.10 CPU: ops.softmax over a slice whose
# elements are all -inf (an attention row with every key masked) gives 0 where torch gives nan, and leaves
# garbage in the slices after it (the other rows of the batch), silently. Such slices reach the kernel as
# zeros and come back as torch's nan; every other slice is the kernel's own result.


def softmax(input, axis=-1, dtype=None):
    """ops.softmax, but a slice of all -inf gives torch's nan (MindSpore's CPU kernel: 0, and garbage after it)."""
    if dtype is not None:
        input = input.astype(dtype)
    nothing = ops.amax(input, axis, True) == float("-inf")
    out = ops.softmax(ops.where(nothing, ops.zeros_like(input), input), axis)
    return ops.where(nothing, ops.full((), float("nan"), dtype=out.dtype), out)


class Softmax(nn.Cell):
    """torch.nn.Softmax(dim): _ms_compat.softmax as a layer."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return softmax(x, self.axis)


# Measured on MindSpore 2.10 CPU: LogSoftmax (ops.log_softmax, nn.LogSoftmax) computes a float64 input in float32
# (errors ~5e-7 relative, torch's are ~1e-16); its Exp and Log kernels are float64-exact, so float64 is composed
# from them. Other dtypes keep the one kernel.


def log_softmax(input, axis=-1, dtype=None):
    """ops.log_softmax, but float64 computed in float64 (MindSpore's kernel: in float32)."""
    if dtype is not None:
        input = input.astype(dtype)
    if input.dtype != ms.float64:
        return ops.log_softmax(input, axis)
    shifted = input - ops.stop_gradient(ops.amax(input, axis, True))   # a slice of all -inf: nan, as torch
    return shifted - ops.log(ops.sum(ops.exp(shifted), axis, True))


class LogSoftmax(Softmax):
    """torch.nn.LogSoftmax(dim): _ms_compat.log_softmax as a layer."""

    def construct(self, x):
        return log_softmax(x, self.axis)
