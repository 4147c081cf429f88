"""matmul / mm / bmm / linear / dot products that give torch's zeros when the contracted dim is empty.

MindSpore 2.10's CPU matmul kernels leave the output uninitialised when the contracted dim has
length 0 (`x[:, keep] @ w[keep]` with no column kept, attention over an empty memory): garbage,
now and then nan; torch gives zeros (plus the bias / the added input). The contracted dim is
empty exactly when the left operand has no elements while the result has some, so the test is
the one of the empty reductions: free in PyNative, folded while compiling a static shape, a
branch for a dynamic one under GRAPH mode.
"""
import mindspore as ms
from mindspore import ops
from mindspore.ops.primitive import constexpr as _dot_constexpr


def _contracted(a, out):
    if a.size == 0:     # a Python int in PyNative (ops.size costs a dispatch, ~30 us)
        return ops.zeros_like(out)
    return out


def matmul(input, other):
    """torch.matmul / `a @ b`; of values that are no tensor (NumPy arrays, a `@` the converter could not type),
    the `@` operator itself."""
    if not isinstance(input, ms.Tensor) and not isinstance(other, ms.Tensor):
        return input @ other
    return _contracted(input, ops.matmul(input, other))


def mm(input, mat2):
    return _contracted(input, ops.mm(input, mat2))


def bmm(input_x, mat2):
    return _contracted(input_x, ops.bmm(input_x, mat2))


def mv(mat, vec):
    return _contracted(mat, ops.mv(mat, vec))


def dense(input, weight, bias=None):
    # ops.matmul, not ops.dense: under ms.jit ops.dense fails to reshape an input of a dynamic empty shape
    out = _contracted(input, ops.matmul(input, weight.T))
    return out if bias is None else out + bias


def addmm(input, mat1, mat2, beta=1, alpha=1):
    return beta * input + alpha * _contracted(mat1, ops.mm(mat1, mat2))


def baddbmm(input, batch1, batch2, beta=1, alpha=1):
    return beta * input + alpha * _contracted(batch1, ops.bmm(batch1, batch2))


@_dot_constexpr(check=False)
def _dot_operands(shape, other_shape, dtype, other_dtype):
    """torch.dot's own checks, raising its RuntimeError: the product of two 1-D tensors of one length and one
    dtype (a sum of products would flatten 2-D inputs, broadcast a length-1 one and promote mixed dtypes, silently).
    A constexpr: the shapes and dtypes are known while a graph compiles (an unknown length, -1, or a shape unknown
    there, None, is not checked)."""
    if shape is None or other_shape is None:
        return True
    if len(shape) != 1 or len(other_shape) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(shape)}D and {len(other_shape)}D tensors")
    if shape[0] >= 0 and other_shape[0] >= 0 and shape[0] != other_shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{shape[0]}] and src [{other_shape[0]}] "
                           f"to have the same number of elements, but got {shape[0]} and {other_shape[0]} "
                           "elements respectively")
    if dtype is not None and other_dtype is not None and dtype != other_dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {dtype} and {other_dtype}")
    return True


def dot(input, tensor):
    """torch.dot / Tensor.dot: the inner product of two 1-D tensors, 0 for empty ones (reduce_sum)."""
    _dot_operands(input.shape, tensor.shape, input.dtype, tensor.dtype)
    return reduce_sum(input * tensor)


def inner(input, other):
    return _contracted(input, ops.inner(input, other))


def tensor_dot(x1, x2, axes):
    return _contracted(x1, ops.tensor_dot(x1, x2, axes))
