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


def returned_layers(module: cst.Module, torch_qname: Callable, families: Callable[[str], bool]) -> Dict[str, cst.Call]:
    """Module-level functions whose one return gives a torch layer they build (`def make(width): return
    nn.Sequential(nn.Conv2d(1, width, 3), nn.BatchNorm2d(width), ...)`): name -> that call, so that `net =
    make(4)` holds such a layer (`net[1].running_mean` is a BatchNorm's moving_mean)."""
    found: Dict[str, cst.Call] = {}
    for st in module.body:
        if not isinstance(st, cst.FunctionDef) or not isinstance(st.body, cst.IndentedBlock):
            continue
        returns = _own_returns(st.body)
        if len(returns) == 1 and isinstance(returns[0].value, cst.Call) and returns[0] is _last_return(st):
            qn = torch_qname(returns[0].value.func)
            if qn and families(qn):
                found[st.name.value] = returns[0].value
    return found


def _own_returns(node: cst.CSTNode) -> list:
    """The return statements of a function body, not those of the functions and classes it defines."""
    found = []
    for child in children(node):
        if isinstance(child, cst.Return):
            found.append(child)
        elif not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            found.extend(_own_returns(child))
    return found


def _last_return(fn: cst.FunctionDef):
    last = fn.body.body[-1] if fn.body.body else None
    if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Return):
        return last.body[0]
    return None


def module_layers(module: cst.Module, torch_qname: Callable, families: Callable[[str], bool],
                  values: Optional[Dict[str, cst.Call]] = None) -> Dict[str, str]:
    """Module-level names every binding of which (outside functions and classes, `if __name__ ==
    "__main__":` blocks included) is a call of one torch layer class `families` accepts (or of a module function
    returning one: returned_layers): name -> that class; in `values`, the call of such a name bound once."""
    kinds: Dict[str, set] = {}
    made: Dict[str, list] = {}
    returned = returned_layers(module, torch_qname, families)

    def visit(stmts) -> None:
        for st in stmts:
            if isinstance(st, (cst.FunctionDef, cst.ClassDef)):
                kinds.setdefault(st.name.value, set()).add(None)
                continue
            if isinstance(st, cst.SimpleStatementLine):
                for small in st.body:
                    _bindings(small, torch_qname, families, kinds, returned, made)
                continue
            for n in TL.assigns(st) if isinstance(st, (cst.For, cst.With)) else ():
                kinds.setdefault(n, set()).add(None)
            for block in _children_blocks(st):
                visit(block)

    visit(module.body)
    out = {n: next(iter(k)) for n, k in kinds.items() if len(k) == 1 and None not in k}
    if values is not None:
        values.update((n, calls[0]) for n, calls in made.items() if n in out and len(calls) == 1)
    return out


def _children_blocks(st: cst.CSTNode):
    for child in children(st):
        if isinstance(child, cst.IndentedBlock):
            yield child.body
        elif isinstance(child, _BLOCKS) or isinstance(child, cst.BaseSuite):
            yield from _children_blocks(child)


def _bindings(small: cst.CSTNode, torch_qname: Callable, families: Callable[[str], bool],
              kinds: Dict[str, set], returned: Dict[str, cst.Call], made: Dict[str, list]) -> None:
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Tuple) \
            and isinstance(small.value, cst.Tuple) and len(small.value.elements) == len(small.targets[0].target.elements) \
            and not any(isinstance(e, cst.StarredElement) for e in small.value.elements + small.targets[0].target.elements):
        # `teacher, student = make(8), make(4)`: each name with its own value
        for t, v in zip(small.targets[0].target.elements, small.value.elements):
            _bindings(cst.Assign(targets=[cst.AssignTarget(t.value)], value=v.value), torch_qname, families, kinds,
                      returned, made)
        return
    if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        value = small.value
        layer = None
        if isinstance(small, (cst.Assign, cst.AnnAssign)) and isinstance(value, cst.Call):
            if isinstance(value.func, cst.Name) and value.func.value in returned:
                value = returned[value.func.value]     # `net = make(4)`: what make() returns
            qn = torch_qname(value.func)
            layer = qn if qn and families(qn) else None
        for t in targets:
            if isinstance(t, cst.Name):
                kinds.setdefault(t.value, set()).add(layer if len(targets) == 1 else None)
                made.setdefault(t.value, []).append(value)
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
