# Softmax without dim (deprecated in torch, still common in older GAN/RL code): torch picks
# the dimension from the input's rank (torch.nn.functional._get_softmax_dim).


def implicit_softmax_dim(ndim):
    """torch's rule: dim 0 for 0-, 1- and 3-D inputs, dim 1 otherwise."""
    return 0 if ndim in (0, 1, 3) else 1


class ImplicitDimSoftmax(nn.Cell):
    """nn.Softmax() / nn.LogSoftmax() built without dim."""

    def __init__(self, log=False):
        super().__init__()
        self.log = log

    def construct(self, x):
        axis = 0 if x.ndim in (0, 1, 3) else 1
        if self.log:
            return log_softmax(x, axis)   # compat_parts/softmax_slices.py
        return softmax(x, axis)
