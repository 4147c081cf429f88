"""Which values of a name an `if`/`elif` chain rebinds another name for, and which values a guard allows.

Real code dispatches on a string or constant: `if kind == 'a': out, inter = attn(x)` / `elif kind == 'c':
out, inter = cross(x)` / `elif kind == 'f': out = ff(x)`, and later, under `if kind in ('a', 'c'):`, writes
`inter.f = v`. The write reaches the record rebound this turn, since the guard's values are all values that
rebind it. graph_records.field_writes asks this module so (a graph dict's write reaches one name alone, so a
write to a record that another holder still shares is refused when compiled); a chain or guard of any other
form (two names tested, a non-literal, a call) covers nothing, and the write stays judged as before."""
from __future__ import annotations

from typing import Dict, FrozenSet, Iterable, List, Optional, Tuple

import libcst as cst

from .visitor_bases import single_targets

# (the tested name, the values whose branch rebinds) or (None, None): every way through the chain rebinds
Cover = Tuple[Optional[str], Optional[FrozenSet[str]]]


def _literal(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, (cst.SimpleString, cst.Integer)):
        return node.value if isinstance(node, cst.Integer) else repr(node.evaluated_value)
    if isinstance(node, cst.Name) and node.value in ("None", "True", "False"):
        return node.value
    return None


def tested_values(test: cst.BaseExpression) -> Optional[Tuple[str, FrozenSet[str]]]:
    """`k == 'a'` / `'a' == k` / `k in ('a', 'c')`: (k, the values for which the test holds)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    op, right = test.comparisons[0].operator, test.comparisons[0].comparator
    if isinstance(op, cst.Equal):
        for name, value in ((test.left, right), (right, test.left)):
            lit = _literal(value)
            if isinstance(name, cst.Name) and lit is not None:
                return name.value, frozenset({lit})
        return None
    if isinstance(op, cst.In) and isinstance(test.left, cst.Name) and isinstance(right, (cst.Tuple, cst.List, cst.Set)):
        lits = [_literal(el.value) if isinstance(el, cst.Element) else None for el in right.elements]
        if lits and None not in lits:
            return test.left.value, frozenset(lits)
    return None


def conjuncts(test: cst.BaseExpression) -> List[cst.BaseExpression]:
    """`a and (b and c)`: [a, b, c]."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return conjuncts(test.left) + conjuncts(test.right)
    return [test]


def guard_values(tests: Iterable[cst.BaseExpression]) -> Dict[str, FrozenSet[str]]:
    """The tests that all hold (the `if`s around a statement, in their bodies): per name, the values it can have."""
    out: Dict[str, FrozenSet[str]] = {}
    for test in tests:
        for part in conjuncts(test):
            tv = tested_values(part)
            if tv is not None:
                out[tv[0]] = out[tv[0]] & tv[1] if tv[0] in out else tv[1]
    return out


def _rebinds(body: cst.BaseSuite, name: str) -> bool:
    """A statement of the branch itself (not in a nested block) binds `name` to a call's result."""
    for st in getattr(body, "body", ()):
        if not isinstance(st, cst.SimpleStatementLine):
            continue
        for small in st.body:
            if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call) and any(
                    isinstance(p, cst.Name) and p.value == name for t in small.targets for p in single_targets(t.target)):
                return True
    return False


def chain_cover(node: cst.If, name: str) -> Optional[Cover]:
    """What an `if`/`elif`/`else` chain guarantees about `name` once it has run: (None, None) when every way
    through it binds `name` to a call's result; (k, values) when its tests are all `k == lit` / `k in (lits)`
    and these values of k take a branch that does; None when it guarantees nothing."""
    branches: List[Tuple[Optional[cst.BaseExpression], cst.BaseSuite]] = []
    at: Optional[cst.BaseSuite] = node
    while isinstance(at, cst.If):
        branches.append((at.test, at.body))
        at = at.orelse
    if isinstance(at, cst.Else):
        branches.append((None, at.body))
    if all(_rebinds(body, name) for _, body in branches) and branches[-1][0] is None:
        return None, None
    var: Optional[str] = None
    seen: FrozenSet[str] = frozenset()
    covered: FrozenSet[str] = frozenset()
    for test, body in branches:
        tv = tested_values(test) if test is not None else None
        if tv is None or (var is not None and tv[0] != var):
            break               # an else or another kind of test: the values not yet seen may go anywhere
        var = tv[0]
        if _rebinds(body, name):
            covered |= tv[1] - seen      # an earlier branch took the values it tested
        seen |= tv[1]
    return (var, covered) if var is not None and covered else None
