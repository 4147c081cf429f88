# torch.zeros / torch.ones / torch.empty used as values, called elsewhere with torch's arguments (encodec's
# EuclideanCodebook: `init_fn = uniform_init if not kmeans_init else torch.zeros`, then `init_fn(codebook_size,
# dim)`): MindSpore's ops.zeros takes (size, dtype), so the sizes given one by one would reach its dtype ("For
# 'Zeros', the input 'dtype' should be mindspore dtype, but got 16"). These take torch's: sizes as ints, one
# sequence or a torch.Size, dtype float32 by default, device/requires_grad/layout/pin_memory/memory_format dropped
# as the direct calls' rule drops them; out= stops with MigrationError.


def _factory_size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return size


def zeros_factory_value(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
                        pin_memory=False, memory_format=None):
    if out is not None:
        _raise_migration_error("torch.zeros(..., out=...) used as a value is not converted")
    return ops.zeros(_factory_size(size), ms.float32 if dtype is None else dtype)


def ones_factory_value(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
                       pin_memory=False, memory_format=None):
    if out is not None:
        _raise_migration_error("torch.ones(..., out=...) used as a value is not converted")
    return ops.ones(_factory_size(size), ms.float32 if dtype is None else dtype)


def empty_factory_value(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
                        pin_memory=False, memory_format=None):
    """torch leaves the values uninitialised; the direct call's rule writes zeros too"""
    if out is not None:
        _raise_migration_error("torch.empty(..., out=...) used as a value is not converted")
    return ops.zeros(_factory_size(size), ms.float32 if dtype is None else dtype)
