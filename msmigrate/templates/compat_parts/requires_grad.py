"""Tensor.requires_grad_ where its value is used (`w = p.requires_grad_(False)`, `f(t.requires_grad_())`):
MindSpore's sets the flag (a Parameter's requires_grad) and returns None, torch's returns the tensor.
`x.requires_grad` read on a tensor: a Parameter's flag; a computed tensor's through requires_grad_of."""
from mindspore.graph.api import _pynative_executor as _grad_executor


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


_GRAD_FLAG_REFUSAL = (
    "`.requires_grad` of a computed tensor at {} is read inside a compiled graph (GRAPH mode or ms.jit): torch "
    "answers whether a gradient is being recorded through it, which a graph compiled once for every call cannot "
    "tell. Run this network in PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE)) or drop the test")


def requires_grad_of(x, where):
    """torch's `x.requires_grad`: a Parameter's flag; on a computed tensor, in PyNative, whether MindSpore is
    recording a gradient now (inside grad/value_and_grad, where a train step's torch forward has grad mode on
    and the tensor comes from trainable weights); compiling a graph that reads it raises MigrationError."""
    if isinstance(x, ms.Parameter) or not isinstance(x, ms.Tensor):
        return x.requires_grad   # a Parameter's flag; any other object's own attribute (a read of unknown kind)
    if _compiling(_draw_probe):
        _refuse_compiled(_GRAD_FLAG_REFUSAL, where)
    return bool(_grad_executor.requires_grad())
