"""MindSpore 2.10's CPU float32 exp and log are off by up to 6.5e-6 (relative; torch's: ~1 ulp), and so are the ops
built on them (sigmoid, softplus, logsumexp); its float64 kernels are exact to rounding. A helper that must give
torch's float32 values takes such a step in float64 on CPU and rounds once; other targets keep their float32
kernels."""
import mindspore as ms
from mindspore import ops


@ops.constexpr
def float64_on_cpu(dtype):
    """True where an exp/log step on a `dtype` tensor is to be taken in float64: float32 on CPU."""
    return dtype == ms.float32 and ms.get_context("device_target") == "CPU"


def precise_exp(x):
    """ops.exp(x), a CPU float32 x through float64 (one rounding, as torch's)."""
    if float64_on_cpu(x.dtype):
        return ops.exp(x.astype(ms.float64)).astype(ms.float32)
    return ops.exp(x)


def precise_log(x):
    """ops.log(x), a CPU float32 x through float64 (one rounding, as torch's)."""
    if float64_on_cpu(x.dtype):
        return ops.log(x.astype(ms.float64)).astype(ms.float32)
    return ops.log(x)
