"""torch's form of layer settings MindSpore keeps in another (msmigrate/layer_settings.py)."""
from mindspore import nn, ops


def conv1d_tuple(layer, name):
    """torch's kernel_size/stride/dilation of a layer whose class the converter did not know (encodec's
    `self.conv.conv.kernel_size[0]`): MindSpore's 1-d convolutions hold a 2-d one's (1, n) where torch has (n,);
    any other object's attribute as it is."""
    value = getattr(layer, name)
    if isinstance(layer, (nn.Conv1d, nn.Conv1dTranspose)):
        return value[1:]
    return value


def conv_setting(conv, name, dims):
    """A convolution's padding/output_padding as torch's tuple of `dims` ints, from MindSpore's padding: an int or
    per side (top, bottom, left, right) ((0, 0, p, p) for a 1-d convolution). A transposed convolution's
    output_padding is converted as less padding at the end of each dim (padding=(1, 0, 1, 0) for torch's
    padding=1, output_padding=1)."""
    v, extra = conv.padding, getattr(conv, "output_padding", 0)
    if name == "padding" and conv.pad_mode in ("same", "SAME"):
        return "same"
    if isinstance(v, int):
        return (v,) * dims if name == "padding" else (extra,) * dims
    sides = tuple(v)[-2 * dims:]
    if name == "padding":
        return sides[::2]
    return tuple(sides[i] - sides[i + 1] + extra for i in range(0, 2 * dims, 2))


def conv_size(v):
    """A convolution's kernel_size/stride/dilation as MindSpore's layers take it: torch's list as a tuple, and one
    value in a list or tuple (EfficientNet's `stride=[2]`, which torch's convolutions apply to every dimension) as
    that value (MindSpore's layers take an int or one value per dimension)."""
    if isinstance(v, (list, tuple)) and len(v) == 1:
        return v[0]
    return tuple(v) if isinstance(v, list) else v


def torch_momentum(v):
    """BatchNorm momentum as torch holds it: MindSpore's 1 - (1 - m) rounded back (0.30000000000000004 -> 0.3)."""
    return None if v is None else float(f"{v:.15g}")


def batches_tracked(bn, where):
    """torch's `bn.num_batches_tracked`, the count of training batches: the cumulative BatchNorm (momentum=None,
    cumulative_batch_norm.py) keeps it; MindSpore's own keeps no such count, so reading it stops naming the line."""
    if hasattr(bn, "num_batches_tracked"):
        return bn.num_batches_tracked
    return _raise_migration_error(f"BatchNorm.num_batches_tracked at {where}: MindSpore's BatchNorm keeps no count "
                                  "of the training batches (torch's num_batches_tracked); count the train steps "
                                  "in the program instead")


_MOMENTUM_IN_GRAPH = (
    "`{}.momentum = ...` at {} inside a compiled graph (GRAPH mode construct, ms.jit, the converted train step): "
    "MindSpore's BatchNorm trains with a primitive built with its momentum, which a graph cannot build again; "
    "set it outside the network's construct, or run in PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE))")


def set_momentum(bn, v, where="?"):
    """`bn.momentum = v`: MindSpore's BatchNorm trains with a primitive built with the momentum at construction
    (setting the attribute alone changed nothing); built again. BatchNorm3d keeps it on its inner bn2d. Compiling
    a graph that reaches it stops with MigrationError naming `where` (a raise of MigrationError there stopped
    compiling as "Unsupported exception type", even for a momentum that is no refusal)."""
    if _compiling(_draw_probe):
        _refuse_compiled(_MOMENTUM_IN_GRAPH, "BatchNorm", where)
    _momentum_rebuilt(bn, v)


def set_momentum_if_norm(obj, v, where="?"):
    """`m.momentum = v` where the converter could not tell m's type: a BatchNorm's as set_momentum sets it, anything
    else's attribute as written."""
    if isinstance(obj, (nn.layer.normalization._BatchNorm, nn.BatchNorm3d)):
        set_momentum(obj, v, where)
    else:
        setattr(obj, "momentum", v)


_EPS_IN_GRAPH = (
    "`{}.eps = ...` at {} inside a compiled graph (GRAPH mode construct, ms.jit, the converted train step): "
    "MindSpore's BatchNorm and LayerNorm run primitives built with their eps, which a graph cannot build again; set "
    "it outside the network's construct, or run in PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE))")
_EPS_BUILT_IN = (nn.layer.normalization._BatchNorm, nn.BatchNorm3d, nn.LayerNorm)


def set_eps(layer, v, where="?"):
    """`layer.eps = v` on a BatchNorm or LayerNorm (YOLOv5's and EfficientNet's BatchNorm set-up): MindSpore's
    layers run primitives built with eps (LayerNorm's `epsilon`) at construction, so setting the attribute alone
    changed nothing (measured: a BatchNorm's eps=1e-3 set after construction, its inference 6e-4 relative off
    torch's on a variance near 0.8); built again. Compiling a graph that reaches it stops with MigrationError
    naming `where`."""
    if _compiling(_draw_probe):
        _refuse_compiled(_EPS_IN_GRAPH, "BatchNorm/LayerNorm", where)
    _eps_rebuilt(layer, v)


def _eps_rebuilt(layer, v):
    if isinstance(layer, nn.LayerNorm):
        layer.epsilon = v
        if hasattr(layer, "layer_norm"):
            layer.__dict__.setdefault("_ms_replaced_primitives", []).append(layer.layer_norm)
            layer.layer_norm = ops.LayerNorm(begin_norm_axis=layer.begin_norm_axis,
                                             begin_params_axis=layer.begin_params_axis, epsilon=v)
        return
    inner = getattr(layer, "bn2d", layer)
    for norm in {id(layer): layer, id(inner): inner}.values():
        norm.eps = v
    # the ones replaced stay alive, as _momentum_rebuilt's
    inner.__dict__.setdefault("_ms_replaced_primitives", []).extend((inner.bn_train, inner.bn_infer))
    inner.bn_train = ops.BatchNorm(is_training=True, epsilon=v, momentum=inner.bn_train.momentum,
                                   data_format=inner.format)
    inner.bn_infer = ops.BatchNorm(is_training=False, epsilon=v, data_format=inner.format)


def set_eps_if_norm(obj, v, where="?"):
    """`m.eps = v` where the converter could not tell m's type: a BatchNorm's or LayerNorm's as set_eps sets it,
    anything else's attribute as written (a GroupNorm's eps, which it reads at each call)."""
    if isinstance(obj, _EPS_BUILT_IN):
        set_eps(obj, v, where)
    else:
        setattr(obj, "eps", v)


_DROPOUT_IN_GRAPH = (
    "`{}.p = ...` at {} inside a compiled graph (GRAPH mode construct, ms.jit, the converted train step): "
    "MindSpore's Dropout draws with a primitive built with its keep rate, which a graph cannot build again; set "
    "it outside the network's construct, or run in PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE))")


def set_dropout_p(layer, v, where="?"):
    """`drop.p = v` on a Dropout: MindSpore's nn.Dropout reads p at each call only to skip p=0, and otherwise draws
    with a primitive built with its keep rate at construction (measured: p set from 0.5 to 0.125, half the elements
    still dropped); built again. Compiling a graph that reaches it stops with MigrationError naming `where`."""
    if _compiling(_draw_probe):
        _refuse_compiled(_DROPOUT_IN_GRAPH, "Dropout", where)
    _dropout_rebuilt(layer, v, where)


def _dropout_rebuilt(layer, v, where):
    if not isinstance(layer, nn.Dropout) or not hasattr(layer, "dropout"):
        layer.p = v
        return
    if not 0 <= v < 1:
        return _raise_migration_error(f"`{type(layer).__name__}.p = {v}` at {where}: MindSpore's Dropout takes a "
                                      "drop probability in [0, 1) (torch's also 1, every element dropped)")
    layer.__dict__.setdefault("_ms_replaced_primitives", []).append(layer.dropout)
    layer.p, layer.keep_prob = v, 1.0 - v
    if v:
        layer.dropout = ops.Dropout(1.0 - v, layer.dropout.attrs["Seed0"], layer.dropout.attrs["Seed1"])


def _momentum_rebuilt(bn, v):
    if v is None:
        raise MigrationError("BatchNorm momentum = None (a cumulative average) set after construction: "
                             "give momentum=None when building the layer")
    inner = getattr(bn, "bn2d", bn)
    for layer in {id(bn): bn, id(inner): inner}.values():
        layer.momentum = v
    # the one replaced stays alive: a graph compiled with it is chosen by its id (graph_constants.py), which a new
    # primitive must not take over
    inner.__dict__.setdefault("_ms_replaced_primitives", []).append(inner.bn_train)
    inner.bn_train = ops.BatchNorm(is_training=True, epsilon=inner.eps, momentum=v, data_format=inner.format)


class _TorchBuffers:
    """torch's `module._buffers` (thop pops the counters it registered): the buffers register_buffer made
    Parameters (persistent) and the Cell's own non-persistent ones, by name; `pop`/`del` removes the buffer from
    the cell. A listing (iteration, len, keys) on a cell holding other Parameters that do not train (BatchNorm's
    running statistics, which torch keeps as buffers) raises MigrationError: it would miss them."""

    def __init__(self, cell):
        self.cell = cell

    def _tagged(self):
        return self.cell.__dict__.setdefault("_torch_buffer_names", set())

    def __getitem__(self, name):
        if name in self._tagged() and self.cell._params.get(name) is not None:
            return self.cell._params[name]
        return self.cell._buffers[name]

    def __contains__(self, name):
        try:
            self[name]
        except KeyError:
            return False
        return True

    def get(self, name, default=None):
        return self[name] if name in self else default

    def __setitem__(self, name, value):
        register_buffer(self.cell, name, value)

    def __delitem__(self, name):
        if name in self._tagged() and self.cell._params.get(name) is not None:
            delattr(self.cell, name)
            self._tagged().discard(name)
        else:
            del self.cell._buffers[name]

    def pop(self, name, *default):
        if name not in self:
            if default:
                return default[0]
            raise KeyError(name)
        value = self[name]
        del self[name]
        return value

    def keys(self):
        tagged = self._tagged()
        if any(p is not None and not p.requires_grad and n not in tagged for n, p in self.cell._params.items()):
            raise MigrationError(f"{calling_line() or '?'}: `._buffers` listed on {type(self.cell).__name__}, whose "
                                 "non-trained Parameters (running statistics) torch keeps as buffers: read "
                                 "_ms_compat.named_buffers(module, recurse=False) instead")
        return [n for n, p in self.cell._params.items() if n in tagged and p is not None] + list(self.cell._buffers)

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self.keys())

    def items(self):
        return [(n, self[n]) for n in self.keys()]

    def values(self):
        return [self[n] for n in self.keys()]


def module_buffers(cell):
    """torch's `module._buffers` (_TorchBuffers); any other object's own attribute."""
    return _TorchBuffers(cell) if isinstance(cell, nn.Cell) else cell._buffers


def del_parameter(module, name, where):
    """`del module._parameters[name]`: as written on a Cell of the program's own (its construct reads its
    attributes); on one of MindSpore's layers (a converted nn.LSTM) MigrationError naming the line: such a layer
    computes with the parameter objects it built, so removing one from its parameters (and setting a tensor under
    its name each call: awd-lstm-lm's WeightDrop) would leave it computing with the removed weight, untrained."""
    own = {nn.Cell} | set(nn.Cell.__mro__)
    layer = next((c for c in type(module).__mro__ if c not in own and c.__module__.startswith("mindspore.")), None)
    if layer is not None:
        _raise_migration_error(f"{where}: del {type(module).__name__}._parameters[{name!r}]: MindSpore's "
                               f"{layer.__name__} computes with the parameter objects it built; removing one (and "
                               f"setting a tensor under its name, as a weight-dropping wrapper does) would leave it "
                               f"computing with the removed weight, untrained")
    del module._params[name]
