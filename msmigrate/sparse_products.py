"""Matrix products and transposes in a file that builds or multiplies torch sparse matrices.

torch.mm / torch.matmul / Tensor.mm / Tensor.matmul / Tensor.t / torch.t take a sparse COO matrix as well as a dense
one (pyGAT's SpecialSpmmFunction: `torch.matmul(a, b)` and `a.t().matmul(grad_output)` of a
torch.sparse_coo_tensor). The converted sparse matrix is an ms.COOTensor (templates/compat_parts/sparse_coo.py),
which ops.t / ops.matmul refuse. In the files of a project one of whose modules names a sparse constructor or
product (torch.sparse_coo_tensor, torch.sparse.*, torch.spmm, .to_sparse, ._indices(): the matrix may be built in
one module and multiplied in another, pygcn's utils.py and layers.py), those calls go through the sparse-aware
helpers (sparse_or_matmul, sparse_or_mm, sparse_or_t, sparse_to_dense, sparse_or_register_buffer), which give
the dense result for dense operands exactly as before, and `a._indices()` / `a._values()` read a COOTensor (sparse_indices, sparse_values),
`a.indices()` / `a.values()` too, anything else calling its own method (sparse_or_indices, sparse_or_values);
the other projects keep their output unchanged."""
from __future__ import annotations

import re

import libcst as cst

from .callsite import dotted_name

SPARSE_NAMES = re.compile(r"\b(sparse_coo_tensor|sparse\.FloatTensor|sparse\.DoubleTensor|sparse\.mm|spmm|to_sparse"
                     r"|_indices\(\))")
_SWAP = {"_ms_compat.matmul": "_ms_compat.sparse_or_matmul", "_ms_compat.mm": "_ms_compat.sparse_or_mm",
         "ops.t": "_ms_compat.sparse_or_t",
         # a buffer holding a sparse matrix (whisper's alignment_heads, `mask.to_sparse()`)
         "_ms_compat.register_buffer": "_ms_compat.sparse_or_register_buffer"}


def builds_sparse(module: cst.Module, index=None) -> bool:
    """The file names a sparse constructor or product, or another module of its project does."""
    return bool(getattr(index, "builds_sparse", False)) or bool(SPARSE_NAMES.search(module.code))


def retarget(tr, result):
    """`_ms_compat.matmul(a, b)` -> `_ms_compat.sparse_or_matmul(a, b)` (and mm, ops.t) in a sparse file."""
    if not getattr(tr, "_sparse_file", False) or not isinstance(result, cst.Call):
        return result
    func = result.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("_indices", "_values") and not result.args:
        # `a._indices()`: MindSpore's COOTensor has an attribute `_indices` of its own
        tr.uses_compat = True
        return cst.Call(func=tr._render_template("_ms_compat.sparse" + func.attr.value), args=[cst.Arg(func.value)])
    if isinstance(func, cst.Attribute) and func.attr.value in ("indices", "values") and not result.args:
        # `a.indices()` / `a.values()` (a coalesced matrix's, LightGCN's edge dropout): a COOTensor's indices and
        # values are attributes, not methods (TypeError "'Tensor' object is not callable"); anything else (a
        # dict's values()) calls its own method
        tr.uses_compat = True
        return cst.Call(func=tr._render_template("_ms_compat.sparse_or_" + func.attr.value),
                        args=[cst.Arg(func.value)])
    target = _SWAP.get(dotted_name(func) or "")
    if target is None:
        return result
    tr.uses_compat = True
    return result.with_changes(func=tr._render_template(target))
