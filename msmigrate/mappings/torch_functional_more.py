"""More torch.nn.functional ops (3-d pooling, Lp pooling, pdist, instance_norm) -> mindspore.ops, one expression
each. Facts (MindSpore 2.10 CPU, checked by the parity test): ops.avg_pool3d's stride defaults to 1 (torch: the
kernel size) and its divisor_override to 0 (torch: None); mint has no max_pool3d/lp_pool/pdist/instance_norm.
Proven by tests/parity/test_torch_functional_more.py.
"""
from __future__ import annotations

from ..callsite import UnsupportedSite
from ..records import rule
from .compose import composed, translated_order
from .edge_args import EMPTY_BATCH_NOTE, padding_per_side

T = "tests/parity/test_torch_functional_more.py::test_functional_more"
P = "torch.nn.functional."

composed(P + "adaptive_avg_pool3d", "_ms_compat.on_empty_batch(ops.adaptive_avg_pool3d, {input}, {output_size})",
         ("input", "output_size"), target="mindspore.ops.adaptive_avg_pool3d", note=EMPTY_BATCH_NOTE, test=T)
composed(P + "avg_pool3d", "ops.avg_pool3d({input}, {kernel_size}, {stride}, {padding}, {ceil_mode}, "
         "{count_include_pad}, ({divisor_override} or 0))",
         ("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"),
         defaults={"padding": "0", "ceil_mode": "False", "count_include_pad": "True", "divisor_override": "None"},
         absent={"stride": "ops.avg_pool3d({input}, {kernel_size}, {kernel_size}, {padding}, {ceil_mode}, "
                           "{count_include_pad}, ({divisor_override} or 0))"},
         prepare=padding_per_side(), note="stride defaults to the kernel size, as torch (ops.avg_pool3d's default is "
                                          "1); a padding per dim written out is passed per side", test=T)
# ops.max_pool3d refuses lists for the sizes (torch takes both): each becomes a tuple
_SIZES = "(tuple(_ms_a) if isinstance(_ms_a, list) else _ms_a for _ms_a in ({kernel_size}, {stride}, {padding}, {dilation}))"
_MP3 = "(lambda _ms_k, _ms_s, _ms_p, _ms_dl: ops.max_pool3d({input}, _ms_k, _ms_s, _ms_p, _ms_dl, {ceil_mode}, %s))(*" + _SIZES + ")"
_MP3_ARGS = ("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode")
_MP3_DEFAULTS = {"stride": "None", "padding": "0", "dilation": "1", "ceil_mode": "False"}
composed(P + "max_pool3d", _MP3 % "{return_indices}", _MP3_ARGS + ("return_indices",),
         defaults=dict(_MP3_DEFAULTS, return_indices="False"), target="mindspore.ops.max_pool3d",
         note="(values, int64 indices) with return_indices=True, as torch", test=T)
composed(P + "max_pool3d_with_indices", _MP3 % "True", _MP3_ARGS + ("return_indices",),
         defaults=dict(_MP3_DEFAULTS, return_indices="True"), only={"return_indices": ("True",)},
         target="mindspore.ops.max_pool3d", note="(values, int64 indices), as torch", test=T)
composed("torch.max_pool3d", _MP3 % "False", _MP3_ARGS, defaults=_MP3_DEFAULTS, target="mindspore.ops.max_pool3d",
         test=T)    # torch's keyword is input (self= is refused)
# lp_pool1d/2d/3d: mappings/tensor_nn_extra.py
composed(P + "pdist", "ops.pdist({input}, float({p}))", ("input", "p"), defaults={"p": "2"}, test=T)

# instance normalisation with the input's own statistics (biased variance over the spatial dims), as torch; given
# running statistics, _ms_compat.instance_norm moves them (use_input_stats) or normalises with them
_IN_NOTE = ("the input's own statistics (biased variance) written out; with running_mean/running_var "
            "_ms_compat.instance_norm, which moves them in place (torch's unbiased variance) or, with "
            "use_input_stats=False, normalises with them")


def _instance_norm(params):
    def convert(ctx):
        b = ctx.bound
        translated_order(b, params)
        x, eps = b.code("input"), b.code("eps") or "1e-05"
        if x is None:
            raise UnsupportedSite("argument input is required")
        if any(b.code(p) not in (None, "None") for p in ("running_mean", "running_var")) or \
                b.code("use_input_stats") not in (None, "True"):
            # running statistics read or moved in place: the helper (templates/compat_parts/nn_extra.py)
            named = ", ".join(f"{p}={b.code(p)}" for p in params[1:] if p != "cudnn_enabled" and b.has(p))
            return ctx.expr(f"_ms_compat.instance_norm({x}{', ' + named if named else ''})")
        text = (f"(lambda _ms_x, _ms_d: (_ms_x - _ms_x.mean(_ms_d, True)) / ops.sqrt(_ms_x.var(_ms_d, ddof=0, "
                f"keepdims=True) + {eps}))({x}, tuple(range(2, {x}.ndim)))")
        weight, bias = b.code("weight"), b.code("bias")
        affine = [f" * {weight}.reshape(_ms_s)" if weight not in (None, "None") else "",
                  f" + {bias}.reshape(_ms_s)" if bias not in (None, "None") else ""]
        if any(affine):
            text = f"(lambda _ms_y, _ms_s: _ms_y{''.join(affine)})({text}, (-1,) + (1,) * ({x}.ndim - 2))"
        return ctx.expr(text)
    return convert


for _src, _params in ((P + "instance_norm", ("input", "running_mean", "running_var", "weight", "bias",
                                             "use_input_stats", "momentum", "eps")),
                      ("torch.instance_norm", ("input", "weight", "bias", "running_mean", "running_var",
                                               "use_input_stats", "momentum", "eps", "cudnn_enabled"))):
    rule(_src, "mindspore.ops.sqrt", args=_params, note=_IN_NOTE, test=T)(_instance_norm(_params))
