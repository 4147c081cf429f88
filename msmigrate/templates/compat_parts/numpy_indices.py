"""A NumPy integer or integer/bool array indexing a tensor (`x[i, pos[0]]`, `pos = np.random.choice(n, 2)`): torch
takes it; MindSpore's tensor indexing refuses NumPy scalars and arrays (msmigrate/numpy_indices.py)."""
import numpy as np
import mindspore as ms


def host_index(value):
    """The same index as MindSpore takes it: a NumPy number as Python's, an array as a tensor (a nested list
    would index several dimensions), anything else as is; NumPy indexes with them as with the NumPy value."""
    if isinstance(value, np.ndarray) and value.ndim:
        return ms.Tensor(value)
    return value.item() if isinstance(value, (np.generic, np.ndarray)) else value
