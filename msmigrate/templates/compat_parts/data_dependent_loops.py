"""A `for` over a tensor in a Cell's construct (or a function it calls), through loop_rows with its line
(transformer.py leave_For). Compiled, MindSpore unrolls the loop over the tensor's rows while compiling: a tensor
whose length the data decides (torch.unique's values, nonzero's indices: a mixture of experts looping over the
experts its router chose) has no length then, and MindSpore stops with an error naming no line of the program
(an IndexError of StridedSlice, a TypeError, a forward returning None; measured on 2.10), or compiles without
end. So compiling such a loop raises MigrationError naming the original line; PyNative runs it as written."""


@_migration_constexpr(check=False)
def _length_unknown(shape):
    # while compiling, a dimension the data decides is None (or -1), a rank the data decides leaves no shape
    return shape is None or len(shape) > 0 and (shape[0] is None or shape[0] < 0)


_DATA_DEPENDENT_LOOP = (
    "the loop at {} runs over a tensor whose length the data decides (torch.unique, nonzero, masked_select...) "
    "inside a compiled graph (GRAPH mode or ms.jit): MindSpore unrolls a loop over a tensor while compiling, when "
    "that length is unknown. Run this network in PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE))")


def loop_rows(values, where):
    """`for row in values` at `where`: values themselves; compiling a loop over a tensor whose length is known only
    when the graph runs raises MigrationError naming the line."""
    if _compiling(_draw_probe) and isinstance(values, ms.Tensor):
        if _length_unknown(values.shape):
            _refuse_compiled(_DATA_DEPENDENT_LOOP, where)
    return values
