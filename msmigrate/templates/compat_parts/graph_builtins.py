# Python builtins that GRAPH mode cannot evaluate on every argument.
#
# In a compiled construct or train step, a function or lambda passed as an argument is a
# function graph, not a Python object: `callable(d)` on it fails ("KeyError: 'd'", lucidrains'
# `default(val, d)`), and isinstance(d, object) is False there, which Python never says.


def is_callable(obj):
    """callable(obj), also inside GRAPH mode (where a function argument is a function graph)."""
    if isinstance(obj, (ms.Tensor, int, float, bool, str, tuple, list, dict, type(None))):
        return False
    if not isinstance(obj, object):   # only a function graph (GRAPH mode) is no object
        return True
    return callable(obj)
