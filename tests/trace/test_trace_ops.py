"""Per-op parity of the graph-capture route (msmigrate trace): each case is a tiny torch module
exercising one ATen op (or a few); it is traced, every emitted MindSpore expression is run on the
recorded torch inputs of its node and compared with torch's output (node by node), and the whole
written model is run in PyNative against torch."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from msmigrate.trace import trace_model
from msmigrate.trace.ops import CONVERTERS


class Fn(nn.Module):
    def __init__(self, fn, **mods):
        super().__init__()
        self.fn = fn
        for k, v in mods.items():
            setattr(self, k, v)

    def forward(self, *xs):
        return self.fn(self, *xs)


def r(*shape):
    return torch.randn(*shape)


CASES = {
    # elementwise
    "add_sub_mul_div": (lambda s, x, y: (x + y) * 2.0 - x / (y.abs() + 1) + 3, (r(2, 3, 4), r(2, 3, 4))),
    "rsub_pow_sqrt": (lambda s, x: 1 - x ** 2 + (x.abs() + 1e-3).sqrt() + x.abs() ** 1.5, (r(2, 5),)),
    "unary": (lambda s, x: x.exp() + (x.abs() + 1).log() + x.tanh() + x.sigmoid() + x.sin() + x.cos() + x.rsqrt().nan_to_num(0)
              if False else x.exp() + (x.abs() + 1).log() + x.tanh() + x.sigmoid() + x.sin() + x.cos() + torch.erf(x),
              (r(3, 4),)),
    "floor_round_sign": (lambda s, x: torch.floor(x) + torch.ceil(x) + torch.sign(x) + torch.round(x * 3), (r(4, 4),)),
    "maximum_minimum": (lambda s, x, y: torch.maximum(x, y) - torch.minimum(x, y), (r(3, 3), r(3, 3))),
    "compare_where": (lambda s, x, y: torch.where(x > y, x, y * 0.5) + (x <= 0).float() + (x == y).float(), (r(3, 4), r(3, 4))),
    "masked_fill": (lambda s, x: x.masked_fill(x < 0, -1e4), (r(2, 6),)),
    "clamp": (lambda s, x: x.clamp(-0.5, 0.5) + x.clamp(min=0.1) + x.clamp(max=0.2), (r(3, 5),)),
    "floordiv_rem": (lambda s, x: torch.div(x, 0.7, rounding_mode="floor") + torch.remainder(x, 0.3), (r(3, 5),)),
    # activations
    "relu_gelu_silu": (lambda s, x: F.relu(x) + F.gelu(x) + F.gelu(x, approximate="tanh") + F.silu(x), (r(2, 8),)),
    "hard_acts": (lambda s, x: F.hardswish(x) + F.hardsigmoid(x) + F.relu6(x * 4) + F.hardtanh(x), (r(2, 8) * 4,)),
    "leaky_elu_softplus": (lambda s, x: F.leaky_relu(x, 0.1) + F.elu(x) + F.softplus(x), (r(2, 8),)),
    "softmax_logsoftmax": (lambda s, x: F.softmax(x, -1) + F.log_softmax(x, 1), (r(2, 3, 5),)),
    # a row of all -inf (every key masked): torch's nan there, the other rows right
    "softmax_empty_row": (lambda s, x: F.softmax(x.masked_fill(torch.arange(4).reshape(4, 1) == 1, float("-inf")), -1)
                          + F.softmin(x, 0), (r(4, 6),)),
    # reductions
    "mean_sum": (lambda s, x: x.mean((2, 3), keepdim=True).sum() + x.sum(1).mean(), (r(2, 3, 4, 5),)),
    "amax_max_argmax": (lambda s, x: x.amax(-1) + x.max(dim=1).values.sum() + x.argmax(-1).float(), (r(3, 6),)),
    "var_std": (lambda s, x: x.var(-1) + x.std(-1, keepdim=True).squeeze(-1) + x.var(-1, unbiased=False), (r(3, 7),)),
    "cumsum_norm": (lambda s, x: x.cumsum(1) + x.norm(dim=-1, keepdim=True), (r(3, 5),)),
    # shapes
    "view_permute_transpose": (lambda s, x: x.view(2, 3, -1).permute(2, 0, 1).transpose(0, 1).reshape(3, -1), (r(2, 3, 4, 2),)),
    "flatten_unsqueeze_squeeze": (lambda s, x: x.flatten(1).unsqueeze(1).squeeze(1) + x.reshape(2, -1, 1).squeeze(-1), (r(2, 3, 4),)),
    "expand_repeat": (lambda s, x: x[:, :1].expand(-1, 4, 3) + x.repeat(1, 2, 1)[:, :4], (r(2, 2, 3),)),
    "cat_stack_split_chunk": (lambda s, x: torch.cat(x.split(2, 1)[::-1], 1) + torch.stack(x.chunk(2, 1), 0).sum(0).repeat(1, 2, 1), (r(2, 4, 3),)),
    "unbind_select_slice": (lambda s, x: sum(x.unbind(1)) + x[:, 1] + x[:, 1:3].sum(1) + x[..., ::2].sum(-1).sum(-1, keepdim=True), (r(2, 4, 5),)),
    "index_gather": (lambda s, x: x[:, torch.tensor([2, 0, 1])] + torch.gather(x, 1, torch.tensor([[0, 1, 2], [2, 1, 0]])) + x.index_select(1, torch.tensor([1, 1, 0])), (r(2, 3),)),
    "roll_flip": (lambda s, x: torch.roll(x, (1, -2), (1, 2)) + x.flip(-1), (r(2, 4, 5),)),
    "pad": (lambda s, x: F.pad(x, (1, 2, 0, 1)) * 2, (r(1, 2, 3, 4),)),
    "slice_assign": (lambda s, x: _slice_assign(x), (r(2, 6, 5),)),
    "arange_zeros_full": (lambda s, x: x + torch.arange(5).float() + torch.zeros(5) + torch.full((5,), 0.5) + torch.ones_like(x), (r(2, 5),)),
    "triu_tril": (lambda s, x: torch.triu(x, 1) - torch.tril(x), (r(4, 4),)),
    "cast_int": (lambda s, x: (x * 3).long().float() + x.to(torch.float64).float(), (r(3, 3),)),
    # linear algebra and layers
    "matmul_bmm": (lambda s, x, y: x @ y + torch.bmm(x, y), (r(2, 3, 4), r(2, 4, 3))),
    "linear_functional": (lambda s, x: F.linear(x, s.w) + F.linear(x, s.w, s.b), (r(2, 4),)),
    "conv_pool": (lambda s, x: F.max_pool2d(s.conv(x), 3, 2, 1, ceil_mode=True).sum() + F.avg_pool2d(s.conv2(x), 3, 2, 1, count_include_pad=False).sum()
                  + F.avg_pool2d(x, 3, 1, 1).sum() + F.avg_pool2d(x, 2).sum(), (r(2, 3, 9, 9),)),
    "conv_grouped_dilated_1d": (lambda s, x: s.c1(x.flatten(2)) .sum() + s.dw(x).sum() + s.dil(x).sum(), (r(2, 4, 8, 8),)),
    "adaptive_pool": (lambda s, x: F.adaptive_avg_pool2d(x, 1).flatten(1).sum(1) + F.adaptive_avg_pool2d(x, (3, 2)).flatten(1).sum(1)
                      + F.adaptive_avg_pool2d(x, 7).flatten(1).sum(1) + F.adaptive_avg_pool1d(x.flatten(2), 4).sum((1, 2)), (r(2, 3, 5, 6),)),
    "norms": (lambda s, x: s.bn(x) + s.gn(x) + F.layer_norm(x, (6,)) + s.ln(x.transpose(1, 3)).transpose(1, 3), (r(2, 4, 5, 6),)),
    "bn1d": (lambda s, x: s.bn1(x), (r(4, 6, 3),)),
    "sdpa_masks": (lambda s, q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(5, 5, dtype=torch.bool).tril())
                   + F.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(5, 5).triu() * -2.0, scale=0.3) + F.scaled_dot_product_attention(q, k, v),
                   (r(2, 2, 5, 4), r(2, 2, 5, 4), r(2, 2, 5, 4))),
    "mha": (lambda s, x: s.mha(x, x, x, need_weights=False)[0], (r(2, 5, 8),)),
    "transformer_encoder": (lambda s, x: s.enc(x), (r(2, 5, 8),)),
    "transformer_decoder": (lambda s, x, m: s.dec(x, m, tgt_mask=nn.Transformer.generate_square_subsequent_mask(5), tgt_is_causal=True), (r(2, 5, 8), r(2, 6, 8))),
    "gru_bidirectional": (lambda s, x: s.gru(x)[0], (r(2, 4, 6),)),
    "rnn_tanh": (lambda s, x: s.rnn(x)[1], (r(4, 2, 6),)),
    "embedding_bag_of_ids": (lambda s, i: s.emb(i).mean(1), (torch.randint(0, 10, (2, 7)),)),
}


def _slice_assign(x):
    y = x.clone()
    y[:, 1:3] = 0.5
    y[:, -1] = x[:, 0] * 2
    return y


MODS = {
    "linear_functional": lambda: {"w": nn.Parameter(torch.randn(3, 4)), "b": nn.Parameter(torch.randn(3))},
    "conv_pool": lambda: {"conv": nn.Conv2d(3, 4, 3), "conv2": nn.Conv2d(3, 2, 3, stride=2, padding=1, bias=False)},
    "conv_grouped_dilated_1d": lambda: {"c1": nn.Conv1d(4, 3, 3, padding=1), "dw": nn.Conv2d(4, 4, 3, groups=4, padding=2, dilation=2),
                                        "dil": nn.Conv2d(4, 2, (3, 1), stride=(2, 1))},
    "norms": lambda: {"bn": nn.BatchNorm2d(4), "gn": nn.GroupNorm(2, 4), "ln": nn.LayerNorm(4)},
    "bn1d": lambda: {"bn1": nn.BatchNorm1d(6)},
    "mha": lambda: {"mha": nn.MultiheadAttention(8, 2, batch_first=True)},
    "transformer_encoder": lambda: {"enc": nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2,
                                                                 enable_nested_tensor=False)},
    "transformer_decoder": lambda: {"dec": nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=True)},
    "gru_bidirectional": lambda: {"gru": nn.GRU(6, 5, num_layers=2, batch_first=True, bidirectional=True)},
    "rnn_tanh": lambda: {"rnn": nn.RNN(6, 5)},
    "embedding_bag_of_ids": lambda: {"emb": nn.Embedding(10, 4)},
}


def _randomize(m):
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, nn.modules.batchnorm._BatchNorm):
                mod.running_mean.normal_()
                mod.running_var.uniform_(0.5, 2.0)
                mod.weight.normal_()
                mod.bias.normal_()


@pytest.mark.parametrize("case", sorted(CASES))
def test_op_parity(case, tmp_path):
    torch.manual_seed(0)
    fn, inputs = CASES[case]
    m = Fn(fn, **(MODS[case]() if case in MODS else {}))
    _randomize(m)
    res = trace_model(m, inputs, tmp_path / case, source=case, check=False)
    assert not res.missing, res.missing
    bad = [n for n in res.nodes if not n["ok"]]
    assert not bad, bad[:3]
    assert res.nodes, "no node was validated"
    assert res.pynative_diff is not None and res.pynative_diff <= res.tol, (res.pynative_diff, res.tol)
    report = (tmp_path / case / "trace-report.md").read_text()
    assert "Node by node" in report


def test_graph_mode_of_tricky_ops(tmp_path):
    """Pooling with ceil_mode, roll, slice assignment, advanced indexing and attention masks, in a
    fresh process without torch: PYNATIVE, GRAPH and the MindIR reloaded through nn.GraphCell."""
    torch.manual_seed(0)

    def fn(s, x):
        y = F.max_pool2d(s.conv(x), 3, 2, 1, ceil_mode=True)
        y = torch.roll(y, (1, -1), (2, 3)) + F.avg_pool2d(y, 3, 1, 1, count_include_pad=False)
        y = _slice_assign(y.flatten(2))
        y = y[:, torch.tensor([1, 0, 2])]
        q = y.unsqueeze(1)
        return F.scaled_dot_product_attention(q, q, q, is_causal=True).squeeze(1) + F.adaptive_avg_pool2d(x, 3).flatten(2).sum(-1, keepdim=True)

    m = Fn(fn, conv=nn.Conv2d(3, 3, 3))
    res = trace_model(m, (r(2, 3, 9, 9),), tmp_path / "tricky", source="tricky", mindir=True)
    assert not res.missing, res.missing
    for mode in ("pynative", "graph", "mindir"):
        assert res.check[mode]["pass"], res.check
    assert res.ok


def test_registry_keys_are_aten_overloads():
    for key in CONVERTERS:
        assert key.startswith("aten.") and key.count(".") == 2, key
