"""Torch files without torch: the one reader of torch.save files and .safetensors files.

Used by load() above and, imported on its own, by `msmigrate weights` (so it needs only
the standard library and NumPy). torch.save files are pickles: they are read by a
restricted unpickler that only accepts what a checkpoint of tensors needs. Every global
the pickle names must be in _TORCH_PICKLE_GLOBALS (each entry says why it is safe);
anything else is refused with UnsafeCheckpointError before it can run. The pickle cannot
modify (BUILD) what it is given, so it cannot choose what this code later calls. The same
unpickler, with its own allow-list, reads plain pickles of NumPy arrays (CIFAR's batches).

Sizes come from the file and are checked before memory is spent: at most 32 dimensions
(NumPy's limit), tensors and zip entries within MSMIGRATE_MAX_EXPANSION times the file's
size (a small file cannot ask for gigabytes), keys within a bounded size.
"""
import collections
import io
import json
import os
import pickle
import struct
import zipfile

import numpy as np

TORCH_FILE_MAX_DIMS = 32         # NumPy 1.x keeps shapes in 32-slot arrays (more crashes it)
TORCH_FILE_EXPANSION_ENV = "MSMIGRATE_MAX_EXPANSION"
TORCH_FILE_DEFAULT_EXPANSION = 16
TORCH_FILE_SLACK_BYTES = 16 * 2 ** 20
TORCH_FILE_MAX_KEY_ITEMS = 2 ** 20   # a tuple/frozenset's size counted as a tree (hashing it walks that tree)


class UnsafeCheckpointError(pickle.UnpicklingError):
    """A torch file needs a Python object that a checkpoint of tensors never needs.
    It was refused before anything from the file ran."""


class TorchObjectError(UnsafeCheckpointError):
    """The file holds a pickled torch object (e.g. a whole model), not tensors."""


class CheckpointLimitError(pickle.UnpicklingError):
    """The file asks for more memory than its size allows (see MSMIGRATE_MAX_EXPANSION)."""


# ------------------------------------------------------------ what the pickle may name
class _TorchName:
    """Stands for a torch class or dtype a checkpoint pickle names (torch.FloatStorage,
    torch.float32, torch.Tensor). It cannot be called or modified."""
    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype=None):
        self.name, self.dtype = name, dtype

    def __call__(self, *args, **kwargs):
        raise UnsafeCheckpointError(f"the pickle calls {self.name}(...), which a checkpoint never does")

    def __setstate__(self, state):
        raise UnsafeCheckpointError(f"the pickle modifies {self.name}, which a checkpoint never does")

    def __repr__(self):
        return self.name


class _TorchStorage:
    """One storage record of the file; its bytes are read when a tensor uses it."""
    __slots__ = ("key", "dtype", "numel")

    def __init__(self, key, dtype, numel):
        self.key, self.dtype, self.numel = key, dtype, numel

    def __setstate__(self, state):
        raise UnsafeCheckpointError("the pickle modifies a storage record")


class _TorchTensor:
    """One tensor record: a view (offset, shape, strides in elements) into a storage."""
    __slots__ = ("storage", "offset", "shape", "stride", "dtype", "requires_grad")

    def __init__(self, storage, offset, shape, stride, dtype):
        self.storage, self.offset, self.shape, self.stride, self.dtype = storage, offset, shape, stride, dtype
        self.requires_grad = False

    def __setstate__(self, state):
        raise UnsafeCheckpointError("the pickle modifies a tensor record")


class _Allowed:
    """A function the pickle may call, wrapped so the pickle cannot modify it."""
    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args):
        return self.fn(*args)

    def __setstate__(self, state):
        raise UnsafeCheckpointError("the pickle modifies an allowed function")


class _PickledOrderedDict(dict):
    """What collections.OrderedDict() gives the pickle: a dict (ordered) without an instance
    __dict__, so BUILD cannot replace its methods. torch's state_dict carries `_metadata`,
    the one state accepted. The readers turn it into a collections.OrderedDict."""
    __slots__ = ("_metadata",)

    def __setstate__(self, state):
        if not (isinstance(state, dict) and set(state) <= {"_metadata"}):
            raise UnsafeCheckpointError("the pickle sets attributes of an OrderedDict other than _metadata")
        self._metadata = state.get("_metadata")


def _ordered_dict(*args):
    if args:
        raise UnsafeCheckpointError("the pickle calls collections.OrderedDict with arguments")
    return _PickledOrderedDict()


def _ints(x, what):
    if isinstance(x, (tuple, list)) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in x):
        if len(x) > TORCH_FILE_MAX_DIMS:
            raise pickle.UnpicklingError(f"a tensor record has {len(x)} dimensions; at most "
                                         f"{TORCH_FILE_MAX_DIMS} are supported (corrupt or hostile file)")
        return tuple(x)
    raise pickle.UnpicklingError(f"malformed tensor record: {what} {_short(x)}")


def _tensor_record(storage, offset, size, stride, dtype=None):
    if not isinstance(storage, _TorchStorage) or not isinstance(offset, int) or isinstance(offset, bool) \
            or offset < 0:
        raise pickle.UnpicklingError("malformed tensor record")
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    if len(size) != len(stride):
        raise pickle.UnpicklingError("malformed tensor record: size and stride differ in length")
    if dtype is not None and not (isinstance(dtype, _TorchName) and dtype.dtype):
        raise pickle.UnpicklingError("malformed tensor record: dtype")
    return _TorchTensor(storage, offset, size, stride, dtype.dtype if dtype is not None else storage.dtype)


def _rebuild_tensor(storage, offset, size, stride):
    return _tensor_record(storage, offset, size, stride)


def _rebuild_tensor_v2(storage, offset, size, stride, requires_grad=False, hooks=None, metadata=None):
    t = _tensor_record(storage, offset, size, stride)
    t.requires_grad = bool(requires_grad)
    return t


def _rebuild_tensor_v3(storage, offset, size, stride, requires_grad, hooks, dtype, metadata=None):
    t = _tensor_record(storage, offset, size, stride, dtype)
    t.requires_grad = bool(requires_grad)
    return t


def _rebuild_parameter(data, requires_grad=False, hooks=None, state=None):
    if not isinstance(data, _TorchTensor):
        raise pickle.UnpicklingError("malformed parameter record")
    data.requires_grad = bool(requires_grad)
    return data


def _rebuild_from_type_v2(func, new_type, args, state):
    # torch.Tensor subclasses: only plain Tensor/Parameter with an allowed rebuild function
    if not (isinstance(func, _Allowed) and func.fn in _TENSOR_REBUILDERS and isinstance(new_type, _TorchName)
            and new_type.dtype is None and isinstance(args, tuple)):
        raise UnsafeCheckpointError("the pickle rebuilds a tensor of a type other than torch.Tensor")
    return func(*args)


_TENSOR_REBUILDERS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter)


def _latin1_bytes(text, encoding="latin1"):
    # protocol-2 pickles store bytes as _codecs.encode(text, 'latin1')
    if isinstance(text, str) and encoding in ("latin1", "latin-1"):
        return text.encode("latin1")
    raise UnsafeCheckpointError("the pickle calls _codecs.encode with another encoding")


def _sized_tuple(items=()):
    # torch.Size(...): a tuple of ints; anything else is not a shape
    items = tuple(items) if isinstance(items, (tuple, list)) else None
    if items is None or not all(isinstance(v, int) for v in items):
        raise UnsafeCheckpointError("the pickle calls torch.Size with something other than ints")
    return items


# dtype name of each torch storage class and dtype; _RAW_DTYPES says how the bytes are read
_STORAGE_DTYPES = {
    "Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16", "Long": "int64",
    "Int": "int32", "Short": "int16", "Char": "int8", "Byte": "uint8", "Bool": "bool",
    "ComplexFloat": "complex64", "ComplexDouble": "complex128", "Untyped": "uint8",
}
_DTYPE_NAMES = {
    "float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
    "float16": "float16", "half": "float16", "bfloat16": "bfloat16", "int64": "int64", "long": "int64",
    "int32": "int32", "int": "int32", "int16": "int16", "short": "int16", "int8": "int8", "uint8": "uint8",
    "uint16": "uint16", "uint32": "uint32", "uint64": "uint64", "bool": "bool",
    "complex64": "complex64", "cfloat": "complex64", "complex128": "complex128", "cdouble": "complex128",
    "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2",
}
# torch dtypes a checkpoint may name but that have no exact reading here: refused by name
_UNSUPPORTED_DTYPES = ("float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "qint8",
                       "quint8", "qint32", "quint4x2", "quint2x4", "complex32", "chalf", "bits8", "bits16",
                       "bits1x8", "bits2x4", "bits4x2", "uint1", "uint2", "uint3", "uint4", "uint5", "uint6",
                       "uint7", "int1", "int2", "int3", "int4", "int5", "int6", "int7")
# raw little-endian layout of each dtype (bfloat16 and float8 are decoded to float32 exactly)
_RAW_DTYPES = {
    "float32": "<f4", "float64": "<f8", "float16": "<f2", "bfloat16": "<u2", "int64": "<i8", "int32": "<i4",
    "int16": "<i2", "int8": "i1", "uint8": "u1", "uint16": "<u2", "uint32": "<u4", "uint64": "<u8", "bool": "?",
    "complex64": "<c8", "complex128": "<c16", "float8_e4m3fn": "u1", "float8_e5m2": "u1",
}

# Why each global is safe: none of them runs code chosen by the file, reads a file or gives
# access to another object's attributes; the wrapped ones (_Allowed) refuse BUILD.
_TORCH_PICKLE_GLOBALS = {
    # an empty ordered dict without an instance __dict__; items come from SETITEMS (data)
    ("collections", "OrderedDict"): _Allowed(_ordered_dict),
    # set/frozenset of hashable data: hashing walks tuples whose size the unpickler bounds
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("__builtin__", "set"): set,             # protocol 2 names builtins so
    ("__builtin__", "frozenset"): frozenset,
    # a tuple of ints
    ("torch", "Size"): _Allowed(_sized_tuple),
    # str -> bytes with latin1, nothing else
    ("_codecs", "encode"): _Allowed(_latin1_bytes),
    # build inert records (checked shapes, offsets, storages); no bytes are read here
    ("torch._utils", "_rebuild_tensor"): _Allowed(_rebuild_tensor),
    ("torch._utils", "_rebuild_tensor_v2"): _Allowed(_rebuild_tensor_v2),
    ("torch._utils", "_rebuild_tensor_v3"): _Allowed(_rebuild_tensor_v3),
    ("torch._utils", "_rebuild_parameter"): _Allowed(_rebuild_parameter),
    ("torch._utils", "_rebuild_parameter_with_state"): _Allowed(_rebuild_parameter),
    # only calls one of the four rebuild functions above
    ("torch._tensor", "_rebuild_from_type_v2"): _Allowed(_rebuild_from_type_v2),
    # names only (_TorchName refuses to be called or modified)
    ("torch", "Tensor"): _TorchName("torch.Tensor"),
    ("torch._tensor", "Tensor"): _TorchName("torch.Tensor"),
    ("torch.nn.parameter", "Parameter"): _TorchName("torch.nn.Parameter"),
}
for _n, _d in _STORAGE_DTYPES.items():
    for _m in ("torch", "torch.storage"):
        _TORCH_PICKLE_GLOBALS[(_m, _n + "Storage")] = _TorchName(f"torch.{_n}Storage", _d)
for _n, _d in _DTYPE_NAMES.items():
    _TORCH_PICKLE_GLOBALS[("torch", _n)] = _TorchName(f"torch.{_n}", _d)
del _n, _d


def _short(x, limit=80):
    """A bounded description of a value from the file (repr of a crafted value can be huge)."""
    if isinstance(x, (str, bytes)):
        return repr(x[:limit])
    if x is None or isinstance(x, (bool, int, float)):
        return repr(x)[:limit]
    if isinstance(x, tuple) and len(x) <= 8 and all(y is None or isinstance(y, (str, int, float)) for y in x):
        return repr(x)[:limit]
    return f"<{type(x).__name__}>"


class _RestrictedUnpickler(pickle._Unpickler):
    """The one restricted unpickler (pure Python, so each opcode can be checked): every global
    the pickle names must be in `allowed`, and only the records in `buildable` accept BUILD,
    so a file cannot make this process run anything. Subclasses give the allow-list."""

    dispatch = dict(pickle._Unpickler.dispatch)
    allowed, buildable, hint = {}, (), ""

    def __init__(self, file, source, encoding="utf-8"):
        super().__init__(file, encoding=encoding)
        self.source = source
        self._sizes = {}      # id -> size of a tuple/frozenset counted as a tree
        self._keep = []       # keeps those objects alive, so their ids stay theirs

    def find_class(self, module, name):
        allowed = self.allowed.get((module, name))
        if allowed is not None:
            return allowed
        raise UnsafeCheckpointError(
            f"refusing to load {self.source}: it needs '{module}.{name}', which is not a tensor, container, "
            f"number or string, and loading it could run code from the file (nothing was run){self.hint}")

    # --- opcodes that build hashable containers: count their size as a tree
    def _sized(self, obj, items, record=True):
        size = 1 + sum(self._sizes.get(id(x), 1) for x in items)
        if size > TORCH_FILE_MAX_KEY_ITEMS:
            raise CheckpointLimitError(f"{self.source}: the pickle builds a tuple of more than "
                                       f"{TORCH_FILE_MAX_KEY_ITEMS} nested items (corrupt or hostile file)")
        if record and items:
            self._sizes[id(obj)] = size
            self._keep.append(obj)
        return obj

    def load_tuple(self):
        items = self.pop_mark()
        self.append(self._sized(tuple(items), items))

    def load_tuple1(self):
        self.stack[-1] = self._sized((self.stack[-1],), (self.stack[-1],))

    def load_tuple2(self):
        items = (self.stack[-2], self.stack[-1])
        self.stack[-2:] = [self._sized(items, items)]

    def load_tuple3(self):
        items = (self.stack[-3], self.stack[-2], self.stack[-1])
        self.stack[-3:] = [self._sized(items, items)]

    def load_frozenset(self):
        items = self.pop_mark()
        self._sized(None, items, record=False)          # before hashing them
        self.append(frozenset(items))

    def load_reduce(self):
        args = self.stack[-1]
        for x in (args if isinstance(args, tuple) else ()):
            if isinstance(x, (list, tuple)):   # set([...]), frozenset([...]) hash their items
                self._sized(None, x, record=False)
        super().load_reduce()

    def load_setitem(self):
        self._check_dict(self.stack[-3])
        super().load_setitem()

    def load_setitems(self):
        # the target sits just below the mark
        target = self.metastack[-1][-1] if self.metastack and self.metastack[-1] else None
        self._check_dict(target)
        super().load_setitems()

    def load_additems(self):
        target = self.metastack[-1][-1] if self.metastack and self.metastack[-1] else None
        if not isinstance(target, set):
            raise UnsafeCheckpointError("the pickle adds items to something that is not a set")
        super().load_additems()

    def _check_dict(self, target):
        # SETITEM(S) on anything but a plain dict would call that object's __setitem__
        if type(target) not in (dict, _PickledOrderedDict):
            raise UnsafeCheckpointError(f"the pickle sets items of a {type(target).__name__}")

    def load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if not isinstance(inst, self.buildable):
            raise UnsafeCheckpointError(f"the pickle modifies a {type(inst).__name__}, which a checkpoint never does")
        inst.__setstate__(state)

    def _refuse(self):
        raise UnsafeCheckpointError(f"refusing to load {self.source}: the pickle uses an opcode that a checkpoint "
                                    f"of tensors never needs (nothing was run)")

    for _op in (pickle.NEWOBJ, pickle.NEWOBJ_EX, pickle.OBJ, pickle.INST, pickle.EXT1, pickle.EXT2, pickle.EXT4,
                pickle.BYTEARRAY8, pickle.NEXT_BUFFER, pickle.READONLY_BUFFER):
        dispatch[_op[0]] = _refuse
    for _op, _fn in ((pickle.TUPLE, load_tuple), (pickle.TUPLE1, load_tuple1), (pickle.TUPLE2, load_tuple2),
                     (pickle.TUPLE3, load_tuple3), (pickle.FROZENSET, load_frozenset), (pickle.REDUCE, load_reduce),
                     (pickle.SETITEM, load_setitem), (pickle.SETITEMS, load_setitems),
                     (pickle.ADDITEMS, load_additems), (pickle.BUILD, load_build)):
        dispatch[_op[0]] = _fn
    del _op, _fn


# ------------------------------------------------------------ NumPy arrays in plain pickles
# CIFAR's "python version" batches (pickle.dump of dicts, lists, strings and NumPy arrays, protocols
# 0-4). numpy.dtype and _reconstruct build inert records; an array is made from the pickle's own
# bytes only after checks: a plain numeric dtype (no object arrays, whose items could be anything),
# at most 32 dimensions, exactly shape x item size bytes. No NumPy function is called by the pickle.
_NUMPY_CODES = ("b1", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16")


class _NumpyDtype:
    __slots__ = ("code", "order")

    def __init__(self, code):
        self.code, self.order = code, "="

    def __setstate__(self, state):
        # (version, byte order, subarray, names, fields, item size, alignment, flags[, metadata])
        if not (isinstance(state, tuple) and len(state) in (8, 9) and state[1] in ("<", ">", "|", "=")
                and state[2:5] == (None, None, None)):
            raise UnsafeCheckpointError("the pickle gives a NumPy dtype fields or a byte order a plain array "
                                        "never has")
        self.order = "=" if state[1] == "|" else state[1]

    def numpy(self):
        return np.dtype(self.code).newbyteorder(self.order)


def _numpy_dtype(code, align=False, copy=True):
    if code not in _NUMPY_CODES or align:
        raise UnsafeCheckpointError(f"the pickle asks for NumPy dtype {_short(code)}, not a plain number type")
    return _NumpyDtype(code)


def _numpy_values(dtype, raw, shape, fortran=False):
    if not isinstance(dtype, _NumpyDtype):
        raise pickle.UnpicklingError("malformed NumPy array record: dtype")
    if isinstance(raw, str):   # Python 2 pickles hold the bytes as a str (read as latin1)
        raw = raw.encode("latin1")
    dt, numel = dtype.numpy(), 1
    for n in _ints(shape, "shape"):
        numel *= n
    if not isinstance(raw, bytes) or len(raw) != numel * dt.itemsize:
        raise pickle.UnpicklingError(f"malformed NumPy array record: not {numel} values of {dt}")
    flat = np.frombuffer(raw, dt, count=numel)
    return flat.reshape(shape, order="F" if fortran else "C").astype(dt.newbyteorder("="))


class _NumpyArray:
    """What _reconstruct gives the pickle; BUILD hands it the dtype, shape and bytes."""
    __slots__ = ("value",)

    def __setstate__(self, state):
        # (version, shape, dtype, is_fortran, bytes); NumPy < 1.0 wrote it without the version
        if isinstance(state, tuple) and len(state) == 4:
            state = (1,) + state
        if not (isinstance(state, tuple) and len(state) == 5 and isinstance(state[3], (bool, int))):
            raise pickle.UnpicklingError("malformed NumPy array record")
        self.value = _numpy_values(state[2], state[4], state[1], bool(state[3]))


_NDARRAY = _TorchName("numpy.ndarray")


def _numpy_reconstruct(subtype, shape, typecode):
    if subtype is not _NDARRAY:
        raise UnsafeCheckpointError("the pickle rebuilds an array of a type other than numpy.ndarray")
    return _NumpyArray()


def _numpy_scalar(dtype, raw):
    return _numpy_values(dtype, raw, ())[()]


# why each is safe: the functions above only check data and build arrays from the pickle's bytes
_NUMPY_PICKLE_GLOBALS = {
    ("numpy", "ndarray"): _NDARRAY,
    ("numpy", "dtype"): _Allowed(_numpy_dtype),
    ("numpy.core.multiarray", "_reconstruct"): _Allowed(_numpy_reconstruct),
    ("numpy._core.multiarray", "_reconstruct"): _Allowed(_numpy_reconstruct),   # as NumPy 2 names it
    ("numpy.core.multiarray", "scalar"): _Allowed(_numpy_scalar),
    ("numpy._core.multiarray", "scalar"): _Allowed(_numpy_scalar),
    ("_codecs", "encode"): _Allowed(_latin1_bytes),
}
# NumPy's dtype classes (type(np.dtype("f8")) is numpy.dtypes.Float64DType), which torch's weights_only loading
# also accepts: values only, the class itself once loaded (_numpy_leaf); called by the pickle, refused
_NUMPY_DTYPE_CLASSES = {"Bool": "b1", "Int8": "i1", "UInt8": "u1", "Int16": "i2", "UInt16": "u2", "Int32": "i4",
                        "UInt32": "u4", "Int64": "i8", "UInt64": "u8", "Float16": "f2", "Float32": "f4",
                        "Float64": "f8", "Complex64": "c8", "Complex128": "c16"}
for _n in _NUMPY_DTYPE_CLASSES:
    _NUMPY_PICKLE_GLOBALS[("numpy.dtypes", _n + "DType")] = _TorchName(f"numpy.dtypes.{_n}DType")
del _n


class _NumpyPickleUnpickler(_RestrictedUnpickler):
    allowed = _NUMPY_PICKLE_GLOBALS
    buildable = (_TorchName, _Allowed, _NumpyDtype, _NumpyArray)


def _numpy_leaf(x):
    if isinstance(x, _NumpyArray):
        if not hasattr(x, "value"):
            raise pickle.UnpicklingError("malformed NumPy array record: no values")
        return x.value
    if isinstance(x, _TorchName) and x.name == "numpy.ndarray":      # the class as a value
        return np.ndarray
    if isinstance(x, _TorchName) and x.name.startswith("numpy.dtypes."):
        return type(np.dtype(_NUMPY_DTYPE_CLASSES[x.name[len("numpy.dtypes."):-len("DType")]]))
    return x.numpy() if isinstance(x, _NumpyDtype) else x


class _TorchUnpickler(_RestrictedUnpickler):
    """Unpickles a torch checkpoint: every global the pickle names must be in
    _TORCH_PICKLE_GLOBALS; storages come from persistent records."""

    # with NumPy's array records: torch.save of a NumPy array (time_sequence_prediction's traindata.pt), which
    # torch.load(weights_only=True) reads once numpy's _reconstruct, ndarray and dtype are allowed
    allowed = {**_TORCH_PICKLE_GLOBALS, **_NUMPY_PICKLE_GLOBALS}
    buildable = (_PickledOrderedDict, _TorchName, _TorchStorage, _TorchTensor, _Allowed, _NumpyDtype, _NumpyArray)
    hint = ". If the file holds a whole model or other Python objects, save only state_dicts and plain values in torch"

    def __init__(self, file, source, storages):
        super().__init__(file, source)
        self.storages = storages

    def find_class(self, module, name):
        if module == "torch" and name in _UNSUPPORTED_DTYPES:
            raise UnsafeCheckpointError(f"{self.source} holds tensors of dtype torch.{name}, which cannot be read "
                                        f"without torch (nothing was run); convert them with torch first, "
                                        f"e.g. to float32")
        if module.startswith("torch") and (module, name) not in _TORCH_PICKLE_GLOBALS:
            raise TorchObjectError(
                f"{self.source} holds a pickled torch object ({module}.{name}), e.g. a whole model saved with "
                f"torch.save(model): torch classes cannot be loaded in MindSpore. Save model.state_dict() with "
                f"torch, then load it into the converted model with load_state_dict")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        # ('storage', storage class, key, location, number of elements[, view])
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"
                and isinstance(pid[1], _TorchName) and pid[1].dtype and isinstance(pid[4], int)
                and not isinstance(pid[4], bool) and pid[4] >= 0 and isinstance(pid[2], (str, int))):
            raise UnsafeCheckpointError(f"refusing to load {self.source}: unknown persistent record {_short(pid)}")
        if len(pid) > 5 and pid[5] is not None:
            raise pickle.UnpicklingError(f"{self.source}: storage views of the oldest torch format are not supported")
        key = str(pid[2])
        if key not in self.storages:
            self.storages[key] = _TorchStorage(key, pid[1].dtype, pid[4])
        return self.storages[key]


class _BoundedFile:
    """A file as the unpickler reads it: a length read from the file never asks for more
    bytes than the file holds."""

    def __init__(self, fh):
        self.fh = fh
        self.left = max(os.fstat(fh.fileno()).st_size - fh.tell(), 0)

    def read(self, n=-1):
        data = self.fh.read(self.left if n is None or n < 0 or n > self.left else n)
        self.left -= len(data)
        return data

    def readline(self, limit=-1):
        data = self.fh.readline(min(self.left, 2 ** 20) if limit is None or limit < 0 else min(limit, self.left))
        self.left -= len(data)
        return data


def _unpickle(fh, source, storages):
    return _run_unpickler(_TorchUnpickler(fh, source, storages), source, _numpy_leaf)


def _run_unpickler(unpickler, source, leaf=None):
    """What the unpickler reads, with every failure as a one-line pickle.UnpicklingError."""
    try:
        obj = unpickler.load()
    except pickle.UnpicklingError as e:
        if str(e).startswith(str(source)) or "refusing to load" in str(e):
            raise
        raise type(e)(f"{source}: {e}") from None
    except RecursionError:
        raise pickle.UnpicklingError(f"{source}: the pickle nests too deeply (corrupt or hostile file)") from None
    except MemoryError:
        raise CheckpointLimitError(f"{source}: the pickle needs more memory than there is (corrupt or hostile "
                                   f"file)") from None
    except Exception as e:  # noqa: BLE001 - a truncated or corrupt file
        raise pickle.UnpicklingError(f"{source}: corrupt or truncated checkpoint ({type(e).__name__}: "
                                     f"{_one_line_text(e)})") from None
    return _plain_containers(obj, source, leaf)


def _one_line_text(e, limit=200):
    s = " ".join(str(e).split())
    return s if len(s) <= limit else s[:limit - 3] + "..."


def _plain_containers(obj, source, leaf=None):
    """The unpickled structure with collections.OrderedDict in place of the stand-in (and
    leaf(x) in place of every other value, when given); shared sub-objects stay shared (a
    crafted file can share a list 2**60 times over)."""
    done, busy = {}, set()

    def walk(x):
        key = id(x)
        if key in done:
            return done[key]
        if isinstance(x, (dict, list, tuple, set, frozenset)):
            if key in busy:
                raise pickle.UnpicklingError(f"{source}: the pickle holds a container inside itself (corrupt or "
                                             f"hostile file)")
            busy.add(key)
            if isinstance(x, dict):
                out = collections.OrderedDict() if isinstance(x, _PickledOrderedDict) else {}
                for k, v in x.items():
                    out[k] = walk(v)
            elif isinstance(x, list):
                out = [walk(v) for v in x]
            elif isinstance(x, tuple):
                out = tuple(walk(v) for v in x)
            else:
                out = x   # sets hold hashable items: no stand-ins (an OrderedDict is not hashable)
            busy.discard(key)
            done[key] = out
            return out
        return x if leaf is None else leaf(x)

    try:
        return walk(obj)
    except RecursionError:
        raise pickle.UnpicklingError(f"{source}: the pickle nests too deeply (corrupt or hostile file)") from None


def read_numpy_pickle(path):
    """A plain pickle of dicts, lists, strings, numbers and NumPy arrays of numbers (CIFAR's
    "python version" batches), read by the restricted unpickler: strings as latin1, like
    torchvision; anything else the pickle names is refused before it can run."""
    with open(path, "rb") as fh:
        return _run_unpickler(_NumpyPickleUnpickler(_BoundedFile(fh), path, "latin1"), path, _numpy_leaf)


# ------------------------------------------------------------ limits
class _Budget:
    """Bytes a file may make this process hold: MSMIGRATE_MAX_EXPANSION (default 16) times its
    size, plus 16 MiB. A genuine checkpoint holds its tensors' bytes, so it stays far below."""

    def __init__(self, source, file_size):
        raw = os.environ.get(TORCH_FILE_EXPANSION_ENV, "")
        try:
            factor = float(raw) if raw else TORCH_FILE_DEFAULT_EXPANSION
        except ValueError:
            factor = TORCH_FILE_DEFAULT_EXPANSION
        self.source, self.factor = source, factor
        self.limit = int(factor * file_size) + TORCH_FILE_SLACK_BYTES
        self.used = 0

    def take(self, nbytes, what):
        if self.used + nbytes > self.limit:
            raise CheckpointLimitError(
                f"{self.source}: {what} needs {nbytes} bytes, past the limit of {self.limit} bytes for this file "
                f"({self.factor:g} times its size plus 16 MiB; corrupt or hostile file?). If the file is genuine, "
                f"raise the factor with the environment variable {TORCH_FILE_EXPANSION_ENV}")
        self.used += nbytes


def _raw_itemsize(dtype):
    return np.dtype(_RAW_DTYPES[dtype]).itemsize


def _decode_float8(raw_u8, dtype):
    """float8 bytes -> float32, exactly (every float8 value is a float32)."""
    if dtype == "float8_e5m2":   # the top byte of a float16
        return (raw_u8.astype(np.uint16) << 8).view(np.float16).astype(np.float32)
    b = raw_u8.astype(np.int32)   # e4m3fn: bias 7, no infinities, S.1111.111 is NaN
    sign = np.where(b & 0x80, -1.0, 1.0).astype(np.float32)
    exp, man = (b >> 3) & 0xF, (b & 7).astype(np.float32)
    value = np.where(exp == 0, man / 8 * 2.0 ** -6, (1 + man / 8) * np.exp2(exp - 7.0)).astype(np.float32)
    value = np.where((exp == 15) & ((b & 7) == 7), np.float32(np.nan), value)
    return sign * value


class TorchFile:
    """An unpickled torch.save file: `obj` holds _TorchTensor records; array(record) reads one.
    Use it in a with block (a zip archive stays open until then)."""

    def __init__(self, source, obj, storage_bytes, big_endian, budget, close=None):
        self.source, self.obj, self.big_endian = source, obj, big_endian
        self._storage_bytes, self._budget, self._cache = storage_bytes, budget, {}
        self._close = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self._close is not None:
            self._close()
            self._close = None
        self._cache.clear()

    def array(self, t):
        """A record's values as a new C-ordered NumPy array; bfloat16 and float8 as float32 (exact)."""
        if t.dtype not in _RAW_DTYPES:
            raise pickle.UnpicklingError(f"{self.source}: unsupported tensor dtype {t.dtype}")
        dtype = np.dtype(_RAW_DTYPES[t.dtype])
        if self.big_endian:
            dtype = dtype.newbyteorder(">")
        numel = 1
        for n in t.shape:
            numel *= n
        self._budget.take(numel * dtype.itemsize * (2 if t.dtype.startswith(("bfloat", "float8")) else 1),
                          f"a tensor of shape {t.shape}")
        if numel == 0:
            arr = np.zeros(t.shape, dtype.newbyteorder("="))
        else:
            flat = self._flat(t.storage, dtype)
            last = t.offset + sum((n - 1) * s for n, s in zip(t.shape, t.stride))
            if last >= flat.size:
                raise pickle.UnpicklingError(f"{self.source}: tensor reaches element {last} of storage "
                                             f"{t.storage.key}, which holds {flat.size} (truncated or corrupt file)")
            view = np.lib.stride_tricks.as_strided(flat[t.offset:], t.shape,
                                                   [s * dtype.itemsize for s in t.stride], writeable=False)
            arr = np.array(view, dtype=dtype.newbyteorder("="), order="C", copy=True)
        if t.dtype == "bfloat16":
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        elif t.dtype.startswith("float8"):
            arr = _decode_float8(arr, t.dtype)
        return arr

    def _flat(self, storage, dtype):
        key = (storage.key, dtype.str)
        if key not in self._cache:
            raw = self._storage_bytes(storage)
            self._cache[key] = np.frombuffer(raw, dtype, count=len(raw) // dtype.itemsize)
        return self._cache[key]


_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, NotImplementedError, ValueError,
               KeyError, struct.error)


def read_torch_file(path):
    """A torch.save file (zip or legacy format) as a TorchFile. Raises pickle.UnpicklingError
    (UnsafeCheckpointError, TorchObjectError, CheckpointLimitError) with a one-line message."""
    path = os.fspath(path)
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head in (b"PK\x03\x04", b"PK\x05\x06"):
        try:
            return _read_torch_zip(path)
        except _ZIP_ERRORS as e:
            raise pickle.UnpicklingError(f"{path}: truncated or corrupt zip archive ({type(e).__name__}: "
                                         f"{_one_line_text(e)})") from None
    return _read_torch_legacy(path)


def _read_torch_zip(path):
    budget = _Budget(path, os.path.getsize(path))
    zf = zipfile.ZipFile(path)
    names = zf.namelist()
    pkl = min((n for n in names if n == "data.pkl" or n.endswith("/data.pkl")), key=len, default=None)
    if pkl is None:
        zf.close()
        raise pickle.UnpicklingError(f"{path} is a zip archive without data.pkl, not a torch.save file")
    prefix = pkl[:-len("data.pkl")]
    if any(n.startswith(prefix + "code/") for n in names):
        zf.close()
        raise TorchObjectError(f"{path} is a TorchScript archive (torch.jit.save): it cannot be loaded in "
                               f"MindSpore; save model.state_dict() with torch.save instead")

    def entry(name, need=None):
        info = zf.getinfo(name)
        budget.take(info.file_size if need is None else need, f"zip entry {name}")
        if need is not None and info.file_size < need:
            raise pickle.UnpicklingError(f"{path}: storage {name} has {info.file_size} bytes, expected {need} "
                                         f"(truncated or corrupt file)")
        with zf.open(info) as f:
            data = f.read(info.file_size if need is None else need)
        if need is not None and len(data) < need:
            raise pickle.UnpicklingError(f"{path}: storage {name} is truncated or corrupt")
        return data

    try:
        big = prefix + "byteorder" in names and entry(prefix + "byteorder").strip() == b"big"
        storages = {}
        obj = _unpickle(io.BytesIO(entry(pkl)), path, storages)
    except BaseException:
        zf.close()
        raise
    budget.used = 0  # the pickle's bytes are freed; tensors get the whole budget

    def storage_bytes(storage):
        name = f"{prefix}data/{storage.key}"
        try:
            info = zf.getinfo(name)
        except KeyError:
            raise pickle.UnpicklingError(f"{path}: storage record {name} is missing (truncated or corrupt "
                                         f"file)") from None
        need = storage.numel * _raw_itemsize(storage.dtype)
        if info.file_size < need:
            raise pickle.UnpicklingError(f"{path}: storage {name} has {info.file_size} bytes, expected {need} "
                                         f"(truncated or corrupt file)")
        budget.take(need, f"storage {storage.key}")
        with zf.open(info) as f:
            data = f.read(need)
        if len(data) < need:
            raise pickle.UnpicklingError(f"{path}: storage {name} is truncated or corrupt")
        return data

    def guarded(storage):
        try:
            return storage_bytes(storage)
        except _ZIP_ERRORS as e:
            raise pickle.UnpicklingError(f"{path}: truncated or corrupt zip archive ({type(e).__name__}: "
                                         f"{_one_line_text(e)})") from None

    return TorchFile(path, obj, guarded, big, budget, zf.close)


_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001


def _read_torch_legacy(path):
    """torch.save(..., _use_new_zipfile_serialization=False): pickles, then raw storages."""
    size = os.path.getsize(path)
    budget = _Budget(path, size)
    with open(path, "rb") as raw_fh:
        fh = _BoundedFile(raw_fh)
        if _unpickle(fh, path, {}) != _LEGACY_MAGIC:
            raise pickle.UnpicklingError(f"{path} is a pickle but not a torch checkpoint (bad magic number)")
        if _unpickle(fh, path, {}) != _LEGACY_PROTOCOL:
            raise pickle.UnpicklingError(f"{path}: unsupported legacy torch protocol")
        info = _unpickle(fh, path, {})             # byte order, sizes
        big = isinstance(info, dict) and info.get("little_endian") is False
        storages = {}
        obj = _unpickle(fh, path, storages)
        keys = _unpickle(fh, path, {})
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise pickle.UnpicklingError(f"{path}: corrupt legacy checkpoint (bad storage key list)")
        data = {}
        for key in keys:
            storage = storages.get(key)
            count = raw_fh.read(8)
            if storage is None or len(count) != 8:
                raise pickle.UnpicklingError(f"{path}: corrupt or truncated legacy checkpoint")
            numel = struct.unpack(">q" if big else "<q", count)[0]
            nbytes = numel * _raw_itemsize(storage.dtype)
            if numel < 0 or numel < storage.numel:
                raise pickle.UnpicklingError(f"{path}: corrupt legacy checkpoint (storage {key} has {numel} "
                                             f"elements, expected {storage.numel})")
            if nbytes > size - raw_fh.tell():
                raise pickle.UnpicklingError(f"{path}: truncated legacy checkpoint (storage {key} needs {nbytes} "
                                             f"bytes, {max(size - raw_fh.tell(), 0)} left)")
            data[key] = raw_fh.read(nbytes)

    def storage_bytes(storage):
        if storage.key not in data:
            raise pickle.UnpicklingError(f"{path}: storage {storage.key} has no data (truncated or corrupt file)")
        return data[storage.key]

    return TorchFile(path, obj, storage_bytes, big, budget)


# ------------------------------------------------------------ safetensors
_SAFETENSORS_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64",
              "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8", "U16": "uint16", "U32": "uint32",
              "U64": "uint64", "BOOL": "bool", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2"}
_SAFETENSORS_MAX_HEADER = 100 * 2 ** 20   # the safetensors library's own limit


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r:.60} in the header")
        out[k] = v
    return out


def safetensors_arrays(data, source="safetensors data"):
    """name -> NumPy array (bfloat16 and float8 as float32, exactly) from the bytes of a
    .safetensors file, as strict as the safetensors library: a JSON object header, known
    dtypes, no duplicate names, tensors that tile the data exactly (no gaps, no overlaps)."""
    def bad(why):
        return pickle.UnpicklingError(f"{source}: not a valid safetensors file ({why})")

    if len(data) < 8:
        raise bad("shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", data[:8])
    if n > _SAFETENSORS_MAX_HEADER or 8 + n > len(data):
        raise bad("header length past the end of the file")
    try:
        header = json.loads(bytes(data[8:8 + n]).decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (ValueError, UnicodeDecodeError) as e:
        raise bad(f"bad JSON header: {_one_line_text(e)}") from None
    if not isinstance(header, dict):
        raise bad("the header is not a JSON object")
    meta = header.pop("__metadata__", None)
    if meta is not None and not (isinstance(meta, dict) and all(isinstance(v, str) for v in meta.values())):
        raise bad("__metadata__ is not a map of strings")
    base, body = 8 + n, len(data) - 8 - n
    spans = []
    for name, info in header.items():
        try:
            dtype = _SAFETENSORS_DTYPES[info["dtype"]]
            shape = info["shape"]
            begin, end = info["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise bad(f"entry {name!r:.60}: unknown dtype or malformed record") from None
        if not (isinstance(shape, list) and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                                for s in shape)):
            raise bad(f"entry {name!r:.60}: malformed shape")
        if len(shape) > TORCH_FILE_MAX_DIMS:
            raise bad(f"entry {name!r:.60} has {len(shape)} dimensions; at most {TORCH_FILE_MAX_DIMS} are supported")
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (begin, end)) or not 0 <= begin <= end:
            raise bad(f"entry {name!r:.60}: malformed data offsets")
        numel = 1
        for s in shape:
            numel *= s
        if end - begin != numel * _raw_itemsize(dtype):
            raise bad(f"entry {name!r:.60}: {end - begin} bytes for shape {shape} of {info['dtype']}")
        spans.append((begin, end, name, dtype, tuple(shape)))
    spans.sort(key=lambda s: (s[0], s[1]))
    at = 0
    for begin, end, name, _, _ in spans:
        if begin != at:
            raise bad(f"entry {name!r:.60} " + ("overlaps another" if begin < at else "leaves a gap before it"))
        at = end
    if at != body:
        raise bad(f"the tensors cover {at} of the {body} data bytes")
    out = {}
    order = {name: i for i, name in enumerate(header)}
    for begin, end, name, dtype, shape in sorted(spans, key=lambda s: order[s[2]]):
        raw = np.dtype(_RAW_DTYPES[dtype])
        arr = np.frombuffer(data, raw, count=(end - begin) // raw.itemsize, offset=base + begin).reshape(shape)
        arr = np.array(arr, dtype=raw.newbyteorder("="), copy=True)
        if dtype == "bfloat16":
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        elif dtype.startswith("float8"):
            arr = _decode_float8(arr, dtype)
        out[name] = arr
    return out
