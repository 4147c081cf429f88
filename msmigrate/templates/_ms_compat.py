"""Small helpers written by msmigrate next to the converted code, where a torch idiom has no one-line
MindSpore equivalent. They depend on MindSpore and NumPy only (not torch, not msmigrate): read them,
keep them, or replace their uses with your own code."""
import math
import os
import re

import numpy as np
import mindspore as ms
from mindspore import nn, ops
from mindspore.common import initializer as init
from mindspore.ops.primitive import constexpr as _migration_constexpr

# MindSpore 2.10's oneDNN convolution: ~100x slower on AVX-512 than AVX2 (read at the first): import this first.
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
ms.Tensor.__array_priority__ = 1000     # `np.sqrt(2.0) * x` defers to the tensor, as torch's (not an ndarray)


def _tensor_format(self, spec):
    """format(tensor, spec) as torch's: a 0-d tensor formats its Python number (`'{:.4f}'.format(acc)`)."""
    if self.ndim == 0:
        return self.item().__format__(spec)
    return object.__format__(self, spec)


ms.Tensor.__format__ = _tensor_format


def _numpy_index(index):
    """An index as torch reads it: a NumPy integer is its int, a NumPy integer or bool array an index tensor
    (`out[i, self.indices[i]] = v`); MindSpore 2.10 refuses both (IndexError 'Unsupported Python object type'),
    and NumPy integer slice bounds (`img[:, y1:y2]`: RuntimeError 'Slice index type must be int, tensor or none').
    A uint8 tensor is a mask in torch (its legacy byte mask, `boxes[1 - suppress]`), which MindSpore refuses
    (IndexError 'The tensor index must be int or bool type'): the same mask as bool."""
    if isinstance(index, ms.Tensor):
        return index.astype(ms.bool_) if index.dtype == ms.uint8 else index
    if isinstance(index, np.integer):
        return int(index)
    if isinstance(index, np.ndarray) and index.dtype.kind in "iub":
        return ms.Tensor(index.astype(np.bool_) if index.dtype == np.uint8 else index)
    if type(index) is slice and any(isinstance(p, np.integer) for p in (index.start, index.stop, index.step)):
        return slice(_numpy_index(index.start), _numpy_index(index.stop), _numpy_index(index.step))
    if type(index) is tuple and any(isinstance(i, (np.integer, np.ndarray, slice, ms.Tensor)) for i in index):
        return tuple(_numpy_index(i) for i in index)
    return index


def _unit_dims_off(value):
    """A tensor value as torch's `x[index] = value` takes it: its leading size-1 dimensions dropped before it is
    broadcast to the indexed part (`rows[k] = noise` with noise of shape (1, n) into a row of n); MindSpore 2.10
    refuses a value of more dimensions than the part (ValueError from BroadcastTo, naming no line)."""
    if isinstance(value, ms.Tensor) and value.ndim and value.shape[0] == 1:
        start = 0
        while start < value.ndim and value.shape[start] == 1:
            start += 1
        return value.reshape(value.shape[start:])
    return value


def _scalar_mask(index):
    """A 0-d bool tensor as an index (torchmetrics' R2Score: `rss[cond]` of 0-d values): torch reads it as a mask
    over a new leading dimension of size 1; MindSpore 2.10 refuses it ("The input data's dim must in the range of
    [1, 7], but got '0'")."""
    return isinstance(index, ms.Tensor) and index.ndim == 0 and index.dtype == ms.bool_


def _tensor_get(self, index):
    index = _numpy_index(index)
    if _scalar_mask(index):     # torch: one row (the tensor) where it holds, none where not
        return _tensor_getitem(self.expand_dims(0), index.reshape((1,)))
    return _tensor_getitem(self, index)


def _tensor_set(self, index, value):
    parts = index if type(index) is tuple else (index,)
    if all(type(p) in (int, slice) for p in parts) and any(
            type(p) is slice and not len(range(*p.indices(n))) for p, n in zip(parts, self.shape)):
        return None     # an empty slice: torch's no-op (MindSpore 2.10 fails on x[:, -4:0, 0:-4] = v)
    index = _numpy_index(index)
    if _scalar_mask(index):     # the whole tensor where it holds (on the host: PyNative's indexing), else nothing
        return _tensor_setitem(self, Ellipsis, _unit_dims_off(value)) if bool(index) else None
    return _tensor_setitem(self, index, _unit_dims_off(value))


_tensor_getitem, _tensor_setitem = ms.Tensor.__getitem__, ms.Tensor.__setitem__
ms.Tensor.__getitem__ = _tensor_get
ms.Tensor.__setitem__ = _tensor_set
# `target == cat` for `cat in np.unique(target)`: MindSpore 2.10's `t == np.int64(1)` is the Python bool False
_tensor_eq, _tensor_ne = ms.Tensor.__eq__, ms.Tensor.__ne__
ms.Tensor.__eq__ = lambda t, x: _tensor_eq(t, x.item() if isinstance(x, np.generic) else x)
ms.Tensor.__ne__ = lambda t, x: _tensor_ne(t, x.item() if isinstance(x, np.generic) else x)


class MigrationError(RuntimeError):
    """Raised where code that msmigrate could not convert is reached."""


@_migration_constexpr(check=False)
def _raise_migration_error(message):
    """raise MigrationError(message), also from graph code: MindSpore's graph parser refuses a `raise` of any but
    Python's own exception types ("Unsupported exception type: MigrationError", naming no line of the original),
    while a constexpr runs in Python as the graph compiles, so compiling stops with this MigrationError."""
    raise MigrationError(message)


class Unconverted:
    """Stands where a torch API had no MindSpore conversion. A definition that holds it
    (a module-level name, a default value, a base class, a generic type) still imports;
    any use of it (calling, attributes, operators, comparisons, str(), iteration,
    `with`, isinstance...) raises MigrationError naming the original site."""

    def __init__(self, api, where, why):
        object.__setattr__(self, "_api", api)
        object.__setattr__(self, "_where", where)
        object.__setattr__(self, "_why", why)

    def _message(self):
        return (f"{self._api} at {self._where} was not converted to MindSpore ({self._why}); "
                f"see the '# msmigrate: TODO' comment there and the migration report")

    def _fail(self, *args, **kwargs):
        _raise_migration_error(self._message())   # a TODO reached in a compiled construct too

    def reached(self):
        """Written where the program evaluates the unconverted name at run time."""
        self._fail()

    __call__ = __bool__ = __len__ = __contains__ = __reversed__ = _fail
    __iter__ = __next__ = __aiter__ = __anext__ = __await__ = _fail
    __enter__ = __exit__ = __aenter__ = __aexit__ = _fail
    __setitem__ = __delitem__ = __setattr__ = __delattr__ = _fail
    __str__ = __repr__ = __format__ = __bytes__ = __fspath__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = _fail
    # held in a set or as a dict key, as the torch object (a class, a function) was, by identity: a
    # table of layer classes built on import (timm's _NORM_TYPES) still imports; using the entry raises
    __hash__ = object.__hash__

    def __eq__(self, other):
        if _is_typing_object(other):
            return NotImplemented         # typing's own machinery (`Protocol in bases`) at import
        self._fail()

    def __ne__(self, other):
        if _is_typing_object(other):
            return NotImplemented
        self._fail()
    __int__ = __float__ = __complex__ = __index__ = __round__ = __trunc__ = __floor__ = __ceil__ = _fail
    __neg__ = __pos__ = __abs__ = __invert__ = _fail
    __instancecheck__ = __subclasscheck__ = __array__ = _fail
    for _op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod", "pow",
                "lshift", "rshift", "and", "or", "xor"):
        locals()[f"__{_op}__"] = locals()[f"__r{_op}__"] = locals()[f"__i{_op}__"] = _fail
    del _op

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)    # protocol probes (copy, pickle, numpy) find nothing
        self._fail()

    def __getitem__(self, item):
        # a generic type (Dataset[T], Foo[int, str]) in a base class or type alias: still a placeholder
        if _is_type_argument(item):
            return Unconverted(f"{self._api}[...]", self._where, self._why)
        self._fail()

    def __mro_entries__(self, bases):
        # a base class: the class can be defined; creating an instance or reading a class
        # attribute it would inherit from torch fails
        return (_unconverted_base(self, [b for b in bases if isinstance(b, type)]),)


def _is_typing_object(obj):
    return type(obj).__module__ == "typing" or isinstance(obj, type) and obj.__module__ == "typing"


def _is_type_argument(item):
    if isinstance(item, tuple):
        return all(_is_type_argument(i) for i in item)
    return (item is None or item is Ellipsis or isinstance(item, (type, Unconverted))
            or type(item).__module__ in ("typing", "types", "typing_extensions"))


def _unconverted_base(placeholder, other_bases):
    fail = placeholder._fail
    meta = type
    for b in other_bases:
        if issubclass(type(b), meta):
            meta = type(b)

    class _UnconvertedMeta(meta):
        def __call__(cls, *args, **kwargs):
            fail()                        # whatever __new__/__init__ the other bases define

        def __getattr__(cls, name):
            if name.startswith("_"):
                raise AttributeError(name)
            fail()

    def __init_subclass__(cls, **kwargs):
        pass                              # class keywords meant for the torch base

    return _UnconvertedMeta(f"Unconverted_{placeholder._api.rsplit('.', 1)[-1]}", (), {
        "__init_subclass__": classmethod(__init_subclass__)})


def unconverted_decorator(api, where):
    """Replaces a torch decorator with no MindSpore counterpart: the module still imports,
    and the decorated function or class is a placeholder that raises when used."""
    def wrap(fn):
        name = getattr(fn, "__name__", "the definition")
        return Unconverted(f"@{api}", where, f"{name} is decorated with it; no MindSpore counterpart")
    return wrap


def unconverted_defaults(**params):
    """First statement of a function whose default value is unconverted torch code:
    a call that leaves such a parameter out reaches that code."""
    for value in params.values():
        if isinstance(value, Unconverted):
            value._fail()


def unconverted_definition(error, name, where):
    """Handler of a module- or class-level definition that uses unconverted torch code: when
    the failure came from a placeholder, the name becomes one (import goes on, using it
    raises); any other error is raised again, as it would be in torch."""
    if not _from_placeholder(error):
        raise error
    return Unconverted(name, where, f"defined by torch code that was not converted; {type(error).__name__}: {error}")


def exception_types(types):
    """`except NAME:` where NAME may hold a placeholder; evaluated only when an exception
    reaches the clause, where Python would raise TypeError for a non-class."""
    for t in types if isinstance(types, tuple) else (types,):
        if isinstance(t, Unconverted):
            t._fail()
    return types


def _from_placeholder(error):
    """A MigrationError (also as the cause of another error), or an error raised in code
    that received a placeholder as an argument or local."""
    seen = error
    while seen is not None:
        if isinstance(seen, MigrationError):
            return True
        seen = seen.__cause__ or seen.__context__
    tb = error.__traceback__.tb_next if error.__traceback__ is not None else None   # past the definition
    while tb is not None:
        for value in tb.tb_frame.f_locals.values():
            items = value if isinstance(value, (tuple, list)) else value.values() if isinstance(value, dict) else ()
            if isinstance(value, Unconverted) or any(isinstance(v, Unconverted) for v in items):
                return True
        tb = tb.tb_next
    return False


class _NullContext:
    """A context manager and decorator that changes nothing, for torch's calls MindSpore needs no counterpart
    of (autocast, sdpa_kernel, record_function in compat_parts/runtime.py, attention.py, debugging.py)."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        return fn


# ----------------------------------------------------------------- tensors
def legacy_tensor(dtype, *args, keep_tensor_dtype=False):
    """torch.Tensor(...) / torch.FloatTensor(...) and friends: sizes give a (zero-filled)
    tensor of that shape, data a tensor of the class's dtype; torch.Tensor(tensor) keeps the
    tensor's own dtype (keep_tensor_dtype)."""
    if len(args) == 1 and isinstance(args[0], ms.Tensor):
        # first: in a compiled step the size test below cannot take a Tensor
        return args[0] if keep_tensor_dtype else args[0].astype(dtype)
    if not args:
        return ms.Tensor(np.zeros((0,), ms.dtype_to_nptype(dtype)))
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return ops.zeros(tuple(args), dtype)
    if len(args) != 1:
        raise TypeError("expected sizes or one sequence of data")
    data = args[0]
    if isinstance(data, (list, tuple)) and data and all(isinstance(d, ms.Tensor) for d in data):
        # rows that entered a compiled step as Tensors (NumPy rows there: compile_step's arguments)
        return ops.stack(list(data)).astype(dtype)
    # the cast on MindSpore's side (numpy's truncation of floats to integers, rounding to float32 alike):
    # ms.dtype_to_nptype logs a deprecation warning, which a compiled step cannot call
    return ms.Tensor(np.asarray(data)).astype(dtype)


# ----------------------------------------------------------------- buffers
def register_buffer(cell, name, tensor, persistent=True):
    """torch's register_buffer: a persistent (saved) buffer becomes a Parameter that does not train."""
    if tensor is not None and persistent:
        param = ms.Parameter(tensor, name=name, requires_grad=False)
        param.torch_buffer = True   # named_parameters()/parameters() leave it out, as torch does
        # copy.deepcopy of a Parameter drops its attributes: the cell keeps the names too (an EMA copy's parameters())
        cell.__dict__.setdefault("_torch_buffer_names", set()).add(name)
        setattr(cell, name, param)
    else:
        cell.register_buffer(name, tensor, persistent=False)


# the parameter prefixes MindSpore's Cell.__setattr__ accepts (its Validator.check_str_and_none_by_regular)
_LEGAL_PREFIX = re.compile(r"^\w*[0-9a-zA-Z_.\-]*$", re.ASCII)


def add_module(cell, name, module):
    """torch's add_module. Assigning the attribute (rather than insert_child_to_cell)
    gives the child's parameters their full names (features.block1.conv.weight);
    a SequentialCell also gets the child added to the list it runs. A name MindSpore refuses as a parameter
    prefix (torch takes any string without a dot: WassersteinGAN's 'initial:100-512:convt') is kept as the child's
    name, as torch's state_dict keys have it, and its parameters are named under it without that check."""
    if type(cell).__name__ == "ModuleList" and not str(name).isdigit():
        # a list of named children: a Cell of attributes (compat_parts/module_list.py), no longer one MindSpore's
        # graph parser reads as a tuple (the flag CellList's __init__ set)
        cell.__class__ = NamedModules
        cell.__dict__.pop("__cell_as_list__", None)
    if isinstance(module, nn.Cell) and not _LEGAL_PREFIX.match(name) and "." not in name and name \
            and not hasattr(type(cell), name):
        cell.insert_child_to_cell(name, module)
        if getattr(cell, "_auto_prefix", True):
            for local, param in module.parameters_and_names():
                param.name = name + "." + local
    else:
        setattr(cell, name, module)
    if isinstance(cell, nn.SequentialCell) and not isinstance(cell, Sequential):
        cell.cell_list = list(cell._cells.values())
        cell._is_dynamic_name.append(False)
    return module


class Sequential(nn.SequentialCell):
    """Base for subclasses of torch's Sequential: torch runs children assigned as
    attributes (self.norm = ...) in order, so they are added to the run list here."""
    _stands_for = nn.SequentialCell   # torch's nn.Sequential as a value: a direct call builds a SequentialCell

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, nn.Cell) and name in self.__dict__.get("_cells", {}):
            self.cell_list = list(self._cells.values())
            self._is_dynamic_name.append(False)


class ModuleDict(nn.Cell):
    """Base for subclasses of torch's ModuleDict that define forward. MindSpore's
    CellDict cannot be called in GRAPH mode, so this is a plain Cell that keeps its
    children's names in order and offers the dict methods (items() works in GRAPH mode)."""
    torch_container = True   # module_tree: a container, not a layer (checked by name, so it prunes alone)

    def __init__(self, modules=None):
        super().__init__()
        self._keys = []
        if modules is not None:
            for key, cell in (modules.items() if hasattr(modules, "items") else modules):
                setattr(self, key, cell)

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        keys = self.__dict__.get("_keys")
        if isinstance(value, nn.Cell) and keys is not None and name not in keys:
            keys.append(name)

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, cell):
        setattr(self, key, cell)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        return list(self._keys)

    def values(self):
        return [getattr(self, k) for k in self._keys]

    def items(self):
        return [(k, getattr(self, k)) for k in self._keys]


def Buffer(data, persistent=True):
    """torch.nn.Buffer assigned to a cell attribute: a persistent buffer is a Parameter
    that is not trained (checkpoints keep it); a non-persistent one is the tensor."""
    if persistent:
        param = ms.Parameter(data, requires_grad=False)
        param.torch_buffer = True   # named_parameters()/parameters() leave it out, as torch does
        return param
    return data


def cells(cell):
    """torch's Module.modules(): the cell itself and every sub-cell, depth first."""
    return [c for _, c in cell.cells_and_names()]


# ----------------------------------------------------------------- nn.init
def _assign(param, value):
    """Fill a Parameter (set_data) or a plain Tensor such as `param.data` (in place, copy_)."""
    if isinstance(param, ms.Parameter):
        param.set_data(value)
        return param
    param.copy_(value)
    _refuse_unreached(param, value)
    return value   # the filled value, for `p[i] = fill(...)`


def _refuse_unreached(param, value, views_only=False):
    """MigrationError where an in-place fill of a view, p[i], did not reach p: copy_ reaches nothing
    (small) or fails when next synchronised (large). views_only: a tensor with storage of its own is
    not read back (the fill's hot path)."""
    if views_only and param.storage_offset() == 0 and param.untyped_storage().nbytes() == param.nbytes:
        return
    try:
        reached = np.array_equal(param.asnumpy(), value.asnumpy(), equal_nan=True)
    except RuntimeError:
        reached = False
    if not reached:
        raise MigrationError("filling part of a tensor in place (init.normal_(p[i])) does not reach p in "
                             "MindSpore: assign instead, p[i] = value")


def fill_part(base, index, fill, *args, **kwargs):
    """torch's `fill(base[index], ...)`, `fill` filling its argument in place (init.zeros_, an own init
    wrapper), where `base[index]` may be part of a tensor: MindSpore's part is a view the fill does not
    reach, so it is filled as a tensor of its own and assigned back. An element of a list or dict of
    tensors is filled itself."""
    if not isinstance(base, ms.Tensor):
        return fill(base[index], *args, **kwargs)
    part = base[index].copy()
    result = fill(part, *args, **kwargs)
    # the fill's result where it is a tensor like the part (a fill whose in-place form returns its value)
    filled = result if isinstance(result, ms.Tensor) and result.shape == part.shape \
        and result.dtype == part.dtype else part
    base[index] = filled
    return result


def _set(param, init_obj):
    value = init.initializer(init_obj, param.shape, param.dtype)
    if not isinstance(param, ms.Parameter):
        value = value.init_data()
    return _assign(param, value)


def _fans(shape):
    if len(shape) < 2:
        raise ValueError("fan in and fan out need at least 2 dimensions")
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity, param=None):
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"unsupported nonlinearity {nonlinearity}")


def _std_for(shape, mode, nonlinearity, a):
    fan_in, fan_out = _fans(shape)
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


# generator=: accepted because a reference to the torch function (`init = torch.nn.init.normal_`) is
# called with torch's keywords; the values come from MindSpore's global seed (as for torch.Generator)
def kaiming_normal_(param, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    return _set(param, init.Normal(sigma=_std_for(param.shape, mode, nonlinearity, a)))


def kaiming_uniform_(param, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    bound = math.sqrt(3.0) * _std_for(param.shape, mode, nonlinearity, a)
    return _set(param, init.Uniform(scale=bound))


def xavier_uniform_(param, gain=1.0, generator=None):
    fan_in, fan_out = _fans(param.shape)
    return _set(param, init.Uniform(scale=gain * math.sqrt(6.0 / (fan_in + fan_out))))


def xavier_normal_(param, gain=1.0, generator=None):
    fan_in, fan_out = _fans(param.shape)
    return _set(param, init.Normal(sigma=gain * math.sqrt(2.0 / (fan_in + fan_out))))


def normal_(param, mean=0.0, std=1.0, generator=None):
    if not isinstance(param, ms.Parameter) and _compiling(_draw_probe):
        # a tensor filled in a compiled forward (Beta-VAE's `std.data.new(std.size()).normal_()`): drawn by the
        # graph, where initializer objects cannot be built; the filled value is returned
        value = (ops.standard_normal(param.shape) * std + mean).astype(param.dtype)
        param.copy_(value)
        return value
    return _set(param, init.Normal(sigma=std, mean=mean))


def uniform_(param, a=0.0, b=1.0, generator=None):
    if not isinstance(param, ms.Parameter) and _compiling(_draw_probe):     # as normal_
        value = (ops.uniform(param.shape, ms.Tensor(a, ms.float32), ms.Tensor(b, ms.float32))).astype(param.dtype)
        param.copy_(value)
        return value
    data = init_stream().uniform(a, b, size=param.shape).astype(ms.dtype_to_nptype(param.dtype))
    return _assign(param, ms.Tensor(data))


def resize_(tensor, size, where=None):
    """torch's Tensor.resize_: the tensor itself takes the new shape (Tensor.set_ keeps the object, so every name
    holding it sees the change, as torch's holders do: WassersteinGAN's `input.resize_as_(real_cpu).copy_(real_cpu)`
    with the last, smaller batch); the elements kept are torch's, in storage order, those it adds zeros (torch
    leaves them uninitialized). where: the original file:line."""
    _pynative_only(None, "Tensor.resize_ at {} in compiled code (GRAPH mode or ms.jit): a graph cannot change the "
                   "shape of a tensor it was given; resize it outside the step", where)
    return _resized_on_host(tensor, tuple(size), where)


def _resized_on_host(tensor, shape, where):
    if tuple(tensor.shape) == shape:
        return tensor       # torch keeps the storage and its values; a compiled step reading it sees later writes
    if id(tensor) in READ_BY_COMPILED_STEPS:
        # a compiled step reads the tensor as a global and keeps the storage it had when it compiled
        raise MigrationError(f"{where or calling_line()}: Tensor.resize_ to {shape} of a tensor of shape "
                             f"{tuple(tensor.shape)} that a compiled train step reads: the step would go on reading "
                             "it as it was (run in PYNATIVE mode, or keep its shape: a full last batch)")
    count = int(np.prod(shape))
    flat = tensor.reshape(-1)[:count]
    if flat.shape[0] < count:
        flat = ops.concat((flat, ops.zeros((count - flat.shape[0],), tensor.dtype)))
    # set_, not assign_value: MindSpore refuses assign_value on a tensor a network took as an input
    tensor.set_(flat.reshape(shape).copy())
    return tensor


# id -> the tensors (no Parameters) compiled train steps read as globals or close over (compile_step)
READ_BY_COMPILED_STEPS = {}


def resize_as_(tensor, other, where=None):
    """torch's Tensor.resize_as_: resize_ to other's shape."""
    return resize_(tensor, other.shape, where)


def trunc_normal_(param, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    return _set(param, init.TruncatedNormal(sigma=std, mean=mean, a=a, b=b))


def constant_(param, val):
    if not isinstance(param, ms.Parameter):   # a plain tensor (x.fill_(v)), also inside a compiled step,
        value = ops.full_like(param, val)     # where initializer objects cannot be built; the filled value
        param.copy_(value)                    # is returned (a graph does not hand back the copied-into input)
        if not _compiling(_draw_probe):       # run op by op: a view the copy did not reach stops here
            _refuse_unreached(param, value, views_only=True)
        return value
    if _compiling(_draw_probe):     # `self.count.zero_()` in a compiled forward: no initializer there
        ops.assign(param, ops.full_like(param, val))
        return param
    return _set(param, init.Constant(val))


def zeros_(param):
    return constant_(param, 0)


def ones_(param):
    return constant_(param, 1)


def orthogonal_(param, gain=1.0, generator=None):
    return _set(param, init.Orthogonal(gain=gain))


# ------------------------------------------------------- layer arguments
def conv_pad_mode(padding):
    """torch conv padding -> MindSpore pad_mode: 'same'/'valid' stay, numbers need 'pad'."""
    return padding if isinstance(padding, str) else "pad"


def conv_padding(padding, ndim=2):
    """torch conv padding (int or one value per spatial dim) -> MindSpore's
    (int or begin/end per dim) for pad_mode='pad'; 0 for 'same'/'valid'."""
    if isinstance(padding, str):
        return 0
    if isinstance(padding, int):
        return padding
    padding = tuple(padding)
    if len(padding) == ndim:
        if ndim == 1:
            return padding[0]
        return tuple(p for p in padding for _ in (0, 1))
    return padding


def conv_transpose_padding(padding, output_padding, ndim=2):
    """torch ConvTranspose padding + output_padding -> MindSpore's begin/end padding for
    pad_mode='pad': torch's output_padding crops less at the end of each dim."""
    def per_dim(v):
        return [v] * ndim if isinstance(v, int) else list(v)
    ps, ops_ = per_dim(padding), per_dim(output_padding)
    if any(o > p for p, o in zip(ps, ops_)):
        raise MigrationError(f"output_padding={output_padding} larger than padding={padding} is not converted")
    return tuple(x for p, o in zip(ps, ops_) for x in (p, p - o))


def upsample_scale(scale_factor, recompute=False):
    """torch Upsample scale_factor -> MindSpore's (floats, used with recompute_scale_factor=True).
    Without recompute, torch maps coordinates by 1/scale: the same only for integer scales."""
    vals = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,)
    if not recompute and any(float(v) != int(v) for v in vals):
        raise MigrationError(f"Upsample scale_factor={scale_factor} is not an integer: MindSpore would map "
                             "coordinates differently from torch (pass size=..., or recompute_scale_factor=True)")
    out = tuple(float(v) for v in vals)
    return out if isinstance(scale_factor, (tuple, list)) else out[0]


def upsample_mode(mode, align_corners=None):
    """Upsample mode known only at run time: MindSpore's bicubic differs from torch's
    unless align_corners=True."""
    if mode == "bicubic" and align_corners is not True:
        raise MigrationError("Upsample mode='bicubic' without align_corners=True differs in MindSpore")
    return mode


class Upsample(nn.Upsample):
    """torch.nn.Upsample with torch's arguments, where the class is a value (YOLOv5's parse_model builds the
    `nn.Upsample` its yaml names with [None, 2, 'nearest']): scale_factor as upsample_scale gives it, with
    recompute_scale_factor=True; the mode checked as upsample_mode checks it."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
        if scale_factor is not None:
            scale_factor = upsample_scale(scale_factor, recompute_scale_factor is True)
            recompute_scale_factor = True
        super().__init__(size, scale_factor, upsample_mode(mode, align_corners), align_corners,
                         recompute_scale_factor)


def norm_shape(normalized_shape):
    """torch LayerNorm accepts an int; MindSpore wants a tuple."""
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(normalized_shape)


class LayerNorm(nn.LayerNorm):
    """nn.LayerNorm with torch's arguments. The normalised axes are the last
    len(normalized_shape) axes of the input (MindSpore's primitive only accepts -1 as a
    negative axis, so the axis is computed from the input's rank). Without
    elementwise_affine (or bias) the missing parameters are constants, as in torch."""

    def __init__(self, normalized_shape, eps=1e-05, elementwise_affine=True, bias=True, device=None, dtype=None):
        shape = norm_shape(normalized_shape)
        super().__init__(shape, begin_norm_axis=-1, begin_params_axis=-1, epsilon=eps)
        self._ndim = len(shape)
        self._has_weight = bool(elementwise_affine)
        self._has_bias = bool(elementwise_affine) and bool(bias)
        # a missing parameter stays a None attribute: GRAPH mode resolves self.beta in construct's
        # untaken branch too
        if not self._has_weight:
            del self.gamma
            self.gamma = None
        if not self._has_bias:
            del self.beta
            self.beta = None
        self._ones = ms.Tensor(np.ones(shape, np.float32))
        self._zeros = ms.Tensor(np.zeros(shape, np.float32))
        # torch's attribute names, for subclasses written against torch's LayerNorm
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = bool(elementwise_affine)

    @property
    def weight(self):
        return self.gamma if self._has_weight else self._ones

    @property
    def bias(self):
        return self.beta if self._has_bias else self._zeros

    def construct(self, x):
        axis = x.ndim - self._ndim
        w = self.gamma if self._has_weight else self._ones
        b = self.beta if self._has_bias else self._zeros
        if x.dtype == ms.float64:
            # MindSpore 2.10's CPU LayerNorm loses float64 (1e-6 off with float32 parameters, 3e-8 with float64
            # ones): torch's formula in float64, the biased variance and eps inside the square root
            axes = tuple(range(axis, x.ndim))
            centred = x - x.mean(axes, keep_dims=True)
            var = (centred * centred).mean(axes, keep_dims=True)
            return centred / ops.sqrt(var + ms.Tensor(self.epsilon, ms.float64)) * w.astype(ms.float64) + \
                b.astype(ms.float64)
        y, _, _ = ops.LayerNorm(begin_norm_axis=axis, begin_params_axis=axis, epsilon=self.epsilon)(x, w, b)
        return y


class AdaptiveAvgPool1d(nn.Cell):
    """torch's AdaptiveAvgPool1d for any length (MindSpore's 1d layer needs the length to be
    divisible by output_size): pools a (N, C, 1, L) view with the 2d layer."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size
        self.pool = nn.AdaptiveAvgPool2d((1, output_size))

    def construct(self, x):
        return ops.squeeze(self.pool(ops.expand_dims(x, -2)), -2)


class AdaptiveMaxPool1d(nn.Cell):
    """torch's AdaptiveMaxPool1d for any length (see AdaptiveAvgPool1d); indices as torch's."""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices
        self.pool = nn.AdaptiveMaxPool2d((1, output_size), return_indices=return_indices)

    def construct(self, x):
        out = self.pool(ops.expand_dims(x, -2))
        if self.return_indices:
            return ops.squeeze(out[0], -2), ops.squeeze(out[1], -2)
        return ops.squeeze(out, -2)


# --------------------------------------- layer classes passed as values
# torch code often passes a layer class around (norm_layer=nn.BatchNorm2d,
# activation_layer=nn.ReLU) and calls it elsewhere with torch's arguments. These
# subclasses take torch's arguments and build the MindSpore layer.
def _activation(base):
    class Activation(base):
        def __init__(self, inplace=False):
            super().__init__()
    Activation.__name__ = Activation.__qualname__ = base.__name__
    return Activation


ReLU = _activation(nn.ReLU)


class ReLU6(nn.ReLU6):
    """torch.nn.ReLU6: see relu6 (compat_parts/nn_extra.py; a float64 input too)."""

    def __init__(self, inplace=False):
        super().__init__()

    def construct(self, input):
        return relu6(input)


SiLU = _activation(nn.SiLU)
Hardswish = _activation(nn.HSwish)
Hardsigmoid = _activation(nn.HSigmoid)
Sigmoid = _activation(nn.Sigmoid)


# nn.Tanh with torch's float32 values on CPU (compat_parts/cpu_float32_kernels.py: MindSpore's CPU float32 tanh is 1e-4
# off); still an instance of MindSpore's
class Tanh(nn.Tanh):
    """torch.nn.Tanh: precise_tanh."""

    def construct(self, input):
        return precise_tanh(input)


class Mish(nn.Cell):
    """torch.nn.Mish: see mish (compat_parts/nn_extra.py)."""

    def __init__(self, inplace=False):
        super().__init__()

    def construct(self, input):
        return mish(input)


class LeakyReLU(nn.LeakyReLU):
    """torch.nn.LeakyReLU: leaky_relu's gradient at 0 (the slope, as torch; compat_parts/nn_extra.py)."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__(alpha=negative_slope)

    def construct(self, x):
        return leaky_relu(x, self.alpha)


class ELU(nn.Cell):
    """torch's ELU for any alpha (MindSpore's ELU kernel only accepts alpha=1.0)."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = float(alpha)

    def construct(self, x):
        return elu(x, self.alpha)   # compat_parts/nn_extra.py


class Embedding(nn.Embedding):
    """nn.Embedding with torch's arguments and behaviour: N(0, 1) initialisation, a zero
    padding_idx row (negative indices allowed) that receives no gradient; with max_norm the rows a
    call reads are renormalised in place first, with no gradient (torch's embedding_renorm_)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        if _weight is not None:
            raise MigrationError("Embedding _weight is not converted (torch shares its storage)")
        if scale_grad_by_freq:
            raise MigrationError("Embedding scale_grad_by_freq=True: gradient scaling by frequency has no MindSpore "
                                 "counterpart")
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings
        super().__init__(num_embeddings, embedding_dim, embedding_table=init.Normal(1.0), padding_idx=padding_idx)
        self.max_norm, self.norm_type = max_norm, float(norm_type)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """torch.nn.Embedding.from_pretrained: the table holds `embeddings` as given (its padding row
        too), and is frozen (no gradient, not among trainable_params) unless freeze=False."""
        if embeddings.ndim != 2:
            raise ValueError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        emb = cls(rows, cols, padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type)
        emb.embedding_table.set_data(ms.Tensor(np.asarray(embeddings.asnumpy() if isinstance(embeddings, ms.Tensor)
                                                          else embeddings)))
        emb.embedding_table.requires_grad = not freeze
        return emb

    def construct(self, ids):
        table = self.embedding_table
        if self.max_norm is not None:
            table = embedding_renorm_(table, ids, self.max_norm, self.norm_type)   # compat_parts/nn_extra.py
        out = ops.gather(table, ids.reshape(-1), 0).reshape(ids.shape + (self.embedding_size,))
        if self.padding_idx is None:
            return out
        keep = ops.expand_dims((ids != self.padding_idx).astype(out.dtype), -1)
        # same values; no gradient flows to the padding row
        return out * keep + ops.stop_gradient(out) * (1 - keep)


class GELU(nn.GELU):
    def __init__(self, approximate="none"):
        super().__init__(approximate=approximate == "tanh")


def _batch_norm(base):
    class BatchNorm(base):
        def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True,
                     track_running_stats=True, device=None, dtype=None):
            if momentum is None:
                raise MigrationError("BatchNorm momentum=None (cumulative average) has no MindSpore counterpart")
            if dtype == ms.float64:
                raise MigrationError(f"{base.__name__}(dtype=float64): MindSpore's BatchNorm takes float16/32 only")
            super().__init__(num_features, eps=eps, momentum=1 - momentum, affine=affine,
                             use_batch_statistics=None if track_running_stats else True)
            self.torch_affine = getattr(self, "bn2d", self).torch_affine = bool(affine)   # read by affine_off

        # torch's names, read where the converter cannot see the layer's class: timm's `self.conv3.bn.weight` of a
        # BatchNormAct2d (a subclass of this adapter) a factory made; a subclass's own `self.weight`
        weight = property(lambda self: self.gamma)
        bias = property(lambda self: self.beta)
        running_mean = property(lambda self: self.moving_mean)
        running_var = property(lambda self: self.moving_variance)
    BatchNorm.__name__ = BatchNorm.__qualname__ = base.__name__
    return BatchNorm


BatchNorm1d = _batch_norm(nn.BatchNorm1d)
BatchNorm2d = _batch_norm(nn.BatchNorm2d)
BatchNorm3d = _batch_norm(nn.BatchNorm3d)


def _instance_norm(base, nd):
    class InstanceNorm(base):
        """torch's InstanceNorm{nd}d written with its formula (MindSpore's InstanceNorm kernel has no CPU
        version): each sample's channels normalised by their own mean and biased variance; with
        track_running_stats=True, training also updates moving_mean/moving_variance (the batch's mean of the
        instance means and unbiased variances, momentum as torch's) and eval reads them. affine defaults to
        False as in torch (gamma/beta then stay frozen at 1/0); an unbatched input is a batch of one."""

        def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False,
                     device=None, dtype=None):
            if momentum is None:
                raise MigrationError(f"{base.__name__} momentum=None (cumulative average) is not converted")
            super().__init__(num_features, eps=float(eps), momentum=float(momentum), affine=affine)
            self.torch_affine = bool(affine)   # affine_off reads it
            self.torch_momentum = float(momentum)
            # MindSpore's BatchNorm meaning: True reads the input's statistics in eval too (no running ones)
            self.use_batch_statistics = None if track_running_stats else True
            self.set_train(True)   # torch's modules start in training mode

        def construct(self, input):
            unbatched = input.ndim == nd + 1
            x = input.expand_dims(0) if unbatched else input
            axes = tuple(range(2, x.ndim))
            shape = (1, -1) + (1,) * (x.ndim - 2)
            if self.training or self.use_batch_statistics:
                mean = x.mean(axes, True)
                var = ((x - mean) ** 2).mean(axes, True)
                if self.training and not self.use_batch_statistics:
                    count = 1
                    for n in x.shape[2:]:
                        count *= n
                    m = self.torch_momentum
                    batch_mean = ops.stop_gradient(mean.reshape(x.shape[:2]).mean(0))
                    batch_var = ops.stop_gradient(var.reshape(x.shape[:2]).mean(0)) * (count / max(count - 1, 1))
                    ops.assign(self.moving_mean, (1 - m) * self.moving_mean + m * batch_mean)
                    ops.assign(self.moving_variance, (1 - m) * self.moving_variance + m * batch_var)
            else:
                mean, var = self.moving_mean.reshape(shape), self.moving_variance.reshape(shape)
            y = (x - mean) / ops.sqrt(var + self.eps) * self.gamma.reshape(shape) + self.beta.reshape(shape)
            return y[0] if unbatched else y
    InstanceNorm.__name__ = InstanceNorm.__qualname__ = base.__name__
    return InstanceNorm


InstanceNorm1d = _instance_norm(nn.InstanceNorm1d, 1)
InstanceNorm2d = _instance_norm(nn.InstanceNorm2d, 2)
InstanceNorm3d = _instance_norm(nn.InstanceNorm3d, 3)


class Dropout(nn.Dropout):
    def __init__(self, p=0.5, inplace=False):
        super().__init__(p=p)


class GroupNorm(nn.GroupNorm):
    def __init__(self, num_groups, num_channels, eps=1e-05, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__(num_groups, num_channels, eps=eps, affine=affine)
        if not bias:
            self.beta.requires_grad = False   # torch's bias=False: no bias, beta stays zero


class Linear(nn.Dense):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, has_bias=bias)
        self.in_features = in_features
        self.out_features = out_features


class LSTM(nn.LSTM):
    """torch.nn.LSTM: torch's arguments; an unbatched input (seq, features) is a batch of one (recurrent.py)."""
    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        if proj_size:
            raise MigrationError("nn.LSTM proj_size: LSTM projections have no MindSpore counterpart")
        with from_init_stream():    # not NumPy's global stream (compat_parts/init_stream.py)
            super().__init__(input_size, hidden_size, num_layers, has_bias=bias, batch_first=batch_first,
                             dropout=float(dropout), bidirectional=bidirectional)
        self.input_size, self.proj_size = input_size, 0   # torch's settings MindSpore's LSTM does not keep

    def construct(self, x, hx=None, seq_length=None):
        # nn.LSTM.construct, not super(): _torch_class (module_tree.py) subclasses this class, and GRAPH mode
        # resolves super() from the instance's class (a recursion)
        x, hx, unbatched = _sequence_inputs(x, hx, self.batch_first)
        return _sequence_outputs(nn.LSTM.construct(self, x, hx, seq_length), unbatched, self.batch_first)


class GRU(nn.GRU):
    """torch.nn.GRU: torch's arguments; an unbatched input is a batch of one."""
    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None):
        with from_init_stream():
            super().__init__(input_size, hidden_size, num_layers, has_bias=bias, batch_first=batch_first,
                             dropout=float(dropout), bidirectional=bidirectional)
        self.input_size = input_size
        precise_recurrence(self, "GRU")      # torch's float32 tanh on CPU (compat_parts/cpu_float32_kernels.py)

    def construct(self, x, hx=None, seq_length=None):
        x, hx, unbatched = _sequence_inputs(x, hx, self.batch_first)
        return _sequence_outputs(nn.GRU.construct(self, x, hx, seq_length), unbatched, self.batch_first)


class RNN(nn.RNN):
    """torch.nn.RNN: torch's arguments; an unbatched input is a batch of one."""
    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        with from_init_stream():
            super().__init__(input_size, hidden_size, num_layers, nonlinearity=nonlinearity, has_bias=bias,
                             batch_first=batch_first, dropout=float(dropout), bidirectional=bidirectional)
        self.input_size = input_size
        precise_recurrence(self, "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU")

    def construct(self, x, hx=None, seq_length=None):
        x, hx, unbatched = _sequence_inputs(x, hx, self.batch_first)
        return _sequence_outputs(nn.RNN.construct(self, x, hx, seq_length), unbatched, self.batch_first)


class any_batch:
    """MindSpore's conv layers also taking torch's unbatched sample (C, *spatial), as a batch of one"""
    class Conv2d(nn.Conv2d):   # where the converter cannot prove the input batched (msmigrate/batched_convs.py)
        def construct(self, x):   # nn.Conv2d's own steps (its construct called by name shares one scope in a graph)
            y = self.conv2d(x.expand_dims(0) if x.ndim == 3 else x, self.weight)
            y = self.bias_add(y, self.bias) if self.has_bias else y
            return y.squeeze(0) if x.ndim == 3 else y

    class Conv1d(nn.Conv1d):
        def construct(self, x):
            if x.ndim == 2:
                return nn.Conv1d.construct(self, x.expand_dims(0)).squeeze(0)
            return nn.Conv1d.construct(self, x)

    class Conv3d(nn.Conv3d):
        def construct(self, x):
            if x.ndim == 4:
                return nn.Conv3d.construct(self, x.expand_dims(0)).squeeze(0)
            return nn.Conv3d.construct(self, x)

    class Conv1dTranspose(nn.Conv1dTranspose):
        def __init__(self, *args, output_padding=0, **kwargs):
            super().__init__(*args, **kwargs)
            out_pad = output_padding[0] if isinstance(output_padding, (tuple, list)) else output_padding
            self.grow_end = None
            if out_pad:
                # torch computes the output_padding rows: crop out_pad fewer at the end (pad_mode 'pad'); past the
                # padding, no crop and the rows beyond the full output (the bias alone) added by _grow_end
                p = self.padding[2]
                self.padding = (0, 0, p, max(p - out_pad, 0))
                self.grow_end = (out_pad - p,) if out_pad > p else None
                self.conv2d_transpose = ops.Conv2DTranspose(
                    out_channel=self.in_channels, kernel_size=self.kernel_size, mode=1, pad_mode=self.pad_mode,
                    pad=self.padding, stride=self.stride, dilation=self.dilation, group=self.group)

        def construct(self, x):
            if x.ndim == 2:
                return _grow_end(self, nn.Conv1dTranspose.construct(self, x.expand_dims(0))).squeeze(0)
            return _grow_end(self, nn.Conv1dTranspose.construct(self, x))

    class Conv2dTranspose(nn.Conv2dTranspose):
        def __init__(self, *args, grow_end=None, **kwargs):
            super().__init__(*args, **kwargs)
            self.grow_end = grow_end        # torch's output_padding past its padding, per dim (_grow_end)

        def construct(self, x):
            if x.ndim == 3:
                return _grow_end(self, nn.Conv2dTranspose.construct(self, x.expand_dims(0))).squeeze(0)
            return _grow_end(self, nn.Conv2dTranspose.construct(self, x))

    class Conv3dTranspose(nn.Conv3dTranspose):
        def __init__(self, *args, grow_end=None, **kwargs):
            super().__init__(*args, **kwargs)
            self.grow_end = grow_end

        def construct(self, x):
            if x.ndim == 4:
                return _grow_end(self, nn.Conv3dTranspose.construct(self, x.expand_dims(0))).squeeze(0)
            return _grow_end(self, nn.Conv3dTranspose.construct(self, x))


def _grow_end(conv, out):
    """A transposed conv's output with torch's output_padding rows past its padding (PixelCNN++'s `stride=2,
    output_padding=1` with no padding): rows beyond the full transposed convolution, which no input reaches, so
    torch's hold the bias alone; MindSpore's layer stops at the full output. conv.grow_end: how many per spatial
    dim (None: none)."""
    if conv.grow_end is None:
        return out
    flat = ()
    for extra in reversed(conv.grow_end):       # ops.pad's pairs start at the last dim
        flat += (0, extra)
    grown = ops.pad(out, flat)
    if conv.has_bias:
        rows = ops.pad(ops.zeros_like(out), flat, value=1.0)
        grown = grown + rows * conv.bias.reshape((1, -1) + (1,) * len(conv.grow_end))
    return grown


def _conv_mode_pads(cls, ndim, kernel_size, padding, dilation, padding_mode):
    """A conv's padding in a padding_mode other than 'zeros' as F.pad's flat pairs (last dim first), the layer
    itself convolving with no padding; None for 'zeros'. 'same' splits each dim's dilation * (kernel - 1) with
    the smaller half first, as torch does."""
    if padding_mode == "zeros":
        return None
    if padding_mode not in ("reflect", "replicate", "circular"):
        raise MigrationError(f"{cls} padding_mode={padding_mode!r}: torch takes 'zeros', 'reflect', 'replicate' "
                             "or 'circular'")
    def per_dim(v):
        return tuple(v) if isinstance(v, (tuple, list)) else (v,) * ndim
    if padding == "valid":
        pairs = [(0, 0)] * ndim
    elif padding == "same":
        pairs = [(t // 2, t - t // 2) for t in (d * (k - 1) for k, d in zip(per_dim(kernel_size), per_dim(dilation)))]
    else:
        pairs = [(p, p) for p in per_dim(padding)]
    return tuple(v for pair in reversed(pairs) for v in pair)


class Conv2d(any_batch.Conv2d):
    """torch.nn.Conv2d with torch's arguments, where the class is a value (a conv_layer= argument) or a base, or
    where padding_mode is reflect/replicate/circular (the input padded in that mode, then a 'valid' convolution)."""
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        mode_pads = _conv_mode_pads("Conv2d", 2, kernel_size, padding, dilation, padding_mode)
        if mode_pads is not None:
            padding = "valid"
        # torch's lists and one-value sizes (`stride=[2]`) as MindSpore's layer takes them
        kernel_size, stride, dilation = conv_size(kernel_size), conv_size(stride), conv_size(dilation)
        if isinstance(padding, str):
            super().__init__(in_channels, out_channels, kernel_size, stride=stride, pad_mode=padding,
                             dilation=dilation, group=groups, has_bias=bias)
        else:
            super().__init__(in_channels, out_channels, kernel_size, stride=stride, pad_mode="pad",
                             padding=conv_padding(padding), dilation=dilation, group=groups, has_bias=bias)
        self.mode_pads, self.padding_mode = mode_pads, padding_mode

    def construct(self, x):
        if self.mode_pads is not None:
            x = pad_by_mode(x, self.mode_pads, self.padding_mode)
        return any_batch.Conv2d.construct(self, x)


def _conv_layer_args(cls, ndim, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                     padding_mode):
    """torch's Conv1d/Conv3d arguments -> MindSpore's, for the adapters below (a padding_mode other than 'zeros':
    no padding, the adapter pads the input in that mode)."""
    if _conv_mode_pads(cls, ndim, kernel_size, padding, dilation, padding_mode) is not None:
        padding = "valid"
    pad = dict(pad_mode=padding) if isinstance(padding, str) else dict(pad_mode="pad",
                                                                      padding=conv_padding(padding, ndim))
    # torch's lists and one-value sizes (`stride=[2]`) as MindSpore's layers take them
    kernel_size, stride, dilation = conv_size(kernel_size), conv_size(stride), conv_size(dilation)
    return dict(in_channels=in_channels, out_channels=out_channels, kernel_size=kernel_size, stride=stride,
                dilation=dilation, group=groups, has_bias=bias, **pad)


class Conv1d(any_batch.Conv1d):
    """torch.nn.Conv1d with torch's arguments, where the class is a value or is called with *args/**kwargs, or
    where padding_mode is reflect/replicate/circular."""
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(**_conv_layer_args("Conv1d", 1, in_channels, out_channels, kernel_size, stride, padding,
                                            dilation, groups, bias, padding_mode))
        self.mode_pads = _conv_mode_pads("Conv1d", 1, kernel_size, padding, dilation, padding_mode)
        self.padding_mode = padding_mode

    def construct(self, x):
        if self.mode_pads is not None:
            x = pad_by_mode(x, self.mode_pads, self.padding_mode)
        return any_batch.Conv1d.construct(self, x)


class Conv3d(any_batch.Conv3d):
    """torch.nn.Conv3d with torch's arguments, where the class is a value or is called with *args/**kwargs, or
    where padding_mode is reflect/replicate/circular."""
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(**_conv_layer_args("Conv3d", 3, in_channels, out_channels, kernel_size, stride, padding,
                                            dilation, groups, bias, padding_mode))
        self.mode_pads = _conv_mode_pads("Conv3d", 3, kernel_size, padding, dilation, padding_mode)
        self.padding_mode = padding_mode

    def construct(self, x):
        if self.mode_pads is not None:
            x = pad_by_mode(x, self.mode_pads, self.padding_mode)
        return any_batch.Conv3d.construct(self, x)


def _max_pool(base):
    class MaxPool(base):
        """torch.nn.MaxPool*d with torch's arguments (stride defaults to kernel_size, as in torch)."""
        def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
            super().__init__(kernel_size, stride=kernel_size if stride is None else stride, pad_mode="pad",
                             padding=padding, dilation=dilation, return_indices=return_indices,
                             ceil_mode=ceil_mode)
    MaxPool.__name__ = MaxPool.__qualname__ = base.__name__
    return MaxPool


def _avg_pool(base):
    class AvgPool(base):
        """torch.nn.AvgPool*d with torch's arguments (stride defaults to kernel_size, as in torch)."""
        def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                     divisor_override=None):
            extra = {} if divisor_override is None else dict(divisor_override=divisor_override)
            super().__init__(kernel_size, stride=kernel_size if stride is None else stride, pad_mode="pad",
                             padding=padding, ceil_mode=ceil_mode, count_include_pad=count_include_pad, **extra)
    AvgPool.__name__ = AvgPool.__qualname__ = base.__name__
    return AvgPool


MaxPool1d = _max_pool(nn.MaxPool1d)
MaxPool2d = _max_pool(nn.MaxPool2d)
MaxPool3d = _max_pool(nn.MaxPool3d)
AvgPool1d = _avg_pool(nn.AvgPool1d)
AvgPool2d = _avg_pool(nn.AvgPool2d)
AvgPool3d = _avg_pool(nn.AvgPool3d)

def ntuple(n):
    """torch.nn.modules.utils._ntuple: repeat a scalar n times, keep an iterable."""
    def parse(x):
        if isinstance(x, (list, tuple)):
            return tuple(x)
        return tuple([x] * n)
    return parse


single, pair, triple, quadruple = ntuple(1), ntuple(2), ntuple(3), ntuple(4)


class MultiheadAttention(nn.MultiheadAttention):
    """nn.MultiheadAttention with torch's arguments and return value: (output,
    weights) or (output, None) when need_weights=False (MindSpore returns (output,))."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__(embed_dim, num_heads, dropout=dropout, has_bias=bias, add_bias_kv=add_bias_kv,
                         add_zero_attn=add_zero_attn, kdim=kdim, vdim=vdim, batch_first=batch_first)

    def __call__(self, *args, **kwargs):
        # MindSpore's __call__ reads args[0..2] even when they are given by keyword (DETR's value=src)
        missing = ("query", "key", "value")[len(args):]
        if missing and all(n in kwargs for n in missing):
            args = args + tuple(kwargs.pop(n) for n in missing)
        return super().__call__(*args, **kwargs)

    def construct(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                  average_attn_weights=True, is_causal=False):
        if is_causal and attn_mask is None:   # only a hint in torch, which refuses it without the mask
            raise RuntimeError("Need attn_mask if specifying the is_causal hint (generate_square_subsequent_mask)")
        # torch turns a bool mask next to a float one into -inf/0; MindSpore mis-combines the pair.
        # Nested ifs: GRAPH mode may compile an `a and b` body whatever a is (attn_mask.dtype of None)
        if attn_mask is not None:
            if key_padding_mask is not None:
                if key_padding_mask.dtype == ms.bool_ and attn_mask.dtype != ms.bool_:
                    key_padding_mask = ops.masked_fill(ops.zeros(key_padding_mask.shape, attn_mask.dtype),
                                                       key_padding_mask, float("-inf"))
        out = super().construct(query, key, value, key_padding_mask, need_weights, attn_mask,
                                average_attn_weights)
        if need_weights:
            return out
        return out[0], None


def load_torch_library(path):
    """torch.ops.load_library: a torch C++ extension cannot be loaded into MindSpore.
    Raises OSError, as torch does when a library fails to load."""
    raise OSError(f"torch extension library {path} cannot be loaded in MindSpore")
