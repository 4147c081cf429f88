# Containers and model inspection with torch's answers.
#
# torch code walks its model by name: weight-decay groups built from named_modules()/
# named_parameters() and isinstance(m, nn.Linear), parameter counts, checkpoint keys. MindSpore
# names some parameters differently (LayerNorm gamma/beta, Embedding embedding_table), keeps
# BatchNorm's running statistics as Parameters, and builds nn.Linear as nn.Dense. The helpers
# below give torch's names, torch's parameter sets and torch's isinstance answers, so such code
# keeps its meaning; the Parameters they yield are the cell's own (optimizers and gradients see
# the same objects).
import sys


# ------------------------------------------------------------ parameter containers
def _refuse_while_compiling(container):
    """GRAPH mode (or mindspore.jit) runs a Cell's __getitem__/__iter__ in Python while it compiles and
    takes the Parameters they return as constants: the values are right, the gradients are zero. The
    converter reads these containers through `.params` inside a Module's methods; any other path
    (a local alias: `pl = self.plist; pl[0]`) stops here instead of losing gradients silently."""
    frame = sys._getframe(2)
    while frame is not None:
        if "mindspore" in frame.f_code.co_filename and "_parse" in frame.f_code.co_filename:
            raise MigrationError(f"{type(container).__name__} indexed or iterated while MindSpore compiles a "
                                 f"graph: its Parameters would be constants there (no gradient); read "
                                 f"<container>.params[i] / iterate <container>.params instead")
        frame = frame.f_back


class ParameterList(nn.Cell):
    """torch's nn.ParameterList: Parameters registered as "0", "1", ... (checkpoint names
    `plist.0`, as torch's). Inside construct, converted code indexes and iterates `.params`, a
    ParameterTuple that GRAPH mode differentiates (a Cell's __getitem__ runs while the graph
    compiles and would hand the Parameters over as constants)."""
    torch_container = True

    def __init__(self, values=None):
        super().__init__()
        object.__setattr__(self, "_size", 0)
        object.__setattr__(self, "params", ms.ParameterTuple(()))
        if values is not None:
            self.extend(values)

    def _index(self, idx):
        if not isinstance(idx, int):
            raise TypeError(f"ParameterList indices must be integers, not {type(idx).__name__}")
        if idx < 0:
            idx += self._size
        if not 0 <= idx < self._size:
            raise IndexError(f"index {idx} is out of range")
        return idx

    def _sync(self):
        object.__setattr__(self, "params", ms.ParameterTuple(
            [self._params[str(i)] for i in range(self._size)]))

    def __getitem__(self, idx):
        _refuse_while_compiling(self)
        if isinstance(idx, slice):
            return ParameterList(list(self.params)[idx])
        return self.params[self._index(idx)]

    def __setitem__(self, idx, value):
        key = str(self._index(idx))
        old = self._params[key]
        setattr(self, key, value if isinstance(value, ms.Parameter) else ms.Parameter(value))
        self._params[key].name = old.name
        self._sync()

    def __len__(self):
        return self._size

    def __iter__(self):
        _refuse_while_compiling(self)
        return iter(self.params)

    def append(self, value):
        key = str(self._size)
        param = value if isinstance(value, ms.Parameter) else ms.Parameter(value)
        setattr(self, key, param)
        if self._size:
            # appended after the list got its place in a network: the same prefix as its elements
            first = self._params["0"].name
            param.name = first[:len(first) - 1] + key
        else:
            param.name = key
        object.__setattr__(self, "_size", self._size + 1)
        self._sync()
        return self

    def extend(self, values):
        for value in values:
            self.append(value)
        return self


class ParameterDict(nn.Cell):
    """torch's nn.ParameterDict: Parameters registered under their keys (checkpoint names
    `pdict.key`, as torch's), in insertion order. Inside a Module's methods, converted code reads
    `pdict.params[pdict.index(key)]` and `.params` (see ParameterList)."""
    torch_container = True

    def __init__(self, parameters=None):
        super().__init__()
        object.__setattr__(self, "_keys", [])
        object.__setattr__(self, "params", ms.ParameterTuple(()))
        if parameters is not None:
            self.update(parameters)

    def _sync(self):
        object.__setattr__(self, "params", ms.ParameterTuple([self._params[k] for k in self._keys]))

    def __getitem__(self, key):
        _refuse_while_compiling(self)
        if key not in self._keys:
            raise KeyError(key)
        return self._params[key]

    def __setitem__(self, key, value):
        param = value if isinstance(value, ms.Parameter) else ms.Parameter(value)
        if key in self._keys:
            old = self._params[key].name
            setattr(self, key, param)
            param.name = old
        else:
            setattr(self, key, param)
            if self._keys:
                first_key = self._keys[0]
                first = self._params[first_key].name
                param.name = first[:len(first) - len(first_key)] + key
            else:
                param.name = key
            self._keys.append(key)
        self._sync()

    def __delitem__(self, key):
        self.pop(key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(list(self._keys))

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        return list(self._keys)

    def index(self, key):
        """Position of a key in .params (converted code reads pdict[key] as pdict.params[pdict.index(key)])."""
        return self._keys.index(key)

    def values(self):
        _refuse_while_compiling(self)
        return list(self.params)

    def items(self):
        _refuse_while_compiling(self)
        return list(zip(self._keys, self.params))

    def get(self, key, default=None):
        _refuse_while_compiling(self)
        return self._params[key] if key in self._keys else default

    def pop(self, key):
        param = self._params[key]
        del self._params[key]
        self._keys.remove(key)
        self._sync()
        return param

    def update(self, parameters):
        pairs = parameters.items() if hasattr(parameters, "items") else parameters
        for key, value in pairs:
            self[key] = value


# ------------------------------------------------------------ torch's names for a cell's parameters
# (this module's own containers have a `torch_container` class attribute)
_CONTAINERS = (nn.CellList, nn.SequentialCell, nn.CellDict)
# MindSpore layers' parameter names that torch spells differently; None: a buffer in torch
_TORCH_PARAM_NAME = {"gamma": "weight", "beta": "bias", "embedding_table": "weight",
                     "moving_mean": None, "moving_variance": None}


def _builtin(cls):
    module = cls.__module__ or ""
    return (module.startswith("mindspore.") or module == __name__) and cls not in nn.Cell.__mro__ \
        and not issubclass(cls, _CONTAINERS) and not getattr(cls, "torch_container", False)


def _is_layer(cell):
    """A built-in layer (MindSpore's or an adapter of this module) or a project subclass of one:
    its MindSpore parameter names are spelled the torch way."""
    return any(_builtin(c) for c in type(cell).__mro__)


def _hidden_children(cell):
    """Inner cells of a built-in layer that torch's layer does not have: MindSpore's BatchNorm3d
    runs a BatchNorm2d (bn2d), its RNNs an inner rnn and dropout_op, adapters an inner op."""
    if not _builtin(type(cell)):
        return set()
    own = {id(p) for p in cell._params.values() if p is not None}
    hidden = set()
    for name, child in cell._cells.items():
        if child is None:
            continue
        params = [p for p in child.get_parameters()]
        if name == "bn2d" or all(id(p) in own for p in params):
            hidden.add(name)
    return hidden


def _is_buffer(cell, name, param):
    """A persistent buffer held as a Parameter (register_buffer, nn.Buffer); the cell's own record survives
    copy.deepcopy, which drops the Parameter's mark."""
    return getattr(param, "torch_buffer", False) or name in cell.__dict__.get("_torch_buffer_names", ())


def affine_off(cell):
    """torch's affine=False (the layer has no weight/bias): the layer's own record of it (GroupNorm's affine;
    torch_affine, set by the converter's norm layers). gamma/beta frozen later (a fine-tuned backbone, a momentum
    target network) are still torch's parameters."""
    return getattr(cell, "torch_affine", getattr(cell, "affine", True)) is False


def _own_params(cell):
    """(torch name, Parameter) of the parameters torch's module would hold itself; buffers left out."""
    pairs = [(n, p) for n, p in cell._params.items() if p is not None and not _is_buffer(cell, n, p)]
    for name in _hidden_children(cell):
        pairs += [(n, p) for n, p in cell._cells[name].parameters_and_names()]
    if not _is_layer(cell):
        return pairs
    frozen_affine = affine_off(cell)
    out = []
    for name, param in pairs:
        last = name.rpartition(".")[2]   # bn2d.gamma belongs to the BatchNorm3d itself in torch
        if isinstance(cell, nn.PReLU) and last == "w":
            last = "weight"
        elif last in _TORCH_PARAM_NAME:
            if _TORCH_PARAM_NAME[last] is None or (frozen_affine and last in ("gamma", "beta")):
                continue
            last = _TORCH_PARAM_NAME[last]
        out.append((last, param))
    return _rnn_order(out)


# torch's RNN parameters, layer by layer and direction by direction: weight_ih, weight_hh, bias_ih, bias_hh,
# weight_hr; MindSpore's RNNs hold every layer's weight_ih first (code zipping or enumerating parameters saw
# another order)
_RNN_KINDS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")


def _rnn_key(name):
    """(layer, reverse, kind) of torch's RNN parameter name (weight_hh_l1_reverse), None for other names."""
    kind, _, rest = name.rpartition("_l")
    layer, _, tail = rest.partition("_")
    if kind in _RNN_KINDS and layer.isdigit() and tail in ("", "reverse"):
        return int(layer), tail == "reverse", _RNN_KINDS.index(kind)
    return None


def _rnn_order(pairs):
    at = [i for i, (n, _) in enumerate(pairs) if _rnn_key(n) is not None]
    ordered = sorted((pairs[i] for i in at), key=lambda pair: _rnn_key(pair[0]))
    out = list(pairs)
    for i, pair in zip(at, ordered):
        out[i] = pair
    return out


def _optimizer_cell(cell):
    """A MindSpore optimizer (a Cell) kept in a module's attribute (`self.optimizer = optim.Adam(...)` in
    __init__): torch's optimizer is no submodule, its state no parameter of the module."""
    return any(c.__name__ == "Optimizer" and c.__module__.startswith("mindspore") for c in type(cell).__mro__)


def _torch_child(name, child, hidden):
    return child is not None and name not in hidden and not getattr(child, "torch_function", False) \
        and not _optimizer_cell(child)


def _tree(cell, prefix=""):
    """(path, cell) in torch's named_modules order."""
    yield prefix, cell
    hidden = _hidden_children(cell)
    for name, child in cell._cells.items():
        if _torch_child(name, child, hidden):
            yield from _tree(child, f"{prefix}.{name}" if prefix else name)


def named_children(cell):
    """torch's Module.named_children(): the direct sub-modules torch's module has."""
    if _compiling(_draw_probe):
        # a construct looping over its children (a DenseBlock's layers): GRAPH mode compiles a comprehension over
        # the cell's own dict, not the walk below (its set comprehension is refused). A project Cell's children
        # are torch's but for the cells standing for torch functions and a kept optimizer
        return [(name, child) for name, child in cell._cells.items()
                if child is not None and not getattr(child, "torch_function", False)
                and not isinstance(child, nn.Optimizer)]
    hidden = _hidden_children(cell)
    return iter([(name, child) for name, child in cell._cells.items() if _torch_child(name, child, hidden)])


def children(cell):
    """torch's Module.children()."""
    if _compiling(_draw_probe):
        return [child for _, child in named_children(cell)]
    return iter([child for _, child in named_children(cell)])


def set_child(cell, name, value):
    """torch's `module._modules[name] = value`: the child named `name` swapped (a layer replaced by another, by
    name, walking the model). On a Cell it goes into `_cells`, and a SequentialCell's `cell_list` (the list its
    construct runs, kept beside `_cells`) is rebuilt from it: a store into `_cells` alone would leave the old layer
    running there. Any other object: its own `_modules`."""
    cells = getattr(cell, "_cells", None) if isinstance(cell, nn.Cell) else None
    if cells is None:
        cell._modules[name] = value
        return
    cells[name] = value
    if isinstance(cell, nn.SequentialCell):
        cell.cell_list = list(cells.values())


def forward_of(obj):
    """torch's `layer.forward` where the converter cannot tell the receiver's type: an nn.Cell's construct
    (MindSpore's Cells have no forward; like torch's forward, construct runs no hooks), any other object's (or a
    Cell's own) forward. A Cell class's too, unbound (YOLOv5's Segment: `self.detect = Detect.forward`, called
    as `self.detect(self, x)`)."""
    is_cell = isinstance(obj, nn.Cell) or (isinstance(obj, type) and issubclass(obj, nn.Cell))
    if is_cell and not hasattr(obj, "forward"):
        return obj.construct
    return obj.forward


def named_modules(cell, memo=None, prefix="", remove_duplicate=True):
    """torch's Module.named_modules(): every module once (shared ones at their first path)."""
    seen = set() if memo is None else memo
    out = []
    for path, sub in _tree(cell, prefix):
        if remove_duplicate:
            if sub in seen:
                continue
            seen.add(sub)
        out.append((path, sub))
    return iter(out)   # a generator in torch: next(model.named_modules()) works


def modules(cell):
    """torch's Module.modules()."""
    return iter([sub for _, sub in named_modules(cell)])


def named_parameters(cell, prefix="", recurse=True, remove_duplicate=True):
    """torch's Module.named_parameters(): torch's names (LayerNorm weight/bias, Embedding weight),
    without buffers (BatchNorm's running statistics, register_buffer)."""
    return _named_tensors(cell, _own_params, prefix, recurse, remove_duplicate)


def _named_tensors(cell, own, prefix, recurse, remove_duplicate):
    """(dotted torch name, tensor) of `own(sub)` for cell and, with recurse, every submodule, each tensor once
    where remove_duplicate (named_parameters, named_buffers)."""
    seen, out = set(), []
    for path, sub in (named_modules(cell, prefix=prefix) if recurse else [(prefix, cell)]):
        for name, t in own(sub):
            if remove_duplicate:
                if id(t) in seen:
                    continue
                seen.add(id(t))
            out.append((f"{path}.{name}" if path else name, t))
    return iter(out)


def parameters(cell, recurse=True):
    """torch's Module.parameters(): the Parameters torch would have (no buffers)."""
    return iter([p for _, p in named_parameters(cell, recurse=recurse)])


_TORCH_BUFFER_NAME = {"moving_mean": "running_mean", "moving_variance": "running_var"}


def _own_buffers(cell):
    """(torch name, tensor) of the buffers torch's module would hold itself: register_buffer's (persistent ones are
    Parameters here, non-persistent ones Cell buffers) and a norm layer's running statistics (MindSpore's BatchNorm
    keeps no num_batches_tracked: not listed)."""
    pairs = [(n, p) for n, p in cell._params.items() if p is not None and _is_buffer(cell, n, p)]
    pairs += [(n, b) for n, b in getattr(cell, "_buffers", {}).items() if b is not None]
    if _is_layer(cell):
        stats = list(cell._params.items())
        for name in _hidden_children(cell):
            stats += list(cell._cells[name].parameters_and_names())
        pairs += [(_TORCH_BUFFER_NAME[n.rpartition(".")[2]], p) for n, p in stats
                  if p is not None and n.rpartition(".")[2] in _TORCH_BUFFER_NAME]
    return pairs


def named_buffers(cell, prefix="", recurse=True, remove_duplicate=True):
    """torch's Module.named_buffers(): register_buffer's tensors and norm layers' running statistics."""
    return _named_tensors(cell, _own_buffers, prefix, recurse, remove_duplicate)


def buffers(cell, recurse=True):
    """torch's Module.buffers()."""
    return iter([b for _, b in named_buffers(cell, recurse=recurse)])


def _module_lookup(found, kind, cell, target):
    if target not in found:
        raise AttributeError(f"{type(cell).__name__} has no {kind} `{target}`")
    return found[target]


def get_parameter(cell, target):
    """torch's Module.get_parameter("sub.weight"), by torch's parameter names."""
    return _module_lookup(dict(named_parameters(cell, remove_duplicate=False)), "parameter", cell, target)


def get_buffer(cell, target):
    """torch's Module.get_buffer("sub.running_mean")."""
    return _module_lookup(dict(named_buffers(cell, remove_duplicate=False)), "buffer", cell, target)


def get_submodule(cell, target=""):
    """torch's Module.get_submodule("sub.layer"); "" is the module itself."""
    return _module_lookup(dict(named_modules(cell, remove_duplicate=False)), "submodule", cell, target)


def module_requires_grad_(cell, requires_grad=True):
    """torch's Module.requires_grad_(flag): the flag of each of torch's parameters (buffers, which
    register_buffer keeps as Parameters, stay as they are); returns the module."""
    for p in parameters(cell):
        p.requires_grad = requires_grad
    return cell


# ------------------------------------------------------------ isinstance against torch's classes
class TorchClass(type):
    """Metaclass of a torch class held as a value (nn.BatchNorm2d): isinstance/issubclass answer for MindSpore's too."""

    def __instancecheck__(cls, obj):
        return type.__instancecheck__(cls, obj) or isinstance(obj, cls.ms_class)

    def __subclasscheck__(cls, sub):
        return type.__subclasscheck__(cls, sub) or issubclass(sub, cls.ms_class)

    def __eq__(cls, other):   # `type(m) == nn.Conv2d`: m's class is the MindSpore one, or its any_batch form
        return (other is cls or other is cls.ms_class or getattr(other, "_view_of", None) is cls.ms_class
                or getattr(other, "__qualname__", None) == "any_batch." + cls.ms_class.__name__)

    def __hash__(cls):
        return hash(cls.ms_class)


def _layer_class(cls):
    """The class torch's code names for a cell's class: an apply() view's real class, and MindSpore's own layer
    for the helper's any_batch form (its subclass that also takes an unbatched sample)."""
    if isinstance(cls, type):
        cls = cls.__dict__.get("_view_of", cls)
        if cls.__qualname__.startswith("any_batch."):
            return cls.__mro__[1]
        # a helper standing for a torch class whose direct calls build MindSpore's (Sequential: SequentialCell)
        return cls.__dict__.get("_stands_for", cls)
    return cls


class ClassKeyed(dict):
    """A dict display keyed by torch classes, looked up by a cell's exact class (thop's
    `register_hooks[type(m)]`): a cell built as the helper's any_batch form, or seen through an
    apply() view, finds the entry of the class torch's code names. Plain dict hashing would miss it."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        self.update(*args, **kwargs)

    def update(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __getitem__(self, key):
        return dict.__getitem__(self, _layer_class(key))

    def __setitem__(self, key, value):
        dict.__setitem__(self, _layer_class(key), value)

    def __contains__(self, key):
        return dict.__contains__(self, _layer_class(key))

    def get(self, key, default=None):
        return dict.get(self, _layer_class(key), default)

    def pop(self, key, *default):
        return dict.pop(self, _layer_class(key), *default)

    def setdefault(self, key, default=None):
        return dict.setdefault(self, _layer_class(key), default)


class ClassSet(set):
    """A set display of torch classes tested with a cell's exact class (`type(m) in {nn.Conv2d, nn.Linear}`)."""

    def __init__(self, items=()):
        super().__init__(_layer_class(k) for k in items)

    def add(self, key):
        set.add(self, _layer_class(key))

    def __contains__(self, key):
        return set.__contains__(self, _layer_class(key))


def _torch_reset(self):
    """torch's reset_parameters() of the adapters' layers (timm's ScaledStdConv2d calls super()'s): Linear/ConvNd draw
    weight and bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (kaiming_uniform_ with a=sqrt(5)); norms set weight 1 and
    bias 0, BatchNorm's running statistics 0 and 1."""
    norm = hasattr(self, "gamma")
    bound = 0 if norm else 1 / math.sqrt(max(1, int(np.prod(self.weight.shape[1:]))))
    for name, value in ((("gamma", 1), ("beta", 0), ("moving_mean", 0), ("moving_variance", 1)) if norm
                        else (("weight", None), ("bias", None))):
        p = getattr(self, name, None)
        if isinstance(p, ms.Parameter):
            p.set_data(ms.ops.full(p.shape, value, dtype=p.dtype) if norm else ms.ops.uniform(
                p.shape, ms.Tensor(-bound, p.dtype), ms.Tensor(bound, p.dtype)).astype(p.dtype))


def _torch_embedding_reset(self):
    """torch's Embedding.reset_parameters(): the table drawn from N(0, 1), the padding row zero."""
    table = self.embedding_table    # drawn through an initializer, as the converted nn.init.normal_ of a Parameter
    table.set_data(init.initializer(init.Normal(1.0), table.shape, table.dtype).init_data())
    if self.padding_idx is not None:
        value = table.value()
        value[self.padding_idx] = 0
        table.set_data(value)


_CONV_FORWARD_ONLY = "Conv2d._conv_forward(input, weight, bias) is converted for padding_mode 'zeros' only"


def _torch_conv_forward(self, input, weight, bias):
    """torch's Conv2d._conv_forward(input, weight, bias) (loralib's ConvLoRA: the layer's convolution with its weight
    plus a low-rank update): the layer's convolution, the given weight and bias (zero padding only)."""
    if self.mode_pads is not None:
        _raise_migration_error(_CONV_FORWARD_ONLY)
    y = self.conv2d(input, weight)
    return y if bias is None else self.bias_add(y, bias)


def _starting_to_train(init):   # torch's layers start in training mode wherever built (byol's MaybeSyncBatchnorm)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.set_train(True)
    return __init__


def _torch_class(adapter, ms_class):
    ns = {"ms_class": ms_class, "__module__": adapter.__module__, "__qualname__": adapter.__qualname__,
          "__doc__": adapter.__doc__}
    if ms_class in (nn.Dense, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
                    nn.GroupNorm, nn.LayerNorm, nn.Embedding):
        reset = _torch_embedding_reset if ms_class is nn.Embedding else _torch_reset

        def __init__(self, *args, **kwargs):
            adapter.__init__(self, *args, **kwargs)
            if type(self).reset_parameters is not reset:
                self.reset_parameters()   # a subclass's own, which torch's layer __init__ calls at its end
        ns.update(reset_parameters=reset, __init__=__init__)
    if ms_class in (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.Dropout):   # torch's start: training mode
        ns["__init__"] = _starting_to_train(ns.get("__init__", adapter.__init__))
    if ms_class is nn.Conv2d:       # torch's private convolution with a given weight (Conv1d/3d: not converted)
        ns["_conv_forward"] = _torch_conv_forward
    if ms_class is nn.Embedding:    # torch's names, read in a subclass or from outside it (loralib's layers)
        # (scale_grad_by_freq=True is refused when built; sparse gradients change no value)
        ns.update(weight=property(lambda self: self.embedding_table), scale_grad_by_freq=False, sparse=False)

        def __setattr__(self, name, value):     # `emb.weight = other.weight` ties the table (transformers' tie_weights)
            nn.Cell.__setattr__(self, "embedding_table" if name == "weight" else name, value)
        ns["__setattr__"] = __setattr__
    return TorchClass(adapter.__name__, (adapter,), ns)


# torch class -> what converted code builds for a direct call of it (mappings/layers.py); not Sequential
# (add_module tells subclasses of torch's Sequential from plain SequentialCells by class) nor the
# InstanceNorms (converted code builds the helper's own, subclasses of MindSpore's InstanceNorm*d)
Linear = _torch_class(Linear, nn.Dense)
Conv2d = _torch_class(Conv2d, nn.Conv2d)
Conv1d = _torch_class(Conv1d, nn.Conv1d)
Conv3d = _torch_class(Conv3d, nn.Conv3d)
MaxPool1d = _torch_class(MaxPool1d, nn.MaxPool1d)
MaxPool2d = _torch_class(MaxPool2d, nn.MaxPool2d)
MaxPool3d = _torch_class(MaxPool3d, nn.MaxPool3d)
AvgPool1d = _torch_class(AvgPool1d, nn.AvgPool1d)
AvgPool2d = _torch_class(AvgPool2d, nn.AvgPool2d)
AvgPool3d = _torch_class(AvgPool3d, nn.AvgPool3d)
BatchNorm1d = _torch_class(BatchNorm1d, nn.BatchNorm1d)
BatchNorm2d = _torch_class(BatchNorm2d, nn.BatchNorm2d)
BatchNorm3d = _torch_class(BatchNorm3d, nn.BatchNorm3d)
GroupNorm = _torch_class(GroupNorm, nn.GroupNorm)
Dropout = _torch_class(Dropout, nn.Dropout)
GELU = _torch_class(GELU, nn.GELU)
LeakyReLU = _torch_class(LeakyReLU, nn.LeakyReLU)
ReLU = _torch_class(ReLU, nn.ReLU)
ReLU6 = _torch_class(ReLU6, ReLU6)   # converted code builds the helper's (a float64 input clamped)
SiLU = _torch_class(SiLU, nn.SiLU)
Sigmoid = _torch_class(Sigmoid, nn.Sigmoid)
Tanh = _torch_class(Tanh, Tanh)   # converted code builds the helper's (torch's float32 values on CPU)
Embedding = _torch_class(Embedding, nn.Embedding)
LayerNorm = _torch_class(LayerNorm, nn.LayerNorm)
ELU = _torch_class(ELU, nn.ELU)
Mish = _torch_class(Mish, Mish)   # converted code builds the helper's (a float64 input in float64)
Upsample = _torch_class(Upsample, nn.Upsample)
Hardswish = _torch_class(Hardswish, nn.HSwish)
Hardsigmoid = _torch_class(Hardsigmoid, nn.HSigmoid)
LSTM = _torch_class(LSTM, nn.LSTM)
GRU = _torch_class(GRU, nn.GRU)
RNN = _torch_class(RNN, nn.RNN)
