# torch.cat's legacy rule: a 1-D empty tensor (shape (0,)) may stand beside tensors of any rank and
# is left out (`acc = torch.tensor([])` grown by cat, a key/value cache's first step); ops.cat wants
# one rank. The result's dtype is still promoted with it, as torch does. Written with what GRAPH
# mode compiles (comprehensions over the static shapes, no generator arguments).

# torch's promotion order among tensors with dimensions: bool < integers < floating < complex
_CAT_PROMOTION = (ms.bool_, ms.uint8, ms.int8, ms.int16, ms.int32, ms.int64, ms.float16, ms.bfloat16, ms.float32,
                  ms.float64, ms.complex64, ms.complex128)


def _legacy_empty(t):
    return t.ndim == 1 and t.shape[0] == 0


def cat(tensors, axis=0):
    """torch.cat(tensors, dim): ops.cat, leaving out 1-D empty tensors beside tensors of other ranks."""
    kept = tuple(t for t in tensors if not _legacy_empty(t))
    if len(kept) == len(tensors) or not kept or max([t.ndim for t in kept]) == 1:
        return ops.cat(tensors, axis)
    out = ops.cat(kept, axis)
    for t in tensors:
        if _CAT_PROMOTION.index(t.dtype) > _CAT_PROMOTION.index(out.dtype):
            out = out.astype(t.dtype)
    return out
