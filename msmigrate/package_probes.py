"""Availability probes of torch in converted code: importlib.util.find_spec("torch"),
importlib.metadata.version("torch"), and the same calls with a name known only at run time
(transformers' `_is_package_available(pkg_name)`, behind is_torch_available()).

Converted code no longer imports torch: its torch paths are MindSpore code that follows the torch
API of msmigrate's mappings. Asked whether torch is there, the converted program must answer for
itself, or libraries that pick a backend at import time (transformers, diffusers, accelerate) take
their no-torch branch and replace the converted models with placeholders. So these calls go through
_ms_compat.find_spec / _ms_compat.package_version: for torch and torchvision (and their submodules)
they answer as an installed torch of TORCH_API_VERSION would (the version torch.__version__ reports
in converted code); for any other name they are the importlib functions themselves. A call with a
literal name of another package stays as written. Records: msmigrate/mappings/package_probes.py."""
from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from .callsite import dotted_name as _dotted
from .lines import LineTracker
from .sites import Site, shorten

# the names converted code stands for (each has an API version in templates/compat_parts/versions.py)
CONVERTED_PACKAGES = ("torch", "torchvision")
# qualified callee -> the helper that answers for the converted tree
PROBES = {
    "importlib.util.find_spec": "find_spec",
    "importlib.metadata.version": "package_version",
    "importlib_metadata.version": "package_version",   # the backport package
}
WORDS = ("find_spec", "version")




def _literal(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def is_converted_package(name: str) -> bool:
    return name.split(".", 1)[0] in CONVERTED_PACKAGES


class PackageProbes(LineTracker):
    """Routes the probe calls of one file (callees resolved through `imports`, the file's local name ->
    qualified name table) to the helper; `lines`: id(statement) -> original line."""

    def __init__(self, imports: Dict[str, str], lines: Dict[int, int], compat: str):
        super().__init__(lines)
        self.imports = imports
        self.compat = compat
        self.sites: List[Site] = []

    def _qualified(self, func: cst.BaseExpression) -> Optional[str]:
        dotted = _dotted(func)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        if head not in self.imports:
            return None
        return self.imports[head] + ("." + rest if rest else "")

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        from .registry import lookup
        qn = self._qualified(updated.func)
        if qn not in PROBES or not updated.args or updated.args[0].keyword is not None \
                or updated.args[0].star:
            return updated
        name = _literal(updated.args[0].value)
        if name is not None and not is_converted_package(name):
            return updated   # another package: the real probe
        record = lookup(qn)
        self.sites.append(Site(self._line[-1], qn, f"{self.compat}.{PROBES[qn]}", record.status, record.note,
                               shorten(cst.Module(body=[]).code_for_node(original)), record.test))
        return updated.with_changes(func=cst.Attribute(cst.Name(self.compat), cst.Name(PROBES[qn])))


def might_probe(source: str) -> bool:
    return "importlib" in source and any(w in source for w in WORDS)


def rewrite_package_probes(module: cst.Module, imports: Dict[str, str], lines: Dict[int, int], compat: str):
    """(module with the probe calls routed to the helper, their sites)."""
    tr = PackageProbes(imports, lines, compat)
    return module.visit(tr), tr.sites
