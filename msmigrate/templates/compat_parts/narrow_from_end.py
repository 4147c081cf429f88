"""torch.narrow / Tensor.narrow / narrow_copy: torch's start may be negative (counted from the end, in
[-size, size]) or a 0-d tensor; ops.narrow takes a non-negative Python int only (a negative start raises)."""
from mindspore import ops


def narrow(input, dim, start, length):
    """torch.narrow: the start read as an int, a negative one counted from the end of `dim`."""
    start = int(start)
    return ops.narrow(input, dim, start + input.shape[dim] if start < 0 else start, int(length))
