"""Parity of msmigrate/mappings/torch_functions_more.py: torch's top-level copies of torch.nn.functional ops
(integer reduction, other parameter order) and the functions and tensor methods written as one MindSpore
expression; values and dtypes in PyNative, ms.jit on every third case, gradients where they matter."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import assert_every_record_cased, case, run_table

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4)).astype(np.float32)
Y = RNG.standard_normal((3, 4)).astype(np.float32)
PROB = RNG.uniform(0.05, 0.95, (3, 4)).astype(np.float32)
LOGP = np.log(PROB / PROB.sum(1, keepdims=True)).astype(np.float32)
SIGN = np.where(RNG.standard_normal((3, 4)) > 0, 1.0, -1.0).astype(np.float32)
SIGN3 = np.array([1.0, -1.0, 1.0], np.float32)
V3 = RNG.standard_normal(3).astype(np.float32)
W4 = RNG.uniform(0.5, 2.0, 4).astype(np.float32)
POS = RNG.uniform(0.5, 3.0, (3, 4)).astype(np.float32)
COUNT = RNG.integers(0, 5, (3, 4)).astype(np.float32)
BN = RNG.standard_normal((2, 3, 4)).astype(np.float32)
# istft's inputs: spectrograms of a signal (one-sided, and two-sided for return_complex) and a Hann window
_SIG = RNG.standard_normal((2, 64)).astype(np.float32)
HANN = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(16) / 16)).astype(np.float32)
SPEC = np.stack([np.fft.rfft(np.pad(_SIG, ((0, 0), (8, 8)), mode="reflect")[:, f * 4:f * 4 + 16], axis=-1)
                 for f in range(17)], -1).astype(np.complex64)
SPEC2 = np.stack([np.fft.fft(np.pad(_SIG[0], (8, 8), mode="reflect")[f * 4:f * 4 + 16] * HANN)
                  for f in range(17)], -1).astype(np.complex64)
C3 = RNG.uniform(0.5, 1.5, 3).astype(np.float32)
EMB = RNG.standard_normal((5, 3)).astype(np.float32)
IDS = np.array([[0, 4], [2, 2]], np.int64)
IMG = RNG.standard_normal((1, 4, 2, 3)).astype(np.float32)
BIW = RNG.standard_normal((5, 3, 4)).astype(np.float32)
BIB = RNG.standard_normal(5).astype(np.float32)
FLAT = np.array([0, 5, 11, 7], np.int64)
PUT = np.array([1, -1, 6], np.int64)
SEQ = RNG.standard_normal((2, 3, 8)).astype(np.float32)
H5 = RNG.standard_normal((3, 5)).astype(np.float32)
C5 = RNG.standard_normal((3, 5)).astype(np.float32)
W_IH = {k: (RNG.standard_normal((k * 5, 4)) * 0.5).astype(np.float32) for k in (1, 3, 4)}
W_HH = {k: (RNG.standard_normal((k * 5, 5)) * 0.5).astype(np.float32) for k in (1, 3, 4)}
B_IH = {k: RNG.standard_normal(k * 5).astype(np.float32) for k in (1, 3, 4)}
B_HH = {k: RNG.standard_normal(k * 5).astype(np.float32) for k in (1, 3, 4)}
T = "torch."
F = "torch.nn.functional."

CASES = [
    case(T + "kl_div", "x, y: (torch.kl_div(x, y), torch.kl_div(x, y, 1), torch.kl_div(x, y, reduction=2),"
         " torch.kl_div(x, x, 1, log_target=True))", [LOGP, PROB], grad=True),
    case(T + "binary_cross_entropy_with_logits",
         "x, y, w: (torch.binary_cross_entropy_with_logits(x, y), torch.binary_cross_entropy_with_logits(x, y, w,"
         " None, 0), torch.binary_cross_entropy_with_logits(x, y, pos_weight=w, reduction=2))", [X, PROB, W4],
         rtol=1e-4, graph=False),
    case([T + "hinge_embedding_loss", T + "cosine_embedding_loss", T + "margin_ranking_loss"],
         "x, y, s, t, v: (torch.hinge_embedding_loss(x, s), torch.hinge_embedding_loss(x, s, 0.5, 0),"
         " torch.cosine_embedding_loss(x, y, t), torch.cosine_embedding_loss(x, y, t, 0.2, 2),"
         " torch.margin_ranking_loss(v, t, t, 0.1), torch.margin_ranking_loss(v, t * 0.5, t, reduction=0))",
         [X, Y, SIGN, SIGN3, V3], rtol=1e-4, graph=False),
    case([T + "triplet_margin_loss", T + "poisson_nll_loss"],
         "a, p, n, q, c: (torch.triplet_margin_loss(a, p, n), torch.triplet_margin_loss(a, p, n, 0.5, 1.0, 1e-6,"
         " True, 0), torch.poisson_nll_loss(a, c, True, False, 1e-8, 1), torch.poisson_nll_loss(q, c, False, True,"
         " 1e-8, 2))", [X, Y, X[::-1].copy(), POS, COUNT], rtol=1e-4, atol=1e-4, graph=False),
    # torch refuses gradients with respect to running statistics
    case(T + "batch_norm", "x, w, b, m, v: (torch.batch_norm(x, w, b, m, v, False, 0.1, 1e-5, True),"
         " torch.batch_norm(x, None, None, m, v, False, 0.1, 1e-3, False))", [BN, C3, V3, V3 * 0.1, C3], rtol=1e-4, graph=False),
    case([T + "embedding", T + "constant_pad_nd", T + "bilinear"],
         "x, e, i, x1, x2, bw, bb: (torch.embedding(e, i),"
         " torch.embedding(e, i, 0), torch.constant_pad_nd(x, [1, 2]), torch.constant_pad_nd(x, (1, 0, 0, 2), 0.5),"
         " torch.bilinear(x1, x2, bw, bb), torch.bilinear(x1, x2, bw))",
         [BN, EMB, IDS, X[:, :3].copy(), Y, BIW, BIB], rtol=1e-4, atol=1e-4, graph=False),
    case([T + "channel_shuffle", T + "native_channel_shuffle", F + "channel_shuffle", F + "native_channel_shuffle"],
         "x: (torch.channel_shuffle(x, 2), torch.native_channel_shuffle(x, 4), torch.nn.functional.channel_shuffle(x,"
         " 2), torch.nn.functional.native_channel_shuffle(x, groups=2))", [IMG]),
    case([T + "rms_norm", F + "rms_norm"],
         "x, w, b: (torch.rms_norm(x, [4]), torch.rms_norm(x, (4,), w, 1e-3), torch.nn.functional.rms_norm(b, [3, 4]),"
         " torch.nn.functional.rms_norm(x, [4], weight=w, eps=None))", [X, W4, BN], grad=True, rtol=1e-4),
    case([T + "fill", T + "is_signed", "Tensor.is_signed"],
         "x, i, u, b: (torch.fill(x, 2.5), torch.fill(i, 3), torch.is_signed(x), torch.is_signed(i), torch.is_signed(u),"
         " torch.is_signed(b), x.is_signed(), u.is_signed())",
         [X, IDS, IDS.astype(np.uint8), IDS > 0], typed=True),
    case([T + "masked_scatter", "Tensor.masked_scatter", T + "put", "Tensor.put"],
         "x, y, f, p: (torch.masked_scatter(x, x > 0, y), x.masked_scatter(x[0] < 0, y), torch.put(x, f, y[0]),"
         " x.put(p, y[1, :3]))", [X, Y, FLAT, PUT], grad=True, typed=True),
    # input broadcast to the mask's shape: torch's result has the common shape
    case([T + "masked_scatter", "Tensor.masked_scatter"],
         "x, y: (x[0].masked_scatter(x > 0, y), torch.masked_scatter(x[:1], x < 0, y))", [X, Y], grad=True, typed=True),
    case([T + "unravel_index", T + "slice_copy"],
         "f, x: (torch.unravel_index(f, (3, 4)), torch.unravel_index(f, [2, 3, 2]), torch.slice_copy(x, 1, 1, 3),"
         " torch.slice_copy(x), torch.slice_copy(x, -1, 0, None, 2), torch.slice_copy(x, dim=0, start=1))", [FLAT, X],
         graph=False),
    # sliding windows, an overlapping view, storage_offset; with gradients (overlaps add up)
    case([T + "as_strided", "Tensor.as_strided"],
         "x, b: (torch.as_strided(x, (2, 2), (1, 2)), torch.as_strided(input=x, size=(3, 2), stride=(1, 1),"
         " storage_offset=2), x.as_strided((2, 3), (4, 1), 1), b.as_strided(size=(2, 2, 2), stride=(1, 2, 3)))",
         [X, BN], grad=True, typed=True),
    # the spectrogram of a signal (torch.stft has no record: given as data) back to the signal; gradients
    case([T + "istft", "Tensor.istft"],
         "s, w, c: (torch.istft(s, 16), torch.istft(s, n_fft=16, hop_length=4, window=w, length=60),"
         " torch.istft(s[..., :9], 16, 4, 12, w[2:14], True, True), torch.istft(s, 16, center=False),"
         " s.istft(16, 4, window=w, length=70), torch.istft(c, 16, 4, window=w, onesided=False, return_complex=True))",
         [SPEC, HANN, SPEC2], grad=False, typed=True, rtol=1e-4, atol=1e-5),
    # the spectrogram of a signal (torch.stft): batched and one signal, windows shorter than n_fft, pad modes,
    # normalized, two-sided, the real and imaginary parts stacked; gradients to the signal and the window
    case([T + "stft", "Tensor.stft"],
         "x, w: (torch.stft(x, 16, return_complex=True), torch.stft(x, n_fft=16, hop_length=4, window=w,"
         " return_complex=True), torch.stft(x[0], 16, 4, 12, w[2:14], True, 'constant', True, None, True),"
         " torch.stft(x, 16, center=False, return_complex=False), x.stft(16, 5, window=w, pad_mode='replicate',"
         " onesided=False, return_complex=True), x[1].stft(n_fft=8, return_complex=False, normalized=True))",
         [_SIG, HANN], grad=False, typed=True, rtol=1e-4, atol=1e-5),
    # a complex signal: two-sided, complex result; a window of another dtype
    case(T + "stft", "c, w: (torch.stft(c, 16, center=False, return_complex=True), torch.stft(c, 16, 4, window=w,"
         " return_complex=True), torch.stft(c, 8, 2, 8, None, True, 'reflect', False, False, True))",
         [SPEC2[:, :3].T.copy(), HANN], grad=False, rtol=1e-4, atol=1e-5),
    case([T + "unfold_copy", "Tensor.unfold"],
         "x, b: (torch.unfold_copy(x, 1, 2, 1), torch.unfold_copy(b, -1, 2, 2), x.unfold(0, 2, 1), b.unfold(1, 3, 1))",
         [X, BN], grad=True, typed=True),
    case([T + "adaptive_max_pool1d", T + "max_pool1d_with_indices"],
         "s: (torch.adaptive_max_pool1d(s, 3), torch.max_pool1d_with_indices(s, 2), torch.max_pool1d_with_indices(s, 3,"
         " 1, 1))", [SEQ], graph=False),
    case([T + "rnn_tanh_cell", T + "rnn_relu_cell"],
         "x, h, wi, wh, bi, bh: (torch.rnn_tanh_cell(x, h, wi, wh, bi, bh), torch.rnn_relu_cell(x, h, wi, wh, bi, bh),"
         " torch.rnn_tanh_cell(x, h, wi, wh))", [X, H5, W_IH[1], W_HH[1], B_IH[1], B_HH[1]], rtol=1e-4,
         atol=1e-5, graph=False),
    case(T + "lstm_cell", "x, h, c, wi, wh, bi, bh: (torch.lstm_cell(x, (h, c), wi, wh, bi, bh),"
         " torch.lstm_cell(x, [h, c], wi, wh))", [X, H5, C5, W_IH[4], W_HH[4], B_IH[4], B_HH[4]], grad=True, rtol=1e-4,
         atol=1e-5),
    case(T + "gru_cell", "x, h, wi, wh, bi, bh: (torch.gru_cell(x, h, wi, wh, bi, bh), torch.gru_cell(x, h, wi, wh))",
         [X, H5, W_IH[3], W_HH[3], B_IH[3], B_HH[3]], rtol=1e-4, atol=1e-5, graph=False),
    case([T + "native_layer_norm", T + "newaxis", T + "broadcast_tensors"],
         "x, w, b, c: (torch.native_layer_norm(x, [4], w, b, 1e-5), torch.native_layer_norm(x, (3, 4), None, None, 1e-3),"
         " x[:, torch.newaxis], torch.broadcast_tensors(x, w, c), torch.broadcast_tensors(w[None], c))",
         [X, W4, W4[::-1].copy(), X[:, :1].copy()], rtol=1e-4, atol=1e-5, graph=False),
    case([T + "histogram", "Tensor.histogram"],
         "x: (torch.histogram(x, 4), torch.histogram(x, 5, range=(-1.0, 1.0)), x.histogram(3),"
         " x.histogram(bins=2, range=[0.0, 2.0]))", [X], typed=True, graph=False),
    # float64 (no Histogram kernel): binned in float64, counts and edges float64 as torch; edges and outside values
    case([T + "histogram", "Tensor.histogram"],
         "x: (torch.histogram(x.double(), 4), x.double().histogram(bins=4, range=[0., 1.]),"
         " torch.histogram(torch.tensor([0., 0.25, 0.5, 1.0, 1.5, -0.1], dtype=torch.float64), 4, range=(0., 1.)))",
         [X], typed=True, graph=False),
    # weight, density, a tensor of edges, an empty range (widened by 0.5 each side), equal values, float64
    case([T + "histogram", "Tensor.histogram"],
         "x, w: (torch.histogram(x, 4, weight=w), torch.histogram(x, 3, range=(-1.0, 1.0), density=True),"
         " x.histogram(5, weight=w, density=True), torch.histogram(x, torch.tensor([-1.0, 0.0, 0.5, 2.0])),"
         " x.histogram(bins=torch.tensor([-0.5, 0.0, 0.5]), weight=w, density=True),"
         " torch.histogram(x, 3, range=(0.5, 0.5)), torch.histogram(x[:1], 4), torch.histogram(x.double(), 4, "
         "weight=w.double(), density=True), x.double().histogram(torch.tensor([-2.0, 0.0, 1.0], dtype=torch.float64)))",
         [X, np.abs(X) + 0.5], typed=True, graph=False),
    case([T + "quantile", "Tensor.quantile"],
         "x, b: (torch.quantile(x, 0.3), torch.quantile(x, 0.5, dim=1), torch.quantile(x, 1.0, 0, True),"
         " torch.quantile(b, 0.25, -1, interpolation='linear'), x.quantile(0.9, dim=0), x.quantile(0.0))", [X, BN],
         typed=True, grad=True),
    case([T + "scatter_reduce", "Tensor.scatter_reduce"],
         "x, y, i: (torch.scatter_reduce(x, 1, i, y, 'sum'), torch.scatter_reduce(x, 1, i, y, 'sum', include_self=False),"
         " torch.scatter_reduce(x, 1, i, y, reduce='mean'), x.scatter_reduce(1, i, y, 'mean', include_self=False),"
         " x.scatter_reduce(0, i[:2] % 3, y[:2], 'sum'))", [X, Y[:, :3].copy(),
                                                      np.array([[0, 1, 0], [2, 2, 3], [1, 1, 1]], np.int64)],
         typed=True, grad=True),
    case([T + "nonzero_static", "Tensor.nonzero_static"],
         "x: (torch.nonzero_static(x > 0, size=3), torch.nonzero_static(x, size=20, fill_value=-5),"
         " (x < 0).nonzero_static(size=4))", [X], typed=True, graph=False),
    case([T + "mode", "Tensor.mode"],
         "r, q: (torch.mode(r), torch.mode(r, 0), torch.mode(q, 1, True), r.mode(dim=-1), q.mode(keepdim=True),"
         " torch.mode(input=q, dim=1, keepdim=q.ndim > 1), r.mode(0, r.ndim > 5))",
         [np.array([[1.0, 2.0, 2.0, 3.0, 3.0], [5.0, 4.0, 4.0, 5.0, 0.0]], np.float32), IDS.repeat(3, 1)], typed=True, graph=False),
    # the named fields of the result (`.values` / `.indices`, read at once or from a name); a 0-d input; graph mode
    case([T + "mode", "Tensor.mode"],
         "r, q: (torch.mode(r, 1).values, q.mode(0).indices, torch.mode(r[0, 0]), torch.mode(q, -1, keepdim=True)[1],"
         " r.mode(1, True).values)",
         [np.array([[1.0, 2.0, 2.0, 3.0, 3.0], [5.0, 4.0, 4.0, 5.0, 0.0]], np.float32), IDS.repeat(3, 1)], typed=True),
    case([F + "local_response_norm", "Tensor.sum_to_size"],
         "i, s, x: (torch.nn.functional.local_response_norm(i, 2), torch.nn.functional.local_response_norm(i, 3,"
         " alpha=0.1, beta=0.5, k=2.0), torch.nn.functional.local_response_norm(s, 5), x.sum_to_size(1, 4),"
         " x.sum_to_size((3, 1)), x.sum_to_size(4), x.sum_to_size(3, 4))", [IMG, SEQ, X], typed=True, grad=True,
         rtol=1e-4, atol=1e-5, graph=False),
    # b's dim 0 has size 2 (no interior points); i is an integer tensor (float32 differences, as torch)
    case(T + "gradient", "x, b, i: (torch.gradient(x), torch.gradient(x, dim=1), torch.gradient(b, spacing=2.0, dim=(1, 2)),"
         " torch.gradient(x, spacing=0.5, dim=0, edge_order=1), torch.gradient(b), torch.gradient(i, spacing=2.0))",
         [X, BN, np.array([[1, 2, 4, 8], [10, 20, 40, 80]], np.int64)], typed=True, graph=False),
    case(["Tensor.reshape_as", "Tensor.view_as", "Tensor.to_dense"],
         "x, b: (x.reshape_as(b[0].T), x.view_as(b[1].T), x.to_dense(), x.reshape_as(other=b[0].T + 1),"
         " x.view_as(other=b[1].T * 2))", [X, BN], typed=True, graph=False),
]


def test_torch_functions_more():
    # the functional twins' own tests prove their gradients and GRAPH mode: here their values, and ms.jit and
    # gradients of the expressions written here
    failures = run_table(CASES, graph_every=1)
    assert not failures, "\n".join(failures)


RANDOM_SRC = """
import torch
def f(p: torch.Tensor, probs: torch.Tensor, x: torch.Tensor):
    return (p.bernoulli(), p.bernoulli(0.8), probs.multinomial(3), probs.multinomial(4000, replacement=True),
            torch.dropout(x, 0.3, True), torch.dropout(x, 0.3, train=False))
"""
RANDOM_APIS = ("Tensor.bernoulli", "Tensor.multinomial", "torch.dropout")


def test_random_copies():
    """Random draws: shapes, dtypes and statistics (the streams differ)."""
    import mindspore as ms
    import torch

    from msmigrate.registry import lookup
    from tests.parity.harness import load_converted, load_torch

    p = np.full(4000, 0.3, np.float32)
    probs = np.array([[0.1, 0.2, 0.3, 0.4, 0.0], [0.5, 0.0, 0.25, 0.25, 0.0]], np.float32)
    x = RNG.uniform(1.0, 2.0, (200, 100)).astype(np.float32)
    mod, code, sites = load_converted(RANDOM_SRC)
    for api in RANDOM_APIS:
        assert {s.status for s in sites if s.api == api} == {lookup(api).status}, (api, code)
    want = load_torch(RANDOM_SRC)["f"](*(torch.from_numpy(a) for a in (p, probs, x)))
    got = mod.f(*(ms.Tensor(a) for a in (p, probs, x)))
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape) and str(g.dtype).lower() == str(w.dtype).replace("torch.", ""), (
            g.shape, g.dtype, w.shape, w.dtype)
    b, b8, m3, m4000, drop, kept = (v.asnumpy() for v in got)
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.04
    assert set(np.unique(b8)) <= {0.0, 1.0} and abs(b8.mean() - 0.8) < 0.04
    for row, pr in zip(m3, probs):
        assert len(set(row.tolist())) == 3 and all(pr[j] > 0 for j in row), m3
    freq = np.stack([np.bincount(row, minlength=5) / 4000 for row in m4000])
    assert np.abs(freq - probs).max() < 0.04, freq
    assert abs((drop == 0).mean() - 0.3) < 0.02
    np.testing.assert_allclose(drop[drop != 0], (x / 0.7)[drop != 0], rtol=1e-5)
    np.testing.assert_array_equal(kept, x)


def test_every_record_has_a_case():
    assert_every_record_cased("tests/parity/test_torch_functions_more.py", {"test_torch_functions_more": CASES,
                                                                           "test_random_copies": [case(
                                                                               list(RANDOM_APIS), ":0", [])]})
