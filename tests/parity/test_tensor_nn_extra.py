"""Parity of msmigrate/mappings/tensor_nn_extra.py: torch.Tensor properties read as written and a few methods,
torch.nn layers (helpers of templates/compat_parts/nn_extra.py, MindSpore's MaxUnpool/BiDense) and
torch.nn.functional ops, each run in torch and converted on the same inputs: values (and gradients of the
composed formulas); the random ones by their distribution (RReLU, alpha dropout, gumbel_softmax)."""
from __future__ import annotations

import numpy as np

from msmigrate.registry import TODO, all_mappings
from tests.parity.harness import assert_close, load_converted, load_torch
from tests.parity.table_harness import case, covered, run_table

FILE = "tests/parity/test_tensor_nn_extra.py"
RNG = np.random.default_rng(0)
M = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal((2, 3, 4)).astype(np.float32)
C = (RNG.standard_normal((3, 2)) + 1j * RNG.standard_normal((3, 2))).astype(np.complex64)
CB = (RNG.standard_normal((2, 3, 2)) + 1j * RNG.standard_normal((2, 3, 2))).astype(np.complex64)
I64 = RNG.integers(-5, 5, (2, 5)).astype(np.int64)
D64 = RNG.standard_normal((2, 2)).astype(np.float64)
SEQ = RNG.standard_normal((2, 3, 8)).astype(np.float32)
IMG = RNG.standard_normal((2, 3, 4, 6)).astype(np.float32)
VOL = RNG.standard_normal((1, 2, 4, 4, 6)).astype(np.float32)
SQ = (RNG.standard_normal((3, 3)) * 0.5).astype(np.float32)
ROWS = np.array([0, 2, 0], np.int64)
WORDS = np.array([1, 0, 4, 9, 2, 0, 3], np.int64)
BAGS = np.array([[1, 0, 4], [9, 9, 2], [0, 0, 0]], np.int64)
OFFSETS = np.array([0, 2, 2, 5], np.int64)          # the second bag is empty
OFFSETS_LAST = np.array([0, 3, 3, 7], np.int64)     # include_last_offset: the last one closes the last bag
TABLE = RNG.standard_normal((10, 3)).astype(np.float32)
PSW = RNG.uniform(0.5, 2.0, 7).astype(np.float32)
FEATS = RNG.standard_normal((5, 4)).astype(np.float32)
CLASSES = np.array([0, 2, 1, 1, 2], np.int64)
PROJ = RNG.standard_normal((3, 4)).astype(np.float32)
PROJ_B = RNG.standard_normal(3).astype(np.float32)
CLASS_W = np.array([0.5, 1.0, 2.0], np.float32)
U2 = RNG.uniform(0, 1, (2, 3, 2)).astype(np.float32)    # fractional max pooling's samples, given
U3 = RNG.uniform(0, 1, (1, 2, 3)).astype(np.float32)
TBC = RNG.standard_normal((7, 2, 3)).astype(np.float32)
TBC_W = RNG.standard_normal((3, 3, 4)).astype(np.float32)
TBC_B = RNG.standard_normal(4).astype(np.float32)
COLS = np.array([1, 3, 1], np.int64)
VALS = np.array([5.0, -2.0, 0.5], np.float32)
TARGET_ROWS = np.array([0, 3, 0, 2], np.int64)      # row 1 untouched, row 0 twice
SRC = RNG.standard_normal((4, 4)).astype(np.float32)
NANS = RNG.standard_normal((3, 6)).astype(np.float32)
NANS[0, [1, 4]] = np.nan
NANS[2, :] = np.nan                                # an all-NaN row gives NaN

# properties: no site is reported for a read kept as written, so the cases name no API; the converted code must
# keep each read (test_tensor_properties) and every property record must be read by a case
PROPERTIES = [
    case([], "m, b: (m.T, m.mT, b.mT, m.H, b.mH, m.T @ m, b.mT.sum(-1))", [M, B], grad=True, typed=True,
         graph=False),
    case([], "c, cb: (c.H, cb.mH, c.T, c.mT)", [C, CB], graph=False, typed=True),
    # a 0-d tensor: torch's H/mH its conjugate, mT itself (MindSpore's properties raise)
    case([], "c, m: (c[0, 0].H, c[1, 0].mH, m[0, 1].mT, m[1, 1].H, m[0, 0].T)", [C, M], graph=False, typed=True),
    # x.data is the value without gradient: the gradient flows through the other factor only
    case([], "m: (m.data * m, m.data.sum() + m.sum())", [M], grad=True, typed=True),
    case([], "m, b, i, d: (m.shape, b.shape[1:], m.ndim, i.ndim, m.nbytes, i.nbytes, d.nbytes, m.itemsize,"
             " i.itemsize, d.itemsize, len(b.shape), b.mT.shape)", [M, B, I64, D64], typed=True),
    case([], "m, i, d: (m.dtype == torch.float32, i.dtype == torch.int64, d.dtype == torch.float64,"
             " m.dtype == i.dtype, m.dtype == d.dtype)", [M, I64, D64], typed=True, graph=False),
]
METHODS = [
    case(["Tensor.index_put"], "m, r, c, v: (m.index_put((r, c), v), m.index_put((r, c), v, accumulate=True),"
                               " m.index_put(indices=(r,), values=v[:1]), m.index_put((r[:1],), m[:1] * 2),"
                               " m.index_put((r,), m[:3], accumulate=True), m.index_put((m[:, 0] > 0,), v[0]),"
                               " m.index_put((r - 3, c), v))", [M, ROWS, COLS, VALS],
         typed=True, grad=True),
    case(["Tensor.index_reduce"],
         "m, i, s: (m.index_reduce(0, i, s[:, :4], 'prod'), m.index_reduce(0, i, s[:, :4], 'mean'),"
         " m.index_reduce(0, i, s[:, :4], 'amax', include_self=False), m.index_reduce(1, i[:3], s[:, :3], 'amin'),"
         " m.index_reduce(dim=0, index=i, source=s[:, :4], reduce='mean', include_self=False))",
         [np.concatenate([M, M[:1]]), TARGET_ROWS, SRC], typed=True, grad=True, graph=False),
    case(["Tensor.quantile"], "m: (m.quantile(0.3, 1), m.quantile(0.5, interpolation='higher'))", [M], typed=True,
         graph=False),
    case(["Tensor.nanquantile"],
         "n: (n.nanquantile(0.5, dim=1), n.nanquantile(0.3, 1, True), n.nanquantile(q=1.0, dim=-1),"
         " n[:2].nanquantile(0.25), n.nanquantile(0.0, 0))", [NANS], typed=True, graph=False),
    case(["Tensor.lu", "Tensor.lu_solve"],
         "a, b: (a.lu(), a.lu(pivot=True, get_infos=False), a.lu(True, True), a.lu(get_infos=True), (lambda lu, p: b.lu_solve(lu, p))(*a.lu()),"
         " (lambda lu, p: b[:, :1].lu_solve(LU_data=lu, LU_pivots=p))(*a.lu()))", [SQ + 2 * np.eye(3, dtype=np.float32),
                                                                                   M[:, :3].copy()],
         typed=True, graph=False, rtol=1e-4, atol=1e-5),
    # x.new(sizes) is uninitialized in torch: its shape and dtype are compared, its values are not
    case(["Tensor.new"], "m, i: (m.new(2, 3).shape, m.new(4).shape, m.new(2, 3).dtype == torch.float32, m.new([1, 2]),"
                         " m.new((1.5, -2.0)), i.new([[3, 4]]), m.new().shape, i.new(2).dtype == torch.int64,"
                         " m.data.new(i.size()).shape, m.new(m.shape).dtype == torch.float32)",
         [M, I64], typed=True, graph=False),
    # the helper's gradients and GRAPH mode: tests/parity/test_torch_linalg.py (torch.linalg.matrix_exp)
    case(["Tensor.matrix_exp"], "s, b: (s.matrix_exp(), (b[:, :3, :3] * 0.3).matrix_exp())", [SQ, B], typed=True,
         rtol=1e-4, atol=1e-5, graph=False),
]
_F = "torch.nn.functional."
FUNCTIONAL = [
    case(["torch.index_put"], "m, r, c, v: (torch.index_put(m, (r, c), v), torch.index_put(m, (r,), m[:3] * 2, True),"
                              " torch.index_put(input=m, indices=(m[:, 1] < 0,), values=v[1], accumulate=False))",
         [M, ROWS, COLS, VALS], grad=True),
    case(["torch.index_reduce"],
         "m, i, s: (torch.index_reduce(m, 0, i, s[:, :4], 'prod'), torch.index_reduce(m, 1, i[:3], s[:, :3], 'amin',"
         " include_self=False), torch.index_reduce(input=m, dim=0, index=i, source=s[:, :4], reduce='mean'))",
         [np.concatenate([M, M[:1]]), TARGET_ROWS, SRC], grad=True, graph=False),
    case(["torch.nanquantile"],     # values only, as Tensor.nanquantile's case
         "n: (torch.nanquantile(n, 0.5, dim=1), torch.nanquantile(n, 0.3, 1, True), torch.nanquantile(n[:2], 0.25),"
         " torch.nanquantile(n[0, 0], 0.5, dim=0))", [NANS], graph=False),
    # a tensor of q (a leading dim), every interpolation mode (torch's ranks q * (n - 1)), NaN rows, keepdim without
    # dim; torch.quantile through the same helper (NaN wherever a NaN is in the slice)
    case(["torch.nanquantile", "Tensor.nanquantile", "torch.quantile", "Tensor.quantile"],
         "n, q: (torch.nanquantile(n, q, dim=1), torch.nanquantile(n, 0.3, 1, True, interpolation='lower'),"
         " n.nanquantile(0.3, dim=-1, interpolation='higher'), n.nanquantile(q, 0, True, interpolation='midpoint'),"
         " torch.nanquantile(n, q=0.5, dim=1, interpolation='nearest'), torch.quantile(n, q, dim=1),"
         " torch.quantile(n, 0.45, 0, interpolation='nearest'), n.quantile(q[1], dim=1, keepdim=True),"
         " torch.quantile(n[1], q, keepdim=True, interpolation='midpoint'), torch.nanquantile(n, 0.75, keepdim=True))",
         [NANS, np.array([0.25, 0.6, 0.9], np.float32)], typed=True, graph=False),
    # gradients through the sorted values (no NaN)
    case(["torch.quantile", "Tensor.quantile", "torch.nanquantile"],
         "m, q: (torch.quantile(m, q, dim=1), m.quantile(0.3, 0, interpolation='midpoint'),"
         " torch.quantile(m, 0.6, interpolation='lower'), torch.nanquantile(m, q, dim=0, interpolation='nearest'))",
         [M, np.array([0.2, 0.5], np.float32)], typed=True, grad=True, graph=False),
    case([_F + "max_unpool1d", _F + "max_pool1d_with_indices"],
         "x: (lambda v, i: (v, i, torch.nn.functional.max_unpool1d(v, i, 2),"
         " torch.nn.functional.max_unpool1d(v, i, kernel_size=2, stride=2, output_size=[9])))"
         "(*torch.nn.functional.max_pool1d_with_indices(x, 2))", [SEQ], graph=False),
    case([_F + "max_unpool2d", _F + "max_pool2d_with_indices"],
         "x: (lambda v, i: (v, i, torch.nn.functional.max_unpool2d(v, i, (2, 2)),"
         " torch.nn.functional.max_unpool2d(v, i, 2, output_size=(5, 7))))"
         "(*torch.nn.functional.max_pool2d_with_indices(x, 2))", [IMG]),
    case([_F + "max_unpool3d"], "x: (lambda v, i: (v, torch.nn.functional.max_unpool3d(v, i, 2, 2, 0)))"
                                "(*torch.nn.functional.max_pool3d(x, 2, return_indices=True))", [VOL], graph=False),
    case([_F + "max_pool1d_with_indices", _F + "max_pool2d_with_indices"],
         "x, y: (torch.nn.functional.max_pool1d_with_indices(x, 3, stride=1, padding=1),"
         " torch.nn.functional.max_pool1d_with_indices(x, 2, return_indices=False),"
         " torch.nn.functional.max_pool2d_with_indices(y, (2, 3), 1))", [SEQ, IMG], graph=False),
    case([_F + "adaptive_max_pool1d_with_indices", _F + "adaptive_max_pool2d_with_indices"],
         "x, y: (torch.nn.functional.adaptive_max_pool1d_with_indices(x, 3),"
         " torch.nn.functional.adaptive_max_pool2d_with_indices(y, (2, 3)))", [SEQ, IMG], graph=False),
    case([_F + "adaptive_max_pool3d", _F + "adaptive_max_pool3d_with_indices"],
         "v: (torch.nn.functional.adaptive_max_pool3d(v, (2, 2, 3)),"
         " torch.nn.functional.adaptive_max_pool3d(v, 2, return_indices=True),"
         " torch.nn.functional.adaptive_max_pool3d_with_indices(v, (1, 2, 2)),"
         " torch.nn.functional.adaptive_max_pool3d(v, (None, 2, None)),"
         " torch.nn.functional.adaptive_max_pool3d(v[0], (None, None, None), True))", [VOL], graph=False),
    case([_F + "embedding_bag"],
         "i, w, o, b, ol, s: (torch.nn.functional.embedding_bag(i, w, o), torch.nn.functional.embedding_bag(i, w, o,"
         " mode='max'), torch.nn.functional.embedding_bag(b, w, mode='sum', padding_idx=0),"
         " torch.nn.functional.embedding_bag(i, w, ol, mode='sum', per_sample_weights=s, include_last_offset=True),"
         " torch.nn.functional.embedding_bag(b, w, padding_idx=-10),"
         " torch.nn.functional.embedding_bag(w, i, o, mode='sum', per_sample_weights=s))",   # the legacy order
         [WORDS, TABLE, OFFSETS, BAGS, OFFSETS_LAST, PSW],
         grad=True, graph=False),
    case([_F + "conv_tbc"], "x, w, b: (torch.nn.functional.conv_tbc(x, w, b), torch.nn.functional.conv_tbc(x, w, b, 1),"
                            " torch.nn.functional.conv_tbc(x, w[:1], b, pad=2))", [TBC, TBC_W, TBC_B],
         graph=False, rtol=1e-4, atol=1e-5),
    case([_F + "linear_cross_entropy"],
         "x, w, t, b: (torch.nn.functional.linear_cross_entropy(x, w, t),"
         " torch.nn.functional.linear_cross_entropy(x, w, t, linear_bias=b, reduction='sum'),"
         " torch.nn.functional.linear_cross_entropy(x, w, t, reduction='none', ignore_index=None))",
         [FEATS, PROJ, CLASSES, PROJ_B], graph=False, rtol=1e-4),
    case([_F + "linear_cross_entropy"],   # class weights: no gradient of their own in torch
         "x, w, t, cw: torch.nn.functional.linear_cross_entropy(x, w, t, weight=cw, ignore_index=1,"
         " label_smoothing=0.1)", [FEATS, PROJ, CLASSES, CLASS_W], graph=False, rtol=1e-4),
    case([_F + "fractional_max_pool2d", _F + "fractional_max_pool2d_with_indices"],
         "x, u: (torch.nn.functional.fractional_max_pool2d(x, 2, output_size=(3, 4), _random_samples=u),"
         " torch.nn.functional.fractional_max_pool2d(x, (2, 3), output_ratio=(0.5, 0.5), return_indices=True,"
         " _random_samples=u), torch.nn.functional.fractional_max_pool2d_with_indices(x, 2, (2, 2), _random_samples=u),"
         " torch.nn.functional.fractional_max_pool2d(x[0], 2, 3, _random_samples=u[:1]),"
         # more samples than the batch holds: torch reads the first ones
         " torch.nn.functional.fractional_max_pool2d(x[:1], 1, output_ratio=(0.7, 0.7), _random_samples=u))",
         [IMG, U2], graph=False),
    case([_F + "fractional_max_pool3d", _F + "fractional_max_pool3d_with_indices"],
         "v, u: (torch.nn.functional.fractional_max_pool3d(v, 2, output_size=(2, 2, 4), _random_samples=u),"
         " torch.nn.functional.fractional_max_pool3d_with_indices(v, (1, 2, 2), output_ratio=(0.5, 0.5, 0.5), _random_samples=u))",
         [VOL, U3], graph=False),
    case([_F + "lp_pool3d"], "v: (torch.nn.functional.lp_pool3d(v, 2, 2),"
                             " torch.nn.functional.lp_pool3d(v, 1.0, (2, 1, 3), stride=1),"
                             " torch.nn.functional.lp_pool3d(v.abs() + 0.1, 3, kernel_size=2, stride=(1, 2, 2),"
                             " ceil_mode=False))", [VOL], grad=True, rtol=1e-4, graph=False),
]


def test_tensor_properties():
    from tests.parity.table_harness import source

    code = load_converted(source(PROPERTIES))[1]
    for read in ("m.data * m", "m.T", "transposed_read(m, 'mT')", "transposed_read(b, 'mT')",
                 "transposed_read(m, 'H')", "transposed_read(b, 'mH')", "transposed_read(c, 'H')",
                 "transposed_read(cb, 'mH')", "m.shape", "m.ndim", "i.nbytes",
                 "d.itemsize", "m.dtype == ms.float32", "i.dtype == ms.int64"):
        assert read in code, (read, code)
    failures = run_table(PROPERTIES, graph_every=1)
    assert not failures, "\n".join(failures)


def test_tensor_methods():
    failures = run_table(METHODS, graph_every=1)
    assert not failures, "\n".join(failures)


def test_functional():
    failures = run_table(FUNCTIONAL, graph_every=1)   # graph=True: the unpool2d case only
    assert not failures, "\n".join(failures)


def test_every_table_record_has_a_case():
    import re

    tables = {"test_tensor_methods": METHODS, "test_functional": FUNCTIONAL,
              "test_random_functional": RANDOM_FUNCTIONAL_CASED}
    mine = [m for m in all_mappings() if m.test.split("::")[-1] in tables and m.test.startswith(FILE)]
    assert mine and not [m.source for m in mine if m.source not in covered(tables[m.test.split("::")[1]])]
    read = set(re.findall(r"\.(\w+)", " ".join(c["src"] for c in PROPERTIES)))
    props = {m.source[len("Tensor."):] for m in all_mappings() if m.test == f"{FILE}::test_tensor_properties"}
    assert props and props <= read, sorted(props - read)


# ------------------------------------------------------------------ layers
X4 = RNG.standard_normal((3, 4)).astype(np.float32)
X5 = RNG.standard_normal((3, 5)).astype(np.float32)
POOLED2, IDX2 = None, None   # filled from torch in test_layers (max_pool2d's values and indices)
LAYERS = [
    ("nn.Softplus()", (IMG,)), ("nn.Softplus(beta=2, threshold=1.0)", (IMG,)),
    ("nn.CosineSimilarity()", (IMG, IMG * 0.5 + 0.1)), ("nn.CosineSimilarity(dim=-1, eps=1e-3)", (SEQ, SEQ[::-1].copy())),
    ("nn.PairwiseDistance()", (X4, X5[:, :4].copy())), ("nn.PairwiseDistance(p=1.0, eps=1e-4, keepdim=True)", (X4, X4 * 2)),
    ("nn.RMSNorm(8)", (SEQ,)), ("nn.RMSNorm([4, 6], eps=1e-5)", (IMG,)), ("nn.RMSNorm((6,), elementwise_affine=False)", (IMG,)),
    ("nn.Bilinear(4, 5, 3)", (X4, X5)), ("nn.Bilinear(4, 5, 2, bias=False)", (X4, X5)),
    ("nn.CircularPad1d(2)", (SEQ,)), ("nn.CircularPad1d((1, 3))", (SEQ,)), ("nn.CircularPad2d(1)", (IMG,)),
    ("nn.CircularPad2d((1, 2, 0, 3))", (IMG,)), ("nn.CircularPad3d(1)", (VOL,)), ("nn.CircularPad3d((1, 0, 2, 1, 0, 2))", (VOL,)),
    ("nn.LocalResponseNorm(2)", (IMG,)), ("nn.LocalResponseNorm(3, alpha=0.1, beta=0.5, k=2.0)", (IMG,)),
    ("nn.LocalResponseNorm(size=4)", (SEQ,)), ("nn.CrossMapLRN2d(3)", (IMG,)),
    ("nn.CrossMapLRN2d(4, alpha=0.2, beta=0.6, k=1.5)", (IMG,)),
    ("nn.UpsamplingBilinear2d(scale_factor=2)", (IMG,)), ("nn.UpsamplingBilinear2d(size=(5, 9))", (IMG,)),
    ("nn.UpsamplingBilinear2d(scale_factor=(1.5, 2.0))", (IMG,)),
    ("nn.LPPool3d(2, 2)", (VOL,)), ("nn.LPPool3d(norm_type=1, kernel_size=(1, 2, 3), stride=1)", (VOL,)),
    ("nn.EmbeddingBag(10, 3)", (BAGS,)), ("nn.EmbeddingBag(10, 3, mode='sum', padding_idx=0)", (WORDS, OFFSETS)),
    ("nn.EmbeddingBag(10, 3, mode='max', include_last_offset=True)", (WORDS, OFFSETS_LAST)),
    ("nn.EmbeddingBag(10, 3, mode='sum')", (WORDS, OFFSETS, PSW)),
    ("nn.LinearCrossEntropyLoss(4, 3)", (FEATS, CLASSES)),
    ("nn.LinearCrossEntropyLoss(4, 3, bias=True, reduction='none', label_smoothing=0.2)", (FEATS, CLASSES)),
    ("nn.FractionalMaxPool2d(2, output_size=(3, 4), _random_samples=torch.full((2, 3, 2), 0.3))", (IMG,)),
    ("nn.FractionalMaxPool3d(2, output_ratio=0.5, return_indices=True, _random_samples=torch.full((1, 2, 3), 0.7))",
     (VOL,)),
    ("nn.MaxUnpool1d(2)", "pool1"), ("nn.MaxUnpool2d(2, stride=2)", "pool2"), ("nn.MaxUnpool3d(kernel_size=2)", "pool3"),
    ("nn.Bilinear(4, 5, 2, bias=None)", (X4, X5)),    # torch tests `if bias:`; MindSpore's has_bias takes a bool
]
# layers whose input gradient is compared too (composed formulas)
GRADS = {3, 7, 18, 21, 26, 30}   # 21: CrossMapLRN2d, torch's hand-written backward
GRAPH = {28}


def _pooled(kind, torch):
    F = torch.nn.functional
    x = {"pool1": SEQ, "pool2": IMG, "pool3": VOL}[kind]
    pool = {"pool1": F.max_pool1d, "pool2": F.max_pool2d, "pool3": F.max_pool3d}[kind]
    v, i = pool(torch.from_numpy(x), 2, return_indices=True)
    return v.numpy(), i.numpy()


def _source(layers) -> str:
    lines = ["import torch", "import torch.nn as nn", ""]
    for i, (expr, _) in enumerate(layers):
        lines += [f"def make_{i}():", f"    return {expr}", ""]
    return "\n".join(lines)


def test_layers():
    import mindspore as ms
    import torch

    from msmigrate.weights import load_torch_state_dict

    src = _source(LAYERS)
    tns = load_torch(src)
    mod, code, sites = load_converted(src)
    todo = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todo, todo
    failures = []
    for i, (expr, inputs) in enumerate(LAYERS):
        try:
            inputs = _pooled(inputs, torch) if isinstance(inputs, str) else inputs
            torch.manual_seed(0)
            tnet = tns[f"make_{i}"]().eval()
            t_in = [torch.from_numpy(a.copy()).requires_grad_(a.dtype == np.float32) for a in inputs]
            want = tnet(*t_in)
            want_values = tuple(w.detach() for w in want) if isinstance(want, tuple) else want.detach()
            net = getattr(mod, f"make_{i}")()
            load_torch_state_dict(net, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
            net.set_train(False)
            m_in = [ms.Tensor(a.copy()) for a in inputs]
            assert_close(net(*m_in), want_values, 1e-5, 1e-5, expr)
            if i in GRAPH:
                assert_close(ms.jit(net.construct)(*m_in), want_values, 1e-5, 1e-5, expr + " graph")
            if i in GRADS:
                w = RNG.standard_normal(tuple(want.shape)).astype(np.float32)
                (want * torch.from_numpy(w)).sum().backward()
                pos = tuple(k for k, a in enumerate(inputs) if a.dtype == np.float32)
                got = ms.grad(lambda *xs: (net(*xs) * ms.Tensor(w)).sum(), grad_position=pos)(*m_in)
                got = got if isinstance(got, tuple) else (got,)
                assert_close(got, tuple(t_in[k].grad for k in pos), 1e-4, 1e-4, expr + " gradient")
        except Exception as exc:   # report every failing layer at once
            failures.append(f"{expr}: {type(exc).__name__}: {str(exc)[:300]}")
    assert not failures, "\n".join(failures)


def test_refused_arguments_are_todo_sites():
    from tests.parity.harness import convert_snippet

    src = ("import torch\nimport torch.nn as nn\n\ndef make(i: torch.Tensor, w):\n    return nn.EmbeddingBag(10, 3, "
           "max_norm=1.0), torch.nn.functional.embedding_bag(i, w, scale_grad_by_freq=True), "
           "torch.nn.functional.adaptive_max_pool3d(i, 2, return_indices=w), i.lu(pivot=False), "
           "i.nanquantile(*w), torch.nn.functional.linear_cross_entropy(i, w, i, options=w), "
           "nn.LinearCrossEntropyLoss(4, 3, out_features=(2,)), i.new(w), i.new(2, dtype=w)\n")
    code, sites = convert_snippet(src)
    assert sorted(s.api for s in sites if s.status == TODO) == [
        "Tensor.lu", "Tensor.nanquantile", "Tensor.new", "Tensor.new", "torch.nn.EmbeddingBag", "torch.nn.LinearCrossEntropyLoss",
        "torch.nn.functional.adaptive_max_pool3d", "torch.nn.functional.embedding_bag",
        "torch.nn.functional.linear_cross_entropy"], code


def test_every_layer_record_has_a_case():
    cased = {"torch.nn." + expr.split("(")[0].split(".")[1] for expr, _ in LAYERS + RANDOM_LAYERS}
    mine = {m.source for m in all_mappings() if m.test in (f"{FILE}::test_layers", f"{FILE}::test_random_layers")}
    assert mine and mine <= cased, sorted(mine - cased)


# ------------------------------------------------------------------ random layers and ops
NORMAL = RNG.standard_normal((40, 30, 4)).astype(np.float32)
RANDOM_LAYERS = [("nn.RReLU()", None), ("nn.RReLU(0.1, 0.3, inplace=True)", None), ("nn.AlphaDropout(0.2)", None),
                 ("nn.AlphaDropout(p=0.5, inplace=False)", None), ("nn.FeatureAlphaDropout(0.3)", None)]


def _np(v):
    return v.detach().numpy() if hasattr(v, "detach") else v.asnumpy()


def _check_rrelu(out, x, lower, upper, what):
    neg = x < 0
    np.testing.assert_array_equal(out[~neg], x[~neg], err_msg=what)
    slope = out[neg] / x[neg]
    assert slope.min() >= lower - 1e-6 and slope.max() <= upper + 1e-6, what
    assert abs(slope.mean() - (lower + upper) / 2) < 0.01, (what, slope.mean())
    assert abs(slope.std() - (upper - lower) / 12 ** 0.5) < 0.01, (what, slope.std())
    assert len(np.unique(slope)) > 100, what   # drawn per element


def _check_alpha_dropout(out, ref, x, p, what, feature=False):
    """out (converted) against ref (torch) on the same input: the dropped units take torch's value, the kept ones
    torch's affine map of x, the dropped fraction is p; feature=True: whole (sample, channel) rows together."""
    values, counts = np.unique(ref, return_counts=True)
    dropped_value = values[counts.argmax()]   # every dropped unit takes the same value
    ref_drop = ref == dropped_value
    a, c = np.polyfit(x[~ref_drop], ref[~ref_drop], 1)         # torch's kept units: a * x + c
    drop = np.isclose(out, dropped_value, rtol=0, atol=1e-6)
    np.testing.assert_allclose(out[~drop], a * x[~drop] + c, rtol=1e-4, atol=1e-4, err_msg=what)
    assert abs(drop.mean() - p) < 0.03 and abs(ref_drop.mean() - p) < 0.03, (what, drop.mean(), ref_drop.mean())
    assert abs(out.mean()) < 0.1 and abs(out.std() - 1) < 0.1, (what, out.mean(), out.std())
    if feature:
        per_row = drop.reshape(drop.shape[0], drop.shape[1], -1)
        assert (per_row.all(-1) | ~per_row.any(-1)).all(), what


def test_random_layers():
    import mindspore as ms
    import torch

    src = _source(RANDOM_LAYERS)
    tns = load_torch(src)
    mod, code, sites = load_converted(src)
    assert not [s for s in sites if s.status == TODO]
    x = NORMAL
    for i, (expr, _) in enumerate(RANDOM_LAYERS):
        torch.manual_seed(0)
        tnet, net = tns[f"make_{i}"](), getattr(mod, f"make_{i}")()
        net.set_train(False)
        assert_close(net(ms.Tensor(x)), tnet.eval()(torch.from_numpy(x.copy())), 1e-6, 1e-6, expr + " eval")
        net.set_train(True)
        out, ref = _np(net(ms.Tensor(x))), _np(tnet.train()(torch.from_numpy(x.copy())))
        if "RReLU" in expr:
            lower, upper = (0.1, 0.3) if "0.1" in expr else (1 / 8, 1 / 3)
            _check_rrelu(out, x, lower, upper, expr)
            _check_rrelu(ref, x, lower, upper, expr + " (torch)")
        else:
            p = float(expr.split("(")[1].split(",")[0].split(")")[0].replace("p=", ""))
            _check_alpha_dropout(out, ref, x, p, expr, feature="Feature" in expr)


RANDOM_FUNCTIONAL_SRC = '''
import torch
import torch.nn.functional as F


def rrelu_eval(x):
    return F.rrelu(x), F.rrelu(x, 0.2, 0.4), F.rrelu(x, training=False, inplace=False)


def rrelu_train(x):
    return F.rrelu(x, 0.1, 0.3, True)


def alpha_eval(x):
    return F.alpha_dropout(x, 0.3), F.feature_alpha_dropout(x, p=0.3), F.alpha_dropout(x, 0.2, False, False)


def alpha_train(x):
    return F.alpha_dropout(x, 0.2, True), F.feature_alpha_dropout(x, 0.4, training=True)


def fractional(x, v):
    return F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5), return_indices=True), \
        F.fractional_max_pool3d(v, (1, 2, 2), output_size=(1, 3, 2), return_indices=True)


def gumbel(logits):
    return F.gumbel_softmax(logits), F.gumbel_softmax(logits, tau=0.5, hard=True), \\
        F.gumbel_softmax(logits, 2.0, False, 1e-10, -1)
'''
# the records test_random_functional proves (checked by test_every_table_record_has_a_case)
RANDOM_FUNCTIONAL_CASED = [case([_F + n for n in ("rrelu", "alpha_dropout", "feature_alpha_dropout", "gumbel_softmax")],
                                "x: x", [])]


def test_random_functional():
    import mindspore as ms
    import torch

    tns = load_torch(RANDOM_FUNCTIONAL_SRC)
    mod, code, sites = load_converted(RANDOM_FUNCTIONAL_SRC)
    assert not [s for s in sites if s.status == TODO]
    x, tx = ms.Tensor(NORMAL), torch.from_numpy(NORMAL.copy())
    assert_close(mod.rrelu_eval(x), tns["rrelu_eval"](tx), 1e-6, 1e-6, "rrelu eval")
    assert_close(ms.jit(mod.rrelu_eval)(x), tns["rrelu_eval"](tx), 1e-6, 1e-6, "rrelu eval graph")
    assert_close(mod.alpha_eval(x), tns["alpha_eval"](tx), 0, 0, "alpha dropout, training=False")
    torch.manual_seed(0)
    _check_rrelu(_np(mod.rrelu_train(x)), NORMAL, 0.1, 0.3, "F.rrelu training")
    _check_rrelu(_np(tns["rrelu_train"](tx)), NORMAL, 0.1, 0.3, "F.rrelu training (torch)")
    (a, fa), (ta, tfa) = mod.alpha_train(x), tns["alpha_train"](tx)
    _check_alpha_dropout(_np(a), _np(ta), NORMAL, 0.2, "F.alpha_dropout")
    _check_alpha_dropout(_np(fa), _np(tfa), NORMAL, 0.4, "F.feature_alpha_dropout", feature=True)
    # fractional max pooling with samples drawn: torch's shapes and dtypes; every value is the input's at its index
    img = RNG.standard_normal((8, 3, 6, 5)).astype(np.float32)
    vol = RNG.standard_normal((8, 3, 2, 6, 5)).astype(np.float32)
    want = tns["fractional"](torch.from_numpy(img), torch.from_numpy(vol))
    for name, outs in (("converted", mod.fractional(ms.Tensor(img), ms.Tensor(vol))), ("torch", want)):
        for (values, idx), src, ref in zip(outs, (img, vol), want):
            values, idx = _np(values), _np(idx)
            assert values.shape == tuple(ref[0].shape) and idx.dtype == np.int64, name
            flat = src.reshape(8, 3, -1)
            np.testing.assert_array_equal(np.take_along_axis(flat, idx.reshape(8, 3, -1), 2), values.reshape(8, 3, -1))
    # gumbel_softmax: soft samples are distributions, hard ones one-hot; the argmax follows softmax(logits)
    logits = np.log(np.array([0.1, 0.2, 0.3, 0.4], np.float32))
    many = np.broadcast_to(logits, (4000, 4)).copy()
    want = np.exp(logits) / np.exp(logits).sum()
    for name, outs in (("converted", [_np(o) for o in mod.gumbel(ms.Tensor(many))]),
                       ("torch", [_np(o) for o in tns["gumbel"](torch.from_numpy(many))])):
        soft, hard, warm = outs
        for s in (soft, warm):
            np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-5, err_msg=name)
            assert (s >= 0).all() and s.shape == many.shape, name
        assert set(np.unique(hard)) == {0.0, 1.0} and (hard.sum(-1) == 1).all(), name
        for s in (soft, hard):
            freq = np.bincount(s.argmax(-1), minlength=4) / len(s)
            np.testing.assert_allclose(freq, want, atol=0.03, err_msg=name)
        # a higher temperature flattens the soft samples
        assert warm.max(-1).mean() < soft.max(-1).mean(), name


ASM_SRC = '''import torch
import torch.nn as nn


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 8)
        self.asm = nn.AdaptiveLogSoftmaxWithLoss(8, 20, cutoffs=[4, 10], div_value=2.0, head_bias=True)

    def forward(self, x, y):
        out = self.asm(torch.tanh(self.proj(x)), y)
        return out.output, out.loss

    def log_prob(self, x):
        return self.asm.log_prob(torch.tanh(self.proj(x)))

    def predict(self, x):
        return self.asm.predict(torch.tanh(self.proj(x)))


def make():
    return LM()
'''


def test_adaptive_log_softmax():
    """nn.AdaptiveLogSoftmaxWithLoss (_ms_compat's): output and loss with targets in the shortlist and both clusters,
    the gradients of every parameter, log_prob and predict, PYNATIVE and GRAPH, torch's weights loaded by name."""
    import mindspore as ms
    import torch

    from msmigrate.weights import load_torch_state_dict

    tns = load_torch(ASM_SRC)
    mod, code, sites = load_converted(ASM_SRC)
    assert not [s for s in sites if s.status == TODO], code
    x = RNG.standard_normal((9, 6)).astype(np.float32)
    y = np.array([0, 3, 4, 9, 10, 19, 1, 12, 5], np.int64)     # shortlist, cluster 1, cluster 2
    torch.manual_seed(0)
    tnet = tns["make"]()
    t_out, t_loss = tnet(torch.from_numpy(x), torch.from_numpy(y))
    t_loss.backward()
    t_grads = {k: p.grad.numpy() for k, p in tnet.named_parameters()}
    net = mod.make()
    load_torch_state_dict(net, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
    mx, my = ms.Tensor(x), ms.Tensor(y)
    for run in (net, ms.jit(net.construct)):
        out, loss = run(mx, my)
        assert_close((out, loss), (t_out.detach(), t_loss.detach()), 1e-5, 1e-5, "output, loss")
    params = net.trainable_params()
    loss_grads = ms.grad(lambda a, b: net(a, b)[1], grad_position=None, weights=params)(mx, my)
    assert sorted(p.name for p in params) == sorted(t_grads)
    for p, g in zip(params, loss_grads):
        assert_close(g, torch.from_numpy(t_grads[p.name]), 1e-5, 1e-5, p.name)
    assert_close(net.log_prob(mx), tnet.log_prob(torch.from_numpy(x)).detach(), 1e-5, 1e-5, "log_prob")
    assert np.array_equal(net.predict(mx).asnumpy(), tnet.predict(torch.from_numpy(x)).numpy())
    one_out, one_loss = net(mx[0], my[0])     # unbatched: a 1-D input and a 0-D target
    t1 = tnet(torch.from_numpy(x[0]), torch.tensor(y[0]))
    assert_close((one_out, one_loss), (t1[0].detach(), t1[1].detach()), 1e-5, 1e-5, "unbatched")
