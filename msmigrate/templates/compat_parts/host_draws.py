"""A NumPy (or `random`) draw inside a Cell's construct or a helper it calls (msmigrate/host_draws.py).
PyNative runs it as written. Compiled (GRAPH mode, ms.jit), MindSpore would make the draw once, while
compiling, and reuse that one sample on every call; so compiling stops with MigrationError naming the
original line."""
import mindspore as ms
from mindspore.ops.primitive import constexpr as _constexpr


def _draw_probe():
    return 0


@_constexpr(check=False)
def _compiling(func):
    """True inside a graph being compiled (a function argument reaches a constexpr there as None)."""
    return func is None


@_constexpr(check=False)
def _refuse_compiled(message, *args):
    """Stops compiling a graph: MigrationError(message.format(*args)), naming the original line."""
    raise MigrationError(message.format(*args))


def _pynative_only(value, message, *args):
    """The value, in PyNative; compiling a graph that reaches it raises MigrationError(message.format(*args))."""
    if _compiling(_draw_probe):
        _refuse_compiled(message, *args)
    return value


def host_draw(value, api, where):
    """The draw's value, in PyNative; compiling a graph that reaches it raises MigrationError."""
    return _pynative_only(
        value, "{} at {} draws on the host inside a compiled graph (GRAPH mode or ms.jit): MindSpore would draw "
        "once, while compiling, and reuse that sample on every call. Run this network in PYNATIVE mode "
        "(ms.set_context(mode=ms.PYNATIVE_MODE)) or draw with MindSpore ops (ops.randn...)", api, where)


_HOST_READ = ("{} at {} reads a tensor on the host inside a compiled graph (GRAPH mode or ms.jit): MindSpore "
              "would give every value computed from it a zero gradient, and a NumPy value the graph returns stops "
              "value_and_grad. Run this network in PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE)) or keep "
              "tensors in construct (ops.stop_gradient(t), ops.sqrt...)")


def host_value(tensor, api, where):
    """`tensor.asnumpy()` in graph code (`t.numpy()` in construct), in PyNative; compiling a graph that reaches
    it raises MigrationError (MindSpore's JIT fallback reads it once, with no gradient through it)."""
    return _pynative_only(tensor, _HOST_READ, api, where).asnumpy()


def host_result(value, api, where):
    """A NumPy call on a tensor's .item() in graph code (`np.sqrt(h.sum().item())`), in PyNative; compiling a
    graph that reaches it raises MigrationError, as host_value."""
    return _pynative_only(value, _HOST_READ, api, where)


_ONE_HOT_REFUSAL = (
    "F.one_hot without num_classes at {} infers the class count from the data (max + 1), a shape known only when "
    "the graph runs, inside a compiled graph (GRAPH mode or ms.jit): pass num_classes, or run this network in "
    "PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE))")


def one_hot_inferred(x, where):
    """F.one_hot(x) / num_classes=-1: torch's class count x.max() + 1, read on the host, as torch does (an empty x
    raises, as in torch); compiling a graph that reaches it raises MigrationError naming the line."""
    if _compiling(_draw_probe):
        _refuse_compiled(_ONE_HOT_REFUSAL, where)
    if x.size == 0:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    return ops.one_hot(x, int(x.max()) + 1)
