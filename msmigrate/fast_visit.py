"""A read-only walk for libcst's CSTVisitor that does not rebuild the tree.

libcst visits a node's children through `_visit_and_replace_children`, which builds a new node (with
its validation) at every level even for a visitor that changes nothing. The converter's analyses are
such visitors, dozens of walks per file, and that rebuilding was most of the conversion time (a 900-line
file took 10-25 s). `install()` makes `CSTNode.visit` walk a CSTVisitor through the node's own fields
instead, in the order libcst's visit would (the order of each node class is read once from libcst
itself), with the same calls: on_visit, the attribute hooks where the visitor class defines any
(`visit_If_body`), on_leave. Transformers and other visitors keep libcst's own visit.
tests/test_fast_visit.py compares the event sequences of both walks over real sources."""
from __future__ import annotations

import os
import re
import weakref
from typing import Dict, List, Optional, Tuple

import libcst as cst
from libcst._nodes.base import CSTNode
from libcst._maybe_sentinel import MaybeSentinel

_LIBCST_VISIT = CSTNode.visit
_ORDER: Dict[type, Tuple[str, ...]] = {}
# keyed weakly by the visitor class: the analyses define visitor classes inside functions, a new class per
# call, and a strong cache would keep every one of them alive for the whole conversion
_ATTRIBUTE_HOOKS: "weakref.WeakKeyDictionary[type, bool]" = weakref.WeakKeyDictionary()
_DEFAULT_DISPATCH: "weakref.WeakKeyDictionary[type, bool]" = weakref.WeakKeyDictionary()
_METHODS: "weakref.WeakKeyDictionary[type, Dict[type, tuple]]" = weakref.WeakKeyDictionary()
_HOOK_NAME = re.compile(r"(visit|leave)_[A-Z][A-Za-z]*_[a-z_]+$")


class _FieldOrder(cst.CSTVisitor):
    """Records the fields libcst's visit goes through, without going below them."""

    def __init__(self) -> None:
        self.fields = []

    def on_visit(self, node) -> bool:
        return False

    def on_leave(self, node) -> None:
        pass

    def on_visit_attribute(self, node, attribute) -> None:
        self.fields.append(attribute)

    def on_leave_attribute(self, node, attribute) -> None:
        pass


def _field_order(node: CSTNode) -> Tuple[str, ...]:
    cls = type(node)
    order = _ORDER.get(cls)
    if order is None:
        rec = _FieldOrder()
        node._visit_and_replace_children(rec)   # every field passes through a visit_* helper, by name
        order = _ORDER[cls] = tuple(dict.fromkeys(rec.fields))
    return order


def _has_attribute_hooks(cls: type) -> bool:
    found = _ATTRIBUTE_HOOKS.get(cls)
    if found is None:
        found = (cls.on_visit_attribute is not cst.CSTVisitor.on_visit_attribute
                 or cls.on_leave_attribute is not cst.CSTVisitor.on_leave_attribute
                 or any(_HOOK_NAME.match(name) for k in cls.__mro__ if not k.__module__.startswith("libcst")
                        for name in vars(k)))   # (libcst's own classes define every hook as a no-op)
        _ATTRIBUTE_HOOKS[cls] = found
    return found


def _own(fn):
    return None if fn is None or getattr(fn, "__module__", "").startswith("libcst") else fn


def _methods(vcls: type, ncls: type):
    """The visitor class's visit_<Node>/leave_<Node> for a node class, as CSTVisitor's default on_visit and
    on_leave would find them (libcst's own no-op stubs left out)."""
    per_node = _METHODS.get(vcls)
    if per_node is None:
        per_node = _METHODS[vcls] = {}
    found = per_node.get(ncls)
    if found is None:
        name = ncls.__name__
        found = per_node[ncls] = (_own(getattr(vcls, "visit_" + name, None)),
                                  _own(getattr(vcls, "leave_" + name, None)))
    return found


def default_dispatch(visitor: cst.CSTVisitor) -> bool:
    """Whether the visitor keeps CSTVisitor's own on_visit/on_leave (then its visit_<Node>/leave_<Node> can be
    looked up once per class) and holds no such method on the instance itself."""
    cls = type(visitor)
    dispatch = _DEFAULT_DISPATCH.get(cls)
    if dispatch is None:
        dispatch = _DEFAULT_DISPATCH[cls] = (cls.on_visit is cst.CSTVisitor.on_visit
                                             and cls.on_leave is cst.CSTVisitor.on_leave)
    if dispatch and any(k.startswith(("visit_", "leave_")) for k in getattr(visitor, "__dict__", ())):
        return False   # a method set on the instance: only getattr on the visitor finds it
    return dispatch


def children(node: CSTNode) -> List[CSTNode]:
    """`node.children` (its immediate child nodes, whitespace included, in libcst's visit order) without the
    rebuild of the node that libcst's property does."""
    order = _ORDER.get(type(node))
    out: List[CSTNode] = []
    for name in _field_order(node) if order is None else order:
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            out.extend(value)
        elif value is not None and kind is not MaybeSentinel and kind is not str:
            out.append(value)
    return out


_NODE_KINDS: Dict[type, bool] = {}


def is_node(value: object) -> bool:
    """isinstance(value, CSTNode), cached per type (CSTNode is an ABC: isinstance on it is slow)."""
    kind = type(value)
    found = _NODE_KINDS.get(kind)
    if found is None:
        found = _NODE_KINDS[kind] = isinstance(value, CSTNode)
    return found


def walk_fields(node: CSTNode, visitor: cst.CSTVisitor, fields_of, dispatch: Optional[bool] = None) -> None:
    """on_visit/on_leave (no attribute hooks) through the fields `fields_of(type(node))` names (None: all of
    them), in that order: a walk that can leave out fields no analysis looks at (whitespace)."""
    _walk_fields(node, visitor, fields_of, default_dispatch(visitor) if dispatch is None else dispatch)


def _walk_fields(node: CSTNode, visitor: cst.CSTVisitor, fields_of, dispatch: bool) -> None:
    if dispatch:
        visit, leave = _methods(type(visitor), type(node))
        down = visit is None or visit(visitor, node) is not False
    else:
        down = visitor.on_visit(node)
    if down:
        fields = fields_of(type(node))
        if fields is None:
            for child in children(node):
                _walk_fields(child, visitor, fields_of, dispatch)
        else:
            for name in fields:
                value = getattr(node, name)
                kind = type(value)
                if kind is tuple or kind is list:
                    for child in value:
                        if is_node(child):
                            _walk_fields(child, visitor, fields_of, dispatch)
                elif value is not None and is_node(value):
                    _walk_fields(value, visitor, fields_of, dispatch)
    if not dispatch:
        visitor.on_leave(node)
    elif leave is not None:
        leave(visitor, node)


def _walk(node: CSTNode, visitor: cst.CSTVisitor, hooks: bool, dispatch: bool) -> None:
    if dispatch:   # CSTVisitor's own on_visit/on_leave, with the method lookup cached per class
        visit, leave = _methods(type(visitor), type(node))
        down = visit is None or visit(visitor, node) is not False
    else:
        down = visitor.on_visit(node)
    if down:
        order = _ORDER.get(type(node))
        for name in _field_order(node) if order is None else order:
            value = getattr(node, name)
            if hooks:
                visitor.on_visit_attribute(node, name)
            kind = type(value)   # (no isinstance: libcst's node classes are ABCs, slow to test)
            if kind is tuple or kind is list:
                for child in value:
                    _walk(child, visitor, hooks, dispatch)
            elif value is not None and kind is not MaybeSentinel and kind is not str:
                _walk(value, visitor, hooks, dispatch)
            if hooks:
                visitor.on_leave_attribute(node, name)
    if not dispatch:
        visitor.on_leave(node)
    elif leave is not None:
        leave(visitor, node)


def _visit(self, visitor):
    if isinstance(visitor, cst.CSTVisitor):
        _walk(self, visitor, _has_attribute_hooks(type(visitor)), default_dispatch(visitor))
        return self
    return _LIBCST_VISIT(self, visitor)


def install() -> None:
    """Make CSTNode.visit take the read-only walk for CSTVisitors (idempotent). MSMIGRATE_LIBCST_VISIT=1 keeps
    libcst's own visit (bench/convert_speed.py --compare-visit times both)."""
    if os.environ.get("MSMIGRATE_LIBCST_VISIT") == "1":
        return
    if CSTNode.visit is not _visit:
        CSTNode.visit = _visit


def libcst_visit(node: CSTNode, visitor) -> object:
    """libcst's own visit (for the tests that compare both)."""
    return _LIBCST_VISIT(node, visitor)


__all__ = ["children", "default_dispatch", "install", "is_node", "libcst_visit", "walk_fields"]
