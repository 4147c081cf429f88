"""The names a function binds in its own scope, by kind, and the names a piece of code reads: Python's rule for a
local name, for the passes that move code between scopes or tell a local variable from a module-level import
(graph_loop_lambdas.py, graph_gradient_closures.py, tf_convert.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set

import libcst as cst


def targets(t: cst.BaseExpression, out: Set[str]) -> None:
    """The plain names an assignment target binds (`a`, `a, (b, *c)`), added to out."""
    if isinstance(t, cst.Name):
        out.add(t.value)
    elif isinstance(t, (cst.Tuple, cst.List)):
        for e in t.elements:
            targets(e.value, out)
    elif isinstance(t, cst.StarredElement):
        targets(t.value, out)


def all_params(params: cst.Parameters) -> List[cst.Param]:
    """Every parameter: positional-only, plain, keyword-only, *args and **kwargs."""
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    out += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return out


@dataclass
class ScopeNames:
    values: Set[str] = field(default_factory=set)      # parameters; assignment/for/with/except/walrus targets
    lambdas: Set[str] = field(default_factory=set)     # names assigned a lambda
    defs: Set[str] = field(default_factory=set)        # inner defs and classes
    imports: Dict[str, str] = field(default_factory=dict)   # bound name -> the module imported ('' relative)
    declared: Set[str] = field(default_factory=set)    # global / nonlocal: not the function's own


def scope_names(fn: cst.FunctionDef) -> ScopeNames:
    """The names fn binds in its own scope (not inside its inner defs, classes, lambdas or comprehensions)."""
    found = ScopeNames(values={p.name.value for p in all_params(fn.params)})

    class Collect(cst.CSTVisitor):
        def visit_Assign(self, n):
            for t in n.targets:
                targets(t.target, found.lambdas if isinstance(n.value, cst.Lambda) else found.values)

        def visit_AnnAssign(self, n):
            targets(n.target, found.values)

        def visit_AugAssign(self, n):
            targets(n.target, found.values)

        def visit_For(self, n):
            targets(n.target, found.values)

        def visit_WithItem(self, n):
            if n.asname is not None:
                targets(n.asname.name, found.values)

        def visit_ExceptHandler(self, n):
            if n.name is not None:
                targets(n.name.name, found.values)

        def visit_NamedExpr(self, n):
            targets(n.target, found.values)

        def visit_Import(self, n):
            for a in n.names:
                dotted = cst.helpers.get_full_name_for_node(a.name) or ""
                found.imports[a.asname.name.value if a.asname else dotted.split(".")[0]] = dotted
            return False

        def visit_ImportFrom(self, n):
            module = "" if n.relative or n.module is None else cst.helpers.get_full_name_for_node(n.module) or ""
            if not isinstance(n.names, cst.ImportStar):
                for a in n.names:
                    found.imports[a.asname.name.value if a.asname else a.name.value] = module
            return False

        def visit_Global(self, n):
            found.declared.update(x.name.value for x in n.names)

        def visit_Nonlocal(self, n):
            found.declared.update(x.name.value for x in n.names)

        def visit_FunctionDef(self, n):
            found.defs.add(n.name.value)
            return False

        def visit_ClassDef(self, n):
            found.defs.add(n.name.value)
            return False

        def visit_Lambda(self, n):
            return False

        def visit_CompFor(self, n):     # a comprehension's targets are its own
            return False

    fn.body.visit(Collect())
    return found


def names_read(body: cst.CSTNode, attribute_objects: Optional[Set[str]] = None) -> List[str]:
    """Plain names the code reads from outside it, in order of appearance (not attribute names, not keyword
    names, not names bound by its own parameters, comprehensions or walrus). attribute_objects, where given,
    gets the names read as an attribute's object (`opts` of `opts.gain`)."""
    seen: List[str] = []
    plain: Set[str] = set()
    own: Set[str] = set()      # bound inside the code itself (an inner lambda's parameter, a comprehension's)

    class Collect(cst.CSTVisitor):
        def visit_Attribute(self, n):
            if isinstance(n.value, cst.Name) and attribute_objects is not None:
                if n.value.value not in seen:
                    seen.append(n.value.value)
                attribute_objects.add(n.value.value)
                return False
            n.value.visit(self)
            return False

        def visit_Arg(self, n):
            n.value.visit(self)
            return False

        def visit_Param(self, n):
            own.add(n.name.value)
            if n.default is not None:
                n.default.visit(self)
            return False

        def visit_CompFor(self, n):
            targets(n.target, own)

        def visit_NamedExpr(self, n):
            targets(n.target, own)

        def visit_Name(self, n):
            plain.add(n.value)
            if n.value not in seen:
                seen.append(n.value)

    body.visit(Collect())
    if attribute_objects is not None:
        attribute_objects -= plain      # read otherwise too
    return [n for n in seen if n not in own]
