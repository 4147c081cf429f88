"""The torch layer class a plain name holds, for the parameter renames of `emb.weight` (Embedding:
embedding_table; BatchNorm: gamma/beta/moving_mean...) outside a Module's own attributes:
`emb = nn.Embedding(...)` at a script's top level, or in a function. The rename of `self.X.weight`
reads the class's attribute types instead (transformer._static_type)."""
from __future__ import annotations

from typing import Callable, Dict, Optional

import libcst as cst

from .fast_visit import children
from . import train_loop as TL

_BLOCKS = (cst.If, cst.Else, cst.For, cst.While, cst.With, cst.Try, cst.ExceptHandler, cst.Finally,
           cst.IndentedBlock)


def module_layers(module: cst.Module, torch_qname: Callable, families: Callable[[str], bool]) -> Dict[str, str]:
    """Module-level names every binding of which (outside functions and classes, `if __name__ ==
    "__main__":` blocks included) is a call of one torch layer class `families` accepts: name -> that class."""
    kinds: Dict[str, set] = {}

    def visit(stmts) -> None:
        for st in stmts:
            if isinstance(st, (cst.FunctionDef, cst.ClassDef)):
                kinds.setdefault(st.name.value, set()).add(None)
                continue
            if isinstance(st, cst.SimpleStatementLine):
                for small in st.body:
                    _bindings(small, torch_qname, families, kinds)
                continue
            for n in TL.assigns(st) if isinstance(st, (cst.For, cst.With)) else ():
                kinds.setdefault(n, set()).add(None)
            for block in _children_blocks(st):
                visit(block)

    visit(module.body)
    return {n: next(iter(k)) for n, k in kinds.items() if len(k) == 1 and None not in k}


def _children_blocks(st: cst.CSTNode):
    for child in children(st):
        if isinstance(child, cst.IndentedBlock):
            yield child.body
        elif isinstance(child, _BLOCKS) or isinstance(child, cst.BaseSuite):
            yield from _children_blocks(child)


def _bindings(small: cst.CSTNode, torch_qname: Callable, families: Callable[[str], bool],
              kinds: Dict[str, set]) -> None:
    if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        value = small.value
        layer = None
        if isinstance(small, (cst.Assign, cst.AnnAssign)) and isinstance(value, cst.Call):
            qn = torch_qname(value.func)
            layer = qn if qn and families(qn) else None
        for t in targets:
            if isinstance(t, cst.Name):
                kinds.setdefault(t.value, set()).add(layer if len(targets) == 1 else None)
            else:
                for n in TL.assigns(t):
                    kinds.setdefault(n, set()).add(None)
    elif isinstance(small, (cst.Import, cst.ImportFrom, cst.Global, cst.Del)):
        for n in TL.assigns(small):
            kinds.setdefault(n, set()).add(None)


def name_layer(tr, name: str) -> Optional[str]:
    """The torch layer class `name` holds where it is read: a function's own binding decides there
    (a layer or not), else the module-level one."""
    for ctx, scope in zip(reversed(tr._funcs), reversed(tr._scopes[1:])):   # innermost function first
        if name in ctx.layers:
            return ctx.layers[name]
        if name in scope["bound"] or name in scope.get("params", ()):
            return None
    if tr._classes and not tr._funcs:
        return None     # a class body's own names
    return tr._module_layers.get(name)
