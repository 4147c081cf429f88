"""Python float scalars inside code GRAPH mode compiles, where MindSpore 2.10 computes something else than
Python, silently (measured):

- `int(E)` / `math.floor(E)` / `math.ceil(E)` of plain-number arithmetic (`int(self.ratio * n)`,
  `int(n * (1 - self.prob))`): GRAPH mode does the float arithmetic in float32, so a result Python puts just
  below an integer lands on it (`int(0.29 * 100)`: 29 there, 28 in Python). The operands reach a constexpr
  as Python's own ints and floats: `_ms_compat.float_rounded("int", ("*", self.ratio, n), "file:line")`
  computes the whole on the host, as Python does (templates/compat_parts/graph_scalars.py).
- `"%d rows" % x.shape[0]` (the right operand read off a tensor) then used in tensor arithmetic
  (`h + len(label)`): GRAPH mode evaluates the formatting by its Python fallback, and the gradient through
  that arithmetic is 0. `_ms_compat.percent_format("%d rows", x.shape[0])` is the same string and keeps it."""
from __future__ import annotations

from typing import Optional

import libcst as cst

_OPERATORS = {cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/"}
_ROUNDINGS = {"int": "int", "math.floor": "floor", "math.ceil": "ceil"}
_STRINGS = (cst.SimpleString, cst.ConcatenatedString)
_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _tree(node: cst.BaseExpression, leaves: list) -> cst.BaseExpression:
    """`a * (1 - b)` -> `("*", a, ("-", 1, b))`; any other expression is a leaf (collected in `leaves`)."""
    op = _OPERATORS.get(type(node.operator)) if isinstance(node, cst.BinaryOperation) else None
    if op is None:
        leaves.append(node)
        return node.with_changes(lpar=[], rpar=[]) if getattr(node, "lpar", None) and \
            not isinstance(node, (cst.Tuple, cst.GeneratorExp, cst.NamedExpr, cst.Yield)) else node
    return cst.Tuple([cst.Element(cst.SimpleString(repr(op)), comma=_COMMA),
                      cst.Element(_tree(node.left, leaves), comma=_COMMA),
                      cst.Element(_tree(node.right, leaves))])


def _arithmetic(call: cst.Call) -> Optional[cst.BinaryOperation]:
    """The one positional argument of `call` when it is + - * / arithmetic."""
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    arg = call.args[0].value
    return arg if isinstance(arg, cst.BinaryOperation) and type(arg.operator) in _OPERATORS else None


def float_rounding_graph_safe(original: cst.Call, call: cst.Call, rounding: str, compat: str, where: str, is_tensor
                              ) -> Optional[cst.Call]:
    """`int(a * b)` (rounding "int", "math.floor" or "math.ceil") -> `<compat>.float_rounded("int", ("*", a, b),
    where)`; None when the argument is no + - * / arithmetic, or one of its operands in the original is a tensor
    (`is_tensor`: a tensor's arithmetic is float32 in torch too)."""
    arg, before = _arithmetic(call), _arithmetic(original)
    if arg is None or before is None:
        return None
    leaves: list = []
    _tree(before, leaves)
    if any(is_tensor(leaf) for leaf in leaves):
        return None
    tree = _tree(arg, [])
    return cst.Call(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name("float_rounded")),
                    args=[cst.Arg(cst.SimpleString(repr(_ROUNDINGS[rounding])), comma=_COMMA),
                          cst.Arg(tree, comma=_COMMA), cst.Arg(cst.SimpleString(repr(where)))],
                    lpar=call.lpar, rpar=call.rpar)


def rounding_name(qualified: Optional[str]) -> Optional[str]:
    """"int", "math.floor" or "math.ceil" when `qualified` names one of them, else None."""
    return qualified if qualified in _ROUNDINGS else None


def percent_format_graph_safe(node: cst.BinaryOperation, compat: str) -> Optional[cst.Call]:
    """`"..." % args` -> `<compat>.percent_format("...", args)`; None for any other operation."""
    if not (isinstance(node.operator, cst.Modulo) and isinstance(node.left, _STRINGS)):
        return None
    right = node.right
    if getattr(right, "lpar", None) and not isinstance(right, (cst.Tuple, cst.GeneratorExp, cst.NamedExpr)):
        right = right.with_changes(lpar=[], rpar=[])
    return cst.Call(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name("percent_format")),
                    args=[cst.Arg(node.left, comma=_COMMA), cst.Arg(right)], lpar=node.lpar, rpar=node.rpar)
