"""Argument forms torch accepts where the MindSpore op does not, shared by the records of a torch function and of
its Tensor method: a tensor or a negative start where ops.narrow takes a non-negative int (narrow's start), a tensor
of split points where ops.tensor_split takes a list (tensor_split's indices_or_sections), an empty dim tuple
(squeeze(x, ()), which squeezes nothing in torch and every unit axis in MindSpore), an int or a list of tile counts
(ops.tile takes a tuple), an integer input of a float function (exp, log, sin...: torch computes it in float32).

Each is a rule that rewrites the one argument and returns None, so the record's own mapping (target, renames,
out= refusal) converts the rest. A literal argument stays as written.
"""
from __future__ import annotations

import re

import libcst as cst

from ..callsite import UnsupportedSite
from .compose import OUT_NOTE

_INT_LITERAL = re.compile(r"^-?\s*\d+$")
_SEQ_LITERAL = re.compile(r"^[\[(][-\d\s,]*[\])]$")
_EMPTY = ("()", "[]", "tuple()", "list()")
# torch takes a 0-d input of an op along a dim as a one-element vector (templates/compat_parts/scalar_as_vector.py)
LOG_SOFTMAX_NOTE = ("through _ms_compat.log_softmax (templates/compat_parts/softmax_slices.py), x - logsumexp(x): "
                    "MindSpore 2.10's ops.log_softmax computes a float64 input in float32 (off by ~3e-6) and is "
                    "~30 ulp off in float32")
LOG_SOFTMAX_TEST = "tests/parity/test_log_softmax.py::test_log_softmax_forms"
AS_VECTOR_NOTE = "a 0-d input is a one-element vector, as torch (templates/compat_parts/scalar_as_vector.py)"
# torch takes a 0-d index as a one-element one (the dim kept, of size 1); MindSpore's index_select refuses it
INDEX_SELECT = ("_ms_compat.as_vector(lambda _ms_x, _ms_i: ops.index_select(_ms_x, {dim}, ops.reshape(_ms_i, (-1,))), "
                "{input}, {index})")
# batch-first ops whose MindSpore kernel rejects an input with no samples (templates/compat_parts/empty_batch.py)
EMPTY_BATCH_NOTE = ("an input with no samples (N = 0) gives torch's empty result (templates/compat_parts/"
                    "empty_batch.py)")
# torch's float functions compute an integer or bool input in float32; MindSpore's CPU kernels refuse it
# (templates/compat_parts/int_promotion.py)
FLOAT_INPUT_NOTE = ("an integer or bool tensor is computed in float32, as torch promotes it "
                    "(templates/compat_parts/int_promotion.py)")
# MindSpore ops whose result is a float tensor whatever the input (the converted float functions among them)
FLOAT_RESULT_OPS = frozenset(
    "exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sigmoid tanh erf erfc erfinv sin cos tan asin acos atan asinh "
    "acosh atanh sinh cosh lgamma digamma bessel_i0 rad2deg deg2rad softmax log_softmax softplus rand randn "
    "rand_like randn_like".split())


def _surely_float(node: cst.BaseExpression) -> bool:
    """An expression whose value is a float tensor or number in torch whatever its tensors' dtypes: a true division,
    arithmetic with a float literal or a float value, a float MindSpore op's result."""
    if isinstance(node, cst.Float):
        return True
    if isinstance(node, cst.UnaryOperation):
        return _surely_float(node.expression)
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, cst.Divide):
            return True
        return isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Power)) and (
            _surely_float(node.left) or _surely_float(node.right))
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
            isinstance(node.func.value, cst.Name) and node.func.value.value == "ops":
        return node.func.attr.value in FLOAT_RESULT_OPS
    return False


# torch.nn layers whose output is a float tensor whatever their input (`self.fc(h)` of an nn.Linear attribute)
_FLOAT_LAYERS = ("torch.nn.Linear", "torch.nn.LazyLinear", "torch.nn.Bilinear", "torch.nn.Conv", "torch.nn.LazyConv",
                 "torch.nn.ConvTranspose", "torch.nn.Embedding", "torch.nn.BatchNorm", "torch.nn.LayerNorm",
                 "torch.nn.GroupNorm", "torch.nn.InstanceNorm")


def _float_layer_call(ctx, node) -> bool:
    """`self.NAME(...)` of a layer attribute whose output is a float tensor (_FLOAT_LAYERS)."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and
            isinstance(node.func.value, cst.Name) and node.func.value.value == "self" and ctx.tr._classes):
        return False
    layer = ctx.tr._classes[-1].attr_types.get(node.func.attr.value)
    return isinstance(layer, str) and layer.startswith(_FLOAT_LAYERS)


# torch.log1p / Tensor.log1p: MindSpore 2.10's CPU ops.log1p computes log(1 + x) and loses small x
LOG1P_NOTE = ("through _ms_compat.special_log1p (special_compose.py): ops.log1p computes log(1 + x) on CPU, which "
              "loses small x (float32: 4.6% off at 1e-6, 0 at 1e-12)")
T_LOG1P = "tests/parity/test_log1p.py::test_log1p_small_inputs"


def float_input_code(code: str, ctx=None, node=None) -> str:
    """`code` as the input of a float function: as written where it is surely a float value (`0.5 * logvar`,
    `x / n`, `ops.log(p)`, `self.fc(h)` of an nn.Linear), else through _ms_compat.float_input, which promotes an
    integer or bool tensor."""
    try:
        surely = _surely_float(cst.parse_expression(code))
    except cst.ParserSyntaxError:
        surely = False
    surely = surely or (ctx is not None and _float_layer_call(ctx, node))
    return code if surely else f"_ms_compat.float_input({code})"


# float functions whose MindSpore 2.10 CPU float32 kernel is off by up to 6.5e-6 (relative; torch's ~1 ulp): a float32
# input is computed in float64 on CPU and rounded once (templates/compat_parts/cpu_float32_kernels.py)
# (not sigmoid: its helper would take the example project's helper past its bound, tests/test_runtime_pruning.py)
PRECISE = {"exp": "_ms_compat.precise_exp", "log": "_ms_compat.precise_log"}
PRECISE_NOTE = ("a float32 input is computed in float64 on CPU and rounded once, as precise as torch's (MindSpore "
                "2.10's CPU float32 kernel is up to 6.5e-6 off; templates/compat_parts/cpu_float32_kernels.py)")
PRECISE_TEST = "tests/parity/test_cpu_float32_kernels.py::test_exp_log_at_torchs_precision"


def float_function(op: str, target: str = ""):
    """A rule for torch.NAME(input) of a float function: ops.<op>(input) (or `target`(input)), the input through
    float_input_code."""
    def rule_fn(ctx):
        b = ctx.bound
        if b.starred:
            raise UnsupportedSite("*args/**kwargs cannot be translated argument by argument")
        for name in b.order:
            if name == "out" and b.code(name) != "None":
                raise UnsupportedSite(f"argument out={b.code(name)}: {OUT_NOTE}")
            if name not in ("input", "out"):
                raise UnsupportedSite(f"argument {name.lstrip('_')} is not translated")
        if b.code("input") is None:
            raise UnsupportedSite("argument input is required")
        return ctx.expr(f"{target or 'ops.' + op}({float_input_code(b.code('input'), ctx, b.value('input'))})")
    return rule_fn
NARROW_NOTE = ("a negative start counts from the end and a 0-d tensor start is read as an int, as in torch "
               "(_ms_compat.narrow)")
# the parity test of the records that use these rules
T_EDGE = "tests/parity/test_edge_inputs.py::test_edge_inputs"

# clamp_min/clamp_max with one bound: ops.clamp neither broadcasts the input to a tensor bound's shape (a (5, 1) input
# and a (5,) bound raise) nor keeps NaN inputs; ops.maximum/minimum broadcast, and `x != x` keeps torch's NaN (with
# torch's zero gradient there)
CLAMP_MIN = "(lambda _ms_x: ops.where(_ms_x != _ms_x, ops.stop_gradient(_ms_x), ops.maximum(_ms_x, {bound})))({x})"
CLAMP_MAX = "(lambda _ms_x: ops.where(_ms_x != _ms_x, ops.stop_gradient(_ms_x), ops.minimum(_ms_x, {bound})))({x})"
CLAMP_NOTE = "ops.maximum/minimum (they broadcast a tensor bound as torch does); NaN inputs stay NaN, as in torch"


_NUMBER_LITERAL = re.compile(r"^-?\s*(\d+\.?\d*(e-?\d+)?|\.\d+)$")


def mixed_clamp_bounds(input_code):
    """A rule for clamp/clip with both bounds, one a number written out and the other not (Beta-VAE's
    `torch.clamp(c, 0, self.C_max.data[0])`): ops.clamp refuses a number beside a tensor bound ("Failed calling
    ClampTensor"), so the bounds are applied one after the other, as clamp_min/clamp_max (CLAMP_MIN/CLAMP_MAX:
    numbers or tensors, broadcast, NaN kept). Both numbers, or neither: ops.clamp as the record says."""
    def rule_fn(ctx):
        lo, hi = ctx.code("min"), ctx.code("max")
        if ctx.bound.starred or lo is None or hi is None or lo.strip() == "None" or hi.strip() == "None":
            return None
        if bool(_NUMBER_LITERAL.match(lo.strip())) == bool(_NUMBER_LITERAL.match(hi.strip())):
            return None
        return ctx.expr(CLAMP_MAX.format(x=CLAMP_MIN.format(x=input_code(ctx), bound=lo), bound=hi))
    return rule_fn


def round_decimals_code(x: str, decimals: str) -> str:
    """torch.round(x, decimals=d) / x.round(decimals=d) as torch computes it, nearbyint(x * 10^d) / 10^d (halves to
    even; MindSpore's CPU Round kernel takes decimals=0 only). d must be an int literal."""
    if not _INT_LITERAL.match(decimals.strip()):
        raise UnsupportedSite("round(decimals=...) needs a literal number of decimals")
    n = int(decimals.replace(" ", ""))
    if n == 0:
        return f"ops.round({x})"
    scale = repr(10.0 ** abs(n))
    x = x if re.match(r"^[\w.]+$", x) else f"({x})"
    return f"ops.round({x} * {scale}) / {scale}" if n > 0 else f"ops.round({x} / {scale}) * {scale}"


def narrow_from_end(input_code):
    """A rule for narrow / narrow_copy: torch's start may be negative (from the end) or a 0-d tensor, ops.narrow takes a
    non-negative int; a non-negative int literal stays ops.narrow, any other start goes through _ms_compat.narrow
    (templates/compat_parts/narrow_from_end.py). input_code(ctx) gives the input's code (the receiver of a method,
    the first argument of a function)."""
    def rule_fn(ctx):
        start = ctx.code("start")
        if ctx.bound.starred or start is None or _INT_LITERAL.match(start) and not start.lstrip().startswith("-"):
            return None
        return ctx.expr(f"_ms_compat.narrow({input_code(ctx)}, {ctx.code('dim')}, {start}, {ctx.code('length')})")
    return rule_fn


def dims_tuple(code: str) -> str:
    """tile/repeat counts as torch takes them (an int, a list, a tuple, a torch.Size) as the tuple ops.tile takes
    (it refuses an int and a list)."""
    code = code.strip()
    if _INT_LITERAL.match(code):
        return f"({code},)"
    try:
        node = cst.parse_expression(code)
    except cst.ParserSyntaxError:
        node = None
    # a list display, not an expression that merely starts with `[` (`[1 for _ in r] + [n]`)
    if isinstance(node, cst.List) and not any(isinstance(e, cst.StarredElement) for e in node.elements):
        inner = code[1:-1].strip().rstrip(",")
        return f"({inner}{',' if inner and len(node.elements) == 1 else ''})"
    if isinstance(node, cst.Tuple) and node.elements:
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


# MindSpore 2.10's CPU float32 kernels of these functions are approximations more than 1e-5 off (relative; torch's:
# ~1e-7): converted calls take a CPU float32 input through float64 (compat_parts/cpu_float32_kernels.py), and so do
# exp's (4.8e-6; PRECISE above). sigmoid (2.3e-6), silu (2.4e-6) and softmax (3.9e-6) keep MindSpore's kernel:
# KERNEL_ERROR_NOTE in their records.
PRECISE_ON_CPU = {"tanh": "1e-4", "log": "8.9e-5", "expm1": "3.6e-5", "log2": "1.3e-4", "log10": "3.9e-5"}
KERNEL_ERROR_NOTE = "MindSpore 2.10's CPU float32 {name} kernel is up to {error} off torch's (relative)"
KERNEL_ERRORS = {"sigmoid": "2.3e-6"}


def float_function_note(name: str) -> str:
    """FLOAT_INPUT_NOTE, with the CPU float32 kernel's error where KERNEL_ERRORS has it."""
    if name in KERNEL_ERRORS:
        return FLOAT_INPUT_NOTE + "; " + KERNEL_ERROR_NOTE.format(name=name, error=KERNEL_ERRORS[name])
    return FLOAT_INPUT_NOTE
T_PRECISE = "tests/parity/test_cpu_float32_kernels.py::test_plain_functions_at_torch_float32_precision"


def precise_note(name: str) -> str:
    return (f"through _ms_compat.precise_{name}: a CPU float32 input computes in float64 and rounds once (MindSpore "
            f"2.10's CPU float32 {name} is up to {PRECISE_ON_CPU[name]} off; compat_parts/cpu_float32_kernels.py)")
