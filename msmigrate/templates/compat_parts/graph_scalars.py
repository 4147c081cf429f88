# Python float scalars in a compiled construct (msmigrate/graph_scalars.py).
import math as _math
import operator as _operator

from mindspore.ops.primitive import constexpr as _scalar_constexpr

_SCALAR_OPERATORS = {"+": _operator.add, "-": _operator.sub, "*": _operator.mul, "/": _operator.truediv}
_SCALAR_ROUNDINGS = {"int": int, "floor": _math.floor, "ceil": _math.ceil}

_HOST_SCALAR_REFUSAL = (
    "{}(...) at {} rounds float arithmetic on a value known only when the graph runs, inside a compiled graph "
    "(GRAPH mode or ms.jit): MindSpore computes Python floats in float32 there, so the rounded result can be one "
    "off. Run this network in PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE))")


def _scalar_value(tree):
    """The value of ("*", a, ("-", 1, b)) as Python computes a * (1 - b)."""
    if isinstance(tree, tuple) and len(tree) == 3 and tree[0] in _SCALAR_OPERATORS:
        return _SCALAR_OPERATORS[tree[0]](_scalar_value(tree[1]), _scalar_value(tree[2]))
    return tree


def _scalar_known(tree):
    if isinstance(tree, tuple) and len(tree) == 3 and tree[0] in _SCALAR_OPERATORS:
        return _scalar_known(tree[1]) and _scalar_known(tree[2])
    return tree is not None and not isinstance(tree, ms.Tensor)


# A constexpr gets the operands as Python's own ints and floats (2.10, measured: self.ratio 0.29 arrives as the
# double, while `1 - self.prob` computed in the graph arrives as float32 0.2900000214576721).
@_scalar_constexpr(check=False)
def _host_rounded(kind, tree, where):
    if not _scalar_known(tree):
        raise MigrationError(_HOST_SCALAR_REFUSAL.format(kind, where))
    return _SCALAR_ROUNDINGS[kind](_scalar_value(tree))


# `int(self.ratio * n)` in a compiled construct: GRAPH mode (2.10) computes the product in float32, and
# int/floor/ceil of a result near an integer differ (measured: int(0.29 * 100) is 29 there, 28 in Python).
def float_rounded(kind, tree, where):
    """int / math.floor / math.ceil (`kind`) of the arithmetic `tree`, as Python computes it, also compiled."""
    if _compiling(_draw_probe):
        return _host_rounded(kind, tree, where)
    return _SCALAR_ROUNDINGS[kind](_scalar_value(tree))


# `"%d rows" % x.shape[0]` in a compiled construct: GRAPH mode (2.10) formats it by its Python fallback, and
# tensor arithmetic with the result (`h + len(label)`) then has a gradient of 0 (measured); the same
# formatting inside a function keeps it.
def percent_format(template, args):
    """template % args, also inside GRAPH mode."""
    return template % args
