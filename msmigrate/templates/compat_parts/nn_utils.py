"""torch.nn.utils helpers that are plain computations on tensors and parameters: flattening parameters
to one vector and back, the total norm of a list of tensors, folding BatchNorm statistics into the
weights of a preceding Conv/Linear, and padding a list of sequences to one batch."""
import mindspore as ms
import numpy as np
from mindspore import ops


def parameters_to_vector(parameters):
    """torch.nn.utils.parameters_to_vector: every parameter flattened and concatenated, in order."""
    return ops.cat([ops.reshape(p, (-1,)) for p in parameters])


def vector_to_parameters(vec, parameters):
    """torch.nn.utils.vector_to_parameters: slices of `vec` written into the parameters, in order."""
    if not isinstance(vec, ms.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    for p in parameters:
        n = int(np.prod(p.shape)) if len(p.shape) else 1
        _assign(p, ops.reshape(vec[offset:offset + n], p.shape).astype(p.dtype))
        offset += n


def _nn_utils_vector_norm(x, p):
    a = ops.abs(x.reshape(-1))
    if p == float("inf"):
        return a.max()
    if p == float("-inf"):
        return a.min()
    if p == 0:
        return (a != 0).astype(x.dtype).sum()
    return ops.pow(ops.pow(a, p).sum(), 1.0 / p)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """torch.nn.utils.get_total_norm: the norm of the per-tensor norms."""
    if isinstance(tensors, ms.Tensor):
        tensors = [tensors]
    tensors = [t for t in tensors if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return ms.Tensor(0.0, ms.float32)
    total = _nn_utils_vector_norm(ops.stack([_nn_utils_vector_norm(t, norm_type) for t in tensors]), norm_type)
    if error_if_nonfinite and not bool(ops.isfinite(total).all()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                           "so it cannot be clipped. To disable this error and scale the gradients by the "
                           "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """torch.nn.utils.fuse_conv_bn_weights: conv weight/bias with eval-mode BatchNorm folded in,
    as two Parameters."""
    dtype = conv_w.dtype
    if conv_b is None:
        conv_b = ops.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = ops.ones_like(bn_rm)
    if bn_b is None:
        bn_b = ops.zeros_like(bn_rm)
    var_rsqrt = ops.rsqrt(bn_rv + bn_eps)
    extra = (1,) * (len(conv_w.shape) - 2)
    shape = (1, -1) + extra if transpose else (-1, 1) + extra
    fused_w = (conv_w * (bn_w * var_rsqrt).reshape(shape)).astype(dtype)
    fused_b = ((conv_b - bn_rm) * var_rsqrt * bn_w + bn_b).astype(dtype)
    return (ms.Parameter(fused_w, requires_grad=getattr(conv_w, "requires_grad", True)),
            ms.Parameter(fused_b, requires_grad=getattr(conv_b, "requires_grad", True)))


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """torch.nn.utils.fuse_linear_bn_weights: linear weight/bias with eval-mode BatchNorm folded in."""
    if linear_w.shape[0] != bn_rm.shape[0] and bn_rm.shape[0] != 1:
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features or bn.num_features "
                             "must equal 1")
    if linear_b is None:
        linear_b = ops.zeros_like(bn_rm)
    scale = bn_w * ops.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * ops.expand_dims(scale, -1)
    fused_b = (linear_b - bn_rm) * scale + bn_b
    return (ms.Parameter(fused_w, requires_grad=getattr(linear_w, "requires_grad", True)),
            ms.Parameter(fused_b, requires_grad=getattr(linear_b, "requires_grad", True)))


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """torch.nn.utils.rnn.pad_sequence: sequences of different lengths (dim 0) padded to the longest,
    stacked as (T, B, *) or, with batch_first, (B, T, *)."""
    if padding_side not in ("right", "left"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences)
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing == 0:
            padded.append(s)
            continue
        fill = ops.full((missing,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype)
        padded.append(ops.cat([s, fill] if padding_side == "right" else [fill, s]))
    out = ops.stack(padded)
    return out if batch_first else ops.swapaxes(out, 0, 1)


def _fused_copy(layer, weight, bias):
    """A deep copy of a Dense/Conv cell holding the fused weight and a bias (added when it had none)."""
    import copy

    fused = copy.deepcopy(layer)
    fused.weight.set_data(weight)
    if getattr(fused, "bias", None) is not None:
        fused.bias.set_data(bias)
    else:
        fused.bias = ms.Parameter(bias, name="bias")
        fused.has_bias = True
    return fused


def _bn_stats(bn):
    return bn.moving_mean, bn.moving_variance, bn.eps, bn.gamma, bn.beta


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """torch.nn.utils.fuse_conv_bn_eval: a copy of an eval-mode conv with the eval-mode BatchNorm after it
    folded into its weight and bias."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    w, b = fuse_conv_bn_weights(conv.weight, conv.bias if getattr(conv, "has_bias", True) else None,
                                *_bn_stats(bn), transpose)
    return _fused_copy(conv, w, b)


def fuse_linear_bn_eval(linear, bn):
    """torch.nn.utils.fuse_linear_bn_eval: a copy of an eval-mode Dense with the eval-mode BatchNorm after it
    folded into its weight and bias."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    w, b = fuse_linear_bn_weights(linear.weight, linear.bias if getattr(linear, "has_bias", True) else None,
                                  *_bn_stats(bn))
    return _fused_copy(linear, w, b)


def skip_init(module_cls, *args, **kwargs):
    """torch.nn.utils.skip_init: the module without torch's initialisation pass. torch leaves the values
    uninitialised memory, which a program overwrites before use; here the cell's own initial values stand in."""
    return module_cls(*args, **kwargs)
