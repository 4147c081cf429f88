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


import weakref

# the tensors the program marked as needing a gradient (set_requires_grad(..., recorded=True), requires_grad_):
# what a recorded backward() adds into, as torch's leaves. mindspore.grad/value_and_grad also marks every tensor it
# is given (a batch, its labels), which torch never fills: the pass is told its inputs so it leaves those alone
_MARKED_LEAVES = weakref.WeakValueDictionary()


def mark_leaf(x):
    """x (no Parameter) is a leaf of the recorded graph: requires_grad_, and a backward() fills its gradient."""
    x.requires_grad_(True)
    _MARKED_LEAVES[id(x)] = x
    return x


def unmarking(grad_fn):
    """`grad_fn` (a mindspore.grad/value_and_grad function, in a module whose backward() the recorded autograd
    runs), which leaves the tensors it is given as it found them: MindSpore marks each as requiring a gradient, and
    a graph recorded later from a marked tensor (the same batch, attacked again) fails in MindSpore's CPU kernels
    where it meets another leaf ('Clone unregistered') or fills a .grad torch leaves None."""
    def call(*args):
        before = [(a, a._requires_grad) for a in args if isinstance(a, ms.Tensor) and not isinstance(a, ms.Parameter)]
        try:
            return grad_fn(*args)
        finally:
            for a, flag in before:
                if not flag:
                    a._requires_grad = False
    return call


def record_autograd():
    """Start recording the operations' graph (PYNATIVE mode; in GRAPH mode nothing, the backward() raises)."""
    if ms.get_context("mode") == ms.PYNATIVE_MODE:
        from mindspore.common.api import _pynative_executor
        _pynative_executor.set_grad_flag(True)


def _recorded_gradient(where, receiver, args, kwargs):
    """The checks of torch's Tensor.backward(gradient=None, retain_graph=None, create_graph=False, inputs=None) run
    on PyNative's recorded graph: (the gradient of `receiver`, retain_graph)."""
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
    return gradient.astype(receiver.dtype), bool(bound.get("retain_graph"))


def autograd_backward(where, receiver, *args, **kwargs):
    """`receiver.backward(*args, **kwargs)`: on a MindSpore tensor torch's Tensor.backward(gradient=None,
    retain_graph=None, create_graph=False, inputs=None) through MindSpore's PyNative autograd; on any other object
    (a program's class with its own backward method) the call as written."""
    if not isinstance(receiver, ms.Tensor):
        return receiver.backward(*args, **kwargs)
    gradient, retain = _recorded_gradient(where, receiver, args, kwargs)
    from mindspore._c_expression import run_backward
    # measured: accumulating into a leaf the program did not mark fails ("The kernel Clone unregistered" where
    # two leaves meet in one op) or fills a .grad torch leaves None; Parameters' .grad stays refused (tensor_grad)
    leaves = tuple(t for t in list(_MARKED_LEAVES.values()) if getattr(t, "_requires_grad", False))
    try:
        run_backward((receiver,), (gradient,), retain, False, leaves or None)
    except RuntimeError as exc:
        if "Clone unregistered" not in str(exc):
            raise
        # measured: two leaves needing a gradient that meet in one op (`x + delta`, both marked; or one of them a
        # tensor an earlier mindspore.grad/value_and_grad call was given, where no leaf is marked) fail there
        raise MigrationError(f"{where}: backward() run by PyNative's recorded autograd reaches two leaves needing a "
                             "gradient in one operation (both marked requires_grad, or one given to an earlier "
                             "mindspore.grad/value_and_grad call), where MindSpore's CPU kernels fail ('Clone "
                             "unregistered'); compute this gradient with mindspore.grad by hand") from None
    return None


# backward_to_grads: "on" once one ran; "filled": id(Parameter) -> the Parameter, each it fills (torch's .grad there
# is MindSpore's `_grad`); "stepped": ids of those whose gradient a step() applied and no zero_grad() cleared since.
# Shared by every helper of the process (the project's, each --deps package's), on MindSpore's optim module
_FILLED_GRADS = vars(_ms_optim).setdefault("_msmigrate_filled_grads", {"on": False, "filled": {}, "stepped": set()})


def backward_to_grads(where, receiver, *args, **kwargs):
    """torch's `loss.backward()` in a function handed the loss, whose gradients a step() applies later (a loss
    scaler's __call__: timm's NativeScaler, MAE's NativeScalerWithGradNormCount; a trainer's backward helper): run
    by PyNative's autograd on the graph recorded since record_autograd(), adding into the .grad (MindSpore's `_grad`)
    of the parameters of every optimizer built, as torch adds into its leaves. The optimizers' step(), zero_grad(),
    clip_grad_norm_ and `p.grad` (tensor_grad) read and clear them (filled_gradients, clear_filled_grads)."""
    if not isinstance(receiver, ms.Tensor):
        return receiver.backward(*args, **kwargs)
    gradient, retain = _recorded_gradient(where, receiver, args, kwargs)
    filled, stepped = _FILLED_GRADS["filled"], _FILLED_GRADS["stepped"]
    params, seen = [], set()
    for opt in list(_BUILT_OPTIMIZERS):
        for p in opt.parameters:
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
    stale = next((p for p in params if id(p) in stepped and p._grad is not None), None)
    if stale is not None:
        raise MigrationError(f"{where}: backward() adds to the gradient of {stale.name}, which an optimizer step() "
                             "applied with no zero_grad() since: torch adds to it only if the program cleared "
                             "nothing, and a zero_grad() of a module converted apart (another package, converted "
                             "by --deps) is not kept; call optimizer.zero_grad() before this backward()")
    reached = _reached_nodes(receiver)
    # measured (MindSpore 2.10, CPU): a first gradient for two leaves that meet in one operation (`cls_token +
    # pos_embed`) fails in its kernels ("The kernel Clone unregistered"); adding into a zero tensor passes. Those
    # the graph does not reach get torch's None back
    fresh = [p for p in params if p._grad is None]
    for p in fresh:
        p._grad = ops.zeros_like(p)
    leaves = tuple(params) + tuple(t for t in list(_MARKED_LEAVES.values()) if getattr(t, "_requires_grad", False)
                                   and not isinstance(t, ms.Parameter))
    from mindspore._c_expression import run_backward
    run_backward((receiver,), (gradient,), retain, False, leaves or None)
    for p in fresh:
        node = getattr(p, "_grad_node", None)
        if node is None or node._unique_id() not in reached:
            p._grad = None
    for p in params:
        filled[id(p)] = p
    _FILLED_GRADS["on"] = True
    return None


def filled_gradients(params):
    """The .grad backward_to_grads filled for `params` (None where it filled none: torch's step() skips those),
    marked as applied; None where no such backward() ran or one of `params` was none of its leaves."""
    filled = _FILLED_GRADS["filled"]
    if not _FILLED_GRADS["on"] or any(filled.get(id(p)) is not p for p in params):
        return None
    _FILLED_GRADS["stepped"].update(id(p) for p in params if p._grad is not None)
    return tuple(p._grad for p in params)


def filled_gradient(param):
    """(True, torch's `param.grad`) where backward_to_grads handles this Parameter's gradient; (False, None) else."""
    if _FILLED_GRADS["on"] and _FILLED_GRADS["filled"].get(id(param)) is param:
        return True, param._grad
    return False, None


def set_filled_gradient(param, grad):
    """A change of `param.grad` in place (clipping) where backward_to_grads handles it."""
    param._grad = grad


def clear_filled_grads(params, set_to_none=True):
    """zero_grad() of an optimizer or a module: the .grad backward_to_grads filled for `params` is dropped (or
    zeroed: `set_to_none=False`, which torch's optimizers then apply as zeros)."""
    filled, stepped = _FILLED_GRADS["filled"], _FILLED_GRADS["stepped"]
    for p in params:
        if filled.get(id(p)) is p:
            stepped.discard(id(p))
            if p._grad is not None:
                p._grad = None if set_to_none else ops.zeros_like(p)


# what optimizer.step()/zero_grad(), clip_grad_norm_ and tensor_grad call (_filled_reader), in any helper copy
_FILLED_GRADS["readers"] = {"filled_gradients": filled_gradients, "filled_gradient": filled_gradient,
                            "set_filled_gradient": set_filled_gradient, "clear_filled_grads": clear_filled_grads}
