"""Parity of torch loss classes (torch.nn.*Loss) and functional losses with their
conversions (records in msmigrate/mappings/losses.py name these tests).

Each snippet is ordinary torch code: loss modules are built at module level and `fn`
calls them; check_function runs torch and the converted code on the same inputs in
PyNative and GRAPH mode and compares values and gradients with respect to every float
input. Each loss is used with every reduction ('mean', 'sum', 'none') across its
variants, the non-default arguments included, and with torch's legacy
size_average/reduce flags. One snippet per family keeps the graph compiles few.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import CONVERTED, TODO  # noqa: E402

from .harness import assert_close, check_function, convert_snippet, load_converted, load_torch  # noqa: E402

HEADER = '''import torch
import torch.nn as nn
import torch.nn.functional as F

W4 = torch.tensor([0.5, 1.0, 1.5, 2.0])


def cos_distance(u, v):
    return 1.0 - F.cosine_similarity(u, v)

'''


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def snippet(decls: str, calls: str, params: str) -> str:
    """Module-level declarations, then fn(params) returning every line of `calls`."""
    body = ",\n        ".join(c.strip() for c in calls.strip().splitlines() if c.strip())
    return HEADER + decls.strip() + f"\n\n\ndef fn({params}):\n    return (\n        {body},\n    )\n"


def assert_sites(sites, *apis):
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, todos
    seen = {}
    for s in sites:
        seen.setdefault(s.api, set()).add(s.status)
    for api in apis:
        assert api in seen, (api, sorted(seen))
        assert seen[api] == {CONVERTED}, (api, seen[api])


def line_of(code: str, name: str) -> str:
    return code.split(f"\n{name} = ")[1].splitlines()[0]


# ------------------------------------------------------------------------------ classification
CLS = snippet('''
ce_a = nn.CrossEntropyLoss()
ce_b = nn.CrossEntropyLoss(W4, ignore_index=1, reduction='sum', label_smoothing=0.1)
ce_c = nn.CrossEntropyLoss(W4, reduction='none', label_smoothing=0.2)
ce_d = nn.CrossEntropyLoss(W4, None, 2, None, 'mean')
ce_legacy = nn.CrossEntropyLoss(reduce=False)
nll_a = nn.NLLLoss(W4, ignore_index=2, reduction='none')
nll_b = nn.NLLLoss()
nll_legacy = nn.NLLLoss(W4, False)
nll_2d = nn.NLLLoss2d(ignore_index=0)
# a -inf logit beside each row's target (a masked similarity matrix): torch's loss is finite, MindSpore's
# one-hot losses gave nan
NEG = torch.tensor([[0.0, 0.0, -float("inf"), 0.0], [0.0, 0.0, 0.0, -float("inf")], [-float("inf"), 0.0, 0.0, 0.0],
                    [0.0, -float("inf"), 0.0, 0.0], [0.0, 0.0, -float("inf"), 0.0]])
''', '''
ce_a(x, tm)
ce_b(x, t)
ce_c(x, F.softmax(b, 1))
ce_d(x4, t4)
ce_b(x4, t4)
ce_c(x4, t4m)
ce_a(x4, F.softmax(b4, 1))
ce_legacy(x, tm)
nll_a(F.log_softmax(x, 1), t)
nll_b(F.log_softmax(x4, 1), t4m)
nll_legacy(F.log_softmax(x, 1), tm)
nll_2d(F.log_softmax(x4, 1), t4)
F.cross_entropy(x, tm, size_average=False)
F.cross_entropy(x4, F.softmax(b4, 1), W4, reduction='none', label_smoothing=0.2)
F.cross_entropy(x4, t4m, W4, None, -100, None, 'sum', 0.1)
F.cross_entropy(x, tm, label_smoothing=False)
F.cross_entropy(x, tm, label_smoothing=1)
F.nll_loss(F.log_softmax(x4, 1), t4m, W4, reduction='sum')
F.nll_loss(F.log_softmax(x4, 1), t4, None, None, 1, False)
nll_b(F.log_softmax(x + NEG, 1), t)
nll_a(F.log_softmax(x + NEG, 1), t)
F.nll_loss(F.log_softmax(x + NEG, 1), t, W4, reduction='sum')
ce_a(x + NEG, t)
F.cross_entropy(x + NEG, t, W4)
''', "x, t, tm, b, x4, t4, t4m, b4")


def test_classification_classes():
    t4 = np.random.default_rng(1).integers(0, 4, (2, 3, 2)).astype(np.int64)
    t4m = t4.copy()
    t4m[0, 1, 1] = -100
    inputs = [rnd(5, 4), np.array([1, 0, 3, 2, 1], np.int64), np.array([1, 0, 3, -100, 2], np.int64),
              rnd(5, 4, seed=2), rnd(2, 4, 3, 2, seed=3), t4, t4m, rnd(2, 4, 3, 2, seed=4)]
    code, sites = check_function(CLS, inputs, grad=True, rtol=1e-4, atol=1e-5)
    assert_sites(sites, "torch.nn.CrossEntropyLoss", "torch.nn.NLLLoss", "torch.nn.NLLLoss2d",
                 "torch.nn.functional.cross_entropy", "torch.nn.functional.nll_loss")
    assert line_of(code, "ce_a").startswith("_ms_compat.CrossEntropyLoss(")
    assert line_of(code, "nll_a").startswith("_ms_compat.NLLLoss(")
    assert "reduction='sum'" in line_of(code, "nll_legacy")
    assert "reduction='none'" in line_of(code, "ce_legacy")


# ------------------------------------------------------------------------------ regression
REG = snippet('''
BETA = 0.7
ZERO = 0.0
mse_a = nn.MSELoss()
mse_b = nn.MSELoss(reduction='none')
mse_legacy = nn.MSELoss(size_average=False)
l1_a = nn.L1Loss(None, None, 'sum')
l1_legacy = nn.L1Loss(True, False)
sl1_a = nn.SmoothL1Loss()
sl1_b = nn.SmoothL1Loss(reduction='sum', beta=0.5)
sl1_c = nn.SmoothL1Loss(reduction='none', beta=0.0)
sl1_d = nn.SmoothL1Loss(beta=BETA)
sl1_e = nn.SmoothL1Loss(None, None, 'sum', ZERO)
hub_a = nn.HuberLoss()
hub_b = nn.HuberLoss('sum', 0.5)
hub_c = nn.HuberLoss(reduction='none', delta=2.0)
''', '''
mse_a(a, b)
mse_b(a, b)
mse_legacy(a, b)
l1_a(a, b)
l1_legacy(a, b)
sl1_a(a, b)
sl1_b(a, b)
sl1_c(a, b)
sl1_d(a, b)
sl1_e(a, b)
hub_a(a * 2, b)
hub_b(a, b)
hub_c(a * 3, b)
F.huber_loss(a, b)
F.huber_loss(a, b, 'sum', 0.3)
F.huber_loss(a * 2, b, reduction='none', delta=0.5)
F.mse_loss(a, b, False)
F.l1_loss(a, b, reduce=False)
F.smooth_l1_loss(a, b, True, True, beta=0.5)
''', "a, b")


def test_regression():
    code, sites = check_function(REG, [rnd(3, 4), rnd(3, 4, seed=1)], grad=True)
    assert_sites(sites, "torch.nn.MSELoss", "torch.nn.L1Loss", "torch.nn.SmoothL1Loss", "torch.nn.HuberLoss",
                 "torch.nn.functional.huber_loss", "torch.nn.functional.mse_loss", "torch.nn.functional.l1_loss",
                 "torch.nn.functional.smooth_l1_loss")
    assert line_of(code, "sl1_a") == "nn.SmoothL1Loss(reduction='mean')"
    assert line_of(code, "sl1_c").startswith("nn.L1Loss(")
    assert line_of(code, "sl1_d").startswith("_ms_compat.SmoothL1Loss(")
    assert "reduction='sum'" in line_of(code, "mse_legacy") and "reduction='none'" in line_of(code, "l1_legacy")


F64 = snippet('''
mse = nn.MSELoss(reduction='sum')
l1 = nn.L1Loss()
sl1 = nn.SmoothL1Loss(beta=0.5)
huber = nn.HuberLoss(delta=0.7)
bce = nn.BCELoss(W4.double())
''', '''
F.mse_loss(a, b) + mse(a, b)
F.mse_loss(a, b, reduction='none')
F.l1_loss(a, b, reduction='sum') + l1(a, b)
F.smooth_l1_loss(a, b) + sl1(a, b)
F.huber_loss(a, b, delta=2.0) + huber(a, b)
F.huber_loss(a, b, reduction='none')
F.binary_cross_entropy(p, y) + bce(p, y)
F.binary_cross_entropy(p, y, reduction='none')
''', "a, b, p, y")


def test_float64():
    """float64 losses computed in float64, values and gradients (input and target) at rtol 1e-12: MindSpore 2.10's
    mse/l1/huber losses compute them in float32 and its binary cross entropy takes no float64 (probabilities 0
    and 1 included, where torch's gradient is finite)."""
    a, b = rnd(3, 4).astype(np.float64) * 2, rnd(3, 4, seed=1).astype(np.float64)
    a[0, 0] = b[0, 0]     # a zero difference: torch's L1 gradient is 0 there
    p = np.random.default_rng(2).uniform(1e-3, 1 - 1e-3, (3, 4))
    p[0, :3] = [0.0, 1.0, 1e-9]
    y = np.random.default_rng(3).uniform(0, 1, (3, 4))
    _check_float64(F64, [a, b, p, y], "torch.nn.MSELoss", "torch.nn.L1Loss", "torch.nn.HuberLoss", "torch.nn.BCELoss",
                   "torch.nn.functional.huber_loss", "torch.nn.functional.binary_cross_entropy")


F64_LOGITS = snippet('''
bcel = nn.BCEWithLogitsLoss(W4.double(), pos_weight=W4.double() * 2)
bcel_n = nn.BCEWithLogitsLoss(reduction='none')
''', '''
F.binary_cross_entropy_with_logits(a, y) + bcel(a, y)
F.binary_cross_entropy_with_logits(a * 30, y, W4.double(), reduction='sum', pos_weight=W4.double())
bcel_n(a, y)
''', "a, y")


def test_float64_logits():
    """binary_cross_entropy_with_logits / BCEWithLogitsLoss in float64 (MindSpore 2.10's kernel raises a TypeError
    on it) by torch's formula: values and gradients (input and target) at rtol 1e-12, with weight and pos_weight,
    logits 0 and up to +-60."""
    a = rnd(3, 4).astype(np.float64) * 2
    a[0, 0] = 0.0
    y = np.random.default_rng(3).uniform(0, 1, (3, 4))
    _check_float64(F64_LOGITS, [a, y], "torch.nn.BCEWithLogitsLoss",
                   "torch.nn.functional.binary_cross_entropy_with_logits")


def _check_float64(src, inputs, *apis):
    """Values (PyNative and GRAPH) and the gradient to every input (PyNative and GRAPH) at rtol 1e-12."""
    code, sites = check_function(src, inputs, rtol=1e-12, atol=1e-12)
    assert_sites(sites, *apis)
    import mindspore as ms
    import torch
    t_in = [torch.from_numpy(v.copy()).requires_grad_(True) for v in inputs]
    sum(o.sum() * (i + 1) for i, o in enumerate(load_torch(src)["fn"](*t_in))).backward()
    fn = load_converted(src)[0].fn

    def total(*xs):
        return sum(o.sum() * (i + 1) for i, o in enumerate(fn(*xs)))
    grad = ms.grad(total, grad_position=tuple(range(len(inputs))))
    for mode, g in (("pynative", grad), ("graph", ms.jit(grad))):
        assert_close(g(*[ms.Tensor(v) for v in inputs]), [t.grad for t in t_in], 1e-12, 1e-12, mode + " gradient")


# ------------------------------------------------------------------------------ binary
BIN = snippet('''
bce_a = nn.BCELoss()
bce_b = nn.BCELoss(W4, reduction='sum')
bce_c = nn.BCELoss(W4.reshape(1, 4) * torch.ones(3, 1), None, None, 'none')
bce_legacy = nn.BCELoss(W4, True, False)
bce_d = nn.BCELoss(reduction='sum')
bcel_a = nn.BCEWithLogitsLoss(reduction='none')
bcel_b = nn.BCEWithLogitsLoss(W4, reduction='sum', pos_weight=W4 * 2)
bcel_c = nn.BCEWithLogitsLoss(pos_weight=W4)
''', '''
bce_a(torch.sigmoid(a), y)
bce_b(torch.sigmoid(a), y)
bce_c(torch.sigmoid(a), y)
bce_legacy(torch.sigmoid(a), y)
bcel_a(a, y)
bcel_b(a, y)
bcel_c(a, y)
bce_a(torch.sigmoid(a[:1, :1]), y[:1, :1])
bce_d(torch.sigmoid(a[0, :1]), y[0, :1])
F.binary_cross_entropy(torch.sigmoid(a), y, W4, reduce=False)
F.binary_cross_entropy_with_logits(a, y, W4, True, False, pos_weight=W4)
''', "a, y")


def test_binary_classes():
    y = (rnd(3, 4, seed=5) > 0).astype(np.float32)
    code, sites = check_function(BIN, [rnd(3, 4), y], grad=True)
    assert_sites(sites, "torch.nn.BCELoss", "torch.nn.BCEWithLogitsLoss")
    assert line_of(code, "bce_a").startswith("_ms_compat.BCELoss(") and line_of(code, "bce_b").startswith("_ms_compat.BCELoss(")


# ------------------------------------------------------------------------------ distributions
DIST = snippet('''
kl_a = nn.KLDivLoss()
kl_b = nn.KLDivLoss(reduction='sum', log_target=True)
kl_c = nn.KLDivLoss(reduction='none')
kl_d = nn.KLDivLoss(reduction='batchmean')
kl_e = nn.KLDivLoss(None, None, 'batchmean', True)
poi_a = nn.PoissonNLLLoss()
poi_b = nn.PoissonNLLLoss(False, True, None, 0.1, None, 'sum')
poi_c = nn.PoissonNLLLoss(full=True, reduction='none')
gau_a = nn.GaussianNLLLoss()
gau_b = nn.GaussianNLLLoss(full=True, eps=0.05, reduction='sum')
gau_c = nn.GaussianNLLLoss(reduction='none')
''', '''
kl_a(F.log_softmax(a, 1), F.softmax(b, 1))
kl_b(F.log_softmax(a, 1), F.log_softmax(b, 1))
kl_c(F.log_softmax(a, 1), F.softmax(b, 1))
kl_d(F.log_softmax(a, 1), F.softmax(b, 1))
kl_e(F.log_softmax(a, 1), F.log_softmax(b, 1))
poi_a(a, counts)
poi_b(a.abs(), counts)
poi_c(a, counts)
gau_a(a, b, var)
gau_b(a, b, var)
gau_c(a, b, var[:, 0])
gau_a(a, b, var[:, :1])
F.poisson_nll_loss(a, counts, reduction='none')
F.poisson_nll_loss(a.abs(), counts, False, True, None, 0.1, None, 'sum')
F.poisson_nll_loss(a, counts, True, True, False)
F.gaussian_nll_loss(a, b, var, True, 0.05, 'sum')
F.gaussian_nll_loss(a, b, var[:, 0])
F.gaussian_nll_loss(a, b, 0.5, eps=1e-3, reduction='none')
F.kl_div(F.log_softmax(a, 1), F.log_softmax(b, 1), reduction='sum', log_target=True)
F.kl_div(F.log_softmax(a, 1), F.log_softmax(b, 1), None, None, 'batchmean', True)
F.kl_div(F.log_softmax(a, 1), F.softmax(b, 1), reduce=False)
''', "a, b, counts, var")


def test_distributions():
    # no zero counts: with full=True torch's target gradient is nan at 0 (0 * log 0), MindSpore's 0
    counts = np.array([[0.2, 1, 2, 5], [0.5, 3, 1, 8], [7, 2, 0.3, 1]], np.float32)
    var = np.abs(rnd(3, 4, seed=3)) * 0.2      # some entries below eps=0.05: torch's clamp gradient
    code, sites = check_function(DIST, [rnd(3, 4), rnd(3, 4, seed=1), counts, var], grad=True, rtol=1e-4, atol=1e-5)
    assert_sites(sites, "torch.nn.KLDivLoss", "torch.nn.PoissonNLLLoss", "torch.nn.GaussianNLLLoss",
                 "torch.nn.functional.poisson_nll_loss", "torch.nn.functional.gaussian_nll_loss",
                 "torch.nn.functional.kl_div")


# ------------------------------------------------------------------------------ embeddings
EMB = snippet('''
cos_a = nn.CosineEmbeddingLoss()
cos_b = nn.CosineEmbeddingLoss(0.2, None, False)
rank_a = nn.MarginRankingLoss(margin=0.3, reduction='sum')
rank_b = nn.MarginRankingLoss(reduction='none')
rank_c = nn.MarginRankingLoss(0.1)
hinge_a = nn.HingeEmbeddingLoss(0.4, None, None, 'sum')
hinge_b = nn.HingeEmbeddingLoss(reduction='none')
trip_a = nn.TripletMarginLoss()
trip_b = nn.TripletMarginLoss(0.5, 3, 1e-6, True, reduction='none')
trip_c = nn.TripletMarginLoss(2.0, 1, reduction='sum')
tripd_a = nn.TripletMarginWithDistanceLoss(distance_function=cos_distance, margin=0.5, swap=True, reduction='sum')
tripd_b = nn.TripletMarginWithDistanceLoss(reduction='none')
''', '''
cos_a(a, b, sign[:, 0] * 1.0)
cos_b(a, b, sign[:, 1] * 1.0)
rank_a(a, b, sign * 1.0)
rank_b(a[0], b[0], sign[0] * 1.0)
rank_c(a, b, sign)
hinge_a(a, sign)
hinge_b(a, sign * 1.0)
trip_a(a, b, c)
trip_b(a, b, c)
trip_c(a, b, c)
tripd_a(a, b, c)
tripd_b(a, b, c)
F.cosine_embedding_loss(a, b, sign[:, 0], 0.2, reduction='sum')
F.cosine_embedding_loss(a, b, sign[:, 1] * 1.0, 0.0, True, False)
F.cosine_embedding_loss(a[0], b[0], sign[0, 0], margin=0.1)
F.cosine_embedding_loss(a[:1], b[:1], sign[:, 2], 0.5, reduction='none')
F.margin_ranking_loss(a, b, sign * 1.0, reduction='none', margin=0.3)
F.margin_ranking_loss(a, b, sign * 1.0)
F.margin_ranking_loss(a, b, sign, reduction='sum')
F.hinge_embedding_loss(a, sign * 1.0, 0.4, reduction='sum')
F.hinge_embedding_loss(a, sign, reduce=False)
F.triplet_margin_loss(a, b, c, 0.5, 1, 1e-6, True, reduction='sum')
F.triplet_margin_loss(a, b, c, reduce=False)
F.triplet_margin_loss(a, b, c)
F.triplet_margin_with_distance_loss(a, b, c, distance_function=cos_distance, margin=0.5, reduction='none')
F.triplet_margin_with_distance_loss(a, b, c, swap=True)
F.triplet_margin_with_distance_loss(a.double(), b.double(), c.double())
F.triplet_margin_loss(a.double(), b.double(), c.double(), p=3)
''', "a, b, c, sign")


def test_embeddings():
    inputs = [rnd(3, 4), rnd(3, 4, seed=1), rnd(3, 4, seed=2), np.sign(rnd(3, 4, seed=3)).astype(np.int64)]
    code, sites = check_function(EMB, inputs, grad=True, rtol=1e-4, atol=1e-5)
    assert_sites(sites, "torch.nn.CosineEmbeddingLoss", "torch.nn.MarginRankingLoss", "torch.nn.HingeEmbeddingLoss",
                 "torch.nn.TripletMarginLoss", "torch.nn.TripletMarginWithDistanceLoss",
                 "torch.nn.functional.cosine_embedding_loss", "torch.nn.functional.margin_ranking_loss",
                 "torch.nn.functional.hinge_embedding_loss", "torch.nn.functional.triplet_margin_loss",
                 "torch.nn.functional.triplet_margin_with_distance_loss")


# ------------------------------------------------------------------------------ margins
MARGIN = snippet('''
soft_a = nn.SoftMarginLoss()
soft_b = nn.SoftMarginLoss(False)
soft_c = nn.SoftMarginLoss(reduction='none')
mlsm_a = nn.MultiLabelSoftMarginLoss(reduction='none')
mlsm_b = nn.MultiLabelSoftMarginLoss(W4, None, None, 'sum')
mlsm_c = nn.MultiLabelSoftMarginLoss(W4)
mm_a = nn.MultiMarginLoss()
mm_b = nn.MultiMarginLoss(2, 0.7, W4, reduction='none')
mm_c = nn.MultiMarginLoss(margin=2.0, reduction='sum')
mlm_a = nn.MultiLabelMarginLoss()
mlm_b = nn.MultiLabelMarginLoss(reduce=False)
mlm_c = nn.MultiLabelMarginLoss(reduction='sum')
''', '''
soft_a(a, sign * 1.0)
soft_b(a, sign * 1.0)
soft_c(a, sign * 1.0)
mlsm_a(a, y)
mlsm_b(a, y)
mlsm_c(a, y)
mm_a(a, t)
mm_b(a, t)
mm_c(a, t)
mlm_a(a, labels)
mlm_b(a, labels)
mlm_c(a, labels)
F.soft_margin_loss(a, sign * 1.0, reduction='sum')
F.soft_margin_loss(a, sign * 1.0, None, False)
F.multilabel_soft_margin_loss(a, y, W4, reduction='none')
F.multilabel_soft_margin_loss(a, y, None, True, True)
F.multi_margin_loss(a, t, reduction='sum')
F.multi_margin_loss(a, t, 2, 0.5, W4, reduction='none')
F.multi_margin_loss(a, t, 1, 1.0, None, False)
F.multi_margin_loss(a[0], t[0], reduction='none')
F.multi_margin_loss(a[1], t[1:2], p=2)
F.multi_margin_loss(a[0, 0], t[1] * 0)
F.multilabel_margin_loss(a[0, 0], labels[0, 0] * 0)
F.multilabel_margin_loss(a, labels, reduction='sum')
F.multilabel_margin_loss(a[0], labels[0], reduction='none')
F.multilabel_margin_loss(a, labels)
''', "a, y, sign, t, labels")


def test_margins():
    y = (rnd(3, 4, seed=5) > 0).astype(np.float32)
    labels = np.array([[3, 0, -1, 1], [0, 1, 2, 3], [1, 1, -1, 0]], np.int64)   # -1 ends a sample's labels
    inputs = [rnd(3, 4), y, (y * 2 - 1).astype(np.int64), np.array([1, 0, 3], np.int64), labels]
    code, sites = check_function(MARGIN, inputs, grad=True, rtol=1e-4, atol=1e-5)
    assert_sites(sites, "torch.nn.SoftMarginLoss", "torch.nn.MultiLabelSoftMarginLoss", "torch.nn.MultiMarginLoss",
                 "torch.nn.MultiLabelMarginLoss", "torch.nn.functional.soft_margin_loss",
                 "torch.nn.functional.multilabel_soft_margin_loss", "torch.nn.functional.multi_margin_loss",
                 "torch.nn.functional.multilabel_margin_loss")


# ------------------------------------------------------------------------------ CTC
CTC = snippet('''
ctc_a = nn.CTCLoss()
ctc_b = nn.CTCLoss(4, 'sum', True)
ctc_c = nn.CTCLoss(reduction='none')
''', '''
ctc_a(F.log_softmax(x, 2), padded, in_len, tgt_len)
ctc_c(F.log_softmax(x, 2), concat, in_len, tgt_len)
ctc_b(F.log_softmax(x, 2), concat % 4, short_len, tgt_len)
F.ctc_loss(F.log_softmax(x, 2), padded, in_len, tgt_len, reduction='sum')
F.ctc_loss(F.log_softmax(x, 2), concat % 4, short_len, tgt_len, 4, 'mean', zero_infinity=True)
F.ctc_loss(F.log_softmax(x, 2), concat, short_len, tgt_len, reduction='none')
F.ctc_loss(F.log_softmax(x[:, 0], 1), padded[0, :3], (8,), (3,))
''', "x, padded, concat, in_len, short_len, tgt_len")


def test_ctc():
    padded = np.array([[1, 2, 2, 0], [3, 1, 0, 0], [1, 1, 1, 1]], np.int64)
    concat = np.array([1, 2, 2, 3, 1, 1, 1, 1, 1], np.int64)     # the same targets, concatenated
    in_len = np.array([8, 6, 7], np.int64)
    short_len = np.array([8, 2, 7], np.int64)      # sample 1 cannot be aligned: infinite loss
    tgt_len = np.array([3, 2, 4], np.int64)
    code, sites = check_function(CTC, [rnd(8, 3, 5), padded, concat, in_len, short_len, tgt_len], grad=True,
                                 rtol=1e-4, atol=1e-5)
    assert_sites(sites, "torch.nn.CTCLoss", "torch.nn.functional.ctc_loss")


# ------------------------------------------------------------------------------ TODOs
def test_loss_todos():
    """Forms with no exact counterpart stay visible TODOs."""
    s = HEADER + '''
def fn(a, b, flag):
    return (nn.MSELoss(size_average=flag), nn.CrossEntropyLoss(reduce=flag), F.huber_loss(a, b, weight=b),
            F.soft_margin_loss(a, b, size_average=flag))
'''
    code, sites = convert_snippet(s)
    todos = {s.api: s.note for s in sites if s.status == TODO}
    assert set(todos) == {"torch.nn.MSELoss", "torch.nn.CrossEntropyLoss", "torch.nn.functional.huber_loss",
                          "torch.nn.functional.soft_margin_loss"}, todos
    assert "size_average" in todos["torch.nn.MSELoss"] and "weight" in todos["torch.nn.functional.huber_loss"]
    mod, code, sites = load_converted(s)
    import mindspore as ms
    with pytest.raises(Exception, match="not converted"):
        mod.fn(ms.Tensor(rnd(2, 3)), ms.Tensor(rnd(2, 3)), True)
