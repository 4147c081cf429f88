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


def test_transformers_still_rebuild():
    class _Rename(cst.CSTTransformer):
        def leave_Name(self, original, updated):
            return updated.with_changes(value=updated.value.upper()) if updated.value == "a" else updated

    module = cst.parse_module("a = b + a\n")
    assert module.visit(_Rename()).code == "A = b + A\n"
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
