"""nn.BatchNorm1d/2d/3d(momentum=None): torch's cumulative moving average, the n-th training batch weighing 1/n in
the running statistics (num_batches_tracked counts the batches, and loads torch's count). MindSpore's BatchNorm
kernel fixes its momentum when it is built, so a training step computes the batch statistics itself (the input
gradient follows by autodiff); eval, and track_running_stats=False, are MindSpore's own layer."""
import mindspore as ms
from mindspore import nn, ops


def _cumulative_batch_norm(base):
    class CumulativeBatchNorm(base):
        def __init__(self, num_features, eps=1e-05, momentum=None, affine=True, track_running_stats=True,
                     device=None, dtype=None):
            if momentum is not None:
                raise MigrationError(f"Cumulative{base.__name__} is torch's momentum=None, got {momentum}")
            super().__init__(num_features, eps=eps, affine=affine,
                             use_batch_statistics=None if track_running_stats else True)
            self.torch_affine = bool(affine)   # affine_off reads it
            self.cumulative = bool(track_running_stats)
            if self.cumulative:
                self.num_batches_tracked = ms.Parameter(ms.Tensor(0, ms.int64), name="num_batches_tracked",
                                                        requires_grad=False)

        def construct(self, x):
            if not (self.cumulative and self.training):
                return base.construct(self, x)   # super() recurses in GRAPH mode here
            axes = (0,) + tuple(range(2, x.ndim))
            mean = x.mean(axes, True)
            var = ((x - mean) ** 2).mean(axes, True)
            count = 1
            for n in axes:
                count *= x.shape[n]
            batches = self.num_batches_tracked + 1
            ops.assign(self.num_batches_tracked, batches)
            weight = 1.0 / batches.astype(self.moving_mean.dtype)
            batch_mean = ops.stop_gradient(mean.reshape(-1))
            batch_var = ops.stop_gradient(var.reshape(-1)) * (count / max(count - 1, 1))   # unbiased, as torch
            ops.assign(self.moving_mean, self.moving_mean + (batch_mean - self.moving_mean) * weight)
            ops.assign(self.moving_variance, self.moving_variance + (batch_var - self.moving_variance) * weight)
            shape = (1, -1) + (1,) * (x.ndim - 2)
            return (x - mean) / ops.sqrt(var + self.eps) * self.gamma.reshape(shape) + self.beta.reshape(shape)
    CumulativeBatchNorm.__name__ = CumulativeBatchNorm.__qualname__ = f"Cumulative{base.__name__}"
    return CumulativeBatchNorm


CumulativeBatchNorm1d = _cumulative_batch_norm(nn.BatchNorm1d)
CumulativeBatchNorm2d = _cumulative_batch_norm(nn.BatchNorm2d)


class CumulativeBatchNorm3d(nn.BatchNorm3d):
    """MindSpore's BatchNorm3d normalises a (N, C, D*H, W) view with its bn2d child: a cumulative one."""

    def __init__(self, num_features, eps=1e-05, momentum=None, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        super().__init__(num_features, eps=eps, affine=affine)
        self.bn2d = CumulativeBatchNorm2d(num_features, eps, momentum, affine, track_running_stats)
        self.torch_affine = self.bn2d.torch_affine = bool(affine)
