"""`x.grad` read where no converted train step computes it (msmigrate/grad_reads.py)."""

# id(parameter) -> (parameter, the gradient the last converted step computed for it): torch's .grad (keep_grads)
_KEPT_GRADS = {}


def keep_grads(params, grads):
    """The gradients a converted train step returned, for the program's later reads of `p.grad` (logging a
    norm, `if p.grad is not None`): torch's .grad after backward() (and after clipping, which is in place).
    grads None: a step that keeps none ran, the parameters' earlier ones are dropped (a read then raises)."""
    for p in params:        # a `p.grad = value` the program wrote (an attribute) was the last step's
        if "grad" in getattr(p, "__dict__", ()):
            delattr(p, "grad")
    if grads is None:
        for p in params:
            _KEPT_GRADS.pop(id(p), None)
        return
    for p, g in zip(params, grads):
        _KEPT_GRADS[id(p)] = (p, g)


def kept_grads(params):
    """The gradients the optimizer applies after the program's statements between backward() and step() changed
    them as torch's .grad: in place (`ops.assign(tensor_grad(p, ...), ...)` changes the kept tensor) or by
    `p.grad = value` (an attribute of the Parameter here; None: torch's optimizers skip the parameter)."""
    out = []
    for p in params:
        written = getattr(p, "__dict__", {})
        if "grad" in written:
            out.append(written.pop("grad"))
            _KEPT_GRADS[id(p)] = (p, out[-1])
        else:
            kept = _KEPT_GRADS.get(id(p))
            out.append(kept[1] if kept is not None and kept[0] is p else None)
    return tuple(out)


_GRAD_IN_GRAPH = (
    "Tensor.grad at {} is read inside a compiled graph (GRAPH mode or ms.jit), where MindSpore keeps no .grad and "
    "cannot tell a buffer from a trained parameter; run this network in PYNATIVE mode "
    "(ms.set_context(mode=ms.PYNATIVE_MODE)) or move the read out of construct")


def tensor_grad(value, where):
    """torch's `value.grad`: the gradient the last converted train step kept for this parameter (keep_grads);
    None for a parameter that requires no gradient; on a tensor that is no Parameter the gradient a backward()
    run by autograd_backward added (recorded_backward.py); on any other tensor MigrationError naming the original
    site (MindSpore tensors keep no gradient); on any other object, the attribute. Inside a compiled graph
    neither the kept gradients nor a Parameter's flag can be read: compiling stops with MigrationError naming
    the site (raised while the graph runs, MindSpore would report only "Unsupported exception type")."""
    if _compiling(_draw_probe):
        _refuse_compiled(_GRAD_IN_GRAPH, where)
    if isinstance(value, ms.Tensor):
        if "grad" in getattr(value, "__dict__", ()):     # the program's `p.grad = value` since the step
            return value.grad
        kept = _KEPT_GRADS.get(id(value))
        if kept is not None and kept[0] is value:
            return kept[1]
        filled = _filled_reader("filled_gradient")     # a backward() handed the loss (backward_to_grads)
        if filled is not None and isinstance(value, ms.Parameter):
            handled, grad = filled(value)
            if handled:
                return grad
        recorded = getattr(value, "_grad", None)
        if recorded is not None and not isinstance(value, ms.Parameter):    # autograd_backward's (recorded_backward.py)
            return recorded
        if isinstance(value, ms.Parameter) and not value.requires_grad:
            return None
        _no_grad_kept(where)
    return value.grad


def add_grad(value, grad):
    """torch's backward() adding to `value.grad` (PGD's perturbation, marked requires_grad, its .grad never cleared
    in the attack loop): the sum of the gradients since the tensor was made or the program last set its .grad,
    kept on the tensor (tensor_grad reads it) and returned."""
    held = value.__dict__.get("grad")
    value.grad = grad if held is None else held + grad
    return value.grad


def _no_grad_kept(where):
    # its own function: MindSpore's graph parser refuses a `raise` of a non-builtin exception anywhere in a
    # function a graph calls, even on a branch compiling never reaches
    raise MigrationError(
        f"Tensor.grad at {where} was not converted to MindSpore (MindSpore keeps no .grad on a tensor: "
        "gradients are the values mindspore.value_and_grad returns); see the '# msmigrate: TODO' comment "
        "there and the migration report")
