"""An instance of a plain project class (a dataclass, `class NestedTensor(object)`) built inside a
compiled graph (msmigrate/graph_objects.py). MindSpore builds it through its Python fallback: every
tensor it holds, and every tensor returned next to it, gets no static shape and no gradient (measured on
2.10: d/dx 0 where PyNative and torch give the true value). PyNative builds it as written; compiling a
graph that reaches it raises MigrationError naming the original line. (_pynative_only: host_draws.py)"""
import dataclasses
import inspect
import weakref

from mindspore.ops.primitive import constexpr as _obj_constexpr


def graph_object(obj, cls_name, where):
    """The object, in PyNative; compiling a graph that builds it raises MigrationError."""
    return _pynative_only(
        obj, "{}(...) at {} builds a Python object inside a compiled graph (GRAPH mode or ms.jit): MindSpore runs "
        "it through its Python fallback, where the tensors it holds lose their gradient and their static shape. "
        "Return tensors, tuples or dicts of tensors instead, or run this network in PYNATIVE mode "
        "(ms.set_context(mode=ms.PYNATIVE_MODE))", cls_name, where)


def graph_record(cls, values):
    """cls(*values) (a project namedtuple), in PyNative; the plain tuple of values in a compiled graph, where
    MindSpore builds the namedtuple through its Python fallback and every gradient through it is 0. Used only
    where nothing in the project reads the record's fields by name (msmigrate/graph_objects.py)."""
    if _compiling(_draw_probe):
        return values
    return cls(*values)


def graph_record_dict(cls, fields):
    """cls(**fields) (a project record class: msmigrate/graph_records.py), in PyNative; the dict of its fields
    in a compiled graph, where the object would go through the Python fallback and lose every gradient."""
    if _compiling(_draw_probe):
        _note_graph_record(cls)     # the Cell's return is rebuilt as the object (_records_rebuilt)
        return fields
    return cls(**fields)


# the record classes graph_record_dict built in graphs compiled since (noted while compiling), and per compiled
# Cell the classes its graph builds by their fields: a dict of a record's fields that the Cell returns is the
# object again on the host (_records_rebuilt). On mindspore.nn: every converted tree of the process notes here.
_NOTED_RECORDS = vars(nn).setdefault("_msmigrate_noted_graph_records", [])
_CELL_RECORDS = vars(nn).setdefault("_msmigrate_cell_graph_records", weakref.WeakKeyDictionary())


@_obj_constexpr(check=False)
def _note_graph_record(cls):
    _NOTED_RECORDS.append(cls)
    return 0


def _record_fields(cls):
    if dataclasses.is_dataclass(cls):
        return frozenset(f.name for f in dataclasses.fields(cls) if f.init)
    return frozenset(list(inspect.signature(cls.__init__).parameters)[1:])


def _records_noted(cell, noted):
    """After compiling the Cell's graph (None: compiling failed): the record classes it builds (noted since
    _NOTED_RECORDS had `noted` entries)."""
    if len(_NOTED_RECORDS) > noted and cell is not None:
        by_fields = _CELL_RECORDS.setdefault(cell, {})
        for cls in _NOTED_RECORDS[noted:]:
            by_fields.setdefault(_record_fields(cls), set()).add(cls)
    del _NOTED_RECORDS[noted:]


def _records_rebuilt(cell, out):
    """What the compiled Cell returned, each dict of the fields of a record class its graph builds the object again,
    as torch's program gets it."""
    by_fields = _CELL_RECORDS.get(cell)
    return _rebuilt(out, by_fields) if by_fields else out


def _rebuilt(out, by_fields):
    if isinstance(out, dict):
        items = {k: _rebuilt(v, by_fields) for k, v in out.items()}
        classes = by_fields.get(frozenset(out), ())
        if len(classes) > 1:
            raise MigrationError(
                "{}: a compiled graph returned the fields of a record as a dict, and the record classes {} have "
                "those fields: which one it was is not known. Run this network in PYNATIVE mode "
                "(ms.set_context(mode=ms.PYNATIVE_MODE))".format(calling_line(), sorted(c.__name__ for c in classes)))
        if classes:
            return next(iter(classes))(**items)
        return out if all(items[k] is v for k, v in out.items()) else items
    if not isinstance(out, (tuple, list)):
        return out
    items = [_rebuilt(v, by_fields) for v in out]
    if all(a is b for a, b in zip(items, out)):
        return out
    return type(out)(items) if type(out) in (tuple, list) else type(out)(*items)


GRAPH_CELL_HOOKS["records"] = (lambda: len(_NOTED_RECORDS), _records_noted, _records_rebuilt)


_RECORD_RETURNED = (
    "{} of a dict: a record built in a compiled graph (GRAPH mode or ms.jit) is the dict of its fields, and a "
    "graph returns it so; {}. Read its fields by key (r['field']) or run this network in PYNATIVE mode "
    "(ms.set_context(mode=ms.PYNATIVE_MODE))")


def graph_field(obj, name):
    """obj.name; obj[name] where obj is a record's dict in a compiled graph (graph_record_dict). `values` (a
    field named like a dict's attribute) of a dict outside a graph raises instead of giving the dict's method."""
    if isinstance(obj, dict):
        if _compiling(_draw_probe):
            return obj[name]
        if hasattr(dict, name):
            _refuse_compiled(_RECORD_RETURNED, "." + name, "the dict's own attribute is no field")
    return getattr(obj, name)


def graph_field_set(obj, name, value):
    """obj.name = value, and obj; a new dict with name set where obj is a record's dict in a compiled graph (the
    caller rebinds its name: a graph dict is a value; graph_records.field_writes checks no other holder)."""
    if _compiling(_draw_probe) and isinstance(obj, dict):
        # a new dict, not obj[name] = value: a field's type may change (None, then a str), which a graph dict's
        # item store refuses ("'tuple' object does not support item assignment")
        return {key: (value if key == name else v) for key, v in obj.items()}
    setattr(obj, name, value)
    return obj


_SHARED_FIELD = (
    "{} = ... at {} sets a field of a record another name, list or caller also holds, inside a compiled graph "
    "(GRAPH mode or ms.jit): there the record is a dict, a value, and the other holder would keep the old "
    "field. Build a new record instead, or run this network in PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE))")


def graph_shared_field(obj, value, what, where):
    """value, for `obj.f = value` where another holder may share obj; compiling it on a record's dict raises."""
    if _compiling(_draw_probe) and isinstance(obj, dict):
        _refuse_compiled(_SHARED_FIELD, what, where)
    return value


def graph_isinstance(obj, cls, fields):
    """isinstance(obj, cls); in a compiled graph, on a dict: whether it is a record of cls (its keys, in order)."""
    if isinstance(obj, dict):
        if _compiling(_draw_probe):
            return tuple(obj.keys()) == fields
        if tuple(obj) == fields:
            _refuse_compiled(_RECORD_RETURNED, "isinstance(...)", "no instance of the class")
    return isinstance(obj, cls)


def graph_record_method(obj, name, func, *args):
    """obj.name(*args); the record class's function func on a record's dict in a compiled graph."""
    if _compiling(_draw_probe) and isinstance(obj, dict):
        return func(obj, *args)
    return getattr(obj, name)(*args)


def graph_copy(obj, copier):
    """copier(obj) (copy.copy, copy.deepcopy); obj itself where it is a dict in a compiled graph: a dict built
    there is a value already, and MindSpore runs copy through its Python fallback, every gradient 0 (2.10)."""
    if _compiling(_draw_probe) and isinstance(obj, dict):
        return obj
    return copier(obj)


# `with self.ctx:` / `with ctx:` over an object inside a compiled construct: MindSpore enters only
# jit_class objects and otherwise stops with its own TypeError ("Only support jit_class instance, but got
# PythonObject(...)"), naming no line of the original program; checked before the `with`, as a statement
# (a call in the `with` line itself breaks MindSpore's parser: "issubclass() arg 1 must be a class").
@_obj_constexpr(check=False)
def _is_jit_class_object(obj):
    return bool(getattr(type(obj), "__ms_class__", False))


_CONTEXT_REFUSAL = (
    "the `with` at {} enters an object that is no mindspore.jit_class inside a compiled graph (GRAPH mode or "
    "ms.jit), which MindSpore cannot enter. Make its class a @mindspore.jit_class, move the `with` out of "
    "construct, or run this network in PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE))")


def graph_context(obj, where):
    """Nothing in PyNative; compiling a graph that enters obj, not a jit_class object, raises MigrationError."""
    if _compiling(_draw_probe) and not _is_jit_class_object(obj):
        _refuse_compiled(_CONTEXT_REFUSAL, where)
