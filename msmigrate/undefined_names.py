"""A name that a function reads and that its module never defines, read through the helper with its line.

    if shared_qk:                                      if shared_qk:
        dots.masked_fill_(mask, TOKEN_SELF_ATTN_VALUE)  ->  ... _ms_compat.undefined_name('TOKEN_SELF_ATTN_VALUE',
                                                                                        'pkg.attention:144') ...

Python looks the name up only when the line runs: a branch that is never taken (lucidrains'
linear-attention-transformer at ab7693e, LocalAttention's `if shared_qk:`) costs nothing. MindSpore's GRAPH
parser resolves every name of the function when it parses it, taken branch or not, and stops compiling with
"NameError: The name 'TOKEN_SELF_ATTN_VALUE' is not defined, or not supported in graph mode", naming no line of
the program. The helper is a constexpr: a compiled graph calls it only on a branch it compiles (a branch whose
condition is a constant False is not), and then raises while compiling, as PyNative raises where the line runs:
UndefinedName, a NameError (an `except NameError` still catches it) and a MigrationError naming the original line.

Only names no statement of the module binds (in any scope: an assignment, import, def, class, parameter, loop or
`with` target, `global` declaration) and that are not builtins are read this way; a module that can define names
the code does not spell out (`from x import *`, globals(), exec, a module __getattr__, builtins patched) is left
as written. Runs on the original source, before the other passes, so the positions are the original lines; a name
that the converted module binds (a converted training loop's `train_step`) is read as written again after it."""
from __future__ import annotations

import ast
import builtins
from typing import Dict, Set, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

# what a module's functions may read without a statement binding it
_IMPLICIT = set(dir(builtins)) | {"__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__",
                                  "__builtins__", "__path__", "__annotations__", "__class__", "__dict__",
                                  "__debug__", "__cached__"}
# ways a module can define a name that no statement spells out
_DYNAMIC = ("globals()", "exec(", "builtins", "__getattr__", "setattr(sys.modules", "vars()", "locals()")


def _bound_names(tree: ast.Module) -> Set[str]:
    bound: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif type(node).__name__ in ("MatchAs", "MatchStar") and getattr(node, "name", None):
            bound.add(node.name)
        elif type(node).__name__ == "MatchMapping" and getattr(node, "rest", None):
            bound.add(node.rest)
    return bound


class _FunctionReads(ast.NodeVisitor):
    """(line, column) of each Name read in a function's body (its default values and annotations, evaluated
    where the function is defined, left out), by name."""

    def __init__(self, unknown: Set[str]) -> None:
        self.unknown = unknown
        self.depth = 0
        self.found: Dict[Tuple[int, int], str] = {}

    def _function(self, node) -> None:
        for deco in node.decorator_list:
            self.visit(deco)
        self.depth += 1
        for stmt in node.body:
            self.visit(stmt)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.depth += 1
        self.visit(node.body)
        self.depth -= 1

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.target)   # a local's annotation is never evaluated
        if node.value is not None:
            self.visit(node.value)

    def visit_Name(self, node: ast.Name) -> None:
        if self.depth and isinstance(node.ctx, ast.Load) and node.id in self.unknown:
            self.found[(node.lineno, node.col_offset)] = node.id


def undefined_reads(source: str) -> Dict[Tuple[int, int], str]:
    """(line, column) -> name, for the reads in functions of names the module never defines."""
    if "import *" in source or any(word in source for word in _DYNAMIC):
        return {}
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    bound = _bound_names(tree)
    reads = _FunctionReads(set())
    loads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    reads.unknown = loads - bound - _IMPLICIT
    if not reads.unknown:
        return {}
    reads.visit(tree)
    return reads.found


class _ReadThroughHelper(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, found: Dict[Tuple[int, int], str], module_name: str, compat: str) -> None:
        super().__init__()
        self.found, self.module_name, self.compat = found, module_name, compat
        self.replaced = 0

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        pos = self.get_metadata(PositionProvider, original).start
        name = self.found.get((pos.line, pos.column))
        if name != original.value:
            return updated
        self.replaced += 1
        where = f"{self.module_name}:{pos.line}"
        return cst.parse_expression(f"{self.compat}.undefined_name({name!r}, {where!r})")


def read_undefined_names(module: cst.Module, source: str, module_name: str, compat: str) -> Tuple[cst.Module, bool]:
    """(module with each function's read of a name the module never defines routed through the helper,
    whether any was)."""
    found = undefined_reads(source)
    if not found:
        return module, False
    tr = _ReadThroughHelper(found, module_name, compat)
    new = MetadataWrapper(module).visit(tr)
    return new, tr.replaced > 0


class _ReadAsWritten(cst.CSTTransformer):
    def __init__(self, names: Set[str], compat: str) -> None:
        super().__init__()
        self.names, self.compat = names, compat

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = updated.func
        if (isinstance(func, cst.Attribute) and func.attr.value == "undefined_name"
                and isinstance(func.value, cst.Name) and func.value.value == self.compat
                and updated.args and isinstance(updated.args[0].value, cst.SimpleString)):
            name = updated.args[0].value.evaluated_value
            if name in self.names:
                return cst.Name(name)
        return updated


def restore_bound_names(module: cst.Module, compat: str) -> cst.Module:
    """The converted module again reading, as written, each name it binds itself."""
    try:
        bound = _bound_names(ast.parse(module.code))
    except SyntaxError:
        return module
    return module.visit(_ReadAsWritten(bound, compat))
