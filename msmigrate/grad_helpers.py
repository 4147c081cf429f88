"""A function whose `torch.autograd.grad` differentiates one of its parameters with respect to another, written out
where it is called, as torch code, before conversion.

    def penalty(self, score, point):                  # a WGAN-GP penalty as a method (StarGAN's solver)
        g = torch.autograd.grad(score, point, grad_outputs=torch.ones_like(score), create_graph=True)[0]
        ...
        return ((g.norm(2, dim=1) - 1) ** 2).mean()

    score = self.critic(mixed)                        # the caller computes y from x
    gp = self.penalty(score, mixed)

torch differentiates the graph its caller recorded from x to y. MindSpore differentiates functions: the gradient
needs the statements that compute y from x, which are the caller's, and higher_order_grad.py converts a
torch.autograd.grad in the block computing its output. So the call statement `T = self.f(a, b)` (a method of the
caller's class) or `T = f(a, b)` (a function of the module) becomes the function's statements: its parameters read
as the caller's argument names, its own names prefixed `_f_`, its `return E` as `T = E`. The statements keep their
line's mark (line_map.py), and the module's ast gets the same statements on that line (lines.INLINED), so every
other statement keeps its original line (lines.statement_lines pairs the two); a site in them names the call's
line, and the function's own statements, kept for its other callers, keep theirs.

Only where the whole computation is the same: a function of plain statements ending in its one `return`, no
parameter rebound, no `*args`, the defaults constants; arguments that are names (others bound first to
`_f_<param>`); a call as a whole assignment, in a method of the same class, or, for a module-level function, in
any function or at the script's top level, rebinding none of the names the function reads from its module. A
function imported from another module of the project, or a method of an imported class called through it with
the object first (`Solver.penalty(holder, y, x)`), likewise where each name it reads from its own module is the
same import in the caller's (_imported_helpers). Other calls stay calls (and the gradient in the function the TODO
that raises MigrationError at its line)."""
from __future__ import annotations

import ast
import builtins
import copy
import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from .callsite import code_of
from .lines import INLINED

_GRAD = re.compile(r"\bautograd\s*\.\s*grad\s*\(")
_MARK = re.compile(r"#@msmigrate-line:\d+@")    # line_map.py's mark of a statement's original line


def might_inline_grad_helpers(source: str, index=None, module_name: str = "") -> bool:
    """The module calls torch.autograd.grad, or imports from a project module that does."""
    if _GRAD.search(source):
        return True
    info = index.modules.get(module_name) if index is not None else None
    if info is None:
        return False
    for qname in set(info.imports.values()):
        other = index.modules.get(qname.rpartition(".")[0])
        if other is not None and other is not info and other.reads_autograd_grad:
            return True
    return False


class _Helper:
    def __init__(self, node: cst.FunctionDef, params: List[str], defaults: Dict[str, cst.BaseExpression],
                 method: bool, body: List[cst.SimpleStatementLine], ast_body: List[ast.stmt],
                 local: Set[str], free: Set[str]):
        self.node, self.params, self.defaults, self.method = node, params, defaults, method
        self.body, self.ast_body, self.local, self.free = body, ast_body, local, free


def _bound(node: cst.CSTNode) -> Set[str]:
    """Names the statements bind (assignment targets, for/with/except targets, imports, defs)."""
    out: Set[str] = set()

    class _V(cst.CSTVisitor):
        def _targets(self, t) -> None:
            if isinstance(t, cst.Name):
                out.add(t.value)
            elif isinstance(t, (cst.Tuple, cst.List)):
                for e in t.elements:
                    self._targets(e.value)
            elif isinstance(t, cst.StarredElement):
                self._targets(t.value)

        def visit_AssignTarget(self, node) -> None:
            self._targets(node.target)

        def visit_AnnAssign(self, node) -> None:
            self._targets(node.target)

        def visit_AugAssign(self, node) -> None:
            self._targets(node.target)

        def visit_For(self, node) -> None:
            self._targets(node.target)

        def visit_AsName(self, node) -> None:
            self._targets(node.name)

        def visit_NamedExpr(self, node) -> None:
            self._targets(node.target)

        def visit_CompFor(self, node) -> None:
            self._targets(node.target)

        def visit_FunctionDef(self, node) -> None:
            out.add(node.name.value)

        def visit_ClassDef(self, node) -> None:
            out.add(node.name.value)

        def visit_Param(self, node) -> None:
            out.add(node.name.value)

    node.visit(_V())
    return out


def _names_read(node: cst.CSTNode) -> Set[str]:
    """Every Name of the code that is no attribute's name and no keyword's."""
    out: Set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_Attribute(self, node) -> bool:
            node.value.visit(self)
            return False

        def visit_Arg(self, node) -> bool:
            node.value.visit(self)
            return False

        def visit_Name(self, node) -> None:
            out.add(node.value)

    node.visit(_V())
    return out


class _Rename(cst.CSTTransformer):
    """Names (not attribute names, not keywords) by a table."""

    def __init__(self, table: Dict[str, str]):
        super().__init__()
        self.table = table
        self._keep: Set[int] = set()

    def visit_Attribute(self, node) -> None:
        self._keep.add(id(node.attr))

    def visit_Arg(self, node) -> None:
        if node.keyword is not None:
            self._keep.add(id(node.keyword))

    def leave_Name(self, original, updated):
        if id(original) in self._keep or original.value not in self.table:
            return updated
        return updated.with_changes(value=self.table[original.value])


def _grad_of_params(body: List[cst.CSTNode], params: List[str]) -> bool:
    """Some torch.autograd.grad call of the statements takes outputs and inputs that are parameters."""
    found = []

    class _V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if not code_of(node.func).replace(" ", "").endswith("autograd.grad"):
                return
            given = {}
            for k, a in enumerate(node.args):
                key = a.keyword.value if a.keyword is not None else ("outputs", "inputs")[k] if k < 2 else None
                if key:
                    given[key] = a.value
            ok = True
            for key in ("outputs", "inputs"):
                v = given.get(key)
                if isinstance(v, (cst.Tuple, cst.List)) and len(v.elements) == 1:
                    v = v.elements[0].value
                ok = ok and isinstance(v, cst.Name) and v.value in params
            found.append(ok)

    for st in body:
        st.visit(_V())
    return bool(found) and any(found)


def _ast_function(tree: ast.Module, name: str, cls: Optional[str]) -> Optional[ast.FunctionDef]:
    scope = tree.body
    if cls is not None:
        owner = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)
        if owner is None:
            return None
        scope = owner.body
    found = [n for n in scope if isinstance(n, ast.FunctionDef) and n.name == name]
    return found[0] if len(found) == 1 else None


def _helper(fn: cst.FunctionDef, method: bool, tree: ast.Module, cls: Optional[str]) -> Optional[_Helper]:
    if fn.decorators or fn.asynchronous or not isinstance(fn.body, cst.IndentedBlock):
        return None
    p = fn.params
    if p.star_arg is not cst.MaybeSentinel.DEFAULT and p.star_arg is not None or p.star_kwarg is not None \
            or p.kwonly_params or p.posonly_params:
        return None
    params = [q.name.value for q in p.params]
    if method:
        if not params:
            return None
    defaults = {}
    for q in p.params:
        if q.default is not None:
            if not isinstance(q.default, (cst.Integer, cst.Float, cst.SimpleString, cst.Name)) or (
                    isinstance(q.default, cst.Name) and q.default.value not in ("True", "False", "None")):
                return None
            defaults[q.name.value] = q.default
    body = list(fn.body.body)
    fa = _ast_function(tree, fn.name.value, cls)
    if fa is None:
        return None
    ast_body = list(fa.body)
    if body and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1 \
            and isinstance(body[0].body[0], cst.Expr) and isinstance(body[0].body[0].value, cst.SimpleString):
        body, ast_body = body[1:], ast_body[1:]     # the docstring
    if not body or len(body) != len(ast_body):
        return None
    if not all(isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 for st in body):
        return None
    if not all(isinstance(st.body[0], (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Expr)) for st in body[:-1]):
        return None
    last = body[-1].body[0]
    if not isinstance(last, cst.Return) or last.value is None or not isinstance(ast_body[-1], ast.Return):
        return None
    # no lambda, comprehension or walrus: their own scopes and bindings are not renamed here
    text = "".join(code_of(st) for st in body)
    if re.search(r"\blambda\b|\byield\b|\bglobal\b|\bnonlocal\b|:=", text) or any(
            isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))
            for st in ast_body for n in ast.walk(st)):
        return None
    grad_params = params[1:] if method else params
    if not _grad_of_params(body, grad_params):
        return None
    local = set()
    for st in body:
        local |= _bound(st)
    if local & set(params):
        return None     # a parameter rebound: the caller's name would be
    read = set()
    for st in body:
        read |= _names_read(st)
    free = read - local - set(params)
    return _Helper(fn, params, defaults, method, body, ast_body, local, free)


def _helpers(module: cst.Module, tree: ast.Module) -> Tuple[Dict[str, _Helper], Dict[Tuple[str, str], _Helper]]:
    functions: Dict[str, _Helper] = {}
    methods: Dict[Tuple[str, str], _Helper] = {}
    top_names = [st.name.value for st in module.body if isinstance(st, cst.FunctionDef)]
    for st in module.body:
        if isinstance(st, cst.FunctionDef) and top_names.count(st.name.value) == 1:
            h = _helper(st, False, tree, None)
            if h is not None:
                functions[st.name.value] = h
        elif isinstance(st, cst.ClassDef) and isinstance(st.body, cst.IndentedBlock):
            names = [m.name.value for m in st.body.body if isinstance(m, cst.FunctionDef)]
            for m in st.body.body:
                if isinstance(m, cst.FunctionDef) and names.count(m.name.value) == 1:
                    h = _helper(m, True, tree, st.name.value)
                    if h is not None:
                        methods[(st.name.value, m.name.value)] = h
    return functions, methods


def _call_of(stmt: cst.CSTNode) -> Optional[Tuple[cst.Assign, cst.Call]]:
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1
            and isinstance(stmt.body[0].value, cst.Call)):
        return None
    return stmt.body[0], stmt.body[0].value


def _ast_statement_at(tree: ast.Module, line: int) -> Optional[Tuple[list, int]]:
    """(the body list holding it, its index) of the one assignment statement starting at `line`."""
    found = []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                for k, st in enumerate(block):
                    if isinstance(st, ast.Assign) and st.lineno == line:
                        found.append((block, k))
        for h in getattr(node, "handlers", ()) or ():
            for k, st in enumerate(h.body):
                if isinstance(st, ast.Assign) and st.lineno == line:
                    found.append((h.body, k))
    return found[0] if len(found) == 1 else None


class _Inliner(cst.CSTTransformer):
    def __init__(self, functions, methods, tree: ast.Module, lines: Dict[int, int], imported=None):
        super().__init__()
        self.functions, self.methods, self.tree, self.lines = functions, methods, tree, lines
        # name -> (helper, is a class) imported from another module of the project: `Solver` (its methods, called
        # through the class with the object first) or a function
        self.imported: Dict[str, Tuple[object, bool]] = imported or {}
        self.classes: List[str] = []
        self.funcs: List[Tuple[cst.FunctionDef, Set[str]]] = []
        self.done = 0

    def visit_ClassDef(self, node) -> None:
        self.classes.append(node.name.value)

    def leave_ClassDef(self, original, updated):
        self.classes.pop()
        return updated

    def visit_FunctionDef(self, node) -> None:
        self.funcs.append((node, _bound(node.body) | {q.name.value for q in node.params.params}))

    def leave_FunctionDef(self, original, updated):
        self.funcs.pop()
        return updated

    def _target(self, call: cst.Call) -> Tuple[Optional[_Helper], Optional[str]]:
        """The helper a call calls, and the receiver's name (a method's `self`)."""
        f = call.func
        local = self.funcs[-1][1] if self.funcs else set()
        if isinstance(f, cst.Name) and f.value in self.imported and f.value not in local:
            helper, is_class = self.imported[f.value]
            return (None, None) if is_class else (helper, None)
        if (isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value in self.imported
                and f.value.value not in local and self.imported[f.value.value][1]):
            # `Class.method(obj, ...)`: the object is the method's self
            helper = self.imported[f.value.value][0].get(f.attr.value)
            if helper is not None and call.args and isinstance(call.args[0].value, cst.Name) \
                    and call.args[0].keyword is None and not call.args[0].star:
                return helper, call.args[0].value.value
            return None, None
        if isinstance(f, cst.Name) and f.value in self.functions:
            if self.funcs and f.value in self.funcs[-1][1]:
                return None, None      # a local of that name
            return self.functions[f.value], None
        if (isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and self.classes and self.funcs
                and (self.classes[-1], f.attr.value) in self.methods):
            fn = self.funcs[-1][0]
            own = [q.name.value for q in fn.params.params]
            if own and own[0] == f.value.value and not fn.decorators:
                return self.methods[(self.classes[-1], f.attr.value)], f.value.value
        return None, None

    def _inline(self, stmt: cst.SimpleStatementLine) -> Optional[List[cst.SimpleStatementLine]]:
        found = _call_of(stmt)
        if found is None or (self.classes and not self.funcs):
            return None
        assign, call = found
        helper, receiver = self._target(call)
        if helper is None or any(a.star for a in call.args):
            return None
        if helper.method and isinstance(call.func, cst.Attribute) and call.func.value.value in self.imported:
            call = call.with_changes(args=call.args[1:])    # the object given first: the method's self
        caller_bound = self.funcs[-1][1] if self.funcs else set()    # a script's top level: the module's names
        if helper.free & caller_bound:
            return None     # a name the function reads from its module, which the caller rebinds
        params = helper.params[1:] if helper.method else helper.params
        given: Dict[str, cst.BaseExpression] = {}
        for k, a in enumerate(call.args):
            key = a.keyword.value if a.keyword is not None else (params[k] if k < len(params) else None)
            if key is None or key not in params or key in given:
                return None
            given[key] = a.value
        prefix = f"_{helper.node.name.value}_"
        table: Dict[str, str] = {n: prefix + n for n in helper.local}
        if helper.method:
            table[helper.params[0]] = receiver
        first: List[Tuple[str, cst.BaseExpression]] = []
        for name in params:
            value = given.get(name, helper.defaults.get(name))
            if value is None:
                return None     # a parameter without its value: the call raises TypeError in torch
            if isinstance(value, cst.Name) and value.value not in ("True", "False", "None"):
                table[name] = value.value
            else:
                table[name] = prefix + name
                first.append((prefix + name, value))
        if set(table.values()) & helper.free:
            return None
        line = self.lines.get(id(stmt))
        where = _ast_statement_at(self.tree, line) if line else None
        if where is None:
            return None
        out: List[cst.SimpleStatementLine] = []
        added: List[ast.stmt] = []
        # every statement written here names the call's line (its line mark, its sites): the function's own
        # statements, still there for its other callers, keep theirs
        mark = _MARK.search(stmt.trailing_whitespace.comment.value) if stmt.trailing_whitespace.comment else None
        ending = cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  " if mark else ""),
                                        comment=cst.Comment(mark.group(0)) if mark else None)

        def on_call_line(node: ast.stmt) -> ast.stmt:
            node.lineno = node.end_lineno = line
            setattr(node, INLINED, True)
            return node
        for name, value in first:
            out.append(cst.SimpleStatementLine(body=[cst.Assign(
                targets=[cst.AssignTarget(target=cst.Name(name))], value=value)], trailing_whitespace=ending))
            added.append(on_call_line(ast.Pass(col_offset=0, end_col_offset=0)))
        rename = _Rename(table)
        for st, ast_st in zip(helper.body[:-1], helper.ast_body[:-1]):
            out.append(st.visit(rename).with_changes(leading_lines=[], trailing_whitespace=ending))
            added.append(on_call_line(copy.deepcopy(ast_st)))
        result = helper.body[-1].body[0].value.visit(rename)
        out.append(stmt.with_changes(leading_lines=[], body=[assign.with_changes(value=result)]))
        comment = cst.EmptyLine(comment=cst.Comment(
            f"# msmigrate: {code_of(call.func).strip()}(...) written out here (its torch.autograd.grad "
            "differentiates what this function computes)"))
        out[0] = out[0].with_changes(leading_lines=list(stmt.leading_lines) + [comment])
        block, k = where
        block[k:k] = added      # the ast's statements, as the module's now, each with its own line
        self.done += 1
        return out

    def leave_Module(self, original, updated):
        return self._written_out(original, updated)

    def leave_IndentedBlock(self, original, updated):
        if self.classes and not self.funcs:
            return updated      # a class body
        return self._written_out(original, updated)

    def _written_out(self, original, updated):
        body: List[cst.BaseStatement] = []
        changed = False
        for old, new in zip(original.body, updated.body):
            made = self._inline(old) if isinstance(old, cst.SimpleStatementLine) else None
            if made is None or new is not old and code_of(new) != code_of(old):
                body.append(new)
                continue
            body.extend(made)
            changed = True
        return updated.with_changes(body=body) if changed else updated


def _imported_helpers(index, module_name: str) -> Dict[str, Tuple[object, bool]]:
    """Gradient helpers of other project modules that this module imports by name: a function (`from losses import
    penalty`), or a class whose methods are (`from solver import Solver`, called `Solver.penalty(obj, y, x)`). Each
    name the helper reads from its module must be the same import in this one (`torch`, `F`)."""
    info = index.modules.get(module_name) if index is not None else None
    if info is None:
        return {}
    cache = index.__dict__.setdefault("_grad_helpers", {})     # per module of the project, parsed once
    found: Dict[str, Tuple[object, bool]] = {}
    for local, qname in info.imports.items():
        mod, _, name = qname.rpartition(".")
        other = index.modules.get(mod)
        if other is None or other is info or other.parse_error:
            continue
        if mod not in cache:
            cache[mod] = ({}, {})
            try:
                text = other.path.read_text(encoding="utf-8")
                if _GRAD.search(text):
                    cache[mod] = _helpers(cst.parse_module(text), ast.parse(text))
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError, cst.ParserSyntaxError):
                pass
        functions, methods = cache[mod]

        def same_names(h: _Helper) -> bool:
            return all(other.imports.get(n) is not None and other.imports.get(n) == info.imports.get(n)
                       or (n not in other.imports and n not in other.defined and n not in info.imports
                           and n not in info.defined and hasattr(builtins, n)) for n in h.free)
        if name in functions and same_names(functions[name]):
            found[local] = (functions[name], False)
        own = {m: h for (c, m), h in methods.items() if c == name and same_names(h)}
        if own:
            found[local] = (own, True)
    return found


def inline_grad_helpers(module: cst.Module, tree: ast.Module, lines: Dict[int, int], index=None,
                        module_name: str = "") -> cst.Module:
    """The module with each call of a gradient helper written out (the module docstring); `tree`, the source's
    ast, gets the same statements (changed in place). lines: lines.statement_lines of module and tree. index,
    module_name: the project, for helpers imported from its other modules."""
    functions, methods = _helpers(module, tree)
    imported = _imported_helpers(index, module_name)
    if not functions and not methods and not imported:
        return module
    return module.visit(_Inliner(functions, methods, tree, lines, imported))
