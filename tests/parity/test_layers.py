"""Parity of torch.nn layer classes and their converted MindSpore layers
(records in msmigrate/mappings/layers.py name these tests).

Each case is ordinary torch source defining make(); the harness converts it,
copies the torch weights into the converted Cell with msmigrate.weights and
compares outputs in PyNative and (for at least one case per layer class) GRAPH mode.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import CONVERTED, DIFFERENCE, TODO  # noqa: E402

from .harness import _to_ms, _to_torch, assert_close, check_layer, load_converted, load_torch  # noqa: E402

OK = (CONVERTED, DIFFERENCE)


def rnd(*shape, seed=0):
    r = np.random.default_rng(seed)
    return r.standard_normal(shape).astype(np.float32)


def layer_src(expr: str, extra: str = "") -> str:
    return f"import torch\nimport torch.nn as nn\n{extra}\ndef make():\n    return {expr}\n"


def assert_converted(sites, *apis, status=OK):
    """Every named API site was converted (not a TODO); no TODO anywhere."""
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, todos
    seen = {s.api: s.status for s in sites}
    for api in apis:
        assert api in seen, (api, seen)
        assert seen[api] in status, (api, seen[api])


# ------------------------------------------------------------------------------------- conv
CONV_CASES = [
    # (layer expression, input shape, graph)
    ("nn.Conv1d(3, 4, 3)", (2, 3, 9), True),
    ("nn.Conv1d(3, 4, 3, 2, 1)", (2, 3, 9), False),
    ("nn.Conv1d(3, 4, 4, padding='same', dilation=2)", (2, 3, 9), False),
    ("nn.Conv1d(4, 6, 3, padding='valid', groups=2, bias=False)", (2, 4, 9), False),
    ("nn.Conv1d(3, 4, 3, padding=(2,), stride=(2,))", (2, 3, 9), False),
    ("nn.Conv2d(3, 4, 3, padding=1, bias=False)", (2, 3, 8, 8), True),
    ("nn.Conv2d(3, 4, 3)", (2, 3, 8, 8), False),
    ("nn.Conv2d(3, 4, (3, 5), padding=(1, 2))", (2, 3, 8, 9), False),
    ("nn.Conv2d(3, 6, 3, stride=2, padding=2, dilation=2, groups=3)", (2, 3, 9, 9), False),
    ("nn.Conv2d(3, 4, 4, padding='same')", (2, 3, 7, 8), False),
    ("nn.Conv2d(3, 4, 3, padding='valid', stride=(2, 1))", (2, 3, 8, 8), False),
    ("nn.Conv2d(in_channels=3, out_channels=4, kernel_size=1, bias=True)", (2, 3, 5, 5), False),
    ("nn.Conv2d(3, 4, 3, 1, 1, 1, 1, False, 'zeros')", (2, 3, 6, 6), False),
    ("nn.Conv3d(2, 4, 3, padding=1)", (1, 2, 5, 6, 6), True),
    ("nn.Conv3d(2, 4, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1), bias=False)", (1, 2, 4, 7, 7), False),
    ("nn.Conv3d(2, 4, 3, padding='same')", (1, 2, 5, 5, 5), False),
    ("nn.Conv3d(2, 4, 2)", (1, 2, 4, 4, 4), False),
    # padding_mode: the input padded in that mode, then a 'valid' convolution (_ms_compat.Conv<n>d)
    ("nn.Conv1d(3, 4, 3, padding=2, padding_mode='circular')", (2, 3, 9), True),
    ("nn.Conv2d(3, 4, 3, padding=1, padding_mode='reflect')", (2, 3, 8, 8), True),
    ("nn.Conv2d(3, 4, (3, 5), padding=(1, 2), padding_mode='replicate', bias=False)", (3, 8, 9), False),
    ("nn.Conv2d(3, 4, 4, padding='same', dilation=2, padding_mode='circular')", (2, 3, 9, 9), False),
    ("nn.Conv3d(2, 4, 3, padding=1, padding_mode='reflect')", (1, 2, 5, 6, 6), False),
]


@pytest.mark.parametrize("expr,shape,graph", CONV_CASES, ids=[c[0] for c in CONV_CASES])
def test_conv(expr, shape, graph):
    code, sites = check_layer(layer_src(expr), [rnd(*shape)], graph=graph, rtol=1e-4, atol=1e-4)
    assert_converted(sites, "torch.nn." + expr.split("(")[0].split(".")[1])


@pytest.mark.parametrize("expr,shape", [("nn.Conv2d(3, 4, 3, padding=1, padding_mode='reflect')", (2, 3, 6, 7)),
                                         ("nn.Conv1d(3, 4, 3, padding=1, padding_mode='replicate')", (2, 3, 8))])
def test_conv_padding_mode_gradients(expr, shape):
    """The weights' gradients through the mode's padding (the border rows counted again, as torch's pad does)."""
    check_layer(layer_src(expr), [rnd(*shape)], graph=False, grad=True, rtol=1e-4, atol=1e-4)


VAR_PAD_SRC = '''
import torch
import torch.nn as nn

class Block(nn.Module):
    def __init__(self, cin, cout, k, pad, dim):
        super().__init__()
        if dim == 1:
            self.conv = nn.Conv1d(cin, cout, k, padding=pad)
        elif dim == 2:
            self.conv = nn.Conv2d(cin, cout, k, padding=pad)
        else:
            self.conv = nn.Conv3d(cin, cout, k, padding=pad)

    def forward(self, x):
        return self.conv(x)

def make():
    return Block(2, 3, K, PAD, DIM)
'''
VAR_PAD_CASES = [
    (1, 3, "1", (2, 2, 9), True),
    (1, 3, "(2,)", (2, 2, 9), False),
    (1, 3, "'same'", (2, 2, 9), False),
    (2, 3, "(1, 2)", (2, 2, 7, 7), True),
    (2, 3, "0", (2, 2, 7, 7), False),
    (2, 4, "'same'", (2, 2, 7, 7), False),
    (2, 3, "'valid'", (2, 2, 7, 7), False),
    (3, 3, "(0, 1, 2)", (1, 2, 4, 5, 6), False),
]


@pytest.mark.parametrize("dim,k,pad,shape,graph", VAR_PAD_CASES, ids=[f"conv{c[0]}d-{c[2]}" for c in VAR_PAD_CASES])
def test_conv_padding_variable(dim, k, pad, shape, graph):
    """padding given as a variable: the converted code decides at run time (_ms_compat.conv_padding)."""
    src = VAR_PAD_SRC.replace("K, PAD, DIM", f"{k}, {pad}, {dim}")
    code, sites = check_layer(src, [rnd(*shape)], graph=graph, rtol=1e-4, atol=1e-4)
    assert "_ms_compat.conv_padding(pad" in code, code
    assert_converted(sites, f"torch.nn.Conv{dim}d")


TCONV_CASES = [
    ("nn.ConvTranspose1d(4, 3, 3)", (2, 4, 6), True),
    ("nn.ConvTranspose1d(4, 3, 3, stride=2, padding=1)", (2, 4, 6), False),
    ("nn.ConvTranspose1d(4, 2, 4, stride=2, padding=1, bias=False)", (2, 4, 6), False),
    ("nn.ConvTranspose1d(4, 3, 3, stride=2, padding=1, output_padding=1)", (2, 4, 6), True),
    ("nn.ConvTranspose1d(4, 3, 3, 2, (2,), (1,), 1, False)", (2, 4, 6), False),
    ("nn.ConvTranspose1d(4, 3, 3, 2, 1, 1)", (4, 6), False),
    ("nn.ConvTranspose2d(4, 3, 3, stride=2)", (2, 4, 5, 5), True),
    ("nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1)", (2, 4, 5, 5), False),
    ("nn.ConvTranspose2d(4, 3, (3, 4), stride=(2, 1), padding=(1, 2), bias=False)", (2, 4, 5, 6), False),
    ("nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, groups=2)", (2, 4, 5, 5), False),
    ("nn.ConvTranspose2d(4, 3, 2, stride=2)", (2, 4, 5, 5), False),
    ("nn.ConvTranspose2d(4, 3, 3, stride=2, padding=(2, 1), output_padding=(1, 0), dilation=1)", (2, 4, 5, 5), False),
    ("nn.ConvTranspose2d(4, 3, 3, 2, 1, 1, 1, False, 1)", (2, 4, 5, 5), False),
    ("nn.ConvTranspose3d(2, 3, 3, stride=2, padding=1, output_padding=1)", (1, 2, 3, 4, 4), True),
    ("nn.ConvTranspose3d(2, 3, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1))", (1, 2, 3, 4, 4), False),
]


@pytest.mark.parametrize("expr,shape,graph", TCONV_CASES, ids=[c[0] for c in TCONV_CASES])
def test_conv_transpose(expr, shape, graph):
    code, sites = check_layer(layer_src(expr), [rnd(*shape)], graph=graph, rtol=1e-4, atol=1e-4)
    assert_converted(sites, "torch.nn." + expr.split("(")[0].split(".")[1])


TCONV_VAR_SRC = '''
import torch.nn as nn

class Up(nn.Module):
    def __init__(self, pad, out_pad):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 3, 3, stride=2, padding=pad, output_padding=out_pad)

    def forward(self, x):
        return self.up(x)

def make():
    return Up(1, (1, 0))
'''


def test_conv_transpose1d_variable_output_padding():
    """1-d: the padding known at run time; output_padding > padding there grows the rows past the full output
    (the bias alone, as torch's: any_batch.Conv1dTranspose's grow_end)."""
    src = TCONV_VAR_SRC.replace("ConvTranspose2d", "ConvTranspose1d").replace("(1, 0)", "1")
    code, sites = check_layer(src, [rnd(2, 4, 5)], graph=True, rtol=1e-4, atol=1e-4, grad=True)
    assert_converted(sites, "torch.nn.ConvTranspose1d")
    check_layer(src.replace("Up(1, 1)", "Up(0, 1)"), [rnd(2, 4, 5)], graph=True, rtol=1e-4, atol=1e-4, grad=True)


def test_conv_transpose_variable_output_padding():
    code, sites = check_layer(TCONV_VAR_SRC, [rnd(2, 4, 5, 5)], graph=True, rtol=1e-4, atol=1e-4)
    assert "_ms_compat.conv_transpose_padding(pad, out_pad, 2)" in code, code
    assert_converted(sites, "torch.nn.ConvTranspose2d")


@pytest.mark.parametrize("expr", ["nn.ConvTranspose2d(4, 3, 3, stride=2, output_padding=1)",
                                  "nn.ConvTranspose1d(4, 3, 3, stride=3, padding=1, output_padding=2)"])
def test_conv_transpose_output_padding_past_padding(expr):
    """output_padding larger than padding: torch's rows past the full transposed convolution hold the bias alone;
    the converted layer adds them (_ms_compat.any_batch's grow_end; tests/test_heldout53_programs.py)."""
    shape = (2, 4, 5, 5) if "2d" in expr else (2, 4, 5)
    code, sites = check_layer(layer_src(expr), [rnd(*shape)], graph=True, rtol=1e-4, atol=1e-4, grad=True)
    assert_converted(sites, "torch.nn." + expr.split("(")[0].split(".")[1])


def test_conv_grad():
    check_layer(layer_src("nn.Conv2d(3, 4, 3, stride=2, padding=1)"), [rnd(2, 3, 7, 7)], grad=True,
                graph=False, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------------------------- pooling
POOL_CASES = [
    ("nn.MaxPool1d(2)", (2, 3, 9), True),
    ("nn.MaxPool1d(3, stride=2, padding=1)", (2, 3, 9), False),
    ("nn.MaxPool1d(3, 2, ceil_mode=True)", (2, 3, 10), False),
    ("nn.MaxPool2d(2)", (2, 3, 8, 8), True),
    ("nn.MaxPool2d(3, 2, 1)", (2, 3, 9, 9), False),
    ("nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True)", (2, 3, 8, 8), False),
    ("nn.MaxPool2d((2, 3), stride=(2, 1), padding=(1, 1))", (2, 3, 7, 8), False),
    ("nn.MaxPool2d(3, stride=1, padding=1)", (2, 3, 6, 6), False),
    ("nn.MaxPool3d(2)", (1, 2, 4, 6, 6), True),
    ("nn.MaxPool3d(3, 2, 1)", (1, 2, 5, 5, 5), False),
    ("nn.MaxPool3d(kernel_size=[2, 1, 2], stride=1, ceil_mode=True)", (1, 2, 3, 4, 3), False),   # a list: a tuple
    ("nn.AvgPool2d([2, 3], stride=[1, 2], padding=[1, 0])", (2, 3, 6, 7), False),
    ("nn.AvgPool1d(2)", (2, 3, 9), True),
    ("nn.AvgPool1d(3, 2, 1)", (2, 3, 9), False),
    ("nn.AvgPool1d(3, 2, 1, count_include_pad=False)", (2, 3, 9), False),
    ("nn.AvgPool2d(2)", (2, 3, 8, 8), True),
    ("nn.AvgPool2d(3, stride=2, padding=1)", (2, 3, 9, 9), False),
    ("nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)", (2, 3, 9, 9), False),
    ("nn.AvgPool2d(3, stride=2, ceil_mode=True)", (2, 3, 8, 8), False),
    ("nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)", (2, 3, 8, 8), False),
    ("nn.AvgPool2d(2, divisor_override=3)", (2, 3, 6, 6), False),
    ("nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True)", (2, 3, 8, 8), False),
    ("nn.AvgPool2d(2, 2, 1, True, True)", (2, 3, 7, 7), False),
    ("nn.MaxPool2d(3, stride=2, dilation=2)", (2, 3, 9, 9), False),
    ("nn.MaxPool2d(2, return_indices=True)", (2, 3, 6, 6), True),
    ("nn.MaxPool1d(2, return_indices=True)", (2, 3, 6), False),
    ("nn.AvgPool3d(2)", (1, 2, 4, 6, 6), True),
    ("nn.AvgPool3d(3, 2, 1, count_include_pad=False)", (1, 2, 5, 5, 5), False),
    ("nn.AdaptiveAvgPool1d(3)", (2, 3, 9), True),
    ("nn.AdaptiveAvgPool2d(1)", (2, 3, 7, 7), True),
    ("nn.AdaptiveAvgPool2d((2, 3))", (2, 3, 8, 9), False),
    ("nn.AdaptiveAvgPool2d(output_size=(3, 3))", (2, 3, 7, 8), False),
    ("nn.AdaptiveAvgPool3d(2)", (1, 2, 4, 6, 6), True),
    ("nn.AdaptiveMaxPool1d(3)", (2, 3, 9), True),
    ("nn.AdaptiveMaxPool2d(2)", (2, 3, 8, 8), True),
    ("nn.AdaptiveMaxPool2d((3, 2))", (2, 3, 7, 8), False),
    ("nn.AdaptiveMaxPool2d(3, return_indices=True)", (2, 3, 7, 8), False),
    ("nn.AdaptiveMaxPool1d(3, return_indices=False)", (2, 3, 8), False),
    ("nn.AdaptiveMaxPool1d(3, return_indices=True)", (2, 3, 8), True),
    ("nn.AdaptiveAvgPool1d(output_size=4)", (2, 3, 7), False),
    ("nn.AdaptiveMaxPool3d(2)", (1, 2, 4, 6, 6), True),
    ("nn.AdaptiveMaxPool3d((None, 3, 1))", (1, 2, 4, 6, 6), False),
    ("nn.AdaptiveMaxPool3d(output_size=(2, None, 2), return_indices=True)", (2, 4, 6, 6), False),
]


@pytest.mark.parametrize("expr,shape,graph", POOL_CASES, ids=[c[0] for c in POOL_CASES])
def test_pool(expr, shape, graph):
    code, sites = check_layer(layer_src(expr), [rnd(*shape)], graph=graph)
    assert_converted(sites, "torch.nn." + expr.split("(")[0].split(".")[1])
    if "return_indices=True" in expr:     # torch's indices are int64
        mod, _, _ = load_converted(layer_src(expr))
        assert str(mod.make()(_to_ms(rnd(*shape)))[1].dtype) == "Int64", expr


# ------------------------------------------------------------------------------------- linear
@pytest.mark.parametrize("expr,shape,grad,graph", [
    ("nn.Linear(5, 3)", (4, 5), True, True),
    ("nn.Linear(5, 3, bias=False)", (2, 4, 5), True, False),
    ("nn.Linear(in_features=5, out_features=2, bias=True)", (3, 5), False, False),
    # torch tests `if bias:` (MindSpore's has_bias takes a bool only: a TypeError naming no line)
    ("nn.Linear(5, 3, bias=None)", (4, 5), True, True),
    ("nn.Linear(5, 3, bias=[1])", (4, 5), False, False),
])
def test_linear(expr, shape, grad, graph):
    code, sites = check_layer(layer_src(expr), [rnd(*shape)], grad=grad, graph=graph)
    assert_converted(sites, "torch.nn.Linear")


# ------------------------------------------------------------------------------------- norms
def _randomize(tnet, seed=3):
    """Non-default weights and running statistics, so names and roles are checked."""
    import torch
    rng = np.random.default_rng(seed)
    sd = tnet.state_dict()
    new = {}
    for k, v in sd.items():
        if v.dtype.is_floating_point:
            if k.endswith("running_var"):
                a = rng.uniform(0.5, 2.0, v.shape)
            elif k.endswith("running_mean"):
                a = rng.uniform(-1.0, 1.0, v.shape)
            else:
                a = v.numpy() + 0.3 * rng.standard_normal(v.shape)
            new[k] = torch.from_numpy(a.astype(np.float32))
        else:
            new[k] = v
    tnet.load_state_dict(new)


def check_stateful(src, inputs, train=False, steps=1, graph=True, rtol=1e-5, atol=1e-5, grad=False,
                   randomize=True):
    """Like check_layer, with randomized weights/statistics, several forward steps, and the
    state after the steps (e.g. BatchNorm running statistics) compared through the weight mapping."""
    import mindspore as ms
    import torch
    from msmigrate.weights import convert_state_dict, load_torch_state_dict

    torch.manual_seed(0)
    tnet = load_torch(src)["make"]()
    if randomize:
        _randomize(tnet)
    sd0 = {k: v.detach().numpy().copy() for k, v in tnet.state_dict().items()}
    mod, code, sites = load_converted(src)
    t_in = [_to_torch(a) for a in inputs]
    m_in = [_to_ms(a) for a in inputs]
    tnet.train(train)
    t_outs = []
    for _ in range(steps):
        t_outs.append(tnet(*t_in))
    t_state = {k: v.detach().numpy() for k, v in tnet.state_dict().items()}

    modes = [("pynative", ms.PYNATIVE_MODE)] + ([("graph", ms.GRAPH_MODE)] if graph else [])
    for label, mode in modes:
        ms.set_context(mode=mode)
        try:
            mnet = mod.make()
            load_torch_state_dict(mnet, sd0, strict=True)
            mnet.set_train(train)
            for i in range(steps):
                assert_close(mnet(*m_in), t_outs[i], rtol, atol, f"{label} step {i}")
            expected, _ = convert_state_dict(mnet, t_state, strict=False)
            got = {p.name: p.asnumpy() for p in mnet.get_parameters()}
            for name, arr in expected.items():
                np.testing.assert_allclose(got[name], arr, rtol=max(rtol, 1e-5), atol=max(atol, 1e-6),
                                           err_msg=f"{label}: {name} after {steps} step(s)")
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE)
    if grad:
        # gradients through the harness (fresh nets, default weights)
        check_layer(src, inputs, train=train, grad=True, graph=False, rtol=rtol, atol=atol)
    return code, sites


BN_CASES = [
    ("nn.BatchNorm2d(4)", (3, 4, 5, 5), False, True),
    ("nn.BatchNorm2d(4)", (3, 4, 5, 5), True, True),
    ("nn.BatchNorm2d(4, momentum=0.01)", (3, 4, 5, 5), True, False),
    ("nn.BatchNorm2d(4, eps=1e-3, momentum=0.1)", (3, 4, 5, 5), True, False),
    ("nn.BatchNorm2d(4, affine=False)", (3, 4, 5, 5), True, False),
    ("nn.BatchNorm2d(4, track_running_stats=False)", (3, 4, 5, 5), False, False),
    ("nn.BatchNorm1d(4)", (6, 4), False, True),
    ("nn.BatchNorm1d(4, momentum=0.01)", (6, 4), True, True),
    ("nn.BatchNorm1d(4)", (3, 4, 7), True, False),
    ("nn.BatchNorm3d(3)", (2, 3, 3, 4, 4), True, True),
]


@pytest.mark.parametrize("expr,shape,train,graph", BN_CASES,
                         ids=[f"{c[0]}-{'train' if c[2] else 'eval'}-{len(c[1])}d" for c in BN_CASES])
def test_batchnorm(expr, shape, train, graph):
    # two training steps: outputs and running statistics after each must match
    code, sites = check_stateful(layer_src(expr), [rnd(*shape) * 2 + 1], train=train, steps=2 if train else 1,
                                 graph=graph, rtol=1e-4, atol=1e-5)
    assert_converted(sites, "torch.nn." + expr.split("(")[0].split(".")[1])


BN_VAR_SRC = '''
import torch.nn as nn

class Net(nn.Module):
    def __init__(self, c, momentum, track):
        super().__init__()
        self.bn = nn.BatchNorm2d(c, 1e-5, momentum, track_running_stats=track)

    def forward(self, x):
        return self.bn(x)

def make():
    return Net(4, ARGS)
'''


@pytest.mark.parametrize("args,train", [("0.01, True", True), ("0.3, False", False), ("0.1, True", False)])
def test_batchnorm_arguments_variable(args, train):
    """momentum / track_running_stats given as variables are translated at run time."""
    code, sites = check_stateful(BN_VAR_SRC.replace("ARGS", args), [rnd(3, 4, 5, 5) * 2 + 1], train=train,
                                 steps=2, graph=False, rtol=1e-4, atol=1e-5)
    assert "1 - (momentum)" in code and "use_batch_statistics=None if track else True" in code, code
    assert_converted(sites, "torch.nn.BatchNorm2d")


def test_batchnorm_momentum_none_is_converted():
    """torch's cumulative average: values in tests/parity/test_batchnorm_cumulative.py."""
    from msmigrate.converter import convert_code
    code, sites, _ = convert_code(layer_src("nn.BatchNorm2d(4, momentum=None)"))
    assert [s.status for s in sites if s.api == "torch.nn.BatchNorm2d"] == [DIFFERENCE], code
    assert "_ms_compat.CumulativeBatchNorm2d(4, momentum=None)" in code, code


def test_group_norm_without_bias_is_converted():
    """torch 2.x's GroupNorm(bias=False): values in tests/parity/test_group_norm_bias.py."""
    _, code, sites = load_converted(layer_src("nn.GroupNorm(2, 4, bias=False)"))
    assert [s.status for s in sites if s.api == "torch.nn.GroupNorm"] == [CONVERTED], code
    assert "_ms_compat.GroupNorm(2, 4, bias=False)" in code, code


def test_batchnorm_grad():
    check_layer(layer_src("nn.BatchNorm2d(4)"), [rnd(3, 4, 5, 5)], train=True, grad=True, graph=False,
                rtol=1e-4, atol=1e-4)


NORM_SRC_VAR = '''
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.norm = nn.LayerNorm(shape, eps=1e-6)

    def forward(self, x):
        return self.norm(x)

def make():
    return Net(SHAPE)
'''

NORM_CASES = [
    ("nn.LayerNorm(6)", (3, 6), True),
    ("nn.LayerNorm((4, 6))", (2, 3, 4, 6), False),
    ("nn.LayerNorm([6], eps=1e-6)", (2, 5, 6), False),
    ("nn.LayerNorm(6, elementwise_affine=False)", (3, 6), False),
    ("nn.GroupNorm(2, 4)", (2, 4, 3, 3), True),
    ("nn.GroupNorm(3, 6, eps=1e-3)", (2, 6, 5), False),
    ("nn.GroupNorm(1, 4, affine=False)", (2, 4, 3, 3), False),
    ("nn.GroupNorm(2, 4, bias=True)", (2, 4, 3, 3), False),     # the default, written out: dropped
    ("nn.InstanceNorm2d(4)", (2, 4, 5, 5), True),
    ("nn.InstanceNorm2d(4, affine=True)", (2, 4, 5, 5), False),
    ("nn.InstanceNorm1d(4, affine=True)", (2, 4, 7), True),
    ("nn.InstanceNorm3d(2, affine=True)", (1, 2, 3, 4, 4), True),
]


@pytest.mark.parametrize("expr,shape,graph", NORM_CASES, ids=[c[0] for c in NORM_CASES])
def test_norms(expr, shape, graph):
    code, sites = check_stateful(layer_src(expr), [rnd(*shape) * 3 + 2], graph=graph, rtol=1e-4, atol=1e-4)
    assert_converted(sites, "torch.nn." + expr.split("(")[0].split(".")[1])


@pytest.mark.parametrize("shape_code,shape", [("6", (2, 3, 6)), ("(5, 6)", (2, 5, 6)), ("[5, 6]", (3, 5, 6))])
def test_layer_norm_shape_variable(shape_code, shape):
    code, sites = check_stateful(NORM_SRC_VAR.replace("SHAPE", shape_code), [rnd(*shape)], graph=True,
                                 rtol=1e-4, atol=1e-4)
    assert_converted(sites, "torch.nn.LayerNorm")


def test_layer_norm_size_expression_is_native():
    """A size written as arithmetic on an int (`2 * width`) is one dim: MindSpore's nn.LayerNorm inline,
    same values and gradients as torch, no helper."""
    src = NORM_SRC_VAR.replace("nn.LayerNorm(shape, eps=1e-6)", "nn.LayerNorm(2 * shape + 0, eps=1e-6)")
    code, sites = check_stateful(src.replace("SHAPE", "3"), [rnd(2, 4, 6)], graph=True, rtol=1e-4, atol=1e-4)
    assert "nn.LayerNorm((2 * shape + 0,), epsilon=1e-6)" in code and "_ms_compat" not in code, code
    assert_converted(sites, "torch.nn.LayerNorm")
    check_layer(src.replace("SHAPE", "3"), [rnd(2, 6)], grad=True, graph=False, rtol=1e-4, atol=1e-4)


def test_layer_norm_low_variance_eps():
    """Low-variance input: a wrong epsilon (MindSpore's default 1e-7 vs torch 1e-5) shows up at once."""
    x = (1.0 + 1e-3 * rnd(4, 8)).astype(np.float32)
    for expr in ("nn.LayerNorm(8)", "nn.LayerNorm(8, eps=1e-3)", "nn.LayerNorm((8,), 1e-4)"):
        check_stateful(layer_src(expr), [x], graph=False, rtol=1e-3, atol=1e-3, randomize=False)
    check_stateful(NORM_SRC_VAR.replace("SHAPE", "8").replace("eps=1e-6", "eps=1e-2"), [x], graph=False,
                   rtol=1e-3, atol=1e-3, randomize=False)
    x4 = (1.0 + 1e-3 * rnd(2, 4, 3, 3)).astype(np.float32)
    check_stateful(layer_src("nn.GroupNorm(2, 4)"), [x4], graph=False, rtol=1e-3, atol=1e-3, randomize=False)
    check_stateful(layer_src("nn.BatchNorm2d(4)"), [x4], train=True, graph=False, rtol=1e-3, atol=1e-3,
                   randomize=False)


def test_layer_norm_grad():
    check_layer(layer_src("nn.LayerNorm((4, 6))"), [rnd(2, 4, 6)], grad=True, graph=False, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------------------------- dropout
@pytest.mark.parametrize("expr,shape,train", [
    ("nn.Dropout()", (4, 6), False),
    ("nn.Dropout(0.3, inplace=True)", (4, 6), False),
    ("nn.Dropout(p=0.0)", (4, 6), True),
    ("nn.Dropout(0.0)", (4, 6), True),
    ("nn.Dropout1d(0.5)", (2, 4, 6), False),
    ("nn.Dropout2d(p=0.2)", (2, 4, 3, 3), False),
    ("nn.Dropout3d()", (2, 4, 2, 3, 3), False),
])
def test_dropout(expr, shape, train):
    code, sites = check_layer(layer_src(expr), [rnd(*shape)], train=train, graph=True)
    assert_converted(sites, "torch.nn." + expr.split("(")[0].split(".")[1])


def test_dropout_rate():
    """p is the drop probability on both sides (the old keep_prob is the opposite)."""
    import mindspore as ms
    mod, code, sites = load_converted(layer_src("nn.Dropout(0.3)"))
    net = mod.make()
    net.set_train(True)
    out = net(ms.Tensor(np.ones((200, 200), np.float32))).asnumpy()
    zero = (out == 0).mean()
    assert abs(zero - 0.3) < 0.02, zero
    np.testing.assert_allclose(out[out != 0], 1 / 0.7, rtol=1e-5)


# ------------------------------------------------------------------------------------- activations
ACT_CASES = [
    ("nn.ReLU()", True), ("nn.ReLU(inplace=True)", False), ("nn.ReLU6()", True), ("nn.ReLU6(True)", False),
    ("nn.SiLU()", True), ("nn.SiLU(inplace=True)", False), ("nn.Hardswish()", True), ("nn.Hardsigmoid()", True),
    ("nn.Mish()", True), ("nn.Sigmoid()", True), ("nn.Tanh()", True), ("nn.Softsign()", True),
    ("nn.Tanhshrink()", True), ("nn.LogSigmoid()", True), ("nn.GELU()", True), ("nn.GELU(approximate='tanh')", True),
    ("nn.GELU(approximate='none')", False), ("nn.LeakyReLU()", True), ("nn.LeakyReLU(0.2)", False),
    ("nn.LeakyReLU(negative_slope=0.3, inplace=True)", False), ("nn.ELU()", True), ("nn.ELU(alpha=0.5)", True),
    ("nn.ELU(2.0, True)", False), ("nn.ELU(alpha=1.0)", False),
    ("nn.Hardtanh()", True), ("nn.Hardtanh(-2.0, 2.0)", False), ("nn.Hardtanh(min_val=0.0, max_val=6.0)", False),
    ("nn.PReLU()", True), ("nn.PReLU(4)", False), ("nn.PReLU(num_parameters=4, init=0.1)", False),
    ("nn.Softmax(dim=1)", True), ("nn.Softmax(-1)", False), ("nn.LogSoftmax(dim=1)", True),
    ("nn.LogSoftmax(dim=-1)", False), ("nn.Identity()", True), ("nn.Identity(54, unused=1)", False),
    ("nn.Flatten()", True), ("nn.Flatten(0, 1)", False), ("nn.Flatten(start_dim=2)", False),
]


def check_input_grad(src, x, rtol=1e-5, atol=1e-5):
    """d(sum(layer(x) * w))/dx in both frameworks (weights copied)."""
    import mindspore as ms
    import torch
    from msmigrate.weights import load_torch_state_dict

    torch.manual_seed(0)
    tnet = load_torch(src)["make"]()
    mod, code, sites = load_converted(src)
    mnet = mod.make()
    load_torch_state_dict(mnet, {k: v.detach().numpy() for k, v in tnet.state_dict().items()}, strict=True)
    tnet.eval()
    mnet.set_train(False)
    xt = _to_torch(x).requires_grad_(True)
    out = tnet(xt)
    w = np.random.default_rng(7).standard_normal(tuple(out.shape)).astype(np.float32)
    (out * torch.from_numpy(w)).sum().backward()

    def objective(xm):
        return (mnet(xm) * ms.Tensor(w)).sum()

    g = ms.grad(objective)(_to_ms(x))
    np.testing.assert_allclose(g.asnumpy(), xt.grad.numpy(), rtol=rtol, atol=atol, err_msg="input gradient")


@pytest.mark.parametrize("expr,graph", ACT_CASES, ids=[c[0] for c in ACT_CASES])
def test_activations(expr, graph):
    x = rnd(2, 4, 3, 3) * 3
    # MindSpore's CPU tanh kernel is accurate to ~7e-5 (float32); Mish uses it too
    tol = 1e-4 if "Tanh" in expr else 1e-5
    gtol = 1e-3 if ("Tanh" in expr or "Mish" in expr) else 1e-4
    code, sites = check_layer(layer_src(expr), [x], graph=graph, rtol=tol, atol=tol)
    assert_converted(sites, "torch.nn." + expr.split("(")[0].split(".")[1])
    if graph and "Flatten" not in expr and "Identity" not in expr:
        check_input_grad(layer_src(expr), x, rtol=gtol, atol=gtol)
    if "PReLU" in expr:
        check_layer(layer_src(expr), [x], graph=False, grad=True)


ACT_VAR_SRC = '''
import torch.nn as nn


class Act(nn.Module):
    def __init__(self, approximate, slope, alpha, dim):
        super().__init__()
        self.gelu = nn.GELU(approximate=approximate)
        self.leaky = nn.LeakyReLU(slope)
        self.elu = nn.ELU(alpha)
        self.softmax = nn.Softmax(dim=dim)

    def forward(self, x):
        return self.softmax(self.elu(self.leaky(self.gelu(x))))


def make():
    return Act(ARGS)
'''


@pytest.mark.parametrize("args", ["'none', 0.2, 0.5, 1", "'tanh', 0.01, 1.0, -1"])
def test_activation_arguments_variable(args):
    code, sites = check_layer(ACT_VAR_SRC.replace("ARGS", args), [rnd(2, 3, 4) * 3], graph=False)
    assert_converted(sites, "torch.nn.GELU", "torch.nn.LeakyReLU", "torch.nn.ELU", "torch.nn.Softmax")


@pytest.mark.parametrize("shape", [(5,), (2, 5), (2, 3, 4), (2, 3, 4, 2)])
def test_softmax_implicit_dim(shape):
    """nn.Softmax() / nn.LogSoftmax() without dim: torch's rank rule (dim 0 for 1-D and 3-D inputs)."""
    code, sites = check_layer(layer_src("nn.Sequential(nn.Softmax(), nn.LogSoftmax())"), [rnd(*shape)],
                              graph=len(shape) == 3)
    assert_converted(sites, "torch.nn.Softmax", "torch.nn.LogSoftmax")


# ------------------------------------------------------------------------------------- containers
CONTAINER_SRC = '''
from collections import OrderedDict
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Linear(6, 8),
            nn.ReLU(),
            nn.Sequential(nn.Linear(8, 8), nn.Tanh()),
        )
        self.named = nn.Sequential(OrderedDict([("fc", nn.Linear(8, 5)), ("act", nn.Sigmoid())]))
        self.blocks = nn.ModuleList([nn.Linear(5, 5) for _ in range(3)])
        self.blocks.append(nn.Linear(5, 4))
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 3)})

    def forward(self, x):
        x = self.features(x)
        x = self.named(x)
        y = self.blocks[0](x)
        for blk in self.blocks:
            x = blk(x)
        return self.heads["a"](x), self.heads["b"](x), y

def make():
    return Net()
'''


LIST_SRC = '''
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.layers = nn.ModuleList()
        for i in range(n):
            self.layers.append(nn.Linear(4, 4))
        self.layers.extend([nn.ReLU(), nn.Linear(4, 2)])
        self.seq = nn.Sequential()
        self.seq.add_module("fc", nn.Linear(2, 3))
        self.seq.append(nn.Sigmoid())

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.seq(x)


def make():
    return Net(2)
'''


def test_containers_grown():
    """Containers built empty and grown with append/extend/add_module keep torch's names and order."""
    code, sites = check_layer(LIST_SRC, [rnd(3, 4)], graph=True)
    assert_converted(sites, "torch.nn.Sequential", "torch.nn.ModuleList")


GROWN_LISTS_SRC = '''
import torch.nn as nn


class Net(nn.Module):
    """Two lists built empty and grown with lists of layers (a U-Net's downs/ups)."""
    def __init__(self):
        super().__init__()
        self.downs = nn.ModuleList([])
        self.ups = nn.ModuleList([])
        for _ in range(2):
            self.downs.append(nn.ModuleList([nn.Linear(4, 4)]))
            self.ups.append(nn.ModuleList([nn.Linear(4, 4)]))

    def forward(self, x):
        for (down,), (up,) in zip(self.downs, self.ups):
            x = up(down(x))
        return x


def make():
    return Net()
'''


def test_empty_lists_grown_name_parameters_by_path():
    """Parameters appended to an empty list get its attribute path (MindSpore's CellList names them from the
    entries already there: both lists' weights were "0.0.weight", tied when torch's weights load)."""
    mod, _, _ = load_converted(GROWN_LISTS_SRC)
    names = [p.name for p in mod.make().get_parameters()]
    assert names == [f"{side}.{i}.0.{w}" for side in ("downs", "ups") for i in range(2) for w in ("weight", "bias")]
    check_layer(GROWN_LISTS_SRC, [rnd(3, 4)], graph=True)


MODULE_LIST_ITERABLES = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

class MLP(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, num_layers):
        super().__init__()
        self.num_layers = num_layers
        h = [hidden_dim] * (num_layers - 1)
        self.layers = nn.ModuleList(nn.Linear(n, k) for n, k in zip([input_dim] + h, h + [output_dim]))
        self.extra = nn.ModuleList((nn.Linear(output_dim, output_dim),))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = F.relu(layer(x)) if i < self.num_layers - 1 else layer(x)
        return self.extra[0](x)

def make():
    return MLP(6, 5, 4, 3)
'''


def test_module_list_from_iterables():
    """nn.ModuleList of a generator or a tuple (CellList takes a list only)."""
    code, sites = check_layer(MODULE_LIST_ITERABLES, [rnd(3, 6)], graph=True, grad=True)
    assert_converted(sites, "torch.nn.ModuleList")
    assert "nn.CellList(list(" in code, code


MHA_KEYWORDS = '''
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2)

    def forward(self, x):
        a = self.attn(x, x + 1, value=x)[0]
        b = self.attn(query=x, key=x, value=x * 2, need_weights=False)[0]
        return a + b

def make():
    return Net()
'''


def test_attention_inputs_by_keyword():
    """query/key/value given by keyword (DETR's self_attn(q, k, value=src, ...))."""
    check_layer(MHA_KEYWORDS, [rnd(3, 2, 8)], rtol=1e-4, atol=1e-5, graph=False)


def test_containers():
    import torch
    code, sites = check_layer(CONTAINER_SRC, [rnd(3, 6)], graph=True, grad=True)
    assert_converted(sites, "torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict")
    # weights by name: every torch key maps 1:1 onto the MindSpore parameter of the same name
    mod, _, _ = load_converted(CONTAINER_SRC)
    ms_names = sorted(p.name for p in mod.make().get_parameters())
    t_names = sorted(load_torch(CONTAINER_SRC)["make"]().state_dict())
    assert ms_names == t_names


# ------------------------------------------------------------------------------------- embedding
@pytest.mark.parametrize("expr,graph", [
    ("nn.Embedding(10, 4)", True),
    ("nn.Embedding(10, 4, padding_idx=0)", False),
    ("nn.Embedding(num_embeddings=10, embedding_dim=3, padding_idx=2, sparse=False)", False),
    ("nn.Embedding(10, 4, -1)", True),
])
def test_embedding(expr, graph):
    idx = np.array([[0, 2, 4, 9], [2, 2, 0, 1]], np.int64)
    code, sites = check_layer(layer_src(expr), [idx], graph=graph, grad=True)
    assert_converted(sites, "torch.nn.Embedding")


@pytest.mark.parametrize("expr,graph", [
    ("nn.Embedding(10, 4, max_norm=1.5)", False),
    ("nn.Embedding(10, 4, padding_idx=0, max_norm=1.0, norm_type=2.6)", True),
    ("nn.Embedding(num_embeddings=10, embedding_dim=4, max_norm=1.2, norm_type=1.0)", True),
])
def test_embedding_max_norm(expr, graph):
    """max_norm: before the lookup torch scales each row the call reads whose norm exceeds max_norm to
    max_norm, in place and with no gradient; rows not read keep their values."""
    import torch
    idx = np.array([[0, 2, 4, 9], [2, 2, 0, 1]], np.int64)
    code, sites = check_layer(layer_src(expr), [idx], graph=graph, grad=True)
    assert_converted(sites, "torch.nn.Embedding")
    # the table after one call: the rows read are renormalised in both, the others untouched
    torch.manual_seed(0)
    tnet = load_torch(layer_src(expr))["make"]()
    mod, _, _ = load_converted(layer_src(expr))
    mnet = mod.make()
    before = tnet.weight.detach().numpy().copy()
    mnet.embedding_table.set_data(_to_ms(before))
    t_out = tnet(_to_torch(idx))
    m_out = mnet(_to_ms(idx))
    after = tnet.weight.detach().numpy()
    assert not np.allclose(after, before) and np.array_equal(after[5:9], before[5:9])
    assert_close(mnet.embedding_table.asnumpy(), after, 1e-5, 1e-6, "table after the call")
    assert_close(m_out, t_out, 1e-5, 1e-6)


def test_embedding_init():
    """The default initialisation is torch's N(0, 1), not MindSpore's N(0, 0.01)."""
    mod, code, sites = load_converted(layer_src("nn.Embedding(1000, 64)"))
    table = mod.make().embedding_table.asnumpy()
    assert abs(table.std() - 1.0) < 0.02 and abs(table.mean()) < 0.02
    mod, code, sites = load_converted(layer_src("nn.Embedding(100, 64, padding_idx=3)"))
    table = mod.make().embedding_table.asnumpy()
    np.testing.assert_array_equal(table[3], 0)


FROM_PRETRAINED_SRC = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, freeze, padding_idx):
        super().__init__()
        table = torch.arange(24.).reshape(6, 4) / 7 - 1
        self.pos = nn.Embedding.from_pretrained(table, freeze=freeze, padding_idx=padding_idx)
        self.out = nn.Linear(4, 3)

    def forward(self, ids):
        return self.out(self.pos(ids))


def frozen():
    return Net(True, None)


def trained():
    return Net(freeze=False, padding_idx=2)
"""


@pytest.mark.parametrize("entry,graph", [("frozen", True), ("trained", False)])
def test_embedding_from_pretrained(entry, graph):
    """nn.Embedding.from_pretrained (nlp-tutorial's sinusoid position table): the given rows (the padding
    row kept as given), frozen by default: the table is not trained; trained with freeze=False, the padding
    row excepted."""
    ids = np.array([[0, 2, 5], [1, 2, 3]], np.int64)
    code, sites = check_layer(FROM_PRETRAINED_SRC, [ids], entry=entry, graph=graph, grad=True)
    assert_converted(sites, "torch.nn.Embedding.from_pretrained")
    tnet = load_torch(FROM_PRETRAINED_SRC)[entry]()
    mod, _, _ = load_converted(FROM_PRETRAINED_SRC)
    mnet = getattr(mod, entry)()
    t_trained = sorted(n for n, p in tnet.named_parameters() if p.requires_grad)
    m_trained = sorted(p.name for p in mnet.trainable_params())
    assert len(m_trained) == len(t_trained), (m_trained, t_trained)
    assert any("pos" in n for n in m_trained) == (entry == "trained")
    np.testing.assert_array_equal(mnet.pos.embedding_table.asnumpy(), tnet.pos.weight.detach().numpy())


# ------------------------------------------------------------------------------------- attention
@pytest.mark.parametrize("expr,batch_first,graph", [
    ("nn.MultiheadAttention(8, 2)", False, True),
    ("nn.MultiheadAttention(8, 2, batch_first=True)", True, True),
    ("nn.MultiheadAttention(embed_dim=8, num_heads=4, bias=False, batch_first=False)", False, False),
    ("nn.MultiheadAttention(8, 2, dropout=0.0, kdim=6, vdim=5, batch_first=True)", True, False),
])
def test_attention(expr, batch_first, graph):
    q = rnd(2, 5, 8) if batch_first else rnd(5, 2, 8)
    kd = 6 if "kdim=6" in expr else 8
    vd = 5 if "vdim=5" in expr else 8
    shp = (2, 4) if batch_first else (4, 2)
    k = rnd(*shp, kd, seed=1)
    v = rnd(*shp, vd, seed=2)
    # torch returns (attn_output, averaged attention weights); the converted layer the same pair
    code, sites = check_layer(layer_src(expr), [q, k, v], graph=graph, rtol=1e-4, atol=1e-5)
    assert_converted(sites, "torch.nn.MultiheadAttention")
    code, sites = check_layer(layer_src(expr), [q, k, v], graph=False, rtol=1e-4, atol=1e-5,
                              call=lambda net, q, k, v: net(q, k, v, need_weights=False)[0])
    # masks: bool key_padding_mask (True = ignore), bool or additive float attn_mask, per-head weights
    L, S = 5, 4
    kpm = np.zeros((2, S), bool)
    kpm[0, 2:] = True
    causal = np.triu(np.ones((L, S), bool), 1)
    additive = np.where(causal, -1e9, 0.0).astype(np.float32)
    check_layer(layer_src(expr), [q, k, v, kpm, causal], graph=False, rtol=1e-4, atol=1e-5,
                call=lambda net, q, k, v, m, a: net(q, k, v, key_padding_mask=m, attn_mask=a,
                                                    average_attn_weights=False))
    check_layer(layer_src(expr), [q, k, v, additive], graph=False, rtol=1e-4, atol=1e-5,
                call=lambda net, q, k, v, a: net(q, k, v, attn_mask=a))


# ------------------------------------------------------------------------------------- recurrent
RNN_CASES = [
    ("nn.LSTM(4, 6)", False, True),
    ("nn.LSTM(4, 6, num_layers=2, bidirectional=True, batch_first=True)", True, True),
    ("nn.LSTM(4, 6, 2, bias=False)", False, False),
    ("nn.LSTM(4, 6, proj_size=0)", False, False),     # the default, written out: dropped
    # projections (_ms_compat.ProjectedLSTM): keyword and positional proj_size
    ("nn.LSTM(4, 6, num_layers=2, bidirectional=True, batch_first=True, proj_size=3)", True, True),
    ("nn.LSTM(4, 6, 2, False, False, 0.0, False, 2)", False, False),
    # a proj_size known only at run time: the class chosen then (0: MindSpore's LSTM)
    ("nn.LSTM(4, 6, proj_size=int('2'))", False, False),
    ("nn.LSTM(4, 6, proj_size=int('0'), batch_first=True)", True, False),
    ("nn.GRU(4, 6)", False, True),
    ("nn.GRU(4, 6, num_layers=2, bidirectional=True, batch_first=True)", True, False),
    ("nn.RNN(4, 6)", False, True),
    ("nn.RNN(4, 6, num_layers=2, nonlinearity='relu', bidirectional=True)", False, False),
    ("nn.RNN(4, 6, batch_first=True, bias=False)", True, False),
]


@pytest.mark.parametrize("expr,batch_first,graph", RNN_CASES, ids=[c[0] for c in RNN_CASES])
def test_recurrent(expr, batch_first, graph):
    x = rnd(3, 5, 4) if batch_first else rnd(5, 3, 4)
    # outputs and the final states (torch defaults h0 / (h0, c0) to zeros)
    code, sites = check_layer(layer_src(expr), [x], graph=graph, rtol=1e-4, atol=1e-5)
    assert_converted(sites, "torch.nn." + expr.split("(")[0].split(".")[1])


# RNNBase(mode, ...): the layer its mode names, the other arguments by name (RNN's positions differ: nonlinearity)
RNN_BASE_CASES = [
    ("nn.RNNBase('LSTM', 4, 6, bidirectional=True)", "nn.LSTM(4, 6, bidirectional=True)", False),
    ("nn.RNNBase('GRU', 4, 6, 2, True, True)", "nn.GRU(4, 6, 2, True, True)", True),
    ("nn.RNNBase('RNN_RELU', 4, 6, 2, True, False, 0.0, False, 0, 'cpu', None)",
     "nn.RNN(4, 6, 2, nonlinearity='relu')", False),
    ("nn.RNNBase(mode='RNN_TANH', hidden_size=6, input_size=4, batch_first=True)", "nn.RNN(4, 6, batch_first=True)",
     True),
]


@pytest.mark.parametrize("expr,same,batch_first", RNN_BASE_CASES, ids=[c[0] for c in RNN_BASE_CASES])
def test_recurrent_base(expr, same, batch_first):
    """torch.nn.RNNBase has no forward of its own: the converted layer holds torch's settings and parameters
    (names and shapes: torch's RNNBase state_dict loads strictly) and, given those weights, computes what torch's
    class of that mode computes."""
    import mindspore as ms
    import torch
    from msmigrate.weights import load_torch_state_dict

    mod, code, sites = load_converted(layer_src(expr))
    assert_converted(sites, "torch.nn.RNNBase")
    torch.manual_seed(0)
    base = load_torch(layer_src(expr))["make"]()
    got = mod.make()
    for name in ("input_size", "hidden_size", "num_layers", "batch_first", "bidirectional"):
        assert getattr(got, name) == getattr(base, name), (name, getattr(got, name), getattr(base, name))
    sd = {k: v.detach().numpy() for k, v in base.state_dict().items()}
    load_torch_state_dict(got, sd, strict=True)
    twin = load_torch(layer_src(same))["make"]()
    twin.load_state_dict(base.state_dict())
    x = rnd(3, 5, 4) if batch_first else rnd(5, 3, 4)
    assert_close(got(ms.Tensor(x)), twin(torch.from_numpy(x)), 1e-4, 1e-5)


def test_recurrent_initial_state():
    layers = 2 * 2
    h0, c0 = rnd(layers, 3, 6, seed=4), rnd(layers, 3, 6, seed=5)
    x = rnd(3, 5, 4)
    src = layer_src("nn.LSTM(4, 6, num_layers=2, bidirectional=True, batch_first=True)")
    check_layer(src, [x, h0, c0], graph=False, rtol=1e-4, atol=1e-5, call=lambda net, x, h, c: net(x, (h, c)))
    src = layer_src("nn.GRU(4, 6, num_layers=2, bidirectional=True, batch_first=True)")
    check_layer(src, [x, h0], graph=False, rtol=1e-4, atol=1e-5, call=lambda net, x, h: net(x, h))
    # projected: h0 (layers, batch, proj_size), c0 (layers, batch, hidden); gradients of every parameter;
    # an unbatched input with its states
    src = layer_src("nn.LSTM(4, 6, num_layers=2, bidirectional=True, batch_first=True, proj_size=2)")
    check_layer(src, [x, h0[..., :2].copy(), c0], graph=False, rtol=1e-4, atol=1e-5,
                call=lambda net, x, h, c: net(x, (h, c)))
    check_layer(src, [x, h0[..., :2].copy(), c0], graph=False, grad=True, rtol=1e-4, atol=1e-5,
                call=lambda net, x, h, c: net(x, (h, c))[0])
    check_layer(src, [x[0], h0[:, 0, :2].copy(), c0[:, 0]], graph=False, rtol=1e-4, atol=1e-5,
                call=lambda net, x, h, c: net(x, (h, c)))


@pytest.mark.parametrize("expr,graph", [("nn.LSTM(4, 6, num_layers=2)", True), ("nn.GRU(4, 6, batch_first=True)", False),
                                        ("nn.RNN(4, 6, bidirectional=True, nonlinearity='relu')", False)])
def test_recurrent_unbatched(expr, graph):
    """torch's unbatched input (seq, features), with and without a state (layers, hidden): a batch of one."""
    x = rnd(5, 4)
    check_layer(layer_src(expr), [x], graph=graph, rtol=1e-4, atol=1e-5)
    layers = (2 if "num_layers=2" in expr or "bidirectional" in expr else 1)
    h0, c0 = rnd(layers, 6, seed=4), rnd(layers, 6, seed=5)
    if expr.startswith("nn.LSTM"):
        check_layer(layer_src(expr), [x, h0, c0], graph=False, rtol=1e-4, atol=1e-5,
                    call=lambda net, x, h, c: net(x, (h, c)))
    else:
        check_layer(layer_src(expr), [x, h0], graph=False, rtol=1e-4, atol=1e-5, call=lambda net, x, h: net(x, h))


# ------------------------------------------------------------------------------------- resampling, padding
@pytest.mark.parametrize("expr,shape,graph", [
    ("nn.Upsample(scale_factor=2)", (2, 3, 4, 5), True),
    ("nn.Upsample(scale_factor=2, mode='nearest')", (2, 3, 6), False),
    ("nn.Upsample(size=(6, 7), mode='nearest')", (2, 3, 4, 5), False),
    ("nn.Upsample(size=(6, 7), mode='bilinear', align_corners=True)", (2, 3, 4, 5), True),
    ("nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)", (2, 3, 4, 5), False),
    ("nn.Upsample(scale_factor=2, mode='bilinear')", (2, 3, 4, 5), False),
    ("nn.Upsample(scale_factor=(2, 3), mode='nearest')", (2, 3, 4, 5), False),
    ("nn.Upsample(scale_factor=1.5, mode='bilinear', recompute_scale_factor=True)", (2, 3, 4, 5), False),
    ("nn.Upsample(size=(7, 9), mode='bicubic', align_corners=True)", (2, 3, 4, 5), False),
    ("nn.Upsample(size=10, mode='linear')", (2, 3, 5), False),
    ("nn.Upsample(scale_factor=2, mode='trilinear', align_corners=True)", (1, 2, 3, 4, 5), False),
])
def test_upsample(expr, shape, graph):
    code, sites = check_layer(layer_src(expr), [rnd(*shape)], graph=graph, rtol=1e-5, atol=1e-5)
    assert_converted(sites, "torch.nn.Upsample")


UPSAMPLE_VAR_SRC = '''
import torch.nn as nn

class Up(nn.Module):
    def __init__(self, scale, mode):
        super().__init__()
        self.up = nn.Upsample(scale_factor=scale, mode=mode)

    def forward(self, x):
        return self.up(x)

def make():
    return Up(SCALE, MODE)
'''


def test_upsample_variable_scale():
    src = UPSAMPLE_VAR_SRC.replace("SCALE, MODE", "2, 'bilinear'")
    code, sites = check_layer(src, [rnd(2, 3, 4, 5)], graph=True)
    assert "_ms_compat.upsample_scale(scale" in code
    # a non-integer scale would map coordinates differently: refused loudly at construction
    mod, _, _ = load_converted(UPSAMPLE_VAR_SRC.replace("SCALE, MODE", "1.5, 'nearest'"))
    with pytest.raises(Exception, match="not an integer"):
        mod.make()


@pytest.mark.parametrize("expr", ["nn.Upsample(scale_factor=1.5)",
                                  "nn.Upsample(size=(7, 9), mode='bicubic')"])
def test_upsample_unsupported(expr):
    from msmigrate.converter import convert_code
    code, sites, _ = convert_code(layer_src(expr))
    assert [s.status for s in sites if s.api == "torch.nn.Upsample"] == [TODO]


PAD_CASES = [
    ("nn.ZeroPad2d(2)", (1, 2, 3, 4), True),
    ("nn.ZeroPad2d((1, 2, 3, 0))", (1, 2, 3, 4), True),
    ("nn.ConstantPad1d(2, 3.5)", (1, 2, 4), True),
    ("nn.ConstantPad1d((1, 3), -1.0)", (1, 2, 4), False),
    ("nn.ConstantPad2d((1, 2, 0, 3), 0.5)", (1, 2, 3, 4), True),
    ("nn.ConstantPad3d((1, 0, 2, 0, 0, 1), 1.0)", (1, 2, 2, 3, 4), True),
    ("nn.ReflectionPad1d((2, 1))", (1, 2, 5), True),
    ("nn.ReflectionPad2d((1, 2, 2, 0))", (1, 2, 4, 5), True),
    ("nn.ReflectionPad2d(1)", (1, 2, 4, 5), False),
    ("nn.ReflectionPad1d(2)", (2, 5), False),
    ("nn.ReflectionPad2d((2, 1, 0, 2))", (2, 4, 5), False),
    ("nn.ReplicationPad1d((0, 3))", (1, 2, 5), True),
    ("nn.ReplicationPad2d((1, 0, 2, 3))", (1, 2, 4, 5), True),
    ("nn.ReflectionPad3d((1, 0, 2, 1, 0, 1))", (1, 2, 3, 4, 3), True),
    ("nn.ReflectionPad3d(1)", (2, 3, 3, 3), False),
    ("nn.ZeroPad1d((2, 0, 1, 1))", (1, 2, 3), True),       # torch takes any even length (F.pad's)
    ("nn.ZeroPad1d(1)", (2, 4), False),
    ("nn.ZeroPad3d((1, 0, 0, 2, 1, 1))", (1, 1, 2, 2, 3), False),
]


@pytest.mark.parametrize("expr,shape,graph", PAD_CASES, ids=[c[0] for c in PAD_CASES])
def test_padding(expr, shape, graph):
    # asymmetric tuples: the (left, right, top, bottom, front, back) order must survive
    code, sites = check_layer(layer_src(expr), [rnd(*shape)], graph=graph)
    assert_converted(sites, "torch.nn." + expr.split("(")[0].split(".")[1])
    # the layer's padding attribute as torch holds it (code reads it back)
    mod, _, _ = load_converted(layer_src(expr))
    assert tuple(mod.make().padding) == tuple(load_torch(layer_src(expr))["make"]().padding), expr


MHA_NO_WEIGHTS = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x):
        y, w = self.attn(x, x, x, need_weights=False)
        assert w is None
        return y


def make():
    return Block()
'''


def test_attention_need_weights_false():
    """torch returns (output, None) without weights; MindSpore's layer returns (output,)."""
    x = np.random.default_rng(5).standard_normal((2, 5, 8)).astype(np.float32)
    code, sites = check_layer(MHA_NO_WEIGHTS, [x], rtol=1e-4, atol=1e-5)
    assert {s.status for s in sites if s.api == "torch.nn.MultiheadAttention"} == {"converted"}


SUBCLASSED_CONTAINERS = '''
import torch
import torch.nn as nn


class Transition(nn.Sequential):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.norm = nn.BatchNorm2d(c_in)
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(c_in, c_out, kernel_size=1, bias=False)


class Block(nn.ModuleDict):
    def __init__(self, n, c):
        super().__init__()
        for i in range(n):
            self.add_module("layer%d" % (i + 1), nn.Conv2d(c * (i + 1), c, 3, padding=1))

    def forward(self, x):
        features = [x]
        for name, layer in self.items():
            features.append(layer(torch.cat(features, 1)))
        return torch.cat(features, 1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential()
        self.features.add_module("block", Block(2, 3))
        self.features.add_module("transition", Transition(9, 4))


    def forward(self, x):
        return self.features(x)


def make():
    return Net()
'''


def test_subclassed_containers():
    """DenseNet's idioms: a Sequential subclass filled by attribute assignment, a
    ModuleDict subclass with forward, children added with add_module; names and order kept,
    in PyNative and GRAPH mode."""
    x = np.random.default_rng(7).standard_normal((2, 3, 8, 8)).astype(np.float32)
    code, sites = check_layer(SUBCLASSED_CONTAINERS, [x], rtol=1e-4, atol=1e-5)
    assert "class Transition(_ms_compat.Sequential):" in code
    assert "class Block(_ms_compat.ModuleDict):" in code
