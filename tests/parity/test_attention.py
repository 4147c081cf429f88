"""Parity of attention: F.scaled_dot_product_attention and the nn.Transformer family
(records in msmigrate/mappings/attention.py)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")


from .harness import check_function, check_layer, load_converted, load_torch, rnd, no_todo  # noqa: E402


SDPA_SRC = '''
import torch
import torch.nn.functional as F


def fn(q, k, v, bmask, fmask, q8):
    a = F.scaled_dot_product_attention(q, k, v)
    b = F.scaled_dot_product_attention(q, k, v, attn_mask=bmask)
    c = F.scaled_dot_product_attention(q, k, v, fmask, 0.0, False)
    d = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3)
    e = F.scaled_dot_product_attention(q, k, v, attn_mask=bmask, is_causal=True)
    f = F.scaled_dot_product_attention(q8, k, v, enable_gqa=True)
    g = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0, attn_mask=fmask[0])
    return a, b, c, d, e, f, g
'''


def test_sdpa():
    # (N, H, L, E) queries against S = 5 keys; the masks leave query row 1 with no key at all
    bmask = np.ones((2, 1, 3, 5), dtype=bool)
    bmask[:, :, 1] = False
    bmask[0, 0, 2, 3:] = False
    fmask = rnd(2, 1, 3, 5, seed=4) * 0.5
    fmask[:, :, 1] = -np.inf
    inputs = [rnd(2, 2, 3, 4), rnd(2, 2, 5, 4, seed=1), rnd(2, 2, 5, 4, seed=2), bmask, fmask,
              rnd(2, 4, 3, 4, seed=3)]
    code, sites = check_function(SDPA_SRC, inputs, grad=True)
    no_todo(sites)
    assert "_ms_compat.scaled_dot_product_attention" in code


POOL_SRC = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class AttnPool(nn.Module):
    """An attention pool over a feature map: the mean as the query, separate q/k/v projections."""
    def __init__(self, hw=6, dim=8, heads=2, out=5):
        super().__init__()
        self.pos = nn.Parameter(torch.linspace(-0.5, 0.5, (hw + 1) * dim).reshape(hw + 1, dim))
        self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.c = nn.Linear(dim, out)
        self.packed = nn.Linear(dim, 3 * dim)
        self.heads = heads

    def forward(self, x, pad):
        x = x.flatten(start_dim=2).permute(2, 0, 1)                 # (HW, N, C)
        x = torch.cat([x.mean(dim=0, keepdim=True), x], dim=0) + self.pos[:, None, :]
        pooled, _ = F.multi_head_attention_forward(
            query=x[:1], key=x, value=x, embed_dim_to_check=x.shape[-1], num_heads=self.heads,
            q_proj_weight=self.q.weight, k_proj_weight=self.k.weight, v_proj_weight=self.v.weight,
            in_proj_weight=None, in_proj_bias=torch.cat([self.q.bias, self.k.bias, self.v.bias]),
            bias_k=None, bias_v=None, add_zero_attn=False, dropout_p=0.0, out_proj_weight=self.c.weight,
            out_proj_bias=self.c.bias, use_separate_proj_weight=True, training=self.training, need_weights=False)
        mask = torch.zeros(x.shape[0], x.shape[0])
        out, weights = F.multi_head_attention_forward(
            x, x, x, x.shape[-1], self.heads, self.packed.weight, self.packed.bias, None, None, False, 0.0,
            self.c.weight, self.c.bias, key_padding_mask=pad, attn_mask=mask, average_attn_weights=False)
        return pooled.squeeze(0), out, weights


def make():
    return AttnPool()
'''


@pytest.mark.parametrize("graph", [False, True])
def test_multi_head_attention_forward(graph):
    """F.multi_head_attention_forward as an attention pool calls it (separate q/k/v weights, need_weights=False:
    (output, None)) and with a packed in-projection, a bool key_padding_mask next to a float attn_mask, and
    per-head weights: outputs and the gradients of every parameter vs torch, in PYNATIVE and GRAPH."""
    pad = np.zeros((2, 7), dtype=bool)
    pad[1, 5:] = True
    x = rnd(2, 8, 2, 3, seed=5)

    def call(net, x, pad):
        pooled, out, weights = net(x, pad)
        return pooled, out, weights

    code, sites = check_layer(POOL_SRC, [x, pad], call=call, grad=True, graph=graph)
    no_todo(sites)
    assert code.count("_ms_compat.multi_head_attention_forward(") == 2, code


def test_sdpa_dropout_statistics():
    """dropout_p > 0 drops weights even outside training, as torch's function does."""
    src = SDPA_SRC.replace("def fn(", "def drop(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v, "
                           "dropout_p=0.5)\n\n\ndef fn(")
    mod, code, sites = load_converted(src)
    import mindspore as ms
    q = ms.Tensor(rnd(4, 2, 16, 8))
    k = ms.Tensor(rnd(4, 2, 16, 8, seed=1))
    v = ms.Tensor(np.ones((4, 2, 16, 8), np.float32))
    out = mod.drop(q, k, v).asnumpy()      # each weight row sums to 1 before dropout; ones as values
    assert 0.85 < out.mean() < 1.15 and out.std() > 0.2   # kept weights scaled by 2, others zero


SDPA_KERNEL_SRC = '''
from collections import namedtuple
from functools import partial
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend

Config = namedtuple("Config", ["backends"])
CONFIG = Config([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION])
legacy = partial(torch.backends.cuda.sdp_kernel, enable_flash=True, enable_math=True, enable_mem_efficient=False)


def fn(q, k, v):
    with torch.nn.attention.sdpa_kernel(**CONFIG._asdict()):
        a = F.scaled_dot_product_attention(q, k, v)
    with torch.nn.attention.sdpa_kernel([SDPBackend.MATH]):
        b = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    with legacy():
        c = F.scaled_dot_product_attention(q, k, v)
    return a, b, c
'''


def test_sdpa_kernel_choice():
    """Choosing torch's attention kernel (sdpa_kernel, the older sdp_kernel, SDPBackend names) changes nothing:
    the attention inside has torch's values."""
    code, sites = check_function(SDPA_KERNEL_SRC, [rnd(2, 2, 3, 4), rnd(2, 2, 3, 4, seed=1), rnd(2, 2, 3, 4, seed=2)],
                                 graph=False)
    no_todo(sites)
    assert "_ms_compat.sdpa_kernel" in code and "_ms_compat.SDPBackend.MATH" in code, code


# ------------------------------------------------------------------ the nn.Transformer family
def enc_layer_src(args: str) -> str:
    return f'''
import torch
import torch.nn as nn
import torch.nn.functional as F


def make():
    return nn.TransformerEncoderLayer({args})
'''


def padding(n, s, lengths):
    m = np.zeros((n, s), dtype=bool)
    for i, k in enumerate(lengths):
        m[i, k:] = True          # True = padding (ignored as a key)
    return m


def causal(s):
    return np.triu(np.full((s, s), -np.inf, np.float32), 1)


_ENC_ARGS = [
    ("8, 2, 16, 0.0", False),
    ("8, 2, dim_feedforward=16, dropout=0.0, batch_first=True", True),
    ("d_model=8, nhead=4, dim_feedforward=12, dropout=0.0, activation='gelu', norm_first=True, batch_first=True",
     True),
    ("8, 2, 16, 0.0, activation=F.gelu, layer_norm_eps=1e-6", False),
    ("8, 2, 16, 0.0, activation=nn.GELU(approximate='tanh'), batch_first=True, bias=False", True),
]
# each in both modes (the compiled cases but two are in tests/heavy_tests.txt: CI time)
ENC_CASES = [(args, batch_first, graph) for args, batch_first in _ENC_ARGS for graph in (False, True)] + [
    # GRAPH mode cannot parse a lambda written inside a call's arguments (MindSpore's parser): PyNative only
    ("8, 2, 16, 0.0, activation=lambda t: t * torch.sigmoid(t), batch_first=True", True, False),
]


@pytest.mark.parametrize("args,batch_first,graph", ENC_CASES)
def test_transformer_layers(args, batch_first, graph):
    n, s = 2, 5
    x = rnd(n, s, 8) if batch_first else rnd(s, n, 8)
    kpm = padding(n, s, [5, 3])
    call = (lambda net, x, m, k: net(x, src_mask=m, src_key_padding_mask=k))
    code, sites = check_layer(enc_layer_src(args), [x, causal(s), kpm], call=call, graph=graph, grad=True,
                              rtol=1e-4, atol=1e-5)
    no_todo(sites)
    # a bool attention mask (True = masked) and no masks at all
    bool_mask = np.triu(np.ones((s, s), dtype=bool), 1)
    check_layer(enc_layer_src(args), [x, bool_mask], call=lambda net, x, m: net(x, m, is_causal=True),
                graph=False, rtol=1e-4, atol=1e-5)
    check_layer(enc_layer_src(args), [x], graph=False, rtol=1e-4, atol=1e-5)


DEC_LAYER_SRC = '''
import torch.nn as nn


def make():
    return nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True, norm_first=NF)
'''


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_decoder_layer(norm_first):
    n, t, s = 2, 4, 5
    src = DEC_LAYER_SRC.replace("NF", str(norm_first))
    call = (lambda net, tgt, mem, tm, tk, mk: net(tgt, mem, tgt_mask=tm, tgt_key_padding_mask=tk,
                                                  memory_key_padding_mask=mk, tgt_is_causal=True))
    code, sites = check_layer(src, [rnd(n, t, 8), rnd(n, s, 8, seed=1), causal(t), padding(n, t, [4, 2]),
                                    padding(n, s, [3, 5])], call=call, grad=True, rtol=1e-4, atol=1e-5)
    no_todo(sites)


STACK_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(8))
        dec = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        self.decoder = nn.TransformerDecoder(dec, 2)
        self.plain = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, 0.0), 1, enable_nested_tensor=False)

    def forward(self, x, y, kpm):
        mask = nn.Transformer.generate_square_subsequent_mask(y.shape[1])
        mem = self.encoder(x, src_key_padding_mask=kpm)
        out = self.decoder(y, mem, tgt_mask=mask, memory_key_padding_mask=kpm, tgt_is_causal=True)
        return out, self.plain(x.transpose(0, 1)).transpose(0, 1)


def make():
    return Net()
'''


def test_transformer_stacks():
    # train mode (dropout=0.0: deterministic) takes torch's ordinary path, gradients included
    # (GRAPH mode of the same stacks: test_transformer; kept out here to keep the suite fast)
    code, sites = check_layer(STACK_SRC, [rnd(2, 5, 8), rnd(2, 4, 8, seed=1), padding(2, 5, [5, 3])],
                              train=True, grad=True, graph=False, rtol=1e-4, atol=1e-5)
    no_todo(sites)


ENC_SRC = '''
import torch.nn as nn


def make():
    layer = nn.TransformerEncoderLayer(8, HEADS, 16, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8) if NORM else None)
'''


@pytest.mark.parametrize("heads,norm,lengths,zeroed", [
    (2, False, [5, 3], True),        # torch's nested-tensor path: padded positions come back as 0
    (2, True, [2, 4], True),         # ... before the final norm
    (1, False, [5, 3], False),       # an odd head count keeps torch off that path
])
def test_transformer_encoder_inference_padding(heads, norm, lengths, zeroed):
    """In eval mode under no_grad, torch's encoder zeroes padded positions (left-aligned padding)."""
    import mindspore as ms
    import torch
    from msmigrate.weights import load_torch_state_dict
    src = ENC_SRC.replace("HEADS", str(heads)).replace("NORM", str(norm))
    x, kpm = rnd(2, 5, 8), padding(2, 5, lengths)
    torch.manual_seed(0)
    tnet = load_torch(src)["make"]().eval()
    with torch.no_grad():
        t_out = tnet(torch.from_numpy(x), src_key_padding_mask=torch.from_numpy(kpm)).numpy()
        unaligned = kpm[:, ::-1].copy()       # padding first: not left aligned, computed by torch
        t_unaligned = tnet(torch.from_numpy(x), src_key_padding_mask=torch.from_numpy(unaligned)).numpy()
    mod, code, sites = load_converted(src)
    no_todo(sites)
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE) if heads == 2 and not norm else (ms.PYNATIVE_MODE,):
        ms.set_context(mode=mode)
        try:
            mnet = mod.make()
            load_torch_state_dict(mnet, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
            mnet.set_train(False)
            m_out = mnet(ms.Tensor(x), src_key_padding_mask=ms.Tensor(kpm)).asnumpy()
            m_unaligned = mnet(ms.Tensor(x), src_key_padding_mask=ms.Tensor(unaligned)).asnumpy()
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE)
        np.testing.assert_allclose(m_out, t_out, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(m_unaligned, t_unaligned, rtol=1e-4, atol=1e-5)
    padded_rows = t_out[1, lengths[1]:]
    if zeroed:   # zeros, then the final norm: its bias
        np.testing.assert_allclose(padded_rows, 0 * padded_rows + (tnet.norm.bias.detach().numpy() if norm else 0))
    else:
        assert np.abs(padded_rows).max() > 0.1


TRANSFORMER_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
                                dim_feedforward=16, dropout=0.0, batch_first=BF)

    def forward(self, src, tgt):
        mask = self.t.generate_square_subsequent_mask(tgt.shape[TDIM])
        return self.t(src, tgt, tgt_mask=mask)


def make():
    return Net()
'''


@pytest.mark.parametrize("batch_first", [True, False])
def test_transformer(batch_first):
    src = TRANSFORMER_SRC.replace("BF", str(batch_first)).replace("TDIM", "1" if batch_first else "0")
    shape_s, shape_t = ((2, 5, 8), (2, 4, 8)) if batch_first else ((5, 2, 8), (4, 2, 8))
    code, sites = check_layer(src, [rnd(*shape_s), rnd(*shape_t, seed=1)], grad=True, graph=batch_first,
                              rtol=1e-4, atol=1e-5)
    no_todo(sites)
    import torch
    ref = torch.nn.Transformer.generate_square_subsequent_mask(4).numpy()
    mod, _, _ = load_converted(src)
    np.testing.assert_array_equal(mod.make().t.generate_square_subsequent_mask(4).asnumpy(), ref)


REFUSE_SRC = '''
import torch
import torch.nn as nn


def layer(x):
    return nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True)(x, is_causal=True)


def decoder(x):
    return nn.TransformerDecoderLayer(8, 2, 16, 0.0, batch_first=True)(x, x, tgt_is_causal=True)
'''


@pytest.mark.parametrize("entry", ["layer", "decoder"])
def test_is_causal_needs_a_mask(entry):
    """is_causal is only a hint: without the mask torch refuses, and so does the converted code."""
    import mindspore as ms
    import torch
    with pytest.raises(RuntimeError, match="is_causal"):
        load_torch(REFUSE_SRC)[entry](torch.zeros(2, 5, 8))
    mod, code, sites = load_converted(REFUSE_SRC)
    with pytest.raises(RuntimeError, match="is_causal"):
        getattr(mod, entry)(ms.Tensor(np.zeros((2, 5, 8), np.float32)))


BLOCK_MASK_SRC = '''
import torch
from torch.nn.attention.flex_attention import BlockMask


def kind(mask: "torch.Tensor | BlockMask | None"):
    if isinstance(mask, (torch.Tensor, BlockMask)) and len(mask.shape) == 4:
        return "4d"
    return "block" if isinstance(mask, BlockMask) else "other"


def fn(x):
    return [kind(x), kind(x[0]), kind(None)]


def build():
    return BlockMask(None)
'''


def test_block_mask_type():
    """flex attention's BlockMask as a type: isinstance checks answer as torch's for every value a converted
    program can hold (none is a BlockMask); building one is a TODO that raises."""
    x = rnd(1, 1, 2, 2)
    import torch
    want = load_torch(BLOCK_MASK_SRC)["fn"](torch.from_numpy(x))
    mod, code, sites = load_converted(BLOCK_MASK_SRC)
    import mindspore as ms
    assert mod.fn(ms.Tensor(x)) == want == ["4d", "other", "other"]
    statuses = [s.status for s in sites if s.api == "torch.nn.attention.flex_attention.BlockMask"]
    assert statuses.count("converted") == 2 and statuses.count("todo") == 1, statuses   # 2 checks, 1 build
    assert "isinstance(mask, (ms.Tensor, _ms_compat.BlockMask))" in code
    with pytest.raises(mod._ms_compat.MigrationError, match="BlockMask"):
        mod.build()


SDPA_LOW_SRC = '''
import torch
import torch.nn.functional as F


def fn(q, k, v, fmask, q8, low):
    dt = torch.bfloat16 if low == "bf16" else torch.float16
    q, k, v, fmask, q8 = (t.to(dtype=dt) for t in (q, k, v, fmask, q8))
    a = F.scaled_dot_product_attention(q, k, v)
    b = F.scaled_dot_product_attention(q, k, v, attn_mask=fmask)
    c = F.scaled_dot_product_attention(q8, k, v, is_causal=True, enable_gqa=True)
    return a, b, c
'''


@pytest.mark.parametrize("low", ["bf16", "f16"])
def test_sdpa_low_precision(low):
    """bfloat16/float16 attention keeps its dtype, and its values are torch's within one rounding of that
    dtype (MindSpore's CPU BatchMatMul has no bfloat16 kernel: computed in float32, rounded once)."""
    import mindspore as ms
    import torch
    inputs = [rnd(2, 2, 6, 8), rnd(2, 2, 7, 8, seed=1), rnd(2, 2, 7, 8, seed=2),
              rnd(2, 1, 6, 7, seed=4) * 0.5, rnd(2, 4, 6, 8, seed=3)]
    mod, code, sites = load_converted(SDPA_LOW_SRC)
    no_todo(sites)
    t_out = load_torch(SDPA_LOW_SRC)["fn"](*[torch.from_numpy(a) for a in inputs], low)
    m_out = mod.fn(*[ms.Tensor(a) for a in inputs], low)
    eps = 2.0 ** -8 if low == "bf16" else 2.0 ** -11   # one rounding of the dtype
    for t, m in zip(t_out, m_out):
        assert str(m.dtype).lower() == str(t.dtype).replace("torch.", ""), (m.dtype, t.dtype)
        np.testing.assert_allclose(m.astype(ms.float32).asnumpy(), t.float().numpy(), rtol=2 * eps, atol=2 * eps)
