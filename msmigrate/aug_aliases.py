"""`d_loss = d_real; d_loss += d_fake`: torch's `+=` changes the one tensor both names hold, so d_real
reads the sum afterwards. MindSpore's `+=` on a tensor in PyNative makes a new tensor (measured on 2.10:
d_real kept its old value; GRAPH mode agrees with torch). Where a name aliases the augmented one (bound
by `a = b` earlier in the same block, neither rebound since) and is read later in that block, the alias
is rebound after the statement: `d_real = _ms_compat.inplace_alias(d_loss, d_real)`, which gives the
changed tensor when the alias held a tensor (torch's in-place semantics), and leaves any other object as
Python left it (a number was rebound, a list or array changed in place is the same object anyway)."""
from __future__ import annotations

from typing import Dict, List, Set, Tuple

import libcst as cst

from . import train_loop as TL


def _bound(stmt: cst.CSTNode) -> Set[str]:
    return set(TL.assigns(stmt))


class _Blocks(cst.CSTVisitor):
    """Every statement list of a module, each on its own (a block's aliases end with it)."""

    def __init__(self) -> None:
        self.found: Dict[int, List[Tuple[str, str]]] = {}

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._scan(list(node.body))

    def visit_Module(self, node: cst.Module) -> None:
        self._scan(list(node.body))

    def _scan(self, stmts) -> None:
        groups: Dict[str, Set[str]] = {}

        def drop(name: str) -> None:
            for member in groups.pop(name, set()) - {name}:
                groups[member] = groups[member] - {name}

        for i, st in enumerate(stmts):
            small = st.body[0] if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 else None
            if (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
                    and isinstance(small.value, cst.Name)):
                target, source = small.targets[0].target.value, small.value.value
                if target == source:
                    continue
                drop(target)
                group = groups.get(source, {source}) | {target}
                for member in group:
                    groups[member] = group
                continue
            if isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
                name = small.target.value
                later = set()
                for rest in stmts[i + 1:]:
                    later.update(TL.reads(rest))
                aliases = sorted(n for n in groups.get(name, ()) if n != name and n in later)
                if aliases:
                    self.found[id(st)] = [(name, alias) for alias in aliases]
                continue
            if isinstance(st, (cst.FunctionDef, cst.ClassDef)):
                drop(st.name.value)
                continue
            for name in _bound(st):
                drop(name)


def alias_rebinds(node: cst.Module) -> Dict[int, List[Tuple[str, str]]]:
    """id(original statement line `a += ...`) -> [(a, alias)], for the whole module."""
    v = _Blocks()
    node.visit(v)
    return v.found
