"""An instance of a plain project class (a dataclass, `class NestedTensor(object)`) built inside a
compiled graph (msmigrate/graph_objects.py). MindSpore builds it through its Python fallback: every
tensor it holds, and every tensor returned next to it, gets no static shape and no gradient (measured on
2.10: d/dx 0 where PyNative and torch give the true value). PyNative builds it as written; compiling a
graph that reaches it raises MigrationError naming the original line. (_pynative_only: host_draws.py)"""


def graph_object(obj, cls_name, where):
    """The object, in PyNative; compiling a graph that builds it raises MigrationError."""
    return _pynative_only(
        obj, "{}(...) at {} builds a Python object inside a compiled graph (GRAPH mode or ms.jit): MindSpore runs "
        "it through its Python fallback, where the tensors it holds lose their gradient and their static shape. "
        "Return tensors, tuples or dicts of tensors instead, or run this network in PYNATIVE mode "
        "(ms.set_context(mode=ms.PYNATIVE_MODE))", cls_name, where)
