"""torch's modules used as values: getattr(torch, name), getattr(nn, "ReLU")(), getattr(F, act),
hasattr(F, "silu"), dir(torch.nn.functional).

A literal name is resolved while converting: `getattr(nn, "ReLU")(inplace=True)` converts as
`nn.ReLU(inplace=True)` would, `hasattr(F, "silu")` becomes torch's answer (True/False, from
msmigrate/torch_names.py). A name known only at run time goes through a table emitted into
_ms_compat (compat_section below): torch name -> MindSpore callable for the names the registry
converts one-to-one, with the same arguments (no renames, transforms, dropped or added
arguments, no rule, no noted difference), or an adapter class that takes torch's arguments.
Any other name that torch has raises MigrationError naming the site; a name torch lacks behaves
as on torch (AttributeError, or getattr's default)."""
from __future__ import annotations

import textwrap
from typing import Dict, Optional

import libcst as cst

from . import registry as R
from .callsite import code_of
from .torch_names import NAMES, TORCH_VERSION

NAMESPACES = tuple(NAMES)
# library modules used as values whose names msmigrate does not list (torchvision is no dependency): only getattr()
# with a name known at run time converts (swa's `getattr(torchvision.datasets, args.dataset)`): the table of the
# names converted one-to-one, and MindSpore's tensors' differences noted on those records; any other name raises
# MigrationError naming the site, whether the library has it or not.
UNLISTED = ("torchvision.datasets",)
# the namespace whose names are the call sites' own (torch.nn.functional.relu is a torch.nn.functional name)
_INSPECTORS = ("getattr", "hasattr", "dir")


def one_to_one(namespace: str) -> Dict[str, object]:
    """name -> target for the registry records of `namespace` that convert without argument changes."""
    _ADAPTERS = R.ADAPTERS   # filled with the records (importing registry loads them)
    from .mappings.edge_args import FLOAT_INPUT_NOTE
    out: Dict[str, str] = {}
    prefix = namespace + "."
    for m in R.all_mappings():
        if not m.source.startswith(prefix) or "." in m.source[len(prefix):]:
            continue
        name = m.source[len(prefix):]
        if m.source in _ADAPTERS:
            out[name] = _ADAPTERS[m.source]   # a class that takes torch's arguments
            continue
        t = m.target
        if (m.rule is not None and m.status == R.CONVERTED and FLOAT_INPUT_NOTE in (m.note or "")
                and tuple(m.args) == ("input",) and t and t.startswith(("mindspore.ops.", "_ms_compat."))):
            out[name] = (t, "float")   # torch.tanh...: the target, an integer input promoted as the rule does
            continue
        kinds = (R.CONVERTED, R.DIFFERENCE) if namespace in UNLISTED else (R.CONVERTED,)
        if (t is None or m.rule is not None or m.status not in kinds
                or not t.startswith(("mindspore.", "_ms_compat.")) or " " in t or "(" in t
                or m.rename or m.transforms or m.values or m.extra or m.unsupported_values):
            continue
        kept = tuple(a for a in m.args if a not in m.drop)
        if tuple(m.target_args) != kept or tuple(m.args[:len(kept)]) != kept:
            continue   # arguments move: not one-to-one
        if set(m.unsupported) - {"out"}:
            continue   # an argument that converts only with some values (out= is refused by the targets)
        # the target itself, so that GRAPH mode compiles it: a call that passes what the record drops
        # (inplace=) or refuses (out=) fails with TypeError, since the target takes no such argument
        # (tests/parity/test_idioms.py). Where torch also takes a dropped argument by position:
        # (target, positions kept), called through _ms_compat.TorchPositions
        positional_drop = bool(set(m.drop) & set(m.args))
        out[name] = (t, len(kept)) if positional_drop else t
    return out


def compat_section() -> str:
    """The runtime part emitted into _ms_compat.py: the tables and the look-up helpers."""
    tables = {ns: one_to_one(ns) for ns in NAMESPACES + UNLISTED}
    lines = [
        "# torch's modules used as values (msmigrate/torch_namespace.py): getattr(F, name) with a name known",
        "# only at run time, hasattr(), dir(). Generated from msmigrate's registry; names of torch "
        f"{TORCH_VERSION}.",
        "import importlib as _importlib",
        "",
        "TORCH_CONVERTED = {",
    ]
    for ns, table in tables.items():
        lines.append(f"    {ns!r}: {{")
        lines += [f"        {k!r}: {v!r}," for k, v in sorted(table.items())]
        lines.append("    },")
    lines.append("}")
    lines.append("TORCH_NAMES = {")   # short lines: MindSpore's GRAPH mode reads this file's source
    for ns in NAMESPACES:
        lines.append(f"    {ns!r}: frozenset((")
        lines += [f"        {w + ' '!r}" for w in textwrap.wrap(" ".join(NAMES[ns]), 100, break_on_hyphens=False)]
        lines.append("    ).split()),")
    lines.append("}")
    lines.append(_RUNTIME)
    return "\n".join(lines) + "\n"


_RUNTIME = '''

class TorchPositions(nn.Cell):
    """A function torch takes more positional arguments for than MindSpore (F.relu(x, inplace)): called
    with torch's positions, it passes the first `kept` on (the rest are arguments the conversion drops).
    A Cell, so that GRAPH mode compiles it where a module stores it (self.act = getattr(F, name));
    named_modules() does not list it (torch stores a function there)."""
    torch_function = True

    def __init__(self, fn, kept):
        super().__init__()
        self.fn = fn
        self.kept = kept

    def construct(self, *args):
        return self.fn(*args[:self.kept])


class TorchFloatInput(nn.Cell):
    """A float function (torch.tanh, torch.exp...): an integer or bool input promoted to float32 first, as
    torch does (float_input). A Cell, as TorchPositions."""
    torch_function = True

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def construct(self, x):
        return self.fn(float_input(x))


def _resolve(entry, namespace, where):
    """A table entry -> the object: 'mindspore.ops.tanh' / '_ms_compat.ReLU', (target, kept), or
    (target, 'float') for a float function."""
    target = entry if isinstance(entry, str) else entry[0]
    module, _, name = target.rpartition(".")
    if module.startswith("_ms_compat.") and module.split(".")[1] in globals():   # a member of a helper class
        fn = globals()[module.split(".")[1]]
        for part in module.split(".")[2:] + [name]:
            fn = getattr(fn, part)
        return fn
    if module == "_ms_compat" and name not in globals():
        # this helper was written with the parts the converted tree names; a name that is no string literal
        # anywhere in the tree (read from a config file) had its part left out
        raise MigrationError(f"getattr({namespace}, ...) at {where} asks for {target.split('.')[-1]!r}, whose "
                             f"converted form ({target}) was not written into this helper: no string literal of "
                             "the converted tree names it. Name it once in the code (say, in the list of choices) "
                             "and convert again")
    fn = globals()[name] if module == "_ms_compat" else getattr(_importlib.import_module(module), name)
    if isinstance(entry, str):
        return fn
    return TorchFloatInput(fn) if entry[1] == "float" else TorchPositions(fn, entry[1])


_NO_DEFAULT = object()


def torch_getattr(namespace, name, where, default=_NO_DEFAULT):
    """getattr(<torch module>, name[, default]) for a name known at run time."""
    entry = TORCH_CONVERTED[namespace].get(name)
    if entry is not None:
        return _resolve(entry, namespace, where)
    if namespace not in TORCH_NAMES:     # a library's module whose names msmigrate does not list
        raise MigrationError(f"getattr({namespace}, {name!r}) at {where}: msmigrate converts no {namespace}.{name} "
                             f"(convert this site by hand, see the migration report)")
    if name not in TORCH_NAMES[namespace]:
        if default is not _NO_DEFAULT:
            return default
        raise AttributeError(f"module {namespace!r} has no attribute {name!r}")
    raise MigrationError(f"getattr({namespace}, {name!r}) at {where}: {namespace}.{name} has no one-to-one "
                         f"MindSpore conversion; convert this site by hand (see the migration report)")


class _TorchModuleName:
    """A name bound to a torch module, read inside torch_eval's expression: its attributes are torch_getattr's
    (a submodule, torch.nn of `torch`, another such name)."""

    def __init__(self, namespace, where):
        self._namespace = namespace
        self._where = where

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        sub = f"{self._namespace}.{name}"
        if sub in TORCH_CONVERTED:
            return _TorchModuleName(sub, self._where)
        return torch_getattr(self._namespace, name, self._where)


def torch_eval(source, globals_, locals_, aliases, where):
    """eval(source) in a module that binds torch's modules to names (aliases: name -> torch module; YOLOv5's
    parse_model evaluates the 'nn.Upsample' its yaml names): those names read through torch_getattr's table, so
    a torch name the string spells is its converted form, or MigrationError naming the site; any other name is
    the module's own, as in eval."""
    if not isinstance(source, str):
        return eval(source, globals_, locals_)
    names = {name: _TorchModuleName(module, where) for name, module in aliases.items()}
    scope = dict(globals_)
    scope.update(names)
    local = dict(locals_)
    local.update({name: value for name, value in names.items() if name in local})
    return eval(source, scope, local)


def _torch_name_class(namespace, name, where, call=None, cls=None):
    """torch_dict_items' value for a class torch has whose converted form is no class here: `call` (a function
    taking torch's arguments) or None, `cls` the class it builds or None. The stand-in builds through `call` and
    tests instances against `cls`; without them it raises MigrationError when called or when an object whose class
    (or a base) has that name is tested against it, and any other object is no instance of it (no object a
    converted program builds is of a class it never converted)."""
    def fail(*args, **kwargs):
        raise MigrationError(f"{namespace}.{name}, read from {namespace}.__dict__ at {where}, has no one-to-one "
                             "MindSpore conversion written into this helper; convert this site by hand (see the "
                             "migration report)")

    class _Meta(type):
        def __instancecheck__(self, obj):
            if cls is not None:
                return isinstance(obj, cls)
            if any(c.__name__ == name for c in type(obj).__mro__):
                fail()
            return False

        def __subclasscheck__(self, sub):
            if cls is not None:
                return issubclass(sub, cls)
            if any(c.__name__ == name for c in getattr(sub, "__mro__", ())):
                fail()
            return False

        def __call__(self, *args, **kwargs):
            return (call or fail)(*args, **kwargs)

    return _Meta(name, (), {"__module__": namespace})


def torch_dict_items(namespace, where):
    """<torch module>.__dict__.items() (YOLOv5's `tuple(v for k, v in nn.__dict__.items() if 'Norm' in k)`, a
    tuple of norm classes for isinstance): (name, object) for each of torch's public names of the module, in
    sorted order; the object as torch_getattr gives it where the table converts the name (a class taken with
    torch's positions: a stand-in class building it and testing instances of it), else a stand-in class
    (_torch_name_class) that raises MigrationError where it would be used."""
    out = []
    for name in sorted(TORCH_NAMES[namespace]):
        entry = TORCH_CONVERTED[namespace].get(name)
        try:
            value = None if entry is None else _resolve(entry, namespace, where)
        except MigrationError:
            value = None
        if value is None:
            value = _torch_name_class(namespace, name, where)
        elif not isinstance(value, type) and isinstance(getattr(value, "fn", None), type):
            value = _torch_name_class(namespace, name, where, value, value.fn)
        out.append((name, value))
    return out


def torch_dict_item(namespace, name, where):
    """<torch module>.__dict__[name] for a name known at run time: getattr's table; a name the module lacks
    raises KeyError, as its __dict__ does."""
    if namespace in TORCH_NAMES and name not in TORCH_NAMES[namespace]:
        raise KeyError(name)
    return torch_getattr(namespace, name, where)


def torch_hasattr(namespace, name):
    """hasattr(<torch module>, name): torch's answer."""
    return name in TORCH_NAMES[namespace]


def torch_dir(namespace):
    """dir(<torch module>): torch's names."""
    return sorted(TORCH_NAMES[namespace])


class no_grad:
    """torch.no_grad / torch.inference_mode / torch.enable_grad used as a value (passed around, or as
    a decorator through a variable): MindSpore records gradients only inside grad/value_and_grad, so
    this does nothing, as the converted `with torch.no_grad():` blocks do."""

    def __init__(self, *args, **kwargs):
        self._fn = args[0] if len(args) == 1 and callable(args[0]) and not kwargs else None

    def __call__(self, *args, **kwargs):
        if self._fn is not None:       # @no_grad on a function: its calls
            return self._fn(*args, **kwargs)
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]             # @no_grad() on a function: the function
        raise TypeError("no_grad() takes a function")

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
'''


# ------------------------------------------------------------------ converting the call sites
def namespace_of(tr, node: cst.BaseExpression) -> Optional[str]:
    """The torch namespace a module expression refers to (`F` -> "torch.nn.functional")."""
    qn = tr._torch_qname(node)
    return qn if qn in NAMES or qn in UNLISTED else None


def _literal(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def inspected(tr, call: cst.Call) -> Optional[str]:
    """The namespace when `call` is getattr/hasattr/dir over a torch module (first argument)."""
    if not (isinstance(call.func, cst.Name) and call.func.value in _INSPECTORS and call.args):
        return None
    if call.func.value in tr._imports or tr._shadowed(call.func.value):
        return None   # a project's own getattr
    first = call.args[0]
    if first.keyword is not None or first.star:
        return None
    ns = namespace_of(tr, first.value)
    if ns in UNLISTED and call.func.value != "getattr":
        return None     # hasattr()/dir(): the library's names are not listed
    return ns


def literal_qname(tr, call: cst.Call) -> Optional[str]:
    """`getattr(nn, "ReLU")` -> "torch.nn.ReLU" (two arguments, a literal name)."""
    ns = inspected(tr, call)
    if ns is None or call.func.value != "getattr" or len(call.args) != 2:
        return None
    name = _literal(call.args[1].value)
    return f"{ns}.{name}" if name else None


def signature_of(tr, call: cst.Call):
    """`inspect.signature(torch.optim.AdamW)`: (the inspect module's expression, torch's parameter list from
    msmigrate/torch_signature_data.py) when the argument is a torch API whose parameters are all plain
    (positional-or-keyword or keyword-only) with literal defaults; else None."""
    import ast
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "signature" and len(call.args) == 1
            and call.args[0].keyword is None and not call.args[0].star):
        return None
    if tr._qname_any(call.func) != "inspect.signature":
        return None
    qn = tr._torch_qname(call.args[0].value)
    if qn is None:
        return None
    from .torch_signature_data import SIGNATURES
    entry = SIGNATURES.get(qn)
    if entry is None:
        return None
    params, kwargs = entry
    for _name, default, kind in params:
        if kind not in ("p", "k") or len(default) > 1:
            return None
        try:
            default and ast.literal_eval(default[0])
        except (ValueError, SyntaxError):
            return None
    return call.func.value, entry


def visit_call(tr, node: cst.Call) -> None:
    """Mark what the conversion of such a call replaces as a whole: its torch-module argument (not
    a reference of its own), and a `getattr(nn, "X")` that is called right away."""
    if inspected(tr, node) is not None or signature_of(tr, node) is not None:
        tr._skip.add(id(node.args[0].value))
    if isinstance(node.func, cst.Call) and literal_qname(tr, node.func) is not None:
        tr._skip_calls.add(id(node.func))


def leave_call(tr, original: cst.Call, updated: cst.Call):
    """The converted call, or None when it is not one of these."""
    if isinstance(original.func, cst.Call) and id(original.func) in tr._skip_calls:
        qn = literal_qname(tr, original.func)
        if qn is not None:   # getattr(nn, "ReLU")(...): converted as nn.ReLU(...)
            func = cst.parse_expression(qn)
            return tr._convert_api_call(original.with_changes(func=func), updated.with_changes(func=func), qn)
    sig = signature_of(tr, original)
    if sig is not None:     # `'fused' in inspect.signature(torch.optim.AdamW).parameters` (build-nanogpt)
        module, (params, kwargs) = sig
        mod = code_of(module).strip()
        kinds = {"p": "POSITIONAL_OR_KEYWORD", "k": "KEYWORD_ONLY"}
        parts = [f"{mod}.Parameter({name!r}, {mod}.Parameter.{kinds[kind]}"
                 + (f", default={default[0]})" if default else ")") for name, default, kind in params]
        if kwargs:
            parts.append(f"{mod}.Parameter('kwargs', {mod}.Parameter.VAR_KEYWORD)")
        qn = tr._torch_qname(original.args[0].value)
        tr._record(original, "inspect.signature", f"{mod}.Signature([...])", R.CONVERTED,
                   f"torch {TORCH_VERSION}'s parameters of {qn}, resolved while converting (the MindSpore "
                   "target's own differ)")
        return cst.parse_expression(f"{mod}.Signature([{', '.join(parts)}])")
    ns = inspected(tr, original)
    if ns is None:
        return None
    kind = original.func.value
    where = f"{tr.module_name}:{tr._line(original)}"
    args = original.args
    name = _literal(args[1].value) if len(args) >= 2 else None
    if kind == "dir":
        if len(args) != 1:
            return None
        tr._record(original, f"dir({ns})", f"_ms_compat.torch_dir({ns!r})", R.CONVERTED, "torch's names")
        return tr._render_template(f"_ms_compat.torch_dir({ns!r})")
    if kind == "hasattr" and len(args) == 2:
        if name is not None:
            answer = name in NAMES[ns]
            tr._record(original, f"hasattr({ns})", repr(answer), R.CONVERTED,
                       f"torch {TORCH_VERSION}'s answer, resolved while converting")
            return cst.Name(repr(answer))
        tr._record(original, f"hasattr({ns})", "_ms_compat.torch_hasattr", R.CONVERTED, "torch's answer")
        return tr._render_template(f"_ms_compat.torch_hasattr({ns!r}, {code_of(updated.args[1].value).strip()})")
    if kind == "getattr" and len(args) in (2, 3):
        if name is not None and ns in UNLISTED:
            return tr._convert_reference(original, updated, f"{ns}.{name}")
        if name is not None:
            qn = f"{ns}.{name}"
            if len(args) == 3 and name not in NAMES[ns]:
                tr._record(original, f"getattr({ns})", "(default)", R.CONVERTED,
                           f"torch {TORCH_VERSION} has no {qn}: the default, as on torch")
                return updated.args[2].value
            if name in NAMES[ns]:
                return tr._convert_reference(original, updated, qn)
            # torch has no such name: AttributeError at run time, as on torch
        extra = f", {code_of(updated.args[2].value).strip()}" if len(args) == 3 else ""
        tr._record(original, f"getattr({ns})", "_ms_compat.torch_getattr", R.DIFFERENCE,
                   "name known at run time: a table of the names converted one-to-one; any other torch name "
                   "raises MigrationError there")
        return tr._render_template(f"_ms_compat.torch_getattr({ns!r}, {code_of(updated.args[1].value).strip()}, "
                                   f"{where!r}{extra})")
    return None


def eval_call(tr, original: cst.Call, updated: cst.Call):
    """The builtin `eval(source)` (one argument) in a module that binds torch's modules to names: the string is
    known at run time only, and in the converted module those names are MindSpore's (`nn`) or unbound (`torch`),
    so `eval('nn.Upsample')` would be mindspore.nn.Upsample, which takes other arguments (YOLOv5's parse_model
    evaluates the module names its yaml files spell). It becomes _ms_compat.torch_eval with the caller's globals()
    and locals() and those names, read there through torch_getattr's table. None for any other call."""
    if not (isinstance(original.func, cst.Name) and original.func.value == "eval" and len(original.args) == 1):
        return None
    if "eval" in tr._imports or tr._shadowed("eval"):
        return None
    arg = updated.args[0]
    if arg.keyword is not None or arg.star:
        return None
    aliases = {name: qn for name, qn in sorted(tr._imports.items()) if qn in NAMES and name.isidentifier()}
    if not aliases:
        return None
    where = f"{tr.module_name}:{tr._line(original)}"
    tr._record(original, "eval", "_ms_compat.torch_eval", R.DIFFERENCE,
               "a string evaluated at run time: the names bound to torch's modules read through a table of the "
               "names converted one-to-one (classes as values: adapters taking torch's arguments); any other torch "
               "name raises MigrationError there")
    return tr._render_template(f"_ms_compat.torch_eval({code_of(arg.value).strip()}, globals(), locals(), "
                               f"{aliases!r}, {where!r})")


def dict_items_call(tr, original: cst.Call):
    """`M.__dict__.items()` over a torch module M (YOLOv5's smart_optimizer collects the norm classes so):
    _ms_compat.torch_dict_items. None for any other call."""
    func = original.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "items" and not original.args
            and isinstance(func.value, cst.Attribute) and func.value.attr.value == "__dict__"):
        return None
    ns = namespace_of(tr, func.value.value)
    if ns is None or ns not in NAMES:
        return None
    where = f"{tr.module_name}:{tr._line(original)}"
    tr._record(original, f"{ns}.__dict__.items", "_ms_compat.torch_dict_items", R.DIFFERENCE,
               "torch's public names of the module with their converted forms (the table of the names converted "
               "one-to-one); any other name a stand-in class that raises MigrationError where it is built or "
               "tested against an object of a class of that name")
    return tr._render_template(f"_ms_compat.torch_dict_items({ns!r}, {where!r})")


def dict_namespace(tr, node: cst.Subscript) -> Optional[str]:
    """The namespace when `node` reads `M.__dict__[name]` over a torch module or an unlisted library's module
    (xternalz/WideResNet-pytorch's `datasets.__dict__[args.dataset.upper()](root, ...)`): one index, no slice."""
    value = node.value
    if not (isinstance(value, cst.Attribute) and value.attr.value == "__dict__" and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index) and node.slice[0].slice.star is None):
        return None
    return namespace_of(tr, value.value)


def visit_subscript(tr, node: cst.Subscript) -> None:
    """`M.__dict__[name]` is converted as a whole (leave_subscript): `M.__dict__` is no reference of its own."""
    if dict_namespace(tr, node) is not None:
        tr._skip.add(id(node.value))
        tr._dict_reads.add(id(node))


def leave_subscript(tr, original: cst.Subscript, updated: cst.Subscript):
    """`M.__dict__[name]` read: getattr(M, name) as a name known at run time is converted (a literal name as
    getattr(M, "name") is); a name torch's module lacks raises KeyError, as its __dict__ does."""
    if id(original) not in tr._dict_reads:
        return None
    ns = dict_namespace(tr, original)
    key = updated.slice[0].slice.value
    name = _literal(original.slice[0].slice.value)
    if name is not None and ns in NAMES and name in NAMES[ns]:
        return tr._convert_reference(original, updated, f"{ns}.{name}")
    if name is not None and ns in UNLISTED:
        return tr._convert_reference(original, updated, f"{ns}.{name}")
    where = f"{tr.module_name}:{tr._line(original)}"
    tr._record(original, f"{ns}.__dict__", "_ms_compat.torch_getattr", R.DIFFERENCE,
               "name known at run time: a table of the names converted one-to-one; any other torch name "
               "raises MigrationError there")
    return tr._render_template(f"_ms_compat.torch_dict_item({ns!r}, {code_of(key).strip()}, {where!r})")


def helper_roots_for_names(codes) -> set:
    """The helper parts a run-time getattr may need: `_ms_compat.torch_getattr(ns, name, ...)` resolves `name`
    through the table to a helper definition only when it is called, so the helper pruning (runtime_prune.py)
    keeps, for the namespaces the tree looks up so, the definitions of the names that a string literal of the tree
    spells (the default of `act="GELU"`, a list of choices). Another name stops at the look-up naming the site."""
    import ast
    looked_up: set = set()
    literals: set = set()
    for code in codes:
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                literals.add(node.value)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("torch_getattr", "torch_dict_item") and node.args \
                    and isinstance(node.args[0], ast.Constant):
                looked_up.add(node.args[0].value)
    roots = set()
    # torch_eval's namespaces: looked up as getattr's, and since its strings may come from a data file (YOLOv5's
    # yaml), the layer classes torch code passes around as values (mappings/adapters.py) kept whatever the literals
    for code in codes:
        if "torch_eval" not in code and "torch_dict_items" not in code:
            continue
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "torch_eval" and len(node.args) == 5 and isinstance(node.args[3], ast.Dict):
                looked_up |= {v.value for v in node.args[3].values if isinstance(v, ast.Constant)}
                roots |= {target[len("_ms_compat."):] for target in R.ADAPTERS.values()}
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "torch_dict_items" and node.args and isinstance(node.args[0], ast.Constant):
                looked_up.add(node.args[0].value)
                roots |= {target[len("_ms_compat."):] for target in R.ADAPTERS.values()}
    for ns in looked_up & set(NAMESPACES + UNLISTED):
        for name, entry in one_to_one(ns).items():
            target = entry if isinstance(entry, str) else entry[0]
            # an unlisted library's few converted names are all kept: its look-ups spell names through code
            # (WideResNet's `datasets.__dict__[args.dataset.upper()]` of the literal 'cifar10')
            if (name in literals or ns in UNLISTED) and target.startswith("_ms_compat."):
                path = target[len("_ms_compat."):]
                roots.add(path)
                if "." in path:     # a member of a helper namespace class (datasets.CIFAR10): the class too
                    roots.add(path.split(".")[0])
    return roots


# ------------------------------------------------------------------ getattr(torch, "version").hip
class _LiteralGetattrChains(cst.CSTTransformer):
    """`getattr(M, "name").rest` over a torch module M, with a literal name torch has, is `M.name.rest`:
    written so, the attribute chain converts as one torch name (getattr(torch, "version").hip is
    torch.version.hip). Names resolved through `imports` (the file's local name -> qualified name)."""

    def __init__(self, imports: Dict[str, str]):
        super().__init__()
        self.imports = imports

    def _namespace(self, node: cst.BaseExpression) -> Optional[str]:
        dotted = code_of(node).strip()
        head, _, rest = dotted.partition(".")
        if not all(p.isidentifier() for p in dotted.split(".")) or head not in self.imports:
            return None
        qn = self.imports[head] + ("." + rest if rest else "")
        return qn if qn in NAMES else None

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        call = updated.value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "getattr"
                and len(call.args) == 2 and all(a.keyword is None and not a.star for a in call.args)):
            return updated
        name = _literal(call.args[1].value)
        ns = self._namespace(call.args[0].value)
        if ns is None or name is None or name not in NAMES[ns]:
            return updated
        return updated.with_changes(value=cst.Attribute(call.args[0].value, cst.Name(name)))


def literal_getattr_chains(module: cst.Module, imports: Dict[str, str]) -> cst.Module:
    """The module with `getattr(M, "name").rest` over torch modules written `M.name.rest`."""
    if "getattr" in imports:
        return module   # a project's own getattr
    return module.visit(_LiteralGetattrChains(imports))
