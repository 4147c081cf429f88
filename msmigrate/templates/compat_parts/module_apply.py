"""torch's Module.apply(fn): fn gets each module as torch's code sees it. Init functions test the
class name (`classname.find("Linear")`, `type(m) == nn.Conv2d`, `isinstance(m, nn.Linear)`) and
write `m.weight` / `m.bias`; MindSpore's Dense is named "Dense" and BatchNorm/LayerNorm/Embedding
keep gamma/beta/embedding_table. While fn runs, each cell is given a view class: a subclass of its
own class, named with torch's class name, whose torch attribute names reach the MindSpore
parameters (reads and writes), so the init really changes the model's parameters."""

# MindSpore class name -> torch's class name (the others are spelled the same)
_TORCH_CLASS_NAME = {"Dense": "Linear", "SequentialCell": "Sequential", "CellList": "ModuleList",
                     "CellDict": "ModuleDict", "HSwish": "Hardswish", "HSigmoid": "Hardsigmoid",
                     "Conv1dTranspose": "ConvTranspose1d", "Conv2dTranspose": "ConvTranspose2d",
                     "Conv3dTranspose": "ConvTranspose3d"}
# torch attribute -> MindSpore attribute, tried in order; the first the cell has wins
_TORCH_ATTR = {"weight": ("gamma", "embedding_table", "w"), "bias": ("beta",),
               "running_mean": ("moving_mean",), "running_var": ("moving_variance",)}


class _TorchView(type):
    """Metaclass of the view classes: `type(m) == nn.Dense` and `type(m) == _ms_compat.Linear`
    still hold for the cell's real class."""

    def __eq__(cls, other):   # an any_batch cell's view is equal to MindSpore's layer class, as the cell is in torch
        real = _layer_class(cls)
        return (other is cls or other is real or other is cls.__dict__["_view_of"]
                or getattr(other, "ms_class", None) is real)

    def __hash__(cls):
        return hash(_layer_class(cls))


def _torch_attrs(cell):
    """{torch name: MindSpore name} for the attributes this cell spells differently."""
    if not _is_layer(cell):
        return {}
    out = {}
    for torch_name, ms_names in _TORCH_ATTR.items():
        if torch_name in cell._params:
            continue
        for ms_name in ms_names:
            if ms_name in cell._params:
                out[torch_name] = ms_name
                break
    return out


def _alias(torch_name, ms_name):
    def get(self):
        return getattr(self, ms_name)

    def set_(self, value):
        setattr(self, ms_name, value)
    return property(get, set_, doc=f"torch's {torch_name}: MindSpore's {ms_name}")


_VIEWS = {}


_VIEW_METAS = {}   # the cell class's metaclass -> a metaclass deriving from it and _TorchView


def _view_class(cell):
    cls = type(cell)
    attrs = _torch_attrs(cell)
    key = (cls, tuple(sorted(attrs.items())))
    view = _VIEWS.get(key)
    if view is None:
        name = _TORCH_CLASS_NAME.get(cls.__name__, cls.__name__) \
            if (cls.__module__ or "").startswith("mindspore.") else cls.__name__
        body = {"_view_of": cls, "__module__": cls.__module__, "__qualname__": name}
        body.update({t: _alias(t, m) for t, m in attrs.items()})
        if attrs:   # Cell.__setattr__ files a Parameter under the name given: give it MindSpore's
            body["__setattr__"] = lambda self, key, value, _set=cls.__setattr__, _names=dict(attrs): \
                _set(self, _names.get(key, key), value)
        meta = _TorchView
        if not issubclass(meta, type(cls)):   # the cell's class has a metaclass of its own
            meta = _VIEW_METAS.get(type(cls)) or _VIEW_METAS.setdefault(
                type(cls), type(f"_TorchView_{type(cls).__name__}", (_TorchView, type(cls)), {}))
        view = _VIEWS[key] = meta(name, (cls,), body)
    return view


def module_apply(cell, *args, **kwargs):
    """torch's module.apply(fn): fn on every sub-module (torch's children first), then on the
    module itself; returns the module. Anything else that has an apply() keeps its own."""
    if not isinstance(cell, nn.Cell):
        return cell.apply(*args, **kwargs)
    if not args and "fn" in kwargs:      # module.apply(fn=init)
        args = (kwargs.pop("fn"),)
    fn, = args
    if kwargs:
        raise TypeError(f"apply() got unexpected keyword arguments {sorted(kwargs)}")
    for _, child in named_children(cell):
        module_apply(child, fn)
    real = type(cell)
    cell.__class__ = _view_class(cell)
    try:
        fn(cell)
    finally:
        cell.__class__ = real
    return cell
