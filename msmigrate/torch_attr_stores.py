"""A class or function of the program stored on a torch module under a name torch does not define.

    class MaskedLinear(nn.Module):
        ...
    nn.MaskedLinear = MaskedLinear          # ikostrikov/pytorch-flows' flows.py
    ...
    self.joiner = nn.MaskedLinear(num_inputs, num_hidden, input_mask)

`nn.MaskedLinear` read as a torch API with no MindSpore mapping: a raising TODO at each use, and at the store
itself ("assigns a torch global setting"). It is the program's own object: in the module that stores it, each
`nn.MaskedLinear` is `MaskedLinear`, and the store is a `pass` (MindSpore's namespace is not the program's to
extend).
Another module reading it through torch stays a TODO. A store over a name torch defines (`nn.Linear = MyLinear`)
changes torch for every module and for torch itself: left as it was (a TODO)."""
from __future__ import annotations

import re
from typing import Dict, List, Tuple

import libcst as cst

from . import registry as R
from .callsite import code_of
from .sites import Site, shorten
from .torch_names import NAMES

_STORE = re.compile(r"^[A-Za-z_]\w*(?:\.\w+)+\s*=\s*[A-Za-z_]\w*\s*(?:#.*)?$", re.M)

NOTE = ("the program's own {name} stored on {namespace}, a name torch does not define: this module's "
        "{spelled} reads are {name}, and the store is dropped")


TEST = "tests/test_heldout58_programs.py::test_own_class_stored_on_torch_nn"


def might_store_on_torch(source: str) -> bool:
    return bool(_STORE.search(source))


def _stored(stmt: cst.CSTNode, defined, imports: Dict[str, str]):
    """(spelling, namespace, own name) of `nn.X = X` at the module's top level, X a class or function defined
    above it and X a name the torch namespace lacks; else None."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Assign)):
        return None
    a = stmt.body[0]
    if len(a.targets) != 1 or not isinstance(a.targets[0].target, cst.Attribute) or \
            not isinstance(a.value, cst.Name) or a.value.value not in defined:
        return None
    spelled = code_of(a.targets[0].target).strip()
    head, _, attr = spelled.rpartition(".")
    root, _, rest = head.partition(".")
    qn = imports.get(root)
    if qn is None:
        return None
    namespace = R.canonical(qn + ("." + rest if rest else ""))
    if namespace not in NAMES or attr in NAMES[namespace]:
        return None      # not a torch namespace whose names are known, or one of torch's own names
    return spelled, namespace, a.value.value


class _OwnReads(cst.CSTTransformer):
    def __init__(self, stores: Dict[str, str]):
        self.stores = stores

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        name = self.stores.get(code_of(original).strip())
        return cst.Name(name) if name is not None else updated


def own_names_on_torch(module: cst.Module, imports: Dict[str, str],
                       lines: Dict[int, int]) -> Tuple[cst.Module, List[Site]]:
    """(the module with its stores dropped and their reads named as the program's objects, a site per store)."""
    defined = set()
    stores: Dict[str, str] = {}
    body = []
    sites: List[Site] = []
    for stmt in module.body:
        if isinstance(stmt, (cst.ClassDef, cst.FunctionDef)):
            defined.add(stmt.name.value)
        hit = _stored(stmt, defined, imports)
        if hit is None:
            body.append(stmt)
            continue
        spelled, namespace, name = hit
        stores[spelled] = name
        # a `pass` in its place: the statements after it keep their pairing with the original's lines (lines.py)
        body.append(cst.SimpleStatementLine(
            body=[cst.Pass()], leading_lines=[*stmt.leading_lines, cst.EmptyLine(comment=cst.Comment(
                f"# msmigrate: {shorten(code_of(stmt))}: the program's own {name}, read by its name here"))]))
        sites.append(Site(lines.get(id(stmt), 0), f"{namespace}.{spelled.rpartition('.')[2]}", "(removed)",
                          R.CONVERTED, NOTE.format(name=name, namespace=namespace, spelled=spelled),
                          shorten(code_of(stmt)), TEST))
    if not stores:
        return module, []
    return module.with_changes(body=body).visit(_OwnReads(stores)), sites
