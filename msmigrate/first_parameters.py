"""`next(self.parameters())` in a module's method (DiT's `.to(dtype=next(self.parameters()).dtype)`, the device
probe `next(self.parameters()).device`). MindSpore refuses to enumerate parameters in GRAPH mode (get_parameters
is "not supported in 'construct'"), so the converted call stopped there. Which parameter torch returns is fixed by
the module's `__init__`: its own Parameters first, in assignment order, else the first parameter of the first
submodule that has one. Where `__init__` says which without running anything (plain assignments of torch layers,
literal Sequentials, classes of the same file), this pre-pass writes that attribute, `self.mlp[0].weight`, which the
converter then maps like any attribute (an Embedding's weight is its embedding_table). `next(self.buffers())`
(x-transformers' AlibiPositionalBias.device) is the first buffer that __init__'s top level surely registers
(`self.register_buffer('slopes', slopes)`: `self.slopes`), a module's own buffers coming first. Anywhere else the
call stays: right op by op, loud in GRAPH mode."""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Union

import libcst as cst

from .fast_visit import children
from .callsite import dotted_name
from .project_index import resolve_head

_CALL = re.compile(r"next\(\s*(?:iter\(\s*)?self\.(?:parameters|buffers)\(\s*\)")

# what __init__ tells about a module: the path of its first parameter, that it has none, or nothing sure
_NONE = "none"
_UNKNOWN = "unknown"
Answer = Union[str, None]   # a path (".mlp[0].weight"), _NONE or _UNKNOWN

_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
_PARAMETERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
# torch layers whose first parameter is `weight`, always
_WEIGHTED = frozenset({"Linear", "Bilinear", "Embedding", "PReLU", *(f"Conv{d}d" for d in (1, 2, 3)),
                       *(f"ConvTranspose{d}d" for d in (1, 2, 3))})
# torch layers with a `weight` when a flag says so: (keyword, its position, its default)
_AFFINE = {"LayerNorm": ("elementwise_affine", 2, True), "GroupNorm": ("affine", 3, True),
           **{f"BatchNorm{d}d": ("affine", 3, True) for d in (1, 2, 3)},
           **{f"InstanceNorm{d}d": ("affine", 3, False) for d in (1, 2, 3)}}
# torch layers that hold no parameter
_FREE = frozenset({
    "ReLU", "ReLU6", "GELU", "SiLU", "Mish", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Softmin", "Softplus",
    "Softsign", "ELU", "CELU", "SELU", "GLU", "LeakyReLU", "Hardswish", "Hardsigmoid", "Hardtanh", "Hardshrink",
    "Softshrink", "Tanhshrink", "LogSigmoid", "Threshold", "Identity", "Flatten", "Unflatten", "Dropout",
    "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "Upsample", "UpsamplingNearest2d", "PixelShuffle",
    "PixelUnshuffle", "ChannelShuffle", "Fold", "Unfold", "CosineSimilarity", "PairwiseDistance", "ZeroPad2d",
    *(f"{k}{d}d" for k in ("MaxPool", "AvgPool", "AdaptiveAvgPool", "AdaptiveMaxPool", "ConstantPad",
                           "ReflectionPad", "ReplicationPad") for d in (1, 2, 3)),
    "MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "SmoothL1Loss",
    "HuberLoss", "KLDivLoss"})
_SEQUENCES = frozenset({"Sequential", "ModuleList"})
# an attribute read that may be a Parameter (`emb.weight`, `layer.bias`, `shared.pos_param`)
_PARAMETER_WORD = re.compile(r"weight|bias|param|embedding", re.I)
_PLAIN_CALLS = frozenset({"int", "float", "str", "bool", "len", "min", "max", "tuple", "list", "dict", "set",
                          "range", "round", "abs", "sum", "isinstance", "getattr", "hasattr"})


def might_read_first_parameter(source: str) -> bool:
    return bool(_CALL.search(source))


def rewrite_first_parameters(module: cst.Module, imports: Dict[str, str]) -> cst.Module:
    classes = {st.name.value: st for st in module.body if isinstance(st, cst.ClassDef)}
    return module.visit(_Rewrite(_Resolver(classes, imports)))


def _first_call(node: cst.BaseExpression) -> Optional[str]:
    """"parameters" for `next(self.parameters())` / `next(iter(self.parameters()))`, "buffers" for
    `next(self.buffers())` (x-transformers' device probe `next(self.buffers()).device`), else None."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "next"
            and len(node.args) == 1 and node.args[0].keyword is None and node.args[0].star == ""):
        return None
    inner = node.args[0].value
    if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value == "iter" \
            and len(inner.args) == 1:
        inner = inner.args[0].value
    if not (isinstance(inner, cst.Call) and not inner.args):
        return None
    name = dotted_name(inner.func)
    return {"self.parameters": "parameters", "self.buffers": "buffers"}.get(name or "")


def _first_parameter_call(node: cst.BaseExpression) -> bool:
    """`next(self.parameters())` or `next(iter(self.parameters()))`."""
    return _first_call(node) == "parameters"


class _Rewrite(cst.CSTTransformer):
    def __init__(self, resolver: "_Resolver"):
        self.resolver = resolver
        self.path: List[Answer] = []      # per enclosing class: its first parameter, once asked

        self.classes: List[cst.ClassDef] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node)
        self.path.append(None)

    def leave_ClassDef(self, original, updated):
        self.classes.pop()
        self.path.pop()
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        kind = _first_call(original) if self.classes else None
        if kind == "buffers":
            found = self.resolver.class_first_buffer(self.classes[-1])
            return updated if found in (_NONE, _UNKNOWN) else cst.parse_expression("self" + found)
        if kind != "parameters":
            return updated
        if self.path[-1] is None:
            self.path[-1] = self.resolver.class_first(self.classes[-1], 0)
        if self.path[-1] in (_NONE, _UNKNOWN):
            return updated
        return cst.parse_expression("self" + self.path[-1])


class _Resolver:
    def __init__(self, classes: Dict[str, cst.ClassDef], imports: Dict[str, str]):
        self.classes, self.imports = classes, imports

    def qualified(self, func: cst.BaseExpression) -> Optional[str]:
        name = dotted_name(func)
        return resolve_head(name, self.imports) if name else None

    def class_first(self, node: cst.ClassDef, depth: int) -> Answer:
        """The first parameter of a Module class whose only base is nn.Module, from its __init__."""
        if depth > 8 or len(node.bases) != 1 or self.qualified(node.bases[0].value) not in _MODULE_BASES:
            return _UNKNOWN
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        init = next((st for st in body if isinstance(st, cst.FunctionDef) and st.name.value == "__init__"), None)
        if init is None:
            return _NONE
        methods = {st.name.value: st for st in body if isinstance(st, cst.FunctionDef)}
        events = self._events(init, methods, node)
        if events is None:
            return _UNKNOWN
        if any(kind == "param_maybe" for kind, _, _ in events):
            return _UNKNOWN     # maybe one of the module's own Parameters, which come first
        params = [name for kind, name, _ in events if kind == "param"]
        if params:
            return "." + params[0]
        for kind, name, value in events:
            if kind == "unknown":
                return _UNKNOWN
            if kind == "module":
                found = self.module_first(value, depth)
                if found != _NONE:
                    return found if found == _UNKNOWN else f".{name}{found}"
        return _NONE

    def class_first_buffer(self, node: cst.ClassDef) -> Answer:
        """The first buffer of a Module class whose only base is nn.Module: a module's own buffers come first, in
        registration order, so the first `self.register_buffer('name', value)` of __init__'s top level whose value
        is surely a tensor, before any statement that could register one unseen (a conditional registration, a
        call of a method of self); a None value registers nothing torch's buffers() yields."""
        if len(node.bases) != 1 or self.qualified(node.bases[0].value) not in _MODULE_BASES:
            return _UNKNOWN
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        init = next((st for st in body if isinstance(st, cst.FunctionDef) and st.name.value == "__init__"), None)
        if init is None:
            return _UNKNOWN
        tensors: set = set()      # local names every assignment of which so far is a call's result
        for st in (init.body.body if isinstance(init.body, cst.IndentedBlock) else ()):
            if not isinstance(st, cst.SimpleStatementLine):
                if any(isinstance(n, cst.Call) and (dotted_name(n.func) or "").startswith("self.")
                       and dotted_name(n.func) != "self.apply" for n in _walk(st)) or _assigns_locals(st, tensors):
                    return _UNKNOWN
                continue
            for small in st.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        if isinstance(t.target, cst.Name):
                            if isinstance(small.value, (cst.Call, cst.BinaryOperation)) and len(small.targets) == 1:
                                tensors.add(t.target.value)
                            else:
                                tensors.discard(t.target.value)
                if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
                    continue
                name = dotted_name(small.value.func) or ""
                if name == "self.register_buffer":
                    args = small.value.args
                    if len(args) < 2 or any(a.star for a in args[:2]) or args[0].keyword or args[1].keyword:
                        return _UNKNOWN
                    key, value = args[0].value, args[1].value
                    if not isinstance(key, cst.SimpleString):
                        return _UNKNOWN
                    if isinstance(value, cst.Name) and value.value == "None":
                        continue
                    if isinstance(value, cst.Call) or (isinstance(value, cst.Name) and value.value in tensors):
                        attr = key.evaluated_value
                        return f".{attr}" if isinstance(attr, str) and attr.isidentifier() else _UNKNOWN
                    return _UNKNOWN
                if name.startswith("self.") and name != "self.apply":
                    return _UNKNOWN
        return _UNKNOWN

    def _events(self, init: cst.FunctionDef, methods, cls: cst.ClassDef):
        """__init__'s assignments to `self.X` in order, first assignment of each X: ("param", X, value),
        ("module", X, value) or ("unknown", X, value); None when a statement could register anything unseen
        (add_module, register_parameter, a conditional Parameter, a method that assigns attributes)."""
        events: List[tuple] = []
        seen = set()
        body = init.body.body if isinstance(init.body, cst.IndentedBlock) else ()
        for st in body:
            if isinstance(st, cst.SimpleStatementLine):
                for small in st.body:
                    if self._small_statement(small, events, seen, methods, cls) is False:
                        return None
            elif _calls_self_method(st):
                return None
            else:   # a compound statement: a Parameter under it makes any answer conditional
                kinds = {self._kind(v, cls) for v in _assigned_values(st)}
                if kinds & {"param", "param_maybe"}:
                    return None
                if kinds - {"skip"}:
                    events.append(("unknown", "", None))
        return events

    def _small_statement(self, small, events, seen, methods, cls) -> Optional[bool]:
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            name = dotted_name(small.value.func) or ""
            if name.startswith("self."):
                method = name[5:]
                if method in ("register_buffer", "apply"):
                    return None
                if method in methods and not _assigns_self(methods[method]) \
                        and not _calls_self_method(methods[method]):
                    return None    # a method of the class that assigns nothing (weight init)
                return False
            return None
        if isinstance(small, (cst.Assign, cst.AnnAssign)):
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            selfs = [t for t in targets if _self_attribute(t)]
            nested = any(_self_attribute(n) for t in targets if not _self_attribute(t) for n in _walk(t))
            if nested or (selfs and len(targets) != 1):
                return False
            if selfs and small.value is not None:
                attr = selfs[0].attr.value
                kind = self._kind(small.value, cls, attr)
                if attr not in seen and kind != "skip":   # `self.head = None` first registers nothing
                    seen.add(attr)
                    events.append((kind, attr, small.value))
        return None

    def _kind(self, value: cst.BaseExpression, cls: cst.ClassDef, attr: str = "") -> str:
        """"param", "module", "skip" (no parameter: a number, a string, a tensor, a plain value) or "unknown"."""
        if isinstance(value, cst.Call):
            q = self.qualified(value.func)
            if q in _PARAMETERS:
                return "param"
            if q and q.startswith("torch.nn."):
                return "module"
            if q and q.startswith("torch."):
                return "skip"     # torch.zeros(...): a plain tensor attribute, no parameter
            name = dotted_name(value.func)
            if name in self.classes or name in _PLAIN_CALLS or (q or "").startswith("math."):
                return "module" if name in self.classes else "skip"
            return "unknown"
        if isinstance(value, (cst.Name, cst.Attribute, cst.Subscript)):
            if isinstance(value, cst.Name) and value.value in ("None", "True", "False"):
                return "skip"
            if isinstance(value, cst.Attribute) and _PARAMETER_WORD.search(value.attr.value):
                return "param_maybe"     # `self.w = emb.weight`: torch registers a Parameter assigned so
            return "unknown" if attr and _used_as_module(cls, attr) else "skip"
        if isinstance(value, (cst.BaseNumber, cst.BaseString, cst.BinaryOperation, cst.UnaryOperation,
                              cst.Comparison, cst.BooleanOperation, cst.Lambda)):
            return "skip"
        if isinstance(value, (cst.Tuple, cst.List)) and all(
                self._kind(e.value, cls) == "skip" for e in value.elements if isinstance(e, cst.Element)):
            return "skip"
        return "unknown"

    def module_first(self, value: cst.BaseExpression, depth: int) -> Answer:
        """The first parameter's path within the module `value` builds."""
        if not isinstance(value, cst.Call):
            return _UNKNOWN
        name = dotted_name(value.func)
        if name in self.classes:
            return self.class_first(self.classes[name], depth + 1)
        q = self.qualified(value.func) or ""
        if not q.startswith("torch.nn."):
            return _UNKNOWN
        layer = q.rsplit(".", 1)[-1]
        if layer in _FREE:
            return _NONE
        if layer in _WEIGHTED:
            return ".weight"
        if layer in _AFFINE:
            flag = _flag(value, *_AFFINE[layer])
            return _UNKNOWN if flag is None else (".weight" if flag else _NONE)
        if layer in _SEQUENCES:
            items = value.args
            if layer == "ModuleList":
                if not items:
                    return _NONE
                if len(items) != 1 or not isinstance(items[0].value, (cst.List, cst.Tuple)):
                    return _UNKNOWN
                items = items[0].value.elements
            for i, item in enumerate(items):
                if getattr(item, "keyword", None) is not None or (getattr(item, "star", "") or "") != "":
                    return _UNKNOWN
                found = self.module_first(item.value, depth)
                if found != _NONE:
                    return found if found == _UNKNOWN else f"[{i}]{found}"
            return _NONE
        return _UNKNOWN


def _flag(call: cst.Call, keyword: str, position: int, default: bool) -> Optional[bool]:
    for i, arg in enumerate(call.args):
        if (arg.keyword is not None and arg.keyword.value == keyword) or (arg.keyword is None and i == position):
            v = arg.value
            return {"True": True, "False": False}.get(v.value) if isinstance(v, cst.Name) else None
        if arg.star:
            return None
    return default


def _self_attribute(node) -> bool:
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


def _walk(node: cst.CSTNode):
    yield node
    for child in children(node):
        yield from _walk(child)


def _assigned_values(node: cst.CSTNode):
    for n in _walk(node):
        if isinstance(n, (cst.Assign, cst.AnnAssign)) and n.value is not None:
            targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
            if any(_self_attribute(t) for t in targets):
                yield n.value


def _assigns_locals(node: cst.CSTNode, names: set) -> bool:
    """An assignment to one of `names` under `node` (a compound statement that may rebind it to None)."""
    for n in _walk(node):
        if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
            if any(isinstance(x, cst.Name) and x.value in names for t in targets for x in _walk(t)):
                return True
    return False


def _assigns_self(node: cst.CSTNode) -> bool:
    """An assignment to an attribute of self (`self.x = ...`, `self.x += ...`, `self.a, b = ...`) under `node`."""
    for n in _walk(node):
        if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
            if any(_self_attribute(x) for t in targets for x in _walk(t)):
                return True
    return False


def _calls_self_method(node: cst.CSTNode) -> bool:
    """A call `self.m(...)` other than register_buffer/apply under `node`: it may register anything."""
    for n in _walk(node):
        if isinstance(n, cst.Call):
            name = dotted_name(n.func) or ""
            if name.startswith("self.") and name[5:] not in ("register_buffer", "apply"):
                return True
    return False


def _used_as_module(cls: cst.ClassDef, attr: str) -> bool:
    """`self.<attr>(...)` or `self.<attr>.m(...)` somewhere in the class: what it holds may be a module."""
    for n in _walk(cls):
        if isinstance(n, cst.Call):
            f = n.func
            if isinstance(f, cst.Attribute) and _self_attribute(f.value):
                f = f.value
            if _self_attribute(f) and f.attr.value == attr:
                return True
    return False
