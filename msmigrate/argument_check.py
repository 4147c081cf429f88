"""Every argument of a mapped call is one its record handles: nothing torch-shaped is copied through unseen.

Only records whose source has a signature (torch_signature_data.py: torch's own APIs) are judged.
A record knows the arguments it names (`args`, `kwonly`, `rename`, `drop`, `transforms`, `values`, `unsupported`;
for an "expr:" template, the slots it fills). Any other argument of the call would reach MindSpore as written (an
error naming no line, or a value MindSpore ignores or reads otherwise) or vanish, so the site becomes a TODO naming
the argument, unless its value is torch's own default (from torch's signature, torch_signatures.py): then the call
is the one without it and the argument is dropped. A rule that checks its calls' arguments itself (mappings/
compose.py's `composed` and `variadic`) marks its function `checks_arguments`.
"""
from __future__ import annotations

import ast
import re
from typing import List, Optional, Set

import libcst as cst

from .callsite import NUMPY_ARGUMENT_NAMES, BoundCall, UnsupportedSite, code_of
from .records import Mapping
from .torch_signatures import signature

_SLOT = re.compile(r"\{([A-Za-z_]\w*)\}")
_KEEP_ALL = ("drop", "identity")     # targets that discard their arguments by design (Tensor.cuda(device))


def handled(m: Mapping) -> Set[str]:
    """The argument names record m translates."""
    checked = set(m.drop) | set(m.unsupported) | set(m.kwonly)
    if m.rule is None and m.target and m.target.startswith("expr:"):
        return checked | set(_SLOT.findall(m.target))   # an argument no slot takes would vanish
    return checked | set(m.args) | set(m.rename) | set(m.transforms) | set(m.values) | set(m.unsupported_values)


def _value(code: str):
    try:
        node = ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        return None
    try:
        v = ast.literal_eval(node)
        return ("lit", type(v) is bool, v)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return ("code", ast.dump(node))


def is_default(code: str, defaults) -> bool:
    """The argument's code is one of torch's defaults for it (`1` is `1.0`; `True` is not `1`)."""
    got = _value(code)
    return got is not None and any(_value(d) == got for d in defaults if d != "?")


def _original_codes(original: cst.Call):
    """keyword -> code as the program wrote it (before its torch names were converted)."""
    return {a.keyword.value: code_of(a.value).strip() for a in original.args if a.keyword is not None}


def torch_params(source: str):
    sig = signature(source)
    return (None, False) if sig is None else ({p[0]: p for p in sig[0]}, sig[1])


def foreign_keywords(m: Mapping, call: cst.Call) -> bool:
    """A keyword torch's own method does not take, or more positional arguments than it takes: on a receiver of
    unknown type, the call is another object's method of the same name (a DataFrame's sum(numeric_only=True), a
    NumPy image's transpose(2, 0, 1))."""
    params, open_ = torch_params(m.source)
    if params is None or any(a.star for a in call.args):
        return False
    positional = sum(a.keyword is None for a in call.args)
    if not any(p[2] == "*" for p in params.values()) and positional > sum(p[2] == "p" for p in params.values()):
        return True
    return not open_ and any(a.keyword is not None and a.keyword.value not in params
                             and NUMPY_ARGUMENT_NAMES.get(a.keyword.value) not in params for a in call.args)


def _drop(bound: BoundCall, name: str) -> None:
    """Remove an argument from the bound call and from its call (a rule may read the call's own arguments)."""
    arg = bound._args.get(name)
    bound.remove(name)
    if arg is not None:
        call = bound._call
        bound._call = call.with_changes(args=[a for a in call.args if a is not arg])


def _why(m: Mapping, bound: BoundCall, name: str, params, open_, written=None) -> str:
    code = (written or {}).get(name) or code_of(bound._args[name].value).strip()
    if name.startswith("__pos"):
        index = int(name[len("__pos"):])
        pos_names = [p[0] for p in params.values() if p[2] in ("p", "*")] if params is not None else []
        torch_name = pos_names[index] if index < len(pos_names) else None
        what = f"positional argument {index + 1} ({torch_name}={code})" if torch_name else \
            f"positional argument {index + 1} ({code})"
        return f"{what} is not translated by the {m.source} mapping"
    if params is not None and name not in params and not open_:
        return f"argument {name}={code}: torch's {m.source} takes no argument {name}"
    return (f"argument {name}={code} is not translated by the {m.source} mapping (MindSpore would ignore it or read "
            f"it otherwise)")


def check(m: Mapping, bound: BoundCall, original: Optional[cst.Call] = None) -> List[str]:
    """Before the record converts the call: drop the arguments of `bound` that the record does not handle and that
    carry torch's default; raise UnsupportedSite naming the first other one. For a rule record, returns those
    others instead: the rule may read them (`finish` judges after it ran)."""
    if bound.starred or (m.rule is not None and getattr(m.rule, "checks_arguments", False)) or \
            m.target in _KEEP_ALL or m.takes_torch_args:
        return []       # (a target taking torch's whole signature: torch's arguments mean the same to it)
    params, open_ = torch_params(m.source)
    if params is None:
        return []       # no signature of the source (einops' **axes_lengths, another library's API): not judged
    known = handled(m)
    written = _original_codes(original) if original is not None else {}
    variadic = params is not None and any(p[2] == "*" for p in params.values())
    pos_names = [p[0] for p in params.values() if p[2] in ("p", "*")] if params is not None else []
    order = list(bound._order)
    last_pos = max((n for n in order if n.startswith("__pos")), key=lambda n: int(n[5:]), default=None)
    pending: List[str] = []
    for name in order:
        if name in known:
            continue
        code = code_of(bound._args[name].value).strip()
        if name.startswith("__pos"):
            if variadic or (not m.args and m.rule is not None):
                continue      # torch's *size / a rule that reads the positional arguments itself
            index = int(name[len("__pos"):])
            torch_name = pos_names[index] if index < len(pos_names) else None
            param = params.get(torch_name) if (params is not None and torch_name is not None) else None
            if param is not None and name == last_pos and is_default(code, param[1]):
                _drop(bound, name)
                continue
        else:
            param = params.get(name) if params is not None else None
            if param is not None and is_default(written.get(name, code), param[1]):
                _drop(bound, name)      # torch's default: the call is the one without it
                continue
            if param is None and open_:
                continue    # torch passes it on through **kwargs (skip_init's to the module, StackDataset's items)
        pending.append(name)
    if pending and m.rule is None:
        raise UnsupportedSite(_why(m, bound, pending[0], params, open_, written))
    bound.touched = set()
    bound.wholesale = False
    bound.written = written
    return pending


def finish(m: Mapping, bound: BoundCall, pending: List[str], passed_on: bool) -> None:
    """After a rule ran: an argument it neither read nor left for the record's own mapping (`passed_on`: the rule
    returned a target name, so the record's args pass to it) is a TODO."""
    if not pending or bound.wholesale:
        return
    known = handled(m) if passed_on else set()
    left = [n for n in pending if n not in bound.touched and n not in known and n in bound._args]
    if left:
        params, open_ = torch_params(m.source)
        raise UnsupportedSite(_why(m, bound, left[0], params, open_, getattr(bound, "written", None)))
