"""Walk a built Keras 3 model's layer graph and emit an equivalent MindSpore ``nn.Cell``.

Layout: Keras is channels-last (NHWC), MindSpore's conv/pool/BN kernels are channels-first (NCHW). Every tensor
of the converted ``construct`` carries a *layout* relative to its Keras tensor:

- ``cl``:   the same axis order as in Keras;
- ``cf``:   channels moved to axis 1 (NHWC -> NCHW, NWC -> NCW);
- ``flat``: a rank-2 tensor made by flattening a ``cf`` tensor, so its features are in (C, H, W) order instead of
            Keras' (H, W, C). A Dense layer reading it gets its kernel rows permuted at conversion time, so no
            transpose is needed at run time.

Layers pick the layout they work in, and a transpose is emitted only where a consumer needs another layout than
its producer gave (cached, so a tensor is transposed at most once per layout). For image models this puts the
only transposes at the model's boundary: the converted model takes NCHW input (or NHWC with ``keep_nhwc``, then
one transpose at the start) and returns spatial outputs in the same convention.
"""
from __future__ import annotations

import keyword
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..records import name_registry


class KerasConversionError(Exception):
    """The model (or one of its layers) cannot be converted; the message says which and why."""


@dataclass
class Sym:
    """A tensor of the converted construct(): its Python variable, Keras shape and layout."""
    var: str
    shape: Tuple[Optional[int], ...]  # the Keras shape, batch first (None)
    layout: str = "cl"  # "cl" | "cf" | "flat"
    flat_from: Optional[Tuple[int, ...]] = None  # layout "flat": the Keras shape (H, W, C) that was flattened
    converted: Dict[str, "Sym"] = field(default_factory=dict)  # cache of layout conversions

    @property
    def rank(self) -> int:
        return len(self.shape)

    def ms_shape(self) -> Tuple[Optional[int], ...]:
        """The MindSpore-side shape (batch None)."""
        if self.layout == "cf":
            return (self.shape[0], self.shape[-1]) + tuple(self.shape[1:-1])
        return tuple(self.shape)


@dataclass
class LayerRow:
    name: str
    cls: str
    became: str
    note: str = ""


@dataclass
class KerasConversion:
    model_name: str
    class_name: str
    out_dir: str
    source: str
    layers: List[LayerRow]
    weights: Dict[str, np.ndarray]
    input_shapes: List[Tuple]  # MindSpore-side input shapes (batch None)
    output_shapes: List[Tuple]
    keep_nhwc: bool
    seconds: float = 0.0
    graph_model: Any = None  # the functional model walked (a subclassed model's traced graph)

    @property
    def model_py(self) -> str:
        return os.path.join(self.out_dir, "model.py")

    @property
    def ckpt(self) -> str:
        return os.path.join(self.out_dir, "model.ckpt")


_CELL_RESERVED = {
    "training", "name", "cells", "construct", "parameters", "phase", "cls_name", "param_prefix", "bprop_debug",
    "trainable_params", "untrainable_params", "set_train", "update_parameters_name", "compile", "jit_config_dict",
    "requires_grad", "cast", "to_float", "self", "np", "ms", "nn", "ops", "os", "create_model",
}


def _pyname(name: str) -> str:
    s = re.sub(r"\W", "_", name).strip("_") or "layer"
    if s[0].isdigit() or keyword.iskeyword(s) or s in _CELL_RESERVED or s.startswith("_"):
        s = "l_" + s
    return s


def _cf_perm(rank: int) -> Tuple[int, ...]:
    return (0, rank - 1) + tuple(range(1, rank - 1))


def _cl_perm(rank: int) -> Tuple[int, ...]:
    return (0,) + tuple(range(2, rank)) + (1,)


def _pair(v, n=2) -> Tuple[int, ...]:
    if isinstance(v, int):
        return (v,) * n
    return tuple(int(a) for a in v)


class Ctx:
    """Collects __init__ lines, construct lines, weights and report rows while the graph is walked."""

    def __init__(self, keep_nhwc: bool):
        self.keep_nhwc = keep_nhwc
        self.init_lines: List[str] = []
        self.body: List[str] = []
        self.weights: Dict[str, np.ndarray] = {}
        self.rows: List[LayerRow] = []
        self.used_names: set = set()  # construct() locals
        self.used_attrs: set = set()  # self.<attr> names
        self.layer_attr: Dict[Tuple[int, str], str] = {}
        self.helpers: set = set()
        self.const_count = 0

    # -- names -------------------------------------------------------------------------------------------------
    def unique(self, hint: str, attr: bool = False) -> str:
        used = self.used_attrs if attr else self.used_names
        base = _pyname(hint)
        name, i = base, 1
        while name in used:
            i += 1
            name = f"{base}_{i}"
        used.add(name)
        return name

    # -- cells and weights ---------------------------------------------------------------------------------------
    def cell(self, layer, code: str, weights: Optional[Dict[str, np.ndarray]] = None, variant: str = "",
             extra_init: Sequence[str] = ()) -> Tuple[str, bool]:
        """``self.ATTR = code`` once per (layer, variant); returns (attr, created now)."""
        key = (id(layer), variant)
        if key in self.layer_attr:
            return self.layer_attr[key], False
        attr = self.unique(layer.name + (f"_{variant}" if variant else ""), attr=True)
        self.layer_attr[key] = attr
        self.init_lines.append(f"self.{attr} = {code}")
        for line in extra_init:
            self.init_lines.append(line.replace("{attr}", attr))
        for k, v in (weights or {}).items():
            self.weights[f"{attr}.{k}"] = np.ascontiguousarray(np.asarray(v, dtype=np.float32))
        return attr, True

    def constant(self, hint: str, value: np.ndarray, trainable: bool = False) -> str:
        """A tensor stored in the checkpoint: a frozen Parameter (a constant too big to write inline), or a
        trainable one (a layer weight used directly in construct())."""
        value = np.asarray(value, dtype=np.float32)
        attr = self.unique(hint, attr=True)
        self.init_lines.append(
            f"self.{attr} = ms.Parameter(ms.Tensor(np.zeros({tuple(value.shape)}, np.float32)), "
            f"name='{attr}'" + (")" if trainable else ", requires_grad=False)"))
        self.weights[attr] = np.ascontiguousarray(value)
        return f"self.{attr}"

    # -- construct lines ------------------------------------------------------------------------------------------
    def assign(self, hint: str, expr: str, shape, layout: str = "cl", flat_from=None) -> Sym:
        var = self.unique(hint)
        self.body.append(f"{var} = {expr}")
        return Sym(var, tuple(shape), layout, flat_from)

    def row(self, layer, became: str, note: str = "") -> None:
        self.rows.append(LayerRow(layer.name, type(layer).__name__, became, note))

    # -- layouts -------------------------------------------------------------------------------------------------
    def to(self, s: Sym, layout: str) -> Sym:
        """``s`` in ``layout`` ("cl" or "cf"), transposing (once, cached) when needed."""
        if s.layout == layout or (s.rank <= 2 and {s.layout, layout} <= {"cl", "cf"}):
            return s
        if layout in s.converted:
            return s.converted[layout]
        if s.layout == "flat":
            if layout != "cl":
                raise KerasConversionError(f"cannot give {s.var} layout {layout}")
            h = s.flat_from
            ms_pre = (-1, h[-1]) + tuple(h[:-1])
            expr = (f"ops.reshape(ops.transpose(ops.reshape({s.var}, {ms_pre}), {_cl_perm(len(h) + 1)}), "
                    f"(-1, {int(np.prod(h))}))")
            out = self.assign(s.var + "_keras_order", expr, s.shape, "cl")
        elif layout == "cf":
            out = self.assign(s.var + "_cf", f"ops.transpose({s.var}, {_cf_perm(s.rank)})", s.shape, "cf")
        else:
            out = self.assign(s.var + "_cl", f"ops.transpose({s.var}, {_cl_perm(s.rank)})", s.shape, "cl")
        s.converted[layout] = out
        return out

    def spatial(self, s: Sym) -> Sym:
        """Conv/pool/BN inputs: channels-first."""
        if s.rank < 3:
            raise KerasConversionError(f"expected a spatial tensor, got shape {s.shape}")
        return self.to(s, "cf")


def ms_axis(axis: int, rank: int, layout: str) -> int:
    """A Keras axis as the axis of the MindSpore tensor in ``layout``."""
    a = axis % rank
    if layout != "cf" or a == 0:
        return a
    return 1 if a == rank - 1 else a + 1


def const_for(value, rank: int, layout: str) -> np.ndarray:
    """A numpy constant that broadcasts against a Keras tensor of ``rank``, re-laid out for ``layout``."""
    v = np.asarray(value, dtype=np.float32)
    if layout != "cf" or v.ndim == 0:
        return v
    v = v.reshape((1,) * (rank - v.ndim) + v.shape)
    return np.transpose(v, _cf_perm(rank))


# ---------------------------------------------------------------------------------------------------------------
# activations
# ---------------------------------------------------------------------------------------------------------------
def _act_name(fn) -> str:
    if fn is None:
        return "linear"
    if isinstance(fn, str):
        return fn
    return getattr(fn, "__name__", type(fn).__name__)


_ACT = {
    "linear": "{x}",
    "relu": "ops.relu({x})",
    "relu6": "ops.relu6({x})",
    "sigmoid": "ops.sigmoid({x})",
    "tanh": "ops.tanh({x})",
    "swish": "ops.silu({x})",
    "silu": "ops.silu({x})",
    "hard_swish": "ops.hardswish({x})",
    "hard_silu": "ops.hardswish({x})",
    "hard_sigmoid": "ops.hardsigmoid({x})",
    "gelu": "ops.gelu({x}, approximate='none')",
    "elu": "ops.elu({x})",
    "selu": "ops.selu({x})",
    "softplus": "ops.softplus({x})",
    "softsign": "ops.softsign({x})",
    "mish": "ops.mish({x})",
    "exponential": "ops.exp({x})",
    "leaky_relu": "ops.leaky_relu({x}, 0.2)",
    "softmax": "ops.softmax({x}, axis={axis})",
    "log_softmax": "ops.log_softmax({x}, axis={axis})",
}


def act_expr(name: str, x: Sym) -> str:
    if name not in _ACT:
        raise KerasConversionError(f"activation {name!r} has no MindSpore mapping yet")
    if name == "softmax":
        return softmax_expr(x, -1)
    return _ACT[name].format(x=x.var, axis=ms_axis(-1, x.rank, x.layout))


def softmax_expr(x: Sym, axis: int) -> str:
    """ops.softmax over Keras axis `axis`; over an axis of length 1 (`Dense(1, activation="softmax")`) its value
    there, 1, and zero gradient as exp(x - x): MindSpore 2.10 reuses the gradient it builds for the first
    ops.softmax of a rank, and built over a length-1 axis it is wrong for every later input of that rank."""
    if x.shape and x.shape[axis] == 1:
        return f"ops.exp({x.var} - {x.var})"
    return f"ops.softmax({x.var}, axis={ms_axis(axis, x.rank, x.layout)})"


def apply_act(ctx: Ctx, layer, y: Sym, fn) -> Tuple[Sym, str]:
    name = _act_name(fn)
    if name == "linear":
        return y, ""
    return ctx.assign(y.var + "_" + name, act_expr(name, y), y.shape, y.layout, y.flat_from), f" + {name}"


# ---------------------------------------------------------------------------------------------------------------
# layer handlers: handler(ctx, layer, node, args, kwargs) -> Sym | list of Sym
# ---------------------------------------------------------------------------------------------------------------
HANDLERS: Dict[str, Any] = {}


handles = name_registry(HANDLERS, "Keras layer handler")   # @handles("Dense", ...): raises on a duplicate


def _first(args):
    x = args[0]
    if isinstance(x, (list, tuple)):
        x = x[0]
    return x


def _out_shape(node, i=0):
    return tuple(node.outputs[i].shape)


def _check_channels_last(layer):
    fmt = getattr(layer, "data_format", "channels_last")
    if fmt not in (None, "channels_last"):
        raise KerasConversionError(f"{layer.name}: data_format={fmt!r} layers are not supported yet "
                                   "(only channels_last models)")


def _channelwise_input(ctx, args) -> Sym:
    """The input of a layer with per-channel constants: a flattened (NCHW-order) tensor back in Keras order."""
    x = _first(args)
    return ctx.to(x, "cl") if x.layout == "flat" else x


def _spatial_input(ctx, layer, args) -> Sym:
    """The input of a channels_last spatial layer (pooling, padding...), channels-first."""
    _check_channels_last(layer)
    return ctx.spatial(_first(args))


def _output(ctx, layer, node, expr: str, layout: str, became: str, note: str = "", flat_from=None) -> Sym:
    """The layer's output ``NAME = expr`` in construct(), and its report row (``became``, ``note``)."""
    y = ctx.assign(layer.name, expr, _out_shape(node), layout, flat_from)
    ctx.row(layer, became, note)
    return y


def _cell_output(ctx, layer, node, x: Sym, code: str, layout: str, note: str, weights=None, activation=None,
                 variant: str = "", extra_init: Sequence[str] = ()) -> Sym:
    """The layer as the cell ``self.ATTR = code`` (holding ``weights``) applied to ``x``, then its activation;
    the report row shows ``code`` and the activation."""
    attr, _ = ctx.cell(layer, code, weights, variant=variant, extra_init=extra_init)
    y = ctx.assign(layer.name, f"self.{attr}({x.var})", _out_shape(node), layout)
    y, act = apply_act(ctx, layer, y, activation)
    ctx.row(layer, code + act, note)
    return y


# the image augmentation layers return their input unchanged at inference (each checked against Keras 3 by
# tests/test_keras.py::test_augmentation_layers_are_identity_at_inference); not AutoContrast and Equalization,
# which change every image
_AUGMENTATIONS = ("RandomFlip", "RandomRotation", "RandomZoom", "RandomTranslation", "RandomContrast",
                  "RandomBrightness", "RandomHue", "RandomSaturation", "RandomSharpness", "RandomShear",
                  "RandomGrayscale", "RandomColorJitter", "RandomErasing", "RandomGaussianBlur", "RandomPerspective",
                  "RandomPosterization", "RandomInvert", "RandomElasticTransform", "RandomColorDegeneration",
                  "Solarization", "MixUp", "CutMix", "AugMix", "RandAugment")


@handles("Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianNoise", "GaussianDropout",
         "AlphaDropout", "ActivityRegularization", "StochasticDepth", "Identity", *_AUGMENTATIONS)
def _identity(ctx, layer, node, args, kwargs):
    x = _first(args)
    ctx.row(layer, "(nothing: identity at inference)", "training-time only layer; dropped")
    return x


@handles("InputLayer")
def _input_layer(ctx, layer, node, args, kwargs):
    return _first(args)


@handles("Activation")
def _activation(ctx, layer, node, args, kwargs):
    x = _first(args)
    name = _act_name(layer.activation)
    return _output(ctx, layer, node, act_expr(name, x), x.layout, act_expr(name, Sym("x", x.shape, x.layout)),
                   flat_from=x.flat_from)


@handles("ReLU")
def _relu(ctx, layer, node, args, kwargs):
    x = _first(args)
    expr = _relu_template(layer)
    return _output(ctx, layer, node, expr.format(x=x.var), x.layout, expr.format(x="x"), flat_from=x.flat_from)


def _relu_template(layer) -> str:
    """Keras ReLU(max_value, negative_slope, threshold) as an expression template on {x}."""
    mx = None if layer.max_value is None else float(layer.max_value)
    slope, thr = float(layer.negative_slope), float(layer.threshold)
    if slope == 0 and thr == 0:
        expr = "ops.relu({x})" if mx is None else ("ops.relu6({x})" if mx == 6.0 else f"ops.clamp({{x}}, 0.0, {mx})")
    else:
        expr = f"ops.where({{x}} >= {thr}, {{x}}, {slope} * ({{x}} - {thr}))"
        if mx is not None:
            expr = f"ops.clamp({expr}, None, {mx})"
    return expr


@handles("LeakyReLU")
def _leaky(ctx, layer, node, args, kwargs):
    x = _first(args)
    a = float(getattr(layer, "negative_slope", getattr(layer, "alpha", 0.3)))
    return _output(ctx, layer, node, f"ops.leaky_relu({x.var}, {a})", x.layout, f"ops.leaky_relu(x, {a})",
                   flat_from=x.flat_from)


@handles("ELU")
def _elu(ctx, layer, node, args, kwargs):
    x = _first(args)
    a = float(layer.alpha)
    return _output(ctx, layer, node, f"ops.elu({x.var}, {a})", x.layout, f"ops.elu(x, {a})", flat_from=x.flat_from)


@handles("Softmax")
def _softmax(ctx, layer, node, args, kwargs):
    x = _first(args)
    if len(args) > 1 or kwargs.get("mask") is not None:
        raise KerasConversionError(f"{layer.name}: Softmax with a mask is not supported")
    axes = layer.axis if isinstance(layer.axis, (list, tuple)) else [layer.axis]
    if len(axes) != 1:
        raise KerasConversionError(f"{layer.name}: Softmax over several axes is not supported")
    if x.layout == "flat":
        x = ctx.to(x, "cl")
    ax = ms_axis(axes[0], x.rank, x.layout)
    return _output(ctx, layer, node, softmax_expr(x, axes[0]), x.layout, softmax_expr(Sym("x", x.shape, x.layout),
                                                                                        axes[0]),
                   "axis translated to channels-first" if x.layout == "cf" else "")


@handles("PReLU")
def _prelu(ctx, layer, node, args, kwargs):
    x = _channelwise_input(ctx, args)
    alpha = np.asarray(layer.alpha)
    a = ctx.constant(layer.name + "_alpha", const_for(alpha, x.rank, x.layout), trainable=True)
    return _output(ctx, layer, node, f"ops.where({x.var} >= 0, {x.var}, {a} * {x.var})", x.layout,
                   "ops.where(x >= 0, x, alpha * x)", "alpha is a trainable Parameter, laid out like x")


def _conv_common(layer, rank):
    _check_channels_last(layer)
    k = _pair(layer.kernel_size, rank)
    s = _pair(layer.strides, rank)
    d = _pair(layer.dilation_rate, rank)
    pad = layer.padding
    if pad == "causal" and type(layer).__name__ != "Conv1D":
        raise KerasConversionError(f"{layer.name}: padding='causal' is not supported yet")
    return k, s, d, pad


def _shape_tuple(t):
    return t[0] if len(t) == 1 else t


@handles("Conv1D", "Conv2D", "Conv3D")
def _conv(ctx, layer, node, args, kwargs):
    rank = _spatial_rank(layer)
    x = ctx.spatial(_first(args))
    k, s, d, pad = _conv_common(layer, rank)
    kernel = np.asarray(layer.kernel)  # (*k, in/groups, out)
    cin, cout = int(x.shape[-1]), int(layer.filters)
    groups = int(getattr(layer, "groups", 1))
    w = np.transpose(kernel, (rank + 1, rank) + tuple(range(rank)))  # -> (out, in/groups, *k)
    if rank == 1:
        w = w[:, :, None, :]  # classic MindSpore Conv1d keeps a (out, in, 1, k) weight
    weights = {"weight": w}
    if layer.use_bias:
        weights["bias"] = np.asarray(layer.bias)
    notes = ["kernel " + {1: "WIO -> OIW", 2: "HWIO -> OIHW", 3: "DHWIO -> OIDHW"}[rank]]
    if pad == "causal":     # Keras: zeros before the sequence, d * (k - 1) of them, then a 'valid' convolution
        ctx.helpers.add("zero_pad")
        x = ctx.assign(layer.name + "_causal", f"zero_pad({x.var}, ({d[0] * (k[0] - 1)}, 0))",
                       x.shape[:1] + (None if x.shape[1] is None else x.shape[1] + d[0] * (k[0] - 1),) + x.shape[2:],
                       "cf")
        pad = "valid"
        notes.append(f"padding='causal': {d[0] * (k[0] - 1)} zeros concatenated before the sequence, then 'valid'")
    elif pad == "same":
        notes.append("TF 'same' padding = MindSpore pad_mode='same'")
    code = (f"nn.Conv{rank}d({cin}, {cout}, kernel_size={_shape_tuple(k)}, stride={_shape_tuple(s)}, pad_mode='{pad}'"
            + (f", dilation={_shape_tuple(d)}" if any(v != 1 for v in d) else "")
            + (f", group={groups}" if groups != 1 else "") + f", has_bias={bool(layer.use_bias)})")
    return _cell_output(ctx, layer, node, x, code, "cf", "; ".join(notes), weights, layer.activation)


@handles("DepthwiseConv2D")
def _dwconv(ctx, layer, node, args, kwargs):
    x = ctx.spatial(_first(args))
    k, s, d, pad = _conv_common(layer, 2)
    kernel = np.asarray(layer.kernel)  # (kh, kw, in, mult)
    cin, mult = kernel.shape[2], kernel.shape[3]
    # Keras output channel c*mult + m uses kernel[:, :, c, m]
    w = kernel.reshape(k[0], k[1], cin * mult).transpose(2, 0, 1)[:, None]
    weights = {"weight": w}
    if layer.use_bias:
        weights["bias"] = np.asarray(layer.bias)
    code = (f"nn.Conv2d({cin}, {cin * mult}, kernel_size={k}, stride={s}, pad_mode='{pad}'"
            + (f", dilation={d}" if any(v != 1 for v in d) else "")
            + f", group={cin}, has_bias={bool(layer.use_bias)})")
    return _cell_output(ctx, layer, node, x, code, "cf", "depthwise kernel (kh,kw,in,mult) -> (in*mult,1,kh,kw)",
                        weights, layer.activation)


@handles("SeparableConv2D")
def _sepconv(ctx, layer, node, args, kwargs):
    x = ctx.spatial(_first(args))
    k, s, d, pad = _conv_common(layer, 2)
    dk = np.asarray(layer.depthwise_kernel)  # (kh, kw, in, mult)
    pk = np.asarray(layer.pointwise_kernel)  # (1, 1, in*mult, out)
    cin, mult, cout = dk.shape[2], dk.shape[3], pk.shape[3]
    dw = dk.reshape(k[0], k[1], cin * mult).transpose(2, 0, 1)[:, None]
    pw = np.transpose(pk, (3, 2, 0, 1))
    code_d = (f"nn.Conv2d({cin}, {cin * mult}, kernel_size={k}, stride={s}, pad_mode='{pad}'"
              + (f", dilation={d}" if any(v != 1 for v in d) else "") + f", group={cin}, has_bias=False)")
    code_p = f"nn.Conv2d({cin * mult}, {cout}, kernel_size=1, pad_mode='valid', has_bias={bool(layer.use_bias)})"
    a1, _ = ctx.cell(layer, code_d, {"weight": dw}, variant="depthwise")
    pw_w = {"weight": pw}
    if layer.use_bias:
        pw_w["bias"] = np.asarray(layer.bias)
    a2, _ = ctx.cell(layer, code_p, pw_w, variant="pointwise")
    y = ctx.assign(layer.name, f"self.{a2}(self.{a1}({x.var}))", _out_shape(node), "cf")
    y, act = apply_act(ctx, layer, y, layer.activation)
    ctx.row(layer, f"{code_d} then {code_p}{act}", "split into depthwise + pointwise convs")
    return y


@handles("Conv2DTranspose")
def _convt(ctx, layer, node, args, kwargs):
    x = ctx.spatial(_first(args))
    k, s, d, pad = _conv_common(layer, 2)
    if any(v != 1 for v in d) or getattr(layer, "output_padding", None) is not None:
        raise KerasConversionError(f"{layer.name}: Conv2DTranspose with dilation/output_padding is not supported")
    kernel = np.asarray(layer.kernel)  # (kh, kw, out, in)
    cin, cout = kernel.shape[3], kernel.shape[2]
    w = np.transpose(kernel, (3, 2, 0, 1))  # MindSpore Conv2dTranspose weight: (in, out, kh, kw)
    weights = {"weight": w}
    if layer.use_bias:
        weights["bias"] = np.asarray(layer.bias)
    code = (f"nn.Conv2dTranspose({cin}, {cout}, kernel_size={k}, stride={s}, pad_mode='{pad}', "
            f"has_bias={bool(layer.use_bias)})")
    return _cell_output(ctx, layer, node, x, code, "cf", "kernel (kh,kw,out,in) -> (in,out,kh,kw)", weights,
                        layer.activation)


@handles("Dense")
def _dense(ctx, layer, node, args, kwargs):
    x = _first(args)
    kernel = np.asarray(layer.kernel)  # (in, out)
    cin, cout = kernel.shape
    weights = {}
    note = "kernel (in,out) -> (out,in)"
    if x.layout == "flat":
        # rows of the kernel follow Keras' (H, W, C) flatten order; the converted tensor is flattened as (C, H, W)
        h = x.flat_from
        perm = np.arange(cin).reshape(h).transpose((len(h) - 1,) + tuple(range(len(h) - 1))).ravel()
        kernel = kernel[perm]
        note += "; rows permuted from NHWC to NCHW flatten order (no transpose at run time)"
    if x.layout == "cf" and x.rank in (3, 4):
        # a Dense on the channels axis of a spatial tensor is a 1x1 convolution in channels-first layout
        rank = x.rank - 2
        w = kernel.T.reshape((cout, cin) + (1,) * rank)
        if rank == 1:
            w = w[:, :, None, :]
        weights["weight"] = w
        if layer.use_bias:
            weights["bias"] = np.asarray(layer.bias)
        cls = "nn.Conv2d" if rank == 2 else "nn.Conv1d"
        code = f"{cls}({cin}, {cout}, kernel_size=1, pad_mode='valid', has_bias={bool(layer.use_bias)})"
        note = "Dense over the channels of a spatial tensor = 1x1 convolution (channels-first)"
        layout = "cf"
    else:
        if x.layout == "cf":
            x = ctx.to(x, "cl")
        weights["weight"] = kernel.T
        if layer.use_bias:
            weights["bias"] = np.asarray(layer.bias)
        code = f"nn.Dense({cin}, {cout}, has_bias={bool(layer.use_bias)})"
        layout = "cl"
    return _cell_output(ctx, layer, node, x, code, layout, note, weights, layer.activation,
                        variant="" if layout == "cl" else "conv")


@handles("BatchNormalization")
def _bn(ctx, layer, node, args, kwargs):
    x = _first(args)
    axis = layer.axis if isinstance(layer.axis, int) else (layer.axis[0] if len(layer.axis) == 1 else None)
    if axis is None or axis % x.rank != x.rank - 1:
        raise KerasConversionError(f"{layer.name}: BatchNormalization over axis {layer.axis} is not supported "
                                   "(only the channels axis)")
    if x.rank == 4:
        x, cls = ctx.spatial(x), "nn.BatchNorm2d"
    elif x.rank == 2:
        x, cls = ctx.to(x, "cl"), "nn.BatchNorm1d"
    elif x.rank == 5:
        x, cls = ctx.spatial(x), "nn.BatchNorm3d"
    else:
        raise KerasConversionError(f"{layer.name}: BatchNormalization on a rank-{x.rank} tensor is not supported")
    c = int(x.shape[-1])
    mom, eps = float(layer.momentum), float(layer.epsilon)
    gamma = np.asarray(layer.gamma) if layer.scale else np.ones(c, np.float32)
    beta = np.asarray(layer.beta) if layer.center else np.zeros(c, np.float32)
    prefix = "bn2d." if cls == "nn.BatchNorm3d" else ""
    weights = {prefix + "gamma": gamma, prefix + "beta": beta, prefix + "moving_mean": np.asarray(layer.moving_mean),
               prefix + "moving_variance": np.asarray(layer.moving_variance)}
    extra = []
    notes = [f"eps={eps:g}, momentum={mom:g} kept (MindSpore's momentum has Keras' convention); in training "
             "MindSpore updates moving_variance with the unbiased batch variance (Keras: biased, x(n-1)/n)"]
    if not layer.scale:
        extra.append(f"self.{{attr}}.{prefix}gamma.requires_grad = False  # Keras scale=False: gamma fixed at 1")
        notes.append("scale=False: gamma frozen at 1")
    if not layer.center:
        extra.append(f"self.{{attr}}.{prefix}beta.requires_grad = False  # Keras center=False: beta fixed at 0")
        notes.append("center=False: beta frozen at 0")
    code = f"{cls}({c}, eps={eps!r}, momentum={mom!r})"
    return _cell_output(ctx, layer, node, x, code, x.layout, "; ".join(notes), weights, extra_init=extra)


@handles("LayerNormalization")
def _ln(ctx, layer, node, args, kwargs):
    x = _first(args)
    axes = layer.axis if isinstance(layer.axis, (list, tuple)) else [layer.axis]
    if [a % x.rank for a in axes] != [x.rank - 1]:
        raise KerasConversionError(f"{layer.name}: LayerNormalization over axes {axes} is not supported "
                                   "(only the last axis)")
    if getattr(layer, "rms_scaling", False):
        raise KerasConversionError(f"{layer.name}: LayerNormalization(rms_scaling=True) is not supported")
    c, eps = int(x.shape[-1]), float(layer.epsilon)
    gamma = np.asarray(layer.gamma) if layer.scale else np.ones(c, np.float32)
    beta = np.asarray(layer.beta) if layer.center else np.zeros(c, np.float32)
    if x.layout == "cf" and x.rank >= 3:
        ctx.helpers.add("ChannelsFirstLayerNorm")
        code = f"ChannelsFirstLayerNorm({c}, eps={eps!r})"
        note = "normalises the channels axis (axis 1) of the channels-first tensor"
    else:
        x = ctx.to(x, "cl")
        code = f"nn.LayerNorm(({c},), begin_norm_axis=-1, begin_params_axis=-1, epsilon={eps!r})"
        note = f"epsilon={eps:g} from Keras (MindSpore default 1e-7)"
    return _cell_output(ctx, layer, node, x, code, x.layout, note, {"gamma": gamma, "beta": beta},
                        variant="" if x.layout == "cl" else "cf")


def _pool(ctx, layer, node, args, kind):
    x = _spatial_input(ctx, layer, args)
    rank = x.rank - 2
    k = _pair(layer.pool_size, rank)
    s = _pair(layer.strides if layer.strides is not None else layer.pool_size, rank)
    if rank == 1:
        k, s = k[0], s[0]
    pad = layer.padding
    cls = f"nn.{'Max' if kind == 'max' else 'Avg'}Pool{rank}d"
    code = f"{cls}(kernel_size={k}, stride={s}, pad_mode='{pad}')"
    note = ""
    if pad == "same":
        note = ("TF 'same' padding = MindSpore pad_mode='same' (asymmetric pad, "
                + ("padding never wins the max)" if kind == "max" else "padded cells not counted in the mean)"))
    return _cell_output(ctx, layer, node, x, code, "cf", note)


@handles("MaxPooling1D", "MaxPooling2D", "MaxPooling3D")
def _maxpool(ctx, layer, node, args, kwargs):
    return _pool(ctx, layer, node, args, "max")


@handles("AveragePooling1D", "AveragePooling2D", "AveragePooling3D")
def _avgpool(ctx, layer, node, args, kwargs):
    return _pool(ctx, layer, node, args, "avg")


def _global_pool(ctx, layer, node, args, kind):
    x = _spatial_input(ctx, layer, args)
    axes = tuple(range(2, x.rank))
    keep = bool(getattr(layer, "keepdims", False))
    if kind == "avg":
        expr = f"ops.mean({x.var}, {axes}, keep_dims={keep})"
    else:
        expr = f"ops.amax({x.var}, {axes}, keepdims={keep})"
    return _output(ctx, layer, node, expr, "cf" if keep else "cl", expr.replace(x.var, "x", 1),
                   "keepdims output stays channels-first (N, C, 1, 1)" if keep else "")


@handles("GlobalAveragePooling2D", "GlobalAveragePooling1D", "GlobalAveragePooling3D")
def _gap(ctx, layer, node, args, kwargs):
    return _global_pool(ctx, layer, node, args, "avg")


@handles("GlobalMaxPooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling3D")
def _gmp(ctx, layer, node, args, kwargs):
    return _global_pool(ctx, layer, node, args, "max")


def _spatial_pairs(value, n: int):
    """Keras' padding/cropping of an n-D spatial layer as n (before, after) pairs, first spatial axis first: an int,
    n ints (symmetric per axis), or n pairs."""
    if isinstance(value, int):
        return [(value, value)] * n
    value = list(value)
    if n == 1 and len(value) == 2 and all(isinstance(v, int) for v in value):
        return [tuple(int(v) for v in value)]
    return [(int(v), int(v)) if isinstance(v, int) else tuple(int(w) for w in v) for v in value]


def _spatial_rank(layer) -> int:
    return int(type(layer).__name__[-2])     # ZeroPadding3D -> 3


@handles("ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D")
def _zpad(ctx, layer, node, args, kwargs):
    x = _spatial_input(ctx, layer, args)
    pairs = _spatial_pairs(layer.padding, _spatial_rank(layer))
    pad = tuple(v for pair in reversed(pairs) for v in pair)    # last axis first, as torch's F.pad
    # zeros concatenated (zero_pad), not MindSpore's pad kernel: its gradient inside a compiled train step (GRAPH
    # mode, CPU, 2.10) goes wrong from the step's second run on, then is zero for the layers before it
    ctx.helpers.add("zero_pad")
    expr = f"zero_pad({x.var}, {pad})"
    return _output(ctx, layer, node, expr, "cf", f"zero_pad(x, {pad})",
                   "(before, after) per spatial axis, last axis first; zeros concatenated")


@handles("Cropping1D", "Cropping2D", "Cropping3D")
def _crop(ctx, layer, node, args, kwargs):
    x = _spatial_input(ctx, layer, args)
    pairs = _spatial_pairs(layer.cropping, _spatial_rank(layer))
    sizes = x.shape[1:-1]       # the built (channels-last) input's spatial sizes
    window = "[:, :, " + ", ".join(f"{a}:{int(n) - b}" for (a, b), n in zip(pairs, sizes)) + "]"
    return _output(ctx, layer, node, x.var + window, "cf", "x" + window, "static crop from the built input shape")


@handles("UpSampling1D", "UpSampling2D", "UpSampling3D")
def _upsample(ctx, layer, node, args, kwargs):
    x = _spatial_input(ctx, layer, args)
    if getattr(layer, "interpolation", "nearest") != "nearest":
        raise KerasConversionError(f"{layer.name}: UpSampling2D(interpolation={layer.interpolation!r}) "
                                   "is not supported yet (nearest only)")
    n = _spatial_rank(layer)
    sizes = (int(layer.size),) if n == 1 else tuple(int(v) for v in layer.size)
    expr = x.var
    for axis, k in enumerate(sizes, start=2):
        if k != 1:
            expr = f"ops.repeat_elements({expr}, {k}, {axis})"
    return _output(ctx, layer, node, expr, "cf", f"ops.repeat_elements(..., {sizes})", "nearest upsampling as repeats")


@handles("Flatten")
def _flatten(ctx, layer, node, args, kwargs):
    x = _first(args)
    out = _out_shape(node)
    if x.layout == "cf" and x.rank >= 3:
        spatial = x.shape[1:-1]
        if int(np.prod(spatial)) == 1:
            y = ctx.assign(layer.name, f"ops.reshape({x.var}, (-1, {out[-1]}))", out, "cl")
            ctx.row(layer, "ops.reshape(x, (N, -1))", "1x1 spatial: same order in NCHW and NHWC")
            return y
        y = ctx.assign(layer.name, f"ops.reshape({x.var}, (-1, {out[-1]}))", out, "flat",
                       flat_from=tuple(int(v) for v in x.shape[1:]))
        ctx.row(layer, "ops.reshape(x, (N, -1))",
                "flattens in NCHW order; a following Dense gets its kernel rows permuted to match")
        return y
    if x.layout == "flat":
        return x
    y = ctx.assign(layer.name, f"ops.reshape({x.var}, (-1, {out[-1]}))", out, "cl")
    ctx.row(layer, "ops.reshape(x, (N, -1))")
    return y


@handles("Reshape")
def _reshape(ctx, layer, node, args, kwargs):
    x = _first(args)
    out = _out_shape(node)
    target = tuple(int(v) for v in out[1:])
    if len(out) >= 3 and int(np.prod(target[:-1])) == 1 and x.rank == 2:
        # (N, C) -> (N, 1, 1, C): directly the channels-first (N, C, 1, 1), no transpose
        ms_t = (-1, target[-1]) + target[:-1]
        y = ctx.assign(layer.name, f"ops.reshape({ctx.to(x, 'cl').var}, {ms_t})", out, "cf")
        ctx.row(layer, f"ops.reshape(x, {ms_t})", "reshaped straight to channels-first (spatial dims are 1)")
        return y
    x = ctx.to(x, "cl")
    y = ctx.assign(layer.name, f"ops.reshape({x.var}, {(-1,) + target})", out, "cl")
    ctx.row(layer, f"ops.reshape(x, {(-1,) + target})", "in Keras (channels-last) order")
    return y


@handles("Permute")
def _permute(ctx, layer, node, args, kwargs):
    x = ctx.to(_first(args), "cl")
    perm = (0,) + tuple(int(d) for d in layer.dims)
    return _output(ctx, layer, node, f"ops.transpose({x.var}, {perm})", "cl", f"ops.transpose(x, {perm})",
                   "in Keras (channels-last) order")


@handles("Rescaling")
def _rescaling(ctx, layer, node, args, kwargs):
    x = _channelwise_input(ctx, args)
    parts = []
    for what, v in (("scale", layer.scale), ("offset", layer.offset)):
        a = np.asarray(v, dtype=np.float32)
        parts.append(repr(float(a)) if a.ndim == 0
                     else ctx.constant(f"{layer.name}_{what}", const_for(a, x.rank, x.layout)))
    expr = x.var + ("" if parts[0] == "1.0" else f" * {parts[0]}") + ("" if parts[1] == "0.0" else f" + {parts[1]}")
    return _output(ctx, layer, node, expr, x.layout, expr.replace(x.var, "x", 1), flat_from=x.flat_from)


@handles("Normalization")
def _normalization(ctx, layer, node, args, kwargs):
    x = _channelwise_input(ctx, args)
    mean = np.asarray(layer.mean, dtype=np.float32)
    std = np.maximum(np.sqrt(np.asarray(layer.variance, dtype=np.float32)), 1e-7)  # keras.backend.epsilon()
    mean = mean.reshape(mean.shape[-(x.rank - 1):]) if mean.ndim >= x.rank else mean
    std = std.reshape(std.shape[-(x.rank - 1):]) if std.ndim >= x.rank else std
    m = ctx.constant(layer.name + "_mean", const_for(mean, x.rank, x.layout))
    sd = ctx.constant(layer.name + "_std", const_for(std, x.rank, x.layout))
    if getattr(layer, "invert", False):
        expr = f"{x.var} * {sd} + {m}"
    else:
        expr = f"({x.var} - {m}) / {sd}"
    return _output(ctx, layer, node, expr, x.layout, expr.replace(x.var, "x"),
                   "mean and max(sqrt(variance), 1e-7) stored as frozen Parameters")


@handles("LayerScale")
def _layerscale(ctx, layer, node, args, kwargs):
    x = _channelwise_input(ctx, args)
    g = const_for(np.asarray(layer.gamma, dtype=np.float32), x.rank, x.layout)
    gamma = ctx.constant(layer.name + "_gamma", g, trainable=True)
    return _output(ctx, layer, node, f"{x.var} * {gamma}", x.layout, f"x * {gamma}",
                   "per-channel scale (trainable Parameter)")


@handles("Embedding")
def _embedding(ctx, layer, node, args, kwargs):
    x = _first(args)
    if getattr(layer, "mask_zero", False):
        raise KerasConversionError(f"{layer.name}: Embedding(mask_zero=True) (masking) is not supported yet")
    table = np.asarray(layer.embeddings)
    code = f"nn.Embedding({table.shape[0]}, {table.shape[1]})"
    return _cell_output(ctx, layer, node, x, code, "cl", "integer ids (int32) in; table copied as embedding_table",
                        {"embedding_table": table})


def _rnn_weights(layer, kind: str, suffix: str = "") -> Dict[str, np.ndarray]:
    """Keras cell weights as MindSpore nn.LSTM/GRU/RNN parameters (torch-style names and gate order)."""
    cell = layer.cell
    k, rk = np.asarray(cell.kernel), np.asarray(cell.recurrent_kernel)
    u = rk.shape[0]
    w_ih, w_hh = k.T, rk.T
    b = np.asarray(cell.bias) if cell.use_bias else None
    if b is not None and b.ndim == 2:  # GRU reset_after: (input bias, recurrent bias)
        b_ih, b_hh = b[0], b[1]
    elif b is not None:
        b_ih, b_hh = b, np.zeros_like(b)
    if kind == "GRU":
        # Keras gates (z, r, h); MindSpore/torch gates (r, z, n)
        order = np.concatenate([np.arange(u, 2 * u), np.arange(0, u), np.arange(2 * u, 3 * u)])
        w_ih, w_hh = w_ih[order], w_hh[order]
        if b is not None:
            b_ih, b_hh = b_ih[order], b_hh[order]
    out = {f"weight_ih_l0{suffix}": w_ih, f"weight_hh_l0{suffix}": w_hh}
    if b is not None:
        out[f"bias_ih_l0{suffix}"] = b_ih
        out[f"bias_hh_l0{suffix}"] = b_hh
    return out


def _rnn_check(layer, kind, backward: bool = False):
    cell = layer.cell
    if getattr(layer, "go_backwards", False) != backward or getattr(layer, "stateful", False):
        raise KerasConversionError(f"{layer.name}: go_backwards/stateful recurrent layers are not supported")
    act = _act_name(cell.activation)
    if kind != "SimpleRNN" and (act != "tanh" or _act_name(cell.recurrent_activation) != "sigmoid"):
        raise KerasConversionError(f"{layer.name}: {kind} with activation={act}, recurrent_activation="
                                   f"{_act_name(cell.recurrent_activation)} (MindSpore: tanh/sigmoid only)")
    if kind == "SimpleRNN" and act not in ("tanh", "relu"):
        raise KerasConversionError(f"{layer.name}: SimpleRNN(activation={act}) (MindSpore: tanh/relu only)")
    if kind == "GRU" and not cell.reset_after:
        raise KerasConversionError(f"{layer.name}: GRU(reset_after=False) has no MindSpore equivalent "
                                   "(nn.GRU applies the reset gate after the recurrent matmul, as reset_after=True)")


@handles("LSTM", "GRU", "SimpleRNN", "Bidirectional")
def _rnn(ctx, layer, node, args, kwargs):
    if kwargs.get("mask") is not None or kwargs.get("initial_state") is not None or len(args) > 1:
        raise KerasConversionError(f"{layer.name}: masks and initial states are not supported yet")
    x = ctx.to(_first(args), "cl")
    bidir = type(layer).__name__ == "Bidirectional"
    fwd = layer.forward_layer if bidir else layer
    kind = type(fwd).__name__
    if kind not in ("LSTM", "GRU", "SimpleRNN"):
        raise KerasConversionError(f"{layer.name}: Bidirectional({kind}) is not supported")
    _rnn_check(fwd, kind)
    weights = _rnn_weights(fwd, kind)
    if bidir:
        if layer.merge_mode != "concat" or getattr(layer, "return_state", False):
            raise KerasConversionError(f"{layer.name}: Bidirectional(merge_mode={layer.merge_mode!r}) or "
                                       "return_state is not supported (concat only)")
        _rnn_check(layer.backward_layer, kind, backward=True)
        weights.update(_rnn_weights(layer.backward_layer, kind, "_reverse"))
    u = int(fwd.cell.units)
    cls = {"LSTM": "nn.LSTM", "GRU": "nn.GRU", "SimpleRNN": "nn.RNN"}[kind]
    extra = ", nonlinearity='relu'" if kind == "SimpleRNN" and _act_name(fwd.cell.activation) == "relu" else ""
    code = (f"{cls}({int(x.shape[-1])}, {u}, has_bias={bool(fwd.cell.use_bias)}, batch_first=True"
            + (", bidirectional=True" if bidir else "") + f"{extra})")
    attr, _ = ctx.cell(layer, code, weights)
    base = _pyname(layer.name)
    seq = ctx.unique(base + "_seq")
    state = ctx.unique(base + "_state")
    ctx.body.append(f"{seq}, {state} = self.{attr}({x.var})")
    ret_seq = bool(fwd.return_sequences)
    outs = []
    shape0 = _out_shape(node, 0)
    if ret_seq:
        outs.append(Sym(seq, shape0, "cl"))
    elif bidir:
        # forward direction's last step, backward direction's first step (it read the sequence reversed)
        outs.append(ctx.assign(layer.name, f"ops.concat(({seq}[:, -1, :{u}], {seq}[:, 0, {u}:]), axis=-1)",
                               shape0, "cl"))
    else:
        outs.append(ctx.assign(layer.name, f"{seq}[:, -1, :]", shape0, "cl"))
    if getattr(fwd, "return_state", False) and not bidir:
        if kind == "LSTM":
            outs.append(ctx.assign(layer.name + "_h", f"{state}[0][0]", _out_shape(node, 1), "cl"))
            outs.append(ctx.assign(layer.name + "_c", f"{state}[1][0]", _out_shape(node, 2), "cl"))
        else:
            outs.append(ctx.assign(layer.name + "_h", f"{state}[0]", _out_shape(node, 1), "cl"))
    note = "kernels transposed to (gates*units, in); zero recurrent bias" if kind != "GRU" else \
        "gates reordered Keras (z, r, h) -> MindSpore (r, z, n); input and recurrent biases kept (reset_after=True)"
    ctx.row(layer, code, note)
    return outs if len(outs) > 1 else outs[0]


def _merge_layout(ctx, xs: List[Sym]) -> List[Sym]:
    """Operands of an elementwise op in one common layout."""
    ranks = {x.rank for x in xs}
    layouts = {x.layout for x in xs}
    if layouts == {"flat"} and len({x.flat_from for x in xs}) == 1:
        return xs
    if len(ranks) == 1 and "cf" in layouts and min(ranks) >= 3:
        return [ctx.to(x, "cf") for x in xs]
    if len(ranks) == 1 and layouts <= {"cl", "cf"}:
        # rank <= 2: both layouts are the same order
        return [ctx.to(x, "cl") if x.layout == "flat" else x for x in xs]
    return [ctx.to(x, "cl") for x in xs]


_MERGE = {"Add": " + ", "Subtract": " - ", "Multiply": " * "}


@handles("Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum")
def _merge(ctx, layer, node, args, kwargs):
    xs = list(args[0]) if isinstance(args[0], (list, tuple)) else list(args)
    xs = _merge_layout(ctx, xs)
    cls = type(layer).__name__
    if cls in _MERGE:
        expr = _MERGE[cls].join(x.var for x in xs)
    elif cls == "Average":
        expr = f"({' + '.join(x.var for x in xs)}) / {len(xs)}"
    else:
        fn = "ops.maximum" if cls == "Maximum" else "ops.minimum"
        expr = xs[0].var
        for x in xs[1:]:
            expr = f"{fn}({expr}, {x.var})"
    lay = xs[0].layout
    flat_from = xs[0].flat_from
    if len({x.rank for x in xs}) > 1:
        lay, flat_from = "cl", None
    y = ctx.assign(layer.name, expr, _out_shape(node), lay, flat_from)
    shown = expr
    for i, x in enumerate(xs):
        shown = re.sub(rf"\b{re.escape(x.var)}\b", "abcdefghijklmnopqrstuvwxyz"[i % 26], shown)
    ctx.row(layer, shown, "broadcast in channels-first layout" if lay == "cf" else "")
    return y


@handles("Concatenate")
def _concat(ctx, layer, node, args, kwargs):
    xs = list(args[0]) if isinstance(args[0], (list, tuple)) else list(args)
    xs = _merge_layout(ctx, xs)
    if xs[0].layout == "flat":
        xs = [ctx.to(x, "cl") for x in xs]
    ax = ms_axis(layer.axis, xs[0].rank, xs[0].layout)
    expr = f"ops.concat(({', '.join(x.var for x in xs)},), axis={ax})"
    return _output(ctx, layer, node, expr, xs[0].layout, f"ops.concat(..., axis={ax})",
                   f"Keras axis {layer.axis} -> {ax} (channels-first)" if xs[0].layout == "cf" else "")


# Keras 3 operations recorded in a functional graph by writing ``x + 3.0``, ``x * y``... (keras.src.ops.numpy)
_OPS_BINARY = {"Add": "{a} + {b}", "Subtract": "{a} - {b}", "Multiply": "{a} * {b}", "TrueDivide": "{a} / {b}",
               "Divide": "{a} / {b}", "Maximum": "ops.maximum({a}, {b})", "Minimum": "ops.minimum({a}, {b})",
               "Power": "ops.pow({a}, {b})"}
_OPS_UNARY = {"Negative": "-{a}", "Sqrt": "ops.sqrt({a})", "Exp": "ops.exp({a})", "Abs": "ops.abs({a})",
              "Square": "ops.square({a})", "Relu": "ops.relu({a})", "Relu6": "ops.relu6({a})",
              "Sigmoid": "ops.sigmoid({a})", "Tanh": "ops.tanh({a})", "Silu": "ops.silu({a})",
              "HardSigmoid": "ops.hardsigmoid({a})", "HardSilu": "ops.hardswish({a})",
              "Gelu": "ops.gelu({a}, approximate='none')", "Softplus": "ops.softplus({a})",
              "Softsign": "ops.softsign({a})", "Selu": "ops.selu({a})", "Log": "ops.log({a})",
              "Mish": "ops.mish({a})"}


def _operand(ctx, op, v, like: Sym) -> str:
    if isinstance(v, Sym):
        return v.var
    a = np.asarray(v, dtype=np.float32)
    if a.ndim == 0:
        return repr(float(a))
    return ctx.constant(f"{op.name}_const", const_for(a, like.rank, like.layout))


def _keras_op(ctx, op, node, args, kwargs):
    cls = type(op).__name__
    out = _out_shape(node)
    if cls in _OPS_BINARY and len(args) == 2 and not kwargs:
        syms = [a for a in args if isinstance(a, Sym)]
        syms_m = _merge_layout(ctx, syms) if len(syms) > 1 else [
            ctx.to(syms[0], "cl") if syms[0].layout == "flat" else syms[0]]
        it = iter(syms_m)
        vals = [next(it) if isinstance(a, Sym) else a for a in args]
        like = syms_m[0]  # constant operands are re-laid out like it (const_for)
        a, b = (_operand(ctx, op, v, like) for v in vals)
        expr = _OPS_BINARY[cls].format(a=a, b=b)
        y = ctx.assign(op.name, expr, out, like.layout, like.flat_from)
        ctx.rows.append(LayerRow(op.name, f"keras.ops.{cls}", expr))
        return y
    if cls in _OPS_UNARY and len(args) == 1 and isinstance(args[0], Sym) and not kwargs:
        x = args[0]
        expr = _OPS_UNARY[cls].format(a=x.var)
        y = ctx.assign(op.name, expr, out, x.layout, x.flat_from)
        ctx.rows.append(LayerRow(op.name, f"keras.ops.{cls}", expr))
        return y
    x = args[0] if args else None
    if isinstance(x, Sym) and len(args) == 1 and not kwargs:
        if x.layout == "flat":
            x = ctx.to(x, "cl")
        expr = None
        if cls == "ReLU":  # keras.activations.relu(x, ...) called on a symbolic tensor
            expr = _relu_template(op).format(x=x.var)
        elif cls == "LeakyRelu":
            expr = f"ops.leaky_relu({x.var}, {float(op.negative_slope)})"
        elif cls in ("Softmax", "LogSoftmax") and isinstance(op.axis, int):
            expr = softmax_expr(x, op.axis) if cls == "Softmax" else \
                f"ops.log_softmax({x.var}, axis={ms_axis(op.axis, x.rank, x.layout)})"
        if expr is not None:
            y = ctx.assign(op.name, expr, out, x.layout)
            ctx.rows.append(LayerRow(op.name, f"keras.ops.{cls}", expr))
            return y
    if cls == "Concatenate" and len(args) == 1 and isinstance(args[0], (list, tuple)) and not kwargs:
        xs = _merge_layout(ctx, list(args[0]))
        if xs[0].layout == "flat":
            xs = [ctx.to(v, "cl") for v in xs]
        ax = ms_axis(op.axis, xs[0].rank, xs[0].layout)
        expr = f"ops.concat(({', '.join(v.var for v in xs)},), axis={ax})"
        y = ctx.assign(op.name, expr, out, xs[0].layout)
        ctx.rows.append(LayerRow(op.name, f"keras.ops.{cls}", f"ops.concat(..., axis={ax})"))
        return y
    raise KerasConversionError(f"Keras operation {cls} ({op.name}) in the model graph is not supported yet")


# ---------------------------------------------------------------------------------------------------------------
# graph walk
# ---------------------------------------------------------------------------------------------------------------
def _is_graph_model(keras, m) -> bool:
    from keras.src.models.functional import Functional

    return isinstance(m, (Functional, keras.Sequential))


def _trace_subclassed(keras, model):
    """A subclassed model: call it on symbolic inputs so its layers record a graph we can walk."""
    shapes = getattr(model, "_build_shapes_dict", None) or {}
    if len(shapes) != 1:
        raise KerasConversionError(
            f"{type(model).__name__} is a subclassed model that was never built with one input shape; build it "
            "(model.build(shape) or call it once) or write it as a functional/Sequential model")
    shape = tuple(list(shapes.values())[0])
    try:
        inp = keras.Input(shape=shape[1:], batch_size=shape[0])
        out = model.call(inp)
        return keras.Model(inp, out, name=model.name)
    except Exception as e:  # noqa: BLE001
        raise KerasConversionError(
            f"{type(model).__name__} is a subclassed model whose call() cannot be traced symbolically "
            f"({type(e).__name__}: {str(e)[:200]}); write it as a functional/Sequential model") from None


def _walk(ctx, keras, model, in_syms: List[Sym]) -> List[Sym]:
    if isinstance(model, keras.Sequential):
        fn = getattr(model, "_functional", None)
        if fn is None:
            x = in_syms[0]
            for layer in model.layers:
                x = _call(ctx, keras, layer, None, (x,), {})
            return [x]
        model = fn
    tensor_dict = {id(t): s for t, s in zip(model.inputs, in_syms)}
    for depth in sorted(model._nodes_by_depth, reverse=True):
        for node in model._nodes_by_depth[depth]:
            if not node.operation or node.is_input:
                continue
            if any(id(t) not in tensor_dict for t in node.input_tensors):
                continue
            args, kwargs = node.arguments.fill_in(tensor_dict)
            outs = _call(ctx, keras, node.operation, node, args, kwargs)
            outs = outs if isinstance(outs, (list, tuple)) else [outs]
            for t, s in zip(node.outputs, outs):
                tensor_dict[id(t)] = s
    return [tensor_dict[id(t)] for t in model.outputs]


class _FakeNode:
    def __init__(self, outputs):
        self.outputs = outputs


def _call(ctx, keras, op, node, args, kwargs):
    if isinstance(op, keras.Model):
        syms = [a for a in _flatten_syms(args)]
        if not _is_graph_model(keras, op):
            op = _trace_subclassed(keras, op)
        return _walk(ctx, keras, op, syms)
    if node is None:  # Sequential without a built graph: infer output shape symbolically
        x = args[0]
        spec = op.compute_output_spec(keras.KerasTensor(x.shape))
        node = _FakeNode([spec])
    kwargs = {k: v for k, v in kwargs.items() if k not in ("training",) and v is not None}
    cls = type(op).__name__
    if isinstance(op, keras.layers.Layer):
        if cls not in HANDLERS:
            raise KerasConversionError(f"layer {op.name!r} ({cls}) has no MindSpore conversion yet")
        return HANDLERS[cls](ctx, op, node, args, kwargs)
    return _keras_op(ctx, op, node, args, kwargs)


def _flatten_syms(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from _flatten_syms(a)
        elif isinstance(a, Sym):
            yield a


# ---------------------------------------------------------------------------------------------------------------
# emission
# ---------------------------------------------------------------------------------------------------------------
_HELPER_SRC = {
    "ChannelsFirstLayerNorm": '''
class ChannelsFirstLayerNorm(nn.Cell):
    """Keras LayerNormalization over the channels of a channels-first (N, C, ...) tensor.

    nn.LayerNorm normalises trailing axes; here the channels axis is axis 1, so the statistics are computed
    directly (same formula as Keras: (x - mean) / sqrt(var + eps) * gamma + beta).
    """

    def __init__(self, channels, eps=1e-3):
        super().__init__()
        self.eps = eps
        self.gamma = ms.Parameter(ms.Tensor(np.ones(channels, np.float32)), name="gamma")
        self.beta = ms.Parameter(ms.Tensor(np.zeros(channels, np.float32)), name="beta")

    def construct(self, x):
        mean = ops.mean(x, 1, keep_dims=True)
        var = ops.mean(ops.square(x - mean), 1, keep_dims=True)
        y = (x - mean) / ops.sqrt(var + self.eps)
        shape = (1, -1) + (1,) * (x.ndim - 2)
        return y * ops.reshape(self.gamma, shape) + ops.reshape(self.beta, shape)
''',
    "zero_pad": '''
def zero_pad(x, pad):
    """Zeros around the last len(pad) // 2 axes (pad: before/after pairs, last axis first), concatenated: not
    MindSpore's pad kernel, whose gradient inside a compiled train step (GRAPH mode, CPU) goes wrong."""
    for k in range(len(pad) // 2):
        axis = x.ndim - 1 - k
        parts = (x,)
        if pad[2 * k] > 0:
            parts = (ops.zeros(x.shape[:axis] + (pad[2 * k],) + x.shape[axis + 1:], x.dtype),) + parts
        if pad[2 * k + 1] > 0:
            parts = parts + (ops.zeros(x.shape[:axis] + (pad[2 * k + 1],) + x.shape[axis + 1:], x.dtype),)
        if len(parts) > 1:
            x = ops.concat(parts, axis)
    return x
''',
}


def _class_name(name: str) -> str:
    parts = re.split(r"[^0-9A-Za-z]+", name)
    s = "".join(p[:1].upper() + p[1:] for p in parts if p) or "Model"
    if s[0].isdigit():
        s = "Model" + s
    return s


def _emit(ctx: Ctx, class_name: str, source: str, in_syms, out_syms, in_names, keep_nhwc: bool) -> str:
    lines = [
        f'"""MindSpore port of the Keras model {class_name} ({source}), written by msmigrate keras.',
        "",
        "create_model() builds the network and loads model.ckpt from this folder. Inputs are "
        + ("channels-last (NHWC, as in Keras): they are transposed to NCHW once, at the start."
           if keep_nhwc else "channels-first (NCHW): transpose Keras NHWC data with x.transpose(0, 3, 1, 2)."),
        '"""',
        "import os",
        "",
        "# MindSpore's oneDNN picks a ~100x slower reference convolution on AVX-512 CPUs unless limited to AVX2;",
        "# this must be set before mindspore is imported.",
        'os.environ["ONEDNN_MAX_CPU_ISA"] = "AVX2"',
        "",
        "import numpy as np  # noqa: E402",
        "import mindspore as ms  # noqa: E402",
        "from mindspore import nn, ops  # noqa: E402",
        "",
    ]
    for h in sorted(ctx.helpers):
        lines.extend(_HELPER_SRC[h].strip("\n").split("\n"))
        lines += ["", ""]
    lines += [f"class {class_name}(nn.Cell):",
              '    """Converted from Keras; layer attributes keep the Keras layer names."""',
              "", "    def __init__(self):", "        super().__init__()"]
    lines += ["        " + ln for ln in ctx.init_lines] or ["        pass"]
    lines += ["", f"    def construct(self, {', '.join(in_names)}):"]
    lines += ["        " + ln for ln in ctx.body]
    ret = ", ".join(s.var for s in out_syms)
    lines += [f"        return {ret}", "", ""]
    lines += [
        "def create_model(ckpt_path=None):",
        f'    """Build {class_name}, load its converted weights (model.ckpt next to this file) and set eval mode."""',
        f"    net = {class_name}()",
        '    path = ckpt_path or os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.ckpt")',
        "    if net.parameters_dict():  # (a network without weights has nothing to load)",
        "        not_loaded, unused = ms.load_param_into_net(net, ms.load_checkpoint(path))",
        "        if not_loaded or unused:",
        '            raise RuntimeError(f"{path} does not match the network: missing {not_loaded}, unused {unused}")',
        "    net.set_train(False)",
        "    return net",
        "",
    ]
    return "\n".join(lines)


def convert_keras_model(model, out_dir: str, keep_nhwc: bool = False, source: str = "") -> KerasConversion:
    """Convert a built Keras model; writes model.py, keras-report.md and model_weights.npz (the ckpt is written
    by the MindSpore worker, see ``worker.write_checkpoint``)."""
    import keras

    t0 = time.time()
    if not _is_graph_model(keras, model):
        model = _trace_subclassed(keras, model)
    if isinstance(model, keras.Sequential) and getattr(model, "_functional", None) is None:
        raise KerasConversionError("the Sequential model is not built: give it an Input (keras.Input(shape)) "
                                   "or call model.build(input_shape) first")
    ctx = Ctx(keep_nhwc)
    graph = model._functional if isinstance(model, keras.Sequential) else model
    in_syms, in_names, ms_in_shapes = [], [], []
    for t in graph.inputs:
        hist = getattr(t, "_keras_history", None)
        op_name = getattr(hist[0], "name", None) if hist else None
        name = ctx.unique("x" if len(graph.inputs) == 1 else (op_name or "x"))
        shape = tuple(t.shape)
        spatial = len(shape) in (4, 5)
        if spatial and not keep_nhwc:
            s = Sym(name, shape, "cf")
        else:
            s = Sym(name, shape, "cl")
        in_syms.append(s)
        in_names.append(name)
        ms_in_shapes.append(s.ms_shape())
    outs = _walk(ctx, keras, model, in_syms)
    final = []
    for s in outs:
        if s.layout == "flat":
            s = ctx.to(s, "cl")
        elif s.rank >= 3:
            s = ctx.to(s, "cl" if keep_nhwc or s.rank == 3 else "cf")
        final.append(s)
    # a returned input (identity model) needs no variable
    class_name = _class_name(model.name)
    src = _emit(ctx, class_name, source or model.name, in_syms, final, in_names, keep_nhwc)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "model.py"), "w") as f:
        f.write(src)
    conv = KerasConversion(model.name, class_name, out_dir, source or model.name, ctx.rows, ctx.weights,
                           ms_in_shapes, [s.ms_shape() for s in final], keep_nhwc)
    conv.graph_model = graph
    conv.seconds = time.time() - t0
    write_report(conv, ctx)
    return conv


def write_report(conv: KerasConversion, ctx: Ctx) -> None:
    n_tr = sum(1 for ln in ctx.body if "ops.transpose(" in ln)
    lines = [
        f"# Keras → MindSpore: {conv.model_name}", "",
        f"- source: `{conv.source}`",
        f"- output: `model.py` (class `{conv.class_name}`, `create_model()`), `model.ckpt` "
        f"({len(conv.weights)} tensors, {sum(int(v.size) for v in conv.weights.values()):,} values)",
        f"- inputs (MindSpore side, batch first): {', '.join(str(s) for s in conv.input_shapes)} — "
        + ("channels-last as in Keras (`--keep-nhwc`), transposed to channels-first once at the start"
           if conv.keep_nhwc else "channels-first (NCHW); Keras NHWC data: `x.transpose(0, 3, 1, 2)`"),
        f"- outputs: {', '.join(str(s) for s in conv.output_shapes)}"
        + ("" if conv.keep_nhwc else " (spatial outputs channels-first)"),
        f"- transposes in construct(): {n_tr}",
        "- inference semantics: Dropout/noise layers are dropped; BatchNormalization uses its moving statistics "
        "(call `net.set_train(True)` to train)", "",
        "| # | Keras layer | class | MindSpore | difference / note |",
        "|---|---|---|---|---|",
    ]
    for i, r in enumerate(conv.layers, 1):
        became = r.became.replace("|", "\\|")
        lines.append(f"| {i} | {r.name} | {r.cls} | `{became}` | {r.note.replace('|', '/')} |")
    with open(os.path.join(conv.out_dir, "keras-report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
