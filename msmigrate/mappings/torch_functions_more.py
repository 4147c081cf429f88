"""More torch.* functions and torch.Tensor methods: torch's top-level copies of torch.nn.functional ops whose
signature differs from the functional one (an integer `reduction`, another parameter order), and functions
written as one MindSpore expression.

A top-level copy (torch.kl_div(input, target, 1)) is converted as the call of its torch.nn.functional twin with
keyword arguments (reduction 0/1/2 -> 'none'/'mean'/'sum'), through the twin's own record: same conversion, same
notes, same TODOs. Proven by tests/parity/test_torch_functions_more.py (values and dtypes, PyNative and ms.jit).
"""
from __future__ import annotations

import re

from typing import Dict, Sequence, Tuple

import libcst as cst

from ..callsite import UnsupportedSite
from ..records import DIFFERENCE, REGISTRY, mapping, rule
from .compose import composed, tensor_args, through_twin, translated_order

T = "tests/parity/test_torch_functions_more.py"
T_TWINS = T_EXPR = f"{T}::test_torch_functions_more"
T_RANDOM = f"{T}::test_random_copies"
P = "torch.nn.functional."
_REDUCTION = {"0": "'none'", "1": "'mean'", "2": "'sum'"}


def _as_functional(name: str, twin: str, params: Sequence[str], rename: Dict[str, str],
                   drop: Tuple[str, ...], values: Dict[str, Dict[str, str]]):
    fn = REGISTRY.get(P + twin)

    def convert(ctx):
        b = ctx.bound
        args = []
        for p in translated_order(b, params):
            if p in drop:
                continue
            code = b.code(p)
            if p == "reduction":
                if code not in _REDUCTION:
                    raise UnsupportedSite(f"reduction={code}: only a literal 0, 1 or 2 is translated")
                value = cst.parse_expression(_REDUCTION[code])
            elif p == "padding_idx" and code.isdigit():
                value = b.value(p)      # a row index >= 0 means the same in both
            elif p in values:
                if code not in values[p]:
                    raise UnsupportedSite(f"argument {p}={code} is not translated")
                if values[p][code] is None:
                    continue
                value = cst.parse_expression(values[p][code])
            else:
                value = b.value(p)
            args.append(cst.Arg(value, keyword=cst.Name(rename.get(p, p))))
        if getattr(convert, "with_indices", False):
            args.append(cst.Arg(cst.Name("True"), keyword=cst.Name("return_indices")))
        if "reduction" in params and not b.has("reduction"):
            # measured (torch 2.13): the top-level losses called without reduction return the unreduced loss
            args.append(cst.Arg(cst.parse_expression("'none'"), keyword=cst.Name("reduction")))
        return through_twin(ctx, twin, fn, args)   # reported once, as the torch.* name

    rule(f"torch.{name}", fn.target, args=tuple(params), status=fn.status, test=T_RANDOM if twin == "dropout" else T_TWINS,
         note=f"as torch.nn.functional.{twin} with keyword arguments"
              + (" (reduction 0/1/2 -> 'none'/'mean'/'sum'; none given: 'none', as torch's top-level function)"
                 if "reduction" in params else "")
              + (f": {fn.note}" if fn.note else ""))(convert)


# torch.NAME(aten parameters) -> F.TWIN(keywords); `self` is the functional's `input`
for _name, _twin, _params, _rename, _drop, _values in (
        ("kl_div", "kl_div", ("self", "target", "reduction", "log_target"), {"self": "input"}, (), {}),
        ("binary_cross_entropy_with_logits", "binary_cross_entropy_with_logits",
         ("self", "target", "weight", "pos_weight", "reduction"), {"self": "input"}, (), {}),
        ("hinge_embedding_loss", "hinge_embedding_loss", ("self", "target", "margin", "reduction"),
         {"self": "input"}, (), {}),
        ("cosine_embedding_loss", "cosine_embedding_loss", ("input1", "input2", "target", "margin", "reduction"),
         {}, (), {}),
        ("margin_ranking_loss", "margin_ranking_loss", ("input1", "input2", "target", "margin", "reduction"),
         {}, (), {}),
        ("triplet_margin_loss", "triplet_margin_loss",
         ("anchor", "positive", "negative", "margin", "p", "eps", "swap", "reduction"), {}, (), {}),
        ("poisson_nll_loss", "poisson_nll_loss", ("input", "target", "log_input", "full", "eps", "reduction"),
         {}, (), {}),
        ("batch_norm", "batch_norm", ("input", "weight", "bias", "running_mean", "running_var", "training",
                                      "momentum", "eps", "cudnn_enabled"), {}, ("cudnn_enabled",), {}),
        # aten's padding_idx=-1 means none (F.embedding's -1 would be the last row); only a literal is translated
        ("embedding", "embedding", ("weight", "indices", "padding_idx", "scale_grad_by_freq", "sparse"),
         {"indices": "input"}, (), {"padding_idx": {"-1": None}, "sparse": {"False": "False"}}),
        ("constant_pad_nd", "pad", ("self", "pad", "value"), {"self": "input"}, (), {}),
        ("dropout", "dropout", ("input", "p", "train"), {"train": "training"}, (), {}),
        ("bilinear", "bilinear", ("input1", "input2", "weight", "bias"), {}, (), {})):
    _as_functional(_name, _twin, _params, _rename, _drop, _values)

# ---------------------------------------------------------------- one expression each
_CS_NOTE = "ops.channel_shuffle: the channels (dim 1) in `groups` groups, interleaved"
for _src in ("torch.channel_shuffle", "torch.native_channel_shuffle", P + "channel_shuffle",
             P + "native_channel_shuffle"):
    composed(_src, "ops.channel_shuffle({input}, {groups})", ("input", "groups"), note=_CS_NOTE, test=T_EXPR)

_RMS_NOTE = ("x / sqrt(mean(x^2 over the normalized dims) + eps), times weight when given; eps=None is "
             "float32's machine epsilon, as torch's default for float32 inputs")
_F32_EPS = "1.1920928955078125e-07"


def _rms_norm(ctx):
    b = ctx.bound
    if b.starred or b.has("out"):
        raise UnsupportedSite("*args/**kwargs or out= are not translated")
    unknown = [p for p in b.order if p not in ("input", "normalized_shape", "weight", "eps")]
    if unknown or not b.has("input") or not b.has("normalized_shape"):
        raise UnsupportedSite(f"arguments {unknown or 'input, normalized_shape'} not translated")
    eps = b.code("eps") if b.has("eps") and b.code("eps") != "None" else _F32_EPS
    text = (f"(lambda _ms_x, _ms_n: _ms_x * ops.rsqrt(ops.mean(_ms_x * _ms_x, tuple(range(-len(_ms_n), 0)), True)"
            f" + {eps}))({b.code('input')}, tuple({b.code('normalized_shape')}))")
    weight = b.code("weight") if b.has("weight") else None
    return ctx.expr(text if weight in (None, "None") else f"{text} * {weight}")


for _src in ("torch.rms_norm", P + "rms_norm"):
    rule(_src, "mindspore.ops.rsqrt", args=("input", "normalized_shape", "weight", "eps"), note=_RMS_NOTE,
         test=T_EXPR)(_rms_norm)
composed("torch.as_strided", "_ms_compat.as_strided({input}, {size}, {stride}, {storage_offset})",
         ("input", "size", "stride", "storage_offset"), defaults={"storage_offset": "None"}, test=T_EXPR,
         status=DIFFERENCE, target="mindspore.ops.gather",
         note="the elements the strided view reads from input's values laid out row-major, gathered "
              "(templates/compat_parts/strided_views.py; differentiable); torch reads the STORAGE, which differs "
              "when input is itself a non-contiguous view (x.t(), x[:, 1:]): there write the indexing out")
_ISTFT = ("input", "n_fft", "hop_length", "win_length", "window", "center", "normalized", "onesided", "length",
          "return_complex")
composed("torch.istft", "_ms_compat.istft(" + ", ".join("{%s}" % a for a in _ISTFT) + ")", _ISTFT,
         defaults={"hop_length": "None", "win_length": "None", "window": "None", "center": "True",
                   "normalized": "False", "onesided": "None", "length": "None", "return_complex": "False"},
         test=T_EXPR, target="mindspore.ops.irfft",
         note="torch's algorithm (templates/compat_parts/inverse_stft.py; MindSpore 2.10 has no istft): each frame's "
              "irfft (ifft for return_complex) times the window, overlap-added at hop_length and divided by the "
              "overlap-added squared window; differentiable")
_STFT = ("input", "n_fft", "hop_length", "win_length", "window", "center", "pad_mode", "normalized", "onesided",
         "return_complex")
composed("torch.stft", "_ms_compat.stft(" + ", ".join("{%s}" % a for a in _STFT) + ")", _STFT,
         defaults={"hop_length": "None", "win_length": "None", "window": "None", "center": "True",
                   "pad_mode": "'reflect'", "normalized": "False", "onesided": "None", "return_complex": "None"},
         test=T_EXPR, target="mindspore.ops.rfft",
         note="torch's algorithm (templates/compat_parts/forward_stft.py; MindSpore's ops.stft takes other arguments): "
              "the signal padded by n_fft // 2 (center, pad_mode), frames every hop_length times the window, each "
              "frame's rfft (fft when two-sided) as (freq, frames); return_complex=False stacks the real and "
              "imaginary parts last; differentiable")
composed("torch.fill", "ops.full_like({input}, {value})", ("input", "value"), test=T_EXPR,
         note="a new tensor of input's shape and dtype filled with value")
_SIGNED = "({input}.dtype not in (ms.bool_, ms.uint8, ms.uint16, ms.uint32, ms.uint64))"
composed("torch.is_signed", _SIGNED, ("input",), target="mindspore.Tensor.dtype", test=T_EXPR,
         note="whether the dtype is signed (floats and signed integers), as a Python bool")
composed("torch.masked_scatter",
         "(lambda _ms_x, _ms_m, _ms_s: ops.where(_ms_m.reshape(-1), ops.gather(_ms_s.reshape(-1), ops.clamp(ops.cumsum("
         "_ms_m.reshape(-1).astype(ms.int32), 0) - 1, 0), 0), ops.broadcast_to(_ms_x, _ms_m.shape).reshape(-1))"
         ".reshape(_ms_m.shape))({input}, ops.logical_or({mask}, ops.zeros_like({input}).astype(ms.bool_)), {source})",
         ("input", "mask", "source"), target="mindspore.ops.where", test=T_EXPR,
         note="input and mask broadcast together (torch's result has their common shape); the True positions of "
              "mask, in row-major order, take source's elements in order")
composed("torch.put", "ops.tensor_scatter_elements({input}.reshape(-1), {index}.reshape(-1) % {input}.size,"
         " {source}.reshape(-1), 0).reshape({input}.shape)", ("input", "index", "source", "accumulate"),
         defaults={"accumulate": "False"}, only={"accumulate": ("False",)}, target="mindspore.ops.tensor_scatter_elements",
         note="input's elements at the flat (row-major) indices replaced by source's; accumulate=True is not "
              "translated", test=T_EXPR)
composed("torch.unravel_index",
         "(lambda _ms_i, _ms_s: tuple((_ms_i // int(ops.prod(ms.Tensor(_ms_s[_ms_k + 1:] + (1,), ms.int64))))"
         " % _ms_s[_ms_k] for _ms_k in range(len(_ms_s))))({indices}, tuple({shape}))", ("indices", "shape"),
         target="mindspore.ops.floor_divide", note="one int64 tensor of coordinates per dimension of shape", test=T_EXPR)
composed("torch.slice_copy", "(lambda _ms_x: _ms_x[(slice(None),) * ({dim} % _ms_x.ndim) + (slice({start}, {end},"
         " {step}),)])({input})", ("input", "dim", "start", "end", "step"),
         defaults={"dim": "0", "start": "None", "end": "None", "step": "1"}, target="mindspore.Tensor.__getitem__",
         note="input[..., start:end:step, ...] along dim (a new tensor)", test=T_EXPR)
# a 0-d input is one window of its one element (shape (1,)), as torch
_UNFOLD = ("(lambda _ms_x, _ms_d: ops.moveaxis(ops.stack([ops.narrow(_ms_x, _ms_d, _ms_i * {step}, {size})"
           " for _ms_i in range((_ms_x.shape[_ms_d] - {size}) // {step} + 1)], _ms_d), _ms_d + 1, -1)"
           " if _ms_x.ndim else ops.reshape(_ms_x, (1,))[:{size}])({input}, {dimension} % max({input}.ndim, 1))")
composed("torch.unfold_copy", _UNFOLD, ("input", "dimension", "size", "step"), target="mindspore.ops.stack",
         note="the windows of `size` elements every `step` along `dimension`, as a new last dimension (a 0-d "
              "input: its one element, shape (1,), as torch)", test=T_EXPR)


# ---------------------------------------------------------------- tensor methods of their own
def _shape_of_other(ctx):
    other = ctx.bound.code("other")
    if ctx.bound.starred or other is None or len(ctx.bound.order) != 1:
        raise UnsupportedSite("one argument, the tensor whose shape to take")
    if not re.fullmatch(r"[\w.]+", other):
        other = f"({other})"
    return ctx.expr(f"ops.reshape({ctx.receiver_code()}, {other}.shape)")


for _name in ("reshape_as", "view_as"):
    rule(f"Tensor.{_name}", "mindspore.ops.reshape", args=("other",), tensor_only=_name == "reshape_as",
         note="ops.reshape(x, other.shape) (a new tensor: a later in-place write to one is not seen by the other)",
         test=T_EXPR)(_shape_of_other)


def _dense(ctx):
    if ctx.bound.order:
        raise UnsupportedSite("dtype / masked_grad are not translated")
    if getattr(ctx.tr, "_sparse_file", False):    # a file that builds sparse matrices (sparse_products.py)
        ctx.tr.uses_compat = True
        return ctx.expr(f"_ms_compat.sparse_to_dense({ctx.receiver_code()})")
    return ctx.expr(ctx.receiver_code())


rule("Tensor.to_dense", "identity", args=("dtype", "masked_grad"), test=T_EXPR,
     note="a dense tensor is returned as is; in a file that builds sparse matrices (sparse_products.py), "
          "_ms_compat.sparse_to_dense: a sparse matrix's dense values")(_dense)

# ---------------------------------------------------------------- top-level ops returning (values, indices)
for _name, _twin, _params in (("adaptive_max_pool1d", "adaptive_max_pool1d", ("self", "output_size")),
                              ("max_pool1d_with_indices", "max_pool1d",
                               ("self", "kernel_size", "stride", "padding", "dilation", "ceil_mode"))):
    _as_functional(_name, _twin, _params, {"self": "input"}, (), {})
    REGISTRY.get(f"torch.{_name}").rule.with_indices = True


# ---------------------------------------------------------------- recurrent cells (torch.rnn_tanh_cell ...)
_CELL_ARGS = ("input", "hx", "w_ih", "w_hh", "b_ih", "b_hh")


def _cell(kind: str):
    def convert(ctx):
        b = ctx.bound
        if b.starred or any(p not in _CELL_ARGS for p in b.order):
            raise UnsupportedSite("arguments beyond input, hx, w_ih, w_hh, b_ih, b_hh are not translated")
        if not all(b.has(p) for p in _CELL_ARGS[:4]):
            raise UnsupportedSite("input, hx, w_ih and w_hh are required")
        x, hx, w_ih, w_hh = (b.code(p) for p in _CELL_ARGS[:4])
        b_ih = f" + {b.code('b_ih')}" if b.code("b_ih") not in (None, "None") else ""
        b_hh = f" + {b.code('b_hh')}" if b.code("b_hh") not in (None, "None") else ""
        gi = f"ops.matmul(_ms_x, ({w_ih}).T){b_ih}"
        gh = f"ops.matmul(_ms_h, ({w_hh}).T){b_hh}"
        if kind in ("tanh", "relu"):
            return ctx.expr(f"(lambda _ms_x, _ms_h: ops.{kind}({gi} + {gh}))({x}, {hx})")
        if kind == "lstm":
            return ctx.expr(
                f"(lambda _ms_x, _ms_h, _ms_c: (lambda _ms_i, _ms_f, _ms_g, _ms_o: (lambda _ms_c1: "
                f"(ops.sigmoid(_ms_o) * ops.tanh(_ms_c1), _ms_c1))(ops.sigmoid(_ms_f) * _ms_c + ops.sigmoid(_ms_i) * "
                f"ops.tanh(_ms_g)))(*ops.chunk({gi} + {gh}, 4, 1)))({x}, *{hx})")
        return ctx.expr(   # gru
            f"(lambda _ms_x, _ms_h: (lambda _ms_gi, _ms_gh: (lambda _ms_r, _ms_z: (1 - _ms_z) * ops.tanh(_ms_gi[2] + "
            f"_ms_r * _ms_gh[2]) + _ms_z * _ms_h)(ops.sigmoid(_ms_gi[0] + _ms_gh[0]), ops.sigmoid(_ms_gi[1] + "
            f"_ms_gh[1])))(ops.chunk({gi}, 3, 1), ops.chunk({gh}, 3, 1)))({x}, {hx})")
    return convert


for _name, _kind, _what in (("rnn_tanh_cell", "tanh", "tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)"),
                            ("rnn_relu_cell", "relu", "relu(x W_ih^T + b_ih + h W_hh^T + b_hh)"),
                            ("lstm_cell", "lstm", "(h', c') from the i, f, g, o gates, as torch"),
                            ("gru_cell", "gru", "h' from the r, z, n gates, as torch")):
    rule(f"torch.{_name}", "mindspore.ops.matmul", args=_CELL_ARGS, note=f"one step, written out: {_what}",
         test=T_EXPR)(_cell(_kind))


# ---------------------------------------------------------------- more one-expression functions
def _native_layer_norm(ctx):
    b = ctx.bound
    params = ("input", "normalized_shape", "weight", "bias", "eps")
    if b.starred or any(p not in params for p in b.order) or not all(b.has(p) for p in params):
        raise UnsupportedSite("input, normalized_shape, weight, bias and eps are all required")
    x, shape, w, bias, eps = (b.code(p) for p in params)
    affine = (f" * {w}" if w != "None" else "") + (f" + {bias}" if bias != "None" else "")
    return ctx.expr(
        f"(lambda _ms_x, _ms_d: (lambda _ms_m, _ms_r: ((_ms_x - _ms_m) * _ms_r{affine}, _ms_m, _ms_r))("
        f"_ms_x.mean(_ms_d, True), ops.rsqrt(_ms_x.var(_ms_d, ddof=0, keepdims=True) + {eps})))({x}, "
        f"tuple(range(-len(tuple({shape})), 0)))")


rule("torch.native_layer_norm", "mindspore.ops.rsqrt", args=("input", "normalized_shape", "weight", "bias", "eps"),
     note="(output, mean, rstd) with the statistics kept in the normalized dims, as torch", test=T_EXPR)(
    _native_layer_norm)
mapping("torch.newaxis", "None", note="None (an indexing alias, as numpy.newaxis)", test=T_EXPR)


def _broadcast_tensors(ctx):
    parts = tensor_args(ctx.bound)
    return ctx.expr("(lambda *_ms_t: (lambda _ms_s: tuple(ops.broadcast_to(_ms_a, _ms_s) for _ms_a in _ms_t))("
                    "sum(ops.zeros_like(_ms_a, dtype=ms.float32) for _ms_a in _ms_t).shape))(" + ", ".join(parts) + ")")


_broadcast_tensors.handles_starred = True
rule("torch.broadcast_tensors", "mindspore.ops.broadcast_to", note="each tensor broadcast to the common shape "
     "(found by adding zero tensors of each shape; incompatible shapes raise, as in torch)", test=T_EXPR)(
    _broadcast_tensors)

composed("torch.histogram", "_ms_compat.histogram({input}, {bins}, {range}, {weight}, {density})",
         ("input", "bins", "range", "weight", "density"),
         defaults={"range": "None", "weight": "None", "density": "False"}, target="mindspore.ops.histc", test=T_EXPR,
         note="(counts, bin edges) in the input's dtype (_ms_compat.histogram, templates/compat_parts/"
              "empty_reductions.py): an integer bins through ops.histc for a float32 count, binned by torch's formula "
              "in the input's dtype otherwise (float64: no Histogram kernel; weight; density); a tensor bins as the "
              "edges; without range the data's min and max are read on the host (not inside ms.jit)")


# torch.quantile: mappings/tensor_nn_extra.py (one helper with torch.nanquantile)


mapping("torch.scatter_reduce", "_ms_compat.scatter_reduce",
        args=("input", "dim", "index", "src", "reduce", "include_self"),
        target_args=("input", "dim", "index", "src", "reduce", "include_self"),
        test="tests/parity/test_scatter_reduce.py::test_scatter_reduce",
        note="every reduction ('sum', 'prod', 'mean', 'amax', 'amin', also chosen at run time), include_self either "
             "way: the values reach their flat target positions and MindSpore's unsorted segment reductions combine "
             "them (templates/compat_parts/scatter_reduce.py; TensorScatterElements reduces by 'add' only on CPU)")
composed("torch.nonzero_static", "(lambda _ms_i: ops.concat([_ms_i, ops.full(({size}, _ms_i.shape[1]), {fill_value}, "
         "dtype=ms.int64)])[:{size}])(ops.nonzero(ops.atleast_1d({input}))[:, :{input}.ndim])", ("input", "size", "fill_value"),
         defaults={"fill_value": "-1"}, target="mindspore.ops.nonzero", test=T_EXPR,
         note="the first `size` int64 indices of the non-zero elements, padded with fill_value (not inside ms.jit)")


def _mode(ctx):
    b = ctx.bound
    params = ("input", "dim", "keepdim")
    if b.starred or any(p not in params for p in b.order) or not b.has("input"):
        raise UnsupportedSite("arguments beyond input, dim, keepdim are not translated")
    return ctx.expr(f"_ms_compat.mode({b.code('input')}, {b.code('dim') or '-1'}, {b.code('keepdim') or 'False'})")


rule("torch.mode", "_ms_compat.mode", args=("input", "dim", "keepdim"), test=T_EXPR,
     note="(values, int64 indices): the smallest most frequent value along dim and the last index holding it, as "
          "torch on CPU; compares all pairs along dim (memory n^2 per row); a plain tuple (.values/.indices reads "
          "become [0]/[1]) (templates/compat_parts/mode_values.py)")(_mode)
composed(P + "local_response_norm",
         "(lambda _ms_x, _ms_n: _ms_x / ({k} + {alpha} * ops.moveaxis((lambda _ms_c: _ms_c[..., _ms_n:] - "
         "_ms_c[..., :-_ms_n])(ops.cumsum(_ms_compat.pad_constant(ops.moveaxis(_ms_x * _ms_x, 1, -1), "
         "(_ms_n // 2 + 1, (_ms_n - 1) // 2)), -1)), -1, 1) / _ms_n) ** {beta})({input}, {size})",
         ("input", "size", "alpha", "beta", "k"), defaults={"alpha": "0.0001", "beta": "0.75", "k": "1.0"},
         target="mindspore.ops.cumsum", test=T_EXPR,
         note="torch's formula: x / (k + alpha * mean of x^2 over `size` neighbouring channels, zero padded)^beta; "
              "the zeros concatenated (_ms_compat.pad_constant: MindSpore's pad kernel's gradient goes wrong in a "
              "compiled step)")


def _sum_to_size(ctx):
    b = ctx.bound
    if any(a.keyword is not None and a.keyword.value != "size" for a in b.call.args) or any(a.star for a in b.call.args):
        raise UnsupportedSite("only the sizes are translated")
    pos = [ctx.tr_code(a.value) for a in b.call.args]
    if not pos:
        raise UnsupportedSite("no size given")
    size = pos[0] if len(pos) == 1 and not pos[0].lstrip("-").isdigit() else "(" + ", ".join(pos) + ",)"
    return ctx.expr(
        "(lambda _ms_x, _ms_s: (lambda _ms_l: (lambda _ms_d: ops.reshape(ops.sum(_ms_x, _ms_d, keepdim=True) if _ms_d "
        "else _ms_x, _ms_s))(tuple(range(_ms_l)) + tuple(_ms_l + _ms_k for _ms_k, _ms_n in enumerate(_ms_s) if _ms_n == 1"
        f" and _ms_x.shape[_ms_l + _ms_k] != 1)))(_ms_x.ndim - len(_ms_s)))({ctx.receiver_code()}, tuple({size}))")


_sum_to_size.handles_starred = True
rule("Tensor.sum_to_size", "mindspore.ops.sum", args=("size",), tensor_only=True, test=T_EXPR,
     note="summed over the leading dims and the dims where size is 1, then shaped as size")(_sum_to_size)


def _gradient(ctx):
    """Central differences inside, one-sided at the edges (edge_order=1), a number spacing, as torch."""
    b = ctx.bound
    params = ("input", "spacing", "dim", "edge_order")
    if b.starred or any(p not in params for p in b.order) or not b.has("input"):
        raise UnsupportedSite("arguments beyond input, spacing (a number), dim, edge_order=1 are not translated")
    if b.code("edge_order") not in (None, "1"):
        raise UnsupportedSite("edge_order=2 is not translated")
    h = b.code("spacing") or "1"
    try:
        float(h)
    except ValueError:
        raise UnsupportedSite(f"spacing={h}: only a number written out is translated (coordinates are not)")
    x, dim = b.code("input"), b.code("dim")
    dims = "range(_ms_x.ndim)" if dim in (None, "None") else f"(({dim},) if isinstance({dim}, int) else {dim})"
    # a dim of size 2 has no interior points (ops.narrow refuses a start at the end): the edges only
    one = ("ops.concat([ops.narrow(_ms_x, _ms_d, 1, 1) - ops.narrow(_ms_x, _ms_d, 0, 1)] + ([(ops.narrow(_ms_x, _ms_d, 2, "
           "_ms_x.shape[_ms_d] - 2) - ops.narrow(_ms_x, _ms_d, 0, _ms_x.shape[_ms_d] - 2)) / 2] if _ms_x.shape[_ms_d] > 2 "
           "else []) + [ops.narrow(_ms_x, _ms_d, _ms_x.shape[_ms_d] - 1, 1) - ops.narrow(_ms_x, _ms_d, _ms_x.shape[_ms_d] "
           "- 2, 1)], _ms_d)")
    # an integer input gives float32 differences, as torch's (templates: float_input)
    ctx.tr.uses_compat = True
    return ctx.expr(f"(lambda _ms_x: tuple({one} / {h} for _ms_d in {dims}))(_ms_compat.float_input({x}))")


rule("torch.gradient", "mindspore.ops.narrow", args=("input", "spacing", "dim", "edge_order"), test=T_EXPR,
     note="a tuple of float tensors, one per dim: central differences inside, one-sided at the edges; spacing a "
          "number, edge_order 1 (a dim of size 2: the one-sided differences only, as torch)")(_gradient)
