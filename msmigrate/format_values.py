"""Tensors formatted with a format spec: `f"{loss:.4f}"`, `"{:.4f}".format(loss)`.

torch's Tensor.__format__ formats a 0-d tensor as its Python number (`self.item().__format__(spec)`);
MindSpore's Tensor has no __format__ of its own, so `f"{loss:.4f}"` raises TypeError ("unsupported
format string passed to Tensor.__format__"; nanoGPT's train.py prints its estimated losses, 0-d tensors,
that way). A field with a format spec whose value may be a tensor becomes
`_ms_compat.format_value(value)` (templates/compat_parts/format_values.py): the number for a 0-d
tensor, the value itself otherwise (a tensor of more dimensions still raises, as in torch). Fields
without a spec, or with a !r/!s conversion, format through str/repr and are left alone. A format string
not written at the call whose values come as `**mapping` (AverageMeter's `fmtstr.format(**self.__dict__)`)
becomes `_ms_compat.format_str(fmtstr, **mapping)`: the same rule, applied when it runs."""
from __future__ import annotations

import string
from typing import Optional, Set, Union

import libcst as cst

HELPER = "_ms_compat.format_value"
# values that are never tensors: literals, and calls that give Python numbers or strings
_PLAIN_CALLS = {"len", "int", "float", "str", "round", "abs", "min", "max", "sum", "repr", "bool", "format"}
_PLAIN_METHODS = {"item", "tolist", "numel", "dim", "format", "join", "upper", "lower"}


def _plain(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString,
                         cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)):
        return True
    if isinstance(node, cst.Call):
        f = node.func
        if isinstance(f, cst.Name) and f.value in _PLAIN_CALLS:
            return True
        if isinstance(f, cst.Attribute) and f.attr.value in _PLAIN_METHODS:
            return True
    return False


def _maybe_tensor(tr, node: cst.BaseExpression) -> bool:
    """A name, attribute, subscript or call that may hold a tensor; arithmetic only when known to be one
    (`100. * i / len(loader)` stays as written)."""
    if _plain(node) or tr._receiver_kind(node) == "other":
        return False
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and tr._receiver_kind(node.func.value) == "other":
        return False    # time.time(), np.mean(...): a function of another module
    if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
        return True
    return tr._receiver_kind(node) == "tensor"


def _wrap(tr, value: cst.BaseExpression) -> cst.BaseExpression:
    return cst.Call(func=tr._render_template(HELPER), args=[cst.Arg(value)])


def field(tr, original: cst.FormattedStringExpression,
          updated: cst.FormattedStringExpression) -> cst.FormattedStringExpression:
    """`{value:spec}` in an f-string."""
    if original.format_spec is None or not original.format_spec or original.conversion is not None \
            or not _maybe_tensor(tr, original.expression):
        return updated
    return updated.with_changes(expression=_wrap(tr, updated.expression))


def _spec_fields(text: str) -> Optional[Set[Union[int, str]]]:
    """The positional indices and keyword names whose fields carry a format spec (no conversion), or
    None where the string is not a format string this reads (attribute/index fields, bad syntax)."""
    out: Set[Union[int, str]] = set()
    auto = 0
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError:
        return None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name == "":
            key: Union[int, str] = auto
            auto += 1
        elif name.isdigit():
            key = int(name)
        elif name.isidentifier():
            key = name
        else:
            return None      # `{0.x}`, `{a[1]}`: the spec applies to a part of the value
        if spec and conversion is None:
            if "{" in spec:
                return None  # a nested field in the spec
            out.add(key)
    return out


MAPPED = "_ms_compat.format_str"


def _mapped_format(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.Call]:
    """`fmtstr.format(**self.__dict__)`: a format string not written at the call, its values in a mapping
    (which fields carry a spec, and which values are tensors, is known only when it runs):
    `_ms_compat.format_str(fmtstr, **self.__dict__)`, str.format with format_value on fields with a spec."""
    if not any(a.star == "**" for a in original.args) or tr._receiver_kind(original.func.value) == "other":
        return None
    return cst.Call(func=tr._render_template(MAPPED), args=[cst.Arg(updated.func.value)] + list(updated.args))


def _builtin_format(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.Call]:
    """`format(loss, ".2f")` (the builtin, not shadowed) with a spec: its value through format_value."""
    if len(original.args) != 2 or any(a.star or a.keyword for a in original.args) or tr._shadowed("format") \
            or not _maybe_tensor(tr, original.args[0].value):
        return None
    spec = original.args[1].value
    if isinstance(spec, cst.SimpleString) and not spec.evaluated_value:
        return None      # format(x, ""): str(x), as torch's
    first = updated.args[0]
    return updated.with_changes(args=[first.with_changes(value=_wrap(tr, first.value))] + list(updated.args[1:]))


def format_call(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.Call]:
    """`"...{:.4f}...".format(a, b=...)` on a string literal: the arguments of fields with a spec;
    `format(value, spec)`, the builtin, likewise."""
    f = original.func
    if isinstance(f, cst.Name) and f.value == "format":
        return _builtin_format(tr, original, updated)
    if isinstance(f, cst.Attribute) and f.attr.value == "format" and not isinstance(
            f.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return _mapped_format(tr, original, updated)
    if not (isinstance(f, cst.Attribute) and f.attr.value == "format" and isinstance(f.value, cst.SimpleString)):
        return None
    try:
        text = f.value.evaluated_value
    except Exception:    # noqa: BLE001 - a bytes literal or an unusual prefix: left alone
        return None
    if not isinstance(text, str):
        return None
    keys = _spec_fields(text)
    if not keys or any(a.star for a in original.args):
        return None
    args = list(updated.args)
    changed = False
    position = 0
    for i, (o, u) in enumerate(zip(original.args, updated.args)):
        key = o.keyword.value if o.keyword is not None else position
        if o.keyword is None:
            position += 1
        if key in keys and _maybe_tensor(tr, o.value):
            args[i] = u.with_changes(value=_wrap(tr, u.value))
            changed = True
    return updated.with_changes(args=args) if changed else None
