"""Rewriting one call from a `Mapping` record: bind arguments by name, translate
names and values, and emit the target call keeping each argument's own
formatting and comments."""
from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Tuple

import libcst as cst

from .records import Mapping

_NUM = re.compile(r"^-?\d+(\.\d*)?([eE][-+]?\d+)?$")


class UnsupportedSite(Exception):
    """The call uses a form the mapping cannot translate; the reason is the message."""


_EMPTY_MODULE = cst.Module(body=[])


def code_of(node: cst.CSTNode) -> str:
    if isinstance(node, cst.Name):
        return node.value
    return _EMPTY_MODULE.code_for_node(node)


def literal_string(node: Optional[cst.BaseExpression]) -> Optional[str]:
    """The value of a plain string literal (not an f-string), else None: an einops pattern, an einx description."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = ast.literal_eval(code_of(node).strip())
        except (ValueError, SyntaxError):
            return None
        return value if isinstance(value, str) else None
    return None


def parse_expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


# expressions that stay one operand wherever a template puts them (`{x}.dtype`, `{x} * 2`, `for t in {x}`)
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.FormattedString, cst.Float,
          cst.Imaginary, cst.List, cst.Dict, cst.Set, cst.ListComp, cst.SetComp, cst.DictComp, cst.Ellipsis)


def operand_code(node: cst.BaseExpression) -> str:
    """The expression's code as one operand: `a if c else b`, `a + b`, `-1`, `lambda: x` parenthesised (an
    operator, attribute or comprehension clause after or around them would bind to a part of them)."""
    text = code_of(node).strip()
    if isinstance(node, _ATOMS) or getattr(node, "lpar", None):
        return text
    return f"({text})"


def fold_template(template: str, value_code: str) -> str:
    """Fill a value template like "1 - {v}", folding it when the value is a number
    so `momentum=0.1` reads `momentum=0.9`, not `momentum=1 - 0.1`."""
    filled = template.replace("{v}", f"({value_code})" if not _NUM.match(value_code.strip()) else value_code.strip())
    if _NUM.match(value_code.strip()):
        try:
            val = eval(filled, {"__builtins__": {}}, {})  # numbers and operators only
            if isinstance(val, float):
                return repr(round(val, 12))
            return repr(val)
        except Exception:
            return filled
    return filled


# torch's argument parser (python_arg_parser.cpp, numpy_compatibility_arg_names) also takes NumPy's names
# for four parameters: `x.sum(axis=0)`, `torch.mean(x, keepdims=True)`, `torch.add(x, x2=y)`
NUMPY_ARGUMENT_NAMES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input",
                        "x2": "other"}


class BoundCall:
    """A call's arguments bound to the source API's parameter names."""

    def __init__(self, call: cst.Call, params: Tuple[str, ...], receiver: Optional[cst.BaseExpression] = None):
        self._call = call
        self.receiver = receiver
        self._order: List[str] = []              # names in source order
        self._args: Dict[str, cst.Arg] = {}
        self.positional: Dict[str, bool] = {}
        self.starred: List[cst.Arg] = []          # *args / **kwargs we cannot bind
        # what a rule read (argument_check.py): names asked for, and whether it read the arguments wholesale
        self.touched: set = set()
        self.wholesale = False
        pos = 0
        after_star = False
        for arg in call.args:
            if arg.star:
                # kept in source order (emit_call writes it back where it was); positional
                # arguments after *args cannot be bound by name
                self.starred.append(arg)
                name = f"__star{len(self.starred) - 1}"
                self._order.append(name)
                self._args[name] = arg
                self.positional[name] = False   # rules that read .starred see them only there
                after_star = after_star or arg.star == "*"
                continue
            if arg.keyword is None:
                if pos < len(params) and not after_star:
                    name = params[pos]
                else:
                    name = f"__pos{pos}"
                pos += 1
                self.positional[name] = True
            else:
                name = arg.keyword.value
                torch_name = NUMPY_ARGUMENT_NAMES.get(name)
                if name not in params and torch_name in params and torch_name not in self._args:
                    # a NumPy name that torch accepts for its own (a Python-level torch function without
                    # the name would have refused it, so the original never passed it to one)
                    name = torch_name
                    arg = arg.with_changes(keyword=cst.Name(torch_name))
                self.positional[name] = False
            self._order.append(name)
            self._args[name] = arg

    # read by a rule, the whole argument list counts as translated (argument_check.py)
    @property
    def call(self) -> cst.Call:
        self.wholesale = True
        return self._call

    @call.setter
    def call(self, value: cst.Call) -> None:
        self._call = value

    @property
    def order(self) -> List[str]:
        self.wholesale = True
        return self._order

    @property
    def args(self) -> Dict[str, cst.Arg]:
        self.wholesale = True
        return self._args

    def has(self, name: str) -> bool:
        self.touched.add(name)
        return name in self._args

    def value(self, name: str) -> Optional[cst.BaseExpression]:
        self.touched.add(name)
        a = self._args.get(name)
        return a.value if a is not None else None

    def code(self, name: str) -> Optional[str]:
        v = self.value(name)
        return code_of(v).strip() if v is not None else None

    def operand(self, name: str) -> Optional[str]:
        """The argument's code as one operand of a template (see operand_code)."""
        v = self.value(name)
        return operand_code(v) if v is not None else None

    def remove(self, name: str) -> None:
        self.touched.add(name)
        if name in self._args:
            del self._args[name]
            self._order.remove(name)

    def set(self, name: str, value_code: str, positional: bool = False) -> None:
        """Set or replace an argument's value (keeps the original Arg's whitespace)."""
        self.touched.add(name)
        expr = parse_expr(value_code)
        if name in self._args:
            self._args[name] = self._args[name].with_changes(value=expr)
        else:
            self._args[name] = cst.Arg(value=expr)
            self.positional[name] = positional
            self._order.append(name)

    def rename(self, old: str, new: str) -> None:
        self.touched.update((old, new))
        if old not in self._args or old == new:
            return
        arg = self._args.pop(old)
        if new == "has_bias" and isinstance(arg.value, cst.Integer):
            # torch's `bias` flag taken for its truth (`nn.Linear(d, h, 1)`, vit-pytorch's RegionViT); MindSpore's
            # has_bias must be a bool (TypeError naming no line)
            arg = arg.with_changes(value=cst.Name("True" if int(arg.value.value, 0) else "False"))
        self._args[new] = arg
        self.positional[new] = self.positional.pop(old)
        self._order[self._order.index(old)] = new


def apply_mapping(bound: BoundCall, m: Mapping) -> List[str]:
    """Translate argument names/values per the record. Returns notes for the report.
    Raises UnsupportedSite when an argument has no MindSpore counterpart."""
    notes: List[str] = []
    for name, why in m.unsupported.items():
        if bound.has(name):
            ok = m.unsupported_ok.get(name, ())
            if bound.code(name) not in ok:
                raise UnsupportedSite(f"argument {name}={bound.code(name)}: {why}")
            if m.rule is None and name not in m.target_args and name not in m.rename:
                # the value that changes nothing (LSTM's proj_size=0, out=None), for a target without the argument
                bound.remove(name)
    for name, bad in m.unsupported_values.items():
        if bound.has(name) and bound.code(name) in bad:
            raise UnsupportedSite(f"argument {name}={bound.code(name)} has no MindSpore counterpart")
    for name in m.drop:
        bound.remove(name)
    for name, table in m.values.items():
        c = bound.code(name)
        if c is not None and c in table:
            bound.set(name, table[c])
    for name, template in m.transforms.items():
        c = bound.code(name)
        if c is not None:
            bound.set(name, fold_template(template, c))
    for old, new in m.rename.items():
        bound.rename(old, new)
    for name, code in m.extra.items():
        if not bound.has(name):
            bound.set(name, code)
    return notes


def emit_call(bound: BoundCall, func: cst.BaseExpression, target_args: Tuple[str, ...],
              leading: Optional[List[cst.BaseExpression]] = None) -> cst.Call:
    """Build the target call. Arguments stay positional while they sit at the same
    position in the target signature; the rest become keywords."""
    new_args: List[cst.Arg] = []
    idx = 0
    for expr in leading or []:
        new_args.append(cst.Arg(value=expr))
        idx += 1
    keyword_mode = False
    for name in bound.order:
        arg = bound.args[name]
        was_positional = bound.positional.get(name, False)
        if (not keyword_mode and was_positional and idx < len(target_args)
                and target_args[idx] == name):
            new_args.append(arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT))
            idx += 1
            continue
        if name.startswith("__star"):
            new_args.append(arg)
            if arg.star == "*":
                idx += 1
            continue
        if was_positional and name.startswith("__pos"):
            # extra positional argument the record does not name: keep as is if we can
            if keyword_mode:
                raise UnsupportedSite("positional argument after a translated keyword")
            new_args.append(arg)
            idx += 1
            continue
        keyword_mode = True
        new_args.append(arg.with_changes(
            keyword=cst.Name(name),
            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                  whitespace_after=cst.SimpleWhitespace("")),
        ))
    # tidy commas: the last argument carries no trailing comma unless the source had one
    fixed: List[cst.Arg] = []
    for i, arg in enumerate(new_args):
        last = i == len(new_args) - 1
        if last:
            if isinstance(arg.comma, cst.Comma) and not _source_had_trailing_comma(bound.call):
                arg = arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        else:
            if not isinstance(arg.comma, cst.Comma):
                arg = arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        fixed.append(arg)
    return bound.call.with_changes(func=func, args=fixed)


def _source_had_trailing_comma(call: cst.Call) -> bool:
    return bool(call.args) and isinstance(call.args[-1].comma, cst.Comma)


def fill_template(template: str, bound: BoundCall, receiver_code: Optional[str] = None) -> str:
    """Fill an "expr:" template: {self} is the receiver, {name} a bound argument."""
    out = template
    if receiver_code is not None:
        out = out.replace("{self}", receiver_code)
    for name in list(bound.order):
        key, start = "{" + name + "}", 0
        while key in out[start:]:   # (a value's own text is not searched again)
            at = out.index(key, start)
            before, after = out[:at].rstrip()[-1:], out[at + len(key):].lstrip()[:1]
            value = _filled(bound, name, before, after)
            out, start = out[:at] + value + out[at + len(key):], at + len(value)
    if re.search(r"\{[a-zA-Z_]\w*\}", out):
        missing = re.findall(r"\{([a-zA-Z_]\w*)\}", out)
        raise UnsupportedSite(f"needs argument(s) {', '.join(missing)}")
    return out


def _filled(bound: BoundCall, name: str, before: str, after: str) -> str:
    """An argument's code where the template puts it: as written between delimiters (`f({x}, 2)`), as one
    operand anywhere else (`{x}.dtype` of `a if c else b` reads `(a if c else b).dtype`)."""
    if before in ("", "(", "[", ",") and after in ("", ")", "]", ","):
        return bound.code(name) or ""
    return bound.operand(name) or ""


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """`a.b.c` (Names and Attributes only) as its dotted text; None for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted_name(node.value)
        return f"{head}.{node.attr.value}" if head else None
    return None


class RuleContext:
    """What a rule function sees: the bound call and the ability to render names."""

    def __init__(self, tr, bound: BoundCall, original: cst.Call,
                 receiver: Optional[cst.BaseExpression]):
        self.tr = tr
        self.bound = bound
        self.original = original
        self.receiver = receiver

    def render(self, target: str) -> cst.BaseExpression:
        return self.tr.render(target)

    def expr(self, text: str) -> cst.BaseExpression:
        return self.tr._render_template(text)

    def code(self, name: str) -> Optional[str]:
        return self.bound.code(name)

    @staticmethod
    def tr_code(node: cst.CSTNode) -> str:
        return code_of(node).strip()

    def receiver_code(self) -> Optional[str]:
        """The receiver's code, parenthesised when it spans lines (a template puts it
        where a bare line break would not parse)."""
        if self.receiver is None:
            return None
        rc = code_of(self.receiver).strip()
        return f"({rc})" if "\n" in rc else rc

    @property
    def in_construct(self) -> bool:
        return self.tr._in_cell_method()
