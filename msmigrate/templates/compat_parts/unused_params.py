"""Parameters a loss did not use: torch leaves their .grad None after backward() and every torch optimizer skips
them in step() (no move, no state update), where MindSpore's grad returns zeros and the optimizer would apply
momentum, weight decay and AdamW's decay to them.

Which parameters the loss used is read from PyNative's autograd graph (the BackwardNodes from the loss down to
the leaves), not guessed from the gradients: a parameter used with an exactly-zero gradient (times 0, a dead
ReLU) is reached, has a zero .grad in torch and is moved by weight decay. A compiled graph has no such record:
its first step runs op by op to take it (skipping_unreached_compiled)."""


def _reached_nodes(value):
    """The ids (BackwardNode._unique_id) of the autograd nodes `value`'s graph reaches, in PyNative: a
    parameter's own node (its leaf, or the node of an in-place write into it, `p.copy_(...)`) among them."""
    node = getattr(value, "_grad_node", None)
    stack, seen = [node] if node is not None else [], set()
    while stack:
        node = stack.pop()
        uid = node._unique_id()
        if uid not in seen:
            seen.add(uid)
            stack.extend(edge[0] for edge in node.next_functions if edge[0] is not None)
    return seen


def wrong_second_order(value, where=None):
    """MigrationError where `value`'s PyNative record holds the backward of a convolution or a normalization (the
    gradient of a gradient: WGAN-GP's penalty) that is now differentiated op by op, which MindSpore 2.10 does wrongly
    (see compat_parts/train.py second_order_wrong_op_by_op); nothing otherwise."""
    node = getattr(value, "_grad_node", None)
    stack, seen = [node] if node is not None else [], set()
    while stack:
        node = stack.pop()
        if node._unique_id() in seen:
            continue
        seen.add(node._unique_id())
        name = node.name()
        if name.startswith(("Conv", "BatchNorm", "LayerNorm")) and ("Backprop" in name or "Grad" in name):
            where = where or calling_line()
            raise MigrationError(
                f"{where + ': ' if where else ''}the loss holds the gradient of a gradient through {name} (a "
                "penalty on the gradient of a network with convolutions or normalization layers), differentiated "
                "op by op here, where MindSpore 2.10 computes it wrongly: write the step as a train step "
                "(compiled) that computes the loss and its backward() together")
        stack.extend(edge[0] for edge in node.next_functions if edge[0] is not None)


def _as_transposed_conv(backprop):
    """The same computation as `backprop` (the ops.Conv2DBackpropInput MindSpore's Conv1dTranspose/Conv2dTranspose
    run forward) under the primitive named for it, ops.Conv2DTranspose: PyNative's record then names a transposed
    convolution so, where wrong_second_order looks for a convolution's gradient ("Backprop") in a loss."""
    a = backprop.attrs
    return ops.Conv2DTranspose(out_channel=a["out_channel"], kernel_size=a["kernel_size"], mode=a["mode"],
                               pad_mode=a["pad_mode"].lower(), pad=a["pad"], stride=a["stride"][2:],
                               dilation=a["dilation"][2:], group=a["group"])


def _transposed_init(init):
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.conv2d_transpose = _as_transposed_conv(self.conv2d_transpose)
    return __init__


# every Conv1dTranspose/Conv2dTranspose (the program's and the helper's) built with the primitive of its name
nn.Conv1dTranspose.__init__ = _transposed_init(nn.Conv1dTranspose.__init__)
nn.Conv2dTranspose.__init__ = _transposed_init(nn.Conv2dTranspose.__init__)


def value_and_grad_reached(forward, weights, has_aux=False, zeroed=False, inputs=None):
    """ms.value_and_grad(forward, None, weights, has_aux) where, op by op (PYNATIVE, or a step compile_step runs op
    by op), the gradient of a weight the loss did not reach is None, as torch's .grad (zeroed: the loop's
    zero_grad(set_to_none=False) keeps a zero gradient for a weight that had one). Inside a compiled graph the
    gradients stay MindSpore's, zeros for such a weight: a graph keeps no record of what its forward reached.
    inputs: the positions of arguments whose gradient the program reads too (free adversarial training's
    perturbation, its .grad read after the step's backward()); the gradients are then
    `(tuple of the inputs' gradients, weights' gradients)`."""
    plain = _with_input_grads(ms.value_and_grad(forward, inputs, weights, has_aux=has_aux), inputs)

    def recording(*args):
        out = forward(*args)
        wrong_second_order(out[0] if has_aux else out)
        nodes = _reached_nodes(out[0] if has_aux else out)
        # read while the graph is alive: backward() gives a parameter written in place (p.copy_) a new leaf
        recording.reached = [getattr(p, "_grad_node", None) is not None and p._grad_node._unique_id() in nodes
                             for p in weights]
        recording.unrecorded = not nodes        # the loss depends on nothing that needs a gradient
        return out
    # an attribute, not a list closed over: compile_step keys a compiled step by what its functions close over
    recording.reached = None

    def run(*args):
        if _compiling(_draw_probe):
            return plain(*args)
        return _grads_of_reached(plain, recording, args, weights, has_aux, zeroed, inputs)
    run.recording, run.weights, run.zeroed = recording, weights, zeroed     # read by skipping_unreached_compiled
    return run


# id(parameter) -> parameter: those a backward() reached since a zero_grad(set_to_none=False) step began (torch's
# .grad then stays a zero tensor). Kept across calls: a step run op by op builds its grad function on each call.
_ZERO_GRADS_KEPT = {}


def _with_input_grads(grad_fn, inputs):
    """grad_fn itself, or where it also differentiates `inputs`, with their gradients always a tuple (MindSpore
    gives one position's gradient bare, which unpacking would split along its first axis)."""
    if inputs is None:
        return grad_fn

    def run(*args):
        value, (in_grads, grads) = grad_fn(*args)
        return value, ((in_grads,) if len(inputs) == 1 else in_grads, grads)
    return run


def _grads_of_reached(plain, recording, args, weights, has_aux, zeroed, inputs=None):
    if ms.get_context("mode") == ms.GRAPH_MODE:     # a step called as it is in GRAPH mode: compiled there
        return plain(*args)
    recording.reached = None
    # (not the inputs differentiated: MindSpore's gradient with respect to a tensor marked requires_grad False is
    # zero, measured; one an earlier step unmarked so is marked again)
    received = _plain_tensors([a for k, a in enumerate(args) if inputs is None or k not in inputs])
    for k in inputs or ():
        if isinstance(args[k], ms.Tensor) and not args[k]._requires_grad:
            args[k].requires_grad_(True)
    kept = []

    def host_aux_aside(*a):
        # an extra output that is a host value or a dataclass object (encodec's QuantizedResult): has_aux refuses it
        loss, *aux = recording(*a)
        kept[:] = aux
        return (loss, *[ms.Tensor(0) if _host_value(x) or hasattr(type(x), "__dataclass_fields__") else x for x in aux])
    differentiated = host_aux_aside if has_aux else recording
    if inputs is None:
        # MindSpore marks every argument of a recorded function as a leaf requiring a gradient and refuses an
        # in-place write into one ('A leaf tensor that requires grad is being used in an inplace operator', 'Can not
        # modify tensor id of input tensor from network'): a batch mixed in place inside the step (timm's Mixup,
        # `x.mul_(lam)`, cutmix's `x[..., box] = ...`). Closed over, the step's arguments are data, as in torch
        value, grads = ms.value_and_grad(lambda: differentiated(*args), None, weights, has_aux=has_aux)()
    else:
        value, grads = _with_input_grads(ms.value_and_grad(differentiated, inputs, weights, has_aux=has_aux),
                                         inputs)(*args)
    if inputs is not None:
        in_grads, grads = grads
    if has_aux:
        value = (value[0], *[k if _host_value(k) or hasattr(type(k), "__dataclass_fields__") else x
                             for x, k in zip(value[1:], kept)])
    for t in received:
        # PyNative marks what the step received as a leaf requiring grad: CycleGAN's real_A (an alias of the
        # input_A buffer, `input_A.copy_(batch)`) was then refused by the next step's in-place copy into it
        t.requires_grad_(False)
    if recording.reached is None:
        raise MigrationError("value_and_grad_reached: the forward ran without recording which parameters the loss "
                             "used")
    if inputs is None and recording.unrecorded:
        # torch's backward() of such a loss raises ('element 0 of tensors does not require grad'); where torch's
        # loss does come from the network, the converted step left the network's call outside it: its parameters
        # would silently get no gradient (SAM's mask decoder, called in a helper function)
        where = calling_line()
        raise MigrationError(f"{where + ': ' if where else ''}the loss of this train step depends on no tensor that "
                             "needs a gradient: torch's backward() raises RuntimeError there, or, where the loss "
                             "comes from the network, the network's call was left outside the converted step "
                             "(its parameters would get no gradient); move the call into the step's statements")
    out = []
    for p, g, used in zip(weights, grads, recording.reached):
        if used:
            if zeroed:
                _ZERO_GRADS_KEPT[id(p)] = p
        elif not (zeroed and _ZERO_GRADS_KEPT.get(id(p)) is p):
            g = None
        out.append(g)
    return value, (tuple(out) if inputs is None else (in_grads, tuple(out)))


def _host_value(x):
    """A Python number, string, None or NumPy value: no tensor, nor a container that may hold tensors."""
    return x is None or isinstance(x, (bool, int, float, complex, str, np.ndarray, np.generic))


def _plain_tensors(args):
    """The tensors a step receives (as arguments, or in a list, tuple or dict) that require no gradient."""
    found = []
    for a in args:
        for t in (a.values() if isinstance(a, dict) else a if isinstance(a, (list, tuple)) else (a,)):
            if isinstance(t, ms.Tensor) and not isinstance(t, ms.Parameter) and not t._requires_grad:
                found.append(t)
    return found


def _skipping_unreached(optimizer, gradients, update):
    """torch's step() over parameters whose .grad is None: those neither move nor change their state. The update
    runs on zeros there; the parameters and their per-parameter state (momentum, moments) are put back after."""
    stepped = [g is not None for g in gradients]
    saved = _held_back(optimizer, stepped)
    if ms.get_context("mode") == ms.GRAPH_MODE and _counts_lag(optimizer, stepped):
        update = _op_by_op(update)      # compiled, Adam counts one step for all (its construct)
    _count_steps(optimizer, stepped)
    result = update(tuple(ops.zeros_like(p) if g is None else g for p, g in zip(optimizer.parameters, gradients)))
    for param, value in saved:
        ops.assign(param, value)
    return result


def _held_back(optimizer, stepped):
    """(Parameter, its value) for the parameters a step skips and their per-parameter state. A step count the
    optimizer shares between parameters (torch keeps one per parameter) is refused, except Adam's (per-parameter
    counts, param_steps) and Adagrad's without lr_decay (the count is not read)."""
    skipped = [i for i, s in enumerate(stepped) if not s]
    shared = getattr(optimizer, "step_t", None)
    if skipped and isinstance(shared, ms.Parameter) and not (
            type(optimizer).__name__ == "Adagrad" and all(g.get("lr_decay", 0) == 0 for g in optimizer.param_groups)):
        where = calling_line()      # the original opt.step()
        raise MigrationError(
            f"{where + ': ' if where else ''}{type(optimizer).__name__}.step() with parameters the loss did not use "
            f"(torch skips them and counts steps per parameter; MindSpore's {type(optimizer).__name__} counts one step "
            f"for all): "
            f"{optimizer.parameters[skipped[0]].name} and {len(skipped) - 1} more")
    slots = [v for k, v in vars(optimizer).items() if isinstance(v, ms.ParameterTuple) and len(v) == len(stepped)]
    return [(slot[i], slot[i].value().copy()) for slot in slots for i in skipped]


def _count_steps(optimizer, stepped):     # Adam: each parameter counts its own steps once one was skipped
    if hasattr(optimizer, "param_steps") and (optimizer.param_steps is not None or not all(stepped)):
        if optimizer.param_steps is None:
            optimizer.param_steps = [float(optimizer.state_step.asnumpy())] * len(stepped)
        optimizer.param_steps = [s + t for s, t in zip(optimizer.param_steps, stepped)]


def _counts_lag(optimizer, stepped):
    """An Adam parameter stepped now that counts fewer steps than the optimizer: compiled, Adam counts one for all."""
    steps = getattr(optimizer, "param_steps", None)
    return steps is not None and any(t and s != float(optimizer.state_step.asnumpy()) for s, t in zip(steps, stepped))


# id(compiled step) -> {_argument_kind of its arguments: the weights the loss did not reach, or _BRANCHING}
_REACHED_BY_GRAPH = {}
_WRAPPED_STEPS = {}     # id(compiled step) -> skipping_unreached_compiled's step
_BRANCHING = "branches on tensor values"


def skipping_unreached_compiled(step, compiled):
    """compile_step's step (GRAPH mode) taking gradients with value_and_grad_reached. Its first call with arguments
    of a new kind (what MindSpore compiles a graph for, so what the forward's Python branches and loops on) runs
    op by op and records the weights the loss did not reach; later calls run compiled, those weights and their
    optimizer state are put back after the step (as _skipping_unreached) and their gradients returned are None."""
    if id(compiled) in _WRAPPED_STEPS:     # the same step again (defined once per epoch): what compiled it first
        return _WRAPPED_STEPS[id(compiled)]
    runners = _reached_runners(step, [], set())
    if not runners:
        return compiled
    if second_order_wrong_op_by_op(step) is not None:
        # never op by op (see second_order_wrong_op_by_op): every weight counts as reached, MindSpore's zero
        # gradient where the loss did not use one (torch's optimizer skips its None)
        return compiled
    probed = _REACHED_BY_GRAPH.setdefault(id(compiled), {})
    optimizers = [c for _, c in _closure_cells(step, [], set()) if hasattr(c, "param_groups")]

    def run(*args):
        kind = _argument_kind(args)
        unreached = probed.get(kind)
        if unreached is None:
            try:
                compiled.compile(*(_graph_argument(a) for a in args))
            except _COMPILE_ERRORS as exc:
                if not _too_deep(exc):
                    raise
                probed[kind] = _BRANCHING       # no graph of it: op by op, as a step branching on tensors
                return _unjitted(step, args)
            for r in runners:
                r.recording.reached = None
            out = _unjitted(step, args)
            if all(r.recording.reached is not None for r in runners):
                probed[kind] = _BRANCHING if _branches_on_tensors(compiled, step) else tuple(
                    (r, p) for r in runners for p, used in zip(r.weights, r.recording.reached) if not used)
            return out
        if unreached is _BRANCHING:
            return _unjitted(step, args)
        # zero_grad(set_to_none=False): a weight reached before keeps a zero gradient
        skipped = {id(p) for r, p in unreached if not (r.zeroed and _ZERO_GRADS_KEPT.get(id(p)) is p)}
        if not skipped and all(getattr(opt, "param_steps", None) is None for opt in optimizers):
            return compiled(*args)
        stepped = [(opt, [id(p) not in skipped for p in opt.parameters]) for opt in optimizers]
        if any(_counts_lag(opt, s) for opt, s in stepped):
            return _unjitted(step, args)
        saved = [kept for opt, s in stepped if not all(s) for kept in _held_back(opt, s)]
        out = compiled(*args)
        for param, value in saved:
            ops.assign(param, value)
        for opt, s in stepped:
            _count_steps(opt, s)
        return _none_for_skipped(out, [r.weights for r in runners], skipped)
    _WRAPPED_STEPS[id(compiled)] = run
    return run


COMPILED_STEP_WRAPPERS["parameters the loss did not use"] = skipping_unreached_compiled


def _branches_on_tensors(compiled, step):
    """The compiled step holds a Switch (an `if`/`while` on a tensor's value): the weights the loss reaches may
    change from step to step where its gradients cannot tell. Such a step runs op by op, with a warning."""
    import re
    import warnings
    from mindspore.graph.api import _cell_graph_executor
    proto = _cell_graph_executor._graph_executor.get_func_graph_proto(compiled.compile_phase, "anf_ir", False)
    if re.search(rb"/Switch(Layer)?-op\d", proto) is None:
        return False
    warnings.warn(f"{step.__name__} ({step.__code__.co_filename}:{step.__code__.co_firstlineno}) branches on "
                  "tensor values: which parameters the loss uses may change from step to step (torch skips the "
                  "unused ones), which a compiled graph cannot tell, so it runs op by op (PYNATIVE)")
    return True


def _reached_runners(fn, found, seen):     # the value_and_grad_reached functions a step calls
    seen.add(id(fn))
    for _, value in _referenced(fn):
        if callable(value) and hasattr(value, "recording") and all(value is not f for f in found):
            found.append(value)
        elif callable(value) and hasattr(value, "__code__") and id(value) not in seen:
            _reached_runners(value, found, seen)
    return found


def _argument_kind(value):     # what MindSpore compiles a graph for: shapes and dtypes, Python values (constants)
    if isinstance(value, (ms.Tensor, np.ndarray)):
        return ("tensor", tuple(value.shape), str(value.dtype))
    if isinstance(value, (list, tuple, dict)):
        return (type(value).__name__,) + tuple(_argument_kind(v) for v in (
            value.items() if isinstance(value, dict) else value))
    return (type(value).__name__, value if isinstance(value, (bool, int, float, str, type(None))) else id(value))


def _none_for_skipped(out, weight_lists, skipped):
    """The step's outputs, None for the gradients of skipped weights (found by their shapes), as torch's .grad."""
    if not isinstance(out, (tuple, list)):
        return out
    for weights in weight_lists:
        if len(out) == len(weights) and all(isinstance(g, ms.Tensor) and g.shape == p.shape
                                            for g, p in zip(out, weights)):
            return type(out)(None if id(p) in skipped else g for g, p in zip(out, weights))
    return type(out)(_none_for_skipped(o, weight_lists, skipped) for o in out)
