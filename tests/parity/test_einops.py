"""Parity of einops calls converted to MindSpore (msmigrate/mappings/einops.py) with real einops
on torch tensors: values in PYNATIVE and in GRAPH mode (inside one Cell's construct, so one
compile covers the table), gradients for a few patterns, the layers, and the run-time helpers
(non-literal patterns, ellipsis, lists of tensors, einsum, pack/unpack, parse_shape).
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")
einops = pytest.importorskip("einops")

from msmigrate.mappings.einops import static_code  # noqa: E402
from msmigrate.registry import TODO  # noqa: E402

from .harness import assert_close, check_layer, load_converted, load_torch  # noqa: E402

# (operation, pattern, extra source arguments, input shape)
CASES = [
    ("rearrange", "b c h w -> b h w c", "", (2, 3, 4, 5)),
    ("rearrange", "b c h w -> b (h w) c", "", (2, 3, 4, 5)),
    ("rearrange", "b c h w -> (b c) (h w)", "", (2, 3, 4, 5)),
    ("rearrange", "b n (h d) -> b h n d", ", h=2", (2, 3, 8)),
    ("rearrange", "b h n d -> b n (h d)", "", (2, 2, 3, 4)),
    ("rearrange", "b (h p1) (w p2) c -> b (h w) (p1 p2 c)", ", p1=2, p2=2", (2, 4, 6, 3)),
    ("rearrange", "(b1 b2) h w c -> (b1 h) (b2 w) c", ", b1=2", (4, 3, 5, 2)),
    ("rearrange", "b c h w -> b c () h w 1", "", (2, 3, 4, 5)),
    ("rearrange", "b 1 n -> b n", "", (2, 1, 5)),
    ("rearrange", "b c -> c b", ", b=2", (2, 3)),
    ("rearrange", "a b -> a b", "", (2, 3)),
    ("rearrange", "b (x y) -> b x y", ", x=2, y=3", (4, 6)),
    ("rearrange", "(a b c) (d e) -> (a d) b c e", ", b=2, c=2, e=2", (8, 6)),
    ("repeat", "h w -> h w c", ", c=3", (2, 3)),
    ("repeat", "b n d -> (r b) n d", ", r=2", (2, 3, 4)),
    ("repeat", "h w -> h (w 2)", "", (2, 3)),
    ("repeat", "d -> b n d", ", b=2, n=3", (4,)),
    ("repeat", "b 1 d -> b n d", ", n=3", (2, 1, 4)),
    ("reduce", "b c h w -> b c", ", 'mean'", (2, 3, 4, 5)),
    ("reduce", "b c (h h2) (w w2) -> b c h w", ", 'max', h2=2, w2=2", (2, 3, 4, 6)),
    ("reduce", "b c (h 2) w -> b c h w", ", 'min'", (2, 3, 4, 5)),
    ("reduce", "b c h w -> 1 c 1 1", ", 'sum'", (2, 3, 4, 5)),
    ("reduce", "b c h w -> b c () ()", ", 'mean'", (2, 3, 4, 5)),
    ("reduce", "t b c -> b c", ", reduction='max'", (4, 2, 3)),
    ("reduce", "b n d -> d b", ", 'prod'", (2, 3, 4)),
    ("reduce", "b c -> ", ", 'sum'", (2, 3)),
    # ellipsis: merged into one axis by the first reshape, put back by the last
    ("rearrange", "b ... d -> b d ...", "", (2, 3, 4, 5)),
    ("rearrange", "b ... d -> b d ...", "", (2, 5)),              # the ellipsis covers no dimension
    ("rearrange", "b c ... -> b (c ...)", "", (2, 3, 4, 5)),
    ("rearrange", "... (h d) -> ... h d", ", h=2", (2, 3, 4)),
    ("rearrange", "b ... -> ... b", "", (2, 3, 4)),
    ("repeat", "... -> r ...", ", r=2", (2, 3)),
    ("repeat", "b ... -> b ... n", ", n=2", (2, 3, 4)),
    ("reduce", "b ... -> b", ", 'max'", (2, 3, 4)),
    ("reduce", "b ... -> b", ", 'max'", (3,)),
    ("reduce", "b c ... -> b c", ", 'mean'", (2, 3, 4, 5)),
    ("reduce", "... c -> c", ", 'sum'", (2, 3, 4)),
    ("reduce", "b (n 2) ... -> b n ...", ", 'min'", (2, 4, 3)),
    # '(...)' on the right: the ellipsis' dimensions merged into one (perceiver's 'b ... d -> b (...) d'), not
    # put back as they were
    ("rearrange", "b ... d -> b (...) d", "", (2, 3, 4, 5)),
    ("rearrange", "b ... d -> b (...) d", "", (2, 5)),           # no dimension: a merged axis of length 1
    ("rearrange", "... d -> d (...)", "", (2, 3, 4)),
    ("repeat", "b ... -> b (...) r", ", r=2", (2, 3, 4)),
    ("reduce", "b ... d -> (...) b", ", 'sum'", (2, 3, 4, 5)),
]
# the run-time helper: a tensor given as an expression whose shape the code needs
HELPER_CASES = [
    ("rearrange", "b ... d -> b d ...", "", (2, 3, 4, 5)),
    ("rearrange", "b c ... -> b (c ...)", "", (2, 3, 4, 5)),
    ("rearrange", "... (h d) -> ... h d", ", h=2", (2, 3, 4)),
    ("rearrange", "b ... d -> b (...) d", "", (2, 3, 4, 5)),
    ("repeat", "... -> r ...", ", r=2", (2, 3)),
    ("reduce", "b ... -> b", ", 'max'", (2, 3, 4)),
    ("reduce", "b c ... -> b c", ", 'mean'", (2, 3, 4, 5)),
]


def _call(op, pattern, extra, arg="x"):
    return f"einops.{op}({arg}, {pattern!r}{extra})"


def _table_source():
    lines = ["import torch", "from torch import nn", "import einops", ""]
    for i, (op, pattern, extra, _) in enumerate(CASES):
        lines += [f"def f{i}(x):", f"    return {_call(op, pattern, extra)}", ""]
    for i, (op, pattern, extra, _) in enumerate(HELPER_CASES):
        lines += [f"def g{i}(x):", f"    return {_call(op, pattern, extra, '(x + 1.0)')}", ""]
    args = ", ".join(f"x{i}" for i in range(len(CASES)))
    hargs = ", ".join(f"y{i}" for i in range(len(HELPER_CASES)))
    lines += ["class All(nn.Module):", f"    def forward(self, {args}, {hargs}):",
              "        return (" + "".join(f"f{i}(x{i}), " for i in range(len(CASES)))
              + "".join(f"g{i}(y{i}), " for i in range(len(HELPER_CASES))) + ")", ""]
    return "\n".join(lines)


def _inputs(cases, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for *_, shape in cases]


@pytest.fixture(scope="module")
def table():
    """Both sides of the whole table: torch results, converted PyNative and GRAPH results, code, sites."""
    import mindspore as ms
    import torch

    src = _table_source()
    tns = load_torch(src)
    mod, code, sites = load_converted(src)
    xs, ys = _inputs(CASES, 0), _inputs(HELPER_CASES, 1)
    torch_out = [tns[f"f{i}"](torch.from_numpy(x)) for i, x in enumerate(xs)]
    torch_out += [tns[f"g{i}"](torch.from_numpy(y)) for i, y in enumerate(ys)]
    native = [getattr(mod, f"f{i}")(ms.Tensor(x)) for i, x in enumerate(xs)]
    native += [getattr(mod, f"g{i}")(ms.Tensor(y)) for i, y in enumerate(ys)]
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        graph = list(mod.All()(*[ms.Tensor(a) for a in xs + ys]))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    return dict(torch=torch_out, native=native, graph=graph, code=code, sites=sites)


def _check_rows(table, op):
    rows = [i for i, c in enumerate(CASES + HELPER_CASES) if c[0] == op]
    assert rows
    for i in rows:
        what = (CASES + HELPER_CASES)[i][1]
        assert_close(table["native"][i], table["torch"][i], what=f"pynative {what}")
        assert_close(table["graph"][i], table["torch"][i], what=f"graph {what}")
    sites = [s for s in table["sites"] if s.api == f"einops.{op}"]
    assert sites and all(s.status != TODO for s in sites)
    # literal patterns on a named tensor are translated in place (reductions through the empty-safe
    # _ms_compat.reduce_*); the rest use the einops helper
    static = [s for s in sites if not s.target.startswith("_ms_compat.einops_")]
    helper = [s for s in sites if s.target.startswith(f"_ms_compat.einops_{op}")]
    assert len(static) == sum(1 for c in CASES if c[0] == op), [s.target for s in sites]
    assert len(helper) == sum(1 for c in HELPER_CASES if c[0] == op)


def test_rearrange(table):
    _check_rows(table, "rearrange")
    code = table["code"]
    assert "einops" not in code.replace("einops_", "")
    # 'b n (h d) -> b h n d', h=2: one reshape with -1, one transpose
    assert "x.reshape(x.shape[0], x.shape[1], 2, -1)" in code
    assert "ops.transpose(x.reshape(x.shape[0], x.shape[1], 2, -1), (0, 2, 1, 3))" in code


def test_repeat(table):
    _check_rows(table, "repeat")
    assert "ops.broadcast_to(" in table["code"]


def test_reduce(table):
    _check_rows(table, "reduce")
    for fn in ("_ms_compat.reduce_mean(", "_ms_compat.reduce_amax(", "_ms_compat.reduce_amin(",
               "_ms_compat.reduce_sum(", "_ms_compat.reduce_prod("):
        assert fn in table["code"], fn


@pytest.mark.parametrize("op,pattern,kw", [
    ("rearrange", "b n (h d) -> b h n d", {"h": 2}),
    ("repeat", "b n d -> b (n r) d", {"r": 2}),
    ("reduce", "b (n n2) d -> b n d", {"n2": 2}),
])
def test_gradients(op, pattern, kw):
    """d(sum(out * w))/dx of the static translation equals torch's through einops."""
    import mindspore as ms
    import torch

    extra = ", 'mean'" if op == "reduce" else ""
    extra += "".join(f", {k}={v}" for k, v in kw.items())
    src = f"import einops\nimport torch\n\ndef fn(x):\n    return {_call(op, pattern, extra)}\n"
    mod, code, _ = load_converted(src)
    assert "_ms_compat.einops_" not in code, code      # the static translation, not the helper
    x = np.random.default_rng(3).standard_normal((2, 4, 6)).astype(np.float32)
    tx = torch.from_numpy(x).requires_grad_(True)
    tout = load_torch(src)["fn"](tx)
    w = np.random.default_rng(4).standard_normal(tuple(tout.shape)).astype(np.float32)
    (tout * torch.from_numpy(w)).sum().backward()
    grad = ms.grad(lambda t: (mod.fn(t) * ms.Tensor(w)).sum())(ms.Tensor(x))
    assert_close(grad, tx.grad, what="gradient")


def test_helpers_non_literal_patterns():
    """Patterns held in variables and Cell attributes go through the helpers, in both modes."""
    import mindspore as ms
    import torch

    src = '''import torch
from torch import nn
from einops import rearrange, repeat, reduce

def fn(x, p, q, r):
    return rearrange(x, p, h=2), repeat(x, q, n=3), reduce(x, r, "max"), rearrange([x, x], "k b c d -> b k c d")

class Net(nn.Module):
    def __init__(self, pattern):
        super().__init__()
        self.pattern = pattern

    def forward(self, x):
        return rearrange(x, self.pattern, h=2)
'''
    mod, code, sites = load_converted(src)
    assert code.count("_ms_compat.einops_") == 5, code
    x = np.random.default_rng(5).standard_normal((2, 4, 6)).astype(np.float32)
    args = ("b c (h d) -> b h c d", "b c d -> b n c d", "b c d -> b d")
    want = load_torch(src)["fn"](torch.from_numpy(x), *args)
    assert_close(mod.fn(ms.Tensor(x), *args), want)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        assert_close(mod.Net(args[0])(ms.Tensor(x)), want[0], what="graph")
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_einsum():
    import mindspore as ms
    import torch

    src = '''import torch
from torch import nn
from einops import einsum

def fn(a, b, c):
    return (einsum(a, b, "b i d, b j d -> b i j"), einsum(a, c, "b i d, d k -> b i k"),
            einsum(a, "b i d -> d b"), einsum(a, b, c, "b i d, b j d, d k -> b i j k"),
            einsum(a, a, "... d, ... d -> ..."), einsum(a, a, "b i d, b i d ->"))

class Net(nn.Module):
    def forward(self, a, b, c):
        return fn(a, b, c)
'''
    mod, code, sites = load_converted(src)
    assert {s.api for s in sites if s.api.startswith("einops")} == {"einops.einsum"}
    rng = np.random.default_rng(6)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 4), (2, 5, 4), (4, 6)))
    want = load_torch(src)["fn"](*map(torch.from_numpy, (a, b, c)))
    args = [ms.Tensor(v) for v in (a, b, c)]
    assert_close(mod.fn(*args), want, rtol=1e-4, atol=1e-5)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        assert_close(mod.Net()(*args), want, rtol=1e-4, atol=1e-5, what="graph")
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    # gradient through the pairwise contraction
    ta, tb = torch.from_numpy(a).requires_grad_(True), torch.from_numpy(b).requires_grad_(True)
    (load_torch(src)["fn"](ta, tb, torch.from_numpy(c))[0] ** 2).sum().backward()
    ga, gb = ms.grad(lambda p, q: (mod.fn(p, q, args[2])[0] ** 2).sum(), grad_position=(0, 1))(args[0], args[1])
    assert_close([ga, gb], [ta.grad, tb.grad], rtol=1e-4, atol=1e-4, what="gradient")


def test_pack():
    import mindspore as ms
    import torch

    src = '''import torch
from torch import nn
from einops import pack, unpack

def fn(x, y):
    packed, ps = pack([x, y], "b * d")
    first, second = unpack(packed * 2, ps, "b * d")
    return packed, first, second, unpack(packed, [[-1, 2], [2]], "b * d")[0]

class Net(nn.Module):
    def forward(self, x, y):
        return fn(x, y)
'''
    mod, code, sites = load_converted(src)
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal((2, 3, 2, 4)).astype(np.float32), rng.standard_normal((2, 2, 4)).astype(np.float32)
    want = load_torch(src)["fn"](torch.from_numpy(x), torch.from_numpy(y))
    assert_close(mod.fn(ms.Tensor(x), ms.Tensor(y)), want)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        assert_close(mod.Net()(ms.Tensor(x), ms.Tensor(y)), want, what="graph")
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_parse_shape():
    import mindspore as ms
    import torch

    src = '''import torch
import einops

def fn(x):
    return einops.parse_shape(x, "b _ d"), einops.parse_shape(x, "b ..."), einops.asnumpy(x)
'''
    mod, code, _ = load_converted(src)
    x = np.ones((2, 3, 4), np.float32)
    got = mod.fn(ms.Tensor(x))
    want = load_torch(src)["fn"](torch.from_numpy(x))
    assert got[0] == want[0] and got[1] == want[1]
    np.testing.assert_array_equal(got[2], want[2])


def test_layers():
    """Rearrange/Reduce layers in a Sequential, values and weight gradients, PYNATIVE and GRAPH."""
    src = '''import torch
from torch import nn
from einops.layers.torch import Rearrange, Reduce

def make():
    return nn.Sequential(
        Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
        nn.Linear(12, 8),
        Reduce("b n d -> b d", "mean"),
    )
'''
    x = np.random.default_rng(8).standard_normal((2, 3, 4, 6)).astype(np.float32)
    code, sites = check_layer(src, [x], grad=True)
    assert "_ms_compat.EinopsRearrange(" in code and "_ms_compat.EinopsReduce(" in code


def test_unsupported():
    """An invalid pattern raises where einops raises; EinMix is a visible TODO."""
    import mindspore as ms

    src = '''import torch
import einops
from einops.layers.torch import EinMix

def fn(x):
    return einops.rearrange(x, "b c -> b c d")

def mix():
    return EinMix("b c -> b d", weight_shape="c d", c=3, d=4)
'''
    mod, code, sites = load_converted(src)
    assert "_ms_compat.einops_rearrange(x" in code   # the helper raises einops' error at run time
    with pytest.raises(ValueError, match="one side only"):
        mod.fn(ms.Tensor(np.ones((2, 3), np.float32)))
    assert any(s.api == "einops.layers.torch.EinMix" and s.status == TODO for s in sites)
    with pytest.raises(Exception, match="EinMix"):
        mod.mix()



def test_static_code_reads_well():
    assert static_code("x", "b c h w -> b (h w) c", "rearrange", None, {}) == \
        "ops.transpose(x, (0, 2, 3, 1)).reshape(x.shape[0], x.shape[2] * x.shape[3], x.shape[1])"
    assert static_code("x", "b c h w -> b c", "reduce", "mean", {}) == \
        "_ms_compat.reduce_mean(x, (2, 3))"
    assert static_code("x", "b ... d -> b d ...", "rearrange", None, {}) == \
        "ops.transpose(x.reshape(x.shape[0], -1, x.shape[-1]), (0, 2, 1)).reshape((x.shape[0], x.shape[-1]) + " \
        "x.shape[1:-1])"
    assert static_code("x", "... (h d) -> ... h d", "rearrange", None, {"h": "heads"}) == \
        "x.reshape(x.shape[:-1] + (heads, x.shape[-1] // heads))"
    with pytest.raises(ValueError):
        static_code("x", "b c -> b c d", "rearrange", None, {})


def test_attention_idiom():
    """lucidrains-style attention: `map(lambda t: rearrange(t, ..., h=self.heads), qkv)` becomes a
    generator expression (GRAPH mode rejects map over a closure), einsum and rearrange of an
    expression; values and weight gradients in PYNATIVE and GRAPH."""
    src = '''import torch
from torch import nn
from einops import rearrange, einsum

class Attention(nn.Module):
    def __init__(self, dim, heads=2):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x):
        qkv = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=self.heads), qkv)
        attn = einsum(q, k, "b h i d, b h j d -> b h i j").softmax(dim=-1)
        out = rearrange(einsum(attn, v, "b h i j, b h j d -> b h i d"), "b h n d -> b n (h d)")
        return self.to_out(out)

def make():
    return Attention(8)
'''
    x = np.random.default_rng(9).standard_normal((2, 5, 8)).astype(np.float32)
    code, sites = check_layer(src, [x], grad=True, rtol=1e-4, atol=1e-5)
    assert "= (ops.transpose(t.reshape(t.shape[0], t.shape[1], self.heads, -1), (0, 2, 1, 3)) for t in qkv)" \
        in code, code


def test_expression_tensor_written_once():
    """A tensor given as an expression is translated in place where the code needs none of its shape
    (a transpose, a reduction); otherwise the helper evaluates it once."""
    from .harness import check_function

    src = '''import torch
from einops import rearrange, reduce

def fn(x):
    return (rearrange(x * 2, "b h w -> w b h"), reduce(torch.tanh(x), "b h w -> b", "max"),
            rearrange(x + 1, "b h w -> b (h w)"))
'''
    x = np.random.default_rng(10).standard_normal((2, 3, 4)).astype(np.float32)
    code, sites = check_function(src, [x], grad=True)
    assert "ops.transpose((x * 2), (2, 0, 1))" in code and "_ms_compat.reduce_amax(_ms_compat.precise_tanh(_ms_compat.float_input(x)), (1, 2))" in code, code
    assert "_ms_compat.einops_rearrange(x + 1, " in code, code


def test_map_of_a_name_holding_a_closure():
    """linear-attention-transformer's `bucket_fn = lambda x: x.reshape(..., bucket_size, e)` then
    `b_q, b_k = map(bucket_fn, (q, k))` in a module-level function forward calls: GRAPH mode refused the map over a
    closure ("The Map operator don't support Closure with free variable yet", naming no line); it becomes
    `(bucket_fn(item) for item in ...)`. Values and weight gradients in PYNATIVE and GRAPH."""
    src = '''import torch
from torch import nn


def bucketed_scores(q, k, bucket_size):
    e = q.shape[-1]
    bucket_fn = lambda x: x.reshape(*x.shape[:-2], -1, bucket_size, e)
    b_q, b_k = map(bucket_fn, (q, k))
    return (b_q * b_k).sum(dim=-1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.to_q = nn.Linear(4, 4)
        self.to_k = nn.Linear(4, 4)

    def forward(self, x):
        return bucketed_scores(self.to_q(x), self.to_k(x), 2)


def make():
    return Net()
'''
    x = np.random.default_rng(11).standard_normal((2, 6, 4)).astype(np.float32)
    code, sites = check_layer(src, [x], grad=True, rtol=1e-4, atol=1e-5)
    assert "b_q, b_k = (bucket_fn(_map_item) for _map_item in (q, k))" in code, code
