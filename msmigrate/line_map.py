"""Which original line each line of a converted file comes from, for errors raised where no converter pass
runs: MindSpore compiling a converted construct names the converted file's line ("In file model.py:57"), and
the first rule wants the original's (templates/compat_parts/graph_constants.py's compile_error re-raises it
as MigrationError naming it).

Every statement of the source is marked before the conversion with a trailing comment holding its original
line (mark_statements); the passes keep a statement's trailing comment as they rewrite it, so the converted
code carries the marks wherever its statements went. unmark() takes them out again (the converted code is the
same as without them) and returns, per converted statement that kept a mark, (first line, last line,
original line): a line of the converted file names the original line of the innermost statement holding it
(a statement the conversion added names the one around it)."""
from __future__ import annotations

import ast
import difflib
import re
from typing import Dict, List, Tuple

import libcst as cst

_MARK = "  #@msmigrate-line:{}@"
_MARK_RE = re.compile(r"  #@msmigrate-line:(\d+)@")

Spans = List[Tuple[int, int, int]]


_HOLDS_STATEMENTS = (cst.Module, cst.BaseSuite, cst.BaseCompoundStatement, cst.Else, cst.ExceptHandler,
                     cst.ExceptStarHandler, cst.Finally, cst.MatchCase)


class _Marker(cst.CSTTransformer):
    def __init__(self, lines: Dict[int, int]):
        super().__init__()
        self.lines = lines

    def _marked(self, ws: cst.TrailingWhitespace, line: int) -> cst.TrailingWhitespace:
        if ws.comment is not None:
            return ws.with_changes(comment=cst.Comment(ws.comment.value + _MARK.format(line)))
        return ws.with_changes(whitespace=cst.SimpleWhitespace(ws.whitespace.value + _MARK.format(line)[:2]),
                               comment=cst.Comment(_MARK.format(line)[2:]))

    def on_visit(self, node) -> bool:   # only what holds statements: not their expressions (time)
        return isinstance(node, _HOLDS_STATEMENTS)

    def on_leave(self, original, updated):
        updated = super().on_leave(original, updated)
        line = self.lines.get(id(original))
        if not line or not isinstance(updated, cst.CSTNode):
            return updated
        if isinstance(updated, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return updated.with_changes(trailing_whitespace=self._marked(updated.trailing_whitespace, line))
        body = getattr(updated, "body", None)
        if isinstance(body, cst.IndentedBlock) and isinstance(updated, cst.BaseCompoundStatement):
            return updated.with_changes(body=body.with_changes(header=self._marked(body.header, line)))
        return updated


def mark_statements(module: cst.Module, lines: Dict[int, int]) -> cst.Module:
    """The module with each statement in `lines` (lines.statement_lines) marked with its original line."""
    return module.visit(_Marker(lines))


def unmark(code: str) -> Tuple[str, Spans]:
    """The code without the marks, and its (first line, last line, original line) spans."""
    if "#@msmigrate-line:" not in code:
        return code, []
    out, marks = [], {}
    for text in code.splitlines(keepends=True):
        found = _MARK_RE.findall(text)
        if not found:
            out.append(text)
            continue
        rest = _MARK_RE.sub("", text)
        if not rest.strip():   # a mark a pass moved onto a comment line of its own
            continue
        out.append(rest)
        marks[len(out)] = int(found[-1])
    code = "".join(out)
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code, []
    spans: Spans = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):   # a compound statement: its header
            header = range(node.lineno, max(node.lineno, body[0].lineno - 1) + 1)
            line = next((marks[n] for n in header if n in marks), None)
        else:
            line = marks.get(node.end_lineno)
        if line is not None:
            spans.append((node.lineno, node.end_lineno, line))
    return code, sorted(spans)


def follow_edits(spans: Spans, before: str, after: str) -> Spans:
    """The spans of `before` moved onto `after`, the same code after a pass over the text (native_forms.py,
    helper_notes.py: a helper call in its native form, a comment line added)."""
    if before == after or not spans:
        return spans
    moved: Dict[int, int] = {}
    a, b = before.splitlines(), after.splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            moved.update((i + 1, j1 + (i - i1) + 1) for i in range(i1, i2))
    return [(moved[s], moved[e], o) for s, e, o in spans if s in moved and e in moved]


# written next to _ms_compat.py: converted file (relative to it) -> its original and the spans
LINES_FILE = "_ms_lines.json"


def line_table(results, single_out, out_root) -> str:
    """_ms_lines.json for the converted files of a tree (converter.FileResult, each with its spans)."""
    import json
    table = {}
    for res in results:
        if res.spans:
            rel = single_out.name if single_out else res.rel
            table[rel.replace("\\", "/")] = {"source": res.rel.replace("\\", "/"), "spans": res.spans}
    return json.dumps(table, separators=(",", ":"), sort_keys=True) + "\n"


def mark_of(statement) -> str:
    """The mark of a statement (mark_statements), as text for a line a pass writes in its stead (train_loop.py's
    `opt(grads)` in the train step for `opt.step()`); "" for none."""
    ws = getattr(statement, "trailing_whitespace", None)
    if ws is None and isinstance(getattr(statement, "body", None), cst.IndentedBlock):
        ws = statement.body.header
    comment = ws.comment.value if ws is not None and ws.comment is not None else ""
    found = re.findall(r"#@msmigrate-line:(\d+)@", comment)
    return _MARK.format(found[-1]) if found else ""
