"""Checkpoints: torch.save / torch.load, state_dict / load_state_dict, safetensors.

What the converted program writes
    save(obj, path) writes a MindSpore checkpoint (mindspore.save_checkpoint) at exactly
    the path the program gives, also when it ends in .pt or .pth (MindSpore itself would
    append .ckpt). Every tensor in `obj` becomes one checkpoint entry named by where it
    sits in `obj`: a plain state_dict keeps its own keys, obj['model']['conv.weight']
    becomes 'model/conv.weight'. Everything around the tensors (dicts, lists, tuples,
    numbers, strings, None) is kept as JSON in the entry '__torch_save_layout__', so
    load(path) gives back exactly what was saved. Top-level numbers and strings (epoch,
    best_acc) are also written as ordinary append_dict entries for MindSpore tools (which
    store floats as float32; the JSON keeps the exact value).
    An object of the program's own class that torch pickles by its __dict__ (awd-lstm-lm's data.Corpus) is kept as
    its class's module and name and its __dict__ (a Counter stays a Counter). A model or optimizer inside a list
    or dict (`torch.save([model, criterion, optimizer], f)`) is written as its state_dict; the saving process
    keeps a deep copy of the object as saved, which load() of that same file gives back (an optimizer in it as a
    stand-in whose use raises MigrationError: MindSpore's optimizers do not copy); elsewhere load() raises
    MigrationError naming the torch.load line.

What the converted program reads
    load(path) reads those files, plain MindSpore checkpoints, files written by torch.save
    (.pt/.pth/.bin, zip or legacy format) and .safetensors files. torch files are pickles:
    they are read by a restricted unpickler that only accepts what a checkpoint of tensors
    needs (torch's tensor-rebuild functions, OrderedDict, containers, numbers, strings).
    An argparse.Namespace or a dataclass instance saved by save() (a model's config) is kept as its class's
    module and name and its __dict__, and comes back as an instance of that class, found in its module where
    that module is already imported (nothing is imported on the file's say; a file with a "namespace" entry,
    as save() wrote Namespaces before, still loads).
    Anything else is refused with UnsafeCheckpointError before it can run: no code from
    the file is executed and torch is not needed. Tensors come back as mindspore.Tensor.

Names
    model.state_dict() is MindSpore's Cell.state_dict(): MindSpore's parameter names
    (BatchNorm gamma/beta/moving_mean/moving_variance, LayerNorm gamma/beta, Embedding
    embedding_table), also answering lookups by torch's names (sd['ln.weight'], 'ln.weight' in sd,
    pop/del/get). load_state_dict() accepts those and torch's names, so checkpoints
    written by torch load too; strict=True raises listing every missing and unexpected key.
    Values are copied into the existing Parameters (ops.assign), so a training step already
    compiled with mindspore.jit sees them.

Optimizers
    optimizer.state_dict() has torch's layout: {'state': {index: {'step', 'exp_avg', ...}},
    'param_groups': [{'lr': ..., 'params': [indices]}]}, so a torch Adam/AdamW/SGD state loads
    into the mindspore.experimental.optim based optimizers and training continues as in torch.
"""
import argparse
import collections
import io
import json
import os
import pickle
import shutil
import struct
import tempfile
import zipfile

from mindspore import Parameter, ParameterTuple

_LAYOUT_KEY = "__torch_save_layout__"


# ============================================================ save / load
def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True, **_unused):
    """torch.save(obj, f): `obj` (tensors in dicts/lists, numbers, strings) as a MindSpore checkpoint at
    `f` (a path or binary file). A whole model is saved as its parameters (load() of it raises)."""
    entries = _Entries()
    if isinstance(obj, nn.Cell):
        layout = {"cell": type(obj).__qualname__}
        for key, value in obj.state_dict().items():
            entries.add(value, (key,), "tensor")
    else:
        layout = _encode(obj, (), entries)
    append = {_LAYOUT_KEY: json.dumps(layout)}
    if isinstance(obj, dict):
        # plain top-level values, visible to mindspore.load_checkpoint too
        for k, v in obj.items():
            if isinstance(k, str) and k not in entries.names and _plain_scalar(v):
                append[k] = v
    written = _write_checkpoint(entries.items, append, f)
    if entries.whole and written is not None:
        _remember_whole(written, obj)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """torch.load(f): what save() wrote, a MindSpore checkpoint, a torch.save file or a
    .safetensors file (a path or a binary file object). Tensors come back as
    mindspore.Tensor. map_location/weights_only have no meaning here: nothing is
    placed on a device and only data is ever read."""
    with _local_file(f) as path:
        with open(path, "rb") as fh:
            head = fh.read(16)
        if not head:
            raise EOFError(f"{path} is empty")
        if head[:4] in (b"PK\x03\x04", b"PK\x05\x06") or head[:1] == b"\x80":
            return _read_torch_file(path)
        if len(head) > 8 and head[8:9] == b"{" and struct.unpack("<Q", head[:8])[0] < os.path.getsize(path):
            with open(path, "rb") as fh:
                return safetensors_load(fh.read())
        origin = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", None)
        return _read_ms_checkpoint(path, origin)


def _plain_scalar(v):
    if isinstance(v, bool) or isinstance(v, str) or isinstance(v, float):
        return True
    return isinstance(v, int) and -2 ** 63 <= v < 2 ** 63


class _Entries:
    """The tensors of a saved object, as checkpoint entries; each tensor is stored once."""

    def __init__(self):
        self.items, self.names, self.by_id = [], set(), {}
        self.whole = False      # a model or an optimizer inside the saved object (saved as its state)

    def add(self, tensor, path, kind):
        if id(tensor) not in self.by_id:  # a tensor that appears twice (tied weights) is stored once
            name = "/".join(str(p) for p in path) or kind
            while name in self.names or name == _LAYOUT_KEY:
                name += "'"
            self.names.add(name)
            self.by_id[id(tensor)] = name
            self.items.append({"name": name, "data": tensor if kind == "tensor" else ms.Tensor(tensor)})
        return self.by_id[id(tensor)]


def _encode(obj, path, entries):
    """JSON for `obj`; its tensors go to `entries` and are referred to by entry name."""
    if isinstance(obj, np.generic):  # before float: numpy.float64 is a float
        return {"npscalar": [obj.dtype.str, obj.item()]}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, (ms.Tensor, np.ndarray)):
        kind = "tensor" if isinstance(obj, ms.Tensor) else "ndarray"
        if 0 in obj.shape:  # MindSpore checkpoints drop empty tensors: keep shape and dtype here
            dtype = obj.asnumpy().dtype if kind == "tensor" else obj.dtype
            return {"empty": [list(obj.shape), dtype.str, kind]}
        return {kind: entries.add(obj, path, kind)}
    if isinstance(obj, dict):
        kind = {collections.OrderedDict: "odict", collections.Counter: "counter"}.get(type(obj), "dict")
        return {kind: [[_encode_key(k), _encode(v, path + (k,), entries)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {kind: [_encode(v, path + (i,), entries) for i, v in enumerate(obj)]}
    if isinstance(obj, argparse.Namespace) or hasattr(type(obj), "__dataclass_fields__") or _plain_class(type(obj)):
        # args, a config, an object of the program's own class (awd-lstm-lm's cached data.Corpus): its __dict__
        return {"object": [type(obj).__module__, type(obj).__qualname__, _encode(vars(obj), path, entries)["dict"]]}
    if isinstance(obj, nn.Cell) or (hasattr(obj, "param_groups") and callable(getattr(obj, "state_dict", None))):
        # a model or an optimizer inside the object (awd-lstm-lm's `torch.save([model, criterion, optimizer], f)`):
        # its state_dict here; load() in this process gives back a copy of the object as saved (_remember_whole)
        entries.whole = True
        return {"whole": [type(obj).__qualname__, _encode(dict(obj.state_dict()), path, entries)]}
    raise TypeError(f"cannot save a {type(obj).__name__} at {'/'.join(map(str, path)) or 'top level'} in a "
                    f"MindSpore checkpoint: it holds tensors, numbers, strings, None, dicts, lists and tuples "
                    f"(torch.save would pickle this object)")


def _encode_key(k):
    if k is None or isinstance(k, (bool, int, float, str)):
        return k
    if isinstance(k, tuple):
        return {"tuple": [_encode_key(x) for x in k]}
    raise TypeError(f"cannot save a dict key of type {type(k).__name__} in a MindSpore checkpoint")


def _decode(node, tensors):
    if not isinstance(node, dict):
        return node
    (kind, value), = node.items()
    if kind == "tensor":
        return tensors[value].value()
    if kind == "ndarray":
        return tensors[value].asnumpy()
    if kind == "empty":
        shape, dtype, what = value
        arr = np.zeros(shape, np.dtype(dtype))
        return ms.Tensor(arr) if what == "tensor" else arr
    if kind == "npscalar":
        return np.dtype(value[0]).type(value[1])
    if kind in ("dict", "odict", "counter", "namespace"):
        items = [(_decode(k, tensors), _decode(v, tensors)) for k, v in value]
        if kind == "namespace":
            return argparse.Namespace(**dict(items))
        if kind == "counter":
            return collections.Counter(dict(items))
        return collections.OrderedDict(items) if kind == "odict" else dict(items)
    if kind == "whole":
        where = calling_line()      # the original torch.load line
        raise MigrationError(
            (f"{where}: " if where else "") + f"the file holds a whole {value[0]} saved with torch.save by another "
            f"process: MindSpore cannot rebuild a model or optimizer object from a checkpoint (in the process that "
            f"saved it, load gives back a copy of it). Create the object and load its state_dict instead")
    if kind == "object":    # an argparse.Namespace or a dataclass (build-nanogpt's GPTConfig): its __dict__
        import sys      # the class in its module where that module is imported (pickle's look-up; nothing imported)
        module, qualname, fields = value
        cls = sys.modules.get(module)
        for part in qualname.split(".") if cls is not None else ():
            cls = getattr(cls, part, None)
        if cls is not argparse.Namespace and not hasattr(cls, "__dataclass_fields__") and not _plain_class(cls):
            raise AttributeError(f"Can't get attribute {qualname!r} on module {module!r}: the checkpoint holds a "
                                 f"{qualname} (a dataclass or a plain class), which loads where its module is "
                                 f"imported")
        obj = cls.__new__(cls)
        for k, v in fields:
            object.__setattr__(obj, _decode(k, tensors), _decode(v, tensors))
        return obj
    if kind == "list":
        return [_decode(v, tensors) for v in value]
    if kind == "tuple":
        return tuple(_decode(v, tensors) for v in value)
    raise ValueError(f"unknown entry {kind!r} in the checkpoint layout")


def _write_checkpoint(entries, append, f):
    """Writes the checkpoint; returns (the file's absolute path, the bytes written), None for a file object
    without a path."""
    if not isinstance(f, (str, os.PathLike)):  # a file object: write a temporary file, copy its bytes
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "checkpoint.ckpt")
            ms.save_checkpoint(entries, path, append_dict=append)
            with open(path, "rb") as fh:
                data = fh.read()
            f.write(data)
        name = getattr(f, "name", None)
        return (os.path.abspath(name), data) if isinstance(name, str) else None
    path = os.fspath(f)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise RuntimeError(f"Parent directory {folder} does not exist.")
    # save_checkpoint appends '.ckpt' to other names: write beside the target, then rename (one step)
    tmp = f"{path}.{os.getpid()}.tmp.ckpt"
    try:
        ms.save_checkpoint(entries, tmp, append_dict=append)
        os.chmod(tmp, 0o644)  # MindSpore makes checkpoints read-only; torch does not
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    with open(path, "rb") as fh:
        return os.path.abspath(path), fh.read()


def _plain_class(cls):
    """A class of the program's own whose objects torch.save pickles as their __dict__: defined in a module (not
    builtins), no __slots__, and nothing of its own in pickling or creation (__reduce__, __getstate__,
    __setstate__, __new__); not a tensor, model or optimizer."""
    if not isinstance(cls, type) or cls.__module__ in ("builtins", "collections") or issubclass(cls, (ms.Tensor,
                                                                                                     nn.Cell)):
        return False
    if any("__slots__" in vars(k) for k in cls.__mro__[:-1]) or "__dict__" not in dir(cls):
        return False
    return all(getattr(cls, name, None) is getattr(object, name, None)
               for name in ("__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__new__")) \
        and not hasattr(cls, "param_groups")


# the objects holding a model or optimizer that save() wrote, by the file's path: (the bytes written, a copy)
_WHOLE_SAVED = {}


class _UnrebuiltOptimizer:
    """An optimizer that torch.load gave back from a file holding a whole optimizer: MindSpore's optimizers cannot
    be copied (their update primitives do not pickle), so any use of this one stops, naming the torch.load line
    (`where`, set by the load)."""

    def __init__(self, name):
        self.__dict__["_name"] = name
        self.__dict__["where"] = None

    def _refuse(self):
        where = self.__dict__["where"]
        raise MigrationError((f"{where}: " if where else "") + f"the {self._name} this torch.load gave back, from a "
                             f"file holding the whole optimizer, is used: MindSpore cannot rebuild an optimizer "
                             f"object. Create the optimizer and load its state_dict instead")

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)      # copy's and pickle's probes
        self._refuse()

    def __setattr__(self, attr, value):
        self._refuse()


def _optimizers_in(obj, found):
    """The optimizers held by obj's lists, tuples, dicts and plain objects (not inside models)."""
    if isinstance(obj, (list, tuple)):
        for v in obj:
            _optimizers_in(v, found)
    elif isinstance(obj, dict):
        for v in obj.values():
            _optimizers_in(v, found)
    elif isinstance(obj, _UnrebuiltOptimizer) or (hasattr(obj, "param_groups")
                                                  and callable(getattr(obj, "state_dict", None))):
        found.append(obj)
    elif _plain_class(type(obj)):
        _optimizers_in(vars(obj), found)
    return found


def _remember_whole(written, obj):
    """A pickle's round trip is a deep copy: the file save() wrote for an object holding a model or optimizer
    loads, in this process, as a copy of the object as it was saved (the file itself holds their state_dicts).
    An optimizer in it comes back as _UnrebuiltOptimizer (MindSpore's do not copy): its use stops there."""
    import copy
    import hashlib
    path, data = written
    memo = {id(opt): _UnrebuiltOptimizer(type(opt).__name__) for opt in _optimizers_in(obj, [])}
    _WHOLE_SAVED[path] = (hashlib.sha1(data).hexdigest(), copy.deepcopy(obj, memo))


def _whole_saved(origin, path):
    """A copy of the object save() wrote to `origin` in this process when `path` (its bytes) is that file still."""
    import copy
    import hashlib
    kept = _WHOLE_SAVED.get(os.path.abspath(origin)) if isinstance(origin, str) else None
    if kept is None:
        return None
    with open(path, "rb") as fh:
        if hashlib.sha1(fh.read()).hexdigest() != kept[0]:
            return None
    return copy.deepcopy(kept[1])


def _read_ms_checkpoint(path, origin=None):
    """origin: the path the program named (a file object's name), where it differs from `path` (a copy)"""
    with _ckpt_named(path) as name:
        raw = ms.load_checkpoint(name)
    layout = raw.pop(_LAYOUT_KEY, None)
    if layout is None:  # written by MindSpore itself: names -> tensors (and its append_dict values)
        return {k: (v.value() if isinstance(v, Parameter) else v) for k, v in raw.items()}
    if '"whole"' in layout:     # a model or optimizer inside: a copy of the object where this process saved it
        kept = _whole_saved(origin or path, path)
        if kept is not None:
            where = calling_line()      # the original torch.load line: a use of an optimizer in it stops naming it
            for opt in _optimizers_in(kept, []):
                opt.__dict__["where"] = where
            return kept
    layout = json.loads(layout)
    if isinstance(layout, dict) and "cell" in layout:
        where = calling_line()      # the original torch.load line
        raise MigrationError(
            (f"{where}: " if where else "") + f"{path} holds a whole model ({layout['cell']}) saved with "
            f"torch.save(model): MindSpore cannot rebuild a model object from a checkpoint. Create the model and call "
            f"model.load_state_dict(load(path)) instead")
    return _decode(layout, raw)


class _local_file:
    """A path for `f`: the path itself, or a temporary copy of a file object's bytes."""

    def __init__(self, f):
        self.f, self.tmp = f, None

    def __enter__(self):
        if isinstance(self.f, (str, os.PathLike)):
            return os.fspath(self.f)
        self.tmp = tempfile.mkdtemp()
        path = os.path.join(self.tmp, "checkpoint")
        with open(path, "wb") as out:
            out.write(self.f.read())
        return path

    def __exit__(self, *exc):
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)


class _ckpt_named:
    """mindspore.load_checkpoint only opens names ending in .ckpt: link other names."""

    def __init__(self, path):
        self.path, self.tmp = path, None

    def __enter__(self):
        if self.path.endswith(".ckpt"):
            return self.path
        self.tmp = tempfile.mkdtemp()
        link = os.path.join(self.tmp, "checkpoint.ckpt")
        try:
            os.symlink(os.path.abspath(self.path), link)
        except OSError:
            shutil.copyfile(self.path, link)
        return link

    def __exit__(self, *exc):
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)


# ============================================================ torch files, without torch
def _read_torch_file(path):
    """A torch.save file, read by the restricted reader of the torch files section."""
    try:
        torch_file = read_torch_file(path)
    except TorchObjectError as e:
        raise MigrationError(str(e)) from None
    with torch_file:
        return _to_mindspore(torch_file)


def _to_mindspore(torch_file):
    """The unpickled structure with mindspore.Tensor in place of its tensor records (a
    shared sub-object is converted once and stays shared)."""
    done = {}

    def walk(obj):
        key = id(obj)
        if key in done:
            return done[key]
        if isinstance(obj, _TorchTensor):
            arr = torch_file.array(obj)
            out = ms.Tensor(arr)
            if obj.dtype == "bfloat16":
                out = out.astype(ms.bfloat16)   # exact: the values came from bfloat16
        elif isinstance(obj, _TorchName):
            out = getattr(ms, obj.name[len("torch."):], obj.name) if obj.dtype else obj.name
        elif isinstance(obj, dict):
            out = type(obj)() if isinstance(obj, collections.OrderedDict) else {}
            for k, v in obj.items():
                out[k] = walk(v)
        elif isinstance(obj, (list, tuple, set, frozenset)):
            out = type(obj)(walk(v) for v in obj)
        else:
            out = obj
        done[key] = out
        return out

    return walk(torch_file.obj)


# ============================================================ safetensors
_ST_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "bfloat16", "I64": "<i8", "I32": "<i4",
              "I16": "<i2", "I8": "i1", "U8": "u1", "U16": "<u2", "U32": "<u4", "U64": "<u8", "BOOL": "?"}
_ST_CODES = {np.dtype(d).name: c for c, d in _ST_DTYPES.items() if d != "bfloat16"}  # 'float32' -> 'F32'


def safetensors_save(tensors, metadata=None):
    """safetensors.torch.save: the bytes of a .safetensors file (written with NumPy)."""
    header, blobs, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name, t in tensors.items():
        if isinstance(t, ms.Tensor) and t.dtype == ms.bfloat16:
            bits = t.astype(ms.float32).asnumpy().view(np.uint32)
            arr, code = (bits >> 16).astype("<u2"), "BF16"
        else:
            arr = t.asnumpy() if isinstance(t, ms.Tensor) else np.asarray(t)
            code = _ST_CODES.get(arr.dtype.name)
            if code is None:
                raise TypeError(f"safetensors cannot store {name!r} of dtype {arr.dtype}")
            arr = arr.astype(_ST_DTYPES[code])  # little endian
        data = np.ascontiguousarray(arr).tobytes()
        header[name] = {"dtype": code, "shape": list(arr.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the format aligns the data to 8 bytes
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def safetensors_load(data):
    """safetensors.torch.load: name -> mindspore.Tensor from the bytes of a .safetensors file
    (checked as strictly as the safetensors library does, see the torch files section)."""
    out = {}
    arrays = safetensors_arrays(data)   # checks the file first
    header = json.loads(bytes(data[8:8 + struct.unpack("<Q", data[:8])[0]]))
    for name, arr in arrays.items():
        out[name] = ms.Tensor(arr)
        if isinstance(header.get(name), dict) and header[name].get("dtype") == "BF16":
            out[name] = out[name].astype(ms.bfloat16)   # exact: the values came from bfloat16
    return out


def safetensors_save_file(tensors, filename, metadata=None):
    """safetensors.torch.save_file, at exactly `filename`."""
    with open(filename, "wb") as fh:
        fh.write(safetensors_save(tensors, metadata))


def safetensors_load_file(filename, device="cpu"):
    """safetensors.torch.load_file: name -> mindspore.Tensor."""
    with open(filename, "rb") as fh:
        return safetensors_load(fh.read())


# ============================================================ state_dict / load_state_dict
# class -> its state_dict in torch's layout, filled by the optimizers section (kept only with it)
_STATE_DICT_LAYOUTS = {}


def state_dict(obj, **kwargs):
    """torch's obj.state_dict(): a model's (Cell.state_dict, MindSpore names), an optimizer's or LR
    scheduler's in torch's layout, other objects' own."""
    for cls, layout in _STATE_DICT_LAYOUTS.items():
        if isinstance(obj, cls):
            return layout(obj)
    if isinstance(obj, nn.Cell) and type(obj).state_dict is nn.Cell.state_dict:
        return _StateDict(obj.state_dict(**kwargs))
    return obj.state_dict(**kwargs)


# torch's parameter name -> MindSpore's names of it (BatchNorm/LayerNorm/GroupNorm, Embedding, PReLU)
_MS_PARAM_NAMES = {"weight": ("gamma", "embedding_table", "w"), "bias": ("beta",),
                   "running_mean": ("moving_mean",), "running_var": ("moving_variance",)}


class _StateDict(collections.OrderedDict):
    """A Cell's state_dict under MindSpore's names (iterated, saved) that also answers torch's names of
    the same entries (sd['ln.weight'] is sd['ln.gamma']), as programs reading their own state_dict expect."""

    def _key(self, key):
        head, dot, last = key.rpartition(".") if isinstance(key, str) else ("", "", "")
        for name in () if super().__contains__(key) else _MS_PARAM_NAMES.get(last, ()):
            if super().__contains__(head + dot + name):
                return head + dot + name
        return key

    def __getitem__(self, key):
        return super().__getitem__(self._key(key))

    def __setitem__(self, key, value):
        super().__setitem__(self._key(key), value)

    def __delitem__(self, key):
        super().__delitem__(self._key(key))

    def __contains__(self, key):
        return super().__contains__(self._key(key))

    def get(self, key, default=None):
        return super().get(self._key(key), default)

    def pop(self, key, *default):
        return super().pop(self._key(key), *default)

    def __reduce__(self):  # pickled and deep-copied as a plain OrderedDict
        return collections.OrderedDict, (list(self.items()),)


def load_state_dict(obj, state_dict, **kwargs):
    """torch's obj.load_state_dict(state_dict, strict). A model takes MindSpore's names or
    torch's (BatchNorm weight/bias/running_mean/running_var, LayerNorm/GroupNorm
    weight/bias, Embedding weight; Conv1d weights of shape (out, in, k); num_batches_tracked
    is dropped). Returns (missing_keys, unexpected_keys); strict=True raises listing all of
    them, as torch does."""
    if isinstance(obj, nn.Cell) and not isinstance(obj, _experimental_optimizer()):
        if type(obj).load_state_dict is not nn.Cell.load_state_dict:  # the model's own method
            return obj.load_state_dict(_mindspore_names(obj, state_dict), **kwargs)
        return _load_into_cell(obj, state_dict, **kwargs)
    if kwargs and isinstance(obj, (_experimental_optimizer(), _experimental_scheduler())):
        # torch's Optimizer/LRScheduler.load_state_dict take the state dict alone (`strict=False` is a TypeError,
        # which programs catch to retry without it)
        raise TypeError(f"{type(obj).__name__}.load_state_dict() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")
    if isinstance(obj, _experimental_optimizer()):
        return _load_optimizer_state(obj, state_dict)
    if isinstance(obj, _experimental_scheduler()) and not hasattr(obj, "load_state_dict"):
        for k, v in state_dict.items():
            current = getattr(obj, k, None)
            if isinstance(current, Parameter):
                _set_value(current, v, k)
            elif not (isinstance(current, list) and any(isinstance(c, Parameter) for c in current)):
                setattr(obj, k, v)  # lists of the optimizer's own lr Parameters stay as they are
        return None
    return obj.load_state_dict(state_dict, **kwargs)


class IncompatibleKeys(collections.namedtuple("_IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """what Module.load_state_dict returns, printed as torch prints it"""
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys!r}, unexpected_keys={self.unexpected_keys!r})"

    __str__ = __repr__


def _write_in_place(param, value):
    """Copy `value` into `param`'s memory. A step compiled with mindspore.jit keeps reading that
    memory: Parameter.set_data/assign_value (used by Cell.load_state_dict and
    load_param_into_net) give the Parameter new memory, and an already compiled step would
    go on with the old values."""
    value = ms.Tensor(value) if isinstance(value, np.ndarray) else value
    if value.dtype != param.dtype:
        value = value.astype(param.dtype)
    if isinstance(param, Parameter):
        ops.assign(param, value)
    else:  # a persistent buffer that is a plain Tensor
        param.copy_(value)


def _load_into_cell(net, state_dict, strict=True):
    """Cell.load_state_dict's checks and messages (torch's), writing each value in place."""
    torch_keys = {}
    sd = _mindspore_names(net, state_dict, torch_keys)
    own = net.state_dict()
    # torch's names for the keys the state dict lacks (a LayerNorm's `weight`, not `gamma`): the program compares
    # them with torch's (MAE's `assert set(msg.missing_keys) == {'head.weight', ..., 'fc_norm.weight', ...}`)
    missing = [torch_keys.get(k, k) for k in own if k not in sd]
    unexpected = [k for k in sd if k not in own]
    errors = []
    for key, param in own.items():
        if key not in sd:
            continue
        value = sd[key]
        if not isinstance(value, ms.Tensor):
            errors.append(f'While copying the parameter named "{key}", expected Tensor or Tensor-like object '
                          f'from checkpoint but received {type(value)}')
        elif tuple(value.shape) != tuple(param.shape):
            errors.append(f"size mismatch for {key}: copying a param with shape {tuple(value.shape)} from "
                          f"checkpoint, the shape in current model is {tuple(param.shape)}.")
        else:
            _write_in_place(param, value)
    if strict and unexpected:
        errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
    if strict and missing:
        errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
    if errors:
        raise RuntimeError(f"Error(s) in loading state_dict for {type(net).__name__}:\n\t" + "\n\t".join(errors))
    return IncompatibleKeys(missing, unexpected)


def _experimental_optimizer():
    from mindspore.experimental.optim import Optimizer
    return Optimizer


def _experimental_scheduler():
    from mindspore.experimental.optim.lr_scheduler import LRScheduler
    return LRScheduler


def _as_numpy(v):
    if isinstance(v, ms.Tensor):
        return v.astype(ms.float32).asnumpy() if v.dtype == ms.bfloat16 else v.asnumpy()
    return np.asarray(v)


def _torch_names(cell):
    """{local MindSpore parameter name: torch's name} for layers whose names differ."""
    if "moving_mean" in cell._params:  # BatchNorm
        return {"gamma": "weight", "beta": "bias", "moving_mean": "running_mean", "moving_variance": "running_var"}
    if isinstance(cell, (nn.LayerNorm, nn.GroupNorm)):
        return {"gamma": "weight", "beta": "bias"}
    if isinstance(cell, nn.Embedding):
        return {"embedding_table": "weight"}
    if isinstance(cell, nn.PReLU):
        return {"w": "weight"}
    return {}


def _mindspore_names(net, sd, torch_keys=None):
    """A copy of `sd` under `net`'s MindSpore names: torch's names renamed, torch's Conv1d weights
    reshaped, numpy arrays made mindspore.Tensor. torch_keys (a dict), when given, gets {MindSpore name: torch's
    name} for every parameter whose names differ."""
    own, aliases, dropped, frozen = net.state_dict(), {}, set(), {}

    def walk(cell, ms_prefix, torch_prefix):
        names = _torch_names(cell)
        conv1d = isinstance(cell, (nn.Conv1d, nn.Conv1dTranspose))
        for local, param in cell._params.items():
            torch_key = torch_prefix + names.get(local, local)
            if torch_key != ms_prefix + local or (conv1d and local == "weight"):
                aliases[torch_key] = (ms_prefix + local, conv1d and local == "weight")
            if local in names and param is not None and not param.requires_grad and (
                    local in ("gamma", "beta") and affine_off(cell)
                    or local in ("moving_mean", "moving_variance")
                    and getattr(cell, "use_batch_statistics", None) is True):
                # affine=False (frozen gamma/beta) or track_running_stats=False: torch saves nothing
                frozen[torch_key] = ms_prefix + local
        if "moving_mean" in cell._params:
            dropped.add(torch_prefix + "num_batches_tracked")
        for name, child in cell._cells.items():
            if child is not None:
                # torch keeps BatchNorm3d's parameters on itself, MindSpore on its bn2d child; a lazy layer's
                # built layer likewise (lazy_layers.py)
                bn3d = isinstance(cell, nn.BatchNorm3d) and name == "bn2d" or name == getattr(
                    cell, "torch_flat_child", None)
                walk(child, ms_prefix + name + ".", torch_prefix if bn3d else torch_prefix + name + ".")

    walk(net, "", "")
    if torch_keys is not None:
        torch_keys.update({target: key for key, (target, _) in aliases.items()})
    out = collections.OrderedDict()
    for key, value in sd.items():
        if isinstance(value, np.ndarray):
            value = ms.Tensor(value)
        if key in own and key not in aliases:
            out[key] = value
        elif key in aliases and (key in own or aliases[key][0] not in sd):
            target, conv1d = aliases[key]
            if conv1d and isinstance(value, ms.Tensor) and value.ndim == 3:
                value = ops.expand_dims(value, 2)  # torch (out, in, k) -> MindSpore (out, in, 1, k)
            out[target] = value
        elif key in dropped:
            continue  # BatchNorm's num_batches_tracked: MindSpore has no counterpart
        else:
            out[key] = value  # reported as unexpected
    torch_named = any(k in aliases and k not in own for k in sd)
    for torch_key, ms_key in frozen.items():
        if torch_named and ms_key not in out and torch_key not in sd:
            out[ms_key] = own[ms_key]  # keeps its value
    return out


# ------------------------------------------------------------ optimizers
# per-parameter state that means the same as torch's under another name
def _set_value(param, value, what):
    arr = _as_numpy(value)
    if tuple(arr.shape) != tuple(param.shape) and arr.size == int(np.prod(param.shape)):
        arr = arr.reshape(param.shape)  # torch's scalar step vs a (1,)-shaped one
    if tuple(arr.shape) != tuple(param.shape):
        raise ValueError(f"optimizer state {what}: shape {arr.shape} does not match {tuple(param.shape)}")
    _write_in_place(param, ms.Tensor(arr))


# the param-group keys torch's LR schedulers add (LRScheduler's initial_lr, OneCycleLR's, CyclicLR's)
_SCHEDULER_KEYS = ("initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum")


def _load_optimizer_state(opt, sd):
    groups, state = sd["param_groups"], sd["state"]
    if len(groups) != len(opt.param_groups):
        raise ValueError("loaded state dict has a different number of parameter groups")
    index = {}
    for g, saved in enumerate(groups):
        start, end = opt.group_start_id[g], opt.group_start_id[g + 1]
        if len(saved["params"]) != end - start:
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        index.update((pid, start + j) for j, pid in enumerate(saved["params"]))
    slots, step = _optimizer_slots(opt)
    steps = {}
    for pid, values in state.items():
        i = index.get(pid)
        if i is None:
            raise ValueError(f"optimizer state for parameter {pid!r}, which no parameter group lists")
        for name, value in values.items():
            if name == "step" and step is not None:
                _set_value(step, value, "step")
                steps[i] = float(_as_numpy(value).reshape(-1)[0])
            elif name in slots:
                if value is not None:  # torch's SGD keeps momentum_buffer=None before its first step
                    _set_value(slots[name][i], value, f"{name} of parameter {pid}")
            else:
                raise ValueError(f"optimizer state '{name}' has no counterpart in {type(opt).__name__}, "
                                 f"which keeps {', '.join(slots) or 'no state'}")
        if values.get("momentum_buffer") is not None and "stat" in slots and "stat" not in values:
            _set_value(slots["stat"][i], np.zeros(slots["stat"][i].shape), "stat")  # torch's buffer exists:
            # MindSpore's SGD then continues like torch instead of restarting the momentum
    per_param = [steps.get(i, 0.0) for i in range(len(opt.parameters))]
    differ = bool(steps) and len(set(per_param)) > 1   # torch counts steps per parameter: one was skipped
    if differ and not hasattr(opt, "param_steps"):
        raise MigrationError(f"load_state_dict: the parameters of this {type(opt).__name__} have taken different "
                             "numbers of steps, which MindSpore's optimizer counts once for all")
    if steps and hasattr(opt, "param_steps"):    # Adam: counted per parameter from here (unused_params)
        opt.param_steps = per_param if differ else None
    for g, (group, saved) in enumerate(zip(opt.param_groups, groups)):
        # torch's load_state_dict takes the saved groups whole: the keys a scheduler set (initial_lr...) come and
        # go with them (pytorch-lr-finder's reset() then finds no scheduler attached)
        for k in _SCHEDULER_KEYS:
            if k in saved and k not in group:
                group[k] = saved[k]
            elif k not in saved and k in group:
                del group[k]
        for k, v in saved.items():
            if k == "params" or k not in group:
                continue
            current = group[k]
            if isinstance(v, ms.Tensor) and v.size == 1:
                v = v.asnumpy().item()  # torch allows a tensor lr
            if isinstance(current, tuple) and isinstance(v, (tuple, list)):
                v = tuple(v)
            elif isinstance(current, (bool, int, float)) and isinstance(v, (bool, int, float)):
                v = type(current)(v)  # torch's dampening=0 is an int, MindSpore compiles a float
            if isinstance(current, Parameter) and type(group).__setitem__ is dict.__setitem__:
                _set_value(current, v, k)  # a plain dict group: keep its Parameter, write the value
            elif isinstance(current, ParameterTuple) or (isinstance(current, ms.Tensor)
                                                         and not isinstance(current, Parameter)):
                continue
            else:
                group[k] = v  # a group class of its own (see the optimizers section) decides
