"""Which calls are in-place activations (`nn.ReLU(inplace=True)` held by a name or a `self` attribute,
`F.relu(x, inplace=True)`, `F.relu_(x)`, `torch.relu_(x)`), read on the torch source. Shared by
inplace_activations.py (the input is a local name) and inplace_callers.py (the input is a parameter, so the
caller's tensor changes)."""
from __future__ import annotations

import re
from typing import Dict, Optional, Set, Tuple

import libcst as cst

# activation -> the position of `inplace` among its positional parameters (functional form, module constructor)
FUNCTIONAL = {"relu": 1, "relu6": 1, "selu": 1, "silu": 1, "mish": 1, "hardswish": 1, "hardsigmoid": 1, "elu": 2,
              "celu": 2, "leaky_relu": 2, "hardtanh": 3, "threshold": 3, "rrelu": 4, "dropout": 3, "dropout1d": 3,
              "dropout2d": 3, "dropout3d": 3, "alpha_dropout": 3, "feature_alpha_dropout": 3}
MODULES = {"ReLU": 0, "ReLU6": 0, "SELU": 0, "SiLU": 0, "Mish": 0, "Hardswish": 0, "Hardsigmoid": 0, "ELU": 1,
           "CELU": 1, "LeakyReLU": 1, "Hardtanh": 2, "Threshold": 2, "RReLU": 2, "Dropout": 1, "Dropout1d": 1,
           "Dropout2d": 1, "Dropout3d": 1, "AlphaDropout": 1, "FeatureAlphaDropout": 1}
_FUNCTIONAL_MODULE = re.compile(r"(^|\.)functional$")
# activations f with f(f(x)) == f(x): an nn.Sequential led by one in place gives the same result when its input is
# activated again first (inplace_activations.py's hoisted `x = seq[0](x)`)
IDEMPOTENT = {"ReLU", "ReLU6", "Hardtanh", "Threshold"}

def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _literal(v: cst.BaseExpression) -> Optional[bool]:
    return {"True": True, "False": False}.get(v.value) if isinstance(v, cst.Name) else None


def _argument(call: cst.Call, name: str, position: int) -> Tuple[bool, Optional[bool]]:
    """(given, its literal value: True/False, None where it is not a literal)."""
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return True, _literal(a.value)
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if position < len(positional):
        return True, _literal(positional[position].value)
    return False, False


def _inplace_arg(call: cst.Call, position: int) -> Optional[bool]:
    """True/False where `inplace` is a literal or absent (False), None where it is not a literal."""
    return _argument(call, "inplace", position)[1]


def _functional_name(call: cst.Call, aliases: Set[str]) -> Optional[str]:
    f = call.func
    if isinstance(f, cst.Attribute) and f.attr.value in FUNCTIONAL:
        owner = _code(f.value)
        if owner in aliases or _FUNCTIONAL_MODULE.search(owner):
            return f.attr.value
    return None


def construction_kind(value: cst.BaseExpression) -> str:
    """'inplace' for `nn.ReLU(inplace=True)`, 'unknown' for another callable given inplace=True (or an activation
    whose inplace is not a literal), 'plain' otherwise. An nn.Sequential whose first layer changes its input in
    place (the caller's tensor: `nn.Sequential(nn.ReLU(True), conv)`) is 'sequential' where that layer is
    IDEMPOTENT (or such a Sequential), 'leading' for another in-place activation, 'unknown' where it may be one."""
    if not isinstance(value, cst.Call):
        return "plain"
    f = value.func
    name = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else None
    if name == "Sequential":
        first = value.args[0] if value.args else None
        if first is None or first.keyword is not None or first.star:
            return "plain"
        inner = construction_kind(first.value)
        head = first.value.func if isinstance(first.value, cst.Call) else None
        head = head.attr.value if isinstance(head, cst.Attribute) else head.value if isinstance(head, cst.Name) \
            else None
        if inner == "sequential" or (inner == "inplace" and head in IDEMPOTENT):
            return "sequential"
        return {"inplace": "leading", "leading": "leading", "unknown": "unknown"}.get(inner, "plain")
    if name in MODULES:
        flag = _inplace_arg(value, MODULES[name])
        return "inplace" if flag else "plain" if flag is False else "unknown"
    if any(a.keyword is not None and a.keyword.value == "inplace" and not (
            isinstance(a.value, cst.Name) and a.value.value == "False") for a in value.args):
        return "unknown"
    return "plain"


def kinds_of(assigned: Dict[str, Set[str]]) -> Dict[str, str]:
    """'inplace' (or 'sequential', 'leading') where every assignment builds an in-place activation (or such an
    nn.Sequential), 'unknown' where some may."""
    out = {}
    for name, ks in assigned.items():
        if len(ks) == 1 and ks & {"inplace", "sequential", "leading"}:
            out[name] = next(iter(ks))
        elif ks & {"inplace", "unknown", "sequential", "leading"}:
            out[name] = "unknown"
    return out


def activation_input(call: cst.Call) -> Optional[cst.BaseExpression]:
    for a in call.args:
        if a.keyword is not None and a.keyword.value in ("input", "x"):
            return a.value
    first = call.args[0] if call.args else None
    return first.value if first is not None and first.keyword is None and not first.star else None



def attribute_kinds(cls: cst.ClassDef) -> Dict[str, str]:
    """self attribute -> 'inplace' / 'unknown' for the attributes of the class built as in-place activations
    (every assignment of an 'inplace' one builds one)."""
    kinds: Dict[str, Set[str]] = {}

    class V(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                tg = t.target
                if isinstance(tg, cst.Attribute) and isinstance(tg.value, cst.Name) and tg.value.value == "self":
                    kinds.setdefault(tg.attr.value, set()).add(construction_kind(node.value))
    cls.body.visit(V())
    return kinds_of(kinds)


def functional_aliases(module: cst.Module) -> Set[str]:
    """The names torch.nn.functional goes by in the module (`import torch.nn.functional as F`)."""
    aliases = {"torch.nn.functional"}
    for line in [n for n in module.body if isinstance(n, cst.SimpleStatementLine)]:
        for small in line.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                mod = _code(small.module) + "." if isinstance(small, cst.ImportFrom) and small.module else ""
                for a in small.names:
                    if mod + _code(a.name) == "torch.nn.functional" and a.asname is not None:
                        aliases.add(_code(a.asname.name))
    return aliases


def call_kind(call: cst.Call, aliases: Set[str], attributes: Dict[str, str], locals_: Dict[str, str],
              underscore: bool = False) -> Optional[str]:
    """'inplace' / 'unknown' for an activation call that changes (or may change) its input, else None.
    attributes: this class's self attribute kinds; locals_: the scope's names bound to activations;
    underscore: also `F.relu_(x)` / `torch.relu_(x)` (whole statements of those are rebindings already)."""
    name = _functional_name(call, aliases)
    if name is not None:
        flag = _inplace_arg(call, FUNCTIONAL[name])
        if "dropout" in name and _argument(call, "training", 2) == (True, False):
            return None     # F.dropout(x, p, training=False, inplace=True) returns x as it is
        return "inplace" if flag else "unknown" if flag is None else None
    f = call.func
    if underscore and isinstance(f, cst.Attribute) and f.attr.value.endswith("_") \
            and f.attr.value[:-1] in FUNCTIONAL and "dropout" not in f.attr.value:
        owner = _code(f.value)
        if owner == "torch" or owner in aliases or _FUNCTIONAL_MODULE.search(owner):
            return "inplace"
    if isinstance(f, cst.Name) and f.value in locals_:     # `act = nn.ReLU(inplace=True)` in this scope
        return locals_[f.value]
    if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "self":
        return attributes.get(f.attr.value)
    return None
