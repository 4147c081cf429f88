"""Loss functions with torch's arguments and results.

Each one exists because the closest MindSpore API differs from torch on CPU (a missing
CPU kernel, another dtype for class indices, another return value, or a missing
gradient); the comment on each says which. They are built from ordinary mindspore.ops
calls, run in PyNative and GRAPH mode, and can be replaced by your own code.
"""
import math
import warnings

import mindspore as ms
from mindspore import nn, ops


# True while compile_step runs (and compiles) a train step taking a gradient of a gradient (compat_parts/train.py):
# MindSpore 2.10 cannot differentiate the gradients of the binary cross-entropy and multi-margin kernels again
# ("Primitive BinaryCrossEntropyWithLogitsBackward's bprop not defined", a RuntimeError naming no line), so those
# losses compute by their formulas then; elsewhere by the kernels (more precise in float32 on CPU)
TWICE_DIFFERENTIATED = [False]


def _loss_reduce(loss, reduction):
    """torch's reduction argument: 'mean', 'sum' or 'none'; the mean of an empty batch is nan and its sum 0,
    as torch (the empty-safe reductions of empty_reductions.py)."""
    return reduce_mean(loss) if reduction == "mean" else reduce_sum(loss) if reduction == "sum" else loss


# ----------------------------------------------------------------- regression
# torch's formulas written out: MindSpore 2.10's ops.mse_loss / l1_loss / huber_loss (and the nn Cells) compute a
# float64 loss in float32, and their 'mean' of an empty batch is inf or garbage (torch: nan)
def mse_loss(input, target, reduction="mean"):
    """torch.nn.functional.mse_loss."""
    return _loss_reduce(ops.square(input - target), reduction)


def l1_loss(input, target, reduction="mean"):
    """torch.nn.functional.l1_loss."""
    return _loss_reduce(ops.abs(input - target), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """torch.nn.functional.huber_loss: 0.5 * d**2 where |d| < delta, else delta * (|d| - delta / 2)."""
    diff = input - target
    size = ops.abs(diff)
    delta = ms.Tensor(delta, diff.dtype)   # a Python float would meet a float64 tensor as a float32
    return _loss_reduce(ops.where(size < delta, 0.5 * diff * diff, delta * (size - 0.5 * delta)), reduction)


# ----------------------------------------------------------------- classification
def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """torch's F.cross_entropy. Class indices are gathered (nll_loss): ops.cross_entropy's one-hot product gives
    nan beside a -inf logit (a masked similarity matrix), where torch's loss is finite."""
    if target.ndim == input.ndim and not label_smoothing:    # class probabilities: torch's nan too
        return ops.cross_entropy(input, target, weight, ignore_index, reduction)
    # log_softmax of compat_parts/softmax_slices.py: ops.log_softmax is ~30 ulp off in float32 on CPU
    dim = int(input.ndim > 1)
    log_p = log_softmax(input, dim)
    if not label_smoothing:
        return nll_loss(log_p, target, weight, ignore_index, reduction)
    return _smoothed_cross_entropy(log_p, target, weight, ignore_index, reduction, float(label_smoothing), dim)


def _smoothed_cross_entropy(log_p, target, weight, ignore_index, reduction, smoothing, dim):
    """cross_entropy with label smoothing by torch's formula (LossNLL.cpp): ops.cross_entropy's gathers cannot be
    differentiated twice (Bprop "GatherDGradV2": "The pointer[value] is null", under torch.autograd.grad with
    create_graph=True)."""
    classes = log_p.shape[dim]
    w = None
    if weight is not None:
        shape = [1] * log_p.ndim
        shape[dim] = classes
        w = weight.reshape(tuple(shape))
    if target.ndim == log_p.ndim:       # class probabilities, smoothed towards the uniform distribution
        target = target * (1 - smoothing) + smoothing / classes
        # the mean over the samples (and positions), as torch's
        return _loss_reduce(-ops.sum(log_p * target if w is None else log_p * target * w, dim), reduction)
    nll = nll_loss(log_p, target, weight, ignore_index, reduction)
    smooth = -ops.sum(log_p if w is None else log_p * w, dim)
    keep = target != ignore_index
    smooth = ops.where(keep, smooth, ops.zeros_like(smooth))
    if reduction == "mean":
        if weight is None:
            kept = reduce_sum(keep.astype(smooth.dtype))
        else:
            index = ops.where(keep, target, ops.zeros_like(target)).astype(ms.int64)
            kept = reduce_sum(ops.where(keep, ops.gather(weight, index, 0), ops.zeros_like(smooth)))
        smooth = reduce_sum(smooth) / kept
    elif reduction == "sum":
        smooth = reduce_sum(smooth)
    return (1 - smoothing) * nll + smooth * (smoothing / classes)


def reduction_enum(reduction):
    """torch.nn.functional._Reduction.get_enum (torch's private reduction code, which BasicSR's reduce_loss reads)."""
    if reduction == "none":
        return 0
    if reduction == "mean":
        return 1
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=2)
        return 1
    if reduction == "sum":
        return 2
    raise ValueError(f"{reduction} is not a valid value for reduction")


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """torch's F.nll_loss: each target class's log-probability gathered, weighted, ignore_index left out; the mean
    divides by the kept weights, as torch. ops.nll_loss multiplies by a one-hot mask: a -inf log-probability of
    another class (log_softmax of a masked logit) made the loss nan where torch's is finite."""
    dim, keep = int(input.ndim > 1), target != ignore_index
    index = ops.where(keep, target, ops.zeros_like(target)).astype(ms.int64)
    w = ops.ones(index.shape, input.dtype) if weight is None else ops.gather(weight, index, 0)
    w = ops.where(keep, w, ops.zeros_like(w))
    # each target's log-probability picked by a where over the classes, not ops.gather_elements: MindSpore 2.10
    # cannot differentiate GatherD's gradient again (RuntimeError "The pointer[value] is null" naming no line), which
    # a loss under torch.autograd.grad(create_graph=True) needs (DomainBed's IRM penalty); the sum adds zeros only
    shape = [1] * input.ndim
    shape[dim] = input.shape[dim]
    picked = ops.arange(input.shape[dim], dtype=index.dtype).reshape(tuple(shape)) == index.expand_dims(dim)
    loss = -ops.sum(ops.where(picked, input, ops.zeros_like(input)), dim)
    loss = ops.where(keep, loss * w, ops.zeros_like(w))
    # the empty-safe sums (empty_reductions.py): an empty batch's mean is torch's nan (0 / 0), its sum 0
    return loss if reduction == "none" else reduce_sum(loss) / reduce_sum(w) if reduction == "mean" \
        else reduce_sum(loss)


class NLLLoss(nn.Cell):
    """torch.nn.NLLLoss through _ms_compat.nll_loss (mindspore.nn.NLLLoss's one-hot product: nan beside a -inf
    log-probability)."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__()
        self.weight = weight
        self.ignore_index = ignore_index
        self.reduction = reduction

    def construct(self, input, target):
        return nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class CrossEntropyLoss(nn.Cell):
    """torch.nn.CrossEntropyLoss. mindspore.nn.CrossEntropyLoss only takes int32 class
    indices; cross_entropy above takes torch's int64 ones (and class probabilities) and
    computes the same weight / ignore_index / label_smoothing semantics."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__()
        self.weight = weight
        self.ignore_index = ignore_index
        self.reduction = reduction
        self.label_smoothing = label_smoothing

    def construct(self, input, target):
        return cross_entropy(input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing)


@_migration_constexpr(check=False)
def _same_bce_sizes(input_shape, target_shape):
    """torch's refusal of a target shaped unlike the input (a (N,) output against (N, 1) labels), with its message;
    MindSpore's kernel refuses it too, in other words."""
    known = input_shape is not None and target_shape is not None and all(
        isinstance(d, int) and d >= 0 for d in tuple(input_shape) + tuple(target_shape))
    if known and tuple(input_shape) != tuple(target_shape):   # (a dimension the data decides: None or -1)
        raise ValueError(f"Using a target size (torch.Size({list(target_shape)})) that is different to the input "
                         f"size (torch.Size({list(input_shape)})) is deprecated. Please ensure they have the same "
                         "size.")


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """torch.nn.functional.binary_cross_entropy. MindSpore 2.10 doubles the 'mean' and 'sum' of a
    one-element input and mis-reads a weight that is only broadcastable to the input (silently wrong
    values): the loss is taken per element with the weight expanded, then reduced here."""
    _same_bce_sizes(input.shape, target.shape)
    if weight is not None:
        weight = ops.broadcast_to(weight, input.shape)
    if input.dtype == ms.float64:   # the kernel takes float16/float32 only
        loss = _BinaryCrossEntropy64()(input, target)
        return _loss_reduce(loss if weight is None else loss * weight, reduction)
    if TWICE_DIFFERENTIATED[0]:     # torch's formula, logs clamped at -100 (the kernel's gradient has none)
        loss = -(target * ops.clamp(ops.log(input), -100.0) + (1 - target) * ops.clamp(ops.log1p(-input), -100.0))
        return _loss_reduce(loss if weight is None else loss * weight, reduction)
    return _loss_reduce(ops.binary_cross_entropy(input, target, weight, "none"), reduction)


class _BinaryCrossEntropy64(nn.Cell):
    """torch's binary cross entropy per element in float64 (logs clamped at -100), with torch's gradients:
    (input - target) / max(input * (1 - input), 1e-12f) for the input (finite at 0 and 1, where the clamped
    logs have none) and -logit(input) for the target (unclamped)."""

    def construct(self, input, target):
        return -(target * ops.clamp(ops.log(input), -100.0) + (1 - target) * ops.clamp(ops.log1p(-input), -100.0))

    def bprop(self, input, target, out, dout):
        eps = ms.Tensor(9.999999960041972e-13, input.dtype)   # torch's EPSILON, the float32 1e-12
        return (dout * (input - target) / ops.maximum(input * (1 - input), eps),
                dout * (ops.log1p(-input) - ops.log(input)))


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction="mean"):
    """torch.nn.functional.binary_cross_entropy_with_logits: MindSpore 2.10's kernel takes no float64 (a
    TypeError), so float64 is computed by torch's formula,
    (1 - t) * x + (1 + (pos_weight - 1) * t) * (log(exp(-m) + exp(-x - m)) + m) with m = max(-x, 0).
    MindSpore's kernel reduces the elementwise loss after it: its gradient of a 'mean' kept dividing by the
    element count of the first call in the process (PYNATIVE: a batch of 8 rows after one of 5 got 8/5 of torch's
    gradient, the loss itself right; SASRec's BCE over the positions `np.where(pos != 0)` picks, a count that
    changes every batch), so the kernel gives the elementwise loss and _loss_reduce reduces it."""
    if input.dtype != ms.float64 and not TWICE_DIFFERENTIATED[0]:     # (the kernel's gradient has no gradient)
        return _loss_reduce(ops.binary_cross_entropy_with_logits(input, target, weight, pos_weight, "none"),
                            reduction)
    m = ops.relu(-input)
    softplus = ops.log(ops.exp(-m) + ops.exp(-input - m)) + m     # log(1 + exp(-x)), without overflow
    loss = (1 - target) * input + (softplus if pos_weight is None else (1 + (pos_weight - 1) * target) * softplus)
    return _loss_reduce(loss if weight is None else loss * weight, reduction)


class BCEWithLogitsLoss(nn.Cell):
    """torch.nn.BCEWithLogitsLoss: see binary_cross_entropy_with_logits (float64 included)."""

    def __init__(self, reduction="mean", weight=None, pos_weight=None):
        super().__init__()
        self.reduction = reduction
        self.weight = weight
        self.pos_weight = pos_weight

    def construct(self, input, target):
        return binary_cross_entropy_with_logits(input, target, self.weight, self.pos_weight, self.reduction)


class BCELoss(nn.Cell):
    """torch.nn.BCELoss, reduced as torch (MindSpore's doubles a one-element mean/sum).
    Computed by binary_cross_entropy above, which also expands a broadcastable weight."""

    def __init__(self, weight=None, reduction="mean"):
        super().__init__()
        self.weight = weight
        self.reduction = reduction

    def construct(self, input, target):
        return binary_cross_entropy(input, target, self.weight, self.reduction)


def kl_div(input, target, reduction="mean", log_target=False):
    """torch.nn.functional.kl_div, composed as torch computes it. ops.kl_div gives no
    gradient to the target and has no log_target."""
    if log_target:
        pointwise = precise_exp(target) * (target - input)    # compat_parts/cpu_float32_kernels.py
    else:
        # torch's xlogy(target, target): 0 where target == 0 (a plain t * log(t) is nan there)
        safe = ops.where(target == 0, ops.ones_like(target), target)
        pointwise = ops.where(target == 0, ops.zeros_like(target), target * precise_log(safe)) - target * input
    if reduction == "batchmean":
        return pointwise.sum() / input.shape[0]
    return _loss_reduce(pointwise, reduction)


class KLDivLoss(nn.Cell):
    """torch.nn.KLDivLoss: see kl_div."""

    def __init__(self, reduction="mean", log_target=False):
        super().__init__()
        self.reduction = reduction
        self.log_target = log_target

    def construct(self, input, target):
        return kl_div(input, target, self.reduction, self.log_target)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, reduction="mean"):
    """torch.nn.functional.multi_margin_loss. ops.multi_margin_loss refuses a float margin
    (torch's default is 1.0); its primitive takes one. An unbatched (C,) or 0-d input is one sample, as torch."""
    shape = target.shape     # of the per-sample losses
    if input.ndim < 2:
        input, target = input.reshape(1, -1), target.reshape(1)
    if TWICE_DIFFERENTIATED[0]:     # torch's formula (the kernel's gradient has no gradient)
        loss = _multi_margin_formula(input, target, p, margin, weight)
        return loss.reshape(shape) if reduction == "none" else _loss_reduce(loss, reduction)
    loss = ops.MultiMarginLoss(p, float(margin), reduction)(input, target, weight)
    return loss.reshape(shape) if reduction == "none" else loss


def _multi_margin_formula(input, target, p, margin, weight):
    """Each sample's sum over the other classes j of max(0, margin - x[y] + x[j]) ** p (times weight[y]), divided
    by the class count: the target's value picked by a where over the classes, as nll_loss."""
    picked = ops.arange(input.shape[1], dtype=ms.int64).reshape(1, -1) == target.astype(ms.int64).reshape(-1, 1)
    x_y = ops.sum(ops.where(picked, input, ops.zeros_like(input)), 1, keepdim=True)
    terms = ops.relu(margin - x_y + input)
    terms = terms if p == 1 else terms * terms
    if weight is not None:
        terms = terms * ops.gather(weight, target.astype(ms.int64), 0).reshape(-1, 1)
    return ops.sum(ops.where(picked, ops.zeros_like(terms), terms), 1) / input.shape[1]


def soft_margin_loss(input, target, reduction="mean"):
    """torch.nn.functional.soft_margin_loss: log1p(exp(-target * input)), torch's formula (MindSpore's
    SoftMarginLoss has no CPU kernel), each step exact to rounding as torch's (CPU float32 ops.exp is 5e-6 off,
    ops.log1p is log(1 + x): the loss was 1.5e-6 off)."""
    return _loss_reduce(special_log1p(precise_exp(-target * input)), reduction)


class _ReductionLoss(nn.Cell):
    """A loss module whose only argument is torch's reduction."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction


class MSELoss(_ReductionLoss):
    """torch.nn.MSELoss: see mse_loss (nn.MSELoss's mean of an empty batch is inf in PyNative, a float64 loss is
    computed in float32)."""

    def construct(self, input, target):
        return mse_loss(input, target, self.reduction)


class L1Loss(_ReductionLoss):
    """torch.nn.L1Loss: see l1_loss."""

    def construct(self, input, target):
        return l1_loss(input, target, self.reduction)


class HuberLoss(_ReductionLoss):
    """torch.nn.HuberLoss: see huber_loss."""

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction)
        self.delta = delta

    def construct(self, input, target):
        return huber_loss(input, target, self.reduction, self.delta)


class SoftMarginLoss(_ReductionLoss):
    """torch.nn.SoftMarginLoss: see soft_margin_loss."""

    def construct(self, input, target):
        return soft_margin_loss(input, target, self.reduction)


def hinge_embedding_loss(input, target, margin=1.0, reduction="mean"):
    """torch.nn.functional.hinge_embedding_loss, torch's formula: input where target is 1,
    max(0, margin - input) where it is -1. MindSpore's op refuses integer targets."""
    zeros = ops.zeros_like(input)
    margin_part = ops.where(target != 1, ops.relu(margin - input), zeros)
    self_part = ops.where(target != -1, input, zeros)
    return _loss_reduce(margin_part + self_part, reduction)


class HingeEmbeddingLoss(nn.Cell):
    """torch.nn.HingeEmbeddingLoss: see hinge_embedding_loss."""

    def __init__(self, margin=1.0, reduction="mean"):
        super().__init__()
        self.margin = margin
        self.reduction = reduction

    def construct(self, input, target):
        return hinge_embedding_loss(input, target, self.margin, self.reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """torch.nn.functional.cosine_embedding_loss, torch's formula: 1 - cos where target is 1, max(0, cos - margin)
    where it is -1, the cosine over the target's rank (so a (D,) pair takes a 0-d target) and broadcast against
    the target as torch does; ops.cosine_embedding_loss takes (N, D) inputs with an (N,) target only."""
    dim = target.ndim
    eps = 1e-12   # torch's EPSILON in the magnitudes
    prod = (input1 * input2).sum(dim)
    cos = prod / ops.sqrt(((input1 * input1).sum(dim) + eps) * ((input2 * input2).sum(dim) + eps))
    zeros = ops.zeros_like(cos)
    pos = ops.where(target == 1, 1 - cos, zeros)
    neg = ops.where(target == -1, ops.relu(cos - margin), zeros)
    return _loss_reduce(pos + neg, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """torch.nn.functional.margin_ranking_loss: an integer target (+1/-1) is promoted to the inputs' dtype, as
    torch's arithmetic does (ops.margin_ranking_loss refuses a target of another dtype)."""
    return ops.margin_ranking_loss(input1, input2, target.astype(input1.dtype), margin, reduction)


class MarginRankingLoss(nn.Cell):
    """torch.nn.MarginRankingLoss: see margin_ranking_loss."""

    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__()
        self.margin = margin
        self.reduction = reduction

    def construct(self, input1, input2, target):
        return margin_ranking_loss(input1, input2, target, self.margin, self.reduction)


def multilabel_margin_loss(input, target, reduction="mean"):
    """torch.nn.functional.multilabel_margin_loss, torch's formula (MindSpore's kernel has no
    CPU version): the target classes of a sample are the indices before its first -1; for
    each target class j and non-target class i add max(0, 1 - (x[j] - x[i])), divide by C."""
    unbatched = input.ndim < 2      # (C,), or 0-d: one class
    if unbatched:
        input = input.reshape(1, -1)
        target = target.reshape(1, -1)
    num_classes = input.shape[1]
    valid = ops.cumprod((target >= 0).astype(input.dtype), 1)        # 1 up to the first -1
    classes = ops.arange(num_classes).astype(target.dtype).reshape(1, 1, -1)
    # how often each class is listed as a target: (N, C)
    counts = ((target.expand_dims(2) == classes).astype(input.dtype) * valid.expand_dims(2)).sum(1)
    non_target = (counts == 0).astype(input.dtype)
    margins = ops.relu(1 - input.expand_dims(2) + input.expand_dims(1))   # [n, j, i]: 1 - (x_j - x_i)
    loss = (margins * counts.expand_dims(2) * non_target.expand_dims(1)).sum((1, 2)) / num_classes
    if unbatched:
        loss = loss.reshape(())
    return _loss_reduce(loss, reduction)


class MultiLabelMarginLoss(_ReductionLoss):
    """torch.nn.MultiLabelMarginLoss: see multilabel_margin_loss."""

    def construct(self, input, target):
        return multilabel_margin_loss(input, target, self.reduction)


# ----------------------------------------------------------------- embeddings
def _loss_pairwise_distance(x1, x2, p, eps):
    # torch.pairwise_distance: the p-norm of x1 - x2 + eps over the last dim
    d = x1 - x2 + eps
    if d.dtype == ms.float64 and p not in (0, float("inf"), -float("inf")):   # LpNorm has no float64 kernel
        return (d.abs() ** p).sum(-1) ** (1.0 / p)
    return ops.norm(d, p, -1)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction="mean"):
    """torch.nn.functional.triplet_margin_loss. MindSpore's TripletMarginLoss has no CPU kernel."""
    d_pos = _loss_pairwise_distance(anchor, positive, p, eps)
    d_neg = _loss_pairwise_distance(anchor, negative, p, eps)
    if swap:
        # the harder negative distance: anchor-negative or positive-negative
        d_neg = ops.minimum(d_neg, _loss_pairwise_distance(positive, negative, p, eps))
    return _loss_reduce(ops.relu(margin + d_pos - d_neg), reduction)


class TripletMarginLoss(nn.Cell):
    """torch.nn.TripletMarginLoss: see triplet_margin_loss."""

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction="mean"):
        super().__init__()
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap
        self.reduction = reduction

    def construct(self, anchor, positive, negative):
        return triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps, self.swap,
                                   self.reduction)


def _loss_default_distance(x1, x2):
    # torch's default distance_function: pairwise_distance with p=2, eps=1e-6
    return _loss_pairwise_distance(x1, x2, 2, 1e-6)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """torch.nn.functional.triplet_margin_with_distance_loss (no MindSpore counterpart).
    distance_function must work on MindSpore tensors."""
    distance = _loss_default_distance if distance_function is None else distance_function
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = ops.minimum(d_neg, distance(positive, negative))
    return _loss_reduce(ops.relu(margin + d_pos - d_neg), reduction)


class TripletMarginWithDistanceLoss(nn.Cell):
    """torch.nn.TripletMarginWithDistanceLoss: see triplet_margin_with_distance_loss."""

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__()
        self.distance_function = _loss_default_distance if distance_function is None else distance_function
        self.margin = margin
        self.swap = swap
        self.reduction = reduction

    def construct(self, anchor, positive, negative):
        return triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                 margin=self.margin, swap=self.swap, reduction=self.reduction)


# ----------------------------------------------------------------- regression
class SmoothL1Loss(nn.Cell):
    """torch.nn.SmoothL1Loss with a beta known only at run time: torch computes an L1 loss
    for beta=0, where MindSpore's SmoothL1Loss has no CPU kernel."""

    def __init__(self, reduction="mean", beta=1.0):
        super().__init__()
        self.reduction = reduction
        self.beta = beta

    def construct(self, input, target):
        if self.beta == 0:
            return ops.l1_loss(input, target, self.reduction)
        return ops.smooth_l1_loss(input, target, self.beta, self.reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, eps=1e-8, reduction="mean"):
    """torch.nn.functional.poisson_nll_loss (mindspore.ops has no functional form)."""
    if log_input:
        loss = ops.exp(input) - target * input
    else:
        loss = input - target * ops.log(input + eps)
    if full:
        # Stirling's approximation of log(target!), added where target > 1 as torch does
        stirling = target * ops.log(target) - target + 0.5 * ops.log(2 * math.pi * target)
        loss = loss + ops.where(target > 1, stirling, ops.zeros_like(stirling))
    return _loss_reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """torch.nn.functional.gaussian_nll_loss. torch clamps var to eps without recording the
    clamp for autograd (the gradient flows as if unclamped); ops.gaussian_nll_loss clamps
    with a real clamp, whose gradient is 0 below eps. torch's check that var >= 0 is
    left out (it needs the data on the host)."""
    if isinstance(var, (int, float)):
        var = ops.ones_like(input) * var
    if var.shape != input.shape and var.shape == input.shape[:-1]:
        var = var.expand_dims(-1)   # one variance per sample: broadcast over the last dim
    var = var + ops.stop_gradient(ops.clamp(var, min=eps) - var)
    loss = 0.5 * (ops.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _loss_reduce(loss, reduction)


class GaussianNLLLoss(nn.Cell):
    """torch.nn.GaussianNLLLoss: see gaussian_nll_loss."""

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__()
        self.full = full
        self.eps = eps
        self.reduction = reduction

    def construct(self, input, target, var):
        return gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


# ----------------------------------------------------------------- sequences
def _ctc_lengths(lengths):
    # torch also takes the lengths as a tuple or list of ints
    if isinstance(lengths, (tuple, list)):
        return ms.Tensor(lengths, ms.int64)
    return lengths


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """torch.nn.functional.ctc_loss with torch's (T, N, C) log_probs. Differences handled here:
    ops.ctc_loss returns (loss, log_alpha) where torch returns the loss; it needs padded
    (N, S) targets, where torch also takes all targets concatenated in one 1-D tensor;
    and torch takes unbatched (T, C) input."""
    input_lengths = _ctc_lengths(input_lengths)
    target_lengths = _ctc_lengths(target_lengths)
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = log_probs.expand_dims(1)
        targets = targets.reshape(1, -1)
        input_lengths = input_lengths.reshape(1)
        target_lengths = target_lengths.reshape(1)
    elif targets.ndim == 1:
        # concatenated targets: row i is targets[start_i : start_i + target_lengths[i]],
        # padded to the total length (entries past a row's length are never read)
        total = targets.shape[0]
        starts = ops.cumsum(target_lengths, 0) - target_lengths
        index = starts.reshape(-1, 1) + ops.arange(total).reshape(1, -1)
        targets = ops.gather(targets, ops.minimum(index, total - 1), 0)
    loss, _ = ops.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)
    if unbatched and reduction == "none":
        loss = loss.reshape(())
    return loss


class CTCLoss(nn.Cell):
    """torch.nn.CTCLoss: see ctc_loss."""

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__()
        self.blank = blank
        self.reduction = reduction
        self.zero_infinity = zero_infinity

    def construct(self, log_probs, targets, input_lengths, target_lengths):
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                        self.zero_infinity)
