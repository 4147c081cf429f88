"""torch dtypes -> MindSpore dtypes."""
from __future__ import annotations

import ast

import libcst as cst

from ..callsite import UnsupportedSite, code_of
from ..records import DIFFERENCE, METHOD_OWNERS, TYPE_TARGETS, VALUE_ATTRS, mapping, rule

_T = "tests/parity/test_dtypes.py::test_dtype_names"
_T_BF16 = "tests/parity/test_dtypes.py::test_bfloat16_tensor"
_DTYPES = {
    "float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
    "float16": "float16", "half": "float16", "bfloat16": "bfloat16",
    "int8": "int8", "int16": "int16", "short": "int16", "int32": "int32", "int": "int32",
    "int64": "int64", "long": "int64", "uint8": "uint8", "bool": "bool_",
    "complex64": "complex64", "complex128": "complex128",
}
for _src, _dst in _DTYPES.items():
    mapping(f"torch.{_src}", f"mindspore.{_dst}", test=_T)
    VALUE_ATTRS[f"torch.{_src}"] = {"itemsize"}     # bytes per element, as torch's
# MindSpore's float8 types (no NumPy counterpart): names for quantization code and torch.finfo
for _src in ("float8_e4m3fn", "float8_e5m2"):
    VALUE_ATTRS[f"torch.{_src}"] = {"itemsize"}
    mapping(f"torch.{_src}", f"mindspore.{_src}", test="tests/parity/test_numerics.py::test_float8_names_and_limits",
            note="the name (torch.finfo, quantization configs); x.to()/x.type() of it goes through "
                 "_ms_compat.float8_cast, which raises MigrationError naming the site on CPU (MindSpore 2.10 has no "
                 "float8 kernels there: tests/parity/test_numerics.py::test_float8_cast_stops_with_migration_error_on_cpu)")
mapping("torch.dtype", "mindspore.dtype.Type", note="the class of dtypes, for annotations", test=_T)


def _a_size(node) -> bool:
    """`x.size()`, `x.shape`, a slice of one (`x.size()[:-1]`) or one extended by a tuple (`x.size() + (n,)`): a
    torch.Size, whatever x is."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "size":
        return not node.args
    if isinstance(node, cst.Attribute):
        return node.attr.value == "shape"
    if isinstance(node, cst.Subscript):
        return len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice) and _a_size(node.value)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _a_size(node.left) and (_a_size(node.right) or isinstance(node.right, cst.Tuple))
    return False


def _legacy_constructor(dtype: str, tensor_keeps_dtype: bool = False):
    """torch.Tensor(...) / torch.FloatTensor(...): data -> a tensor of that dtype (mindspore.Tensor
    alone would infer int64 from [1, 2]); sizes -> a tensor of that shape. `tensor_keeps_dtype`: a tensor
    argument keeps its own dtype (torch.Tensor(int64 tensor) is int64)."""
    def rule_fn(ctx):
        b = ctx.bound
        if b.starred:
            # `torch.FloatTensor(*x.shape)`: legacy_tensor tells sizes from data at run time, as torch does
            parts = []
            for arg in b.call.args:
                if arg.star == "**" or (arg.keyword is not None and arg.keyword.value != "device"):
                    raise UnsupportedSite("**kwargs, or keyword arguments other than device, beside *args")
                if arg.keyword is None:
                    parts.append(arg.star + code_of(arg.value).strip())
            keep = ", keep_tensor_dtype=True" if tensor_keeps_dtype else ""
            return ctx.expr(f"_ms_compat.legacy_tensor(ms.{dtype}, {', '.join(parts)}{keep})")
        b.remove("device")
        pos = [n for n in b.order if b.positional.get(n)]
        if len(pos) != len(b.order):
            raise UnsupportedSite("keyword arguments other than device")
        values = [b.value(n) for n in pos]
        codes = [b.code(n) for n in pos]
        if len(values) == 1 and isinstance(values[0], (cst.List, cst.Tuple, cst.ListComp)):
            return ctx.expr(f"ms.Tensor({codes[0]}, dtype=ms.{dtype})")
        if values and all(isinstance(v, cst.Integer) for v in values):
            return ctx.expr(f"ops.zeros(({', '.join(codes)},), ms.{dtype})")
        keep = ", keep_tensor_dtype=True" if tensor_keeps_dtype else ""
        if len(values) == 1 and _a_size(values[0]):
            # `torch.FloatTensor(l.size())`: a torch.Size gives the shape, where a tuple of ints gives data;
            # MindSpore's shape is a plain tuple, so its sizes are passed one by one (PixelCNN++'s sampler)
            return ctx.expr(f"_ms_compat.legacy_tensor(ms.{dtype}, *({codes[0]}){keep})")
        return ctx.expr(f"_ms_compat.legacy_tensor(ms.{dtype}{''.join(', ' + c for c in codes)}{keep})")
    rule_fn.handles_starred = True
    return rule_fn


_LEGACY_NOTE = ("called: data -> mindspore.Tensor(data, dtype={d}); sizes -> a zero-filled tensor of that shape "
                "(torch leaves it uninitialised); as a type: mindspore.Tensor (whatever its dtype)")
rule("torch.Tensor", "mindspore.Tensor", test=_T, note=_LEGACY_NOTE.format(d="float32") + "; a tensor keeps its dtype")(
    _legacy_constructor("float32", tensor_keeps_dtype=True))
_LEGACY_TYPE_NOTE = ("called: data -> mindspore.Tensor(data, dtype={d}); sizes -> a zero-filled tensor of that "
                     "shape (torch leaves it uninitialised); as a value: _ms_compat.{c}, which builds tensors the "
                     "same way when called and, as a type, matches MindSpore tensors of dtype {d}")
for _cls, _dt in (("FloatTensor", "float32"), ("DoubleTensor", "float64"), ("HalfTensor", "float16"),
                  ("LongTensor", "int64"), ("IntTensor", "int32"), ("ShortTensor", "int16"),
                  ("ByteTensor", "uint8"), ("CharTensor", "int8"), ("BoolTensor", "bool_"),
                  ("BFloat16Tensor", "bfloat16")):
    rule(f"torch.{_cls}", f"_ms_compat.{_cls}", test=_T if _dt != "bfloat16" else _T_BF16,
         note=_LEGACY_TYPE_NOTE.format(d=_dt, c=_cls))(_legacy_constructor(_dt))
    # the CUDA classes name the same tensors: MindSpore places every tensor on the program's device
    rule(f"torch.cuda.{_cls}", f"_ms_compat.{_cls}", test="tests/parity/test_dtypes.py::test_legacy_types_as_values",
         note=_LEGACY_TYPE_NOTE.format(d=_dt, c=_cls))(_legacy_constructor(_dt))
mapping("torch.Size", "tuple", args=("iterable",), target_args=("iterable",), note="shapes are tuples in MindSpore", test=_T)


# ------------------------------------------------------------------ torch.autograd.Variable
_VARIABLE_NOTE = ("Variable is a plain tensor since torch 0.4, a new leaf: its data cut from the gradient "
                  "(ops.stop_gradient: torch's Variable(h) of a computed h passes no gradient back to h; MindSpore "
                  "differentiates what value_and_grad/grad is given); requires_grad=True: _ms_compat.grad_leaf, a "
                  "Parameter of its own, which an optimizer given it updates (the converted train step "
                  "differentiates the optimizer's parameters; any other gradient of it is converted where it is "
                  "taken or raises MigrationError there); a flag known only at run time (`requires_grad=flag`): "
                  "_ms_compat.variable_of, the tensor where it is false, grad_leaf where it is true")


def _variable(ctx):
    b = ctx.bound
    if b.starred:
        raise UnsupportedSite("*args cannot be bound")
    if not b.has("data"):
        raise UnsupportedSite("Variable() without data")
    rg = b.value("requires_grad")
    if rg is not None and not (isinstance(rg, cst.Name) and rg.value in ("False", "True")) \
            and not isinstance(rg, (cst.Integer, cst.Float, cst.SimpleString)):
        flag = b.code("requires_grad")     # `requires_grad=req_grad`: known when the line runs
    else:
        flag = None
    # a literal flag: its truth value (`requires_grad=True`, `requires_grad=1`)
    leaf = rg is not None and flag is None and bool(ast.literal_eval(b.code("requires_grad")))
    extra = [n for n in b.order if n not in ("data", "requires_grad", "volatile")]
    if extra:
        raise UnsupportedSite(f"unknown arguments {extra}")
    # torch's Variable(h) is a leaf: no gradient flows back through it into h (a train step's loss through
    # `Variable(first(x))` leaves `first` untrained); MindSpore would differentiate through the identity
    data = f"ops.stop_gradient({b.code('data')})"
    where = f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"
    if flag is not None:
        # the tensor where the flag is false when the line runs, the leaf where it is true
        return ctx.expr(f"_ms_compat.variable_of({data}, {flag}, {where!r})")
    if leaf:
        # `return Variable(img, requires_grad=True)` optimised by the caller (SGD over an image): a Parameter, which
        # MindSpore's optimizers take and the train step differentiates
        return ctx.expr(f"_ms_compat.grad_leaf({data}, {where!r})")
    return ctx.expr(data)


for _src in ("torch.autograd.Variable", "torch.autograd.variable.Variable"):
    rule(_src, "ops.stop_gradient", args=("data", "requires_grad", "volatile"), note=_VARIABLE_NOTE,
         test="tests/parity/test_dtypes.py::test_variable_is_its_tensor")(_variable)
    # as a type (crnn.pytorch's utils.averager: `if isinstance(v, Variable): ... elif isinstance(v, torch.Tensor)`):
    # since torch 0.4 Variable is torch.Tensor, so every tensor is one; the call's target (ops.stop_gradient, a
    # function) made isinstance raise TypeError
    TYPE_TARGETS[_src] = ("mindspore.Tensor", "as a type (isinstance/issubclass): torch's Variable is torch.Tensor "
                                              "since 0.4, every tensor one: MindSpore's Tensor")


# ------------------------------------------------------------------ versions
_VERSION_NOTE = ("the version of the torch API the conversion follows (what msmigrate's parity tests run), so "
                 "version checks take the modern branch; MindSpore's own is mindspore.__version__")
mapping("torch.__version__", "expr:_ms_compat.TORCH_API_VERSION", status=DIFFERENCE, note=_VERSION_NOTE,
        test="tests/parity/test_dtypes.py::test_versions")
mapping("torchvision.__version__", "expr:_ms_compat.TORCHVISION_API_VERSION", status=DIFFERENCE,
        note=_VERSION_NOTE, test="tests/parity/test_dtypes.py::test_versions")
# a str: its methods (torch.__version__.split('.')) are called on the converted string as written
METHOD_OWNERS.update(("torch.__version__", "torchvision.__version__"))
