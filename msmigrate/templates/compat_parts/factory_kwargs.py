# torch factory calls given their keyword arguments as a dict: `torch.zeros(n, **dd)` with
# dd = {'device': device, 'dtype': dtype} (timm, transformers). The dict is known only when the
# call runs: placement arguments go (MindSpore places tensors by context), dtype= stays (None:
# float32, torch's default), any other key stops the program naming the site.
_FACTORY_PLACEMENT = frozenset(("device", "layout", "requires_grad", "pin_memory", "memory_format", "generator",
                                "non_blocking", "names"))


def factory_kwargs(kwargs, where, **explicit):
    """`explicit`: the arguments the call also names (dtype=), which the dict must not repeat."""
    for key in kwargs:
        if key in explicit:
            raise TypeError(f"got multiple values for keyword argument {key!r}")
    out = {"dtype": ms.float32}
    for key, value in {**explicit, **kwargs}.items():
        if key == "dtype":
            if value is not None:
                out["dtype"] = value
        elif key not in _FACTORY_PLACEMENT:
            raise MigrationError(f"{where}: argument {key}= of a torch tensor factory is not translated "
                                 f"(given through **kwargs); convert this call by hand")
    return out
