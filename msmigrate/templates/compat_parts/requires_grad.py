"""Tensor.requires_grad_ where its value is used (`w = p.requires_grad_(False)`, `f(t.requires_grad_())`):
MindSpore's sets the flag (a Parameter's requires_grad) and returns None, torch's returns the tensor."""


def requires_grad_(x, requires_grad=True):
    """x.requires_grad_(requires_grad), then x itself, as torch returns it."""
    x.requires_grad_(requires_grad)
    return x
