"""More torch.Tensor properties/methods, torch.nn layers and torch.nn.functional ops.

- Tensor properties MindSpore's Tensor has with torch's meaning (x.T, x.mT, x.H, x.mH, x.shape, x.ndim, x.dtype,
  x.nbytes, x.itemsize): read as written; the record states it and its test compares the values.
  (x.device is a string in MindSpore, x.requires_grad exists only on a Parameter, x.real/x.imag are methods there:
  not listed.)
- Layers with no MindSpore Cell of the same meaning: helpers with torch's formulas and defaults in
  templates/compat_parts/nn_extra.py; MaxUnpool1d/2d/3d and Bilinear are MindSpore's own Cells.
- Functional ops: max_unpool1d/2d/3d and adaptive_max_pool3d are MindSpore's ops; the `*_with_indices` forms are
  the functional op with return_indices=True through its own record.
Proven by tests/parity/test_tensor_nn_extra.py (values against torch; gradients where the formula is composed;
random ops by their distribution).
"""
from __future__ import annotations

import libcst as cst

from ..callsite import UnsupportedSite
from ..records import REGISTRY, mapping, rule
from .compose import composed, through_twin, translated_order
from .layers import _linear

T = "tests/parity/test_tensor_nn_extra.py"
T_PROP, T_METHOD = f"{T}::test_tensor_properties", f"{T}::test_tensor_methods"
T_LAYER, T_RANDOM_LAYER = f"{T}::test_layers", f"{T}::test_random_layers"
T_FUNC, T_RANDOM_FUNC = f"{T}::test_functional", f"{T}::test_random_functional"
T_LP_POOL = "tests/parity/test_lp_pool.py::test_lp_pool"
N, F = "torch.nn.", "torch.nn.functional."

# ------------------------------------------------------------------ torch.Tensor
for _name in ("mT", "H", "mH"):
    mapping(f"Tensor.{_name}", f"expr:_ms_compat.transposed_read({{self}}, '{_name}')", test=T_PROP,
            note="MindSpore's property of the same meaning (the conjugate transpose on complex tensors for H/mH), "
                 "but a 0-d tensor, which torch takes (its conjugate; mT: itself) and MindSpore refuses, through "
                 "_ms_compat.transposed_read (templates/compat_parts/tensor_reads.py)")
for _name in ("T", "shape", "ndim", "dtype", "nbytes", "itemsize", "data"):
    mapping(f"Tensor.{_name}", f"expr:{{self}}.{_name}", test=T_PROP,
            note="a property MindSpore's Tensor has with torch's meaning: read as written"
                 + (" (shape is a tuple; torch.Size is a tuple too)" if _name == "shape" else "")
                 + (" (the values without gradient, as torch's detached view: MindSpore's x.data stops the "
                    "gradient in PyNative and GRAPH mode; writes through it are other records' business)"
                    if _name == "data" else ""))
def _index_put(function: bool):
    """Tensor.index_put (the receiver) and torch.index_put (input first) through one helper."""
    def rule_fn(ctx):
        b = ctx.bound
        translated_order(b, ("input",) * function + ("indices", "values", "accumulate"))
        if not (b.has("indices") and b.has("values")) or (function and not b.has("input")):
            raise UnsupportedSite("input, indices and values are required")
        x = b.code("input") if function else ctx.receiver_code()
        return ctx.expr(f"_ms_compat.tensor_index_put({x}, {b.code('indices')}, {b.code('values')}, "
                        f"{b.code('accumulate') or 'False'})")
    return rule_fn


_INDEX_PUT_NOTE = ("indices is a tuple of int or bool index tensors, one per leading dimension, as in torch; values "
                   "broadcast; a scatter (MindSpore's index_put takes int indices and 1-D values only)")
rule("Tensor.index_put", "_ms_compat.tensor_index_put", args=("indices", "values", "accumulate"), tensor_only=True,
     test=T_METHOD, note=_INDEX_PUT_NOTE)(_index_put(False))
rule("torch.index_put", "_ms_compat.tensor_index_put", args=("input", "indices", "values", "accumulate"),
     test=T_FUNC, note=_INDEX_PUT_NOTE)(_index_put(True))
mapping("Tensor.matrix_exp", "expr:_ms_compat.linalg_matrix_exp({self})", tensor_only=True, test=T_METHOD,
        note="ops.matrix_exp has no CPU kernel: torch.linalg.matrix_exp's helper (scaling and squaring, Pade)")

# ------------------------------------------------------------------ torch.nn layers
mapping(N + "Softplus", "_ms_compat.Softplus", args=("beta", "threshold"), target_args=("beta", "threshold"),
        test=T_LAYER, note="MindSpore has no Softplus Cell: a Cell around ops.softplus")
mapping(N + "CosineSimilarity", "_ms_compat.CosineSimilarity", args=("dim", "eps"), target_args=("dim", "eps"),
        test=T_LAYER, note="torch's formula (mindspore.nn.CosineSimilarity is a metric): each input divided by its "
                           "norm clamped to eps")
mapping(N + "PairwiseDistance", "_ms_compat.PairwiseDistance", args=("p", "eps", "keepdim"),
        target_args=("p", "eps", "keepdim"), test=T_LAYER, note="norm(x1 - x2 + eps, p) over the last dimension")
mapping(N + "RMSNorm", "_ms_compat.RMSNorm", args=("normalized_shape", "eps", "elementwise_affine", "device", "dtype"),
        target_args=("normalized_shape", "eps", "elementwise_affine"), drop=("device", "dtype"), test=T_LAYER,
        note="parameter `weight` as torch; eps=None is the input dtype's machine epsilon, as torch")
rule(N + "Bilinear", "mindspore.nn.BiDense",
     args=("in1_features", "in2_features", "out_features", "bias", "device", "dtype"),
     target_args=("in1_channels", "in2_channels", "out_channels"),
     rename={"in1_features": "in1_channels", "in2_features": "in2_channels", "out_features": "out_channels",
             "bias": "has_bias"},
     drop=("device", "dtype"), test=T_LAYER,
     note="parameters weight (out, in1, in2) and bias as torch; their initial values follow MindSpore's initializers "
          "(load torch weights for identical values); a bias that is not True/False as bool(value), as torch tests "
          "it")(_linear)
mapping(N + "AdaptiveLogSoftmaxWithLoss", "_ms_compat.AdaptiveLogSoftmaxWithLoss",
        args=("in_features", "n_classes", "cutoffs", "div_value", "head_bias", "device", "dtype"),
        target_args=("in_features", "n_classes", "cutoffs", "div_value", "head_bias"), drop=("device", "dtype"),
        test=f"{T}::test_adaptive_log_softmax",
        note="torch's head/tail layout and parameter names; each target's log-probability is taken from the full "
             "table (log_prob's), the sums torch forms over each cluster's rows, so a compiled graph runs it too; "
             "(output, loss) as a namedtuple")
for _d in ("1d", "2d", "3d"):
    mapping(N + f"CircularPad{_d}", f"_ms_compat.CircularPad{_d}", args=("padding",), target_args=("padding",),
            test=T_LAYER, note="ops.pad(mode='circular') with torch's padding order (last dimension first)")
    mapping(N + f"MaxUnpool{_d}", f"mindspore.nn.MaxUnpool{_d}", args=("kernel_size", "stride", "padding"),
            target_args=("kernel_size", "stride", "padding"), test=T_LAYER,
            note="called with (input, indices, output_size=None); int64 indices from max_pool with return_indices, "
                 "as torch")
mapping(N + "LocalResponseNorm", "_ms_compat.LocalResponseNorm", args=("size", "alpha", "beta", "k"),
        target_args=("size", "alpha", "beta", "k"), test=T_LAYER,
        note="torch's formula: x / (k + alpha * mean of x^2 over `size` channels)^beta (mindspore.nn.LRN counts the "
             "window and alpha differently)")
mapping(N + "CrossMapLRN2d", "_ms_compat.CrossMapLRN2d", args=("size", "alpha", "beta", "k"),
        target_args=("size", "alpha", "beta", "k"), test=T_LAYER,
        note="torch 2.13's running-window formula on (N, C, H, W), channel 0 kept in every window past the first "
             "pre_pad channels as torch's loop does (not the same window as LocalResponseNorm); its gradient is "
             "torch's hand-written backward (a custom bprop), which is not the exact gradient of the forward; "
             "differentiating it inside ms.jit fails with a MindSpore compile error (PyNative works)")
mapping(N + "UpsamplingBilinear2d", "_ms_compat.UpsamplingBilinear2d", args=("size", "scale_factor"),
        target_args=("size", "scale_factor"), test=T_LAYER,
        note="ops.interpolate(mode='bilinear', align_corners=True) to size or floor(size * scale_factor)")
_LP_NOTE = ("torch's formula over ops.avg_pool{d}: (sum of x^p over the window)^(1/p); a non-integer p keeps "
            "torch's NaN for a window whose x^p is NaN (MindSpore's own LPPool turns it into 0); unbatched input too")
for _d in ("1d", "2d", "3d"):
    mapping(N + f"LPPool{_d}", f"_ms_compat.LPPool{_d}", args=("norm_type", "kernel_size", "stride", "ceil_mode"),
            target_args=("norm_type", "kernel_size", "stride", "ceil_mode"), test=T_LP_POOL,
            note=_LP_NOTE.format(d=_d))
_RANDOM_NOTE = "the same distribution as torch; the random stream differs"
mapping(N + "RReLU", "_ms_compat.RReLU", args=("lower", "upper", "inplace"), target_args=("lower", "upper"),
        drop=("inplace",), test=T_RANDOM_LAYER,
        note="training: negative inputs times a slope drawn from U(lower, upper) (" + _RANDOM_NOTE + "); eval: the "
             "slope (lower + upper) / 2, exactly as torch")
for _name, _what in (("AlphaDropout", "each element"), ("FeatureAlphaDropout", "each (sample, channel)")):
    mapping(N + _name, f"_ms_compat.{_name}", args=("p", "inplace"), target_args=("p",), drop=("inplace",),
            test=T_RANDOM_LAYER, note=f"torch's alpha dropout of {_what} in training ({_RANDOM_NOTE}); the identity "
                                      f"in eval mode")

# ------------------------------------------------------------------ torch.nn.functional
for _d in ("1d", "2d", "3d"):
    # ops.max_unpool refuses a list for output_size (torch takes a list or a tuple)
    composed(F + f"max_unpool{_d}", f"ops.max_unpool{_d}({{input}}, {{indices}}, {{kernel_size}}, {{stride}}, "
             f"{{padding}}, (tuple({{output_size}}) if isinstance({{output_size}}, list) else {{output_size}}))",
             ("input", "indices", "kernel_size", "stride", "padding", "output_size"),
             defaults={"stride": "None", "padding": "0", "output_size": "None"}, test=T_FUNC,
             target=f"mindspore.ops.max_unpool{_d}", note="output_size given as a list becomes a tuple")


def _adaptive_max_pool3d(forced):
    def convert(ctx):
        b = ctx.bound
        translated_order(b, ("input", "output_size", "return_indices"))
        if not b.has("input") or not b.has("output_size"):
            raise UnsupportedSite("arguments input and output_size are required")
        ri = "True" if forced else (b.code("return_indices") or "False")
        if ri not in ("True", "False"):
            raise UnsupportedSite("return_indices must be a literal True/False (the result's structure depends on it)")
        size = b.code("output_size")
        parts = [p.strip() for p in size.strip()[1:-1].split(",")] if size.strip()[:1] in "([" else []
        if "None" in parts:     # torch keeps the input's size where output_size says None
            size = "(" + ", ".join(f"_ms_x.shape[{i - len(parts)}]" if p == "None" else p
                                   for i, p in enumerate(parts)) + ")"
            call = f"(lambda _ms_x: ops.adaptive_max_pool3d(_ms_x, {size}, {ri}))({b.code('input')})"
        else:
            call = f"ops.adaptive_max_pool3d({b.code('input')}, {size}, {ri})"
        if ri == "False":
            return ctx.expr(call)
        return ctx.expr(f"(lambda _ms_o: (_ms_o[0], _ms_o[1].astype(ms.int64)))({call})")
    return convert


_AMP3_NOTE = ("indices as int64 (ops.adaptive_max_pool3d returns int32); a None in a tuple output_size written out "
              "keeps the input's size there, as torch")
rule(F + "adaptive_max_pool3d", "mindspore.ops.adaptive_max_pool3d", args=("input", "output_size", "return_indices"),
     test=T_FUNC, note=_AMP3_NOTE)(_adaptive_max_pool3d(False))
rule(F + "adaptive_max_pool3d_with_indices", "mindspore.ops.adaptive_max_pool3d",
     args=("input", "output_size", "return_indices"), test=T_FUNC,
     note="(values, indices) whatever return_indices says, as torch; " + _AMP3_NOTE)(_adaptive_max_pool3d(True))


def _with_indices(name: str):
    """F.NAME_with_indices(...) is F.NAME(..., return_indices=True) (torch returns the pair whatever
    return_indices says): converted through F.NAME's own record."""
    twin = REGISTRY.get(F + name)

    def convert(ctx):
        b = ctx.bound
        args = [cst.Arg(b.value(p), keyword=cst.Name(p)) for p in translated_order(b, twin.args)
                if p != "return_indices"]
        args.append(cst.Arg(cst.Name("True"), keyword=cst.Name("return_indices")))
        return through_twin(ctx, name, twin, args)   # reported once, under the _with_indices name

    rule(F + name + "_with_indices", twin.target, args=twin.args, status=twin.status, test=T_FUNC,
         note=f"as torch.nn.functional.{name}(..., return_indices=True)" + (f": {twin.note}" if twin.note else ""))(
        convert)


for _name in ("max_pool1d", "max_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d"):
    _with_indices(_name)

composed(F + "gumbel_softmax", "ops.gumbel_softmax({logits}, float({tau}), {hard}, {dim})",
         ("logits", "tau", "hard", "eps", "dim"), defaults={"tau": "1", "hard": "False", "eps": "1e-10", "dim": "-1"},
         test=T_RANDOM_FUNC, note="eps is deprecated and unused in torch too; hard=True gives one-hot samples with the "
                                  "soft sample's gradient, as torch; " + _RANDOM_NOTE)
for _d in ("1d", "2d", "3d"):
    mapping(F + f"lp_pool{_d}", f"_ms_compat.lp_pool{_d}",
            args=("input", "norm_type", "kernel_size", "stride", "ceil_mode"),
            target_args=("input", "norm_type", "kernel_size", "stride", "ceil_mode"), test=T_LP_POOL,
            note=_LP_NOTE.format(d=_d))
mapping(F + "rrelu", "_ms_compat.rrelu", args=("input", "lower", "upper", "training", "inplace"),
        target_args=("input", "lower", "upper", "training"), drop=("inplace",), test=T_RANDOM_FUNC,
        note="training=False (torch's default): the slope (lower + upper) / 2, exactly; training=True: a slope drawn "
             "from U(lower, upper) per negative element (" + _RANDOM_NOTE + ")")
for _name in ("alpha_dropout", "feature_alpha_dropout"):
    mapping(F + _name, f"_ms_compat.{_name}", args=("input", "p", "training", "inplace"),
            target_args=("input", "p", "training"), drop=("inplace",), test=T_RANDOM_FUNC,
            note="training defaults to False, as torch (the identity); in training, torch's alpha dropout ("
                 + _RANDOM_NOTE + ")")

# ------------------------------------------------------------------ embedding bags
_BAG_REFUSED = {"max_norm": "max_norm renormalizes weight rows in place while looking them up: not converted",
                "scale_grad_by_freq": "gradients scaled by word frequency are not converted"}
_BAG_OK = {"max_norm": ("None",), "scale_grad_by_freq": ("False",)}
_BAG_NOTE = ("bags of a 2-D input's rows or of a 1-D input split at offsets; 'sum'/'mean'/'max', padding_idx "
             "left out, an empty bag gives zeros, as torch; sparse=True gives dense gradients of the same values")
mapping(N + "EmbeddingBag", "_ms_compat.EmbeddingBag",
        args=("num_embeddings", "embedding_dim", "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse",
              "_weight", "include_last_offset", "padding_idx", "device", "dtype"),
        target_args=("num_embeddings", "embedding_dim", "max_norm", "norm_type", "scale_grad_by_freq", "mode",
                     "sparse", "_weight", "include_last_offset", "padding_idx"),
        drop=("device", "dtype"), unsupported=_BAG_REFUSED, unsupported_ok=_BAG_OK, test=T_LAYER,
        note="parameter `weight` drawn from N(0, 1) as torch; " + _BAG_NOTE)
mapping(F + "embedding_bag", "_ms_compat.embedding_bag",
        args=("input", "weight", "offsets", "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse",
              "per_sample_weights", "include_last_offset", "padding_idx"),
        target_args=("input", "weight", "offsets", "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse",
                     "per_sample_weights", "include_last_offset", "padding_idx"),
        unsupported=_BAG_REFUSED, unsupported_ok=_BAG_OK, test=T_FUNC, note=_BAG_NOTE)

# time-batch-channel convolution: input (T, B, C_in), weight (K, C_in, C_out) -> (T', B, C_out)
composed(F + "conv_tbc", "ops.transpose(ops.conv1d(ops.transpose({input}, (1, 2, 0)), ops.transpose({weight}, "
         "(2, 1, 0)), {bias}, 1, 'pad', {pad}), (2, 0, 1))", ("input", "weight", "bias", "pad"),
         defaults={"pad": "0"}, target="mindspore.ops.conv1d", test=T_FUNC,
         note="ops.conv1d over (B, C_in, T) with the weight as (C_out, C_in, K), transposed back to (T', B, C_out)")

# ------------------------------------------------------------------ more torch.Tensor methods
def _index_reduce(function: bool):
    """Tensor.index_reduce (the receiver) and torch.index_reduce (input first) through one helper."""
    def rule_fn(ctx):
        b = ctx.bound
        params = ("dim", "index", "source", "reduce", "include_self")
        known = params + (("input", "out") if function else ())
        if b.starred or any(p not in known for p in b.order) or not all(b.has(p) for p in params[:4]) or \
                (function and not b.has("input")) or b.code("out") not in (None, "None"):
            raise UnsupportedSite("dim, index, source and reduce are required; other arguments are not translated")
        args = ", ".join(b.code(p) for p in params[:4])
        x = b.code("input") if function else ctx.receiver_code()
        return ctx.expr(f"_ms_compat.tensor_index_reduce({x}, {args}, {b.code('include_self') or 'True'})")
    return rule_fn


_INDEX_REDUCE_NOTE = ("reduce 'prod', 'mean', 'amax', 'amin' with or without the receiver's own values, through "
                      "ops.unsorted_segment_*; untouched slices stay as they are, as torch; a 0-d input is a "
                      "one-element vector, as torch")
rule("Tensor.index_reduce", "_ms_compat.tensor_index_reduce", args=("dim", "index", "source", "reduce", "include_self"),
     tensor_only=True, test=T_METHOD, note=_INDEX_REDUCE_NOTE)(_index_reduce(False))
rule("torch.index_reduce", "_ms_compat.tensor_index_reduce",
     args=("input", "dim", "index", "source", "reduce", "include_self", "out"), test=T_FUNC,
     note=_INDEX_REDUCE_NOTE)(_index_reduce(True))


def _quantile(function: bool, nan: bool):
    """torch.quantile / torch.nanquantile (input first) and the Tensor methods (the receiver) through one helper."""
    helper = "tensor_nanquantile" if nan else "tensor_quantile"

    def rule_fn(ctx):
        b = ctx.bound
        known = ("q", "dim", "keepdim", "interpolation") + (("input",) if function else ())
        if b.starred or any(p not in known for p in b.order) or not b.has("q") or (function and not b.has("input")):
            raise UnsupportedSite("arguments beyond input, q, dim, keepdim, interpolation are not translated")
        x = b.code("input") if function else ctx.receiver_code()
        return ctx.expr(f"_ms_compat.{helper}({x}, {b.code('q')}, {b.code('dim') or 'None'}, "
                        f"{b.code('keepdim') or 'False'}, {b.code('interpolation') or repr('linear')})")
    return rule_fn


_QUANTILE_NOTE = ("sorted along dim, the order statistics at ranks q * (n - 1) as torch (ops.quantile/nanquantile "
                  "have no CPU kernel): q a number or a tensor of them, every interpolation mode; a 0-d input is its "
                  "own quantile")
_NANQUANTILE_NOTE = _QUANTILE_NOTE + "; n counts the values that are not NaN"
rule("Tensor.nanquantile", "_ms_compat.tensor_nanquantile", args=("q", "dim", "keepdim", "interpolation"),
     tensor_only=True, test=T_METHOD, note=_NANQUANTILE_NOTE)(_quantile(False, True))
rule("torch.nanquantile", "_ms_compat.tensor_nanquantile", args=("input", "q", "dim", "keepdim", "interpolation"),
     test=T_FUNC, note=_NANQUANTILE_NOTE)(_quantile(True, True))
rule("Tensor.quantile", "_ms_compat.tensor_quantile", args=("q", "dim", "keepdim", "interpolation"),
     tensor_only=True, test=T_METHOD, note=_QUANTILE_NOTE)(_quantile(False, False))
rule("torch.quantile", "_ms_compat.tensor_quantile", args=("input", "q", "dim", "keepdim", "interpolation"),
     test=T_FUNC, note=_QUANTILE_NOTE)(_quantile(True, False))


# ------------------------------------------------------------------ linear cross entropy
_LCE_NOTE = ("cross_entropy(linear(input, linear_weight, linear_bias), target, ...) as torch's reference; a 2-D "
             "linear_weight (out_features=()); ignore_index=None (no index ignored) becomes cross_entropy's -100, which "
             "no valid class index equals; `options` (chunking, accumulation policy) is not translated")


def _linear_cross_entropy(ctx):
    b = ctx.bound
    params = ("input", "linear_weight", "target", "linear_bias", "weight", "reduction", "ignore_index",
              "label_smoothing", "options")
    if b.starred or any(p not in params for p in b.order) or not all(b.has(p) for p in params[:3]):
        raise UnsupportedSite("input, linear_weight and target are required; other arguments are not translated")
    if b.code("options") not in (None, "None"):
        raise UnsupportedSite(f"options={b.code('options')}: {_LCE_NOTE}")
    bias = b.code("linear_bias") or "None"
    args = [cst.Arg(cst.parse_expression(f"ops.dense({b.code('input')}, {b.code('linear_weight')}, {bias})")),
            cst.Arg(b.value("target"))]
    for p in ("weight", "reduction", "ignore_index", "label_smoothing"):
        if b.has(p) and not (p == "ignore_index" and b.code(p) == "None"):
            args.append(cst.Arg(b.value(p), keyword=cst.Name(p)))
    ce = REGISTRY.get(F + "cross_entropy")
    call = cst.Call(func=cst.Name("cross_entropy"), args=args)
    before = len(ctx.tr.sites)
    out = ctx.tr._apply(call, call, ce, ce.source, receiver=None)
    del ctx.tr.sites[before:]   # reported once, as linear_cross_entropy
    ctx.tr.need.add("ops")
    return out


rule(F + "linear_cross_entropy", "mindspore.ops.cross_entropy",
     args=("input", "linear_weight", "target", "linear_bias", "weight", "reduction", "ignore_index", "label_smoothing",
           "options"), test=T_FUNC, note=_LCE_NOTE)(_linear_cross_entropy)
mapping(N + "LinearCrossEntropyLoss", "_ms_compat.LinearCrossEntropyLoss",
        args=("in_features", "num_classes", "out_features", "bias", "device", "dtype", "reduction", "weight",
              "ignore_index", "label_smoothing", "options"),
        target_args=("in_features", "num_classes", "out_features", "bias", "reduction", "weight", "ignore_index",
                     "label_smoothing"), drop=("device", "dtype"),
        unsupported={"out_features": "multi-dimensional class outputs are not translated",
                     "options": "chunking/accumulation options are not translated"},
        unsupported_ok={"out_features": ("()",), "options": ("None",)}, test=T_LAYER,
        note="a `linear` Dense (parameters linear.weight/linear.bias as torch) then ops.cross_entropy; " + _LCE_NOTE)

# ------------------------------------------------------------------ LU: through the torch.linalg records
_LINALG = "torch.linalg."


def _lu(ctx):
    b = ctx.bound
    if b.starred or any(p not in ("pivot", "get_infos") for p in b.order):
        raise UnsupportedSite("only pivot and get_infos are translated")
    fn = REGISTRY.get("torch.lu")
    args = [cst.Arg(ctx.receiver)] + [cst.Arg(b.value(k), keyword=cst.Name(k)) for k in ("pivot", "get_infos")
                                      if b.has(k)]
    call = cst.Call(func=cst.Name("lu"), args=args)
    before = len(ctx.tr.sites)
    out = ctx.tr._apply(call, call, fn, fn.source, receiver=None)
    del ctx.tr.sites[before:]   # reported once, as the method
    return out


def _lu_solve(ctx):
    b = ctx.bound
    if b.starred or any(p not in ("LU_data", "LU_pivots") for p in b.order) or not b.has("LU_data") \
            or not b.has("LU_pivots"):
        raise UnsupportedSite("LU_data and LU_pivots are required; nothing else is translated")
    fn = REGISTRY.get(_LINALG + "lu_solve")
    call = cst.Call(func=cst.Name("lu_solve"), args=[cst.Arg(b.value("LU_data")), cst.Arg(b.value("LU_pivots")),
                                                     cst.Arg(ctx.receiver, keyword=cst.Name("B"))])
    before = len(ctx.tr.sites)
    out = ctx.tr._apply(call, call, fn, fn.source, receiver=None)
    del ctx.tr.sites[before:]
    return out


rule("Tensor.lu", "mindspore.scipy.linalg.lu_factor", args=("pivot", "get_infos"), tensor_only=True, test=T_METHOD,
     note="as torch.lu(x): (LU, 1-based int32 pivots), a batch matrix by matrix; get_infos=True adds the info "
          "per matrix")(_lu)
rule("Tensor.lu_solve", "mindspore.scipy.linalg.lu_solve", args=("LU_data", "LU_pivots"), tensor_only=True,
     test=T_METHOD, note="as torch.linalg.lu_solve(LU_data, LU_pivots, B=x); PyNative only, one matrix (see that "
                         "record)")(_lu_solve)

# ------------------------------------------------------------------ legacy constructor x.new(...)
_NEW_NOTE = ("the legacy constructor with the receiver's dtype: x.new(2, 3) (sizes: integers, or two or more "
             "arguments of any form) gives zeros "
             "of that shape (torch leaves the memory uninitialized), x.new([1, 2]) (a list or tuple written out) a "
             "tensor of that data, x.new(t.size()) / x.new(t.shape) zeros of t's shape, x.new() an empty one; other "
             "forms are TODO")


def _a_size(v) -> bool:
    """`t.size()` / `t.shape`: a shape, not data."""
    if isinstance(v, cst.Attribute):
        return v.attr.value == "shape"
    return isinstance(v, cst.Call) and not v.args and isinstance(v.func, cst.Attribute) and v.func.attr.value == "size"


def _new(ctx):
    b = ctx.bound
    call = b.call
    if any(a.keyword is not None or a.star for a in call.args):
        raise UnsupportedSite("keyword or starred arguments of x.new(...) are not translated")
    x = ctx.receiver_code()
    values = [a.value for a in call.args]
    if not values:
        return ctx.expr(f"ops.zeros((0,), {x}.dtype)")
    if all(isinstance(v, cst.Integer) for v in values) or len(values) >= 2:
        # two or more positional arguments are sizes whatever they are written as (torch takes data as one
        # sequence): awd-lstm-lm's `weight.new(1, bsz, self.nhid)`, `x.data.new(1, x.size(1), x.size(2))`
        sizes = ", ".join(ctx.tr_code(v) for v in values) + ("," if len(values) == 1 else "")
        return ctx.expr(f"ops.zeros(({sizes}), {x}.dtype)")
    if len(values) == 1 and isinstance(values[0], (cst.List, cst.Tuple)):
        return ctx.expr(f"ms.Tensor({ctx.tr_code(values[0])}, {x}.dtype)")
    if len(values) == 1 and _a_size(values[0]):     # Beta-VAE's `std.data.new(std.size()).normal_()`
        return ctx.expr(f"ops.zeros(tuple({ctx.tr_code(values[0])}), {x}.dtype)")
    raise UnsupportedSite("x.new(...) with sizes or data not written out (a name, a tensor, torch.Size) is not "
                          "translated: " + _NEW_NOTE)


_new.handles_starred = True
rule("Tensor.new", "mindspore.ops.zeros", tensor_only=True, test=T_METHOD, note=_NEW_NOTE)(_new)

# ------------------------------------------------------------------ fractional max pooling
_FMP_NOTE = ("torch's window placement from one uniform sample per (sample, channel, dimension); given "
             "_random_samples the windows and results are torch's exactly, else " + _RANDOM_NOTE + "; int64 flat "
             "indices as torch")
_FMP_ARGS = ("kernel_size", "output_size", "output_ratio", "return_indices", "_random_samples")
for _d in ("2d", "3d"):
    mapping(N + f"FractionalMaxPool{_d}", f"_ms_compat.FractionalMaxPool{_d}", args=_FMP_ARGS, target_args=_FMP_ARGS,
            test=T_LAYER, note=_FMP_NOTE)
    mapping(F + f"fractional_max_pool{_d}", f"_ms_compat.fractional_max_pool{_d}", args=("input",) + _FMP_ARGS,
            target_args=("input",) + _FMP_ARGS, test=T_FUNC, note=_FMP_NOTE)
    composed(F + f"fractional_max_pool{_d}_with_indices",
             f"_ms_compat.fractional_max_pool{_d}({{input}}, {{kernel_size}}, {{output_size}}, {{output_ratio}}, True, "
             f"{{_random_samples}})", ("input",) + _FMP_ARGS,
             defaults={"output_size": "None", "output_ratio": "None", "return_indices": "False",
                       "_random_samples": "None"}, target=f"_ms_compat.fractional_max_pool{_d}", test=T_FUNC,
             note="(values, indices) whatever return_indices says, as torch; " + _FMP_NOTE)
