# torch's typed tensor classes used as values (`Tensor = torch.cuda.FloatTensor if cuda else
# torch.FloatTensor`, then `Tensor(n, 1)`, `Tensor(array)`, `isinstance(x, Tensor)`): called,
# they build a tensor as torch's legacy constructor does (legacy_tensor); as a type they match
# MindSpore tensors of their dtype. torch.Tensor bound to a name (`Tensor = torch.Tensor`, then
# `Tensor(n, c, h, w)`) is Tensor below: torch.Tensor's constructor, and as a type any tensor.

import typing as _typing


@ms.jit_class
class _LegacyTensorType:
    """One legacy type: an object rather than a class, so that a compiled step can call it
    (MindSpore's graph compiler calls a jit_class object; a class with a metaclass __call__ it
    runs through Python, and value_and_grad then fails on the tensor this makes: LongTensor(labels))."""

    def __init__(self, name, dtype, any_dtype=False):
        self.__name__ = name
        self.dtype = dtype
        self.any_dtype = any_dtype      # torch.Tensor: a tensor argument keeps its dtype, every tensor matches

    def __instancecheck__(self, obj):
        return isinstance(obj, ms.Tensor) and (self.any_dtype or obj.dtype == self.dtype)

    def __call__(self, *args):
        return legacy_tensor(self.dtype, *args, keep_tensor_dtype=self.any_dtype)

    def __repr__(self):
        return f"<legacy tensor type {self.__name__} ({self.dtype})>"

    # `class T(Tensor)`, `issubclass(cls, Tensor)` through a name bound to torch.Tensor: MindSpore's tensor class
    def __mro_entries__(self, bases):
        return (ms.Tensor,)

    def __subclasscheck__(self, cls):
        return self.any_dtype and issubclass(cls, ms.Tensor)

    # `torch.FloatTensor | None` in an annotation evaluated when the def runs (transformers' signatures)
    def __or__(self, other):
        return _typing.Union[self, other]

    def __ror__(self, other):
        return _typing.Union[other, self]


def _legacy_type(name, dtype):
    return _LegacyTensorType(name, dtype)


FloatTensor = _legacy_type("FloatTensor", ms.float32)
DoubleTensor = _legacy_type("DoubleTensor", ms.float64)
HalfTensor = _legacy_type("HalfTensor", ms.float16)
LongTensor = _legacy_type("LongTensor", ms.int64)
IntTensor = _legacy_type("IntTensor", ms.int32)
ShortTensor = _legacy_type("ShortTensor", ms.int16)
ByteTensor = _legacy_type("ByteTensor", ms.uint8)
CharTensor = _legacy_type("CharTensor", ms.int8)
BoolTensor = _legacy_type("BoolTensor", ms.bool_)
BFloat16Tensor = _legacy_type("BFloat16Tensor", ms.bfloat16)
Tensor = _LegacyTensorType("Tensor", ms.float32, any_dtype=True)


_LEGACY_TYPES = {t.__name__: t for t in (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor,
                                         ByteTensor, CharTensor, BoolTensor, BFloat16Tensor)}


def _legacy_dtype(spec):
    """The dtype a .type() argument names: a legacy type value, a dtype, or a string such as
    'torch.FloatTensor' / 'torch.cuda.LongTensor'."""
    if isinstance(spec, _LegacyTensorType):
        return spec.dtype
    if isinstance(spec, str):
        name = spec.rpartition(".")[2]
        if name in _LEGACY_TYPES and spec in (f"torch.{name}", f"torch.cuda.{name}"):
            return _LEGACY_TYPES[name].dtype
        raise ValueError(f"invalid type: '{spec}'")
    if isinstance(spec, ms.dtype.Type):
        return spec
    if isinstance(spec, type) and issubclass(spec, ms.Tensor):
        # torch.Tensor, or the class of a tensor (ssd.pytorch's `self.priors.type(type(x.data))`): torch's default
        # tensor type, FloatTensor (a converted program's default dtype is float32: set_default_dtype refuses others)
        return ms.float32
    raise TypeError(f"type() expects a dtype, a tensor type or its name, got {spec!r}")


def tensor_type(x, dtype=None, non_blocking=False, **kwargs):
    """torch's x.type(): without an argument the type's name ('torch.FloatTensor'); with a
    legacy tensor type (FloatTensor, or a variable holding one), a dtype or a type name, x cast
    to it. Anything that is not a tensor keeps its own type() method."""
    if not isinstance(x, ms.Tensor):
        # no `*args` built here: GRAPH mode may infer this branch for a tensor too (CLIP's LayerNorm
        # under msmigrate verify), and a conditional tuple is a dynamic-length sequence there
        if dtype is None:
            return x.type(**kwargs)
        return x.type(dtype, **kwargs)
    if dtype is None:
        for name, t in _LEGACY_TYPES.items():
            if t.dtype == x.dtype:
                return f"torch.{name}"
        raise TypeError(f"torch has no legacy tensor type for {x.dtype}")   # (GRAPH mode parses this: a standard type)
    target = _legacy_dtype(dtype)
    return x if x.dtype == target else x.astype(target)


def legacy_isinstance(obj, *types):
    """`isinstance(obj, torch.FloatTensor)` (torch.cuda's too, or a tuple of them): obj a MindSpore tensor of one of
    the types' dtypes (torch.Tensor: of any), also inside a compiled graph, whose isinstance takes classes only."""
    if not isinstance(obj, ms.Tensor):
        return False
    for t in types:
        if t.any_dtype or obj.dtype == t.dtype:
            return True
    return False


def variable_of(data, requires_grad, where):
    """`Variable(data, requires_grad=flag)` with a flag the program computes (`requires_grad=req_grad`, a
    parameter): Variable is the tensor itself since torch 0.4, so where the flag is false this is data; where it
    is true, the leaf grad_leaf makes."""
    if requires_grad:
        return grad_leaf(data, where)
    return data


_LEAF_IN_GRAPH = ("torch.autograd.Variable(..., requires_grad=True) at {} runs inside a compiled graph, where the "
                  "Parameter that stands for torch's leaf cannot be created: make it outside the network and the "
                  "train step, or run in PyNative mode (ms.set_context(mode=ms.PYNATIVE_MODE)); see the migration "
                  "report")


def grad_leaf(data, where):
    """`Variable(data, requires_grad=True)`: torch's new leaf that requires a gradient, data cut from the gradient.
    A Parameter of its own, so that an optimizer it is given to updates it and the converted train step's
    value_and_grad over the optimizer's parameters differentiates it (a helper's `return Variable(img,
    requires_grad=True)` optimised by its caller: SGD over the image). Any other gradient of it is a rewrite of
    the converter's or raises MigrationError naming its line (a backward() left over, a `.grad` read). A graph
    cannot create a Parameter: compiling stops with MigrationError naming the line."""
    if _compiling(_draw_probe):
        _refuse_compiled(_LEAF_IN_GRAPH, where)
    leaf = ms.Parameter(ops.stop_gradient(data), requires_grad=True)
    leaf._ms_unstepped_leaf = True      # no gradient yet (clears_all_gradients)
    return leaf
