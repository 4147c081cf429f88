"""Activation checkpointing (torch.utils.checkpoint) without recomputation: the functions
run once, with the same values and gradients; MindSpore's Cell.recompute() is the way to
trade compute for memory."""
from mindspore import nn


def checkpoint_sequential(functions, segments, input):
    """torch.utils.checkpoint.checkpoint_sequential: run a SequentialCell, or a list of
    cells or functions in order. `segments` only chose where torch recomputes."""
    if isinstance(functions, nn.SequentialCell):
        return functions(input)
    for fn in functions:
        input = fn(input)
    return input
