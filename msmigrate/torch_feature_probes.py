"""Feature probes of torch with a fallback: `getattr(torch.compiler, "disable", None) or nullwrap`,
`hasattr(getattr(torch._C, "_CudaDeviceProperties", None), "L2_cache_size")`.

A library asks whether torch has a name and brings its own fallback for when it has not. In converted
code "torch" is the API msmigrate's mappings give on MindSpore, so the question is answered for that API,
while converting:
- the name converts as a value (a record with a target usable as a value): the probe becomes the plain
  reference (`torch.compiler.disable`), converted as any other; getattr's default is never taken, as on
  the torch the conversion follows, which has every name a record exists for;
- the name has no conversion: the converted API lacks it, so the probe is getattr's default, the
  program's own fallback. The site is reported (status DIFFERENCE) so the choice stays visible.
Only the three-argument getattr with a literal name counts: without a default the program has no
fallback and the usual conversion (a placeholder that raises where it is used) applies. Names torch
itself lacks are left to torch_namespace.py (the default, as on torch). Nested probes
(`getattr(getattr(torch, "compiler", None), "disable", None)`) are read as one dotted name."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from . import registry as R
from .project_index import is_torch_name
from .sites import Site, shorten

_NOT_A_VALUE = ("drop", "identity", "method:")
NOTE = ("torch's {qn} has no MindSpore conversion, so the converted API lacks it: getattr's default (the "
        "program's own fallback) is taken")


def _literal(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _getattr_parts(node: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, str, Optional[cst.Arg]]]:
    """(object, literal name, default argument or None) of `getattr(obj, "name"[, default])`."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "getattr"
            and len(node.args) in (2, 3) and all(a.keyword is None and not a.star for a in node.args)):
        return None
    name = _literal(node.args[1].value)
    if name is None or not name.isidentifier():
        return None
    return node.args[0].value, name, node.args[2] if len(node.args) == 3 else None


def converts_as_value(qn: str) -> bool:
    """A record exists whose target can stand for the name used as a value."""
    m = R.lookup(qn)
    if m is None or m.status == R.TODO or m.target is None:
        return False
    if m.target.startswith(_NOT_A_VALUE):
        return False
    return not (m.target.startswith("expr:") and "{" in m.target)


class _Probes(cst.CSTTransformer):
    def __init__(self, imports: Dict[str, str], lines: Dict[int, int]):
        super().__init__()
        self.imports = imports
        self.lines = lines
        self.sites: List[Site] = []
        self._line: List[int] = [0]
        self._answers: Dict[int, cst.BaseExpression] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        if id(node) in self.lines:
            self._line.append(self.lines[id(node)])
        return super().on_visit(node)

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        out = super().on_leave(original, updated)
        if id(original) in self.lines:
            self._line.pop()
        return out

    def _chain(self, node: cst.BaseExpression) -> Optional[Tuple[str, str]]:
        """(qualified torch name, dotted code) of `torch.x`, `getattr(torch, "x"[, d])` and nestings."""
        parts = _getattr_parts(node)
        if parts is not None:
            inner = self._chain(parts[0])
            return None if inner is None else (f"{inner[0]}.{parts[1]}", f"{inner[1]}.{parts[1]}")
        dotted = []
        while isinstance(node, cst.Attribute):
            dotted.append(node.attr.value)
            node = node.value
        if not isinstance(node, cst.Name) or node.value not in self.imports:
            return None
        dotted.append(node.value)
        code = ".".join(reversed(dotted))
        qn = ".".join([self.imports[node.value], *reversed(dotted[:-1])])
        return (qn, code) if is_torch_name(qn) else None

    def visit_Call(self, node: cst.Call) -> bool:
        # outermost first: in getattr(getattr(torch, "compiler", None), "disable", None) the inner probe
        # is part of the name, not a probe of its own
        answer = self._answer(node)
        if answer is None:
            return True
        self._answers[id(node)] = answer
        return False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        return self._answers.pop(id(original), updated)

    def _answer(self, node: cst.Call) -> Optional[cst.BaseExpression]:
        parts = _getattr_parts(node)
        if parts is None or parts[2] is None:
            return None
        chain = self._chain(node)
        if chain is None or "." not in chain[0]:
            return None
        qn = R.canonical(chain[0])
        if converts_as_value(qn):
            return cst.parse_expression(chain[1])
        from .torch_names import NAMES
        namespace, _, name = qn.rpartition(".")
        if namespace in NAMES and name not in NAMES[namespace]:
            return None   # a name torch lacks: torch_namespace.py gives the default, as on torch
        self.sites.append(Site(self._line[-1], qn, "(getattr default)", R.DIFFERENCE, NOTE.format(qn=qn),
                               shorten(cst.Module(body=[]).code_for_node(node)),
                               "tests/test_torch_feature_probes.py::test_feature_probes"))
        return parts[2].value


def rewrite_feature_probes(module: cst.Module, imports: Dict[str, str], lines: Dict[int, int]):
    """(module with the probes answered, the sites whose default was taken)."""
    if "getattr" in imports:
        return module, []   # a project's own getattr
    tr = _Probes(imports, lines)
    return module.visit(tr), tr.sites
