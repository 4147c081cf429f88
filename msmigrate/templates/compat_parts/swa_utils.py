"""torch.optim.swa_utils: AveragedModel (a copy of a model whose weights average the model's: SWA's running mean,
or an exponential moving average through get_ema_multi_avg_fn / get_ema_avg_fn), the average functions, and
update_bn (the BatchNorm statistics recomputed over a loader as the cumulative average torch's momentum=None
keeps). The averaged tensors are written in place (write_into: ops.assign into a Parameter), so a step compiled
before reads the new values, as torch's copy_/_foreach_lerp_ change them."""
import copy

import mindspore as ms
from mindspore import nn, ops


def get_ema_multi_avg_fn(decay=0.999):
    """torch's: the averaged tensors lerped towards the model's, weight 1 - decay (in place)."""
    def ema_update(ema_param_list, current_param_list, _):
        for p_ema, p_model in zip(ema_param_list, current_param_list):
            if ops.is_floating_point(p_ema) or ops.is_complex(p_ema):
                write_into(p_ema, _foreach_lerp(p_ema, p_model, 1 - decay))
            else:
                write_into(p_ema, p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """torch's: the running mean, each averaged tensor lerped towards the model's with weight 1 / (n + 1)."""
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        n = float(num_averaged.asnumpy()) if isinstance(num_averaged, ms.Tensor) else float(num_averaged)
        for p_avg, p_model in zip(averaged_param_list, current_param_list):
            if ops.is_floating_point(p_avg) or ops.is_complex(p_avg):
                write_into(p_avg, _foreach_lerp(p_avg, p_model, 1 / (n + 1)))
            else:
                write_into(p_avg, p_avg + (p_model - p_avg) / (n + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(nn.Cell):
    """torch.optim.swa_utils.AveragedModel: `module` is a deep copy of the model; update_parameters(model) averages
    its parameters (and, with use_buffers, its buffers) with the model's by avg_fn / multi_avg_fn (default: the
    running mean, as torch's on CPU), the first call copying them; without use_buffers the buffers follow the
    model's. n_averaged counts the calls. Calling it runs the copy."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        register_buffer(self, "n_averaged", ms.Tensor(0, ms.int64))   # a buffer, as torch's: parameters() leave it out
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def construct(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _averaged(self, model):
        if self.use_buffers:
            return list(parameters(model)) + list(buffers(model))
        return list(parameters(model))

    def update_parameters(self, model):
        mine, theirs = self._averaged(self.module), [ops.stop_gradient(p) for p in self._averaged(model)]
        n = int(self.n_averaged.asnumpy())
        if n == 0:
            for p_averaged, p_model in zip(mine, theirs):
                write_into(p_averaged, p_model)
        else:
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(mine, theirs, ms.Tensor(n, ms.int64))
            else:
                avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                count = ms.Tensor(n, ms.int64)
                for p_averaged, p_model in zip(mine, theirs):
                    write_into(p_averaged, avg_fn(p_averaged, p_model, count))
        if not self.use_buffers:   # the buffers keep the model's, as torch's
            for b_swa, b_model in zip(buffers(self.module), buffers(model)):
                write_into(b_swa, ops.stop_gradient(b_model))
        ops.assign(self.n_averaged, ms.Tensor(n + 1, ms.int64))


def _batch_norms(model):
    return [c for _, c in model.cells_and_names() if isinstance(c, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d))]


def update_bn(loader, model, device=None):
    """torch's update_bn: each BatchNorm's running statistics reset, then the cumulative average over the loader's
    batches (momentum None: batch k weighs 1/k), in training mode; the momenta and the mode restored after. The
    batches run op by op (the momentum is rebuilt into the layer's kernel per batch, which a compiled graph would
    keep from its first batch)."""
    norms = _batch_norms(model)
    if not norms:
        return
    kept = []
    for bn in norms:
        inner = getattr(bn, "bn2d", bn)
        kept.append((bn, inner, bn.momentum, inner.momentum, inner.bn_train))
        ops.assign(inner.moving_mean, ops.zeros_like(inner.moving_mean))
        ops.assign(inner.moving_variance, ops.ones_like(inner.moving_variance))
        if hasattr(bn, "num_batches_tracked"):
            ops.assign(bn.num_batches_tracked, ops.zeros_like(bn.num_batches_tracked))
    was_training = model.training
    mode = ms.get_context("mode")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        model.set_train(True)
        for k, batch in enumerate(loader, 1):
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            for bn in norms:
                if not getattr(bn, "cumulative", False):   # CumulativeBatchNorm averages by itself
                    _momentum_rebuilt(bn, 1.0 / k)
            model(batch)
    finally:
        for bn, inner, outer_m, inner_m, kernel in kept:
            bn.momentum, inner.momentum, inner.bn_train = outer_m, inner_m, kernel
        model.set_train(was_training)
        ms.set_context(mode=mode)
