# torch factory calls given their keyword arguments as a dict: `torch.zeros(n, **dd)` with
# dd = {'device': device, 'dtype': dtype} (timm, transformers). The dict is known only when the
# call runs: placement arguments go (MindSpore places tensors by context), dtype= stays (None:
# float32, torch's default), any other key stops the program naming the site.
from mindspore.ops.primitive import constexpr as _factory_constexpr

_FACTORY_PLACEMENT = frozenset(("device", "layout", "requires_grad", "pin_memory", "memory_format", "generator",
                                "non_blocking", "names"))


def factory_kwargs(kwargs, where, **explicit):
    """`explicit`: the arguments the call also names (dtype=), which the dict must not repeat. Compiled (GRAPH
    mode, ms.jit) too: the keys are checked by a constexpr (a graph raises only Python's own exception types)."""
    _factory_keys(tuple(kwargs.keys()), tuple(explicit.keys()), where)
    dtype = explicit.get("dtype", None) if "dtype" in explicit else kwargs.get("dtype", None)
    return {"dtype": ms.float32 if dtype is None else dtype}


def factory_dtype(kwargs, where):
    """torch.tensor(data, **kwargs): the dict's dtype (None: inferred from the data, as torch.tensor infers it), its
    other keys checked as factory_kwargs checks them."""
    _factory_keys(tuple(kwargs.keys()), (), where)
    return kwargs.get("dtype", None)


@_factory_constexpr(check=False)
def _factory_keys(keys, explicit, where):
    for key in keys:
        if key in explicit:
            raise TypeError(f"got multiple values for keyword argument {key!r}")
    for key in keys + explicit:
        if key != "dtype" and key not in _FACTORY_PLACEMENT:
            raise MigrationError(f"{where}: argument {key}= of a torch tensor factory is not translated "
                                 f"(given through **kwargs); convert this call by hand")
