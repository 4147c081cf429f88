"""Reads of nn.ParameterList / nn.ParameterDict attributes inside a Module's methods.

The converted containers (_ms_compat.ParameterList/ParameterDict) are Cells. In GRAPH mode a
Cell's __getitem__/__iter__ run while the graph compiles and hand the Parameters over as
constants: the values are right and the gradients are zero (measured, MindSpore 2.10). Their
`.params` ParameterTuple is differentiated in both modes, so the reads go through it:
    self.plist[i]            -> self.plist.params[i]
    for p in self.plist      -> for p in self.plist.params    (also enumerate/zip/list/tuple/sum)
    self.pdict[k]            -> self.pdict.params[self.pdict.index(k)]
    self.pdict.values()      -> self.pdict.params
    self.pdict.items()       -> zip(self.pdict.keys(), self.pdict.params)
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from . import registry as R

LIST = "torch.nn.ParameterList"
DICT = "torch.nn.ParameterDict"
_ITERATING = {"enumerate", "zip", "list", "tuple", "sum", "reversed", "iter", "map", "filter"}


def container_kind(tr, node: cst.BaseExpression) -> Optional[str]:
    """LIST/DICT when `node` is `self.X` and X was assigned a ParameterList/ParameterDict."""
    if (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"
            and tr._classes and tr._classes[-1].is_cell):
        kind = tr._classes[-1].attr_types.get(node.attr.value)
        if kind in (LIST, DICT):
            return kind
    return None


def _params(node: cst.BaseExpression) -> cst.Attribute:
    return cst.Attribute(value=node.with_changes(lpar=[], rpar=[]), attr=cst.Name("params"))


def subscript(tr, original: cst.Subscript, updated: cst.Subscript):
    """`self.plist[i]` / `self.pdict[k]` read inside a method (not an assignment target)."""
    if id(original) in tr._skip or not tr._funcs:
        return None
    kind = container_kind(tr, original.value)
    if kind == LIST:
        return updated.with_changes(value=_params(updated.value))
    if kind == DICT and len(updated.slice) == 1 and isinstance(updated.slice[0].slice, cst.Index):
        key = updated.slice[0].slice.value
        index = cst.Call(func=cst.Attribute(value=updated.value, attr=cst.Name("index")), args=[cst.Arg(value=key)])
        return updated.with_changes(value=_params(updated.value),
                                    slice=[updated.slice[0].with_changes(slice=cst.Index(value=index))])
    return None


def iterated(tr, original: cst.BaseExpression, updated: cst.BaseExpression):
    """An expression that is iterated (a for loop's or comprehension's iter, an argument of
    enumerate/zip/...): `self.plist` -> `self.plist.params`."""
    if tr._funcs and container_kind(tr, original) == LIST:
        return _params(updated)
    return None


def call(tr, original: cst.Call, updated: cst.Call):
    """`self.pdict.values()` / `.items()`, and `enumerate(self.plist)`-like calls."""
    if not tr._funcs:
        return None
    func = original.func
    if isinstance(func, cst.Name) and func.value in _ITERATING:
        args = list(updated.args)
        changed = False
        for i, (o, u) in enumerate(zip(original.args, updated.args)):
            new = iterated(tr, o.value, u.value) if o.keyword is None and not o.star else None
            if new is not None:
                args[i] = u.with_changes(value=new)
                changed = True
        return updated.with_changes(args=args) if changed else None
    if (isinstance(func, cst.Attribute) and not original.args and func.attr.value in ("values", "items")
            and container_kind(tr, func.value) == DICT):
        owner = updated.func.value
        if func.attr.value == "values":
            return _params(owner)
        keys = cst.Call(func=cst.Attribute(value=owner, attr=cst.Name("keys")))
        return cst.Call(func=cst.Name("zip"), args=[
            cst.Arg(value=keys, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(value=_params(owner))])
    return None


_SEQUENCES = ("torch.nn.Sequential", "torch.nn.ModuleList")


def sequence_entry_types(tr, attr: str, layer: str, value: cst.BaseExpression) -> dict:
    """`self.X = nn.Sequential(nn.Conv2d(...), nn.BatchNorm2d(...))` or `nn.ModuleList([...])` (original code; also
    a local name `X = nn.Sequential(...)`): {"X[0]": "torch.nn.Conv2d", "X[1]": ..., "X[-1]": "torch.nn.BatchNorm2d", ...}, so that
    `self.X[-1].weight` gets MindSpore's parameter name (gamma) as `self.bn.weight` would (a BottleBlock's
    `nn.init.zeros_(self.net[-1].weight)`). Only literal calls of mapped torch layers; a ModuleList's entries
    from its end are left out (an append() moves them)."""
    if layer not in _SEQUENCES or not isinstance(value, cst.Call):
        return {}
    args = value.args
    if layer == "torch.nn.ModuleList" and len(args) == 1 and args[0].keyword is None \
            and isinstance(args[0].value, cst.ListComp) and isinstance(args[0].value.elt, cst.Call):
        # `nn.ModuleList([nn.Embedding(...) for _ in range(n)])` (pytorch-fm's FieldAwareFactorizationMachine):
        # every entry is of one class, "X[*]", for `for emb in self.X: emb.weight` and `self.X[i].weight`
        qn = tr._torch_qname(args[0].value.elt.func)
        return {f"{attr}[*]": qn} if qn is not None and R.lookup(qn) is not None else {}
    if layer == "torch.nn.ModuleList" and len(args) == 1 and args[0].keyword is None \
            and isinstance(args[0].value, cst.Name) and tr._funcs:
        # `nn.ModuleList(embs)` of a local list comprehension of one layer class (the function's "embs[*]")
        entry = tr._funcs[-1].layers.get(f"{args[0].value.value}[*]")
        return {f"{attr}[*]": entry} if entry is not None else {}
    if layer == "torch.nn.ModuleList":
        if len(args) != 1 or not isinstance(args[0].value, (cst.List, cst.Tuple)) or args[0].keyword is not None:
            return {}
        entries = [None if isinstance(e, cst.StarredElement) else e.value for e in args[0].value.elements]
    else:
        if any(a.keyword is not None for a in args):
            return {}
        entries = [None if a.star else a.value for a in args]
    # a starred entry (`nn.Sequential(emb, *[Block() for _ in range(depth)], norm, head)`, PaLM) has a length
    # known only at run time: the entries before the first one keep their index from the start, those after the
    # last one their index from the end
    first_star = next((i for i, e in enumerate(entries) if e is None), len(entries))
    last_star = max((i for i, e in enumerate(entries) if e is None), default=-1)
    out = {}
    for i, entry in enumerate(entries):
        if isinstance(entry, cst.Call):
            qn = tr._torch_qname(entry.func)
            if qn is not None and R.lookup(qn) is not None:
                if i < first_star:
                    out[f"{attr}[{i}]"] = qn
                if layer == "torch.nn.Sequential" and i > last_star:
                    out[f"{attr}[{i - len(entries)}]"] = qn
    return out


def constant_index(sub: cst.Subscript) -> Optional[int]:
    """The integer of `x[3]` / `x[-1]`; None for any other subscript."""
    if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return None
    v = sub.slice[0].slice.value
    if isinstance(v, cst.Integer):
        return int(v.evaluated_value)
    if isinstance(v, cst.UnaryOperation) and isinstance(v.operator, cst.Minus) and isinstance(v.expression,
                                                                                            cst.Integer):
        return -int(v.expression.evaluated_value)
    return None


def dict_entry_types(tr, attr: str, layer: str, value: cst.BaseExpression) -> dict:
    """`self.X = nn.ModuleDict(dict(k=nn.Embedding(...)))` or `nn.ModuleDict({"k": ...})` (original code):
    {"X.k": "torch.nn.Embedding"}, so that `self.X.k.weight` gets MindSpore's parameter name as
    `self.k.weight` would (GPT-2's weight tying `self.transformer.wte.weight = self.lm_head.weight`)."""
    if layer != "torch.nn.ModuleDict" or not isinstance(value, cst.Call) or len(value.args) != 1:
        return {}
    arg = value.args[0].value
    pairs = []
    if (isinstance(arg, cst.Call) and isinstance(arg.func, cst.Name) and arg.func.value == "dict"
            and tr._qname_any(arg.func) is None):
        pairs = [(a.keyword.value, a.value) for a in arg.args if a.keyword is not None]
    elif isinstance(arg, cst.Dict):
        pairs = [(e.key.evaluated_value, e.value) for e in arg.elements
                 if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)]
    out = {}
    for key, entry in pairs:
        if isinstance(entry, cst.Call) and isinstance(key, str):
            qn = tr._torch_qname(entry.func)
            if qn is not None and R.lookup(qn) is not None:
                out[f"{attr}.{key}"] = qn
    return out
