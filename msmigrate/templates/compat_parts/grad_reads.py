"""`x.grad` read where no converted train step computes it (msmigrate/grad_reads.py)."""

# id(parameter) -> (parameter, the gradient the last converted step computed for it): torch's .grad (keep_grads)
_KEPT_GRADS = {}


def keep_grads(params, grads):
    """The gradients a converted train step returned, for the program's later reads of `p.grad` (logging a
    norm, `if p.grad is not None`): torch's .grad after backward() (and after clipping, which is in place).
    grads None: a step that keeps none ran, the parameters' earlier ones are dropped (a read then raises)."""
    if grads is None:
        for p in params:
            _KEPT_GRADS.pop(id(p), None)
        return
    for p, g in zip(params, grads):
        _KEPT_GRADS[id(p)] = (p, g)


def tensor_grad(value, where):
    """torch's `value.grad`: the gradient the last converted train step kept for this parameter (keep_grads);
    None for a parameter that requires no gradient; on any other tensor MigrationError naming the original
    site (MindSpore tensors keep no gradient); on any other object, the attribute."""
    if isinstance(value, ms.Tensor):
        kept = _KEPT_GRADS.get(id(value))
        if kept is not None and kept[0] is value:
            return kept[1]
        if isinstance(value, ms.Parameter) and not value.requires_grad:
            return None
        raise MigrationError(
            f"Tensor.grad at {where} was not converted to MindSpore (MindSpore keeps no .grad on a tensor: "
            "gradients are the values mindspore.value_and_grad returns); see the '# msmigrate: TODO' comment "
            "there and the migration report")
    return value.grad
