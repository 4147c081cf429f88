"""The runtime the traced model.py carries with it.

`msmigrate trace` copies the parts of this file that the generated network uses into the head of
model.py (everything below the `# ---- runtime` marker), so the emitted model depends on MindSpore
and NumPy only. Each helper is the MindSpore form of one ATen op that has no direct CPU kernel in
MindSpore 2.10, or whose classic MindSpore counterpart differs from torch."""
# ---- runtime
import math
import os

# MindSpore 2.10's oneDNN picks a ~100x slower reference convolution on AVX-512 CPUs; AVX2 kernels are fast.
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")

import numpy as np  # noqa: E402
import mindspore as ms  # noqa: E402
from mindspore import Parameter, Tensor, nn, ops  # noqa: E402


class Module(nn.Cell):
    """A container standing for one torch submodule: its children and parameters, by the torch names,
    so that parameter names (and checkpoint keys) equal the torch state_dict keys."""

    def __init__(self, /, **members):  # positional-only: a child may be called `self`
        super().__init__()
        for name, value in members.items():
            setattr(self, name, value)


def torch_names(net, renamed):
    """Give the parameters their torch names back where a member was renamed because its torch name
    is taken by nn.Cell itself (`construct`, `cells`, `phase`...): `renamed` maps attribute -> torch name."""
    for p in net.get_parameters():
        p.name = ".".join(renamed.get(part, part) for part in p.name.split("."))


class Empty(nn.Cell):
    """A torch submodule without parameters (ReLU, Dropout...): its work is done in construct;
    it keeps the numbering of the container it sits in."""


def param(shape, dtype=ms.float32):
    """A parameter of this shape; its value comes from the checkpoint."""
    trainable = dtype in (ms.float16, ms.float32, ms.float64, ms.bfloat16)
    return Parameter(Tensor(np.zeros(shape), dtype), requires_grad=trainable)


def buffer(shape, dtype=ms.float32):
    """A torch buffer (or lifted constant) of this shape: saved in the checkpoint, never trained."""
    return Parameter(Tensor(np.zeros(shape), dtype), requires_grad=False)


def freeze(net, names):
    """No gradient and no update for these parameters (frozen in torch: requires_grad=False)."""
    names = set(names)
    for p in net.get_parameters():
        if p.name in names:
            p.requires_grad = False
            names.discard(p.name)
    if names:
        raise RuntimeError(f"freeze: no parameters named {sorted(names)[:5]}")


def untie_checkpoint(params, tied):
    """The checkpoint without the second key of each tied pair (`tied`: key -> the key of the one
    Parameter the model holds for both), once both are seen to hold the same values."""
    for key, source in tied.items():
        if key in params:
            if source in params and not np.array_equal(params[key].asnumpy(), params[source].asnumpy()):
                raise RuntimeError(f"checkpoint: {key} is tied to {source} but holds other values")
            del params[key]
    return params


class BatchNorm(nn.Cell):
    """torch BatchNorm1d/2d/3d in eval mode, with torch's parameter names (MindSpore's nn.BatchNorm2d
    calls them gamma/beta/moving_mean/moving_variance)."""

    def __init__(self, num_features, eps=1e-5, affine=True):
        super().__init__()
        self.eps = eps
        self.weight = param((num_features,)) if affine else None
        self.bias = param((num_features,)) if affine else None
        self.running_mean = buffer((num_features,))
        self.running_var = buffer((num_features,))
        self.num_batches_tracked = buffer((), ms.int64)  # kept so the checkpoint holds every torch key

    def construct(self, x):
        return batch_norm(x, self.weight, self.bias, self.running_mean, self.running_var, self.eps)


def batch_norm(x, weight, bias, mean, var, eps):
    """Eval-mode batch norm on (N, C, ...) input, as torch's CPU kernel computes it:
    x * alpha + beta with alpha = weight / sqrt(var + eps), beta = bias - mean * alpha."""
    shape = (1, -1) + (1,) * (x.ndim - 2)
    alpha = 1.0 / ops.sqrt(var + eps)
    if weight is not None:
        alpha = alpha * weight
    beta = -mean * alpha
    if bias is not None:
        beta = beta + bias
    return x * alpha.reshape(shape) + beta.reshape(shape)


class LayerNorm(nn.Cell):
    """torch LayerNorm with torch's parameter names (weight/bias; MindSpore's are gamma/beta) and eps."""

    def __init__(self, normalized_shape, eps=1e-5, weight=True, bias=True):
        super().__init__()
        shape = tuple(normalized_shape)
        self.weight = param(shape) if weight else Tensor(np.ones(shape), ms.float32)
        self.bias = param(shape) if bias else Tensor(np.zeros(shape), ms.float32)
        self.norm = ops.LayerNorm(begin_norm_axis=-len(shape), begin_params_axis=-len(shape), epsilon=eps)

    def construct(self, x):
        return self.norm(x, self.weight, self.bias)[0]


def layer_norm(x, normalized_shape, weight, bias, eps):
    """torch.nn.functional.layer_norm written as arithmetic (ops.layer_norm has no CPU kernel)."""
    axes = tuple(range(-len(normalized_shape), 0))
    mean = ops.mean(x, axes, True)
    var = ops.mean(ops.square(x - mean), axes, True)
    y = (x - mean) * ops.rsqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def group_norm(x, groups, weight, bias, eps):
    """torch.nn.functional.group_norm on (N, C, ...) input."""
    n, c = x.shape[0], x.shape[1]
    g = ops.reshape(x, (n, groups, -1))
    mean = ops.mean(g, 2, True)
    var = ops.mean(ops.square(g - mean), 2, True)
    y = ops.reshape((g - mean) * ops.rsqrt(var + eps), x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


class Embedding(nn.Cell):
    """torch Embedding (lookup table named `weight`, like torch)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None):
        super().__init__()
        self.weight = param((num_embeddings, embedding_dim))
        self.padding_idx = padding_idx

    def construct(self, ids):
        if self.padding_idx is None:
            return ops.gather(self.weight, ids, 0)
        return embedding_lookup(self.weight, ids, self.padding_idx)


def embedding_lookup(weight, ids, padding_idx):
    """torch embedding with a padding_idx: the same lookup, but the padding row gets no gradient."""
    rows = ops.gather(weight, ids, 0)
    return ops.where(ops.expand_dims(ids == padding_idx, -1), ops.stop_gradient(rows), rows)


class Linear(nn.Cell):
    """torch Linear: y = x @ weight.T + bias (weight (out, in), like nn.Dense, but on any rank)."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.weight = param((out_features, in_features))
        self.bias = param((out_features,)) if bias else None

    def construct(self, x):
        return linear(x, self.weight, self.bias)


def linear(x, weight, bias=None):
    y = matmul(x, ops.transpose(weight, (1, 0)))
    if bias is not None:
        y = y + bias
    return y


def matmul(a, b):
    """torch.matmul; an N-d @ 2-d product runs as one 2-d matmul (GRAPH mode would otherwise
    broadcast b to every batch item: gigabytes for a transformer's projections)."""
    if b.ndim == 2 and a.ndim > 2:
        y = ops.matmul(ops.reshape(a, (-1, a.shape[-1])), b)
        return ops.reshape(y, a.shape[:-1] + (b.shape[-1],))
    return ops.matmul(a, b)


def gelu(x, approximate="none"):
    """torch GELU: the exact erf form by default (MindSpore's nn.GELU defaults to tanh)."""
    if approximate == "tanh":
        return 0.5 * x * (1.0 + ops.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
    return 0.5 * x * (1.0 + ops.erf(x * 0.7071067811865476))


def conv(x, weight, bias, stride, padding, dilation, groups):
    """torch convolution (1d/2d/3d) with explicit padding; 1d runs as 2d with a unit height."""
    nd = x.ndim - 2
    if nd == 1:
        y = conv(ops.expand_dims(x, 2), ops.expand_dims(weight, 2), bias, (1,) + tuple(stride),
                 (0,) + tuple(padding), (1,) + tuple(dilation), groups)
        return ops.squeeze(y, 2)
    padding = tuple(padding)
    mode = "pad" if any(padding) else "valid"
    pad = padding if any(padding) else 0
    if nd == 2:
        y = ops.conv2d(x, weight, None, tuple(stride), mode, pad, tuple(dilation), groups)
    else:
        y = ops.conv3d(x, weight, None, tuple(stride), mode, pad, tuple(dilation), groups)
    if bias is not None:
        y = y + bias.reshape((1, -1) + (1,) * nd)
    return y


def pool_pads(size, kernel, stride, padding, ceil_mode):
    """(left, right) padding so that a VALID pool gives torch's output length (torch's ceil_mode
    rule: the last window must start inside the input or its left padding)."""
    span = size + 2 * padding - kernel
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    right = (out - 1) * stride + kernel - size - padding
    return padding, right


def max_pool2d(x, kernel, stride, pads):
    """torch max_pool2d: pad with -inf (pads: top, bottom, left, right; may crop), then a VALID pool."""
    x = pad_or_crop(x, pads, float("-inf"))
    return ops.MaxPool(kernel_size=tuple(kernel), strides=tuple(stride), pad_mode="VALID")(x)


def avg_pool2d(x, kernel, stride, pads, padding, count_include_pad, divisor=None):
    """torch avg_pool2d: zero padding; the divisor counts the cells of the window inside the input
    (count_include_pad=False) or inside input+padding, like torch."""
    xs = pad_or_crop(x, pads, 0.0)
    pool = ops.AvgPool(kernel_size=tuple(kernel), strides=tuple(stride), pad_mode="VALID")
    area = float(kernel[0] * kernel[1])
    total = pool(xs) * area
    if divisor is not None:
        return total / divisor
    h, w = x.shape[2], x.shape[3]
    if count_include_pad:
        ones = ops.ones((1, 1, h + 2 * padding[0], w + 2 * padding[1]), x.dtype)
        inner = (pads[0] - padding[0], pads[1] - padding[0], pads[2] - padding[1], pads[3] - padding[1])
        ones = pad_or_crop(ones, inner, 0.0)
    else:
        ones = pad_or_crop(ops.ones((1, 1, h, w), x.dtype), pads, 0.0)
    return total / (pool(ones) * area)


def pad_or_crop(x, pads, value):
    """Pad the last two dims by (top, bottom, left, right); negative amounts crop."""
    top, bottom, left, right = pads
    if top < 0 or bottom < 0 or left < 0 or right < 0:
        h, w = x.shape[2], x.shape[3]
        x = x[:, :, max(-top, 0):h - max(-bottom, 0), max(-left, 0):w - max(-right, 0)]
        top, bottom, left, right = max(top, 0), max(bottom, 0), max(left, 0), max(right, 0)
    if top or bottom or left or right:
        x = constant_pad(x, (left, right, top, bottom), value)
    return x


def constant_pad(x, pad, value=0.0):
    """torch's constant padding (flat pairs, last dim first; amounts >= 0): blocks of `value` concatenated, not
    MindSpore's pad kernel, whose gradient inside a compiled train step (GRAPH mode, CPU, 2.10) goes wrong from
    the step's second run on, and then is zero for the layers before it."""
    for k in range(len(pad) // 2):
        axis = x.ndim - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        parts = (x,)
        if before > 0:
            parts = (ops.full(x.shape[:axis] + (before,) + x.shape[axis + 1:], value, dtype=x.dtype),) + parts
        if after > 0:
            parts = parts + (ops.full(x.shape[:axis] + (after,) + x.shape[axis + 1:], value, dtype=x.dtype),)
        if len(parts) > 1:
            x = ops.concat(parts, axis)
    return x


def adaptive_avg_pool2d(x, output_size):
    """torch adaptive_avg_pool2d: bin i covers [floor(i*H/out), ceil((i+1)*H/out))."""
    h, w = x.shape[2], x.shape[3]
    oh, ow = output_size
    if oh == 1 and ow == 1:
        return ops.mean(x, (2, 3), True)
    if h % oh == 0 and w % ow == 0:
        k = (h // oh, w // ow)
        return ops.AvgPool(kernel_size=k, strides=k, pad_mode="VALID")(x)
    rows = []
    for i in range(oh):
        h0, h1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        cols = []
        for j in range(ow):
            w0, w1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            cols.append(ops.mean(x[:, :, h0:h1, w0:w1], (2, 3), True))
        rows.append(ops.cat(cols, 3))
    return ops.cat(rows, 2)


def softmax(x, axis):
    """torch.softmax: a slice of all -inf gives torch's nan (MindSpore 2.10's CPU kernel gives 0 there and
    garbage in the slices after it); such slices reach the kernel as zeros. Over an axis of length 1 the value
    (1, nan where not finite) and zero gradient without ops.softmax: MindSpore 2.10 reuses the gradient it builds
    there, wrong, for later softmax inputs of the same rank."""
    nothing = ops.amax(x, axis, True) == float("-inf")
    x = ops.where(nothing, ops.zeros_like(x), x)
    out = ops.exp(x - x) if x.ndim and x.shape[axis] == 1 else ops.softmax(x, axis)
    return ops.where(nothing, ops.full((), float("nan"), dtype=out.dtype), out)


def log_softmax(x, axis):
    """torch.log_softmax as x - logsumexp(x): MindSpore 2.10's ops.log_softmax computes a float64 input in
    float32 (off by ~3e-6) and is ~30 ulp off in float32."""
    return x - ops.logsumexp(x, axis, True)


def sdpa(q, k, v, mask=None, is_causal=False, scale=None):
    """torch scaled_dot_product_attention (no dropout: inference). Masked scores are set to the lowest
    float32 rather than -inf (MindSpore's CPU softmax zeroes whole batches next to a row of -inf), and a
    query that may attend to nothing (a left-padding position) gets 0, as torch's CPU kernel gives."""
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    s = ops.matmul(q, ops.swapaxes(k, -2, -1)) * scale
    low = float(np.finfo(np.float32).min)
    if is_causal:
        lq, lk = q.shape[-2], k.shape[-2]
        keep = ops.tril(ops.ones((lq, lk), ms.float32)) > 0.5  # top-left aligned, like torch
        s = ops.masked_fill(s, ops.logical_not(keep), low)
    if mask is None:
        return ops.matmul(ops.softmax(s, -1), v)
    if mask.dtype == ms.bool_:
        alive = ops.any(mask, -1, True)
        s = ops.masked_fill(s, ops.logical_not(mask), low)
    else:  # an additive mask: its -inf entries are handled as a boolean mask (no -inf reaches softmax)
        keep = mask > float("-inf")
        alive = ops.any(keep, -1, True)
        s = ops.masked_fill(s + ops.masked_fill(mask, ops.logical_not(keep), 0.0), ops.logical_not(keep), low)
    return ops.matmul(ops.where(alive, ops.softmax(s, -1), 0.0), v)


def sort(x, dim, descending):
    """torch.sort: (values, int64 indices). Equal values may come in another index order than torch's."""
    values, idx = ops.sort(x, dim, descending)
    return values, ops.cast(idx, ms.int64)


def roll(x, shift, dim):
    """torch.roll along one dim by slicing and concatenation (ops.roll has no CPU kernel);
    0 < shift < x.shape[dim]."""
    n = x.shape[dim]
    return ops.cat((narrow(x, dim, n - shift, n), narrow(x, dim, 0, n - shift)), dim)


def narrow(x, dim, start, end, step=1):
    """x[..., start:end:step, ...] along dim (a tuple index: graph mode rejects a mutated list)."""
    dim = dim % x.ndim
    return x[(slice(None),) * dim + (slice(start, end, step),)]


def slice_scatter(x, src, dim, start, end, step=1):
    """torch.slice_scatter: x with x[..., start:end:step, ...] replaced by src (step 1)."""
    n = x.shape[dim]
    start = max(start + n if start < 0 else start, 0)
    end = min(end + n if end < 0 else end, n)
    if step != 1:
        raise ValueError("slice_scatter with a step is not supported")
    parts = []
    if start > 0:
        parts.append(narrow(x, dim, 0, start))
    parts.append(src)
    if end < n:
        parts.append(narrow(x, dim, end, n))
    return ops.cat(parts, dim) if len(parts) > 1 else src


def select_scatter(x, src, dim, index):
    return slice_scatter(x, ops.expand_dims(src, dim), dim, index, index + 1 if index != -1 else x.shape[dim])


def index(x, indices):
    """torch advanced indexing x[indices] (None entries mean a full slice)."""
    used = [i for i, t in enumerate(indices) if t is not None]
    if len(used) == 1:
        d = used[0]
        idx = indices[d]
        if idx.dtype == ms.bool_:
            raise ValueError("boolean-mask indexing has a data-dependent shape")
        return ops.gather(x, idx, d)
    return x[tuple(slice(None) if t is None else t for t in indices)]


def rnn(x, hx, params, mode, has_biases, num_layers, bidirectional, batch_first):
    """torch LSTM/GRU/RNN forward (inference), unrolled over time; gate order as in torch
    (LSTM: i, f, g, o; GRU: r, z, n). params: torch's flat list (w_ih, w_hh[, b_ih, b_hh]) per
    layer and direction. Returns (output, h_n) or (output, h_n, c_n)."""
    if batch_first:
        x = ops.swapaxes(x, 0, 1)
    dirs = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    h0 = hx[0]
    c0 = hx[1] if mode == "LSTM" else None
    hs, cs = [], []
    seq = x
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = (layer * dirs + d) * per
            w_ih, w_hh = params[k], params[k + 1]
            b_ih = params[k + 2] if has_biases else None
            b_hh = params[k + 3] if has_biases else None
            h = h0[layer * dirs + d]
            c = c0[layer * dirs + d] if c0 is not None else None
            steps = range(seq.shape[0] - 1, -1, -1) if d == 1 else range(seq.shape[0])
            ys = []
            for t in steps:
                gi = linear(seq[t], w_ih, b_ih)
                gh = linear(h, w_hh, b_hh)
                if mode == "LSTM":
                    i, f, g, o = ops.split(gi + gh, w_hh.shape[1], -1)
                    c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
                    h = ops.sigmoid(o) * ops.tanh(c)
                elif mode == "GRU":
                    ir, iz, inn = ops.split(gi, w_hh.shape[1], -1)
                    hr, hz, hn = ops.split(gh, w_hh.shape[1], -1)
                    r = ops.sigmoid(ir + hr)
                    z = ops.sigmoid(iz + hz)
                    n = ops.tanh(inn + r * hn)
                    h = (1.0 - z) * n + z * h
                else:
                    h = ops.tanh(gi + gh) if mode == "RNN_TANH" else ops.relu(gi + gh)
                ys.append(h)
            if d == 1:
                ys = ys[::-1]
            outs.append(ops.stack(ys, 0))
            hs.append(h)
            if c is not None:
                cs.append(c)
        seq = ops.cat(outs, -1) if dirs == 2 else outs[0]
    out = ops.swapaxes(seq, 0, 1) if batch_first else seq
    if mode == "LSTM":
        return out, ops.stack(hs, 0), ops.stack(cs, 0)
    return out, ops.stack(hs, 0)
