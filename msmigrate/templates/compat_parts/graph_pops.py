"""`list.pop()` where a compiled graph computes something else (msmigrate/graph_pops.py): on a list the
function got as an argument (GRAPH mode does not shorten the caller's list) or a tensor popped from a
local list the converter could not rewrite as indexing (GRAPH mode loses its gradient). PyNative pops
as written; compiling a graph that reaches such a pop raises MigrationError naming the original line.
(_compiling, _refuse_compiled: host_draws.py)"""
from mindspore import Tensor as _PopTensor


def graph_pop(item, any_item, where):
    """The popped item, in PyNative; compiling a graph that reaches the pop raises MigrationError."""
    if _compiling(_draw_probe):
        # nested in an expression, GRAPH mode's pop gives (shorter list, item): refused as well
        if any_item or isinstance(item, (_PopTensor, tuple, list)):
            _refuse_compiled(
                "list.pop() at {} inside a compiled graph (GRAPH mode or ms.jit): MindSpore compiles it, but {}. Pop "
                "by indexing in the function that builds the list (`item = h[-1]; h = h[:-1]`) and return the "
                "shorter list, or run this network in PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE))", where,
                "the caller's list would keep its length" if any_item
                else "the gradient reaching the popped tensor would be lost")
    return item
