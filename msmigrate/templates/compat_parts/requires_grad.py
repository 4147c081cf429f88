"""Tensor.requires_grad_ where its value is used (`w = p.requires_grad_(False)`, `f(t.requires_grad_())`):
MindSpore's sets the flag (a Parameter's requires_grad) and returns None, torch's returns the tensor."""


def requires_grad_(x, requires_grad=True):
    """x.requires_grad_(requires_grad), then x itself, as torch returns it (a module: the flag of its
    parameters, module_requires_grad_)."""
    if isinstance(x, nn.Cell):
        return module_requires_grad_(x, requires_grad)
    x.requires_grad_(requires_grad)
    return x


def set_requires_grad(x, requires_grad):
    """torch's `x.requires_grad = flag`: a Parameter keeps the flag (what value_and_grad over
    trainable_params() and the optimizers read); on another tensor False is
    ops.stop_gradient (nothing computed from it afterwards carries a gradient back, as torch's
    detached leaf) and True changes nothing (what gets a gradient is what ms.grad is given, as for
    torch.tensor(..., requires_grad=True)). The caller rebinds x to the result."""
    if isinstance(x, ms.Parameter):
        x.requires_grad = requires_grad
        return x
    return x if requires_grad else ops.stop_gradient(x)
