"""torch's `y.backward(gradient, retain_graph)` where no train step holds it and nothing steps an optimizer after it
in its function: the program's own use of the gradients, read from the tensors' `.grad` (an input image's saliency)
or from the backward hooks the pass calls (Grad-CAM keeping a layer's grad_output, guided backpropagation clamping
a ReLU's grad_input). MindSpore 2.10's PyNative executor records, while its grad flag is set, a torch-like graph of
the operations run (each result's _grad_node), and `run_backward` walks it as torch's engine does: it calls the
Cell backward hooks registered on the way and adds the gradients into the leaves' `_grad` (an input made by
requires_grad_, the Parameters). record_autograd() sets the flag where a module holding such a backward() is
imported; autograd_backward() runs the pass. tensor_grad() (grad_reads.py) answers `x.grad` of a tensor that is no
Parameter from that `_grad`; a Parameter's `.grad` stays refused (a dropped module.zero_grad() would let it grow).
PYNATIVE mode only: in GRAPH mode, a Cell's output comes from a compiled graph and records nothing (and Cell hooks
never run), so the backward raises MigrationError naming its line; so does the backward of a tensor the executor
recorded no graph for (no input required a gradient, or a mindspore.grad call since cleared the flag)."""

_RECORDED_MODE_WHY = ("backward() at {} runs outside a train step (its gradients are read from .grad or from "
                      "backward hooks): it is run by MindSpore's PyNative autograd (_ms_compat.autograd_backward), "
                      "PYNATIVE mode only; this program runs in GRAPH mode or inside a compiled graph, where no "
                      "graph of the forward is recorded. Run in PYNATIVE_MODE (ms.set_context(mode=ms.PYNATIVE_MODE))")


def record_autograd():
    """Start recording the operations' graph (PYNATIVE mode; in GRAPH mode nothing, the backward() raises)."""
    if ms.get_context("mode") == ms.PYNATIVE_MODE:
        from mindspore.common.api import _pynative_executor
        _pynative_executor.set_grad_flag(True)


def autograd_backward(where, receiver, *args, **kwargs):
    """`receiver.backward(*args, **kwargs)`: on a MindSpore tensor torch's Tensor.backward(gradient=None,
    retain_graph=None, create_graph=False, inputs=None) through MindSpore's PyNative autograd; on any other object
    (a program's class with its own backward method) the call as written."""
    if not isinstance(receiver, ms.Tensor):
        return receiver.backward(*args, **kwargs)
    if _compiling(_draw_probe):
        _refuse_compiled(_RECORDED_MODE_WHY, where)
    names = ("gradient", "retain_graph", "create_graph", "inputs")
    if len(args) > len(names) or any(k not in names for k in kwargs):
        raise TypeError(f"{where}: Tensor.backward() got unexpected arguments")
    bound = dict(zip(names, args), **kwargs)
    if bound.get("create_graph") or bound.get("inputs") is not None:
        raise MigrationError(f"{where}: backward(create_graph=True) or backward(inputs=...) outside a train step: "
                             "compute those gradients with mindspore.grad by hand")
    if ms.get_context("mode") != ms.PYNATIVE_MODE:
        raise MigrationError(_RECORDED_MODE_WHY.format(where))
    if getattr(receiver, "_grad_node", None) is None:
        raise MigrationError(f"{where}: backward() of a tensor MindSpore's PyNative executor recorded no graph for "
                             "(in torch: no input of it requires a gradient, a RuntimeError; or the recording "
                             "started by _ms_compat.record_autograd was stopped by a mindspore.grad/value_and_grad "
                             "call since): compute the gradients with mindspore.grad by hand")
    gradient = bound.get("gradient")
    if gradient is None:
        if receiver.size != 1:
            raise MigrationError(f"{where}: backward() of a tensor of shape {tuple(receiver.shape)}: grad can be "
                                 "implicitly created only for scalar outputs (torch's RuntimeError)")
        gradient = ops.ones_like(receiver)
    elif not isinstance(gradient, ms.Tensor):
        gradient = ops.full_like(receiver, gradient)
    from mindspore._c_expression import run_backward
    try:
        run_backward((receiver,), (gradient.astype(receiver.dtype),), bool(bound.get("retain_graph")), False, None)
    except RuntimeError as exc:
        if "Clone unregistered" not in str(exc):
            raise
        # measured: mindspore.grad/value_and_grad marks every tensor it is given as requiring a gradient, and this
        # pass then adds into them, failing on an integer one (class labels) with "The kernel Clone unregistered"
        raise MigrationError(f"{where}: backward() run by PyNative's recorded autograd reaches a tensor an earlier "
                             "mindspore.grad/value_and_grad call (another converted gradient) was given, which "
                             "MindSpore then treats as a leaf needing a gradient (an integer tensor: class labels); "
                             "compute this gradient with mindspore.grad by hand") from None
    return None
