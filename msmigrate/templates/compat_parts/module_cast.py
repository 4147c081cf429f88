"""torch's module.float()/.double()/.half()/.bfloat16(): every floating-point parameter and buffer of a
cell and its children cast in place (a Cell has no such method: Cell.to_float only sets the compute
precision); and the same call on a receiver the converter could not type, decided at run time."""

_FLOAT_DTYPES = (ms.float16, ms.float32, ms.float64, ms.bfloat16)


_CONVS = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Conv1dTranspose, nn.Conv2dTranspose, nn.Conv3dTranspose)


_MODULE_CAST_IN_GRAPH = (
    "a module cast (.float()/.double()/.half()/.to(dtype) of a model) at {} inside a compiled graph (GRAPH mode "
    "construct, ms.jit, the converted train step): it changes the model's Parameters in place, which a graph "
    "cannot; cast the model outside its construct, or run in PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE))")


def module_cast(cell, dtype, where=None, every=False):
    """Casts the cell's floating-point parameters and buffers (every=True: all of them, torch's module.type) to
    `dtype`; returns the cell, as torch does. A float64 convolution layer would compute nothing (no MindSpore kernel
    takes float64): the cast stops, naming the line. Compiling a graph that reaches it stops with MigrationError
    (a raise of MigrationError there stopped compiling as "Unsupported exception type", naming no line)."""
    if _compiling(_draw_probe):
        _refuse_compiled(_MODULE_CAST_IN_GRAPH, where)
    return _cells_cast(cell, dtype, where, every)


def _cells_cast(cell, dtype, where, every):
    kinds = None if every else _FLOAT_DTYPES
    if dtype == ms.float64:
        for name, sub in cell.cells_and_names():
            if isinstance(sub, _CONVS):
                raise MigrationError(f"{where or 'a module cast'}: .double() of {type(sub).__name__} "
                                     f"{name or '(the module)'}: MindSpore's convolution kernels take float16/float32 "
                                     "only (torch computes it in float64)")
    for param in cell.get_parameters(expand=True):
        if (kinds is None or param.dtype in kinds) and param.dtype != dtype:
            param.set_dtype(dtype)
    for _, sub in cell.cells_and_names():
        buffers = getattr(sub, "_buffers", None) or {}
        for name, buf in list(buffers.items()):
            if isinstance(buf, ms.Tensor) and (kinds is None or buf.dtype in kinds) and buf.dtype != dtype:
                buffers[name] = buf.astype(dtype)
    return cell


def cast_tensor_or_module(x, dtype, where=None):
    """x.float() and the like where x may be a model or a tensor (the result of a call the converter
    could not type): a Cell's parameters are cast in place, a tensor gives a cast copy."""
    if isinstance(x, nn.Cell):
        return module_cast(x, dtype, where)
    return x.astype(dtype)


def to_value(x, *args, **kwargs):
    """x.to(...) where the converter could not tell a device from a dtype or a tensor (`x.to(get_device())`),
    decided at run time as torch decides: a device (a name, torch.device's stand-in, an index) moves nothing
    (MindSpore places values by its context), a dtype casts, a tensor gives its dtype; on a model a dtype
    casts its floating-point parameters and buffers in place and the model is returned."""
    dtype = kwargs.get("dtype")
    for a in args:
        if isinstance(a, ms.Tensor):
            dtype = a.dtype
        elif isinstance(a, ms.dtype.Type):
            dtype = a
        elif not (a is None or isinstance(a, (str, int))):
            raise TypeError(f"to() received an invalid argument: {type(a).__name__} (a device, a dtype or a "
                            f"tensor expected)")
    if isinstance(x, nn.Cell):
        return x if dtype is None else module_cast(x, dtype)
    if dtype is None or dtype == x.dtype:
        return x
    return x.astype(dtype)
