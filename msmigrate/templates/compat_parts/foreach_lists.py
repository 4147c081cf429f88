"""torch._foreach_OP with more than one operand (add, sub, mul, div, lerp, addcmul, addcdiv, maximum, minimum,
clamp_min, clamp_max, pow, copy), as torch's optimizers and lion-pytorch's foreach Lion use them: a loop over the
list of tensors, each with its own item of every list operand (a number, a list of numbers or tensors, one tensor).
The in-place form `torch._foreach_OP_(tensors, ...)` changes the tensors themselves, as torch does, so a parameter,
an optimizer's state tensor or another list holding them sees the new values; it returns the list, as torch 2.13.
The unary in-place forms (`_foreach_sign_`) write through foreach_write the same way (msmigrate/mappings/foreach_ops.py)."""

_FOREACH_IN_GRAPH = (
    "torch._foreach_{}_ at {} changes tensors in place inside a compiled graph (GRAPH mode construct, ms.jit): a "
    "graph cannot write into a tensor that is no Parameter; run it in PYNATIVE mode "
    "(ms.set_context(mode=ms.PYNATIVE_MODE))")


def _foreach_item(value, i):
    """The i-th operand: the item of a list/tuple (of numbers or tensors), else the value itself."""
    return value[i] if isinstance(value, (list, tuple)) else value


def _foreach_lerp(start, end, weight):
    """torch's lerp, in its two forms (start + w * (end - start) for |w| < 0.5, else end - (end - start) * (1 - w))."""
    if isinstance(weight, ms.Tensor):
        return ops.where(ops.abs(weight) < 0.5, start + weight * (end - start), end - (end - start) * (1 - weight))
    if abs(weight) < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * (1 - weight)


def _foreach_pow(t, e):
    return ops.pow(t, e) if isinstance(t, ms.Tensor) else ops.pow(ms.Tensor(t, e.dtype), e)


_FOREACH_OPS = {
    "add": lambda t, o, alpha=1: t + (o if alpha == 1 else o * alpha),
    "sub": lambda t, o, alpha=1: t - (o if alpha == 1 else o * alpha),
    "mul": lambda t, o: t * o,
    "div": lambda t, o: t / o,
    "maximum": lambda t, o: ops.maximum(t, o),
    "minimum": lambda t, o: ops.minimum(t, o),
    "clamp_min": lambda t, o: ops.maximum(t, ops.full_like(t, o) if not isinstance(o, ms.Tensor) else o),
    "clamp_max": lambda t, o: ops.minimum(t, ops.full_like(t, o) if not isinstance(o, ms.Tensor) else o),
    "pow": _foreach_pow,
    "lerp": _foreach_lerp,
    "addcmul": lambda t, a, b, value=1: t + value * a * b,
    "addcdiv": lambda t, a, b, value=1: t + value * a / b,
    "copy": lambda t, o, non_blocking=False: ops.broadcast_to(o.astype(t.dtype), t.shape),
}


def foreach_list(op, tensors, *operands, **options):
    """torch._foreach_OP(tensors, *operands): a tuple of new tensors, OP of each tensor with its operands' items
    (the keyword options, alpha=/value=, may be lists too)."""
    fn = _FOREACH_OPS[op]
    tensors = list(tensors)
    for value in list(operands) + list(options.values()):
        if isinstance(value, (list, tuple)) and len(value) != len(tensors):
            raise RuntimeError(f"torch._foreach_{op}: tensor lists must have the same number of tensors, got "
                               f"{len(tensors)} and {len(value)}")
    return tuple(fn(t, *[_foreach_item(v, i) for v in operands], **{k: _foreach_item(v, i) for k, v in options.items()})
                 for i, t in enumerate(tensors))


def foreach_write(op, where, tensors, values):
    """Each tensor of the list written with its new value in place (a Parameter through ops.assign), as torch's
    in-place _foreach_ functions change the tensors themselves; returns the list."""
    values = list(values)
    for t, value in zip(tensors, values):
        if not isinstance(t, ms.Parameter) and _compiling(_draw_probe):
            _refuse_compiled(_FOREACH_IN_GRAPH, op, where)
        write_into(t, value)
    return tensors


def foreach_list_(op, where, tensors, *operands, **options):
    """torch._foreach_OP_(tensors, *operands): foreach_list's values written into the tensors themselves."""
    return foreach_write(op, where, tensors, foreach_list(op, tensors, *operands, **options))
