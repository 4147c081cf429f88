"""A read of state a Module keeps across forward calls (`if self.state is None:`, `y + self.prev` where
forward stores self.prev; msmigrate/graph_state.py). PyNative reads it as written. Compiled (GRAPH mode,
ms.jit), MindSpore decides the read while compiling and reuses the graph on the next call (measured on
2.10: the first call's branch and value again, silently); so compiling stops with MigrationError naming
the original line. (_pynative_only: host_draws.py)"""
_STATE_REFUSAL = (
    "{} at {} reads state that forward keeps across calls, inside a compiled graph (GRAPH mode or ms.jit): "
    "MindSpore decides the read while compiling and reuses it on every call. Keep the state in a buffer "
    "(register_buffer, a Parameter MindSpore updates in the graph), pass it in and return it, or run this "
    "network in PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE))")


def graph_state(value, attr, where):
    """Compiled, MindSpore decides this read once, while compiling (measured): PyNative reads it; GRAPH raises."""
    return _pynative_only(value, _STATE_REFUSAL, attr, where)
