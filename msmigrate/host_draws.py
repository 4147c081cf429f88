"""Host draws where a graph may be compiled: `np.random.normal(...)`, `random.random()` in a Cell's
construct (or another of its methods but __init__) or in a module function a Cell calls, by name
(graph_pops.graph_functions). Compiled, MindSpore evaluates such a call once, while compiling: every
call of the network then reuses one sample (silently different from torch, where each forward draws
anew). The call becomes `_ms_compat.host_draw(<call>, api, "file:line")`: the value itself in PyNative,
a MigrationError naming the line when a graph that reaches it is compiled (templates/compat_parts/
host_draws.py). A train step calling such a network already runs op by op (train_loop.drawing_objects).

Host reads there are guarded the same way: `t.numpy()` becomes `_ms_compat.host_value(t, ...)` and a NumPy call
on a tensor's `.item()` (`np.sqrt(h.sum().item())`) or a SciPy call given a non-literal value (DETR's
`linear_sum_assignment(c[i])`) `_ms_compat.host_result(<call>, ...)`. Compiled, MindSpore's JIT fallback runs them
on the host and silently zeroes the gradient of every expression their values reach."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from . import records as R
from .callsite import code_of

# stdlib `random` functions that draw (random.seed/getstate/setstate do not)
_RANDOM = {"random", "uniform", "randint", "randrange", "choice", "choices", "sample", "shuffle", "gauss",
           "normalvariate", "lognormvariate", "expovariate", "betavariate", "gammavariate", "triangular",
           "vonmisesvariate", "paretovariate", "weibullvariate", "getrandbits"}
_NOT_DRAWS = {"seed", "get_state", "set_state", "RandomState", "default_rng", "Generator", "SeedSequence",
              "PCG64", "MT19937", "Philox", "SFC64", "BitGenerator"}


def drawn_api(tr, call: cst.Call) -> Optional[str]:
    """`numpy.random.normal` for such a call (through the file's imports), else None."""
    q = tr._qname_any(call.func)
    if not q or tr._shadowed(code_of(call.func).strip().split(".", 1)[0]):
        return None
    if q.startswith("numpy.random.") and q.rsplit(".", 1)[-1] not in _NOT_DRAWS:
        return q
    if q.startswith("random.") and q.count(".") == 1 and q[7:] in _RANDOM:
        return q
    return None


def in_graph_code(tr) -> bool:
    """A Cell's method that runs in construct, or a module function that Cells call."""
    if tr._in_forward():
        return True
    return bool(tr._funcs) and not tr._classes and tr._funcs[0].name in tr._cell_functions


def _host_read(original: cst.Call, result: cst.Call) -> bool:
    """`t.numpy()` converted to `t.asnumpy()`: a tensor read on the host (host_value(t, ...) reads it)."""
    f = original.func
    return (isinstance(f, cst.Attribute) and f.attr.value == "numpy" and isinstance(result.func, cst.Attribute)
            and result.func.attr.value == "asnumpy")


class _ItemCalls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        self.found |= isinstance(f, cst.Attribute) and f.attr.value == "item" and not node.args


def _numpy_of_item(tr, original: cst.Call) -> Optional[str]:
    """`numpy.sqrt` for `np.sqrt(h.sum().item())`: a NumPy call on a tensor's host value, else None."""
    q = tr._qname_any(original.func)
    if not q or not q.startswith("numpy.") or tr._shadowed(code_of(original.func).strip().split(".", 1)[0]):
        return None
    items = _ItemCalls()
    for a in original.args:
        a.value.visit(items)
    return q if items.found else None


_LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)


def _host_library_call(tr, original: cst.Call) -> Optional[str]:
    """`scipy.optimize.linear_sum_assignment` for `linear_sum_assignment(c[i])`: a SciPy function given a value
    that is not a literal (a tensor, in graph code), else None. SciPy computes on the host: compiled, MindSpore's
    JIT fallback runs it when the graph runs, its result a Python object the graph cannot take apart (measured on
    2.10, DETR's Hungarian matcher: the loss dicts built from its indices fail as "The pointer[dict] is null",
    naming no line) and the gradient of what it reaches zero, as for host_result's NumPy calls."""
    q = tr._qname_any(original.func)
    if not q or not q.startswith("scipy.") or tr._shadowed(code_of(original.func).strip().split(".", 1)[0]):
        return None
    if all(isinstance(a.value, _LITERALS) for a in original.args):
        return None
    return q


def _guard(tr, helper: str, value: cst.BaseExpression, api: str, original: cst.Call) -> cst.Call:
    where = f"{tr.module_name}:{tr._line(original)}"
    return cst.Call(func=tr._render_template(helper), args=[
        cst.Arg(value), cst.Arg(cst.SimpleString(repr(api))), cst.Arg(cst.SimpleString(repr(where)))])


def wrap(tr, original: cst.Call, result: cst.BaseExpression) -> cst.BaseExpression:
    """`_ms_compat.host_draw(result, api, where)` for a host draw in graph code, `_ms_compat.host_value(...)`
    for `t.numpy()` there (compiled, MindSpore's JIT fallback reads it once, cut off from the gradient, and a
    NumPy value a graph returns breaks value_and_grad); else result."""
    if not isinstance(result, cst.Call) or not in_graph_code(tr):
        return result
    if _host_read(original, result):
        return _guard(tr, "_ms_compat.host_value", result.func.value, "Tensor.numpy", original)
    read = _numpy_of_item(tr, original)
    if read is not None:
        tr._record(original, read, "_ms_compat.host_result", R.DIFFERENCE,
                   "a NumPy call on a tensor's .item(): runs in PyNative; compiling a graph that reaches it (GRAPH "
                   "mode) raises MigrationError, since MindSpore would zero the gradient of what its value reaches")
        return _guard(tr, "_ms_compat.host_result", result, read, original)
    lib = _host_library_call(tr, original)
    if lib is not None:
        tr._record(original, lib, "_ms_compat.host_result", R.DIFFERENCE,
                   "a SciPy call on a tensor: runs in PyNative; compiling a graph that reaches it (GRAPH mode) raises "
                   "MigrationError, since MindSpore would run it on the host, its result unusable by the graph")
        return _guard(tr, "_ms_compat.host_result", result, lib, original)
    api = drawn_api(tr, original)
    if api is None:
        return result
    where = f"{tr.module_name}:{tr._line(original)}"
    tr._record(original, api, "_ms_compat.host_draw", R.DIFFERENCE,
               "a host draw: runs in PyNative; compiling a graph that reaches it (GRAPH mode) raises "
               "MigrationError, since MindSpore would draw once, at compile time")
    return cst.Call(func=tr._render_template("_ms_compat.host_draw"),
                    args=[cst.Arg(result), cst.Arg(cst.SimpleString(repr(api))), cst.Arg(cst.SimpleString(repr(where)))])
