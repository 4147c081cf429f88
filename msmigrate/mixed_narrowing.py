"""isinstance() narrowing over layers whose parameters MindSpore names differently, per class:

    for m in self.modules():
        if isinstance(m, (nn.BatchNorm2d, nn.Linear)):
            nn.init.zeros_(m.bias)               # BatchNorm's bias is `beta` in MindSpore, Dense's `bias`

No one name is right for every class of the test, so each access chooses by the cell it holds at run
time: the MindSpore name of the classes that rename the parameter, where the cell has it, else torch's
(`(m.beta if hasattr(m, 'beta') else m.bias)`); an assignment becomes `setattr(m, <that name>, value)`.
BatchNorm3d's are on the BatchNorm2d it runs (`m.bn2d.gamma if hasattr(m, 'bn2d') else ...`; an assignment
`setattr(m.bn2d if hasattr(m, 'bn2d') else m, ...)`).
Within the narrowed block `m` is an instance of one of the test's classes, and only the classes that
rename the parameter have the MindSpore name (Dense has no `beta`, BatchNorm no `bias`).

The transformer keeps such a narrowing as the tuple of the test's torch class names (a single family stays
its torch class name, renamed statically)."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst


def names_by_class(classes: Sequence[str], attr: str, families: Dict[str, str],
                   renames: Dict[str, Dict[str, str]]) -> List[str]:
    """The MindSpore names `attr` has across `classes` (torch qualified names), in order, torch's own name last;
    empty when every class keeps torch's name or all rename it alike (no choice to make at run time)."""
    found: List[str] = []
    for qn in classes:
        new = renames.get(families.get(qn, ""), {}).get(attr, attr)
        if qn == "torch.nn.BatchNorm3d" and new != attr:
            new = "bn2d." + new     # MindSpore's BatchNorm3d: on the BatchNorm2d it runs
        if new not in found:
            found.append(new)
    if len(found) < 2:
        return []
    return [n for n in found if n != attr] + [attr]


def _path(obj: cst.BaseExpression, dotted: str) -> cst.BaseExpression:
    for part in dotted.split("."):
        obj = cst.Attribute(value=obj, attr=cst.Name(part))
    return obj


def _choice(obj: cst.BaseExpression, names: List[str], pick) -> cst.BaseExpression:
    """`pick(name)` of the first name the cell has (a dotted name, BatchNorm3d's `bn2d.gamma`: tested by its
    first part), else of torch's name (the last)."""
    expr = pick(names[-1])
    for n in reversed(names[:-1]):
        expr = cst.IfExp(test=_has(obj, n), body=pick(n), orelse=expr)
    return expr


def chosen_name(obj: cst.BaseExpression, names: List[str]) -> cst.BaseExpression:
    """`'beta' if hasattr(m, 'beta') else 'bias'`: the attribute name the cell has, as a string (the last part
    of a dotted name: read on chosen_owner)."""
    return _choice(obj, names, lambda n: cst.SimpleString(repr(n.rsplit(".", 1)[-1])))


def chosen_owner(obj: cst.BaseExpression, names: List[str]) -> cst.BaseExpression:
    """The object holding the chosen name: `m`, or `m.bn2d if hasattr(m, 'bn2d') else m` where a name is dotted
    (MindSpore's BatchNorm3d keeps its parameters on the BatchNorm2d it runs)."""
    if not any("." in n for n in names):
        return obj
    return _choice(obj, names, lambda n: _path(obj, n.rsplit(".", 1)[0]) if "." in n else obj)


def chosen_attribute(obj: cst.BaseExpression, names: List[str]) -> cst.BaseExpression:
    """`(m.beta if hasattr(m, 'beta') else m.bias)`."""
    expr = _choice(obj, names, lambda n: _path(obj, n))
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def chosen_assignment(target: cst.Attribute, names: List[str], value: cst.BaseExpression) -> cst.Expr:
    """`m.bias = v` -> `setattr(m, 'beta' if hasattr(m, 'beta') else 'bias', v)`."""
    return cst.Expr(value=cst.Call(func=cst.Name("setattr"), args=[
        cst.Arg(chosen_owner(target.value, names)), cst.Arg(chosen_name(target.value, names)), cst.Arg(value)]))


def _has(obj: cst.BaseExpression, name: str) -> cst.Call:
    return cst.Call(func=cst.Name("hasattr"), args=[cst.Arg(obj), cst.Arg(cst.SimpleString(repr(name.split(".")[0])))])


def narrowed_classes(narrow_stack: Sequence[Dict[str, object]], name: str) -> Optional[Tuple[str, ...]]:
    """The torch classes a mixed isinstance() narrowing gives `name` in the innermost block that narrows it."""
    for narrow in reversed(narrow_stack):
        if name in narrow:
            found = narrow[name]
            return found if isinstance(found, tuple) else None
    return None
