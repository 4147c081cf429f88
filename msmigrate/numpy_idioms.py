"""NumPy 2 idioms that numpy<2 (which MindSpore needs) rejects, rewritten to their numpy 1.26 equivalent.

NumPy 2 changed the `copy` keyword: `np.array(x, copy=None)` copies only if needed (numpy 1 spells it
`copy=False`, and rejects None), `copy=False` never copies (raises if it must), and `np.asarray` gained a
`copy` keyword that numpy 1 does not have:

  np.array(x, copy=None)     -> np.array(x, copy=False)          exact
  np.asarray(x, copy=None)   -> np.asarray(x)                    exact
  np.asarray(x, copy=True)   -> np.asarray(x).copy(order="K")    exact (a new array, same layout)
  np.asarray(x, copy=False)  -> np.asarray(x)                    numpy 2 raises where a copy is needed;
                                                                 numpy 1 copies there (a difference)
  np.array(x, copy=flag)     -> np.array(x, copy=bool(flag))     None -> copy if needed; False: as above
  np.asarray(x, d, copy=flag)-> np.array(x, d, copy=bool(flag))  (when the call can be spelled so)
`np.array(x, copy=False)` is valid numpy 1 (copy if needed) and stays as written.
Proven by tests/parity/test_numpy_idioms.py."""
from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from .registry import CONVERTED, DIFFERENCE
from .lines import LineTracker
from .sites import Site, shorten

TEST = "tests/parity/test_numpy_idioms.py::test_copy_keyword_on_numpy_1"
ASARRAY_FALSE_NOTE = ("numpy 2's copy=False never copies and raises ValueError where a copy is needed; "
                      "numpy 1's asarray copies there instead")


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _literal(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.Name) and node.value in ("None", "True", "False"):
        return node.value
    return None


def _without(args, drop: cst.Arg) -> List[cst.Arg]:
    kept = [a for a in args if a is not drop]
    if kept:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return kept


class NumpyCopyIdioms(LineTracker):
    """Rewrites the `copy=` keyword of numpy.array / numpy.asarray calls (names resolved through `imports`,
    the file's local name -> qualified name table); `lines`: id(statement) -> original line."""

    def __init__(self, imports: Dict[str, str], lines: Dict[int, int]):
        super().__init__(lines)
        self.imports = imports
        self.sites: List[Site] = []

    def _qname(self, func: cst.BaseExpression) -> Optional[str]:
        if isinstance(func, cst.Name):
            return self.imports.get(func.value)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            base = self.imports.get(func.value.value)
            return f"{base}.{func.attr.value}" if base else None
        return None

    def _site(self, original: cst.Call, api: str, target: str, status: str, note: str) -> None:
        self.sites.append(Site(self._line[-1], api, target, status, note, shorten(_code(original)), TEST))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        qn = self._qname(original.func)
        if qn not in ("numpy.array", "numpy.asarray"):
            return updated
        copy = next((a for a in updated.args if a.keyword is not None and a.keyword.value == "copy"), None)
        if copy is None:
            return updated
        value = _literal(copy.value)
        if isinstance(copy.value, cst.Call) and isinstance(copy.value.func, cst.Name) \
                and copy.value.func.value == "bool":
            return updated      # copy=bool(...): numpy 1 already (this pass's own output)
        if qn == "numpy.array":
            if value is None and not isinstance(copy.value, (cst.Integer, cst.Float)):
                new = copy.with_changes(value=cst.parse_expression(f"bool({_code(copy.value).strip()})"))
                out = updated.with_changes(args=[new if a is copy else a for a in updated.args])
                self._site(original, "numpy.array(copy=...)", "copy=bool(...)", DIFFERENCE,
                           "numpy 2's copy=None (copy if needed) is numpy 1's copy=False; " + ASARRAY_FALSE_NOTE
                           .replace("asarray", "array"))
                return out
            if value != "None":
                return updated      # copy=True / copy=False: valid numpy 1
            out = updated.with_changes(args=[copy.with_changes(value=cst.Name("False")) if a is copy else a
                                             for a in updated.args])
            self._site(original, "numpy.array(copy=None)", "copy=False", CONVERTED,
                       "numpy 2's copy=None (copy only if needed) is numpy 1's copy=False")
            return out
        # numpy.asarray: numpy 1 has no copy keyword
        rest = _without(updated.args, copy)
        if value in ("None", "False"):
            status, note = (CONVERTED, "numpy 2's copy=None (copy only if needed) is numpy 1's asarray") \
                if value == "None" else (DIFFERENCE, ASARRAY_FALSE_NOTE)
            self._site(original, f"numpy.asarray(copy={value})", "np.asarray(...)", status, note)
            return updated.with_changes(args=rest)
        if value == "True":
            self._site(original, "numpy.asarray(copy=True)", ".copy(order='K')", CONVERTED,
                       "always a new array: numpy 1's asarray, then a copy keeping the memory layout")
            call = updated.with_changes(args=rest, lpar=[], rpar=[])
            return cst.Call(func=cst.Attribute(value=call, attr=cst.Name("copy")),
                            args=[cst.Arg(keyword=cst.Name("order"), value=cst.SimpleString('"K"'),
                                          equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                                whitespace_after=cst.SimpleWhitespace("")))],
                            lpar=updated.lpar, rpar=updated.rpar)
        positional = [a for a in rest if a.keyword is None and not a.star]
        if (isinstance(updated.func, cst.Attribute) and len(positional) <= 2 and len(positional) == len(rest)):
            new = copy.with_changes(value=cst.parse_expression(f"bool({_code(copy.value).strip()})"))
            self._site(original, "numpy.asarray(copy=...)", "np.array(..., copy=bool(...))", DIFFERENCE,
                       "numpy 2's copy=None (copy if needed) is numpy 1's array(copy=False); " + ASARRAY_FALSE_NOTE)
            return updated.with_changes(func=updated.func.with_changes(attr=cst.Name("array")),
                                        args=rest[:-1] + [rest[-1].with_changes(comma=cst.Comma(
                                            whitespace_after=cst.SimpleWhitespace(" ")))] + [new]
                                        if rest else [new])
        return updated


def has_copy_keyword(source: str) -> bool:
    """Cheap pre-check: a file without `copy=` has nothing for this pass."""
    return "copy" in source and ("asarray" in source or "array" in source)


def rewrite_numpy_copy(module: cst.Module, imports: Dict[str, str], lines: Dict[int, int]):
    """(module, sites): the module with numpy 2 `copy=` idioms rewritten for numpy 1."""
    if not any(q == "numpy" or q.startswith("numpy.") for q in imports.values()):
        return module, []
    tr = NumpyCopyIdioms(imports, lines)
    return module.visit(tr), tr.sites


def convert_numpy_only(source: str, imports: Dict[str, str]):
    """A file with no torch in it: only this pass. (code, sites); code is the source when nothing changed."""
    import ast

    from .lines import statement_lines

    module = cst.parse_module(source)
    new, sites = rewrite_numpy_copy(module, imports, statement_lines(module, ast.parse(source)))
    return (new.code if sites else source), sites
