"""libcst's visit without the rebuilding of unchanged nodes.

libcst visits a node's children through `_visit_and_replace_children`, which builds a new node (with its
validation) at every level, for a read-only CSTVisitor too and for a transformer that changes nothing there. The
converter's analyses are such visitors, dozens of walks per file, and its passes are transformers that change a
few nodes each: that rebuilding was most of the conversion time. `install()` makes `CSTNode.visit`
- walk a CSTVisitor through the node's own fields, in the order libcst's visit would (read once per node class
  from the source of its `_visit_and_replace_children`), with the same calls: on_visit, the attribute hooks where
  the visitor class defines any (`visit_If_body`), on_leave;
- run a CSTTransformer over the children as libcst's visit_* helpers do (removal, flattening, the body rule for
  emptied statements) and build a new node (`with_changes`, validated as libcst's constructor call is) only where
  a child changed: an unchanged subtree stays the same object. Transformers with attribute hooks keep libcst's
  own visit.
tests/test_fast_visit.py compares both with libcst's over real sources. MSMIGRATE_LIBCST_VISIT=1 keeps libcst's visit
for everything, MSMIGRATE_LIBCST_TRANSFORM=1 for transformers only (bench/convert_speed.py --compare-visit)."""
from __future__ import annotations

import inspect
import os
import re
import weakref
from typing import Dict, List, Optional, Tuple

import libcst as cst
from libcst._flatten_sentinel import FlattenSentinel
from libcst._maybe_sentinel import MaybeSentinel
from libcst._nodes.base import CSTNode, CSTValidationError
from libcst._removal_sentinel import RemovalSentinel

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


_HELPER_CALL = re.compile(r'visit_(required|optional|sentinel|sequence|body_sequence)\(\s*self,\s*"(\w+)"')
# per node class: (field, the visit_* helpers libcst's _visit_and_replace_children passes it to), in its order
_FIELDS: Dict[type, Optional[Tuple[Tuple[str, frozenset], ...]]] = {}


def field_kinds(cls: type) -> Optional[Tuple[Tuple[str, frozenset], ...]]:
    """Read from the source of the class's _visit_and_replace_children: every field it visits, also those one
    node may skip (FormattedStringExpression visits format_spec only when it has one), with the kinds of helper
    (ImportFrom.names: visit_required for `*`, visit_sequence otherwise). None where the source is not there."""
    if cls not in _FIELDS:
        try:
            src = inspect.getsource(cls._visit_and_replace_children)
        except (OSError, TypeError):
            _FIELDS[cls] = None
        else:
            kinds: Dict[str, set] = {}
            for kind, name in _HELPER_CALL.findall(src):
                kinds.setdefault(name, set()).add(kind)
            _FIELDS[cls] = tuple((name, frozenset(k)) for name, k in kinds.items()) or None
    return _FIELDS[cls]


def _field_order(node: CSTNode) -> Tuple[str, ...]:
    cls = type(node)
    order = _ORDER.get(cls)
    if order is None:
        fields = field_kinds(cls)
        if fields is not None:
            order = tuple(name for name, _ in fields)
        else:   # every field passes through a visit_* helper, by name: the ones this node visits
            rec = _FieldOrder()
            node._visit_and_replace_children(rec)
            order = tuple(dict.fromkeys(rec.fields))
        _ORDER[cls] = order
    return order


def _has_attribute_hooks(cls: type) -> bool:
    found = _ATTRIBUTE_HOOKS.get(cls)
    if found is None:
        base = cst.CSTTransformer if issubclass(cls, cst.CSTTransformer) else cst.CSTVisitor
        found = (cls.on_visit_attribute is not base.on_visit_attribute
                 or cls.on_leave_attribute is not base.on_leave_attribute
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
            kind = type(value)   # (no isinstance: libcst's node classes are ABCs, slow to test)
            if hooks:
                if value is None and name in _sequence_only_if_set(type(node)):
                    continue     # (FormattedStringExpression.format_spec: libcst visits it only when set)
                visitor.on_visit_attribute(node, name)
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


def _sequence_only_if_set(cls: type) -> frozenset:
    """Fields libcst visits with visit_sequence only when they hold something (a None one has no attribute hook)."""
    found = _SEQUENCE_ONLY_IF_SET.get(cls)
    if found is None:
        found = _SEQUENCE_ONLY_IF_SET[cls] = frozenset(
            name for name, kinds in (field_kinds(cls) or ()) if kinds <= {"sequence", "body_sequence"}
            and re.search(rf'visit_sequence\(\s*self,\s*"{name}"[^)]*\)\s*if\s', _source(cls)))
    return found


def _source(cls: type) -> str:
    try:
        return inspect.getsource(cls._visit_and_replace_children)
    except (OSError, TypeError):
        return ""


_SEQUENCE_ONLY_IF_SET: Dict[type, frozenset] = {}


# ------------------------------------------------------------------ transformers
# libcst's visit rebuilds every node a transformer passes (a new node, validated), changed or not: most of a
# conversion's time. _transform visits the children as libcst's visit_* helpers do and builds a new node only where
# a child changed (node.with_changes, validated as libcst's constructor call is); an unchanged subtree stays the
# same object. Transformers with attribute hooks keep libcst's own visit.
def _removed_from(parent: CSTNode, child: CSTNode, kinds: frozenset):
    if "optional" in kinds:
        return None
    if "sentinel" in kinds:
        return MaybeSentinel.DEFAULT
    raise TypeError(f"We got a RemovalSentinel while visiting a {type(child).__name__}. This "
                    "node's parent does not allow it to be removed.")


def _flattened_into_one(child: CSTNode):
    raise TypeError(f"We got a FlattenSentinel while visiting a {type(child).__name__}. This "
                    "node's parent does not allow for it to be it to be replaced with a sequence.")


def _transform_sequence(children, visitor, body: bool) -> tuple:
    out = []
    for child in children:
        new = child.visit(visitor)
        if new is child:
            out.append(new)
        elif new is RemovalSentinel.REMOVE:
            continue
        elif type(new) is FlattenSentinel:
            for part in new:
                if body and not child._is_removable() and part._is_removable():
                    continue     # (visit_body_iterable: a statement emptied by a removal goes too)
                out.append(part)
        elif body and not child._is_removable() and new._is_removable():
            continue
        else:
            out.append(new)
    return tuple(out)


def _transform_children(node: CSTNode, visitor, fields) -> CSTNode:
    changes = None
    for name, kinds in fields:
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            new = _transform_sequence(value, visitor, "body_sequence" in kinds)
            if kind is list or len(new) != len(value) or any(a is not b for a, b in zip(new, value)):
                changes = changes or {}
                changes[name] = new      # (libcst's rebuild makes every sequence a tuple)
        elif value is None or kind is MaybeSentinel:
            continue
        else:
            new = value.visit(visitor)
            if new is value:
                continue
            if new is RemovalSentinel.REMOVE:
                new = _removed_from(node, value, kinds)
            elif type(new) is FlattenSentinel:
                _flattened_into_one(value)
            changes = changes or {}
            changes[name] = new
    return node if changes is None else node.with_changes(**changes)


def _transform(node: CSTNode, visitor, fields):
    if visitor.on_visit(node):
        updated = _transform_children(node, visitor, fields)
    else:
        updated = node
    result = visitor.on_leave(node, updated)
    if not (result is RemovalSentinel.REMOVE or type(result) is FlattenSentinel or is_node(result)):
        raise CSTValidationError("Expected a node of type CSTNode or a RemovalSentinel, "
                                 f"but got a return value of {type(result).__name__}")
    return result


def _visit(self, visitor):
    if isinstance(visitor, cst.CSTVisitor):
        _walk(self, visitor, _has_attribute_hooks(type(visitor)), default_dispatch(visitor))
        return self
    if _FAST_TRANSFORM and isinstance(visitor, cst.CSTTransformer) and not _has_attribute_hooks(type(visitor)):
        fields = _FIELDS.get(type(self), _UNREAD)
        if fields is _UNREAD:
            fields = field_kinds(type(self))
        if fields is not None:
            return _transform(self, visitor, fields)
    return _LIBCST_VISIT(self, visitor)


_UNREAD = object()
_FAST_TRANSFORM = os.environ.get("MSMIGRATE_LIBCST_TRANSFORM") != "1"


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


__all__ = ["children", "default_dispatch", "field_kinds", "install", "is_node", "libcst_visit", "walk_fields"]
