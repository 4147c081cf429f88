"""Sliding patches with torch's arguments: F.unfold / F.fold and the nn.Unfold / nn.Fold
layers. MindSpore's ops.unfold / ops.fold take batched input only and fold wants its
output size as a tensor; torch also takes one unbatched sample."""
import mindspore as ms
from mindspore import nn, ops


def _pair_size(size):
    return (size, size) if isinstance(size, int) else tuple(size)


def _int_sizes(size):
    """A size torch's nn.Unfold/Fold take as a tensor (torch.LongTensor([3, 3])): the ints ops.unfold takes."""
    return tuple(int(v) for v in size.asnumpy().reshape(-1)) if isinstance(size, ms.Tensor) else size


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.unfold: (N, C, H, W) -> (N, C*kh*kw, L); (C, H, W) -> (C*kh*kw, L)."""
    if input.ndim == 4 and input.shape[0] == 0:     # no samples: im2col rejects it, torch gives (0, C*kh*kw, L)
        return on_empty_batch(unfold, input, kernel_size, dilation, padding, stride)
    if input.ndim == 3:
        return ops.unfold(input.expand_dims(0), kernel_size, dilation, padding, stride)[0]
    return ops.unfold(input, kernel_size, dilation, padding, stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.fold: (N, C*kh*kw, L) -> (N, C, H, W); (C*kh*kw, L) -> (C, H, W)."""
    size = ms.Tensor(_pair_size(output_size), ms.int32)
    if input.ndim == 2:
        return ops.fold(input.expand_dims(0), size, kernel_size, dilation, padding, stride)[0]
    return ops.fold(input, size, kernel_size, dilation, padding, stride)


class Unfold(nn.Cell):
    """torch.nn.Unfold (MindSpore's nn.Unfold extracts image patches in another layout)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = (
            _int_sizes(v) for v in (kernel_size, dilation, padding, stride))

    def construct(self, input):
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(nn.Cell):
    """torch.nn.Fold."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = _pair_size(_int_sizes(output_size))
        self.kernel_size, self.dilation, self.padding, self.stride = (
            _int_sizes(v) for v in (kernel_size, dilation, padding, stride))

    def construct(self, input):
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)
