# torch.cat's legacy rule: a 1-D empty tensor (shape (0,)) may stand beside tensors of any rank and
# is left out (`acc = torch.tensor([])` grown by cat, a key/value cache's first step); ops.cat wants
# one rank. The result's dtype is still promoted with it, as torch does. Written with what GRAPH
# mode compiles (a plan of the static shapes, computed while compiling).

# torch's promotion order among tensors with dimensions: bool < integers < floating < complex
_CAT_PROMOTION = (ms.bool_, ms.uint8, ms.int8, ms.int16, ms.int32, ms.int64, ms.float16, ms.bfloat16, ms.float32,
                  ms.float64, ms.complex64, ms.complex128)


@ops.constexpr
def _cat_plan(shapes, axis):
    """The indices of the operands cat joins; None where it joins them all. Computed from the static shapes
    with plain Python (GRAPH mode runs it while compiling: a comprehension keeping tensors by a condition stops
    MindSpore's graph compiler, "The pointer[seq_abs] is null")."""
    n = len(shapes)
    kept = [i for i in range(n) if not (len(shapes[i]) == 1 and shapes[i][0] == 0)]
    if not kept or max(len(shapes[i]) for i in kept) == 1:
        kept = list(range(n))
    filled = [i for i in kept if len(shapes[i]) > 0 and shapes[i][axis % len(shapes[i])] != 0]   # None: unknown, a mask's pick
    if filled:
        ref = shapes[filled[0]]
        a = axis % len(ref)
        # of the others' rank and sizes off the joined axis, and none along it: the result is the same without it
        kept = [i for i in kept if not (len(shapes[i]) == len(ref) and shapes[i][a] == 0
                                       and all(shapes[i][d] == ref[d] for d in range(len(ref)) if d != a))]
    return None if len(kept) == n or not kept else tuple(kept)


def cat(tensors, axis=0):
    """torch.cat(tensors, dim): ops.cat of the operands in their promoted dtype (MindSpore's Concat kernel takes one:
    segment-anything's int32 labels and float padding), leaving out 1-D empty tensors beside tensors of other ranks, and
    tensors empty along the joined axis: MindSpore's gradient of an empty slice stops where it is joined
    (StridedSliceGrad "input memory out of bounds", CPU; rotary-embedding-torch's `t[..., :start_index]`)."""
    kept = _cat_plan(tuple([t.shape for t in tensors]), axis)
    top = tensors[0].dtype
    for t in tensors:   # the operands' dtypes promoted, as torch (an int32 tensor and a float32 one: float32)
        top = t.dtype if _CAT_PROMOTION.index(t.dtype) > _CAT_PROMOTION.index(top) else top
    tensors = [t if t.dtype == top else t.astype(top) for t in tensors]
    return ops.cat(tensors if kept is None else [tensors[i] for i in kept], axis)
