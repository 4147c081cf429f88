"""`s.numel()` on a receiver the converter cannot type (msmigrate/transformer.py, the unknown-receiver branch)."""
import mindspore as ms


def numel(value):
    """torch's `.numel()` of a tensor or of a torch.Size (`shape.numel()`, `[y.shape for y in ys]`'s items):
    a converted torch.Size is a tuple of ints, which has no numel method (AttributeError before); its numel is
    the product of its entries (1 for the empty shape of a scalar). Anything else: its own numel()."""
    if isinstance(value, (tuple, list)) and not isinstance(value, ms.Tensor):
        out = 1
        for n in value:
            out *= int(n)
        return out
    return value.numel()
