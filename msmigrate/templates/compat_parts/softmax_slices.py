import mindspore as ms
from mindspore import nn, ops

# torch's softmax on MindSpore's kernel. Measured on MindSpore 2.10 CPU: ops.softmax over a slice whose
# elements are all -inf (an attention row with every key masked) gives 0 where torch gives nan, and leaves
# garbage in the slices after it (the other rows of the batch), silently. Such slices reach the kernel as
# zeros and come back as torch's nan; every other slice is the kernel's own result.


def _softmax_kernel(input, axis):
    """ops.softmax(input, axis); over an axis of length 1 torch's value there, 1 (nan at inf or nan), and its zero
    gradient (nan there) as exp(x - x): MindSpore 2.10 reuses the gradient it builds for the first ops.softmax of a
    rank differentiated in a process, and built over a length-1 axis it is wrong for every later input of that
    rank (an attention over one token trained before another model; docs/converter.md)."""
    if input.ndim and input.shape[axis] == 1:
        return ops.exp(input - input)
    return ops.softmax(input, axis)


def softmax(input, axis=-1, dtype=None):
    """ops.softmax, but a slice of all -inf gives torch's nan (MindSpore's CPU kernel: 0, and garbage after it)."""
    if dtype is not None:
        input = input.astype(dtype)
    nothing = ops.amax(input, axis, True) == float("-inf")
    out = _softmax_kernel(ops.where(nothing, ops.zeros_like(input), input), axis)
    return ops.where(nothing, ops.full((), float("nan"), dtype=out.dtype), out)


class Softmax(nn.Cell):
    """torch.nn.Softmax(dim): _ms_compat.softmax as a layer."""
    dim = _TorchSetting(lambda layer: layer.axis)    # torch's name of the setting (layer_settings.py)

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return softmax(x, self.axis)


def softmin(input, axis=-1, dtype=None):
    """torch.nn.functional.softmin: softmax(-x), so a slice of all +inf gives torch's nan (ops.softmin: 0, and
    garbage after it)."""
    if dtype is not None:
        input = input.astype(dtype)
    return softmax(-input, axis)


class Softmin(Softmax):
    """torch.nn.Softmin(dim): _ms_compat.softmin as a layer; built without dim (axis None), torch's deprecated
    implicit dim: 0 for 0-, 1- and 3-D inputs, else 1."""

    def construct(self, x):
        axis = self.axis if self.axis is not None else (0 if x.ndim in (0, 1, 3) else 1)
        return softmin(x, axis)


def log_softmax(input, axis=-1, dtype=None):
    """torch.log_softmax as x - logsumexp(x): ops.log_softmax computes a float64 input in float32 (off by ~3e-6).
    MindSpore 2.10's ops.log_softmax / nn.LogSoftmax are also ~30 ulp off in float32; this form matches torch in
    both, gradients included, and gives torch's nan over a slice of all -inf. On CPU a float32 input follows
    torch's kernel step by step, (x - max) - log(sum(exp(x - max))), each exp and the sum rounded to float32 as
    torch's are, the exp and log exact (in float64): MindSpore's CPU float32 exp is off by up to 6.5e-6, and x -
    logsumexp(x) was a few ulp from torch (log_softmax(arange(10, 15)) 1.3e-6, a slice over dim 1 of a 3-d
    input 4e-6 relative)."""
    if dtype is not None:
        input = input.astype(dtype)
    if float64_on_cpu(input.dtype):      # compat_parts/cpu_float32_kernels.py
        shifted = input - ops.stop_gradient(ops.amax(input, axis, True))
        total = ops.sum(ops.exp(shifted.astype(ms.float64)).astype(ms.float32), axis, keepdim=True)
        return shifted - ops.log(total.astype(ms.float64)).astype(ms.float32)
    return input - ops.logsumexp(input, axis, True)


class LogSoftmax(Softmax):
    """torch.nn.LogSoftmax(dim): _ms_compat.log_softmax as a layer."""

    def construct(self, x):
        return log_softmax(x, self.axis)


class Softmax2d(nn.Cell):
    """torch.nn.Softmax2d: _ms_compat.softmax over the channels of a (C, H, W) or (N, C, H, W) input."""

    def construct(self, x):
        if x.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {x.ndim}D instead")
        return softmax(x, -3)
