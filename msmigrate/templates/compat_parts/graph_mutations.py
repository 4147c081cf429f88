# Lists and dicts changed in place in a compiled construct (msmigrate/graph_mutations.py).
#
# A function given a list or dict changes a copy of it when compiled (2.10, measured): the caller's stays
# as it was. PyNative changes it as Python does; compiling a graph that reaches the change stops here.
_ARGUMENT_CHANGE_REFUSAL = (
    "{} at {} changes a list or dict the function was given, inside a compiled graph (GRAPH mode or ms.jit): "
    "MindSpore gives the function a copy, so the caller's list or dict stays as it was. Return the changed "
    "list or dict and rebind it in the caller, or run this network in PYNATIVE mode "
    "(ms.set_context(mode=ms.PYNATIVE_MODE))")

# A list or dict another holder shares (`m = l`, `t = (l, 1)`, `l = self.cache`), changed in place: compiled,
# the change reaches the name it was made through only (2.10, measured; msmigrate/graph_aliases.py).
_SHARED_CHANGE_REFUSAL = (
    "{} at {} changes a list or dict that another name or container also holds, inside a compiled graph (GRAPH "
    "mode or ms.jit): MindSpore keeps lists and dicts as values there, so the change reaches this name only and "
    "the other holder keeps the old contents. Rebind the other holder after the change (m = l), or run this "
    "network in PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE))")


# `l.remove(v)` leaves the list as it was in GRAPH mode (2.10, measured); `l[:] = list_removed(l, v)`
# is the same change and compiles right.
def list_removed(values, item):
    """values without the first item equal to `item` (list.remove's choice), ValueError when none is."""
    out = []
    found = False
    for value in values:
        if not found and (value is item or value == item):   # list.remove's test
            found = True
        else:
            out.append(value)
    if not found:
        raise ValueError("list.remove(x): x not in list")
    return out


# `v = d.pop('k')` in a compiled construct stops compiling (2.10: "For 'TupleGetItem', input[0] should be
# Sequence"); the read and this copy without the key compile (also for an empty **kwargs, which GRAPH
# mode holds as an empty tuple).
def dict_without(values, key):
    """The dict `values` less `key` (what `values.pop(key)` leaves), also inside GRAPH mode."""
    return {k: v for k, v in values.items() if k != key}


def graph_argument_change(value, what, where):
    """The change's result, in PyNative; compiling a graph that reaches it raises MigrationError."""
    return _pynative_only(value, _ARGUMENT_CHANGE_REFUSAL, what, where)


def graph_shared_change(value, what, where):
    """The change's result, in PyNative; compiling a graph that reaches it raises MigrationError."""
    return _pynative_only(value, _SHARED_CHANGE_REFUSAL, what, where)
