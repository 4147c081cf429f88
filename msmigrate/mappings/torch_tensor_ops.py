"""torch's stacking, splitting, indexing/scatter and small utility functions (torch.hstack, torch.index_add,
torch.kthvalue...) -> `mindspore.ops`, or short compositions where the MindSpore op differs.

Proven by tests/parity/test_torch_tensor_ops.py and test_torch_misc_ops.py (values and dtypes in PyNative and ms.jit, gradients where they
matter). Facts (MindSpore 2.10, CPU, checked there): ops.index_add / ops.index_fill take int32 indices;
ops.scatter needs a tensor source; ops.select is a where-like op (not torch.select); ops.index_add writes into
its input in place; ops.selu's gradient is wrong on CPU (torch.selu: _ms_compat.selu).
"""
from __future__ import annotations

from ..callsite import UnsupportedSite
from ..records import mapping, rule
from .compose import FACTORY_DROP, composed, tensor_args, variadic
from .edge_args import NARROW_NOTE, T_EDGE, narrow_from_end, nonzero_code, split_points_as_list
from .tensor_methods import _SCATTER_NOTE, _scatter

T = "tests/parity/test_torch_tensor_ops.py"
T_SHAPE = f"{T}::test_stack_split"
T_INDEX = f"{T}::test_index_scatter"
T_MISC = "tests/parity/test_torch_misc_ops.py::test_misc"

def _atleast(op: str):
    """torch.atleast_Nd(*tensors): one tensor (or one list of them) is taken as it is, several are a tuple,
    none is () -- ops.atleast_Nd takes a tensor or a sequence, as torch's single argument."""
    def fn(ctx):
        if not ctx.bound.call.args:
            return ctx.expr("()")
        parts = tensor_args(ctx.bound)
        if not any(p.startswith("*") for p in parts):
            return ctx.expr(f"{op}({parts[0]})" if len(parts) == 1 else f"{op}(({', '.join(parts)}))")
        # how many a starred argument holds is known when it runs
        return ctx.expr(f"(lambda *_ms_t: {op}(_ms_t[0] if len(_ms_t) == 1 else _ms_t))({', '.join(parts)})")
    fn.handles_starred = True
    return fn


for _name in ("atleast_1d", "atleast_2d", "atleast_3d"):
    rule(f"torch.{_name}", f"mindspore.ops.{_name}", test=T_SHAPE,
         note="one tensor (or list of tensors) as it is; several tensors, starred ones too, give a tuple as in "
              "torch; no argument gives ()")(_atleast(f"ops.{_name}"))
for _name in ("hstack", "vstack", "dstack", "column_stack", "row_stack"):
    composed(f"torch.{_name}", f"ops.{_name}({{tensors}})", ("tensors",), test=T_SHAPE)
# torch's overloads name the split argument `sections` (an int) or `indices` (split points)
_SPLIT_KEYWORDS = {"sections": "indices_or_sections", "indices": "indices_or_sections"}
for _name in ("vsplit", "dsplit"):
    composed(f"torch.{_name}", f"ops.{_name}({{input}}, {{indices_or_sections}})", ("input", "indices_or_sections"),
             test=T_SHAPE, note="returns a tuple of tensors", keywords=_SPLIT_KEYWORDS)
# torch.hsplit splits a 1-D tensor along its only axis (ops.hsplit raises there)
composed("torch.hsplit", "(ops.hsplit({input}, {indices_or_sections}) if {input}.ndim > 1 else "
         "ops.tensor_split({input}, {indices_or_sections}, axis=0))", ("input", "indices_or_sections"), test=T_EDGE,
         keywords=_SPLIT_KEYWORDS,
         target="mindspore.ops.hsplit", note="returns a tuple of tensors; a 1-D input is split along its only axis, "
         "as torch does (torch also raises when an int does not divide it; this does not)")
composed("torch.tensor_split", "ops.tensor_split({input}, {indices_or_sections}, axis={dim})",
         ("input", "indices_or_sections", "dim"), defaults={"dim": "0"}, test=T_EDGE,
         prepare=split_points_as_list("indices_or_sections"), keywords=_SPLIT_KEYWORDS,
         note="indices_or_sections given as a tensor (torch: a 0-d tensor of sections or 1-D split points) is read "
              "with .tolist()")
composed("torch.rot90", "ops.rot90({input}, {k}, {dims})", ("input", "k", "dims"),
         defaults={"k": "1", "dims": "(0, 1)"}, test=T_SHAPE)
composed("torch.fliplr", "ops.fliplr({input})", ("input",), test=T_SHAPE)
composed("torch.flipud", "ops.flipud({input})", ("input",), test=T_SHAPE)
composed("torch.t", "ops.t({input})", ("input",), test=T_SHAPE, note="0-D and 1-D tensors unchanged, as in torch")
composed("torch.ravel", "ops.reshape({input}, (-1,))", ("input",), test=T_SHAPE)
variadic("torch.block_diag", "ops.block_diag", test=T_SHAPE)
# torch returns a single tensor as it is (ops.cartesian_prod gives it a second axis)
variadic("torch.cartesian_prod", "ops.cartesian_prod", test=T_EDGE, one="{0}",
         note="a single tensor is returned as it is, as torch does")
variadic("torch.chain_matmul", "ops.matmul", join="ops.matmul", test=T_SHAPE,
         note="the matrices multiplied left to right with ops.matmul")
# ops.combinations gives (0,) where there is no combination; torch (0, r)
composed("torch.combinations", "ops.reshape(ops.combinations({input}, {r}, {with_replacement}), (-1, {r}))",
         ("input", "r", "with_replacement"), defaults={"r": "2", "with_replacement": "False"},
         target="mindspore.ops.combinations", note="(k, r) rows, (0, r) where r exceeds the elements, as torch",
         test=T_SHAPE)
for _name in ("tril_indices", "triu_indices"):
    composed(f"torch.{_name}", f"ops.{_name}({{row}}, {{col}}, {{offset}}, dtype={{dtype}})",
             ("row", "col", "offset", "dtype"), defaults={"offset": "0", "dtype": "ms.int64"}, drop=FACTORY_DROP,
             test=T_SHAPE, note="int64 by default, as in torch; device= is dropped")

composed("torch.masked_fill", "ops.masked_fill({input}, {mask}, ops.cast({value}, {input}.dtype))",
         ("input", "mask", "value"), target="mindspore.ops.masked_fill",
         note="the value is cast to the input's dtype, as torch (ops.masked_fill has kernels for a float value of a "
              "float input only)", test=T_INDEX)
# the source rows scattered along dim (index_add / index_copy); a 0-d input runs as a one-element vector
_SCATTER_ROWS = ("_ms_compat.as_vector(lambda _ms_x, _ms_i, _ms_s: ops.tensor_scatter_elements(_ms_x, ops.broadcast_to("
                 "ops.reshape(_ms_i, tuple(-1 if _ms_d == {dim} % _ms_s.ndim else 1 for _ms_d in range(_ms_s.ndim))), "
                 "_ms_s.shape), _ms_s{scale}, {dim}, '{how}'), {input}, {index}, {source})")
_AS_VECTOR = "; a 0-d input is a one-element vector, as torch (templates/compat_parts/scalar_as_vector.py)"
composed("torch.index_add", _SCATTER_ROWS.replace("{scale}", " * {alpha}").replace("{how}", "add"),
         ("input", "dim", "index", "source", "alpha"), defaults={"alpha": "1"},
         target="mindspore.ops.tensor_scatter_elements",
         note="a scatter-add of the source along dim, repeated indices accumulate (ops.index_add writes into its "
              "input in place); alpha scales the source" + _AS_VECTOR, test=T_INDEX)
composed("torch.index_fill", "_ms_compat.as_vector(lambda _ms_x, _ms_i: ops.index_fill(_ms_x, {dim}, "
         "_ms_i.astype(ms.int32), {value}), {input}, {index})",
         ("input", "dim", "index", "value"), target="mindspore.ops.index_fill",
         note="int32 indices (ops.index_fill takes no int64)" + _AS_VECTOR, test=T_INDEX)
rule("torch.scatter", "mindspore.ops.scatter", args=("input", "dim", "index", "src", "reduce"), note=_SCATTER_NOTE,
     test=T_INDEX)(_scatter)    # Tensor.scatter's rule, the input first
composed("torch.scatter_add", "ops.tensor_scatter_elements({input}, {index}, ops.slice({src}, (0,) * {index}.ndim, "
         "{index}.shape), {dim}, 'add')", ("input", "dim", "index", "src"),
         note="src is cut to the index's shape, as torch reads it (MindSpore wants equal shapes)", test=T_INDEX)
composed("torch.select_scatter", "ops.select_scatter({input}, {src}, {dim}, {index})",
         ("input", "src", "dim", "index"), test=T_INDEX)
composed("torch.slice_scatter", "ops.slice_scatter({input}, {src}, {dim}, {start}, {end}, {step})",
         ("input", "src", "dim", "start", "end", "step"),
         defaults={"dim": "0", "start": "None", "end": "None", "step": "1"}, test=T_INDEX)
composed("torch.diagonal_scatter", "ops.diagonal_scatter({input}, {src}, {offset}, {dim1}, {dim2})",
         ("input", "src", "offset", "dim1", "dim2"), defaults={"offset": "0", "dim1": "0", "dim2": "1"},
         test=T_INDEX)
composed("torch.isin", "(_ms_compat.isin_assume_unique({elements}, {test_elements}, {invert}) if {assume_unique} "
         "else ((ops.expand_dims({elements}, -1) == ops.reshape({test_elements}, (-1,))).any(-1) != {invert}))",
         ("elements", "test_elements", "assume_unique", "invert"),
         defaults={"assume_unique": "False", "invert": "False"}, target="mindspore.ops.equal",
         note="composed: each element compared with every test element (memory grows with both sizes); tensors "
              "only; assume_unique=True through _ms_compat.isin_assume_unique (templates/compat_parts/"
              "isin_sorting.py: torch's sorted-neighbour rule, its answer on repeated values too; on the host)",
         test=T_INDEX)
composed("torch.kthvalue", "(lambda _ms_v, _ms_i: (ops.narrow(_ms_v, {dim}, {k} - 1, 1), ops.narrow(_ms_i, {dim}, "
         "{k} - 1, 1).astype(ms.int64)) if {keepdim} else (ops.narrow(_ms_v, {dim}, {k} - 1, 1).squeeze({dim}), "
         "ops.narrow(_ms_i, {dim}, {k} - 1, 1).squeeze({dim}).astype(ms.int64)))(*ops.sort({input}, {dim}))",
         ("input", "k", "dim", "keepdim"), defaults={"dim": "-1", "keepdim": "False"}, target="mindspore.ops.sort",
         note="the k-th smallest from a stable ops.sort: a plain (values, int64 indices) tuple (no .values/.indices "
              "attributes); with ties the index may be another of the equal elements", test=T_INDEX)

# one variable (a 1-D input or one row): the covariance is 0-d and torch returns c / c
composed("torch.corrcoef", "(lambda _ms_c: ops.clamp(_ms_c / _ms_c if _ms_c.ndim == 0 else _ms_c / ops.sqrt(ops.outer("
         "ops.diagonal(_ms_c), ops.diagonal(_ms_c))), -1.0, 1.0))(ops.cov({input}))", ("input",),
         target="mindspore.ops.cov", note="cov / sqrt(outer(var, var)), clipped to [-1, 1] as torch (variables in "
         "rows; one variable, a 1-D input or one row, gives the 0-d c / c, as torch)", test=T_EDGE)
# the spacing: dx, or the differences of the sample points x along dim (a 1-D x lies along dim), as torch
_TRAPEZOID_SPACING = ("((lambda _ms_x: ops.diff(_ms_x, axis={dim}) if _ms_x.ndim > 1 else ops.diff(_ms_x).reshape(tuple("
                      "-1 if _ms_i == {dim} % _ms_y.ndim else 1 for _ms_i in range(_ms_y.ndim))))({x}) "
                      "if {x} is not None else {dx})")
composed("torch.cumulative_trapezoid", "(lambda _ms_y: ops.cumsum((ops.narrow(_ms_y, {dim}, 1, _ms_y.shape[{dim}] - 1)"
         " + ops.narrow(_ms_y, {dim}, 0, _ms_y.shape[{dim}] - 1)) * " + _TRAPEZOID_SPACING + " / 2, {dim}))({y})",
         ("y", "x", "dx", "dim"), defaults={"x": "None", "dx": "1.0", "dim": "-1"},
         target="mindspore.ops.cumsum", note="spacing dx, or the differences of the sample points x (1-D along dim, "
         "or the shape of y), as torch", test=T_MISC)
composed("torch.clone", "{input}.copy()", ("input", "memory_format"), defaults={"memory_format": "None"},
         target="mindspore.Tensor.copy", note="memory_format is dropped (MindSpore has one layout)", test=T_MISC,
         drop=("memory_format",))
composed("torch.numel", "{input}.size", ("input",), target="mindspore.Tensor.size",
         note="a Python int, as in torch", test=T_MISC)
composed("torch.is_nonzero", "bool({input})", ("input",), target="bool", test=T_MISC,
         note="a Python bool of a one-element tensor, as in torch")
composed("torch.is_same_size", "({input}.shape == {other}.shape)", ("input", "other"), target="mindspore.Tensor.shape",
         test=T_MISC)
composed("torch.detach", "ops.stop_gradient({input})", ("input",), test=T_MISC,
         note="the value without a gradient path, as in torch")
composed("torch.frobenius_norm", "ops.vector_norm({input}, 2, {dim}, {keepdim})", ("input", "dim", "keepdim"),
         defaults={"keepdim": "False"}, test=T_MISC)
composed("torch.nuclear_norm", "ops.matrix_norm({input}, 'nuc', {dim}, {keepdim})", ("input", "dim", "keepdim"),
         defaults={"keepdim": "False"}, absent={"dim": "ops.matrix_norm({input}, 'nuc')"}, test=T_MISC)
mapping("torch.selu", "_ms_compat.selu", args=("input",), target_args=("input",), test=T_MISC,
        note="_ms_compat.selu: scale * (x if x > 0 else alpha * (exp(x) - 1)) with torch's gradient at 0; "
             "ops.selu's gradient is wrong on CPU")
composed("torch.celu", "_ms_compat.celu({input}, {alpha})", ("input", "alpha"), defaults={"alpha": "1.0"},
         test=T_MISC, note="ops.celu, and torch's formula in float64 for a float64 input (MindSpore's kernel computes "
                           "it in float32)")
composed("torch.hardshrink", "ops.hardshrink({input}, {lambd})", ("input", "lambd"), defaults={"lambd": "0.5"},
         test=T_MISC)
composed("torch.cosine_similarity", "ops.cosine_similarity({x1}, {x2}, {dim}, {eps})", ("x1", "x2", "dim", "eps"),
         defaults={"dim": "1", "eps": "1e-08"}, test=T_MISC)
composed("torch.pdist", "ops.pdist({input}, float({p}))", ("input", "p"), defaults={"p": "2"}, test=T_MISC,
         note="p as a float (ops.pdist refuses an int p)")
composed("torch.unique_consecutive", "ops.unique_consecutive({input}, {return_inverse}, {return_counts}, {dim})",
         ("input", "return_inverse", "return_counts", "dim"),
         defaults={"return_inverse": "False", "return_counts": "False", "dim": "None"},
         literal=("return_inverse", "return_counts"),
         note="values, and the int64 inverse indices and counts when asked (literal flags); dim= collapses runs of "
              "equal slices along dim, as torch",
         test="tests/parity/test_index_dtypes.py::test_index_dtypes")

composed("torch.floor_divide", "ops.floor_divide({input}, {other})", ("input", "other"), test=T_MISC,
         note="rounds toward negative infinity, as torch")


def _nonzero(ctx):
    b = ctx.bound
    if b.starred or not b.has("input") or any(n not in ("input", "as_tuple") for n in b.order):
        raise UnsupportedSite("only input and as_tuple are translated")
    as_tuple = b.code("as_tuple") if b.has("as_tuple") else "False"
    if as_tuple not in ("True", "False"):
        raise UnsupportedSite(f"as_tuple={as_tuple} must be a literal True/False (it decides what is returned)")
    return ctx.expr(nonzero_code(b.code("input"), as_tuple == "True"))


rule("torch.nonzero", "mindspore.ops.nonzero", args=("input", "as_tuple"),
     note="int64 indices, one row each; as_tuple=True: the columns of that result, one int64 tensor per "
          "dimension (ops.nonzero(as_tuple=True) has no CPU kernel); a 0-d input gives torch's (n, 0) rows",
     test="tests/parity/test_index_dtypes.py::test_index_dtypes")(_nonzero)
composed("torch.unbind", "ops.unbind({input}, {dim})", ("input", "dim"), defaults={"dim": "0"}, test=T_SHAPE)
composed("torch.vdot", "ops.sum({input} * {other})", ("input", "other"), target="mindspore.ops.sum",
         note="real 1-D tensors (complex input would need the conjugate)", test=T_MISC)
composed("torch.select", "ops.squeeze(ops.narrow({input}, {dim}, {index} % {input}.shape[{dim}], 1), {dim})",
         ("input", "dim", "index"), target="mindspore.ops.narrow", note="an int index, negative from the end",
         test=T_INDEX)
composed("torch.take_along_dim", "_ms_compat.take_along_dim({input}, {indices}, {dim})", ("input", "indices", "dim"),
         absent={"dim": "ops.gather_elements(ops.reshape({input}, (-1,)), 0, ops.reshape({indices}, (-1,)))"},
         target="mindspore.ops.gather_elements",
         note="input and indices broadcast against each other outside dim, as torch (ops.gather_elements alone "
              "needs equal shapes)", test=T_INDEX)
composed("torch.index_copy", _SCATTER_ROWS.replace("{scale}", "").replace("{how}", "none"),
         ("input", "dim", "index", "source"), target="mindspore.ops.tensor_scatter_elements",
         note="a scatter of the source rows along dim" + _AS_VECTOR, test=T_INDEX)
composed("torch.scalar_tensor", "ms.Tensor({s}, {dtype})", ("s", "dtype"), defaults={"dtype": "ms.float32"},
         drop=FACTORY_DROP, target="mindspore.Tensor", note="float32 by default, as torch", test=T_MISC)
composed("torch.unflatten", "(lambda _ms_x, _ms_d: ops.reshape(_ms_x, _ms_x.shape[:_ms_d] + tuple({sizes}) + "
         "_ms_x.shape[_ms_d + 1:]))({input}, {dim} % {input}.ndim)", ("input", "dim", "sizes"),
         target="mindspore.ops.reshape", test=T_SHAPE)
composed("torch.range", "ops.arange({start}, {end} + {step} * 0.5, {step}).astype({dtype})",
         ("start", "end", "step", "dtype"), defaults={"step": "1", "dtype": "ms.float32"}, drop=FACTORY_DROP,
         target="mindspore.ops.arange", note="end included, float32 by default, as the deprecated torch.range",
         test=T_MISC)
for _name in ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"):
    _extra = {"hamming_window": ("alpha", "beta"), "kaiser_window": ("beta",)}.get(_name, ())
    _defaults = {"periodic": "True", "dtype": "ms.float32", "alpha": "0.54", "beta": "12.0" if _name ==
                 "kaiser_window" else "0.46"}
    _length = "ms.Tensor({window_length})" if _name in ("bartlett_window", "blackman_window") else "{window_length}"
    # kaiser/hann/hamming of length 0 or 1 come back float64 whatever dtype= says: cast
    _cast = "" if "ms.Tensor" in _length else ".astype({dtype})"
    composed(f"torch.{_name}", f"ops.{_name}({_length}, {{periodic}}, "
             + "".join(f"{{{a}}}, " for a in _extra) + "dtype={dtype})" + _cast,
             ("window_length", "periodic") + _extra + ("dtype",),
             defaults={k: v for k, v in _defaults.items() if k in ("periodic", "dtype") + _extra},
             drop=FACTORY_DROP, test=T_MISC, note="float32 by default, periodic as torch" + (
                 " (cast: MindSpore's window of length 0 or 1 is float64)" if _cast else "") + (
                 "; the length passed as a Tensor (this op takes no int)" if "ms.Tensor" in _length else ""))
composed("torch.geqrf", "ops.geqrf({input})", ("input",), test=T_MISC,
         note="a plain (a, tau) tuple, LAPACK's layout as torch")
composed("torch.orgqr", "ops.orgqr({input}, {tau})", ("input", "tau"), test=T_MISC)
composed("torch.ormqr", "_ms_compat.ormqr({input}, {input2}, {input3}, {left}, {transpose})",
         ("input", "input2", "input3", "left", "transpose"), defaults={"left": "True", "transpose": "False"},
         target="mindspore.ops.orgqr", test=T_MISC,
         note="ops.ormqr has no CPU kernel in MindSpore 2.10: the full Q formed by ops.orgqr (the reflectors padded "
              "to a square) and multiplied with ops.matmul (templates/compat_parts/linalg_compose.py)")
composed("torch.triangular_solve", "(ops.matrix_solve(ops.triu({A}) if {upper} else ops.tril({A}), {b}), {A})",
         ("b", "A", "upper", "transpose", "unitriangular"),
         defaults={"upper": "True", "transpose": "False", "unitriangular": "False"},
         only={"transpose": ("False",), "unitriangular": ("False",)}, target="mindspore.ops.matrix_solve",
         keywords={"input": "b"},   # torch's keyword (its docs say b, which torch refuses)
         note="(solution, A) as torch returns them; transpose=/unitriangular=True are TODO", test=T_MISC)

# torch's *_copy ops (and unsafe_* twins): MindSpore ops always return new tensors, so each is its plain op
for _name, _template, _args, _defaults in (
        ("diagonal_copy", "ops.diagonal({input}, {offset}, {dim1}, {dim2})", ("input", "offset", "dim1", "dim2"),
         {"offset": "0", "dim1": "0", "dim2": "1"}),
        ("permute_copy", "ops.permute({input}, {dims})", ("input", "dims"), {}),
        ("t_copy", "ops.t({input})", ("input",), {}),
        ("transpose_copy", "ops.swapaxes({input}, {dim0}, {dim1})", ("input", "dim0", "dim1"), {}),
        ("unsqueeze_copy", "ops.unsqueeze({input}, {dim})", ("input", "dim"), {}),
        ("squeeze_copy", "ops.squeeze({input}, {dim})", ("input", "dim"), {"dim": "None"}),
        ("expand_copy", "ops.broadcast_to({input}, {size})", ("input", "size"), {}),
        ("detach_copy", "ops.stop_gradient({input})", ("input",), {}),
        ("alias_copy", "ops.deepcopy({input})", ("input",), {}),
        ("view_copy", "ops.reshape({input}, {size})", ("input", "size"), {}),
        ("select_copy", "ops.squeeze(ops.narrow({input}, {dim}, {index} % {input}.shape[{dim}], 1), {dim})",
         ("input", "dim", "index"), {}),
        ("unbind_copy", "ops.unbind({input}, {dim})", ("input", "dim"), {"dim": "0"}),
        ("split_copy", "ops.split({tensor}, {split_size}, {dim})", ("tensor", "split_size", "dim"), {"dim": "0"}),
        ("split_with_sizes", "ops.split({input}, {split_sizes}, {dim})", ("input", "split_sizes", "dim"),
         {"dim": "0"}),
        ("split_with_sizes_copy", "ops.split({input}, {split_sizes}, {dim})", ("input", "split_sizes", "dim"),
         {"dim": "0"}),
        ("unsafe_split", "ops.split({tensor}, {split_size}, {dim})", ("tensor", "split_size", "dim"), {"dim": "0"}),
        ("unsafe_split_with_sizes", "ops.split({input}, {split_sizes}, {dim})", ("input", "split_sizes", "dim"),
         {"dim": "0"}),
        ("unsafe_chunk", "ops.chunk({input}, {chunks}, {dim})", ("input", "chunks", "dim"), {"dim": "0"})):
    composed(f"torch.{_name}", _template, _args, defaults=_defaults, test="tests/parity/test_torch_copy_ops.py::test_copy_variants",
             note="a new tensor, as the *_copy form returns" if "copy" in _name else "returns a tuple of tensors")
mapping("torch.narrow_copy", "mindspore.ops.narrow", args=("input", "dim", "start", "length"),
        target_args=("input", "axis", "start", "length"), rename={"dim": "axis"},
        rule=narrow_from_end(lambda ctx: ctx.code("input")), test=T_EDGE,
        note="a new tensor, as the *_copy form returns; " + NARROW_NOTE)
