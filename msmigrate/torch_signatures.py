"""torch's own parameter lists for the APIs the mapping records convert, as data.

The data (msmigrate/torch_signature_data.py) is generated from the installed torch by
`python -m msmigrate.census --regenerate`: `inspect.signature` where torch has one (Python functions, classes,
Module methods), else the union of the native schemas of the op (`aten::NAME`, every overload) and the signatures
the docstring lists (`add(input, other, *, alpha=1, out=None) -> Tensor`). Each parameter keeps the defaults torch
gives it (a name whose overloads disagree keeps each one: any of them is the call without the argument in one of
torch's overloads). The converter reads it to check each mapped call's arguments (argument_check.py); converted
code needs no torch. tests/test_argument_check.py regenerates it and fails when it drifts.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import re
from typing import Dict, Iterable, List, Optional, Tuple

# a parameter: (name, default codes (empty: required), kind) with kind "p" positional-or-keyword, "k" keyword-only,
# "*" the *args slot; a signature: (parameters, takes **kwargs)
Param = Tuple[str, Tuple[str, ...], str]
Signature = Tuple[Tuple[Param, ...], bool]

# torch's own APIs (torchvision is left out: whether it imports depends on its compiled ops matching torch's build)
_SOURCE_ROOTS = ("torch.", "Tensor.", "Module.", "Optimizer.")


def resolve(source: str):
    """The torch object a record's source names (Tensor.add, Module.eval, torch.nn.Conv2d), or None."""
    if source.startswith("Tensor."):
        import torch
        return getattr(torch.Tensor, source[len("Tensor."):], None)
    if source.startswith("Module."):
        import torch
        return getattr(torch.nn.Module, source[len("Module."):], None)
    if source.startswith("Optimizer."):
        import torch
        return getattr(torch.optim.Optimizer, source[len("Optimizer."):], None)
    parts = source.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:   # not a module path (or a module that fails to import here)
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                return None
        return obj
    return None


def _code(value) -> Optional[str]:
    """A default value as source code, when it reads back as one (None for an object with no code form)."""
    text = repr(value)
    if "<" in text or "\n" in text:
        return None
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    return text


def _from_inspect(obj, drop_first: bool) -> Optional[Signature]:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    params: List[Param] = []
    kwargs = False
    for i, p in enumerate(sig.parameters.values()):
        if drop_first and i == 0 and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            continue
        if p.kind == p.VAR_KEYWORD:
            kwargs = True
            continue
        if p.kind == p.VAR_POSITIONAL:
            params.append((p.name, (), "*"))
            continue
        default = () if p.default is p.empty else tuple(c for c in [_code(p.default)] if c is not None) or ("?",)
        params.append((p.name, default, "k" if p.kind == p.KEYWORD_ONLY else "p"))
    return tuple(params), kwargs


_DOC_SIG = r"^\s*(?:\.\. (?:function|method):: )?(?:torch\.|Tensor\.)?{name}\((.*)\)\s*(?:->.*)?$"


def _from_docstring(obj, name: str) -> List[List[Param]]:
    """Every `name(params) -> ...` line of the docstring, parsed as Python parameters."""
    out = []
    for line in (getattr(obj, "__doc__", None) or "").splitlines():
        mt = re.match(_DOC_SIG.format(name=re.escape(name)), line)
        if not mt:
            continue
        try:
            fn = ast.parse(f"def f({mt.group(1)}): pass").body[0]
        except SyntaxError:
            continue
        a = fn.args
        params: List[Param] = []
        positional = a.posonlyargs + a.args
        firsts = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        for arg, d in zip(positional, firsts):
            params.append((arg.arg, () if d is None else (ast.unparse(d),), "p"))
        if a.vararg is not None:
            params.append((a.vararg.arg, (), "*"))
        for arg, d in zip(a.kwonlyargs, a.kw_defaults):
            params.append((arg.arg, () if d is None else (ast.unparse(d),), "k"))
        out.append(params)
    return out


_PRIMITIVE = re.compile(r"^(int|float|str|complex|bool|t|Any|Scalar|number|List\[.*\]|t\[\])\??$")


def _from_schemas(name: str, method: bool) -> List[List[Param]]:
    """The native schemas of aten::name as Python parameter lists: `self` is torch's `input` (dropped for a Tensor
    method), out= defaults to None as in Python; TorchScript's primitive overloads (add(int a, int b)) left out."""
    import torch

    out = []
    try:
        schemas = torch._C._jit_get_schemas_for_operator("aten::" + name)
    except Exception:   # no such op
        return out
    for s in schemas:
        if not any(a.name == "self" or "Tensor" in str(a.type) or a.name in ("size", "dtype", "device")
                   for a in s.arguments):
            continue
        if all(_PRIMITIVE.match(str(a.type)) for a in s.arguments):
            continue
        params: List[Param] = []
        int_lists = set()
        for a in s.arguments:
            pname = a.name
            if pname == "self":
                if method:
                    continue
                pname = "input"
            if str(a.type) in ("List[int]", "List[SymInt]"):
                int_lists.add(pname)
            if a.has_default_value():
                dv = _code(a.default_value)
                default: Tuple[str, ...] = (dv,) if dv is not None else ("?",)
            elif pname == "out" and a.kwarg_only:
                default = ("None",)
            else:
                default = ()
            params.append((pname, default, "k" if a.kwarg_only else "p"))
        positional = [p for p in params if p[2] == "p"]
        if len(positional) == 1 and positional[0][0] in int_lists:
            # torch's argument parser takes a lone int-list parameter as varargs too: x.flip(0, 1), zeros(2, 3)
            params = [(p[0], p[1], "*") if p is positional[0] else p for p in params]
        if any(p[0] == "device" for p in params) and not any(p[0] == "requires_grad" for p in params):
            params.append(("requires_grad", ("False",), "k"))   # the Python binding's factory keyword
        out.append(params)
    return out


def _merge(overloads: Iterable[List[Param]]) -> Optional[Signature]:
    """One parameter list for every overload: each name once, in its first overload's order; the defaults of a
    name are those its overloads give when all of them give one (a name some overload requires keeps its other
    defaults too: the call without it is that of another overload)."""
    names: Dict[str, List] = {}
    seen = False
    for params in overloads:
        seen = True
        for pname, default, kind in params:
            entry = names.setdefault(pname, [set(), set()])
            entry[0].update(default)
            entry[1].add(kind)
    if not seen:
        return None
    kind = lambda ks: "*" if "*" in ks else "p" if "p" in ks else "k"   # noqa: E731
    return tuple((n, tuple(sorted(d)), kind(ks)) for n, (d, ks) in names.items()), False


def signature_of(source: str) -> Optional[Signature]:
    obj = resolve(source)
    if obj is None:
        return None
    method = source.startswith(("Tensor.", "Module.", "Optimizer."))
    if inspect.isclass(obj):
        return _from_inspect(obj, drop_first=False)
    sig = _from_inspect(obj, drop_first=method)
    if sig is not None and not (sig[1] and not [p for p in sig[0] if p[2] != "*"]):
        return sig    # a real parameter list (not a bare (*args, **kwargs) wrapper)
    name = source.rsplit(".", 1)[-1]
    overloads = _from_docstring(obj, name) + _from_schemas(name, method)
    return _merge(overloads) or sig


def current_signatures(sources: Iterable[str]) -> Dict[str, Signature]:
    import warnings

    out: Dict[str, Signature] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for source in sorted(set(sources)):
            if not source.startswith(_SOURCE_ROOTS):
                continue
            try:
                sig = signature_of(source)
            except Exception:   # an object whose signature torch cannot give
                sig = None
            if sig is not None:
                out[source] = sig
    return out


def record_sources() -> List[str]:
    from .registry import REGISTRY

    return [m.source for m in REGISTRY]


def write_signatures(path=None) -> str:
    from pathlib import Path

    import torch

    data = current_signatures(record_sources())
    version = torch.__version__.split("+")[0]
    path = Path(path or Path(__file__).with_name("torch_signature_data.py"))
    lines = ['"""torch\'s parameter lists for the mapping records\' sources (msmigrate/torch_signatures.py says how).',
             f"Generated from torch {version} by `python -m msmigrate.census --regenerate`; do not edit by hand.",
             '"""', "", f'TORCH_VERSION = "{version}"', "",
             "# source -> ((name, default codes (empty: required), kind p/k/*), ...), takes **kwargs",
             "SIGNATURES = {"]
    for source, sig in data.items():
        lines.append(f"    {source!r}: {sig!r},")
    lines.append("}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"{len(data)} signatures from torch {version} written to {path}"


def signature(source: str) -> Optional[Signature]:
    """The committed signature of a record's source (no torch needed); None when torch has none for it."""
    from .torch_signature_data import SIGNATURES

    return SIGNATURES.get(source)
