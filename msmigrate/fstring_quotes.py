"""An f-string whose replacement fields the conversion filled with code quoting the f-string's own quote character,
or a backslash: `f"... {_ms_compat.Unconverted('torch.x', 'm:3', "...it's...")} ..."`. Python before 3.12 refuses
both inside a replacement field (a SyntaxError in the converted file, which was then copied unchanged, torch and
all: transformers' generation/continuous_batching/utils.py). Such an f-string becomes the concatenation it
stands for, `("..." + format(expr, "spec") + "...")`, with `!r`/`!s`/`!a` as repr/str/ascii, which any Python
reads; a `{expr = }` field is its text as written (the original's) and the value's repr, as Python writes it. An
f-string with a nested field in a format spec keeps its form (none was seen so)."""
from __future__ import annotations

from typing import List, Optional

import libcst as cst

from .callsite import code_of


def _quote(node: cst.FormattedString) -> str:
    return node.end


def _unsafe(node: cst.FormattedString) -> bool:
    quote = _quote(node)
    for part in node.parts:
        if isinstance(part, cst.FormattedStringExpression):
            text = code_of(part.expression)
            if quote in text or "\\" in text:
                return True
    return False


def _text(value: str, prefix: str, quote: str) -> cst.SimpleString:
    return cst.SimpleString(f"{prefix}{quote}{value}{quote}")


def _spec(parts, prefix: str, quote: str) -> Optional[cst.BaseExpression]:
    if not parts:
        return None
    if not all(isinstance(p, cst.FormattedStringText) for p in parts):
        return None
    return _text("".join(p.value for p in parts), prefix, quote)


def concatenated(node: cst.FormattedString, original: cst.FormattedString) -> Optional[cst.BaseExpression]:
    """The f-string as a concatenation of its texts and formatted fields; None where a field has a nested field in
    its format spec. `original`: the f-string as written (a `=` field's text)."""
    prefix = node.start[: -len(node.end)].lower().replace("f", "")
    quote = node.end
    terms: List[cst.BaseExpression] = []
    if len(original.parts) != len(node.parts):
        return None
    for part, written in zip(node.parts, original.parts):
        if isinstance(part, cst.FormattedStringText):
            if part.value:      # an f-string's `{{` is a plain string's `{`
                terms.append(_text(part.value.replace("{{", "{").replace("}}", "}"), prefix, quote))
            continue
        conversion = part.conversion
        if part.equal is not None:      # `{x = }`: "x = " then repr(x) (format(x, spec) with a spec)
            label = cst.Module([]).code_for_node(written.with_changes(conversion=None, format_spec=None))[1:-1]
            if quote in label or "\\" in label or "{" in label or "}" in label:
                return None
            terms.append(_text(label, prefix, quote))
            if conversion is None and not part.format_spec:
                conversion = "r"
        value = part.expression
        if conversion:
            func = {"r": "repr", "s": "str", "a": "ascii"}[conversion]
            value = cst.Call(func=cst.Name(func), args=[cst.Arg(value)])
        args = [cst.Arg(value)]
        if part.format_spec:
            spec = _spec(part.format_spec, prefix, quote)
            if spec is None:
                return None
            args.append(cst.Arg(spec))
        terms.append(cst.Call(func=cst.Name("format"), args=args))
    if not terms:
        return _text("", prefix, quote)
    out = terms[0]
    for term in terms[1:]:
        out = cst.BinaryOperation(left=out, operator=cst.Add(), right=term)
    return out.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if len(terms) > 1 else out


def readable(original: cst.FormattedString, updated: cst.FormattedString) -> cst.BaseExpression:
    """`updated` where every Python reads it, else its concatenation (or `updated` where none is written)."""
    if not _unsafe(updated):
        return updated
    return concatenated(updated, original) or updated
