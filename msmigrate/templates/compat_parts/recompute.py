"""Activation checkpointing (torch.utils.checkpoint): the same values and gradients, the activations kept
(MindSpore's Cell.recompute() is the way to trade compute for memory). torch's backward runs a checkpointed
function again; where a gradient is being recorded, recomputed() runs it a second time too, for the state it
changes (a BatchNorm's running statistics in training mode change twice per step in torch)."""
from mindspore import nn


def checkpoint_sequential(functions, segments, input):
    """torch.utils.checkpoint.checkpoint_sequential: run a SequentialCell, or a list of cells or functions, in
    order, in `segments` parts as torch splits them; where a gradient is being recorded every part but the last
    (which torch does not checkpoint) runs a second time, as torch's backward recomputes it (recomputed)."""
    functions = list(functions.cell_list if isinstance(functions, nn.SequentialCell) else functions)
    size = len(functions) // segments
    again = _recording_now()
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        part_input = input
        for fn in functions[start:end + 1]:
            input = fn(input)
        if again:
            for fn in functions[start:end + 1]:
                part_input = fn(part_input)
    for fn in functions[end + 1:]:
        input = fn(input)
    return input


def recomputed(function, *args, **kwargs):
    """torch.utils.checkpoint.checkpoint(function, *args, **kwargs): function's result. Where a
    gradient is being recorded (a train step's forward; decided while compiling in GRAPH mode), the function
    runs once more, its result unused, as torch's backward recomputes it: a BatchNorm inside updates its running
    statistics twice, as torch's."""
    out = function(*args, **kwargs)
    if _recording_now():
        function(*args, **kwargs)
    return out


def _recording_now():
    """Whether a gradient is being recorded: PyNative's executor flag; compiling, decided then."""
    return _recomputed_when_compiled() if _compiling(_draw_probe) else bool(_grad_executor.requires_grad())


@_constexpr(check=False)
def _recomputed_when_compiled():
    """Compiling: whether a gradient is recorded through the graph (_compiled_recording); in a graph of ms.jit or
    ms.grad, where that cannot be told, no (the function runs once: the state it changes changes once)."""
    return bool(_compiled_recording())
