"""Where an unconverted torch API may stay a lazy placeholder and where it must raise.

The first rule: a converted program computes what the original computes, or stops with
`_ms_compat.MigrationError` naming the original site. A placeholder object
(`_ms_compat.Unconverted(...)`) raises on every use, but `x is None`, storing it or passing
it along cannot be intercepted; so a placeholder is only written where a definition runs on
import (a module- or class-level name, a default value, a base class, a decorator) and the
module must stay importable. Everywhere else (function bodies, `if __name__ == "__main__":`,
module-level statements that act rather than define, `except`/`with`/`for` headers) the site
is written so that evaluating it raises: `Unconverted(...).reached()` or `Unconverted(...)(args)`.
"""
from __future__ import annotations

from typing import List, Optional

import libcst as cst
import libcst.matchers as m

from .scope_names import all_params as _all_params

COMPAT = "_ms_compat"

# kinds of statements, kept on a stack while converting
DEFINE = "define"    # binds names only: a placeholder may stand there
RUN = "run"          # acts: reaching a placeholder raises
MAIN = "main"        # `if __name__ == "__main__":`: everything under it runs
NOT_MAIN = "else"    # its `else:` branch, which runs on import

_PLACEHOLDER = m.Call(func=m.Attribute(value=m.Name(COMPAT), attr=m.Name("Unconverted")))


def statement_kind(node: cst.CSTNode, at_module_level: bool) -> str:
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return DEFINE
    if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return DEFINE if all(_defines(s) for s in node.body) else RUN
    if isinstance(node, cst.If) and at_module_level and _is_main_test(node.test):
        return MAIN
    return RUN


def _defines(small: cst.BaseSmallStatement) -> bool:
    if isinstance(small, (cst.Import, cst.ImportFrom, cst.Pass)):
        return True
    if isinstance(small, cst.Assign):
        return all(_name_target(t.target) for t in small.targets)
    if isinstance(small, cst.AnnAssign):
        return isinstance(small.target, cst.Name)
    return False


def _name_target(t: cst.BaseExpression) -> bool:
    if isinstance(t, cst.Name):
        return True
    if isinstance(t, cst.StarredElement):
        return _name_target(t.value)
    if isinstance(t, (cst.Tuple, cst.List)):
        return all(_name_target(e.value) for e in t.elements)
    return False


def _is_main_test(test: cst.BaseExpression) -> bool:
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    sides = [test.left, test.comparisons[0].comparator]
    return (isinstance(test.comparisons[0].operator, cst.Equal)
            and any(isinstance(s, cst.Name) and s.value == "__name__" for s in sides)
            and any(isinstance(s, cst.SimpleString) and s.evaluated_value == "__main__" for s in sides))


def lazy_site(kinds: List[str], in_function: bool, import_time: bool) -> bool:
    """A definition that runs on import (default values, decorators and annotations count,
    also in nested functions): a placeholder may stand there. Elsewhere the site raises."""
    if import_time:
        return True
    if in_function or _under_main(kinds):
        return False
    return bool(kinds) and kinds[-1] == DEFINE


def _under_main(kinds: List[str]) -> bool:
    main = False
    for k in kinds:
        if k in (MAIN, NOT_MAIN):
            main = k == MAIN
    return main


def placeholder(api: str, where: str, why: str) -> cst.Call:
    return cst.parse_expression(f"{COMPAT}.Unconverted({api!r}, {where!r}, {why!r})")


def reached(ph: cst.Call) -> cst.Call:
    """The placeholder evaluated where the program runs: raises there."""
    return cst.Call(func=cst.Attribute(value=ph, attr=cst.Name("reached")))


def find_placeholder(node: cst.CSTNode) -> Optional[cst.Call]:
    found = m.findall(node, _PLACEHOLDER)
    return found[0] if found else None


def is_placeholder(node: Optional[cst.CSTNode]) -> bool:
    return node is not None and m.matches(node, _PLACEHOLDER)


def api_of(ph: cst.Call) -> str:
    first = ph.args[0].value if ph.args else None
    return first.evaluated_value if isinstance(first, cst.SimpleString) else "torch code"


# ------------------------------------------------------------ default values
def checked_defaults(fn: cst.FunctionDef) -> cst.FunctionDef:
    """A default value that is a placeholder is only reached when a call leaves its
    parameter out: the function's first statement checks that."""
    names = [p.name.value for p in _all_params(fn.params) if is_placeholder(p.default)]
    if not names:
        return fn
    call = ", ".join(f"{n}={n}" for n in names)
    check = cst.parse_statement(f"{COMPAT}.unconverted_defaults({call})\n")
    body = fn.body
    if isinstance(body, cst.SimpleStatementSuite):
        stmts = [cst.SimpleStatementLine(body=list(body.body))]
    else:
        stmts = list(body.body)
    at = 1 if stmts and _is_docstring(stmts[0]) else 0
    if len(stmts) > at and m.matches(stmts[at], m.SimpleStatementLine(body=[m.Expr(value=m.Call(
            func=m.Attribute(value=m.Name(COMPAT), attr=m.Name("unconverted_defaults"))))])):
        return fn          # converted before
    stmts.insert(at, check)
    if isinstance(body, cst.SimpleStatementSuite):
        return fn.with_changes(body=cst.IndentedBlock(body=stmts))
    return fn.with_changes(body=body.with_changes(body=stmts))


def checked_lambda(fn: cst.Lambda) -> cst.Lambda:
    """The same check in a lambda, whose body is one expression: `(check, body)[1]`."""
    names = [p.name.value for p in _all_params(fn.params) if is_placeholder(p.default)]
    if not names or m.matches(fn.body, m.Subscript(value=m.Tuple(elements=[m.Element(value=m.Call(
            func=m.Attribute(value=m.Name(COMPAT), attr=m.Name("unconverted_defaults")))), m.DoNotCare()]))):
        return fn
    call = ", ".join(f"{n}={n}" for n in names)
    check = cst.parse_expression(f"{COMPAT}.unconverted_defaults({call})")
    body = cst.Subscript(value=cst.Tuple([cst.Element(check), cst.Element(fn.body.with_changes(lpar=[], rpar=[]))]),
                         slice=[cst.SubscriptElement(cst.Index(cst.Integer("1")))])
    return fn.with_changes(body=body)


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, (cst.SimpleString,
                                                                                        cst.ConcatenatedString)))


def single_default(default: cst.BaseExpression) -> cst.BaseExpression:
    """A default value holding a placeholder inside a bigger expression would fail when the
    function is defined: the whole default becomes that placeholder (the TODO comment keeps
    the original)."""
    if is_placeholder(default):
        return default
    ph = find_placeholder(default)
    return ph if ph is not None else default


# ------------------------------------------------------------ definitions
def guarded_definition(stmt: cst.SimpleStatementLine, where: str, leading_lines) -> Optional[cst.Try]:
    """A module- or class-level definition whose value uses a placeholder inside an
    expression: if evaluating it fails because of the placeholder, the names it defines
    become placeholders (import goes on, using them raises); any other error propagates."""
    names: List[str] = []
    for small in stmt.body:
        targets = []
        if isinstance(small, cst.Assign):
            targets = [t.target for t in small.targets]
        elif isinstance(small, cst.AnnAssign):
            targets = [small.target]
        for t in targets:
            names += _target_names(t)
    if not names:
        return None
    handler = [cst.parse_statement(f"{n} = {COMPAT}.unconverted_definition(_ms_error, {n!r}, {where!r})\n")
               for n in dict.fromkeys(names)]
    return cst.Try(
        body=cst.IndentedBlock(body=[stmt.with_changes(leading_lines=[])]),
        handlers=[cst.ExceptHandler(
            body=cst.IndentedBlock(body=handler),
            type=cst.Name("Exception"),
            name=cst.AsName(name=cst.Name("_ms_error")),
            whitespace_after_except=cst.SimpleWhitespace(" "))],
        leading_lines=leading_lines)


def _target_names(t: cst.BaseExpression) -> List[str]:
    if isinstance(t, cst.Name):
        return [t.value]
    if isinstance(t, cst.StarredElement):
        return _target_names(t.value)
    if isinstance(t, (cst.Tuple, cst.List)):
        return [n for e in t.elements for n in _target_names(e.value)]
    return []


# ------------------------------------------------------------ except clauses
def bound_placeholders(stmt: cst.SimpleStatementLine) -> List[str]:
    """Names a module-level statement binds to a value holding a placeholder."""
    names: List[str] = []
    for small in stmt.body:
        if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None \
                and find_placeholder(small.value) is not None:
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            for t in targets:
                names += _target_names(t)
    return names


def checked_handler(handler: cst.ExceptHandler, placeholder_names) -> cst.ExceptHandler:
    """`except NAME:` where NAME holds a placeholder: Python would raise TypeError (not an
    exception class) when an exception reaches the clause; this raises MigrationError there."""
    t = handler.type
    elements = [e.value for e in t.elements] if isinstance(t, cst.Tuple) else [t]
    if t is None or not any(isinstance(e, cst.Name) and e.value in placeholder_names for e in elements):
        return handler
    return handler.with_changes(type=cst.Call(
        func=cst.Attribute(value=cst.Name(COMPAT), attr=cst.Name("exception_types")), args=[cst.Arg(t)]))
