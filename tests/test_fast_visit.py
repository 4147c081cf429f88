"""msmigrate/fast_visit.py walks a CSTVisitor through a tree without rebuilding it. It must call the
visitor exactly as libcst's own visit does: the same on_visit / on_leave sequence, the same
attribute hooks, the same pruning where on_visit returns False. Compared here over real sources
(this project's own, every node kind Python has) and a file written to hold the rarer syntax."""
from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

import msmigrate  # noqa: F401  installs the walk
from msmigrate import fast_visit

ROOT = Path(__file__).resolve().parent.parent

RARE = '''
from os import *
from . import (a as b, c)
import x.y as z
@dec(1)
async def f(a, /, b: int = 2, *c, d, e=3, **g) -> "T":
    global q
    nonlocal_ = lambda p, *q, r=1, **s: p
    async with a as (b, c), d:
        async for i in j:
            yield from k
            await m
    x = [i async for i in y if i for j in i]
    y = {k: v for k, v in z.items()}
    w = {1, *a}
    v = (yield)
    u = a if b else c
    t = not a and b or c
    s = a[1:2:3, ..., None]
    r @= m
    o = f"{a!r:>{w}} {b=}"
    del a[0], b.c
    assert a, "m"
    raise E from c
    try:
        pass
    except* (E, F) as e:
        pass
    else:
        pass
    finally:
        pass
    match p:
        case [1, *rest] | {"k": v, **kw} if v:
            pass
        case Point(x=0, y=_) as pt:
            pass
        case _:
            pass
    while (n := n - 1):
        continue
    else:
        break
class C(B, metaclass=M):
    x: int = 1
    def m(self): return super().m() ; pass
type_ = list[int]
'''


class _Events(cst.CSTVisitor):
    def __init__(self, prune=()):
        self.events = []
        self.prune = prune

    def on_visit(self, node):
        self.events.append(("visit", type(node).__name__, id(node)))
        return not isinstance(node, self.prune)

    def on_leave(self, node):
        self.events.append(("leave", type(node).__name__, id(node)))

    def on_visit_attribute(self, node, attribute):
        self.events.append(("attr", attribute))

    def on_leave_attribute(self, node, attribute):
        self.events.append(("/attr", attribute))


class _NodesOnly(cst.CSTVisitor):
    """No attribute hooks: the walk skips them, the node sequence must still be libcst's."""

    def __init__(self):
        self.events = []

    def visit_Name(self, node):
        self.events.append(node.value)

    def visit_FunctionDef(self, node):
        self.events.append("def " + node.name.value)
        return node.name.value != "f"     # prune one function's body

    def leave_Call(self, node):
        self.events.append("call")


class _IfBodyHook(cst.CSTVisitor):
    def __init__(self):
        self.events = []
        self.depth = 0

    def visit_If_body(self, node):
        self.depth += 1

    def leave_If_body(self, node):
        self.depth -= 1

    def visit_Name(self, node):
        self.events.append((node.value, self.depth))


def _sources():
    files = sorted((ROOT / "msmigrate").rglob("*.py"))[:40] + sorted((ROOT / "tests").glob("test_*.py"))[:15]
    return [RARE] + [p.read_text(encoding="utf-8") for p in files]


def _both(module, make):
    ours, theirs = make(), make()
    module.visit(ours)
    fast_visit.libcst_visit(module, theirs)
    return ours.events, theirs.events


def test_walk_is_installed():
    assert cst.CSTNode.visit is fast_visit._visit


@pytest.mark.parametrize("make", [lambda: _Events(), lambda: _Events(prune=(cst.Call, cst.Lambda)), _NodesOnly,
                                  _IfBodyHook], ids=["events", "pruned", "nodes-only", "if-body-hook"])
def test_same_calls_as_libcst(make):
    n = 0
    for text in _sources():
        module = cst.parse_module(text)
        ours, theirs = _both(module, make)
        assert ours == theirs
        n += len(ours)
    assert n > 1000


class _Edits(cst.CSTTransformer):
    """A transformer that changes a little of everything: renames, removes statements and optional children,
    flattens one statement into two, and records the nodes it sees (the original ones, by position of visit)."""

    def __init__(self):
        self.seen = []
        self.removed = set()

    def on_visit(self, node):
        self.seen.append(type(node).__name__)
        super().on_visit(node)
        return not isinstance(node, cst.Lambda)

    def leave_Name(self, original, updated):
        return updated.with_changes(value=updated.value.upper()) if updated.value in ("a", "x", "self") else updated

    def leave_Pass(self, original, updated):
        return cst.RemoveFromParent()        # a statement line left empty goes too (visit_body_iterable)

    def visit_FunctionDef(self, node):
        if node.returns is not None:
            self.removed.add(id(node.returns))     # an optional child removed: None

    def visit_Arg(self, node):
        if isinstance(node.comma, cst.Comma):
            self.removed.add(id(node.comma))       # a sentinel child removed: MaybeSentinel.DEFAULT

    def leave_Annotation(self, original, updated):
        return cst.RemoveFromParent() if id(original) in self.removed else updated

    def leave_AnnAssign(self, original, updated):
        return updated.with_changes(value=None, equal=cst.MaybeSentinel.DEFAULT)

    def leave_Return(self, original, updated):
        return cst.FlattenSentinel([cst.Expr(cst.Name("before_return")), updated])

    def leave_Comma(self, original, updated):
        return cst.RemoveFromParent() if id(original) in self.removed else updated


def test_transformers_compute_what_libcsts_visit_computes():
    """Over the same sources, the transform (children visited as libcst's helpers do, a node rebuilt only where
    a child changed) gives libcst's result, code and tree, after the same on_visit sequence."""
    n = 0
    for text in _sources()[:20]:
        module = cst.parse_module(text)
        ours, theirs = _Edits(), _Edits()
        got = module.visit(ours)
        want = fast_visit.libcst_visit(module, theirs)
        assert got.code == want.code
        assert got.deep_equals(want)
        assert ours.seen == theirs.seen
        n += len(ours.seen)
    assert n > 10000
    assert "before_return" in got.code and ") -> " not in got.code


def test_unchanged_subtrees_stay_the_same_objects():
    module = cst.parse_module("def f(a, b=2):\n    return g(a) + b\n\nq = 1\n")
    assert module.visit(cst.CSTTransformer()) is module

    class _RenameQ(cst.CSTTransformer):
        def leave_Name(self, original, updated):
            return updated.with_changes(value="r") if updated.value == "q" else updated

    new = module.visit(_RenameQ())
    assert new.code == "def f(a, b=2):\n    return g(a) + b\n\nr = 1\n"
    assert new.body[0] is module.body[0] and new.body[1] is not module.body[1]


def test_removing_a_required_child_is_refused_as_libcst_refuses_it():
    class _DropFunc(cst.CSTTransformer):
        def leave_Name(self, original, updated):
            return cst.RemoveFromParent() if updated.value == "f" else updated

    module = cst.parse_module("f(1)\n")
    with pytest.raises(TypeError, match="does not allow it to be removed"):
        module.visit(_DropFunc())
    with pytest.raises(TypeError, match="does not allow it to be removed"):
        fast_visit.libcst_visit(module, _DropFunc())


def test_transformers_with_attribute_hooks_keep_libcsts_visit():
    class _Hooked(cst.CSTTransformer):
        def __init__(self):
            self.attrs = []

        def on_visit_attribute(self, node, attribute):
            self.attrs.append(attribute)

    module = cst.parse_module("x = f'{a}'\n")
    v = _Hooked()
    assert module.visit(v).code == module.code
    assert "format_spec" not in v.attrs and "value" in v.attrs   # libcst visits a missing format spec not at all
    visited = _Events()
    assert module.visit(visited) is module
    assert [e[1] for e in visited.events if e[0] == "visit"][:3] == ["Module", "SimpleStatementLine", "Assign"]


def test_children_are_libcst_children():
    """fast_visit.children(node) is libcst's node.children (the same objects, in the same order) for every node."""
    n = 0
    for text in _sources()[:12]:
        stack = [cst.parse_module(text)]
        while stack:
            node = stack.pop()
            ours, theirs = fast_visit.children(node), list(node.children)
            assert len(ours) == len(theirs) and all(a is b for a, b in zip(ours, theirs)), type(node).__name__
            stack.extend(theirs)
            n += 1
    assert n > 10000


def test_code_walk_leaves_out_the_named_fields_only():
    """walk_fields (train_loop.walk's walk, whitespace left out) sees the nodes libcst's visit sees, less those under
    the fields it leaves out, in the same order, with the same pruning."""
    from msmigrate import train_loop

    class _Kinds(cst.CSTVisitor):
        def __init__(self):
            self.seen = []

        def on_visit(self, node):
            self.seen.append(type(node).__name__)
            return not isinstance(node, cst.Lambda)

    skipped = (cst.EmptyLine, cst.TrailingWhitespace, cst.SimpleWhitespace, cst.ParenthesizedWhitespace,
               cst.Newline, cst.Comment, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
               cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.Comma, cst.Semicolon)
    for text in [RARE] + _sources()[1:6]:
        module = cst.parse_module(text)
        ours, theirs = _Kinds(), _Kinds()
        train_loop.walk(module, ours)
        fast_visit.libcst_visit(module, theirs)
        names = {k.__name__ for k in skipped}
        assert ours.seen == [k for k in theirs.seen if k not in names]
        assert "Lambda" in ours.seen or "lambda" not in text
