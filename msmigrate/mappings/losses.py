"""torch loss classes (torch.nn.*Loss) and the functional losses that functional.py does
not already cover -> classic mindspore.nn / mindspore.ops, or a helper in _ms_compat.

Every target was compared with torch on CPU, in PyNative and GRAPH mode, values and
gradients (tests/parity/test_losses.py). A MindSpore loss is used where it matches;
where it does not (no CPU kernel, int32-only class indices, another return value, no
gradient for the target, a mis-read broadcast weight) the site calls a small helper in
_ms_compat.py (templates/compat_parts/losses.py) that computes torch's formula, and the
record's note says why.

Legacy `size_average` / `reduce` arguments are translated to `reduction` when they are
literals (torch's own rule: the legacy flags, when given, override `reduction`); other
values make the site a TODO.
"""
from __future__ import annotations

from ..callsite import UnsupportedSite
from ..records import mapping, rule
from .functional import _LEGACY, _given, _lit_or, legacy_reduction  # noqa: F401

T = "tests/parity/test_losses.py"
P = "torch.nn.functional."
N = "torch.nn."
_ABSENT = object()


# ----------------------------------------------------------------------------- shared
def _reject(b, name: str, why: str) -> None:
    """The argument must be absent or None; then it is removed."""
    if _given(b, name):
        raise UnsupportedSite(f"argument {name}={b.code(name)}: {why}")
    b.remove(name)


def _loss(checks=None):
    """A rule: translate the legacy flags, then run `checks(ctx)` (which may return an
    expression or a new target name)."""
    def loss_rule(ctx):
        legacy_reduction(ctx.bound)
        return checks(ctx) if checks else None
    return loss_rule


def _record(source, target, args, target_args, test, note="", checks=None, **kw):
    rule(source, target, args=args, target_args=target_args, note=note, test=f"{T}::{test}", **kw)(_loss(checks))


# ----------------------------------------------------------------------------- classes
_CE_NOTE = ("mindspore.nn.CrossEntropyLoss only accepts int32 class indices: _ms_compat.CrossEntropyLoss calls "
            "ops.cross_entropy, which takes torch's int64 indices or class probabilities, (N, C) or (N, C, d1, ...) "
            "input, weight, ignore_index and label_smoothing with torch's results")
_record(N + "CrossEntropyLoss", "_ms_compat.CrossEntropyLoss",
        ("weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing"),
        ("weight", "ignore_index", "reduction", "label_smoothing"), "test_classification_classes", _CE_NOTE)
for _name in ("NLLLoss", "NLLLoss2d"):
    _record(N + _name, "_ms_compat.NLLLoss", ("weight", "size_average", "ignore_index", "reduce", "reduction"),
            ("weight", "ignore_index", "reduction"), "test_classification_classes",
            "the same arguments; (N, C) and (N, C, d1, ...) input with int64 targets; each target's "
            "log-probability gathered, as torch (mindspore.nn.NLLLoss's one-hot product gave nan beside a -inf "
            "log-probability of another class)")
for _name in ("MSELoss", "L1Loss"):
    _record(N + _name, f"_ms_compat.{_name}", _LEGACY + ("reduction",), ("reduction",), "test_regression",
            "torch's formula, reduced as torch (templates/compat_parts/losses.py): float64 kept (MindSpore 2.10's "
            f"nn.{_name} computes in float32), nan for the mean of an empty batch (MindSpore's gives inf in PyNative; "
            "tests/parity/test_empty_losses.py)")


def _smooth_l1_class(ctx):
    b = ctx.bound
    if not b.has("reduction"):
        b.set("reduction", "'mean'")          # MindSpore defaults to 'none'
    if not b.has("beta"):
        return None
    beta = _lit_or(b.code("beta"), _ABSENT)
    if beta is _ABSENT:
        return "_ms_compat.SmoothL1Loss"      # decides between L1 and smooth L1 at run time
    if beta == 0:
        b.remove("beta")                      # torch computes an L1 loss; MindSpore's beta=0 has no CPU kernel
        return "mindspore.nn.L1Loss"
    return None


_record(N + "SmoothL1Loss", "mindspore.nn.SmoothL1Loss", _LEGACY + ("reduction", "beta"), ("beta", "reduction"),
        "test_regression",
        "MindSpore defaults to reduction='none': passed explicitly; beta=0 -> nn.L1Loss (torch's own fallback); a "
        "beta known only at run time -> _ms_compat.SmoothL1Loss", checks=_smooth_l1_class)
mapping(N + "HuberLoss", "_ms_compat.HuberLoss", args=("reduction", "delta"), target_args=("reduction", "delta"),
        note="torch's formula (templates/compat_parts/losses.py): MindSpore 2.10's nn.HuberLoss computes a float64 "
             "loss in float32", test=f"{T}::test_regression")


_record(N + "BCELoss", "_ms_compat.BCELoss", ("weight",) + _LEGACY + ("reduction",), ("weight", "reduction"),
        "test_binary_classes",
        "_ms_compat.BCELoss: the loss per element, reduced after (MindSpore 2.10's nn.BCELoss doubles the mean/sum of "
        "a one-element input) with a weight expanded to the input's shape (it mis-reads a broadcastable one); float64 "
        "by torch's formula (the kernel takes float16/float32 only)")
_record(N + "BCEWithLogitsLoss", "_ms_compat.BCEWithLogitsLoss",
        ("weight",) + _LEGACY + ("reduction", "pos_weight"), ("reduction", "weight", "pos_weight"),
        "test_binary_classes", "the same arguments in another order (passed by keyword); _ms_compat.BCEWithLogitsLoss: "
        "mindspore.ops.binary_cross_entropy_with_logits, and torch's formula for float64 (MindSpore 2.10's kernel "
        "raises a TypeError on it)")
_record(N + "KLDivLoss", "_ms_compat.KLDivLoss", _LEGACY + ("reduction", "log_target"), ("reduction", "log_target"),
        "test_distributions",
        "_ms_compat.KLDivLoss computes torch's formula (reduction 'batchmean' and log_target included): "
        "nn.KLDivLoss has no log_target and gives no gradient to the target")
_record(N + "CosineEmbeddingLoss", "mindspore.nn.CosineEmbeddingLoss", ("margin",) + _LEGACY + ("reduction",),
        ("margin", "reduction"), "test_embeddings", "the same arguments; batched (N, D) inputs only")
_MRL_NOTE = "ops.margin_ranking_loss with an integer target promoted to the inputs' dtype, as torch (MindSpore refuses it)"
_record(N + "MarginRankingLoss", "_ms_compat.MarginRankingLoss", ("margin",) + _LEGACY + ("reduction",),
        ("margin", "reduction"), "test_embeddings", _MRL_NOTE)
_record(N + "HingeEmbeddingLoss", "_ms_compat.HingeEmbeddingLoss", ("margin",) + _LEGACY + ("reduction",),
        ("margin", "reduction"), "test_embeddings",
        "torch's formula in _ms_compat: MindSpore's HingeEmbeddingLoss refuses integer targets")
_record(N + "TripletMarginLoss", "_ms_compat.TripletMarginLoss",
        ("margin", "p", "eps", "swap") + _LEGACY + ("reduction",), ("margin", "p", "eps", "swap", "reduction"),
        "test_embeddings", "MindSpore's TripletMarginLoss has no CPU kernel: torch's formula in _ms_compat")
_record(N + "TripletMarginWithDistanceLoss", "_ms_compat.TripletMarginWithDistanceLoss",
        ("distance_function", "margin", "swap", "reduction"), (), "test_embeddings",
        "no MindSpore counterpart: torch's formula in _ms_compat; distance_function must itself be converted code "
        "(it is called on MindSpore tensors)")
_record(N + "SoftMarginLoss", "_ms_compat.SoftMarginLoss", _LEGACY + ("reduction",), ("reduction",),
        "test_margins", "MindSpore's SoftMarginLoss has no CPU kernel: torch's formula in _ms_compat")
_record(N + "MultiLabelSoftMarginLoss", "mindspore.nn.MultiLabelSoftMarginLoss",
        ("weight",) + _LEGACY + ("reduction",), ("weight", "reduction"), "test_margins", "the same arguments")
_record(N + "MultiMarginLoss", "mindspore.nn.MultiMarginLoss",
        ("p", "margin", "weight") + _LEGACY + ("reduction",), ("p", "margin", "reduction", "weight"),
        "test_margins", "the same arguments in another order (weight passed by keyword)")
_record(N + "MultiLabelMarginLoss", "_ms_compat.MultiLabelMarginLoss", _LEGACY + ("reduction",), ("reduction",),
        "test_margins", "MindSpore's MultilabelMarginLoss has no CPU kernel: torch's formula in _ms_compat")
_record(N + "PoissonNLLLoss", "mindspore.nn.PoissonNLLLoss",
        ("log_input", "full", "size_average", "eps", "reduce", "reduction"), ("log_input", "full", "eps", "reduction"),
        "test_distributions", "the same arguments")
_record(N + "GaussianNLLLoss", "_ms_compat.GaussianNLLLoss", ("full", "eps", "reduction"), (),
        "test_distributions",
        "_ms_compat.GaussianNLLLoss: torch clamps var to eps without recording the clamp for autograd, "
        "nn.GaussianNLLLoss's clamp gives var no gradient below eps; torch's check that var >= 0 is left out")
_record(N + "CTCLoss", "_ms_compat.CTCLoss", ("blank", "reduction", "zero_infinity"),
        ("blank", "reduction", "zero_infinity"), "test_ctc",
        "_ms_compat.CTCLoss takes torch's (T, N, C) or (T, C) log_probs with padded (N, S) or concatenated 1-D "
        "targets and returns the loss only (ops.ctc_loss also returns log_alpha and needs padded targets)")


# ----------------------------------------------------------------------------- functional
def _no_weight(ctx):
    _reject(ctx.bound, "weight", "MindSpore's loss has no weight argument")
    return None


_record(P + "huber_loss", "_ms_compat.huber_loss", ("input", "target", "reduction", "delta", "weight"),
        ("input", "target", "reduction", "delta"), "test_regression",
        "torch's formula (templates/compat_parts/losses.py): ops.huber_loss computes a float64 loss in float32",
        checks=_no_weight)
_record(P + "cosine_embedding_loss", "_ms_compat.cosine_embedding_loss",
        ("input1", "input2", "target", "margin") + _LEGACY + ("reduction",),
        ("input1", "input2", "target", "margin", "reduction"), "test_embeddings",
        "torch's formula (templates/compat_parts/losses.py): ops.cosine_embedding_loss takes batched (N, D) inputs "
        "with an (N,) target only, where torch also takes (D,) inputs and broadcasts the cosine against the target")
_record(P + "margin_ranking_loss", "_ms_compat.margin_ranking_loss",
        ("input1", "input2", "target", "margin") + _LEGACY + ("reduction",),
        ("input1", "input2", "target", "margin", "reduction"), "test_embeddings", _MRL_NOTE)
_record(P + "hinge_embedding_loss", "_ms_compat.hinge_embedding_loss",
        ("input", "target", "margin") + _LEGACY + ("reduction",), ("input", "target", "margin", "reduction"),
        "test_embeddings", "torch's formula in _ms_compat: ops.hinge_embedding_loss refuses integer targets")
_record(P + "triplet_margin_loss", "_ms_compat.triplet_margin_loss",
        ("anchor", "positive", "negative", "margin", "p", "eps", "swap") + _LEGACY + ("reduction",),
        ("anchor", "positive", "negative", "margin", "p", "eps", "swap", "reduction"), "test_embeddings",
        "MindSpore's TripletMarginLoss has no CPU kernel: torch's formula in _ms_compat")
_record(P + "triplet_margin_with_distance_loss", "_ms_compat.triplet_margin_with_distance_loss",
        ("anchor", "positive", "negative", "distance_function", "margin", "swap", "reduction"),
        ("anchor", "positive", "negative"), "test_embeddings",
        "no MindSpore counterpart: torch's formula in _ms_compat; distance_function must itself be converted code")
_record(P + "soft_margin_loss", "_ms_compat.soft_margin_loss", ("input", "target") + _LEGACY + ("reduction",),
        ("input", "target", "reduction"), "test_margins",
        "MindSpore's SoftMarginLoss has no CPU kernel: torch's formula in _ms_compat")
_record(P + "multilabel_soft_margin_loss", "mindspore.ops.multilabel_soft_margin_loss",
        ("input", "target", "weight") + _LEGACY + ("reduction",), ("input", "target", "weight", "reduction"),
        "test_margins", "the same arguments")
_record(P + "multi_margin_loss", "_ms_compat.multi_margin_loss",
        ("input", "target", "p", "margin", "weight") + _LEGACY + ("reduction",),
        ("input", "target", "p", "margin", "weight", "reduction"), "test_margins",
        "ops.multi_margin_loss refuses a float margin (torch's default is 1.0): _ms_compat calls its primitive")
_record(P + "multilabel_margin_loss", "_ms_compat.multilabel_margin_loss",
        ("input", "target") + _LEGACY + ("reduction",),
        ("input", "target", "reduction"), "test_margins",
        "MindSpore's MultilabelMarginLoss has no CPU kernel: torch's formula in _ms_compat")
_record(P + "poisson_nll_loss", "_ms_compat.poisson_nll_loss",
        ("input", "target", "log_input", "full", "size_average", "eps", "reduce", "reduction"),
        ("input", "target", "log_input", "full", "eps", "reduction"), "test_distributions",
        "mindspore.ops has no poisson_nll_loss: torch's formula in _ms_compat")
_record(P + "gaussian_nll_loss", "_ms_compat.gaussian_nll_loss",
        ("input", "target", "var", "full", "eps", "reduction"), ("input", "target", "var", "full", "eps", "reduction"),
        "test_distributions",
        "torch clamps var to eps without recording the clamp for autograd; ops.gaussian_nll_loss's clamp gives var "
        "no gradient below eps: torch's formula in _ms_compat (its check that var >= 0 is left out)")
_record(P + "ctc_loss", "_ms_compat.ctc_loss",
        ("log_probs", "targets", "input_lengths", "target_lengths", "blank", "reduction", "zero_infinity"),
        ("log_probs", "targets", "input_lengths", "target_lengths", "blank", "reduction", "zero_infinity"), "test_ctc",
        "ops.ctc_loss returns (loss, log_alpha) and needs padded targets: _ms_compat.ctc_loss returns the loss and "
        "also takes concatenated 1-D targets and unbatched (T, C) input")
