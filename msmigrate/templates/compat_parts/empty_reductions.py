"""sum / mean / any / logsumexp that give torch's value when the input has no elements.

MindSpore 2.10's CPU reduction kernels leave their output uninitialised for an empty input
(a sum of nothing is garbage, any() True, mean() -inf; torch: 0, False, nan, and -inf for
logsumexp): `loss[mask].sum()` with no positive is such a reduction. The test on the element
count costs nothing in PyNative and is folded while compiling a static shape; under GRAPH mode
a dynamic one (`x[mask]`) makes it a branch, which compiles and differentiates as well.
"""
from mindspore import ops


def reduce_sum(x, dim=None, keepdim=False, dtype=None):
    out = ops.sum(x, dim, keepdim, dtype=dtype)
    if ops.size(x) == 0:
        return ops.zeros_like(out)
    return out


def reduce_mean(x, dim=None, keepdim=False):
    out = ops.mean(x, dim, keepdim)
    if ops.size(x) == 0:
        return ops.full_like(out, float("nan"))
    return out


def reduce_any(x, dim=None, keepdim=False):
    out = ops.any(x, dim, keepdim)
    if ops.size(x) == 0:
        return ops.zeros_like(out)
    return out


def reduce_logsumexp(x, dim, keepdim=False):
    out = ops.logsumexp(x, dim, keepdim)
    if ops.size(x) == 0:
        return ops.full_like(out, float("-inf"))
    return out
