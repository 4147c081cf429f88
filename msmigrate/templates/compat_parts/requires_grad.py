"""Tensor.requires_grad_ where its value is used (`w = p.requires_grad_(False)`, `f(t.requires_grad_())`):
MindSpore's sets the flag (a Parameter's requires_grad) and returns None, torch's returns the tensor.
`x.requires_grad` read on a tensor: a Parameter's flag; a computed tensor's through requires_grad_of."""
import sys
from mindspore.graph.api import _pynative_executor as _grad_executor


def requires_grad_(x, requires_grad=True):
    """x.requires_grad_(requires_grad), then x itself, as torch returns it (a module: the flag of its
    parameters, module_requires_grad_)."""
    if isinstance(x, nn.Cell):
        return module_requires_grad_(x, requires_grad)
    if requires_grad and not isinstance(x, ms.Parameter) and not _compiling(_draw_probe):
        return mark_leaf(x)     # a backward() PyNative's recorded autograd runs fills its .grad (recorded_backward.py)
    x.requires_grad_(requires_grad)
    return x


def set_requires_grad(x, requires_grad, recorded=False):
    """torch's `x.requires_grad = flag`: a Parameter keeps the flag (what value_and_grad over
    trainable_params() and the optimizers read); on another tensor False is
    ops.stop_gradient (nothing computed from it afterwards carries a gradient back, as torch's
    detached leaf) and True changes nothing (what gets a gradient is what ms.grad is given, as for
    torch.tensor(..., requires_grad=True)). The caller rebinds x to the result. recorded: in a module whose
    backward() PyNative's recorded autograd runs (recorded_backward.py), True marks x a leaf of that graph."""
    if isinstance(x, ms.Parameter):
        x.requires_grad = requires_grad
        return x
    if requires_grad and recorded and ms.get_context("mode") == ms.PYNATIVE_MODE \
            and not _compiling(_draw_probe):
        # a backward() run by PyNative's autograd adds into this leaf's gradient (an attack's `delta.grad`); the
        # recording a mindspore.grad/value_and_grad call stopped since (another function's gradient) starts again
        from mindspore.common.api import _pynative_executor
        _pynative_executor.set_grad_flag(True)
        return mark_leaf(x)
    return x if requires_grad else ops.stop_gradient(x)


_GRAD_FLAG_REFUSAL = (
    "`.requires_grad` of a computed tensor at {} is read inside a graph compiled by mindspore.jit or "
    "mindspore.grad/value_and_grad outside the converted train step (_ms_compat.compile_step): whether a gradient "
    "is being recorded through it cannot be told there. Call the network from the converted train step or "
    "directly, or run it in PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE))")


_MS_PACKAGE_DIR = os.path.dirname(ms.__file__)


def _compiled_recording():
    """While a graph compiles: True inside compile_step's StepCell, called or compiled (its value_and_grad
    records), False in a Cell called directly in GRAPH mode (a forward, where nothing records), None in a graph
    compiled by ms.jit or ms.grad (staging_specialize), which may or may not record."""
    frame, direct_cell = sys._getframe(1), False
    while frame is not None:
        owner = frame.f_locals.get("self")
        if frame.f_code.co_name in ("__call__", "compile") and type(owner).__name__ == "StepCell" \
                and type(owner).__module__ == __name__:
            return True
        if frame.f_code.co_filename.startswith(_MS_PACKAGE_DIR):
            if frame.f_code.co_name == "staging_specialize":
                break
            direct_cell = direct_cell or frame.f_code.co_name == "compile_and_run"
        frame = frame.f_back
    else:
        if direct_cell:
            return False
    return None


@_constexpr(check=False)
def _recording_when_compiled(where):
    """While a graph compiles, the answer requires_grad_of gives in PyNative for the same call, as a constant
    (_compiled_recording); where it cannot be told, MigrationError naming the line."""
    recording = _compiled_recording()
    if recording is None:
        raise MigrationError(_GRAD_FLAG_REFUSAL.format(where))
    return recording


def requires_grad_of(x, where):
    """torch's `x.requires_grad`: a Parameter's flag; on a computed tensor whether MindSpore is recording a
    gradient now (inside grad/value_and_grad, where a train step's torch forward has grad mode on and the
    tensor comes from trainable weights). Compiled: decided while compiling (_recording_when_compiled)."""
    if isinstance(x, ms.Parameter) or not isinstance(x, ms.Tensor):
        return x.requires_grad   # a Parameter's flag; any other object's own attribute (a read of unknown kind)
    if _compiling(_draw_probe):
        return _recording_when_compiled(where)
    return bool(_grad_executor.requires_grad())
