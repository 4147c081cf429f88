"""torch's sparse COO matrices: construction (torch.sparse_coo_tensor, the legacy torch.sparse.FloatTensor) and the
sparse-dense products (torch.spmm, torch.sparse.mm) -> templates/compat_parts/sparse_coo.py (an ms.COOTensor holding
torch's entries; products summed entry by entry, nothing densified). torch.mm / torch.matmul / Tensor.t in a file
that builds or multiplies sparse matrices go through the same helpers (sparse_products.py)."""
from ..records import rule
from ..callsite import UnsupportedSite

T = "tests/test_heldout17_programs.py::"
T_GCN = T + "test_graph_convolution_over_a_sparse_adjacency"
T_FUNCTION = T + "test_custom_function_over_a_sparse_coo_matrix"
NOTE = ("an ms.COOTensor with torch's entries (duplicates kept, as torch keeps them until coalesce()); 2-D "
        "matrices with one value per entry only (any other raises MigrationError naming the line); "
        "templates/compat_parts/sparse_coo.py")


def _where(ctx):
    ctx.bound.set("where", repr(f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"))
    ctx.bound.positional["where"] = False
    ctx.tr.uses_compat = True


def _coo(ctx):
    b = ctx.bound
    if b.starred:
        raise UnsupportedSite("*args/**kwargs cannot be translated argument by argument")
    for name in ("device", "pin_memory", "requires_grad", "check_invariants", "is_coalesced", "layout", "out"):
        code = b.code(name) if b.has(name) else None
        if name == "requires_grad" and code not in (None, "False"):
            raise UnsupportedSite("requires_grad=True of a sparse tensor: its values are not trained as a Parameter")
        if name == "out" and code not in (None, "None"):
            raise UnsupportedSite("out= of a sparse tensor")
        if b.has(name):
            b.remove(name)
    _where(ctx)
    return None


rule("torch.sparse_coo_tensor", "_ms_compat.sparse_coo_tensor",
     args=("indices", "values", "size", "dtype", "device", "pin_memory", "requires_grad", "check_invariants",
           "is_coalesced", "layout", "out"),
     target_args=("indices", "values", "size", "dtype", "where"), note=NOTE, test=T_FUNCTION)(_coo)


def _float_tensor(ctx):
    _where(ctx)
    return None


rule("torch.sparse.FloatTensor", "_ms_compat.sparse_float_tensor", args=("indices", "values", "size"),
     target_args=("indices", "values", "size", "where"),
     note="float32 values; " + NOTE, test=T_GCN)(_float_tensor)


def _product(ctx):
    b = ctx.bound
    for name in ("out", "out_dtype"):
        if b.has(name) and b.code(name) != "None":
            raise UnsupportedSite(f"{name}= of a sparse product is not translated")
        if b.has(name):
            b.remove(name)
    ctx.tr.uses_compat = True
    return None


for _name in ("torch.spmm", "torch.sparse.mm"):
    rule(_name, "_ms_compat.spmm", args=("input", "mat2", "out", "out_dtype"), target_args=("input", "mat2"),
         note="a sparse matrix (compat_parts/sparse_coo.py) times a dense one: each stored value times the dense row "
              "its column selects, summed into its row (ops.unsorted_segment_sum: torch's sum, differentiable in the "
              "values and the dense matrix); two dense matrices: mm", test=T_GCN)(_product)


def _to_sparse(ctx):
    """`x.to_sparse()` (whisper's alignment_heads buffer): a 2-D tensor's nonzero entries as a sparse matrix."""
    b = ctx.bound
    if b.starred:
        raise UnsupportedSite("*args/**kwargs cannot be translated argument by argument")
    for name in ("sparse_dim", "layout", "blocksize", "dense_dim"):
        if b.has(name) and b.code(name) != "None":
            raise UnsupportedSite(f"to_sparse({name}=...): only the COO matrix of a 2-D tensor is converted")
    from .tensor_methods import _arg
    ctx.tr.uses_compat = True
    where = repr(f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}")
    return ctx.expr(f"_ms_compat.to_sparse({_arg(ctx)}, {where})")


rule("Tensor.to_sparse", None, args=("sparse_dim", "layout", "blocksize", "dense_dim"),
     note="the nonzero entries of a 2-D tensor, in torch's order (coalesced); " + NOTE,
     test="tests/test_heldout60_programs.py::test_sparse_buffer_of_a_mask")(_to_sparse)
