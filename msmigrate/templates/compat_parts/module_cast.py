"""torch's module.float()/.double()/.half()/.bfloat16(): every floating-point parameter and buffer of a
cell and its children cast in place (a Cell has no such method: Cell.to_float only sets the compute
precision); and the same call on a receiver the converter could not type, decided at run time."""

_FLOAT_DTYPES = (ms.float16, ms.float32, ms.float64, ms.bfloat16)


def module_cast(cell, dtype):
    """Casts the cell's floating-point parameters and buffers to `dtype`; returns the cell, as torch does."""
    for param in cell.get_parameters(expand=True):
        if param.dtype in _FLOAT_DTYPES and param.dtype != dtype:
            param.set_dtype(dtype)
    for _, sub in cell.cells_and_names():
        buffers = getattr(sub, "_buffers", None) or {}
        for name, buf in list(buffers.items()):
            if isinstance(buf, ms.Tensor) and buf.dtype in _FLOAT_DTYPES and buf.dtype != dtype:
                buffers[name] = buf.astype(dtype)
    return cell


def cast_tensor_or_module(x, dtype):
    """x.float() and the like where x may be a model or a tensor (the result of a call the converter
    could not type): a Cell's parameters are cast in place, a tensor gives a cast copy."""
    if isinstance(x, nn.Cell):
        return module_cast(x, dtype)
    return x.astype(dtype)
