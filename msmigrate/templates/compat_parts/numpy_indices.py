"""A NumPy integer or integer/bool array indexing a tensor (`x[i, pos[0]]`, `pos = np.random.choice(n, 2)`): torch
takes it; MindSpore's tensor indexing refuses NumPy scalars and arrays (msmigrate/numpy_indices.py)."""
import numpy as np
import mindspore as ms


def host_index(value, into=None):
    """The index as MindSpore takes it: a NumPy number as Python's, an array as a tensor (a nested list would
    index several dimensions) when it indexes a tensor (`into`, where the converter could not tell); anything
    else as is."""
    if isinstance(value, np.ndarray) and value.ndim:
        return ms.Tensor(value) if into is None or isinstance(into, ms.Tensor) else value
    return value.item() if isinstance(value, (np.generic, np.ndarray)) else value
