"""Records whose conversion is one MindSpore expression over the call's arguments.

`composed(source, template, args, ...)` declares a rule record: the call's arguments are bound to torch's
parameter names (`args`, in torch's positional order), every argument must be one the template knows
(an unknown keyword, an extra positional argument, *args/**kwargs or out= make the site a TODO: nothing
is dropped unseen), a missing argument takes its torch default from `defaults` (an argument with no
default is required), and the template's `{name}` slots receive the argument code, parenthesised when it
is not a plain name or number. An argument the template uses more than once and whose code is not a
plain name is evaluated once, through a lambda (which also runs inside ms.jit).
"""
from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import libcst as cst

from ..callsite import UnsupportedSite, code_of
from ..records import CONVERTED, rule

_SIMPLE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$|^-?\d+(\.\d*)?([eE][-+]?\d+)?$|^'[^']*'$|^\"[^\"]*\"$")
_SLOT = re.compile(r"\{([A-Za-z_]\w*)\}")
OUT_NOTE = "out= has no MindSpore counterpart (MindSpore functions return new tensors): assign the result"
# torch factory arguments with no meaning in MindSpore (placement, autograd flag, layout)
FACTORY_DROP = ("device", "requires_grad", "layout", "pin_memory")


def translated_order(b, known: Sequence[str]):
    """The arguments of a bound call in their order; *args/**kwargs or one outside `known` is a TODO."""
    if b.starred:
        raise UnsupportedSite("*args/**kwargs cannot be translated argument by argument")
    for name in b.order:
        if name not in known:
            raise UnsupportedSite(f"argument {name.lstrip('_')} is not translated")
    return list(b.order)


def tensor_args(b) -> List[str]:
    """The arguments of a call of *tensors (block_diag(a, b, c), broadcast_tensors(*xs)), in order: each one's
    code, a starred one with its `*`; a keyword argument, **kwargs or no argument at all is a TODO."""
    parts = []
    for arg in b.call.args:
        if arg.keyword is not None or arg.star == "**":
            raise UnsupportedSite("keyword arguments are not translated")
        parts.append(("*" if arg.star == "*" else "") + code_of(arg.value).strip())
    if not parts:
        raise UnsupportedSite("no tensors given")
    return parts


def through_twin(ctx, name: str, record, args):
    """The call name(*args) converted by `record` (the twin's own), reported once, as the site's name."""
    call = cst.Call(func=cst.Name(name), args=args)
    before = len(ctx.tr.sites)
    out = ctx.tr._apply(call, call, record, record.source, receiver=None)
    del ctx.tr.sites[before:]
    return out


def _paren(code: str) -> str:
    return code if _SIMPLE.match(code) else f"({code})"


def fill(template: str, values: Dict[str, str]) -> str:
    """The template with each {name} replaced; arguments used twice are bound once via a lambda."""
    uses: Dict[str, int] = {}
    for name in _SLOT.findall(template):
        uses[name] = uses.get(name, 0) + 1
    shared = [n for n, k in uses.items() if k > 1 and not _SIMPLE.match(values[n])]
    if not shared:
        return _SLOT.sub(lambda mt: _paren(values[mt.group(1)]), template)
    params = {n: f"_ms_{n}" for n in shared}
    body = _SLOT.sub(lambda mt: params.get(mt.group(1)) or _paren(values[mt.group(1)]), template)
    return f"(lambda {', '.join(params.values())}: {body})({', '.join(values[n] for n in shared)})"


def _lambda_params(source: str, template: str, known: Sequence[str], defaults: Dict[str, str]) -> Optional[List[str]]:
    """The template's lambda parameters (`_ms_a`, `_ms_b=default`) where torch's signature (torch_signature_data.py)
    takes no *args of its own and its positional parameters are the record's arguments in order; else None."""
    from ..torch_signature_data import SIGNATURES   # data generated from torch (no engine import)

    sig = SIGNATURES.get(source)
    if sig is None or sig[1] or any(kind == "*" for _, _, kind in sig[0]):
        return None
    positional = [name for name, _, kind in sig[0] if kind == "p"]
    if positional != list(known) or any(n not in known for n in _SLOT.findall(template)):
        return None
    params, defaulted = [], False
    for name in known:
        if name in defaults:
            params.append(f"_ms_{name}={defaults[name]}")
            defaulted = True
        elif defaulted:
            return None
        else:
            params.append(f"_ms_{name}")
    return params


def value_lambda(source: str, template: str, known: Sequence[str], defaults: Dict[str, str]) -> Optional[str]:
    """`(lambda _ms_a, _ms_b=default: <template>)` where torch's signature takes no *args and its positional
    parameters are the record's arguments in order; else None."""
    params = _lambda_params(source, template, known, defaults)
    if params is None:
        return None
    return f"(lambda {', '.join(params)}: {fill(template, {n: f'_ms_{n}' for n in known})})"


def starred_call(source: str, template: str, known: Sequence[str], defaults: Dict[str, str], call: cst.Call) -> str:
    """A call given `*args` (`torch.lu_unpack(*A.lu())`, Invertible1x1Conv's LU parametrisation): the template as a
    lambda with torch's positional parameters, their defaults and nothing else, called with the arguments as
    written, so Python binds them as torch's signature does (a count torch refuses is the same TypeError).
    Only where torch's signature (torch_signature_data.py) takes no *args of its own and its positional
    parameters are the record's arguments in order; anything else stays a TODO."""
    params = _lambda_params(source, template, known, defaults)
    args = list(call.args)
    if params is None or any(a.keyword is not None or a.star == "**" for a in args) \
            or [a.star for a in args].count("*") != 1 or args[-1].star != "*":
        raise UnsupportedSite("*args/**kwargs cannot be translated argument by argument")
    body = fill(template, {n: f"_ms_{n}" for n in known})
    given = ", ".join(("*" if a.star else "") + code_of(a.value).strip() for a in args)
    return f"(lambda {', '.join(params)}: {body})({given})"


def composed(source: str, template: str, args: Sequence[str], defaults: Optional[Dict[str, str]] = None,
             note: str = "", test: str = "", status: str = CONVERTED, target: Optional[str] = None,
             drop: Tuple[str, ...] = (), literal: Tuple[str, ...] = (), only: Optional[Dict[str, Tuple[str, ...]]] = None,
             absent: Optional[Dict[str, str]] = None, prepare: Optional[Callable] = None,
             keywords: Optional[Dict[str, str]] = None, star_args: bool = False):
    """Declare the record. `target` is the MindSpore name the report shows (default: the template's first
    call); `drop` lists torch arguments that mean nothing in MindSpore (device=...); `literal` lists arguments
    that must be written as literals (their value shapes the emitted code, e.g. a Python int n); `only` maps an
    argument to the values (source code) the template supports, any other value is a TODO; `absent` maps an
    argument to the template used when the call does not give it (torch.median(x) vs torch.median(x, dim)), the first absent one listed wins;
    `prepare(ctx)` may rewrite an argument of the bound call first (mappings/edge_args.py); `keywords` maps the
    keyword names of torch's other overloads to the argument they give (tensor_split(x, sections=3) is
    indices_or_sections=3). `star_args`: a call given *args binds them through torch's positional parameters
    (starred_call), for a record whose torch API is one Python function (no overloads whose positional orders
    differ, which torch_signature_data.py's union of them cannot tell)."""
    defaults = dict(defaults or {})
    known = tuple(args)

    def fn(ctx):
        b = ctx.bound
        if b.starred:
            if not star_args or keywords or prepare is not None or literal or only or absent:
                raise UnsupportedSite("*args/**kwargs cannot be translated argument by argument")
            return ctx.expr(starred_call(source, template, known, defaults, b.call))
        for alias, name in (keywords or {}).items():
            if b.has(alias) and not b.has(name):
                b.rename(alias, name)
        if prepare is not None:
            prepare(ctx)
        values: Dict[str, str] = {}
        chosen = next((t for a, t in (absent or {}).items() if not b.has(a) or b.code(a) == "None"), template)
        for name in b.order:
            code = b.code(name)
            if name == "out":
                if code != "None":
                    raise UnsupportedSite(f"argument out={code}: {OUT_NOTE}")
                continue
            if name in drop:
                continue
            if name == "dtype" and code == "None" and name in defaults:
                continue    # torch's dtype=None is its default dtype: the record's default
            if name not in known:
                raise UnsupportedSite(f"argument {name.lstrip('_')} is not translated")
            values[name] = code
        for name in known:
            if name not in values:
                if name not in defaults:
                    if name in (absent or {}):
                        continue
                    raise UnsupportedSite(f"argument {name} is required")
                values[name] = defaults[name]
        for name in literal:
            if name in values and not re.match(r"^-?\d+$|^None$|^True$|^False$", values[name]):
                raise UnsupportedSite(f"argument {name}={values[name]} must be a literal here")
        for name, ok in (only or {}).items():
            if name in values and values[name] not in ok:
                raise UnsupportedSite(f"argument {name}={values[name]} is not translated (supported: {', '.join(ok)})")
        unused = [n for n in b.order if n in values and "{" + n + "}" not in chosen and values[n] != "None"]
        if chosen is not template and unused:
            raise UnsupportedSite(f"argument {unused[0]} without the arguments it goes with")
        return ctx.expr(fill(chosen, {k: v for k, v in values.items() if "{" + k + "}" in chosen}))

    def value_form() -> Optional[str]:
        """The function used as a value (s4's `_c2r = torch.view_as_real`): the template as a lambda of torch's
        positional parameters (as starred_call writes it); None where the record needs more than that (a TODO:
        its first call's name, ops.stack, would compute something else)."""
        if keywords or prepare is not None or literal or only or absent or drop:
            return None
        return value_lambda(source, template, known, defaults)

    fn.checks_arguments = True   # every argument is checked above (argument_check.py)
    fn.handles_starred = True    # *args: starred_call, or a TODO
    fn.value_form = value_form
    first = re.match(r"[\w.]+", template.lstrip("("))
    head = target or (first.group(0) if first else template)
    shown = target or ("mindspore." + head if head.startswith("ops.") else
                       "mindspore" + head[2:] if head.startswith("ms.") else head)
    rule(source, shown, args=known, note=note, status=status, test=test)(fn)


def variadic(source: str, target: str, note: str = "", test: str = "", status: str = CONVERTED,
             join: Optional[str] = None, one: Optional[str] = None):
    """A torch function of *tensors (block_diag(a, b, c)): the positional arguments, starred ones included, pass
    through in order; any keyword argument is a TODO. `join` ("ops.matmul") folds them left to right instead;
    `one` ("{0}") is the template for a single, unstarred tensor."""
    def fn(ctx):
        parts = tensor_args(ctx.bound)
        if one is not None and len(parts) == 1 and not parts[0].startswith("*"):
            return ctx.expr(one.format(parts[0]))
        if join is None:
            return ctx.expr(f"{target}({', '.join(parts)})")
        if any(p.startswith("*") for p in parts):
            raise UnsupportedSite("*args: the number of factors is not known when converting")
        text = parts[0]
        for p in parts[1:]:
            text = f"{join}({text}, {p})"
        return ctx.expr(text)

    fn.handles_starred = True
    fn.checks_arguments = True
    shown = target if target.startswith("mindspore") else "mindspore." + (join or target)
    rule(source, shown, note=note, status=status, test=test)(fn)
