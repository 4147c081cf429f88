"""Channel-wise dropout with torch's rules (Dropout1d/2d/3d, F.dropout1d/2d/3d).

torch zeroes whole channels: one Bernoulli draw per (sample, channel), broadcast over the
spatial dimensions, kept values scaled by 1/(1-p). Which dimensions count as (N, C) depends
on the input's rank exactly as in torch 2.13 (MindSpore's layers take one rank each):
- dropout1d: (N, C, L) or unbatched (C, L); other ranks raise;
- dropout2d: the first two dimensions of any input of rank >= 2 (a 3-D input is (N, C, L),
  as torch does with a warning);
- dropout3d: (N, C, D, H, W); any other rank is taken as one unbatched sample.
"""
import mindspore as ms
from mindspore import nn, ops


def _feature_dropout(x, p, training):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return x
    if x.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1.0:
        return x * 0.0
    keep = ops.dropout(ops.ones(x.shape[:2] + (1,) * (x.ndim - 2), x.dtype), p=p)   # 0 or 1/(1-p)
    return x * keep


def dropout1d(input, p=0.5, training=True, inplace=False):
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input")
    if input.ndim == 2:
        return _feature_dropout(input.expand_dims(0), p, training)[0]
    return _feature_dropout(input, p, training)


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training)


def dropout3d(input, p=0.5, training=True, inplace=False):
    if input.ndim != 5:
        return _feature_dropout(input.expand_dims(0), p, training)[0]
    return _feature_dropout(input, p, training)


class _ChannelDropout(nn.Cell):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0.0 or p > 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p


class Dropout1d(_ChannelDropout):
    """torch.nn.Dropout1d: (N, C, L) or (C, L)."""

    def construct(self, input):
        return dropout1d(input, self.p, self.training)


class Dropout2d(_ChannelDropout):
    """torch.nn.Dropout2d: channels are the second dimension of any input of rank >= 2."""

    def construct(self, input):
        return dropout2d(input, self.p, self.training)


class Dropout3d(_ChannelDropout):
    """torch.nn.Dropout3d: (N, C, D, H, W) or (C, D, H, W)."""

    def construct(self, input):
        return dropout3d(input, self.p, self.training)
