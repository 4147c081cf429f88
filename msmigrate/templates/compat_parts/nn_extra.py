"""torch.nn layers and torch.nn.functional ops that MindSpore 2.10 has no Cell/function of the same meaning for,
written with torch's formulas and defaults (mappings/tensor_nn_extra.py; proven against torch by
tests/parity/test_tensor_nn_extra.py). Random ones (RReLU in training, alpha dropout) draw from MindSpore's
stream: the same distribution as torch, not the same numbers."""
import collections
import math

import mindspore as ms
from mindspore import nn, ops

_NNX_ALPHA = 1.7580993408473766   # -SELU scale * alpha: the value a dropped unit takes in alpha dropout


def _nnx_tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class Softplus(nn.Cell):
    """torch.nn.Softplus: log(1 + exp(beta * x)) / beta, linear above threshold (MindSpore has no Softplus Cell)."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def construct(self, input):
        return softplus(input, self.beta, self.threshold)


def _nnx_const(c, x):
    """c at x's precision: MindSpore rounds a Python float to float32 before it multiplies a float64 tensor."""
    return ms.Tensor(c, ms.float64) if x.dtype == ms.float64 else c


def elu(input, alpha=1.0):
    """torch.nn.functional.elu for any alpha (MindSpore's Elu kernel takes alpha=1.0 only)."""
    # the negative part through where, not minimum(x, 0): at 0 torch's gradient is alpha, and minimum's
    # gradient at a tie is halved
    negative = ops.where(input > 0, ops.zeros_like(input), input)
    return ops.where(input > 0, input, _nnx_const(alpha, input) * ops.expm1(negative))


def leaky_relu(input, alpha=0.01):
    """torch's leaky_relu: x where x > 0, else x * slope. MindSpore's ops.leaky_relu (and nn.LeakyReLU) computes the
    same values as a maximum, whose gradient at an input of exactly 0 is (1 + slope) / 2; torch's is the slope (a
    zero-padded border, a row of zeros, an attention score of 0 in pyGAT's SpGAT)."""
    return ops.where(input > 0, input, input * alpha)


def selu(input):
    """torch.nn.functional.selu: scale * elu(x, alpha) with torch's constants (the gradients of MindSpore 2.10's
    ops.selu and nn.SeLU are wrong for negative inputs on CPU)."""
    return _nnx_const(1.0507009873554805, input) * elu(input, 1.6732632423543772)


# softplus, mish and celu: MindSpore's kernels compute a float64 input in float32; torch's formulas in float64 then
def softplus(input, beta=1.0, threshold=20.0):
    """torch.nn.functional.softplus: log(1 + exp(beta * x)) / beta, x where beta * x > threshold. ops.softplus
    for float16/bfloat16 and off CPU; on CPU a float32 input computes in float64 and rounds once (ops.softplus
    there: up to 2e-4 off, its exp 6.5e-6; compat_parts/cpu_float32_kernels.py)."""
    if float64_on_cpu(input.dtype):
        return _softplus_f64(input.astype(ms.float64), beta, threshold).astype(ms.float32)
    if input.dtype != ms.float64:
        return ops.softplus(input, beta, threshold)
    return _softplus_f64(input, beta, threshold)


def _softplus_f64(input, beta, threshold):
    b = _nnx_const(beta, input)
    scaled = input * b
    e = ops.exp(ops.where(scaled > threshold, ops.zeros_like(scaled), scaled))   # (minimum halves a tie's gradient)
    # log1p(e) as Kahan's log(u) * e / (u - 1): MindSpore's log1p loses digits for a tiny e (exp(-30))
    u = 1 + e
    log1p = ops.where(u == 1, e, ops.log(u) * e / ops.where(u == 1, ops.ones_like(u), u - 1))
    return ops.where(scaled > threshold, input, log1p / b)


def mish(input, inplace=False):
    """torch.nn.functional.mish: x * tanh(softplus(x))."""
    if input.dtype != ms.float64:
        return ops.mish(input)
    return input * ops.tanh(softplus(input))


def relu6(input, inplace=False):
    """torch.nn.functional.relu6: min(max(x, 0), 6); ReLU6's kernel takes float16/float32 only, float64 clamps."""
    if input.dtype != ms.float64:
        return ops.relu6(input)
    return ops.clamp(input, 0.0, 6.0)


def celu(input, alpha=1.0, inplace=False):
    """torch.nn.functional.celu: x if x > 0 else alpha * (exp(x / alpha) - 1)."""
    if input.dtype != ms.float64:
        return ops.celu(input, alpha)
    a = _nnx_const(alpha, input)
    return ops.where(input > 0, input, a * ops.expm1(ops.where(input > 0, ops.zeros_like(input), input) / a))


class CELU(nn.Cell):
    """torch.nn.CELU: see celu."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha

    def construct(self, input):
        return celu(input, self.alpha)


class SELU(nn.Cell):
    """torch.nn.SELU: see selu."""

    def __init__(self, inplace=False):
        super().__init__()

    def construct(self, input):
        return selu(input)


def _nnx_clamped_norm(v, dim, eps):
    # torch divides each input by its norm clamped to eps; the clamp is invisible to the gradient
    n = ops.norm(v, 2, dim, keepdim=True)
    return n + ops.stop_gradient(ops.relu(eps - n))


class CosineSimilarity(nn.Cell):
    """torch.nn.CosineSimilarity (mindspore.nn.CosineSimilarity is a metric, not a layer)."""

    def __init__(self, dim=1, eps=1e-08):
        super().__init__()
        self.dim, self.eps = dim, eps

    def construct(self, x1, x2):
        return ops.sum(x1 / _nnx_clamped_norm(x1, self.dim, self.eps) * (x2 / _nnx_clamped_norm(x2, self.dim, self.eps)),
                       self.dim)


class PairwiseDistance(nn.Cell):
    """torch.nn.PairwiseDistance: norm(x1 - x2 + eps, p) over the last dimension."""

    def __init__(self, p=2.0, eps=1e-06, keepdim=False):
        super().__init__()
        self.p, self.eps, self.keepdim = float(p), eps, keepdim

    def construct(self, x1, x2):
        return ops.norm(x1 - x2 + self.eps, self.p, -1, keepdim=self.keepdim)


class RMSNorm(nn.Cell):
    """torch.nn.RMSNorm: x / sqrt(mean(x^2 over normalized_shape) + eps) * weight; eps=None is the input dtype's
    machine epsilon, as torch."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.axes = tuple(range(-len(shape), 0))
        self.eps = eps
        self.weight = ms.Parameter(ops.ones(shape, ms.float32), name="weight") if elementwise_affine else None

    def construct(self, input):
        eps = self.eps
        if eps is None:
            eps = 2.220446049250313e-16 if input.dtype == ms.float64 else 1.1920928955078125e-07
        out = input * ops.rsqrt(ops.mean(input * input, self.axes, True) + eps)
        return out if self.weight is None else out * self.weight


class _CircularPad(nn.Cell):
    _nd = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _nnx_tuple(padding, 2 * self._nd)

    def construct(self, input):
        return ops.pad(input, self.padding, mode="circular")


class CircularPad1d(_CircularPad):
    _nd = 1


class CircularPad2d(_CircularPad):
    _nd = 2


class CircularPad3d(_CircularPad):
    _nd = 3


class _ReflectionPad(nn.Cell):
    """torch.nn.ReflectionPad1d/2d/3d: `padding` holds torch's flat tuple (left, right[, top, bottom, front, back]),
    which torch code reads (MindSpore's layers hold nested pairs, 3d's a 3-tuple); the same MirrorPad."""
    _nd = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _nnx_tuple(padding, 2 * self._nd)
        pairs = tuple((self.padding[2 * k], self.padding[2 * k + 1]) for k in range(self._nd))
        self._pairs = pairs[::-1]      # outermost dim first
        self._mirror = ops.MirrorPad(mode="REFLECT")

    def construct(self, input):
        pads = ((0, 0),) * (input.ndim - self._nd) + self._pairs
        return self._mirror(input, ms.Tensor(pads, ms.int64))


class ReflectionPad1d(_ReflectionPad):
    _nd = 1


class ReflectionPad2d(_ReflectionPad):
    _nd = 2


class ReflectionPad3d(_ReflectionPad):
    _nd = 3


def pad_by_mode(input, pad, mode, value=None):
    """torch's F.pad in a reflect/replicate/circular mode: ops.pad, but reflect on a 5-d input (PadV3 stops at
    4-d there) through MirrorPad, torch's flat pairs (last dim first) laid out outermost first. torch takes a value
    of 0 in these modes and ignores it (encodec's pad1d: `F.pad(x, paddings, mode, value)` with value=0.); MindSpore's
    pad refuses any value there ("the padding mode 'reflect' can not set value")."""
    if not isinstance(value, ms.Tensor) and value == 0:
        value = None
    if mode != "reflect" or input.ndim < 5:
        return ops.pad(input, pad, mode) if value is None else ops.pad(input, pad, mode, value)
    pairs = tuple((pad[2 * k], pad[2 * k + 1]) for k in range(len(pad) // 2))[::-1]
    return ops.MirrorPad(mode="REFLECT")(input, ms.Tensor(((0, 0),) * (input.ndim - len(pairs)) + pairs, ms.int64))


def pad_constant(input, pad, value=None):
    """torch's F.pad in constant mode: a negative amount crops its side (ops.narrow), a positive one concatenates a
    block of the value there. Not MindSpore's pad kernel: on CPU (2.10), given a negative amount it returns wrong
    values and after a few calls hangs (g-mlp's token shift, `F.pad(t, (0, 0, amount, -amount))`); inside a
    compiled train step its gradient is wrong from the step's second run on, and then zero for the layers before
    it, silently (conformer's DepthWiseConv1d; tests/test_heldout9_programs.py)."""
    fill = 0 if value is None else value
    for k in range(len(pad) // 2):
        axis = input.ndim - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        if before < 0:
            input = ops.narrow(input, axis, -before, input.shape[axis] + before)
        if after < 0:
            input = ops.narrow(input, axis, 0, input.shape[axis] + after)
        parts = (input,)
        if before > 0:
            parts = (ops.full(input.shape[:axis] + (before,) + input.shape[axis + 1:], fill, dtype=input.dtype),
                     ) + parts
        if after > 0:
            parts = parts + (ops.full(input.shape[:axis] + (after,) + input.shape[axis + 1:], fill,
                                      dtype=input.dtype),)
        if len(parts) > 1:
            input = ops.concat(parts, axis)
    return input


def run_in_order(layers, x):
    """`nn.Sequential(*layers)(x)` in a forward: each layer applied in turn (a SequentialCell built inside a
    GRAPH-mode construct is a constant there: its layers got no gradient; msmigrate/sequential_calls.py)."""
    for layer in layers:
        x = layer(x)
    return x


class _ZeroPad(nn.Cell):
    """torch.nn.ZeroPad1d/2d/3d: zeros on both sides; torch takes any even-length tuple there (F.pad's), which
    MindSpore's ConstantPad1d/3d refuse, and `padding` holds torch's flat tuple. Through pad_constant, not
    MindSpore's pad kernel (its gradient in a compiled train step goes wrong from the step's second run on)."""
    _nd = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _nnx_tuple(padding, 2 * self._nd)

    def construct(self, input):
        return pad_constant(input, self.padding, 0)


class ZeroPad1d(_ZeroPad):
    _nd = 1


class ZeroPad2d(_ZeroPad):
    _nd = 2


class ZeroPad3d(_ZeroPad):
    _nd = 3


class _ConstantPad(nn.Cell):
    """torch.nn.ConstantPad1d/2d/3d: `value` on each side through pad_constant (concatenation), not MindSpore's
    ConstantPad Cells, whose pad kernel's gradient in a compiled train step goes wrong from the step's second run
    on, and then is zero for the layers before it (measured on 2.10, CPU: tests/test_heldout9_programs.py)."""
    _nd = 1

    def __init__(self, padding, value):
        super().__init__()
        self.padding = _nnx_tuple(padding, 2 * self._nd)
        self.value = value

    def construct(self, input):
        return pad_constant(input, self.padding, self.value)


class ConstantPad1d(_ConstantPad):
    _nd = 1


class ConstantPad2d(_ConstantPad):
    _nd = 2


class ConstantPad3d(_ConstantPad):
    _nd = 3


def _nnx_channel_sum(sq, before, after):
    """Sum of sq over the channel window [c - before, c + after] (zero padded), for every channel c (dim 1)."""
    c = ops.cumsum(pad_constant(ops.moveaxis(sq, 1, -1), (before + 1, after)), -1)
    return ops.moveaxis(c[..., before + after + 1:] - c[..., :-(before + after + 1)], -1, 1)


class LocalResponseNorm(nn.Cell):
    """torch.nn.LocalResponseNorm: x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta
    (mindspore.nn.LRN counts the window and alpha differently)."""

    def __init__(self, size, alpha=0.0001, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def construct(self, input):
        s = _nnx_channel_sum(input * input, self.size // 2, (self.size - 1) // 2)
        return input / (self.k + self.alpha * s / self.size) ** self.beta


class CrossMapLRN2d(LocalResponseNorm):
    """torch.nn.CrossMapLRN2d on (N, C, H, W): x * (k + alpha / size * S_c)^-beta, where S_c sums x^2 over the
    channels torch 2.13's running-window loop adds: up to c + pre_pad - 1, minus channels 1 .. c - pre_pad
    (channel 0 is never taken out of the window), pre_pad = (size - 1) // 2 + 1."""

    def __init__(self, size, alpha=0.0001, beta=0.75, k=1):
        super().__init__(size, alpha, beta, k)

    def _scale(self, input):
        channels, pre = input.shape[1], (self.size - 1) // 2 + 1
        # window[c][j] = 1 when torch's loop has channel j in channel c's sum
        window = [[1.0 if j <= min(c + pre - 1, channels - 1) and not 1 <= j <= c - pre else 0.0
                   for j in range(channels)] for c in range(channels)]
        s = ops.matmul(ops.moveaxis(input * input, 1, -1), ms.Tensor(window, input.dtype).T)
        return self.k + self.alpha / self.size * ops.moveaxis(s, -1, 1)

    def construct(self, input):
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
        return input * self._scale(input) ** -self.beta

    def bprop(self, input, out, dout):
        # torch's hand-written backward (not the gradient of its forward): the ratio dout * out / scale summed
        # over channels [c - p, c + size - 1 - p], p = int(size - (size - 1) / 2)
        scale = self._scale(input)
        p = int(self.size - (self.size - 1) / 2)
        # ops.pad kept: its values are right (its gradient is what goes wrong in a compiled step) and no gradient
        # of a bprop is taken
        ratio = ops.pad(dout * out / scale, (0, 0, 0, 0, p, self.size - 1 - p))
        channels = input.shape[1]
        accum = ratio[:, 0:channels]
        for j in range(1, self.size):
            accum = accum + ratio[:, j:j + channels]
        return (scale ** -self.beta * dout - 2 * self.alpha * self.beta / self.size * input * accum,)


class UpsamplingBilinear2d(nn.Cell):
    """torch.nn.UpsamplingBilinear2d: bilinear with align_corners=True to `size` or floor(size * scale_factor)
    (mint.nn.UpsamplingBilinear2d has no CPU kernel for a scale factor)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__()
        self.size = None if size is None else _nnx_tuple(size, 2)
        self.scale = None if scale_factor is None else tuple(float(s) for s in _nnx_tuple(scale_factor, 2))

    def construct(self, input):
        size = self.size
        if size is None:
            size = (int(input.shape[-2] * self.scale[0]), int(input.shape[-1] * self.scale[1]))
        return ops.interpolate(input, size=size, mode="bilinear", align_corners=True)


def _nnx_lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd):
    """torch's lp_pool{nd}d: avg_pool(x^p) * (window size), then ^(1/p). torch's sign(out) * relu(abs(out)) is out
    itself with a zero gradient at out == 0, and a NaN stays NaN (x^1.5 of a negative x): MindSpore's relu and sign
    turn NaN into 0, so the same value is written out * (out != 0). An unbatched input is a batch of one."""
    unbatched = input.ndim == nd + 1
    if unbatched:
        input = input.expand_dims(0)
    k = _nnx_tuple(kernel_size, nd)
    s = k if stride is None else _nnx_tuple(stride, nd)
    if norm_type in (float("inf"), -float("inf")):   # torch: the window's largest (smallest) |x|
        sign = 1 if norm_type > 0 else -1
        a = sign * input.abs()
        if nd == 1:   # a (N, C, 1, L) image
            out = ops.max_pool2d(a.expand_dims(2), (1, k[0]), (1, s[0]), 0, 1, ceil_mode=ceil_mode).squeeze(2)
        else:
            out = (ops.max_pool2d if nd == 2 else ops.max_pool3d)(a, k, s, 0, 1, ceil_mode=ceil_mode)
        out = sign * out
        return out[0] if unbatched else out
    x = input ** norm_type
    if nd == 1:
        out = ops.avg_pool1d(x, k[0], s[0], 0, ceil_mode)
    elif nd == 2:
        out = ops.avg_pool2d(x, k, s, 0, ceil_mode)
    else:
        out = ops.avg_pool3d(x, k, s, 0, ceil_mode)
    size = 1
    for n in k:
        size *= n
    out = (out * (out != 0).astype(out.dtype) * size) ** (1.0 / norm_type)
    return out[0] if unbatched else out


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _nnx_lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _nnx_lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _nnx_lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


class _LPPool(nn.Cell):
    _nd = 1

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def construct(self, input):
        return _nnx_lp_pool(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode, self._nd)


LPPool1d = type("LPPool1d", (_LPPool,), {"_nd": 1})
LPPool2d = type("LPPool2d", (_LPPool,), {"_nd": 2})
LPPool3d = type("LPPool3d", (_LPPool,), {"_nd": 3})


class AdaptiveMaxPool3d(nn.Cell):
    """torch.nn.AdaptiveMaxPool3d: a None in output_size keeps the input's size there, and the indices are int64
    (MindSpore's layer refuses None and returns int32)."""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def construct(self, input):
        size = self.output_size
        if isinstance(size, (tuple, list)):
            size = tuple(input.shape[i - 3] if n is None else n for i, n in enumerate(size))
        out = ops.adaptive_max_pool3d(input, size, self.return_indices)
        return (out[0], out[1].astype(ms.int64)) if self.return_indices else out


def embedding_by(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 where=None):
    """F.embedding with settings known at run time (a layer's own passed along: awd-lstm-lm's embedded_dropout):
    a gather of weight's rows; the padding_idx row (negative counts from the end, as torch) gets no gradient;
    max_norm renormalises the rows read first (embedding_renorm_); scale_grad_by_freq=True raises MigrationError"""
    if scale_grad_by_freq:
        _raise_migration_error(f"{where}: F.embedding scale_grad_by_freq=True: gradient scaling by frequency has no "
                               f"MindSpore counterpart")
    if max_norm is not None:
        weight = embedding_renorm_(weight, input, max_norm, norm_type)
    if padding_idx is None:
        return ops.gather(weight, input, 0)
    pad = padding_idx % weight.shape[0]
    kept = ops.where(ops.expand_dims(ops.arange(weight.shape[0]) == pad, 1), ops.stop_gradient(weight), weight)
    return ops.gather(kept, input, 0)


def embedding_renorm_(weight, input, max_norm, norm_type=2.0):
    """torch's max_norm of F.embedding (embedding_renorm_): each row input reads whose norm_type-norm exceeds
    max_norm is scaled to max_norm / (norm + 1e-7), in place and with no gradient; the weight is returned."""
    w = ops.stop_gradient(weight)
    index = input.reshape(-1).astype(ms.int32)
    hit = ops.unsorted_segment_sum(ops.ones(index.shape, ms.float32), index, w.shape[0]) > 0
    if norm_type in (float("inf"), -float("inf")):
        norm = ops.amax(w.abs(), -1) if norm_type > 0 else ops.amin(w.abs(), -1)
    else:
        norm = (w.abs() ** norm_type).sum(-1) ** (1.0 / norm_type)
    scale = ops.where(ops.logical_and(hit, norm > max_norm), max_norm / (norm + 1e-7), ops.ones_like(norm))
    ops.assign(weight, w * scale.expand_dims(-1).astype(w.dtype))
    return weight


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-05):
    """torch.nn.functional.instance_norm where running statistics are given: with use_input_stats each instance is
    normalised by its own statistics and running_mean/running_var move toward their average over the batch, in place
    (torch's unbiased variance); without, the running statistics normalise."""
    axes, shape = tuple(range(2, input.ndim)), (1, -1) + (1,) * (input.ndim - 2)
    if use_input_stats:
        mean, var = input.mean(axes, True), input.var(axes, ddof=0, keepdims=True)
    else:
        if running_mean is None or running_var is None:
            raise ValueError("Expected running_mean and running_var to be defined when use_input_stats is false")
        mean, var = running_mean.reshape(shape), running_var.reshape(shape)
    out = (input - mean) / ops.sqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    out = out if bias is None else out + bias.reshape(shape)
    if use_input_stats:     # after the output, both from the old values (one tensor may be weight and both stats)
        count = 1
        for n in input.shape[2:]:
            count *= n
        moved = [(stat, stat * (1 - momentum) + ops.stop_gradient(batch).mean(0).reshape(-1).astype(stat.dtype) *
                  momentum) for stat, batch in ((running_mean, mean), (running_var, var * (count / max(count - 1, 1))))
                 if stat is not None]
        for stat, value in moved:
            ops.assign(stat, value)
    return out


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """torch.nn.functional.conv_transpose3d through the Conv3DTranspose primitive (ops.conv_transpose3d has no CPU
    kernel). torch's output_padding computes its extra rows: the full transposed convolution cropped by padding at
    the start and padding - output_padding at the end, zeros where output_padding exceeds padding (no input reaches
    those rows). An unbatched (C, D, H, W) input is a batch of one."""
    s, p, op, d = (_nnx_tuple(v, 3) for v in (stride, padding, output_padding, dilation))
    if d[0] != 1:
        # ValueError: a graph raises only Python's own exception types
        raise ValueError(f"conv_transpose3d dilation={dilation}: MindSpore's Conv3DTranspose takes a depth "
                         f"dilation of 1 only (not converted)")
    unbatched = input.ndim == 4
    x = input.expand_dims(0) if unbatched else input
    pad = ()
    for q, o in zip(p, op):   # one comprehension at most in a graph
        pad = pad + (q, max(q - o, 0))
    conv = ops.Conv3DTranspose(weight.shape[0], weight.shape[1] * groups, weight.shape[2:], pad_mode="pad", pad=pad,
                               stride=s, dilation=d, group=groups)
    out = conv(x, weight)
    extra = [max(o - q, 0) for q, o in zip(p, op)]
    if extra != [0, 0, 0]:
        out = pad_constant(out, (0, extra[2], 0, extra[1], 0, extra[0]))   # not the pad kernel (its gradient)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return out[0] if unbatched else out


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """torch.nn.functional.rrelu: negative inputs times a slope drawn from U(lower, upper) in training, times
    (lower + upper) / 2 otherwise (MindSpore's rrelu always draws)."""
    if training:
        slope = ops.rand_like(input) * (upper - lower) + lower
    else:
        slope = (lower + upper) / 2
    return ops.where(input >= 0, input, input * slope)


class RReLU(nn.Cell):
    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper = lower, upper

    def construct(self, input):
        return rrelu(input, self.lower, self.upper, self.training)


def _nnx_alpha_dropout(input, p, training, feature):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    shape = input.shape[:2] + (1,) * (input.ndim - 2) if feature else input.shape
    keep = (ops.rand(shape, dtype=input.dtype) >= p).astype(input.dtype)
    a = 1.0 / ((_NNX_ALPHA * _NNX_ALPHA * p + 1) * (1 - p)) ** 0.5
    # torch: input * keep * a + (keep - 1) * alpha * a + alpha * a * p
    return input * (keep * a) + ((keep - 1) * (_NNX_ALPHA * a) + _NNX_ALPHA * a * p)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _nnx_alpha_dropout(input, p, training, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _nnx_alpha_dropout(input, p, training, True)


class AlphaDropout(nn.Cell):
    _feature = False

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0.0 or p > 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p

    def construct(self, input):
        return _nnx_alpha_dropout(input, self.p, self.training, self._feature)


class FeatureAlphaDropout(AlphaDropout):
    _feature = True



def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """torch.nn.functional.embedding_bag: the rows of weight gathered and reduced per bag ('sum', 'mean', 'max'),
    bags being the rows of a 2-D input or the runs of a 1-D input starting at offsets; padding_idx entries are
    left out of every bag; an empty bag gives zeros. (max_norm and scale_grad_by_freq are refused when converting.)"""
    if weight.dtype == ms.int64 and ops.is_floating_point(input):
        input, weight = weight, input       # the legacy (weight, input) order, which torch still swaps back
    if input.ndim == 2:
        bags, length = input.shape
        segment = ops.arange(bags * length) // length   # position j belongs to bag j // length
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    else:
        bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
        # a bag per offset: position j belongs to the number of bag starts after the first that are <= j
        starts = offsets[1:bags].astype(ms.int64)
        segment = (ops.arange(input.shape[0]).astype(ms.int64).expand_dims(1) >= starts.expand_dims(0)).astype(
            ms.int32).sum(1)
    rows = ops.gather(weight, input, 0)
    keep = ops.ones(input.shape, weight.dtype)
    if padding_idx is not None:
        keep = (input != (padding_idx % weight.shape[0])).astype(weight.dtype)
    if per_sample_weights is not None:
        if mode != "sum":
            raise ValueError("embedding_bag: per_sample_weights is only supported for mode='sum'")
        rows = rows * per_sample_weights.expand_dims(-1)
    segment = segment.astype(ms.int32)
    count = ops.unsorted_segment_sum(keep, segment, bags).expand_dims(-1)
    if mode == "max":
        low = ops.full_like(rows, float("-inf"))
        top = ops.unsorted_segment_max(ops.where(keep.expand_dims(-1) > 0, rows, low), segment, bags)
        return ops.where(count > 0, top, ops.zeros_like(top))
    total = ops.unsorted_segment_sum(rows * keep.expand_dims(-1), segment, bags)
    if mode == "sum":
        return total
    return total / ops.maximum(count, ops.ones_like(count))


class EmbeddingBag(nn.Cell):
    """torch.nn.EmbeddingBag: parameter `weight` (num_embeddings, embedding_dim) drawn from N(0, 1), the padding_idx
    row zeroed, as torch."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None):
        super().__init__()
        if _weight is None:
            w = ops.standard_normal((num_embeddings, embedding_dim))
            if padding_idx is not None:   # (no item assignment: in-place writes are unreliable on CPU PyNative)
                pad = (ops.arange(num_embeddings) == padding_idx % num_embeddings).expand_dims(1)
                w = ops.where(pad, ops.zeros_like(w), w)
        else:
            w = _weight
        self.weight = ms.Parameter(w, name="weight")
        self.mode, self.include_last_offset, self.padding_idx = mode, include_last_offset, padding_idx

    def construct(self, input, offsets=None, per_sample_weights=None):
        return embedding_bag(input, self.weight, offsets, mode=self.mode, per_sample_weights=per_sample_weights,
                             include_last_offset=self.include_last_offset, padding_idx=self.padding_idx)


def tensor_index_put(input, indices, values, accumulate=False):
    """torch.Tensor.index_put: input with the elements at `indices` (a tuple of int or bool index tensors, one per
    leading dimension; a bool one stands for the indices of its True elements) replaced by `values` (broadcast),
    or added to them (accumulate=True: repeated indices add up). MindSpore's index_put takes int indices and 1-D
    values only."""
    idx = []
    for i in indices:
        if i.dtype == ms.bool_:
            idx.extend(ops.unbind(ops.nonzero(i), 1))
        else:
            idx.append(i.astype(ms.int64))
    zeros = ops.zeros((), ms.int64)
    for i in idx:
        zeros = zeros + ops.zeros_like(i)       # the shape the index tensors broadcast to
    pos = ops.stack([(ops.broadcast_to(i, zeros.shape) % input.shape[d]) for d, i in enumerate(idx)], -1)
    updates = ops.broadcast_to(values.astype(input.dtype), zeros.shape + input.shape[len(idx):])
    if accumulate:
        return ops.tensor_scatter_add(input, pos, updates)
    return ops.tensor_scatter_update(input, pos, updates)


def tensor_index_reduce(input, dim, index, source, reduce, include_self=True):
    """torch.Tensor.index_reduce: the slices of input at index along dim reduced ('prod', 'mean', 'amax', 'amin')
    with the slices of source, with or without input's own values; untouched slices stay as they are."""
    if input.ndim == 0:     # a one-element vector, as torch
        return as_vector(lambda x, i, s: tensor_index_reduce(x, dim, i, s, reduce, include_self), input, index, source)
    n = input.shape[dim]
    x, s = ops.moveaxis(input, dim, 0), ops.moveaxis(source, dim, 0)
    seg = index.astype(ms.int32)
    touched = ops.unsorted_segment_sum(ops.ones(seg.shape, x.dtype), seg, n).reshape((n,) + (1,) * (x.ndim - 1))
    if reduce == "prod":
        got = ops.unsorted_segment_prod(s, seg, n)
        out = got * x if include_self else got
    elif reduce == "mean":
        total = ops.unsorted_segment_sum(s, seg, n) + (x if include_self else 0)
        out = total / ops.maximum(touched + (1 if include_self else 0), ops.ones_like(touched))
    elif reduce in ("amax", "amin"):
        pick = ops.unsorted_segment_max if reduce == "amax" else ops.unsorted_segment_min
        got = pick(s, seg, n)
        if include_self:
            got = ops.maximum(got, x) if reduce == "amax" else ops.minimum(got, x)
        out = got
    else:
        raise ValueError(f"index_reduce: reduce argument must be either prod, mean, amax or amin, got {reduce}")
    return ops.moveaxis(ops.where(touched > 0, out, x), 0, dim)


_QUANTILE_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def tensor_quantile(input, q, dim=None, keepdim=False, interpolation="linear", ignore_nan=False):
    """torch.quantile / torch.nanquantile (ignore_nan): q a number or a tensor of them (a leading dim of the
    result), every interpolation mode, as torch computes them: ranks q * (n - 1) over the sorted values (n those
    that are not NaN with ignore_nan, NaN where none is; without, NaN where any is); ops.quantile has no CPU kernel."""
    if interpolation not in _QUANTILE_MODES:
        raise ValueError(f"quantile() interpolation must be one of {', '.join(_QUANTILE_MODES)}. Got {interpolation}")
    many = isinstance(q, ms.Tensor) and q.ndim > 0
    if not isinstance(q, ms.Tensor) and not 0.0 <= q <= 1.0:
        raise ValueError("quantile() q must be in the range [0, 1]")
    qs = q.reshape(-1).astype(input.dtype) if isinstance(q, ms.Tensor) else ms.Tensor([float(q)], input.dtype)
    x = input.reshape(-1) if dim is None or input.ndim == 0 else input
    d = 0 if dim is None or input.ndim == 0 else dim % input.ndim
    x = ops.moveaxis(x, d, -1)
    nan = ops.isnan(x)
    n = x.shape[-1]
    ordered = ops.sort(ops.where(nan, ops.full_like(x, float("inf")), x), -1)[0]    # NaN (as inf) last
    if ignore_nan:
        valid = ops.logical_not(nan).astype(input.dtype).sum(-1, keepdims=True)
        empty = valid == 0
    else:
        valid = ops.full(x.shape[:-1] + (1,), n, dtype=input.dtype)
        empty = nan.any(-1, keep_dims=True)
    ranks = qs * ops.maximum(valid - 1, ops.zeros_like(valid))
    if interpolation == "lower":
        ranks = ops.floor(ranks)
    elif interpolation == "higher":
        ranks = ops.ceil(ranks)
    elif interpolation == "nearest":
        ranks = ops.round(ranks)     # half to even, as torch
    below = ops.floor(ranks)
    low = ops.gather_elements(ordered, -1, below.astype(ms.int64))
    high = ops.gather_elements(ordered, -1, ops.minimum(ops.ceil(ranks), ops.full_like(ranks, n - 1)).astype(ms.int64))
    w = ops.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
    out = ops.where(w < 0.5, low + w * (high - low), high - (high - low) * (1 - w))     # torch's lerp
    out = ops.where(empty, ops.full_like(out, float("nan")), out)
    out = ops.moveaxis(out, -1, 0)                          # (len(q), ...)
    if keepdim and input.ndim:
        out = out.reshape((qs.shape[0],) + (1,) * input.ndim) if dim is None else out.expand_dims(d + 1)
    return out if many else out[0]


def tensor_nanquantile(input, q, dim=None, keepdim=False, interpolation="linear"):
    """torch.nanquantile: tensor_quantile over the values that are not NaN."""
    return tensor_quantile(input, q, dim, keepdim, interpolation, True)


class LinearCrossEntropyLoss(nn.Cell):
    """torch.nn.LinearCrossEntropyLoss with out_features=(): cross_entropy(linear(input), target), the projection a
    `linear` Dense (parameters linear.weight, linear.bias as torch); ignore_index=None ignores no class index."""

    def __init__(self, in_features, num_classes, out_features=(), bias=False, reduction="mean", weight=None,
                 ignore_index=None, label_smoothing=0.0, options=None):
        super().__init__()
        self.linear = nn.Dense(in_features, num_classes, has_bias=bias)
        self.weight, self.reduction, self.label_smoothing = weight, reduction, label_smoothing
        self.ignore_index = -100 if ignore_index is None else ignore_index

    def construct(self, input, target):
        return ops.cross_entropy(self.linear(input), target, self.weight, self.ignore_index, self.reduction,
                                 self.label_smoothing)


def _nnx_intervals(sample, size, out, pool):
    """torch's window starts of fractional max pooling for one dimension: sample (N, C) in [0, 1), float32
    arithmetic truncated as torch's kernel does; the last window ends at the input's end."""
    if out == 1:
        return ops.full(sample.shape + (1,), size - pool, dtype=ms.int64)
    alpha = ms.Tensor((size - pool) / (out - 1), ms.float32)
    i = ops.arange(out - 1).astype(ms.float32)
    s = sample.astype(ms.float32).expand_dims(-1)
    starts = ((i + s) * alpha).astype(ms.int64) - (s * alpha).astype(ms.int64)
    return ops.concat([starts, ops.full(sample.shape + (1,), size - pool, dtype=ms.int64)], -1)


def _nnx_fractional_max_pool(input, nd, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    unbatched = input.ndim == nd + 1
    x = input.expand_dims(0) if unbatched else input
    k = _nnx_tuple(kernel_size, nd)
    sizes = x.shape[2:]
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"fractional_max_pool{nd}d requires specifying either an output_size or an output_ratio")
        out = tuple(int(s * r) for s, r in zip(sizes, _nnx_tuple(output_ratio, nd)))
    else:
        out = _nnx_tuple(output_size, nd)
    n, c = x.shape[0], x.shape[1]
    # torch reads sample (b, c) of a larger _random_samples as well: the first n
    samples = ops.rand((n, c, nd), dtype=x.dtype) if _random_samples is None else _random_samples[:n]
    # torch's sample order: (W, H) for 2-d, (T, H, W) for 3-d
    order = (1, 0) if nd == 2 else (0, 1, 2)
    flat = ops.zeros((n, c) + (1,) * (2 * nd), ms.int64)
    for d in range(nd):
        starts = _nnx_intervals(samples[:, :, order[d]], sizes[d], out[d], k[d])       # (N, C, out_d)
        pos = starts.expand_dims(-1) + ops.arange(k[d]).astype(ms.int64)              # (N, C, out_d, k_d)
        stride = 1
        for later in sizes[d + 1:]:
            stride *= later
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + d], shape[2 + nd + d] = out[d], k[d]
        flat = flat + (pos * stride).reshape(shape)                                   # (N, C, out..., k...)
    flat = ops.broadcast_to(flat, (n, c) + out + k).reshape(n, c, -1)
    values = ops.gather_elements(x.reshape(n, c, -1), 2, flat).reshape((n, c) + out + (-1,))
    best = ops.argmax(values, -1, keepdim=True)
    result = ops.gather_elements(values, nd + 2, best).squeeze(-1)
    indices = ops.gather_elements(flat.reshape((n, c) + out + (-1,)), nd + 2, best).squeeze(-1)
    if unbatched:
        result, indices = result[0], indices[0]
    return (result, indices) if return_indices else result


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """torch.nn.functional.fractional_max_pool2d: torch's window starts from one uniform sample per (sample,
    channel, dimension) (MindSpore's FractionalMaxPool places its windows differently)."""
    return _nnx_fractional_max_pool(input, 2, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    return _nnx_fractional_max_pool(input, 3, kernel_size, output_size, output_ratio, return_indices, _random_samples)


class FractionalMaxPool2d(nn.Cell):
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        if output_size is None and output_ratio is None:
            raise ValueError("FractionalMaxPool requires specifying either an output size, or a pooling ratio")
        self.kernel_size, self.output_size, self.output_ratio = kernel_size, output_size, output_ratio
        self.return_indices = return_indices
        # a buffer in torch (in its state_dict): a Parameter without gradient here
        self._random_samples = None if _random_samples is None else ms.Parameter(
            _random_samples, name="_random_samples", requires_grad=False)

    def construct(self, input):
        return _nnx_fractional_max_pool(input, self._nd, self.kernel_size, self.output_size, self.output_ratio,
                                        self.return_indices, self._random_samples)


class FractionalMaxPool3d(FractionalMaxPool2d):
    _nd = 3


def interpolate_area(input, size=None, scale_factor=None):
    """F.interpolate(mode='area'): torch's adaptive average pooling to the output size (size, or floor(in * factor)
    per spatial axis). MindSpore's area resize pools a 1-D input only when the length divides evenly: 1-D runs as
    2-D pooling over a unit height."""
    nd = input.ndim - 2
    if size is not None:
        out = _nnx_tuple(size, nd)
    else:
        out = tuple(int(math.floor(n * float(f))) for n, f in zip(input.shape[2:], _nnx_tuple(scale_factor, nd)))
    if nd == 1:
        return ops.squeeze(ops.adaptive_avg_pool2d(ops.expand_dims(input, -2), (1, out[0])), -2)
    if nd == 2:
        return ops.adaptive_avg_pool2d(input, out)
    return ops.adaptive_avg_pool3d(input, out)



def interpolate_bicubic(input, size=None, scale_factor=None, align_corners=None, recompute_scale_factor=None):
    """F.interpolate(mode='bicubic') as torch's CPU kernel computes it: the cubic convolution with coefficient
    -0.75 (MindSpore's ResizeBicubic uses -0.5), the four taps clamped to the border, sampled on torch's grid
    (1/scale_factor when a factor is given without recompute_scale_factor, else in/out; align_corners=True:
    (in - 1)/(out - 1)). Each spatial axis is one constant matrix (built while the graph compiles), so the resize
    is two matmuls and gradients reach the input."""
    rows, cols = _bicubic_matrices(input.shape, size, scale_factor, bool(align_corners),
                                   bool(recompute_scale_factor))
    rows = ms.Tensor(rows, input.dtype)
    cols = ms.Tensor(cols, input.dtype)
    return ops.matmul(ops.matmul(rows, input), cols)


def _bicubic_axis(n_in, n_out, factor, align_corners, recompute):
    """(n_out, n_in) weights of torch's bicubic resize along one axis (aten's HelperInterpCubic: the source index
    and the scale in float32, the index floored and kept below n_in, the fraction clamped to [0, 1])."""
    import numpy as np
    a = -0.75
    f32 = np.float32
    if align_corners:
        scale = f32((n_in - 1) / (n_out - 1)) if n_out > 1 else f32(0)
    elif factor is not None and not recompute and factor > 0:
        scale = f32(1.0 / factor)
    else:
        scale = f32(n_in / n_out)
    out = np.zeros((n_out, n_in), np.float64)
    for i in range(n_out):
        src = scale * f32(i) if align_corners else scale * (f32(i) + f32(0.5)) - f32(0.5)
        base = min(int(math.floor(src)), n_in - 1)
        t = float(min(max(src - f32(base), f32(0)), f32(1)))
        near = lambda x: ((a + 2) * x - (a + 3)) * x * x + 1           # |x| <= 1
        far = lambda x: ((a * x - 5 * a) * x + 8 * a) * x - 4 * a      # 1 < |x| < 2
        for k, c in enumerate((far(t + 1), near(t), near(1 - t), far(2 - t))):
            out[i, min(max(base - 1 + k, 0), n_in - 1)] += c
    return out


# host arithmetic on the shapes (constants while a graph compiles): ops.constexpr runs it then
@ops.constexpr
def _bicubic_matrices(shape, size, scale_factor, align_corners, recompute):
    if len(shape) != 4:
        raise MigrationError(f"F.interpolate(mode='bicubic') takes a 4-D input (torch refuses {len(shape)}-D)")
    if any(n is None or n < 0 for n in shape[2:]):
        raise MigrationError("F.interpolate(mode='bicubic') of an input whose height or width the data decides, "
                             "compiled: the resize matrices need the sizes while compiling (run in PYNATIVE mode)")
    h_in, w_in = shape[2], shape[3]
    if size is not None:
        h_out, w_out = _nnx_tuple(size, 2)
        factors = (None, None)
    else:
        factors = tuple(float(f) for f in _nnx_tuple(scale_factor, 2))
        h_out, w_out = (int(math.floor(n * f)) for n, f in zip((h_in, w_in), factors))
    rows = _bicubic_axis(h_in, int(h_out), factors[0], align_corners, recompute)
    cols = _bicubic_axis(w_in, int(w_out), factors[1], align_corners, recompute).T
    return tuple(map(tuple, rows.tolist())), tuple(map(tuple, cols.tolist()))


def interpolate_checked(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                        recompute_scale_factor=None, where=""):
    """F.interpolate whose mode or scale factor is known only at run time (`mode=self.mode`,
    `scale_factor=self.factor`). MindSpore samples on the output-size grid, which is torch's own grid for
    integer factors, for recompute_scale_factor=True and for align_corners=True in the linear modes; another
    factor or an unknown mode raises MigrationError naming the site. Bicubic is interpolate_bicubic."""
    if mode == "bicubic":
        return interpolate_bicubic(input, size, scale_factor, align_corners, recompute_scale_factor)
    factor = _interpolate_factor(scale_factor, mode, align_corners, recompute_scale_factor, where)
    if mode == "area":
        return interpolate_area(input, size, scale_factor)
    if factor is None:
        return ops.interpolate(input, size, None, mode, align_corners)
    return ops.interpolate(input, None, factor, mode, align_corners, recompute_scale_factor=True)


# plain Python on constants, which GRAPH mode does not compile (nor a raise of MigrationError): ops.constexpr
# runs it while compiling
@ops.constexpr
def _interpolate_factor(scale_factor, mode, align_corners, recompute_scale_factor, where):
    call = f"F.interpolate(mode={mode!r}, scale_factor={scale_factor!r}) at {where}"
    if mode not in ("nearest", "linear", "bilinear", "trilinear", "area", "nearest-exact"):
        raise MigrationError(f"{call}: mode {mode!r} is not converted")
    if scale_factor is None:
        return None
    many = isinstance(scale_factor, (tuple, list))
    factors = tuple(scale_factor) if many else (scale_factor,)
    exact = all(f > 0 and float(f).is_integer() for f in factors)
    if not (exact or recompute_scale_factor or mode == "area"
            or (align_corners and mode in ("linear", "bilinear", "trilinear"))):
        raise MigrationError(
            f"{call}: MindSpore samples on the output-size grid (torch's recompute_scale_factor=True), torch on "
            "1/scale_factor, which differ for a fractional factor. Pass size=, an integer factor, or "
            "recompute_scale_factor=True")
    return tuple(float(f) for f in factors) if many else float(scale_factor)


class AdaptiveLogSoftmaxWithLoss(nn.Cell):
    """torch.nn.AdaptiveLogSoftmaxWithLoss: `head` (nn.Dense over the shortlist and one token per cluster) and `tail`
    (per cluster, two bias-free nn.Dense projecting down by div_value ** (i + 1)), torch's parameter names. The
    forward takes each target's log-probability from the full table log_prob computes, the same sums torch forms row
    by row over each cluster's rows (no row selection by the data's values, so a compiled graph runs it too);
    returns (output, loss) as a namedtuple, as torch."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features, self.n_classes, self.div_value, self.head_bias = in_features, n_classes, div_value, head_bias
        self.cutoffs = cutoffs + [n_classes]
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = nn.Dense(in_features, self.head_size, has_bias=head_bias)
        self.tail = nn.CellList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(nn.SequentialCell([nn.Dense(in_features, hsz, has_bias=False),
                                                nn.Dense(hsz, osz, has_bias=False)]))

    def _full_log_prob(self, input, head_output):
        head_logprob = ops.log_softmax(head_output, 1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = ops.log_softmax(self.tail[i](input), 1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i:self.shortlist_size + i + 1])
        return ops.cat(parts, 1)

    def log_prob(self, input):
        batched = input.ndim > 1
        x = input if batched else input.expand_dims(0)
        out = self._full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        batched = input.ndim > 1
        x = input if batched else input.expand_dims(0)
        head_output = self.head(x)
        first = ops.argmax(head_output, 1).astype(ms.int64)
        # a shortlist word that wins the head outranks every cluster's words (each is at most its cluster's share)
        full = ops.argmax(self._full_log_prob(x, head_output), 1).astype(ms.int64)
        out = ops.where(first < self.shortlist_size, first, full)
        return out if batched else out.squeeze(0)

    def construct(self, input, target):
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if target.ndim == 1 and input.ndim != 2:
            raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size {input.shape}")
        if target.ndim == 0 and input.ndim != 1:
            raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size {input.shape}")
        batched = target.ndim > 0
        x = input if batched else input.expand_dims(0)
        t = (target if batched else target.expand_dims(0)).astype(ms.int64)
        output = ops.gather_elements(self._full_log_prob(x, self.head(x)), 1, t.expand_dims(1)).squeeze(1)
        loss = (-output).mean()
        return ASMoutput(output if batched else output.squeeze(0), loss)


ASMoutput = collections.namedtuple("_ASMoutput", ["output", "loss"])
