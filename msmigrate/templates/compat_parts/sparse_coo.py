"""torch's sparse COO matrices as MindSpore COOTensors, and their products with dense matrices.

torch.sparse_coo_tensor(indices, values, size) / torch.sparse.FloatTensor(indices, values, size) keep torch's
entries: a SparseCOOTensor (an ms.COOTensor: indices stored (nnz, 2), torch's are (2, nnz)) with torch's methods
t(), matmul(), mm(), _nnz(); `a._indices()` / `a._values()` are sparse_indices(a) / sparse_values(a) once
converted (sparse_products.py: MindSpore's COOTensor has attributes of those names). Duplicate entries are kept, as torch keeps them until
coalesce(): every product sums them, as torch's does. A sparse-dense product (torch.spmm, torch.sparse.mm,
torch.mm / torch.matmul / `.matmul` / `.mm` of a sparse matrix) is computed entry by entry: each stored value times
the dense row its column selects, summed into the output row of its row index (ops.unsorted_segment_sum) - the
same sum torch forms, nothing densified, differentiable with respect to the values and the dense matrix. Only
2-D matrices with scalar values are converted: any other layout raises MigrationError naming the line."""
import mindspore as ms
import numpy as np
from mindspore import ops


class SparseCOOTensor(ms.COOTensor):
    """A torch sparse COO matrix: an ms.COOTensor with torch's readers."""
    is_sparse = True

    def _nnz(self):
        return self.values.shape[0]

    def dim(self):
        return 2

    def t(self):
        return sparse_t(self)

    def matmul(self, other):
        return sparse_matmul(self, other)

    def mm(self, mat2):
        return sparse_matmul(self, mat2)

    def __matmul__(self, other):
        return sparse_matmul(self, other)

    def __rmatmul__(self, other):
        return sparse_matmul(other, self)


def sparse_coo_tensor(indices, values, size=None, dtype=None, where=""):
    """torch.sparse_coo_tensor(indices, values, size) (dtype: torch.sparse.FloatTensor's float32)."""
    indices = indices if isinstance(indices, ms.Tensor) else ms.Tensor(np.asarray(indices))
    values = values if isinstance(values, ms.Tensor) else ms.Tensor(np.asarray(values))
    if indices.ndim != 2 or indices.shape[0] != 2 or values.ndim != 1:
        _raise_migration_error(f"{where}: only 2-D sparse COO matrices with one value per entry are converted "
                               f"(indices {tuple(indices.shape)}, values {tuple(values.shape)})")
    if size is None:    # torch infers the smallest size that holds every index
        size = tuple(int(m) + 1 for m in indices.asnumpy().max(axis=1)) if indices.shape[1] else (0, 0)
    size = tuple(int(s) for s in size)
    if len(size) != 2:
        _raise_migration_error(f"{where}: only 2-D sparse COO matrices are converted (size {size})")
    if dtype is not None:
        values = values.astype(dtype)
    if _compiling(_draw_probe):
        # a compiled graph builds no subclass of COOTensor (a matrix made inside a train step, LightGCN's edge
        # dropout: AttributeError "'Tensor' object has no attribute 'indices'" at its product): MindSpore's own
        return ms.COOTensor(indices.astype(ms.int64).T, values, size)
    return SparseCOOTensor(indices.astype(ms.int64).T, values, size)


def to_sparse(input, where=""):
    """`x.to_sparse()` of a 2-D tensor: a sparse COO matrix of its nonzero entries in torch's order (coalesced: row
    by row); a sparse matrix as is. Another rank raises MigrationError naming the line."""
    if isinstance(input, ms.COOTensor):
        return input
    if input.ndim != 2:
        _raise_migration_error(f"{where}: only 2-D tensors are converted to sparse COO matrices "
                               f"(shape {tuple(input.shape)})")
    indices = ops.nonzero(input).astype(ms.int64)
    return SparseCOOTensor(indices, ops.gather_nd(input, indices), tuple(input.shape))


def sparse_or_register_buffer(cell, name, tensor, persistent=True):
    """register_buffer in a file that builds sparse matrices: a sparse matrix not saved (persistent=False) is kept as
    the cell's attribute (MindSpore's buffers hold dense tensors only); a saved one raises MigrationError."""
    if isinstance(tensor, ms.COOTensor):
        if persistent:
            _raise_migration_error(f"register_buffer({name!r}, ...) of a sparse matrix saved in the state_dict: not "
                                   "converted (MindSpore's buffers and checkpoints hold dense tensors)")
        object.__setattr__(cell, name, tensor)
        return None
    return register_buffer(cell, name, tensor, persistent)


def sparse_float_tensor(*args, where=""):
    """torch.sparse.FloatTensor(indices, values, size): float32 values."""
    if len(args) not in (2, 3):
        _raise_migration_error(f"{where}: torch.sparse.FloatTensor is converted only as (indices, values[, size])")
    return sparse_coo_tensor(*args, dtype=ms.float32, where=where)


def sparse_indices(input):
    """`a._indices()`: torch's (2, nnz) index layout."""
    return input.indices.T if isinstance(input, ms.COOTensor) else input._indices()


def sparse_values(input):
    """`a._values()`."""
    return input.values if isinstance(input, ms.COOTensor) else input._values()


def sparse_or_indices(input):
    """`a.indices()` in a file that builds sparse matrices: a sparse matrix's indices in torch's (2, nnz) layout
    (MindSpore's COOTensor holds them (nnz, 2), as an attribute); anything else's own indices()."""
    return input.indices.T if isinstance(input, ms.COOTensor) else input.indices()


def sparse_or_values(input):
    """`a.values()` in a file that builds sparse matrices: a sparse matrix's values (an attribute of MindSpore's
    COOTensor); anything else's own values() (a dict's)."""
    return input.values if isinstance(input, ms.COOTensor) else input.values()


def sparse_t(input):
    """The transpose of a sparse matrix: its row and column indices swapped."""
    # an ms.COOTensor (a compiled graph builds no subclass of it)
    return ms.COOTensor(input.indices[:, ::-1], input.values, (input.shape[1], input.shape[0]))


def _sparse_dense(a, b):
    """a (sparse, N x M) times b (dense, M or M x K; the leading dims of a batched b carried as columns)."""
    rows, cols = a.indices[:, 0], a.indices[:, 1]
    if b.ndim == 1:
        return ops.unsorted_segment_sum(a.values * ops.gather(b, cols, 0), rows, a.shape[0])
    if b.ndim > 2:      # (..., M, K): each matrix of the batch
        moved = ops.moveaxis(b, -2, 0)
        flat = moved.reshape(moved.shape[0], -1)
        out = ops.unsorted_segment_sum(ops.expand_dims(a.values, 1) * ops.gather(flat, cols, 0), rows, a.shape[0])
        return ops.moveaxis(out.reshape((a.shape[0],) + moved.shape[1:]), 0, -2)
    return ops.unsorted_segment_sum(ops.expand_dims(a.values, 1) * ops.gather(b, cols, 0), rows, a.shape[0])


def sparse_matmul(input, other):
    """sparse @ dense; dense @ sparse as the transpose of sparse^T @ dense^T (a batched dense operand: each of its
    matrices); sparse @ sparse: the dense values of torch's sparse result."""
    if isinstance(input, ms.COOTensor):
        if isinstance(other, ms.COOTensor):     # torch's result is sparse: here its dense values
            return _sparse_dense(input, _dense_values(other))
        return _sparse_dense(input, other)
    if input.ndim == 1:
        return _sparse_dense(sparse_t(other), input)
    return ops.swapaxes(_sparse_dense(sparse_t(other), ops.swapaxes(input, -1, -2)), -1, -2)


def sparse_to_dense(input):
    """`x.to_dense()` in a file that builds sparse matrices: a sparse matrix's dense values (duplicates summed, as
    torch), a dense tensor as is."""
    if isinstance(input, ms.COOTensor):
        return _dense_values(input)
    return input


def _dense_values(a):
    # summed by a scatter-add: COOTensor.to_dense sums duplicate entries op by op but not in a compiled graph
    if a.values.dtype == ms.bool_:     # no bool kernel: summed as integers (any entry set is True)
        return ops.tensor_scatter_add(ops.zeros(a.shape, ms.int32), a.indices, a.values.astype(ms.int32)) > 0
    return ops.tensor_scatter_add(ops.zeros(a.shape, a.values.dtype), a.indices, a.values)


def spmm(input, mat2):
    """torch.spmm / torch.sparse.mm: a sparse (or dense) matrix times a dense one."""
    if isinstance(input, ms.COOTensor) or isinstance(mat2, ms.COOTensor):
        return sparse_matmul(input, mat2)
    return mm(input, mat2)


def sparse_or_matmul(input, other):
    """torch.matmul in a file that builds sparse matrices (sparse_products.py): a sparse operand's product, else
    matmul (compat_parts/empty_products.py)."""
    if isinstance(input, ms.COOTensor) or isinstance(other, ms.COOTensor):
        return sparse_matmul(input, other)
    return matmul(input, other)


def sparse_or_mm(input, mat2):
    if isinstance(input, ms.COOTensor) or isinstance(mat2, ms.COOTensor):
        return sparse_matmul(input, mat2)
    return mm(input, mat2)


def sparse_or_t(input):
    """torch.t / Tensor.t in a file that builds sparse matrices: a sparse matrix's transpose, else ops.t."""
    if isinstance(input, ms.COOTensor):
        return sparse_t(input)
    return ops.t(input)
