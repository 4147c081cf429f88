"""The functions higher_order_grad.py writes for `torch.autograd.grad(..., create_graph=True)` inside a function
(DomainBed's IRM penalty: `def _loss_1_of_scale(scale): return cross_entropy(logits[::2] * scale, y[::2])`, then
`ms.grad(_loss_1_of_scale, grad_position=0)(ms.mutable(scale))`) take the enclosing function's values they read as
arguments, passed at the gradient's call, instead of reading them as closure cells.

Compiled (GRAPH mode, and the steps compile_step compiles in PYNATIVE mode because op by op MindSpore drops terms
of a gradient of a gradient), MindSpore 2.10 mis-builds some of those closures when one function takes two such
gradients: compiling stops with "The parameters number of the function is 2, but the number of provided arguments
is 1" (TypeError naming no line of the program), depending on what the closures read (measured on two cross-entropy
penalties of a helper's parameters: tests/parity/test_autograd.py). With the values passed as arguments it compiles,
and the second-order gradients are torch's. Called where it was, with the values of that moment: as Python read
them when the function ran.

Passed are the names the enclosing function binds to values (its parameters, assignment, loop and `with`
targets), read by the gradient's function other than only as an attribute's object: a plain object passed to a
compiled function is refused (`self` of a trainer, an options namespace), while its attributes read as closure
cells compile. Not passed: `self`/`cls`, names of defs, classes, imports and lambdas, globals. A function the
program refers to other than at its gradient's call stays as written."""
from __future__ import annotations

from typing import List, Set

import libcst as cst

from .scope_names import names_read, scope_names

_MARK = "# msmigrate: torch.autograd.grad -> the gradient of "


def lift(module: cst.Module) -> cst.Module:
    if not _any_gradient_function(module):     # (most modules: one read-only pass, no rebuild)
        return module
    return module.visit(_Lift())


def _any_gradient_function(module: cst.Module) -> bool:
    found = []

    class Find(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            if _is_gradient_function(node):
                found.append(node)
            return not found

    module.visit(Find())
    return bool(found)


class _Lift(cst.CSTTransformer):
    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        return _lifted_in(updated)


def _is_gradient_function(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.FunctionDef) and any(
        ln.comment is not None and ln.comment.value.startswith(_MARK) for ln in node.leading_lines)


def _lifted_in(fn: cst.FunctionDef) -> cst.FunctionDef:
    """fn with each gradient function defined in its body taking fn's values it reads as arguments. A name
    defined twice in fn (a second derivative's function holds a copy of the first's) keeps its closure: which
    def a call reaches is then the scope's business."""
    if not _gradient_functions(fn.body):
        return fn
    values = _value_names(fn)
    defined = _def_names(fn.body)
    done: Set[str] = set()
    while True:
        pending = [g for g in _gradient_functions(fn.body) if g.name.value not in done]
        if not pending:
            return fn
        g = pending[0]      # found again in the body as changed so far
        done.add(g.name.value)
        free = _free_reads(g)
        extras = [n for n, objectish in free if n in values and not objectish and n not in ("self", "cls")]
        if not extras or defined.count(g.name.value) > 1 or not _only_called_by_gradients(fn.body, g.name.value):
            continue
        params = g.params.with_changes(params=list(g.params.params) + [cst.Param(cst.Name(n)) for n in extras])
        new_g = _lifted_in(g.with_changes(params=params))    # a gradient function inside it reads these too
        fn = fn.with_changes(body=fn.body.visit(_Passed(g, new_g, extras)))


def _def_names(block: cst.CSTNode) -> List[str]:
    """The names of every def in the block, nested ones too, with repeats."""
    names: List[str] = []

    class Collect(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            names.append(node.name.value)

    block.visit(Collect())
    return names


def _gradient_functions(block: cst.CSTNode) -> List[cst.FunctionDef]:
    found: List[cst.FunctionDef] = []

    class Find(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            if _is_gradient_function(node):
                found.append(node)
            return False

        def visit_ClassDef(self, node):
            return False

        def visit_Lambda(self, node):
            return False

    block.visit(Find())
    return found


def _value_names(fn: cst.FunctionDef) -> Set[str]:
    """The names fn binds to values: parameters, assignment/for/with/except/walrus targets; not those it binds
    to a def, a class, an import or a lambda, nor those declared global or nonlocal."""
    found = scope_names(fn)
    return found.values - found.lambdas - found.defs - set(found.imports) - found.declared


def _free_reads(g: cst.FunctionDef) -> List[tuple]:
    """(name, read only as an attribute's object) for the names g reads and does not bind itself, in order."""
    own = scope_names(g)
    bound = own.values | own.lambdas | own.defs | set(own.imports) | own.declared
    objects: Set[str] = set()
    read = names_read(g.body, objects)
    return [(n, n in objects) for n in read if n not in bound]


def _gradient_call(node: cst.CSTNode, name: str) -> bool:
    """`ms.grad(name, ...)(...)`, `ms.value_and_grad(name, ...)(...)`, `ms.ops.GradOperation()(name)(...)`."""
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Call) and node.func.args
            and isinstance(node.func.args[0].value, cst.Name) and node.func.args[0].value.value == name
            and node.func.args[0].keyword is None and not any(a.star for a in node.args))


def _only_called_by_gradients(block: cst.CSTNode, name: str) -> bool:
    """Every reference to `name` in the block is its def or the function of a gradient's call."""
    refs, calls = [0], [0]

    class Count(cst.CSTVisitor):
        def visit_Name(self, n):
            if n.value == name:
                refs[0] += 1

        def visit_Call(self, n):
            if _gradient_call(n, name):
                calls[0] += 1

        def visit_FunctionDef(self, n):
            if n.name.value == name:
                n.body.visit(self)
                return False

    block.visit(Count())
    return calls[0] > 0 and refs[0] == calls[0]


class _Passed(cst.CSTTransformer):
    """g replaced by its lifted form, and each gradient's call of it given the values as further arguments."""

    def __init__(self, g: cst.FunctionDef, new_g: cst.FunctionDef, extras: List[str]):
        self.g, self.new_g, self.extras = g, new_g, extras

    def leave_FunctionDef(self, original, updated):
        return self.new_g if original is self.g else updated

    def leave_Call(self, original, updated):
        if not _gradient_call(updated, self.g.name.value):
            return updated
        return updated.with_changes(args=list(updated.args) + [cst.Arg(cst.Name(n)) for n in self.extras])
