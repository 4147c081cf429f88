"""torch.nn.utils.weight_norm / spectral_norm on a MindSpore cell. torch replaces the parameter by new ones
(weight_g/weight_v; weight_orig with the buffers weight_u/weight_v) and recomputes the weight in a forward
pre-hook. Here the cell's class becomes a subclass whose `weight` is a property computing it from those
parameters: every read of self.weight in construct sees the derived weight, in PyNative and GRAPH mode, and
gradients reach the new parameters. The parameters keep torch's state_dict names, so torch weights load."""
import mindspore as ms
from mindspore import nn, ops


def _reparam_norm_except_dim(v, dim):
    """torch's norm_except_dim(v, 2, dim): the 2-norm over every axis but `dim` (dim -1: the whole tensor)."""
    if dim == -1:
        return ops.sqrt((v * v).sum())
    axes = tuple(i for i in range(v.ndim) if i != dim)
    return ops.sqrt((v * v).sum(axis=axes, keepdims=True))


def _reparam_param_name(weight, name, suffix):
    """The new parameter's full name: the old one's prefix (a cell already inside a network keeps its path)."""
    full = getattr(weight, "name", name) or name
    return (full[:-len(name)] if full.endswith(name) else "") + name + suffix


def _reparam_conv1d(module, name):
    """MindSpore's Conv1d/Conv1dTranspose weight has an extra axis 2 (out, in, 1, k): the new parameters keep
    torch's 3-D layout (torch's weights load as they are, dim counts torch's axes) and the weight read gets the
    axis back."""
    return name == "weight" and isinstance(module, (nn.Conv1d, nn.Conv1dTranspose))


def _reparam_swap_class(module, members):
    """The cell's class replaced by a subclass with `members` (the weight property); remove_* undoes it."""
    base = type(module)
    below = next((c for c in base.__mro__ if c.__qualname__.startswith("any_batch.")), None)
    if below is not None and getattr(module, "grow_end", None) is None and getattr(module, "mode_pads", None) is None:
        # its construct calls the MindSpore layer's by name, which a compiled graph runs without the property (with
        # the weight as it was when the graph compiled, silently); so does an adapter's over it (_ms_compat.Conv1d and
        # ConvTranspose1d taking torch's arguments at run time: melgan's `weight_norm(nn.Conv1d(*args, **kwargs))`):
        # the layer itself (a transposed conv growing rows past its padding keeps it: _grow_end; a convolution
        # padding by mode too: mode_pads)
        base = below.__bases__[0]
    module.__class__ = type(base.__name__, (base,), members)


def weight_norm(module, name="weight", dim=0):
    """torch.nn.utils.weight_norm: weight = weight_g * weight_v / ||weight_v|| (norm over all axes but dim;
    dim=None: the whole tensor)."""
    weight = getattr(module, name)
    if not isinstance(weight, ms.Parameter):
        raise TypeError(f"weight_norm: {type(module).__name__}.{name} is not a Parameter")
    conv1d = _reparam_conv1d(module, name)
    value = weight.value().squeeze(2) if conv1d else weight.value()
    dim = -1 if dim is None else dim
    if dim < -1:
        dim += value.ndim
    g = _reparam_norm_except_dim(value, dim)
    v = value.copy()
    delattr(module, name)
    setattr(module, name + "_g", ms.Parameter(g, name=_reparam_param_name(weight, name, "_g")))
    setattr(module, name + "_v", ms.Parameter(v, name=_reparam_param_name(weight, name, "_v")))

    def derived(self):
        v = getattr(self, name + "_v")
        w = v * (getattr(self, name + "_g") / _reparam_norm_except_dim(v, dim))
        return w.expand_dims(2) if conv1d else w
    _reparam_swap_class(module, {name: property(derived), "_ms_weight_norm": (name, dim)})
    return module


def remove_weight_norm(module, name="weight"):
    """torch.nn.utils.remove_weight_norm: the current derived weight becomes the Parameter again."""
    if getattr(type(module), "_ms_weight_norm", (None,))[0] != name:
        raise ValueError(f"weight_norm of '{name}' not found in {module}")
    weight = getattr(module, name)
    full = _reparam_param_name(getattr(module, name + "_v"), name + "_v", "")[:-len("_v")]
    delattr(module, name + "_g")
    delattr(module, name + "_v")
    module.__class__ = type(module).__bases__[0]
    setattr(module, name, ms.Parameter(weight, name=full))
    return module


def _sn_matrix(weight, dim):
    if dim != 0:
        weight = ops.moveaxis(weight, dim, 0)
    return weight.reshape(weight.shape[0], -1)


def _sn_normalize(x, eps):
    return x / ops.clamp(ops.sqrt((x * x).sum()), min=eps)


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """torch.nn.utils.spectral_norm: weight = weight_orig / sigma, sigma = u . (W v) from the buffers weight_u,
    weight_v; in training mode (cell.set_train()) the read of the weight first runs n_power_iterations on
    them, as torch's pre-hook does before each forward. u and v start as normalized normal samples (torch's
    come from its own generator: load torch's weight_u/weight_v to get its values)."""
    weight = getattr(module, name)
    if not isinstance(weight, ms.Parameter):
        raise TypeError(f"spectral_norm: {type(module).__name__}.{name} is not a Parameter")
    if n_power_iterations <= 0:
        raise ValueError(f"Expected n_power_iterations to be positive, but got n_power_iterations="
                         f"{n_power_iterations}")
    if dim is None:
        dim = 1 if isinstance(module, (nn.Conv1dTranspose, nn.Conv2dTranspose, nn.Conv3dTranspose)) else 0
    conv1d = _reparam_conv1d(module, name)
    value = weight.value().squeeze(2) if conv1d else weight.value()
    h, w = _sn_matrix(value, dim).shape
    u = _sn_normalize(ops.standard_normal((h,)).astype(weight.dtype), eps)
    v = _sn_normalize(ops.standard_normal((w,)).astype(weight.dtype), eps)
    orig = ms.Parameter(value.copy(), name=_reparam_param_name(weight, name, "_orig"),
                        requires_grad=weight.requires_grad)
    delattr(module, name)
    setattr(module, name + "_orig", orig)
    setattr(module, name + "_u", ms.Parameter(u, name=_reparam_param_name(weight, name, "_u"), requires_grad=False))
    setattr(module, name + "_v", ms.Parameter(v, name=_reparam_param_name(weight, name, "_v"), requires_grad=False))

    def derived(self):
        w = _sn_weight(self, name, dim, n_power_iterations, eps, self.training)
        return w.expand_dims(2) if conv1d else w
    _reparam_swap_class(module, {name: property(derived), "_ms_spectral_norm": (name, dim, n_power_iterations, eps)})
    return module


def _sn_weight(module, name, dim, n_power_iterations, eps, iterate):
    """torch's SpectralNorm.compute_weight: with `iterate` (training mode) the power iterations first update the
    buffers weight_u/weight_v (here, at the read of the weight: once per forward for a layer that reads its
    weight once, as the built-in layers but Conv3d do), then weight_orig / (u . W v) with u, v constants."""
    orig = getattr(module, name + "_orig")
    u_, v_ = getattr(module, name + "_u"), getattr(module, name + "_v")
    if iterate:
        w_mat = ops.stop_gradient(_sn_matrix(orig, dim))
        for _ in range(n_power_iterations):
            v_ = _sn_normalize(ops.matmul(w_mat.T, u_), eps)
            u_ = _sn_normalize(ops.matmul(w_mat, v_), eps)
        ops.assign(getattr(module, name + "_v"), v_)
        ops.assign(getattr(module, name + "_u"), u_)
    u_, v_ = ops.stop_gradient(u_), ops.stop_gradient(v_)
    return orig / (u_ * ops.matmul(_sn_matrix(orig, dim), v_)).sum()


def remove_spectral_norm(module, name="weight"):
    """torch.nn.utils.remove_spectral_norm: the current normalized weight (no power iteration) becomes the
    Parameter again."""
    if getattr(type(module), "_ms_spectral_norm", (None,))[0] != name:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    weight = ops.stop_gradient(_sn_weight(module, *type(module)._ms_spectral_norm, False))
    weight = weight.expand_dims(2) if _reparam_conv1d(module, name) else weight
    full = _reparam_param_name(getattr(module, name + "_orig"), name + "_orig", "")[:-len("_orig")]
    for suffix in ("_orig", "_u", "_v"):
        delattr(module, name + suffix)
    module.__class__ = type(module).__bases__[0]
    setattr(module, name, ms.Parameter(weight, name=full))
    return module
