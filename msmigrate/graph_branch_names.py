"""A name that forward binds only inside an `if` or a loop and reads after it, bound to None first.

    if has_memory_tokens:            mem_every = None
        mem_every = self.every       if has_memory_tokens:
    ...                          ->      mem_every = self.every
    if has_memory_tokens:            ...
        if exists(mem_every): ...    if has_memory_tokens:
                                         if exists(mem_every): ...

Python reads such a name only on the paths that bound it. MindSpore's GRAPH mode resolves every name
at parse time, over both branches, and refuses the name ("The local variable 'k' is not defined in
false branch, but defined in true branch"; across two `if`s, "NameError: The name 'mem_every' is not
defined"), even when the condition is a constant. A loop the same way: its target or a name its body
binds, read after the loop (`for i in range(n): ...` then `i`; pytorch/examples time_sequence_prediction
reads the first loop's `output` in the second) stops compiling with "UnboundLocalError: The local
variable 'output' defined in the 'for' loop body cannot be used outside of the loop body" (measured on
2.10, `for` and `while`). With the binding before the `if` or loop it compiles, and every path that
Python runs reads what it read. Only a path on which the original raises UnboundLocalError now reads
None instead; so a function that only runs on the host, one that builds its compiled training step
(`_ms_compat.compile_step`, train_loop.py), gets no such line. Inside a loop the binding goes before the
outermost loop around the statement: a line in the loop body would overwrite, in the next iteration, what the
last one bound.

A pass over the converted code (inserted lines would shift the statement lines that sites name), on
every function: construct (or forward) and the functions it may call, which are compiled with it. The name
must be a local the `if` or loop binds, read after it, and not seen anywhere in the function before it on a path
that reaches it (another branch of an `if` around it does not: pytorch-flows' MADE binds `a` under `if mode ==
'direct'` and, under `else:`, only in a loop; nor a parameter, nor declared global/nonlocal): the inserted line
can then change no value Python reads."""
from __future__ import annotations

from typing import List, Set

import libcst as cst

from .visitor_bases import BindingTargets, NameReads


def might_bind_in_branch(source: str) -> bool:
    return "def " in source and any(word in source for word in ("if ", "for ", "while "))


def made_step_functions(source: str, converted: cst.Module) -> bool:
    """A module without a `def` whose conversion wrote functions (a training loop's forward_fn and train_step),
    with an `if` or loop that one of them may hold."""
    return "def " not in source and any(word in source for word in ("if ", "for ", "while ")) and any(
        isinstance(st, cst.FunctionDef) for st in converted.body)


class _Names(BindingTargets, NameReads):
    """Names bound (assignment targets, for/with/except targets, walrus, imports, defs) and all Names
    seen, of one statement; nested functions, classes and comprehensions bind in their own scope."""

    binders = (cst.Assign, cst.AugAssign, cst.For, cst.WithItem, cst.ExceptHandler, cst.NamedExpr)

    def __init__(self) -> None:
        self.bound: Set[str] = set()
        self.seen: Set[str] = set()

    def bind(self, target, value) -> None:
        if isinstance(target, cst.Name):
            self.bound.add(target.value)

    def visit_Name(self, node: cst.Name) -> None:
        self.seen.add(node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:       # `x: int` alone binds nothing
            self.unpack(node.target)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        name = node.asname.name if node.asname else node.name
        if isinstance(name, cst.Name):
            self.bound.add(name.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.bound.add(node.name.value)
        self.seen |= _seen(node.body)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.bound.add(node.name.value)
        return True

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.seen |= _seen(node.body)
        return False

    def visit_CompFor(self, node: cst.CompFor) -> bool:
        self.seen |= _seen(node.iter)
        for cond in node.ifs:
            self.seen |= _seen(cond)
        if node.inner_for_in is not None:
            self.seen |= _seen(node.inner_for_in)
        return False


def _seen(node) -> Set[str]:
    v = _Names()
    node.visit(v)
    return v.seen | v.bound


def _names(node) -> _Names:
    v = _Names()
    node.visit(v)
    return v


def _branches(node: cst.If) -> List[cst.CSTNode]:
    out: List[cst.CSTNode] = [node.body]
    rest = node.orelse
    while isinstance(rest, cst.If):
        out.append(rest.body)
        rest = rest.orelse
    if rest is None:
        out.append(None)            # the path through no branch
    else:
        out.append(rest.body)
    return out


class _Forward(cst.CSTTransformer):
    """Inserts the `name = None` lines into one function body (statements in source order)."""

    def __init__(self, function: cst.FunctionDef) -> None:
        self.excluded: Set[str] = set()
        for p in (list(function.params.params) + list(function.params.kwonly_params)
                  + list(function.params.posonly_params)):
            self.excluded.add(p.name.value)
        for p in (function.params.star_arg, function.params.star_kwarg):
            if isinstance(p, cst.Param):
                self.excluded.add(p.name.value)
        self.function = function

    def plan(self) -> dict:
        """{id(statement): [names]} for the whole function: the `if` or loop, or the outermost loop
        around it."""
        statements: List[cst.CSTNode] = []
        outermost: dict = {}        # id(statement): the outermost loop it lies in (the function's own)
        loops: List[cst.CSTNode] = []
        # the branches of the `if`s around each statement: one that runs after another branch of the same
        # `if` never follows it on a path (flows.py's MADE: `a = ...` under `if mode == 'direct'`, and under
        # `else:` a loop binding `a`, read after it: the loop's path binds it there first)
        branch_of: dict = {}        # id(branch block): (id(if), branch number)
        elifs: Set[int] = set()
        around: List[tuple] = []
        paths: dict = {}            # id(statement): the (if, branch) pairs around it

        class _Order(cst.CSTVisitor):
            def visit_FunctionDef(inner, node) -> bool:
                return node is self.function

            def visit_ClassDef(inner, node) -> bool:
                return False

            def visit_Lambda(inner, node) -> bool:
                return False

            def on_visit(inner, node) -> bool:
                if isinstance(node, cst.If) and id(node) not in elifs:
                    for k, b in enumerate(_branches(node)):
                        if b is not None:
                            branch_of[id(b)] = (id(node), k)
                    rest = node.orelse
                    while isinstance(rest, cst.If):
                        elifs.add(id(rest))
                        rest = rest.orelse
                if isinstance(node, cst.IndentedBlock) and id(node) in branch_of:
                    around.append(branch_of[id(node)])
                if isinstance(node, (cst.SimpleStatementLine, cst.If, cst.For, cst.While, cst.With, cst.Try)):
                    statements.append(node)
                    paths[id(node)] = dict(around)
                    if loops:
                        outermost[id(node)] = loops[0]
                if isinstance(node, (cst.For, cst.While)):
                    loops.append(node)
                if isinstance(node, cst.SimpleStatementLine):
                    for small in node.body:
                        if isinstance(small, (cst.Global, cst.Nonlocal)):
                            self.excluded.update(n.name.value for n in small.names)
                    return False
                return super().on_visit(node)

            def on_leave(inner, node) -> None:
                if loops and node is loops[-1]:
                    loops.pop()
                if isinstance(node, cst.IndentedBlock) and id(node) in branch_of:
                    around.pop()
                super().on_leave(node)

        self.function.visit(_Order())
        plan: dict = {}
        seen: List[tuple] = []      # (the branches around, names seen there), in order

        def on_path(p, q) -> bool:
            return all(q.get(k, b) == b for k, b in p.items())

        for i, st in enumerate(statements):
            if isinstance(st, (cst.If, cst.For, cst.While)):
                before = set(self.excluded).union(*(n for p, n in seen if on_path(p, paths[id(st)])))
                candidates = _not_always_bound(st) - before
                if candidates:
                    after: Set[str] = set()
                    end = _last_descendant_index(statements, i, st)
                    for later in statements[end + 1:]:
                        after |= _header_seen(later)
                    names = {n for n in candidates if n in after}
                    if names:
                        # inside a loop: once, before the outermost loop (a line before the statement
                        # itself would overwrite, in the next iteration, what this one bound)
                        at = outermost.get(id(st), st)
                        plan[id(at)] = sorted(set(plan.get(id(at), ())) | names)
                        seen.append((paths[id(at)], names))
            seen.append((paths[id(st)], _header_seen(st)))
        return plan


def _not_always_bound(st) -> Set[str]:
    """Names an `if` binds on some path through it and not on every one; every name a loop binds
    (its target, its body: no iteration may run)."""
    if isinstance(st, (cst.For, cst.While)):
        return set(_names(st).bound)
    per_branch = [_names(b).bound if b is not None else set() for b in _branches(st)]
    always = [_always_bound(b) if b is not None else set() for b in _branches(st)]
    return set().union(*per_branch) - set.intersection(*always)


def _always_bound(block) -> Set[str]:
    """Names every path through a block binds: a loop's body may not run, an `if` binds what all its branches
    bind (x-transformers' `if not looped: x, inter = ...` / `else: for ...: x, inter = ...`, inter read after
    the `if`: bound on one path only)."""
    out: Set[str] = set()
    for st in getattr(block, "body", ()):
        if isinstance(st, cst.SimpleStatementLine):
            out |= _names(st).bound
        elif isinstance(st, cst.If):
            out |= set.intersection(*[_always_bound(b) if b is not None else set() for b in _branches(st)])
        elif isinstance(st, cst.With):
            out |= _always_bound(st.body) | {n for item in st.items for n in _names(item).bound}
        elif isinstance(st, (cst.FunctionDef, cst.ClassDef)):
            out.add(st.name.value)
    return out


def _header_seen(st) -> Set[str]:
    """Names seen in a statement, for compound ones only their own header (their bodies are
    statements of their own in the order)."""
    if isinstance(st, cst.SimpleStatementLine):
        return _seen(st)
    if isinstance(st, cst.If):
        return _seen(st.test)
    if isinstance(st, cst.For):
        return _seen(st.target) | _seen(st.iter)
    if isinstance(st, cst.While):
        return _seen(st.test)
    if isinstance(st, cst.With):
        out: Set[str] = set()
        for item in st.items:
            out |= _seen(item)
        return out
    if isinstance(st, cst.Try):
        out = set()
        for h in st.handlers:
            if h.type is not None:
                out |= _seen(h.type)
            if h.name is not None:
                out |= _seen(h.name)
        return out
    return _seen(st)


def _last_descendant_index(statements, i, node) -> int:
    """Index of the last statement of the order that lies inside statements[i] (an `if`)."""
    inside = set()

    class _Ids(cst.CSTVisitor):
        def on_visit(self, n) -> bool:
            inside.add(id(n))
            return True

    node.visit(_Ids())
    j = i
    while j + 1 < len(statements) and id(statements[j + 1]) in inside:
        j += 1
    return j


class _Insert(cst.CSTTransformer):
    def __init__(self, plan: dict) -> None:
        self.plan = plan

    def on_leave(self, original, updated):
        if isinstance(updated, (cst.IndentedBlock, cst.Module)) and isinstance(original, type(updated)):
            # ids refer to the original statements: map through the original body
            new = []
            for orig, upd in zip(original.body, updated.body):
                names = self.plan.get(id(orig))
                if names:
                    for n in names:
                        new.append(cst.SimpleStatementLine(body=[cst.Assign(
                            targets=[cst.AssignTarget(cst.Name(n))], value=cst.Name("None"))]))
                new.append(upd)
            return updated.with_changes(body=new)
        return updated


# the call the conversion writes where a function builds its compiled training step (train_loop.py): such a function
# runs on the host, op by op in both modes, and is never itself compiled
_HOST_STEP_BUILDERS = ("compile_step",)


class _BuildsCompiledStep(cst.CSTVisitor):
    """Whether a function's own body (not the functions or classes it defines) calls `_ms_compat.compile_step`."""

    def __init__(self, function: cst.FunctionDef) -> None:
        self.function = function
        self.found = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.function

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "_ms_compat" \
                and f.attr.value in _HOST_STEP_BUILDERS:
            self.found = True


def builds_compiled_step(function: cst.FunctionDef) -> bool:
    v = _BuildsCompiledStep(function)
    function.visit(v)
    return v.found


class _Plans(cst.CSTVisitor):
    """The plans of every function of the module (nested ones too), keyed by the original statements. A function
    that builds a compiled training step (its train loop's host, Image_Segmentation's Solver.train) is never compiled
    itself: its names keep Python's binding, so a path that reads (or `del`s) a name no branch bound raises
    UnboundLocalError as the original does, instead of reading None; the step functions it defines keep theirs."""

    def __init__(self) -> None:
        self.plan: dict = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if builds_compiled_step(node):
            return
        self.plan.update(_Forward(node).plan())


def bind_branch_names(module: cst.Module) -> cst.Module:
    """The pre-pass: `name = None` before each `if` or loop of a function that alone binds a name read
    after it. Every function, not only construct: a helper construct calls (vector-quantize's kmeans,
    `for ...: bins = ...` then `return means, bins`) is compiled with it, and which ones it calls is not
    known here; in Python the line changes nothing that runs."""
    plans = _Plans()
    module.visit(plans)
    return module.visit(_Insert(plans.plan)) if plans.plan else module
