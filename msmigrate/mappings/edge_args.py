"""Argument forms torch accepts where the MindSpore op does not, shared by the records of a torch function and of
its Tensor method: a tensor where ops.narrow takes an int (narrow's start), a tensor of split points where
ops.tensor_split takes a list (tensor_split's indices_or_sections), an empty dim tuple (squeeze(x, ()), which
squeezes nothing in torch and every unit axis in MindSpore), an int or a list of tile counts (ops.tile takes a
tuple).

Each is a rule that rewrites the one argument and returns None, so the record's own mapping (target, renames,
out= refusal) converts the rest. A literal argument stays as written.
"""
from __future__ import annotations

import re

_INT_LITERAL = re.compile(r"^-?\s*\d+$")
_SEQ_LITERAL = re.compile(r"^[\[(][-\d\s,]*[\])]$")
_EMPTY = ("()", "[]", "tuple()", "list()")
# torch takes a 0-d input of an op along a dim as a one-element vector (templates/compat_parts/scalar_as_vector.py)
LOG_SOFTMAX_NOTE = ("through _ms_compat.log_softmax (templates/compat_parts/softmax_slices.py), x - logsumexp(x): "
                    "MindSpore 2.10's ops.log_softmax computes a float64 input in float32 (off by ~3e-6) and is "
                    "~30 ulp off in float32")
LOG_SOFTMAX_TEST = "tests/parity/test_log_softmax.py::test_log_softmax_forms"
AS_VECTOR_NOTE = "a 0-d input is a one-element vector, as torch (templates/compat_parts/scalar_as_vector.py)"
INDEX_SELECT = "_ms_compat.as_vector(lambda _ms_x, _ms_i: ops.index_select(_ms_x, {dim}, _ms_i), {input}, {index})"
# batch-first ops whose MindSpore kernel rejects an input with no samples (templates/compat_parts/empty_batch.py)
EMPTY_BATCH_NOTE = ("an input with no samples (N = 0) gives torch's empty result (templates/compat_parts/"
                    "empty_batch.py)")
# the parity test of the records that use these rules
T_EDGE = "tests/parity/test_edge_inputs.py::test_edge_inputs"

# clamp_min/clamp_max with one bound: ops.clamp neither broadcasts the input to a tensor bound's shape (a (5, 1) input
# and a (5,) bound raise) nor keeps NaN inputs; ops.maximum/minimum broadcast, and `x != x` keeps torch's NaN (with
# torch's zero gradient there)
CLAMP_MIN = "(lambda _ms_x: ops.where(_ms_x != _ms_x, ops.stop_gradient(_ms_x), ops.maximum(_ms_x, {bound})))({x})"
CLAMP_MAX = "(lambda _ms_x: ops.where(_ms_x != _ms_x, ops.stop_gradient(_ms_x), ops.minimum(_ms_x, {bound})))({x})"
CLAMP_NOTE = "ops.maximum/minimum (they broadcast a tensor bound as torch does); NaN inputs stay NaN, as in torch"


def tensor_start_as_int(name: str):
    """A rule: `name` (a Python int or a one-element tensor in torch) passed as int(...) unless it is a literal."""
    def rule_fn(ctx):
        code = ctx.bound.code(name)
        if code is not None and not _INT_LITERAL.match(code):
            ctx.bound.set(name, f"int({code})")
        return None
    return rule_fn


def dims_tuple(code: str) -> str:
    """tile/repeat counts as torch takes them (an int, a list, a tuple, a torch.Size) as the tuple ops.tile takes
    (it refuses an int and a list)."""
    code = code.strip()
    if _INT_LITERAL.match(code):
        return f"({code},)"
    if code.startswith("[") and code.endswith("]"):
        inner = code[1:-1].strip().rstrip(",")
        return f"({inner}{',' if inner and ',' not in inner else ''})"
    if code.startswith("(") and code.endswith(")") and "," in code:
        return code
    return f"(lambda _ms_v: tuple(_ms_v) if isinstance(_ms_v, (list, tuple)) else (_ms_v,))({code})"


def dims_as_tuple(name: str):
    """A rule: `name` (tile's dims) as the tuple ops.tile takes (dims_tuple)."""
    def rule_fn(ctx):
        code = ctx.bound.code(name)
        if code is not None:
            ctx.bound.set(name, dims_tuple(code))
        return None
    return rule_fn


def split_points_as_list(name: str):
    """A rule: `name` (an int, a list, or a 0-d / 1-D int tensor in torch) read as a Python int or list."""
    def rule_fn(ctx):
        code = ctx.bound.code(name)
        if code is not None and not (_INT_LITERAL.match(code) or _SEQ_LITERAL.match(code)):
            ctx.bound.set(name, f"({code}.tolist() if isinstance({code}, ms.Tensor) else {code})"
                          if re.match(r"^[A-Za-z_][\w.]*$", code) else
                          f"(lambda _ms_v: _ms_v.tolist() if isinstance(_ms_v, ms.Tensor) else _ms_v)({code})")
        return None
    return rule_fn


def empty_dims_keep(receiver_code):
    """A rule for squeeze: an empty literal dim tuple squeezes nothing (the input itself); else None.
    receiver_code(ctx) gives the input's code (the receiver of a method, the first argument of a function)."""
    def rule_fn(ctx):
        code = ctx.bound.code("dim")
        if code is not None and code.replace(" ", "") in _EMPTY:
            return ctx.expr(receiver_code(ctx))
        return None
    return rule_fn


def nonzero_code(x: str, as_tuple: bool) -> str:
    """torch.nonzero / Tensor.nonzero of the input code `x`: a 0-d input is found as a one-element vector, so
    as_tuple gives its one index tensor and the (n, ndim) rows keep none of that column ((n, 0), as torch)."""
    found = f"ops.nonzero(ops.atleast_1d({x}))"
    if as_tuple:    # one index tensor per dimension, the columns (ops.nonzero(as_tuple=True) has no CPU kernel)
        return f"ops.unbind({found}, 1)"
    if re.match(r"^[A-Za-z_][\w.]*$", x):
        return f"{found}[:, :{x}.ndim]"
    return f"(lambda _ms_x: ops.nonzero(ops.atleast_1d(_ms_x))[:, :_ms_x.ndim])({x})"


def padding_per_side(name: str = "padding"):
    """A rule for avg_pool2d/3d: torch's one padding per spatial dim (ph, pw) written out becomes MindSpore's
    two per dim (ph, ph, pw, pw) (ops.avg_pool2d/3d take an int or one per side); an int or a name stays."""
    def rule_fn(ctx):
        code = ctx.bound.code(name)
        if code is None or not _SEQ_LITERAL.match(code.strip()):
            return None
        values = [v.strip() for v in code.strip()[1:-1].split(",") if v.strip()]
        if len(values) > 1:
            ctx.bound.set(name, "(" + ", ".join(v for v in values for _ in (0, 1)) + ")")
        return None
    return rule_fn
