"""Parameters a loss did not use: torch leaves their .grad None after backward() and every torch optimizer skips
them in step() (no move, no state update), where MindSpore's grad returns zeros and the optimizer would apply
momentum, weight decay and AdamW's decay to them.

Which parameters the loss used is read from PyNative's autograd graph (the BackwardNodes from the loss down to
the leaves), not guessed from the gradients: a parameter used with an exactly-zero gradient (times 0, a dead
ReLU) is reached, has a zero .grad in torch and is moved by weight decay. A compiled graph has no such record;
there the gradients stay MindSpore's (docs/training.md)."""


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


def value_and_grad_reached(forward, weights, has_aux=False, zeroed=False):
    """ms.value_and_grad(forward, None, weights, has_aux) where, op by op (PYNATIVE, or a step compile_step runs op
    by op), the gradient of a weight the loss did not reach is None, as torch's .grad (zeroed: the loop's
    zero_grad(set_to_none=False) keeps a zero gradient for a weight that had one). Inside a compiled graph the
    gradients stay MindSpore's, zeros for such a weight: a graph keeps no record of what its forward reached."""
    plain = ms.value_and_grad(forward, None, weights, has_aux=has_aux)

    def recording(*args):
        out = forward(*args)
        nodes = _reached_nodes(out[0] if has_aux else out)
        # read while the graph is alive: backward() gives a parameter written in place (p.copy_) a new leaf
        recording.reached = [getattr(p, "_grad_node", None) is not None and p._grad_node._unique_id() in nodes
                             for p in weights]
        return out
    # an attribute, not a list closed over: compile_step keys a compiled step by what its functions close over
    recording.reached = None

    def run(*args):
        if _compiling(_draw_probe):
            return plain(*args)
        return _grads_of_reached(plain, recording, args, weights, has_aux, zeroed)
    return run


# id(parameter) -> parameter: those a backward() reached since a zero_grad(set_to_none=False) step began (torch's
# .grad then stays a zero tensor). Kept across calls: a step run op by op builds its grad function on each call.
_ZERO_GRADS_KEPT = {}


def _grads_of_reached(plain, recording, args, weights, has_aux, zeroed):
    if ms.get_context("mode") == ms.GRAPH_MODE:     # a step called as it is in GRAPH mode: compiled there
        return plain(*args)
    recording.reached = None
    value, grads = ms.value_and_grad(recording, None, weights, has_aux=has_aux)(*args)
    if recording.reached is None:
        raise MigrationError("value_and_grad_reached: the forward ran without recording which parameters the loss "
                             "used")
    out = []
    for p, g, used in zip(weights, grads, recording.reached):
        if used:
            if zeroed:
                _ZERO_GRADS_KEPT[id(p)] = p
        elif not (zeroed and _ZERO_GRADS_KEPT.get(id(p)) is p):
            g = None
        out.append(g)
    return value, tuple(out)


def _skipping_unreached(optimizer, gradients, update):
    """torch's step() over parameters whose .grad is None: those neither move nor change their state. The update
    runs on zeros there; the parameters and their per-parameter state (momentum, moments) are put back after.
    A step count the optimizer shares between parameters (torch keeps one per parameter) is refused, except
    Adam's (per-parameter counts, param_steps) and Adagrad's without lr_decay (the count is not read)."""
    skipped = [i for i, g in enumerate(gradients) if g is None]
    shared = getattr(optimizer, "step_t", None)
    if skipped and isinstance(shared, ms.Parameter) and not (
            type(optimizer).__name__ == "Adagrad" and all(g.get("lr_decay", 0) == 0 for g in optimizer.param_groups)):
        raise MigrationError(
            f"{type(optimizer).__name__}.step() with parameters the loss did not use (torch skips them and counts "
            f"steps per parameter; MindSpore's {type(optimizer).__name__} counts one step for all): "
            f"{optimizer.parameters[skipped[0]].name} and {len(skipped) - 1} more")
    if hasattr(optimizer, "param_steps"):   # Adam: each parameter counts its own steps
        if optimizer.param_steps is None:
            optimizer.param_steps = [float(optimizer.state_step.asnumpy())] * len(gradients)
        optimizer.param_steps = [s + (g is not None) for s, g in zip(optimizer.param_steps, gradients)]
    slots = [v for k, v in vars(optimizer).items() if isinstance(v, ms.ParameterTuple) and len(v) == len(gradients)]
    saved = [(slot[i], slot[i].value().copy()) for slot in slots for i in skipped]
    result = update(tuple(ops.zeros_like(p) if g is None else g for p, g in zip(optimizer.parameters, gradients)))
    for param, value in saved:
        ops.assign(param, value)
    return result
