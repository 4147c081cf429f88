"""F.batch_norm on a float64 input: MindSpore's BatchNorm kernel takes float16/float32 only (TypeError); torch
computes it in float64. Here torch's formula, in float64: with training=False the running statistics; with
training=True the batch statistics, and the running statistics updated in place as torch does (momentum, the
unbiased variance) - in PyNative only: compiling a graph that reaches it raises MigrationError naming the line
(a graph cannot write into a plain tensor). Any other dtype goes to ops.batch_norm as it is. Without running
statistics (both None) the batch's statistics, any dtype (_batch_statistics_norm)."""
import mindspore as ms
from mindspore import ops


def batch_norm(input_x, running_mean, running_var, weight, bias, training=False, momentum=0.1, eps=1e-5, where=""):
    if running_mean is None or running_var is None:
        return _batch_statistics_norm(input_x, running_mean, running_var, weight, bias, training, eps)
    if input_x.dtype != ms.float64:
        return ops.batch_norm(input_x, running_mean, running_var, weight, bias, training, momentum, eps)
    shape = (1, -1) + (1,) * (input_x.ndim - 2)
    if training:
        _pynative_only(None, "F.batch_norm at {} (float64, training=True) updates the running statistics in place, "
                       "which a compiled graph (GRAPH mode or ms.jit) cannot do with plain tensors: run it in "
                       "PYNATIVE mode, or in float32", where)
        axes = (0,) + tuple(range(2, input_x.ndim))
        mean = input_x.mean(axis=axes)
        var = ((input_x - mean.reshape(shape)) ** 2).mean(axis=axes)
        n = input_x.size // input_x.shape[1]
        m = ms.Tensor(momentum, ms.float64)     # a Python float would pass through float32
        running_mean.assign_value((1 - m) * running_mean + m * ops.stop_gradient(mean))
        unbiased = ops.stop_gradient(var) * ms.Tensor(n / max(n - 1, 1), ms.float64)
        running_var.assign_value((1 - m) * running_var + m * unbiased)
    else:
        mean, var = running_mean, running_var
    out = (input_x - mean.reshape(shape)) / ops.sqrt(var.reshape(shape) + ms.Tensor(eps, ms.float64))
    return out * weight.reshape(shape) + bias.reshape(shape)


def _batch_statistics_norm(input_x, running_mean, running_var, weight, bias, training, eps):
    """F.batch_norm without running statistics (timm's ScaledStdConv2d standardizes its weight so): the batch's
    mean and biased variance over every axis but 1, as torch; torch's errors where it refuses the call."""
    if running_mean is not None or running_var is not None:
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    if not training:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    shape = (1, -1) + (1,) * (input_x.ndim - 2)
    axes = (0,) + tuple(range(2, input_x.ndim))
    mean = input_x.mean(axis=axes, keep_dims=True)
    var = ((input_x - mean) ** 2).mean(axis=axes, keep_dims=True)
    out = (input_x - mean) / ops.sqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out
