"""More torch.* functions: the legacy LU functions (torch.lu, lu_solve, lu_unpack), randomized low-rank SVD/PCA,
frexp, the random draws binomial/poisson, torch's low-level aliases of functional ops (grid_sampler,
affine_grid_generator, conv_tbc, norm_except_dim, rrelu, the *_dropout(input, p, train) family,
native_dropout) and empty_permuted.

Proven by tests/parity/test_torch_functions_extra.py (values and dtypes against torch; random draws by their
statistics; low-rank factors through their reconstruction)."""
from __future__ import annotations

from ..callsite import UnsupportedSite
from ..records import DIFFERENCE, mapping, rule
from .compose import FACTORY_DROP, composed

T = "tests/parity/test_torch_functions_extra.py"
T_VAL = f"{T}::test_extra_values"
T_RANDOM = f"{T}::test_extra_random"
_SL = "_ms_compat.ms_scipy_linalg."
_ONE = "one matrix (mindspore.scipy.linalg is 2-D only)"

# ------------------------------------------------------------------ legacy linear algebra
composed("torch.lu", "_ms_compat.legacy_lu({A}, {get_infos})", ("A", "pivot", "get_infos"),
         defaults={"pivot": "True", "get_infos": "False"}, only={"pivot": ("True",)},
         target="mindspore.scipy.linalg.lu_factor",
         note="(LU, pivots) as torch.linalg.lu_factor: 1-based int32 pivots; get_infos=True adds the info per "
              "matrix (the index of U's first zero pivot, else 0); a batch runs matrix by matrix "
              "(templates/compat_parts/linalg_shapes.py)", test=T_VAL)
composed("torch.lu_solve", _SL + "lu_solve(({LU_data}, {LU_pivots} - 1), {b})", ("b", "LU_data", "LU_pivots"),
         target="mindspore.scipy.linalg.lu_solve",
         note="torch's 1-based pivots made 0-based; PyNative only (its scatter does not compile in GRAPH mode); "
              + _ONE, test=T_VAL)
# a part not unpacked is an empty tensor of LU's dtype, as torch returns it
_LU_PARTS = ("(lambda _ms_p, _ms_l, _ms_u, _ms_e: (_ms_p if {unpack_pivots} else _ms_e, _ms_l if {unpack_data} else "
             "_ms_e, _ms_u if {unpack_data} else _ms_e))(*ops.lu_unpack({LU_data}, {LU_pivots}.astype(ms.int32)), "
             "ops.zeros((0,), {LU_data}.dtype))")
composed("torch.lu_unpack", _LU_PARTS, ("LU_data", "LU_pivots", "unpack_data", "unpack_pivots"),
         defaults={"unpack_data": "True", "unpack_pivots": "True"}, target="mindspore.ops.lu_unpack", star_args=True,
         note="(P, L, U) with A = P @ L @ U; with unpack_data/unpack_pivots=False the parts not unpacked are empty "
              "tensors, as torch's", test=T_VAL)

# torch's randomized low-rank SVD approximates the truncated SVD; the exact truncated SVD is the best rank-q
# approximation, which torch's result reaches when A has rank <= q (the tests compare reconstructions)
_LOWRANK = ("(lambda _ms_s, _ms_u, _ms_v: (_ms_u[..., :{q}], _ms_s[..., :{q}], _ms_v[..., :{q}]))"
            "(*ops.svd({A}, False))")
composed("torch.svd_lowrank", _LOWRANK, ("A", "q", "niter", "M"), defaults={"q": "6", "niter": "2", "M": "None"},
         only={"M": ("None",)}, target="mindspore.ops.svd", status=DIFFERENCE,
         note="the exact truncated SVD (U, S, V) of rank q (torch: a randomized approximation of it, niter is "
              "ignored); singular vectors are unique only up to sign; M= is a TODO", test=T_VAL)
composed("torch.pca_lowrank", "(lambda _ms_c: (lambda _ms_s, _ms_u, _ms_v: (_ms_u[..., :{q}], _ms_s[..., :{q}], "
         "_ms_v[..., :{q}]))(*ops.svd(_ms_c, False)))(({A} - {A}.mean(-2, keep_dims=True)) if {center} else {A})",
         ("A", "q", "center", "niter"), defaults={"center": "True", "niter": "2"},
         absent={"q": "(lambda _ms_c: (lambda _ms_s, _ms_u, _ms_v: (lambda _ms_q: (_ms_u[..., :_ms_q], "
                      "_ms_s[..., :_ms_q], _ms_v[..., :_ms_q]))(min(6, _ms_c.shape[-2], _ms_c.shape[-1])))"
                      "(*ops.svd(_ms_c, False)))(({A} - {A}.mean(-2, keep_dims=True)) if {center} else {A})"},
         target="mindspore.ops.svd", status=DIFFERENCE,
         note="the columns centered (center=True), then the exact truncated SVD (U, S, V) of rank q (default "
              "min(6, m, n)); torch: a randomized approximation of it (niter is ignored); signs as in any SVD",
         test=T_VAL)

# ------------------------------------------------------------------ elementwise
composed("torch.frexp", "_ms_compat.frexp({input})", ("input",), status=DIFFERENCE,
         note="(mantissa, int32 exponent), 0.5 <= |mantissa| < 1; computed in float64; subnormal inputs: inside "
              "GRAPH mode (ms.jit) MindSpore flushes them to zero, giving (0, 0) where torch gives their mantissa and "
              "exponent (PyNative matches torch unless another library set the CPU's flush-to-zero mode; float64 "
              "subnormals lose precision)", test=T_VAL)
# torch.rrelu is F.rrelu's native function: the same helper, training=True drawing each negative element's slope
mapping("torch.rrelu", "_ms_compat.rrelu", args=("input", "lower", "upper", "training", "generator"),
        target_args=("input", "lower", "upper", "training"), drop=("generator",), test=T_VAL,
        note="training=False (the default): a leaky ReLU with slope (lower + upper) / 2, exactly; training=True: a "
             "slope drawn from U(lower, upper) per negative element (the same distribution as torch, another random "
             "stream: generator= is dropped; statistics in test_extra_random)")
composed("torch.norm_except_dim", "ops.vector_norm({v}, {pow}, tuple(_ms_d for _ms_d in range({v}.ndim) if _ms_d "
         "!= {dim}), True)", ("v", "pow", "dim"), defaults={"pow": "2", "dim": "0"}, literal=("dim",),
         target="mindspore.ops.vector_norm",
         note="the norm over every dimension but dim, kept as size 1 (weight_norm's g)", test=T_VAL)

# ------------------------------------------------------------------ low-level aliases of functional ops
_MODES = "('bilinear', 'nearest', 'bicubic')[{interpolation_mode}]"
_PADS = "('zeros', 'border', 'reflection')[{padding_mode}]"
for _name in ("grid_sampler", "grid_sampler_2d", "grid_sampler_3d"):
    composed(f"torch.{_name}", f"ops.grid_sample({{input}}, {{grid}}, {_MODES}, {_PADS}, {{align_corners}})",
             ("input", "grid", "interpolation_mode", "padding_mode", "align_corners"),
             target="mindspore.ops.grid_sample",
             note="F.grid_sample with torch's enum codes: mode 0/1/2 = bilinear/nearest/bicubic, padding 0/1/2 = "
                  "zeros/border/reflection" + (" (5-D input: bilinear/nearest)" if _name == "grid_sampler_3d" else ""),
             test=T_VAL)
composed("torch.affine_grid_generator", "ops.affine_grid({theta}, tuple({size}), {align_corners})",
         ("theta", "size", "align_corners"), target="mindspore.ops.affine_grid", test=T_VAL)
composed("torch.conv_tbc", "ops.conv1d({input}.permute(1, 2, 0), {weight}.permute(2, 1, 0), {bias}, 1, 'pad', {pad})"
         ".permute(2, 0, 1)", ("input", "weight", "bias", "pad"), defaults={"pad": "0"}, target="mindspore.ops.conv1d",
         note="time-batch-channel convolution as ops.conv1d on (batch, channel, time)", test=T_VAL)
composed("torch.empty_permuted", "ops.zeros(tuple({size}), {dtype})", ("size", "physical_layout", "dtype"),
         defaults={"dtype": "ms.float32"}, drop=FACTORY_DROP, target="mindspore.ops.zeros",
         note="zeros of the logical shape (empty memory holds no defined values; MindSpore has no strides, so "
              "physical_layout changes nothing)", test=T_VAL)

# ------------------------------------------------------------------ random draws
composed("torch.poisson", "ops.random_poisson(ops.zeros((0,), ms.int32), {input}).astype({input}.dtype)",
         ("input", "generator"), defaults={"generator": "None"}, drop=("generator",),
         target="mindspore.ops.random_poisson", status=DIFFERENCE,
         note="a Poisson draw per rate (MindSpore's stream: same distribution, other numbers); generator= is dropped "
              "(seed with mindspore.set_seed), as for the factories",
         test=T_RANDOM)
composed("torch.binomial", "_ms_compat.binomial({count}, {prob})", ("count", "prob", "generator"),
         defaults={"generator": "None"}, drop=("generator",), status=DIFFERENCE,
         note="count.max() uniform draws per element (PyNative: the count is read on the host); MindSpore's "
              "stream: same distribution, other numbers; generator= is dropped (seed with mindspore.set_seed), as "
              "for the factories", test=T_RANDOM)


def _dropout_family(kind: str):
    def fn(ctx):
        b = ctx.bound
        if b.starred or any(n not in ("input", "p", "train") for n in b.order):
            raise UnsupportedSite("only input, p and train are translated")
        for n in ("input", "p", "train"):
            if not b.has(n):
                raise UnsupportedSite(f"argument {n} is required")
        x, p, train = b.code("input"), b.code("p"), b.code("train")
        if train == "False":
            return ctx.expr(f"({x}, ops.ones_like({x}, dtype=ms.bool_))" if kind == "native" else x)
        if train != "True":
            raise UnsupportedSite(f"train={train} must be a literal True/False")
        if kind in ("alpha", "feature_alpha"):   # the F.alpha_dropout helpers (training=True)
            return ctx.expr(f"_ms_compat.{kind}_dropout({x}, {p}, True)")
        return ctx.expr(f"_ms_compat.{kind}_dropout({x}, {p})")
    return fn


_DROPOUT = {
    "alpha": "alpha dropout: dropped elements take SELU's negative saturation, then an affine map keeps the mean "
             "and variance",
    "feature_alpha": "alpha dropout of whole channels (dims 2...)",
    "feature": "dropout of whole channels (dims 2...), kept ones scaled by 1/(1-p)",
    "native": "(output, keep mask): dropout scaled by 1/(1-p) and its boolean mask",
}
for _kind, _what in _DROPOUT.items():
    rule(f"torch.{_kind}_dropout", f"_ms_compat.{_kind}_dropout", args=("input", "p", "train"), status=DIFFERENCE,
         note=f"{_what}; train=False returns the input" + (" and an all-True mask" if _kind == "native" else "")
              + "; MindSpore's random stream (same distribution, other numbers)",
         test=T_RANDOM)(_dropout_family(_kind))

composed("torch.segment_reduce", "_ms_compat.segment_reduce({data}, {reduce}, {lengths}, {offsets}, {axis}, {initial})",
         ("data", "reduce", "lengths", "indices", "offsets", "axis", "unsafe", "initial"),
         defaults={"lengths": "None", "indices": "None", "offsets": "None", "axis": "0", "unsafe": "False",
                   "initial": "None"}, only={"indices": ("None",)},
         target="mindspore.ops.unsorted_segment_sum",
         note="1-D lengths or offsets along axis 0 with ops.unsorted_segment_sum/prod/max/min (empty segments: 0, "
              "1, -inf, inf, nan for mean, or initial); indices= is a TODO", test=T_VAL)
composed("torch.ctc_loss", "_ms_compat.ctc_loss({log_probs}, {targets}, {input_lengths}, {target_lengths}, {blank}, "
         "('none', 'mean', 'sum')[{reduction}], {zero_infinity})",
         ("log_probs", "targets", "input_lengths", "target_lengths", "blank", "reduction", "zero_infinity"),
         defaults={"blank": "0", "reduction": "0", "zero_infinity": "False"}, target="_ms_compat.ctc_loss",
         note="F.ctc_loss's conversion with torch's reduction codes (0 none, 1 mean, 2 sum); reduction omitted: "
              "per-sample losses, as torch 2.13's binding gives them (its signature says Mean)", test=T_VAL)
