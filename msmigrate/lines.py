"""Line numbers for statements without libcst's PositionProvider (which re-generates
the whole module's code and costs more than the conversion): the stdlib `ast` tree of
the same source has the same statements in the same order, with their line numbers."""
from __future__ import annotations

import ast
from typing import Dict, List

import libcst as cst


# an ast statement a pre-pass added for a statement it wrote on the line of the one it replaces (grad_helpers.py:
# a call written out, each of its statements on the call's line): paired with its own libcst statement
INLINED = "_msmigrate_inlined"


def statement_lines(module: cst.Module, tree: ast.Module) -> Dict[int, int]:
    """id(libcst statement) -> first line, for every statement in the module."""
    lines: Dict[int, int] = {}
    try:
        _pair(list(module.body), list(tree.body), lines)
    except (IndexError, AttributeError):
        pass  # a structure we did not expect: the remaining statements get line 0
    return lines


def _block(body) -> List[cst.CSTNode]:
    if isinstance(body, cst.IndentedBlock):
        return list(body.body)
    if isinstance(body, cst.SimpleStatementSuite):  # `if x: y` on one line
        return [body]
    return []


_COMPOUND = {cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef), cst.ClassDef: (ast.ClassDef,),
             cst.For: (ast.For, ast.AsyncFor), cst.While: (ast.While,), cst.If: (ast.If,),
             cst.With: (ast.With, ast.AsyncWith), cst.Try: (ast.Try,), cst.TryStar: (getattr(ast, "TryStar", ast.Try),)}
_AST_COMPOUND = tuple(t for ts in _COMPOUND.values() for t in ts) + (getattr(ast, "Match", ast.If),)


def _same_kind(following: List[cst.CSTNode], a: ast.stmt) -> bool:
    """The next converted statement is a compound one of the source statement's kind."""
    kinds = next((ts for c, ts in _COMPOUND.items() if following and isinstance(following[0], c)), ())
    return bool(kinds) and isinstance(a, kinds)


def _pair(cst_body: List[cst.CSTNode], ast_body: List[ast.stmt], lines: Dict[int, int]) -> None:
    """Pairs the statements in order. The pre-passes may have rewritten a statement into several on its line
    (`m.mul_(b).add_(g)` as `m.mul_(b); m.add_(g)`) or added lines: a line of simple statements takes the
    source statements of its original line, an added one the line before it, and a compound statement the
    next source statement of its kind past simple ones, so the statements after them keep their own lines."""
    j = 0
    for i, st in enumerate(cst_body):
        if isinstance(st, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if j < len(ast_body) and not isinstance(ast_body[j], _AST_COMPOUND):
                line = lines[id(st)] = ast_body[j].lineno
                j += 1
                while j < len(ast_body) and ast_body[j].lineno == line \
                        and not isinstance(ast_body[j], _AST_COMPOUND) and not getattr(ast_body[j], INLINED, False):
                    j += 1
            elif j < len(ast_body) and not _same_kind(cst_body[i + 1:i + 2], ast_body[j]):
                lines[id(st)] = ast_body[j].lineno   # a compound statement a pre-pass made simple
                j += 1
            else:   # a statement a pre-pass added before a compound one: the line of the one before it
                lines[id(st)] = ast_body[j - 1].lineno if 0 < j <= len(ast_body) else ast_body[0].lineno
            continue
        kinds = next((ts for c, ts in _COMPOUND.items() if isinstance(st, c)), None)
        if kinds is not None:   # past source statements a pre-pass removed, to the next one of its kind
            k = j
            while k < len(ast_body) and not isinstance(ast_body[k], _AST_COMPOUND):
                k += 1
            if k < len(ast_body) and isinstance(ast_body[k], kinds):
                j = k
        a = ast_body[j]
        j += 1
        lines[id(st)] = getattr(a, "lineno", 0)
        if isinstance(st, (cst.FunctionDef, cst.ClassDef)):
            for d, ad in zip(st.decorators, a.decorator_list):
                lines[id(d)] = ad.lineno
        if isinstance(st, (cst.FunctionDef, cst.ClassDef, cst.With, cst.For, cst.While)):
            _pair(_block(st.body), a.body, lines)
            if isinstance(st, (cst.For, cst.While)) and st.orelse is not None:
                _pair(_block(st.orelse.body), a.orelse, lines)
        elif isinstance(st, cst.If):
            _pair(_block(st.body), a.body, lines)
            if isinstance(st.orelse, cst.If):
                _pair([st.orelse], a.orelse, lines)
            elif st.orelse is not None:
                _pair(_block(st.orelse.body), a.orelse, lines)
        elif isinstance(st, (cst.Try, cst.TryStar)):
            _pair(_block(st.body), a.body, lines)
            for h, ah in zip(st.handlers, a.handlers):
                lines[id(h)] = ah.lineno
                _pair(_block(h.body), ah.body, lines)
            if st.orelse is not None:
                _pair(_block(st.orelse.body), a.orelse, lines)
            if st.finalbody is not None:
                _pair(_block(st.finalbody.body), a.finalbody, lines)


class LineTracker(cst.CSTTransformer):
    """A transformer that knows the original line of the statement it is in (`self._line[-1]`), from
    `lines` (statement_lines: id(statement) -> line). For passes that run after the main conversion
    (numpy_idioms.py, package_probes.py) and report sites."""

    def __init__(self, lines: Dict[int, int]):
        super().__init__()
        self.lines = lines
        self._line: List[int] = [0]

    def on_visit(self, node: cst.CSTNode) -> bool:
        if id(node) in self.lines:
            self._line.append(self.lines[id(node)])
        return super().on_visit(node)

    def on_leave(self, original_node, updated_node):
        result = super().on_leave(original_node, updated_node)
        if id(original_node) in self.lines:
            self._line.pop()
        return result
