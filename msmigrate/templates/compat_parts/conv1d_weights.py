"""A 1-d convolution's weight in torch's layout (msmigrate/conv1d_weights.py): MindSpore's is (out, in, 1, k),
torch's (out, in, k)."""
import numpy as np
from mindspore import ops


def conv1d_weight_read(w):
    """torch's 3-D weight (a new tensor, as torch's reads of it return)."""
    return ops.squeeze(w, 2)


def conv1d_weight_value(v):
    """A value written into the weight, torch's layout into MindSpore's: a value of 2 or more dims gets the axis
    (one that broadcasts to (out, in, k) then broadcasts to (out, in, 1, k)); a number or a 1-d value is as is."""
    if getattr(v, "ndim", 0) < 2:
        return v
    return np.expand_dims(v, -2) if isinstance(v, np.ndarray) else ops.expand_dims(v, -2)
