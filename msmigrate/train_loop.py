"""The PyTorch training step -> a MindSpore train step.

torch accumulates gradients in the tensors themselves:

    optimizer.zero_grad(); out = model(x); loss = crit(out, y); loss.backward(); optimizer.step()

MindSpore computes them functionally. For each such group in a loop body (already
converted to MindSpore code by the main pass) this module emits, before the loop:

    def forward_fn(x, y):                    # the statements the loss depends on
        out = model(x)
        loss = crit(out, y)
        return loss, out                     # + what the rest of the program reads
    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    def train_step(x, y):
        (loss, out), grads = grad_fn(x, y)
        optimizer(grads)
        return loss, out
    train_step = _ms_compat.compile_step(train_step)   # a compiled graph in GRAPH mode

and in the loop, in place of those statements: `loss, out = train_step(x, y)`.
Gradient clipping, GradScaler and gradient accumulation are folded in; a
`.backward()` that fits no pattern stays visible as a TODO.

The analysis is by names: which statements the loss depends on (a backward slice
through the loop body), which names vary per iteration (parameters of the step),
and which of the computed names the program reads later (returned as outputs).

Soundness: forward_fn must hold the whole computation from the parameters to the loss. A loss
kept in an attribute (`logits, self.loss = model(x, y)`) is followed through a local name; where
the slice does not reach a call of a network, a helper or a trainer method (reaches_network), or
the loss passes through a statement the step cannot hold (broken_chain), the backward() becomes
a raising TODO instead of a step whose gradients are all zero. Without an optimizer, hand-written
updates (manual_update.py) and `.grad` reads after a lone backward() are differentiated too.
"""
from __future__ import annotations

import builtins
import dataclasses
import re
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from . import fast_visit
from .step_record_reads import field_reads_of_step
from . import manual_update as MU
from . import taped_steps as TS
from .callsite import code_of
from .line_map import mark_of
from .variable_leaves import VARIABLE, variable_data
from .visitor_bases import BindingTargets, ScopeLocalVisitor, single_targets

OPTIMIZER_NAME = re.compile(r"optim|(^|_)opt", re.I)
SCHEDULER_NAME = re.compile(r"sched|lr_?s", re.I)
# random draws stay outside the differentiated function: they are data, and the
# same draw must reach every step that uses it
RANDOM_CALL = re.compile(r"(^|\.)(rand\w*|normal|standard_normal|uniform|bernoulli|multinomial|"
                         r"random\w*|shuffle|permutation|choice|"
                         # a NumPy Generator's draws (rng.integers...), anything of a module named random
                         r"integers|standard_\w+|binomial|poisson|exponential|geometric|laplace|gumbel|"
                         # the other distributions of NumPy's RandomState/Generator (mixup's rng.beta)
                         r"dirichlet|beta|gamma|lognormal|logistic|chisquare|vonmises|weibull|pareto|triangular|"
                         r"rayleigh|wald|zipf|logseries|hypergeometric|negative_binomial|multivariate_normal|"
                         r"multivariate_hypergeometric|noncentral_\w+)$|(^|\.)random\.\w+$")
CLIP_NORM = "_ms_compat.clip_grad_norm_"
CLIP_VALUE = "_ms_compat.clip_grad_value_"


# ------------------------------------------------------------------ walking
# libcst's `node.visit(visitor)` rebuilds and re-validates every node it passes, even for a
# read-only CSTVisitor. The analyses here walk every function body and loop (nested ones once
# per enclosing scope), so on large modules (torch's 10,000-line files, a 500 KB literal
# table) those walks cost minutes per file. walk() calls the same visit_<Type>/leave_<Type>
# methods in the same source order without rebuilding anything; whitespace, comments and
# brackets/commas are not visited (no analysis here looks at them).
_SKIPPED_FIELDS = {"leading_lines", "lines_after_decorators", "header", "footer", "trailing_whitespace",
                   "leading_whitespace", "lpar", "rpar", "lbracket", "rbracket", "lbrace", "rbrace",
                   "comma", "semicolon"}
_CHILD_FIELDS: Dict[type, Optional[Tuple[str, ...]]] = {}


def _child_fields(cls: type) -> Optional[Tuple[str, ...]]:
    """The fields holding a node type's children, in source order: the order in which libcst's own
    _visit_and_replace_children visits them (None when its source is not available)."""
    if cls not in _CHILD_FIELDS:
        fields = fast_visit.field_kinds(cls)
        _CHILD_FIELDS[cls] = None if fields is None else tuple(
            n for n, _ in fields if n not in _SKIPPED_FIELDS and not n.startswith("whitespace"))
    return _CHILD_FIELDS[cls]


def walk(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """`node.visit(visitor)` for a read-only visitor, without rebuilding the tree and without the whitespace."""
    fast_visit.walk_fields(node, visitor, _child_fields)


# ------------------------------------------------------------------ name analysis
class _Reads(cst.CSTVisitor):
    """Names a piece of code reads (loads), in order, with repeats."""

    def __init__(self) -> None:
        self.names: List[str] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        walk(node.value, self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        walk(node.value, self)
        return False

    def _beside_target(self, target: cst.BaseExpression, *parts: Optional[cst.CSTNode]) -> bool:
        """A binding node: what its target reads (x[i] = v, obj.a = v read x / obj), then what its
        other parts read, in order (the annotation of `x: T = v` is no read)."""
        for single in single_targets(target):
            if not isinstance(single, cst.Name):
                walk(single, self)
        for part in parts:
            if part is not None:
                walk(part, self)
        return False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        return self._beside_target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        return self._beside_target(node.target, node.value)

    def visit_For(self, node: cst.For) -> bool:
        return self._beside_target(node.target, node.iter, node.body, node.orelse)

    def visit_CompFor(self, node: cst.CompFor) -> bool:
        return self._beside_target(node.target, node.iter, *node.ifs, node.inner_for_in)

    def _comprehension(self, node, *elements: cst.CSTNode) -> bool:
        """A comprehension reads its first iterable in the enclosing scope; its variables are its own
        (`[chars[i] for i in predicted]` after a loop over `i` reads no `i` of the enclosing scope)."""
        walk(node.for_in.iter, self)
        inner = _Reads()
        for part in elements + tuple(node.for_in.ifs):
            walk(part, inner)
        if node.for_in.inner_for_in is not None:
            walk(node.for_in.inner_for_in, inner)
        own: Set[str] = set()
        loop = node.for_in
        while loop is not None:
            own |= {t.value for t in single_targets(loop.target) if isinstance(t, cst.Name)}
            loop = loop.inner_for_in
        self.names.extend(n for n in inner.names if n not in own)
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return self._comprehension(node, node.elt)

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return self._comprehension(node, node.elt)

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return self._comprehension(node, node.elt)

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return self._comprehension(node, node.key, node.value)

    def visit_Param(self, node: cst.Param) -> bool:
        if node.default is not None:
            walk(node.default, self)
        return False

    def visit_AsName(self, node: cst.AsName) -> bool:
        return False

    def visit_ImportAlias(self, node: cst.ImportAlias) -> bool:
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        """A def (higher_order_grad.py's `_y_of_x` in a loop body) reads what its decorators, defaults and
        body read from outside: not its own name, its parameters or the locals it binds (unless declared
        global/nonlocal). What a function's body reads: reads(fn.body)."""
        for d in node.decorators:
            walk(d, self)
        walk(node.params, self)
        inner = reads(node.body)
        params = {p.name.value for p in list(node.params.params) + list(node.params.kwonly_params)
                  + list(node.params.posonly_params)}
        for p in (node.params.star_arg, node.params.star_kwarg):
            if isinstance(p, cst.Param):
                params.add(p.name.value)
        shared = {n.name.value for st in _global_nonlocal(node.body) for n in st.names}
        local = (params | assigns(node.body)) - shared
        self.names.extend(n for n in inner if n not in local)
        return False


def _global_nonlocal(body: cst.CSTNode) -> List[cst.CSTNode]:
    """The `global`/`nonlocal` statements of a function body (not of the functions nested in it)."""
    found: List[cst.CSTNode] = []

    class _V(cst.CSTVisitor):
        def visit_Global(self, node) -> None:
            found.append(node)

        def visit_Nonlocal(self, node) -> None:
            found.append(node)

        def visit_FunctionDef(self, node) -> bool:
            return False

    walk(body, _V())
    return found


# The analyses ask reads() and assigns() of the same nodes again and again (every enclosing scope walks the functions
# it holds): libcst nodes never change, so each answer is kept per node, with the node itself (its id stays its own),
# until forget_answers() at the next file.
_READS: Dict[int, Tuple[cst.CSTNode, Tuple[str, ...]]] = {}
_ASSIGNS: Dict[int, Tuple[cst.CSTNode, FrozenSet[str]]] = {}


def forget_answers() -> None:
    _READS.clear()
    _ASSIGNS.clear()


def reads(node: cst.CSTNode) -> List[str]:
    """The names the code reads (loads), in order, with repeats."""
    known = _READS.get(id(node))
    if known is not None and known[0] is node:
        return list(known[1])
    v = _Reads()
    walk(node, v)
    _READS[id(node)] = (node, tuple(v.names))
    return v.names


def _target_names(target: cst.BaseExpression) -> Set[str]:
    return {t.value for t in single_targets(target) if isinstance(t, cst.Name)}


def _loop_targets(node: cst.CSTNode) -> Set[str]:
    """The names `for` statements in `node` bind."""
    names: Set[str] = set()

    class _Fors(cst.CSTVisitor):
        def visit_For(self, loop: cst.For) -> None:
            names.update(_target_names(loop.target))

    walk(node, _Fors())
    return names


def loop_bound_reads(node: cst.CSTNode) -> Dict[str, int]:
    """The reads of each name made inside a loop that binds it first: `for i in ...:` (its body) and a
    comprehension's `for i in`. Such a read sees the loop's own value, so it does not make the value a
    name held before the loop live: `for i in range(n): print(words[i])` reads no `i` of a step before it."""
    counts: Dict[str, int] = {}

    def count(part: Optional[cst.CSTNode], bound: Set[str]) -> None:
        if part is None or not bound:
            return
        for n in reads(part):
            if n in bound:
                counts[n] = counts.get(n, 0) + 1

    class _Loops(cst.CSTVisitor):
        def visit_For(self, loop: cst.For) -> None:
            count(loop.body, _target_names(loop.target))

        def visit_CompFor(self, comp: cst.CompFor) -> None:
            bound = _target_names(comp.target)
            count(comp.inner_for_in, bound)
            for cond in comp.ifs:
                count(cond, bound)

        def _comprehension(self, node) -> None:
            bound: Set[str] = set()
            comp = node.for_in
            while comp is not None:
                bound |= _target_names(comp.target)
                comp = comp.inner_for_in
            for part in ((node.key, node.value) if isinstance(node, cst.DictComp) else (node.elt,)):
                count(part, bound)

        def visit_ListComp(self, node) -> None:
            self._comprehension(node)

        def visit_SetComp(self, node) -> None:
            self._comprehension(node)

        def visit_GeneratorExp(self, node) -> None:
            self._comprehension(node)

        def visit_DictComp(self, node) -> None:
            self._comprehension(node)

    walk(node, _Loops())
    return counts


class _WrittenReads(_Reads):
    """The reads of converted code counted as the torch code it came from read: a run-time choice the conversion
    wrote (`(reduce_mean(x) if _ms_compat.is_tensor(x) else x.mean())`, `_ms_compat.on_tensor(r, lambda ..,
    lambda ..)`) names its receiver three times where torch's `x.mean()` read it once."""

    def visit_IfExp(self, node: cst.IfExp) -> bool:
        if isinstance(node.test, cst.Call) and code_of(node.test.func).strip() == "_ms_compat.is_tensor":
            walk(node.orelse, self)
            return False
        return True

    def visit_Call(self, node: cst.Call) -> bool:
        if code_of(node.func).strip() == "_ms_compat.on_tensor" and len(node.args) == 3:
            walk(node.args[0].value, self)
            return False
        return True


def written_reads(node: cst.CSTNode) -> List[str]:
    """reads() of converted code, a name read as often as in the torch code it came from (_WrittenReads)."""
    v = _WrittenReads()
    walk(node, v)
    return v.names


class _GradReads(_Reads):
    """Names read where a gradient can flow: not inside `x.detach()` or `stop_gradient(x)`."""

    def visit_Call(self, node: cst.Call) -> bool:
        f = node.func
        name = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""
        return not ((name == "detach" and not node.args) or name == "stop_gradient")


def grad_reads(node: cst.CSTNode) -> Set[str]:
    v = _GradReads()
    walk(node, v)
    return set(v.names)


class _Assigns(BindingTargets):
    """Names bound by a piece of code (assignment, for/with/except targets, defs, imports)."""

    # not CompFor: comprehension variables do not leak
    binders = (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.AsName, cst.NamedExpr,
               cst.FunctionDef, cst.ClassDef)

    def __init__(self) -> None:
        self.names: Set[str] = set()

    def bind(self, target, value) -> None:
        if isinstance(target, cst.Name):
            self.names.add(target.value)

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False


def mutated(stmt: cst.CSTNode) -> set:
    """The names whose tensor values a statement changes in place without binding them: `cost[mask] /= n`
    (torchattacks' Jitter), `y[:, 0] = 0`, `x.data = v`, `x.mul_(2)`, `_ms_compat.uniform_(x, ...)`,
    `_ms_compat.write_into(x, ...)`, `_ms_compat.write_data(x, ...)`. A statement changing a value a loss or gradient output is computed from belongs
    with the statements computing it. (An object's attribute, `self.step += 1`, is no such value.)"""
    names: set = set()

    def head(node):
        while isinstance(node, cst.Subscript) or (isinstance(node, cst.Attribute) and node.attr.value == "data"):
            node = node.value
        return node.value if isinstance(node, cst.Name) else None

    class _Changes(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                for e in (t.target.elements if isinstance(t.target, (cst.Tuple, cst.List)) else [t.target]):
                    target = e.value if isinstance(e, (cst.Element, cst.StarredElement)) else e
                    if isinstance(target, (cst.Subscript, cst.Attribute)):
                        names.add(head(target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.target, (cst.Subscript, cst.Attribute)):
                names.add(head(node.target))

        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            # a call of anything else (`self.layers[i](x)`, `f()(x)`) is no in-place method
            name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) \
                else ""
            if not name.endswith("_") or name.startswith("__") or name in ("requires_grad_", "set_requires_grad"):
                if name not in ("write_into", "write_data"):
                    return
            if isinstance(func, cst.Attribute) and head(func.value) not in (None, "_ms_compat", "ops", "ms", "nn"):
                names.add(head(func.value))
            elif node.args:
                names.add(head(node.args[0].value))

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

    stmt.visit(_Changes())
    names.discard(None)
    return names


def assigns(node: cst.CSTNode) -> Set[str]:
    """The names the code binds (not inside the functions and classes it defines)."""
    known = _ASSIGNS.get(id(node))
    if known is not None and known[0] is node:
        return set(known[1])
    v = _Assigns()
    walk(node, v)
    _ASSIGNS[id(node)] = (node, frozenset(v.names))
    return v.names


# ------------------------------------------------------------------ patterns
def _stmt_call(stmt: cst.CSTNode) -> Optional[cst.Call]:
    """The call of an expression statement `f(...)`."""
    if (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.Call)):
        return stmt.body[0].value
    return None


# names the module being converted binds to objects of project classes with a backward() of their own (encodec's
# `balancer = Balancer(...)`, set by the transformer for each module): `balancer.backward(losses, out)` is no
# tensor's backward, so no train step is taped from it
OWN_BACKWARD_OBJECTS: Set[str] = set()


def _method(call: Optional[cst.Call], name: str) -> Optional[cst.BaseExpression]:
    """The receiver of `receiver.name(...)`."""
    if call is not None and isinstance(call.func, cst.Attribute) and call.func.attr.value == name:
        if name == "backward" and isinstance(call.func.value, cst.Name) \
                and call.func.value.value in OWN_BACKWARD_OBJECTS:
            return None
        return call.func.value
    return None


def _assigned_call(stmt: cst.CSTNode) -> Tuple[Optional[str], Optional[cst.Call]]:
    """`target = f(...)` or `f(...)`: (target code or None, call)."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        small = stmt.body[0]
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            return None, small.value
        if (isinstance(small, cst.Assign) and len(small.targets) == 1
                and isinstance(small.value, cst.Call)):
            return code_of(small.targets[0].target).strip(), small.value
    return None, None


def _call_name(call: cst.Call) -> str:
    return code_of(call.func).strip()


@dataclass
class StepGroup:
    """One `loss.backward() ... optimizer.step()` in a loop body; several backward()
    calls before one step accumulate, i.e. differentiate the sum of their losses."""
    backwards: List[int]                   # statement indices of loss.backward()
    losses: List[cst.BaseExpression]       # what each backward() was called on
    optimizer: str = ""                    # code of the optimizer expression
    step: int = -1                         # statement index of optimizer.step()
    scaler: Optional[str] = None
    clips: List[Tuple[int, Optional[str], cst.Call]] = field(default_factory=list)
    extras: List[int] = field(default_factory=list)   # zero_grad / scaler.update / unscale_: removed
    # clip_grad_norm_ statements between a zero_grad() of this step's optimizer (or of the module whose
    # parameters they clip) and its backward(): torch clips cleared gradients, nothing (removed; _take_cleared_clips)
    cleared_clips: List[int] = field(default_factory=list)
    clip_conds: Dict[int, str] = field(default_factory=dict)   # `if cond:` around clips (statement index)
    accumulate: bool = False               # the step sits in an `if` (gradient accumulation)
    manual: Optional[MU.ManualUpdate] = None   # no optimizer: `for p in params: p -= lr * p.grad`
    leaves: List[str] = field(default_factory=list)   # no update: `y.backward(); x.grad` (x made here)
    leaf_clears: List[int] = field(default_factory=list)   # `if x.grad is not None: x.grad.zero_()` before it
    # the step's slice stops at a detaching rebinding (`x = ops.stop_gradient(x)`): x is an input, computed before
    # the step (tried where the whole slice is unsound: an attack loop changing x in place, _detached_input)
    cut_detached: bool = False
    # the leaves' .grad sums over the loop's turns (PGD's attack loop, _summed_leaves): each gradient is added to
    # the one the tensor holds (_ms_compat.add_grad), and the body's x.grad reads read the sum
    summed: bool = False
    tensor_updates: List[int] = field(default_factory=list)   # `w -= lr * w.grad` after the backward()
    host_helpers: Set[str] = field(default_factory=set)   # host-drawing helpers the step holds (_host_helper)
    host_ifs: Set[int] = field(default_factory=set)   # `if loss.item() > m:` the step holds (_host_condition)
    outer: bool = False    # the step follows this loop in the enclosing loop (outer_accumulation)
    closure: bool = False  # the body of a closure passed to optimizer.step(closure): it returns the gradients
    # stepped through a wrapper's method (`sched_opt.step_and_update_lr()`): the step returns the gradients, held
    # for the wrapped optimizer (_ms_compat.hold_gradients) right before that call, whose own step() applies them
    wrapper_call: bool = False
    # stepped through a method of an optimizer the program writes that reads p.grad (SAM's `opt.first_step()`,
    # `opt.second_step()`): the gradients are given to it as p.grad (_ms_compat.give_gradients) right before
    # that call, which runs as written (a wrapper_call too)
    grad_method: bool = False
    uncleared: bool = False   # a loop that never clears the gradients: every step applies the sum so far
    # no step here: the sum is held for the optimizer's step() in another method (held_steps.py)
    held: bool = False
    # (statement index, optimizer) of the optimizers stepped right after `optimizer` on the same backward()s
    # (`encoder_opt.step(); decoder_opt.step()`): differentiated with it, each applies its own share (_co_step)
    co_steps: List[Tuple[int, str]] = field(default_factory=list)
    # statements between the backward() and the step change the gradients (_gradient_changers): the step returns
    # them, kept for those statements as torch's .grad (keep_grads), and the optimizer applies what they leave
    edited: bool = False
    # the step follows this loop in the enclosing function or loop, on losses no step here can hold: taped
    # (taped_steps.py, taped_outer_step)
    taped_outer: bool = False
    # an optimizer's step whose backward() also fills an input's .grad, read after it (free adversarial training's
    # perturbation, _stepped_input_leaves): the step differentiates those inputs too and returns their gradients
    input_leaves: List[str] = field(default_factory=list)


def _object_attribute_reads(statements) -> Set[str]:
    """Attribute names read on a name (`raw_model.last_loss`) in these statements, not stored by them."""
    read: Set[str] = set()
    stored: Set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                for e in (t.target.elements if isinstance(t.target, (cst.Tuple, cst.List)) else [t.target]):
                    target = e.value if isinstance(e, (cst.Element, cst.StarredElement)) else e
                    if isinstance(target, cst.Attribute):
                        stored.add(target.attr.value)

        def visit_Attribute(self, node: cst.Attribute) -> None:
            if isinstance(node.value, cst.Name):
                read.add(node.attr.value)

    for st in statements:
        st.visit(_V())
    return read - stored


@dataclass
class LoopInfo:
    """What the enclosing code tells the rewrite (gathered by the main transformer)."""
    ms: str                                # the name `mindspore` is imported as
    optimizers: Set[str]                   # expressions bound to torch.optim.* constructors
    read_counts: Dict[str, int]            # names read in the enclosing function/module (original)
    taken: Set[str]                        # names already bound in the enclosing function/module
    # module functions that compute on the host (NumPy, from_numpy): data for the step (host_functions)
    host_functions: Set[str] = field(default_factory=set)
    # those of them that call NumPy (a draw): held by a step only as a host helper (_host_helper)
    drawing_functions: Set[str] = field(default_factory=set)
    # the module uses torch.distributed / DDP: the step averages gradients across processes
    distributed: bool = False
    # names bound to instances of the module's classes that draw with NumPy in a method (AAE's Encoder
    # samples z with np.random in forward): a step calling one runs op by op (drawing_objects)
    drawing_objects: Set[str] = field(default_factory=set)
    # optimizers built by torch.optim.LBFGS: their step() re-evaluates a closure, one without is torch's TypeError
    closure_only: Set[str] = field(default_factory=set)
    # the statements are a module's top level: every name they bind is a global other code may read
    module_globals: bool = False
    # of read_counts, the reads made inside a loop binding the name first (loop_bound_reads)
    loop_reads: Dict[str, int] = field(default_factory=dict)
    # names the enclosing function/module binds to nn.Parameter(...) made by hand (`w = nn.Parameter(...)`)
    parameter_names: Set[str] = field(default_factory=set)
    # names bound to project classes wrapping an optimizer -> (the attribute holding it, the methods that step
    # it): `optimizer.step_and_update_lr()` steps `optimizer._optimizer` (project_index.optimizer_wrapper_methods)
    optimizer_wrappers: Dict[str, Tuple[str, Tuple[str, ...]]] = field(default_factory=dict)
    # the same by method name, for a wrapper the loop receives as a parameter (ProjectIndex.wrapper_step_methods)
    wrapper_step_methods: Dict[str, str] = field(default_factory=dict)
    # the project reads `.grad` (a gradient norm logged, `if p.grad is not None`): steps keep their gradients for
    # those reads (_ms_compat.keep_grads)
    keep_grads: bool = False
    # the module's functions and methods by name -> whether one of that name writes a `.grad` (grad_writers);
    # a function not listed may write one
    grad_writers: Dict[str, bool] = field(default_factory=dict)
    # module functions that clear gradients (`def reset_grad(): d_opt.zero_grad(); g_opt.zero_grad()`): a loop
    # calling one clears, as one calling zero_grad() itself (clearing_functions)
    clearing_functions: Set[str] = field(default_factory=set)
    # methods of the module's classes that only call backward() on one of their parameters (a trainer's
    # `def backward(self, loss): loss.backward()`) -> that parameter's position: `self.backward(loss)` in a loop is
    # loss.backward() (backward_methods)
    backward_methods: Dict[str, int] = field(default_factory=dict)
    # methods other than step() of the project's Optimizer subclasses that read `.grad` (SAM's first_step,
    # second_step: ProjectIndex.optimizer_grad_methods)
    optimizer_grad_methods: Set[str] = field(default_factory=set)
    # `module:line` -> the arguments of a placeholder written without them (a module-level definition): a
    # rewrite that converts the site after all reads them (higher_order_grad.py's lazy_calls)
    lazy_calls: Dict[str, cst.Call] = field(default_factory=dict)
    # attribute names a forward of the project's classes stores on self (ProjectIndex.forward_stored_attributes):
    # a step whose forward computation reads one on an object (`loss = raw_model.last_loss` after `model(X, Y)`)
    # runs op by op; compiled, the read is a constant of the compile-time object and the gradient is lost
    forward_stores: Set[str] = field(default_factory=set)
    # `self.<method>` of the enclosing class computing data from its arguments alone (ProjectIndex.data_methods):
    # its value reaches no network
    data_methods: Set[str] = field(default_factory=set)
    # the module's name, for the `module:line` of run-time checks the rewrite writes (_reads_before_step)
    module: str = ""
    # the fields of the project's record classes built as dicts in compiled graphs (graph_records.py): the step's
    # reads of them go through _ms_compat.graph_field; module_names: the names bound to modules, never records
    record_fields: Set[str] = field(default_factory=set)
    module_names: Set[str] = field(default_factory=set)


@dataclass
class Rewrite:
    loop: cst.CSTNode
    defs: List[cst.BaseStatement]
    closures: Set[str]
    sites: List[Tuple[int, str, str, str]]  # (statement index, api, target, note)
    problems: List[Tuple[int, str]]         # (statement index, why): backward()s left as TODOs
    steps: int = 0                          # train steps written
    resolved: List[Tuple[str, int]] = field(default_factory=list)   # TODO placeholders the step replaced
    accumulator: Optional[str] = None       # the summed gradients the enclosing loop applies (outer_accumulation)
    kept_grads: bool = False                # a step keeps its gradients for later `.grad` reads (_keeps_grads)
    taped: bool = False                     # a group runs as written, differentiated from PyNative's record


# a read of `x.grad` (not `x.grad = ...`, not autograd's `.grad(...)`)
_GRAD_READ = re.compile(r"\.grad\b(?!\s*(\(|=(?!=)))")


def _keeps_grads(body: Sequence[cst.CSTNode], g: "StepGroup", info: "LoopInfo") -> bool:
    """The step returns its gradients and `_ms_compat.keep_grads` holds them for the program's `.grad` reads
    (torch's .grad after backward(); the unclipped ones until the statement that clips them in place). Only a
    plain optimizer step (or one summing over a loop that clears nothing), and not where the body reads `.grad`
    before its backward() (torch's zero_grad() would have cleared it). A GradScaler's scaling is removed: the
    kept gradients are torch's .grad with scaling off (CPU, enabled=False) and after unscale_() or
    scaler.step(opt) (the GradScaler site's note names the scaled values in between)."""
    if not info.keep_grads or not g.optimizer or g.closure or g.wrapper_call or g.manual is not None \
            or g.leaves or g.outer or (g.accumulate and not g.uncleared):
        return False
    return not any(_GRAD_READ.search(code_of(st)) for st in body[:g.backwards[0]])


def _is_optimizer(code: str, info: LoopInfo) -> bool:
    if code in info.optimizers:
        return True
    last = code.rsplit(".", 1)[-1]
    return bool(OPTIMIZER_NAME.search(last)) and not SCHEDULER_NAME.search(last)


NO_STEP_WHY = ("no optimizer.step() follows this backward() in the same loop body (the step is in another function "
               "or loop, or the program reads .grad itself): write this train step with mindspore.value_and_grad "
               "(or mindspore.grad) by hand")
# Tensor.backward's parameters: a `.backward(...)` call passing another keyword is a program's own method
_BACKWARD_KEYWORDS = frozenset(("gradient", "retain_graph", "create_graph", "inputs"))


def _not_tensor_backward(call: cst.Call) -> bool:
    """`explainer.backward(ids=...)`: a keyword (or more positional arguments) Tensor.backward does not take, so
    the receiver is no tensor (a program's class with its own backward method), whatever its name."""
    return (sum(1 for a in call.args if a.keyword is None and not a.star) > len(_BACKWARD_KEYWORDS)
            or any(a.keyword is not None and a.keyword.value not in _BACKWARD_KEYWORDS for a in call.args))


def find_groups(body: Sequence[cst.CSTNode], info: LoopInfo, outer_step: Optional["OuterStep"] = None,
                closure_of: Optional[str] = None, held_for: Optional[str] = None, taped_for: Optional[str] = None,
                zeroed: Set[str] = frozenset(), attack_marks: Optional[FrozenSet[str]] = None
                ) -> Tuple[List[StepGroup], List[Tuple[int, str]]]:
    """zeroed: names whose .grad the loop as written clears before its first backward() (_zeroed_leaves).
    attack_marks: the loop sits in a loop body whose optimizer clears the parameters' gradients after it before
    stepping (attack_enclosure): the names that body marks requires_grad before this loop."""
    groups: List[StepGroup] = []
    problems: List[Tuple[int, str]] = []
    pending: Optional[StepGroup] = None
    if not any(_method(_stmt_call(stmt), "backward") is not None for stmt in body):
        return groups, problems   # no train step here (most loops and functions): skip the analysis
    loop_bound: Set[str] = set()
    for stmt in body:
        loop_bound |= assigns(stmt)
    for i, stmt in enumerate(body):
        call = _stmt_call(stmt)
        recv = _method(call, "backward")
        if isinstance(recv, cst.Name) and recv.value == "self":   # the class's own method, no tensor's
            recv = _own_backward(call, info)
            call = None if recv is None else cst.Call(func=cst.Attribute(value=recv, attr=cst.Name("backward")))
        elif recv is not None and _not_tensor_backward(call):
            recv = None
        if recv is not None:
            scaler = None
            inner = _method(recv if isinstance(recv, cst.Call) else None, "scale")
            if inner is not None and len(recv.args) == 1:
                scaler = code_of(inner).strip()
                recv = recv.args[0].value
            kw = {a.keyword.value: a for a in call.args if a.keyword is not None}
            unsupported = [k for k in ("inputs", "create_graph") if k in kw
                           and code_of(kw[k].value).strip() not in ("None", "False")]
            if unsupported:
                problems.append((i, f"backward({unsupported[0]}=...) (gradients of some inputs only, or of "
                                 "higher order): write it with mindspore.grad by hand"))
                continue
            gradient = [a for a in call.args if a.keyword is None][:1] + ([kw["gradient"]] if "gradient" in kw else [])
            if gradient and code_of(gradient[0].value).strip() != "None":
                # y.backward(g) is the gradient of sum(y * g): a vector-Jacobian product
                recv = cst.parse_expression(f"(({code_of(recv).strip()}) * ({code_of(gradient[0].value).strip()})).sum()")
            if pending is None:
                pending = StepGroup(backwards=[], losses=[], scaler=scaler)
            pending.backwards.append(i)
            pending.losses.append(recv)
            continue
        if pending is None:
            co = _co_step(call, groups, i, info)
            if co is not None:
                groups[-1].co_steps.append((i, co))
                groups[-1].extras.append(i)
            continue
        by_method = _optimizer_grad_method(call, info)
        if by_method is not None:
            pending.optimizer, pending.step, pending.wrapper_call, pending.grad_method = by_method, i, True, True
            groups.append(pending)
            pending = None
            continue
        wrapped = _wrapper_step(call, info)
        if wrapped is not None:
            pending.optimizer, pending.step, pending.wrapper_call = wrapped, i, True
            groups.append(pending)
            pending = None
            continue
        recv = _method(call, "step")
        if recv is not None:
            rc = code_of(recv).strip()
            if pending.scaler is not None and rc == pending.scaler and len(call.args) == 1:
                pending.optimizer = code_of(call.args[0].value).strip()
            elif not call.args and rc in info.closure_only:
                problems.extend((b, f"{rc}.step() without a closure: torch's LBFGS re-evaluates the loss through "
                                 "step(closure) (and raises TypeError without one)") for b in pending.backwards)
                pending = None
                continue
            elif not call.args and _is_optimizer(rc, info):
                pending.optimizer = rc
            else:
                continue
            pending.step = i
            groups.append(pending)
            pending = None
            continue
        update = MU.find(stmt)
        if update is not None:
            pending.manual, pending.step = update, i
            groups.append(pending)
            pending = None
            continue
        target, acall = _assigned_call(stmt)
        if acall is not None and _call_name(acall) in (CLIP_NORM, CLIP_VALUE):
            pending.clips.append((i, target, acall))
            continue
        opt = _accumulation_step(stmt, pending, info)
        if opt is not None:
            pending.optimizer, pending.step, pending.accumulate = opt, i, True
            groups.append(pending)
            pending = None
            continue
        settings = _settings_read_by_clip_test(body, stmt, pending, loop_bound)
        conditional = _conditional_clips(stmt, pending, loop_bound - set(settings))
        if conditional:
            pending.clips.extend((i, None, c) for c in conditional)
            test = stmt.test.visit(_SettingsInlined(settings)) if settings else stmt.test
            pending.clip_conds[i] = code_of(test).strip()
            continue
        for name in ("unscale_", "update"):
            r = _method(call, name)
            if r is not None and pending.scaler is not None and code_of(r).strip() == pending.scaler:
                pending.extras.append(i)
    if pending is not None and closure_of is not None and not groups:
        # the body of `def closure(): ...` stepped by `closure_of.step(closure)` (step_closure.py): its
        # step computes the gradients for that optimizer and hands them back instead of applying them
        pending.optimizer, pending.step, pending.closure = closure_of, pending.backwards[-1], True
        groups.append(pending)
        pending = None
    leaves = _grad_leaves(body, pending, zeroed) if pending is not None else []
    by_hand = MU.tensor_updates(body, pending.backwards[-1]) if pending is not None and not leaves \
        and len(pending.backwards) == 1 else None
    if by_hand is not None:
        leaves, pending.tensor_updates, clears = by_hand
        pending.extras.extend(pending.tensor_updates + clears)
    if not leaves and by_hand is None and pending is not None and not groups and attack_marks is not None:
        leaves = _summed_leaves(body, pending, attack_marks)
        pending.summed = bool(leaves)
    if leaves:
        pending.leaves, pending.step = leaves, pending.backwards[-1]
        groups.append(pending)
    elif pending is not None and outer_step is not None and not groups and pending.scaler == outer_step.scaler \
            and not pending.clips and not pending.extras and not by_hand:
        # nanoGPT's micro steps: the gradients add up over this loop, the enclosing loop steps once
        pending.optimizer, pending.step, pending.accumulate, pending.outer = \
            outer_step.optimizer, pending.backwards[-1], True, True
        groups.append(pending)
    elif pending is not None and held_for is not None and not groups and pending.scaler is None \
            and not pending.clips and not pending.extras and not by_hand:
        # improved-diffusion's micro-batches: the sum is held for the step() another method calls (held_steps.py)
        pending.optimizer, pending.step, pending.accumulate, pending.uncleared, pending.held = \
            held_for, pending.backwards[-1], True, True, True
        groups.append(pending)
    elif pending is not None and taped_for is not None and not groups and pending.scaler is None \
            and not pending.clips and not pending.extras and not by_hand:
        # REINFORCE's `for r, prob in self.data[::-1]: loss = -torch.log(prob) * R; loss.backward()`, the step
        # after the loop: the losses are kept on the tape, the enclosing step differentiates their sum
        pending.optimizer, pending.step, pending.taped_outer = taped_for, pending.backwards[-1], True
        groups.append(pending)
    elif pending is not None:
        for b in pending.backwards:
            problems.append((b, NO_STEP_WHY))
    # zero_grad() calls of the optimizers anywhere in the body go away, and loops clearing p.grad
    manual = [g for g in groups if g.manual is not None]
    for i, stmt in enumerate(body):
        if manual and MU.only_zeroes_grads(stmt):
            manual[0].extras.append(i)
            continue
        r = _method(_stmt_call(stmt), "zero_grad")
        if r is None:
            continue
        for g in groups:
            if g.grad_method and g.optimizer == code_of(r).strip():
                break   # kept: it clears the p.grad the optimizer's own methods read (give_gradients)
            if g.optimizer == code_of(r).strip() or code_of(r).strip() in (o for _, o in g.co_steps):
                g.extras.append(i)
                break
    return groups, problems


def _split_cleared(groups: List[StepGroup], body: Sequence[cst.CSTNode], original: Optional[cst.CSTNode],
                   problems: List[Tuple[int, str]]) -> List[StepGroup]:
    """`x.backward(); ...; opt.zero_grad(); loss.backward(); opt.step()` (the fast gradient sign step: the input
    gradient of an attack, then the training step): torch's zero_grad() empties what the earlier backward()s
    added to the parameters' .grad before anything steps them, so they are no part of the step's loss. Those
    backward()s become a group of their own: the gradient of the leaves whose .grad the body reads after them
    (_grad_leaves), or a raising TODO where there are none. `original`: the loop as written (the converted body
    has lost its zero_grad() calls); the k-th backward() of one is the k-th of the other."""
    if original is None or not isinstance(getattr(original, "body", None), cst.IndentedBlock):
        return groups
    written = list(original.body.body)
    backs_written = [j for j, st in enumerate(written) if _method(_stmt_call(st), "backward") is not None]
    backs = [j for j, st in enumerate(body) if _method(_stmt_call(st), "backward") is not None]
    if len(backs_written) != len(backs):
        return groups
    where = dict(zip(backs, backs_written))
    out: List[StepGroup] = []
    for g in groups:
        at = [where.get(b) for b in g.backwards]
        if len(at) < 2 or None in at or not g.optimizer or g.leaves or g.manual is not None:
            out.append(g)
            continue
        cut = max((k for k in range(1, len(at)) if any(
            code_of(_method(_stmt_call(written[j]), "zero_grad") or cst.Name("_")).strip() == g.optimizer
            for j in range(at[k - 1] + 1, at[k]))), default=0)
        if not cut:
            out.append(g)
            continue
        early = StepGroup(backwards=g.backwards[:cut], losses=g.losses[:cut])
        g.backwards, g.losses = g.backwards[cut:], g.losses[cut:]
        leaves = _grad_leaves(body[:g.backwards[0]], early)
        if leaves:
            early.leaves, early.step = leaves, early.backwards[-1]
            out.append(early)
        else:
            problems.extend((b, f"{g.optimizer}.zero_grad() clears the gradients this backward() adds before "
                             f"{g.optimizer}.step() applies them, and the body reads no .grad of a tensor it made "
                             "(what else it would be for cannot be told): write that gradient with mindspore.grad "
                             "by hand") for b in early.backwards)
        out.append(g)
    return out


def _clip_site(stmt: cst.CSTNode) -> Tuple[Optional[str], Optional[cst.Call]]:
    """`clip(...)` / `n = clip(...)`, or that one statement alone under `if TEST:` with no else and a test that
    calls nothing (copymem_test.py's `if args.clip > 0:`): (target code or None, call), as _assigned_call."""
    if isinstance(stmt, cst.If) and stmt.orelse is None and isinstance(stmt.body, cst.IndentedBlock) \
            and len(stmt.body.body) == 1 and "(" not in code_of(stmt.test):
        stmt = stmt.body.body[0]
    return _assigned_call(stmt)


def _take_cleared_clips(groups: Sequence[StepGroup], body: Sequence[cst.CSTNode],
                        original: Optional[cst.CSTNode]) -> None:
    """TCN's copymem_test.py: `optimizer.zero_grad(); out = model(x); loss = ...; clip_grad_norm_(
    model.parameters(), clip); loss.backward(); optimizer.step()`. The clipping runs on the gradients zero_grad()
    just cleared (None since torch 2.0, or zeros with set_to_none=False): it changes nothing, and its result (0,
    the norm) is not used. It goes with the step's zero_grad() when, since the last backward() or step(), the
    loop as written (`original`: the converted body has lost its zero_grad() calls) cleared the module whose
    `.parameters()` it clips, or this step's optimizer in a body stepping no other; otherwise it stays (and
    raises, naming its line). The script itself writes it under `if args.clip > 0:` (_clip_site): the `if` goes
    with it."""
    if original is None or not isinstance(getattr(original, "body", None), cst.IndentedBlock):
        return
    cleared_at: List[Optional[Set[str]]] = []     # per clipping statement as written: what was cleared before it
    seen: Set[str] = set()
    for st in original.body.body:
        call = _stmt_call(st)
        zr = _method(call, "zero_grad")
        if zr is not None:
            seen.add(code_of(zr).strip())
        elif _method(call, "backward") is not None or _method(call, "step") is not None:
            seen = set()
        target, ccall = _clip_site(st)
        if ccall is not None and _CLIP_CALL.search(_call_name(ccall)):
            cleared_at.append(set(seen) if target is None else None)
    here = [i for i, st in enumerate(body)
            if _clip_site(st)[1] is not None and _call_name(_clip_site(st)[1]) in (CLIP_NORM, CLIP_VALUE)]
    norms = [_call_name(_clip_site(body[i])[1]) == CLIP_NORM for i in here]
    if len(here) != len(cleared_at):
        return
    for i, cleared, norm in zip(here, cleared_at, norms):
        g = next((g for g in groups if g.backwards and g.backwards[0] > i), None)
        # clip_grad_value_ of gradients set to None is torch's RuntimeError ("Expected !nested_tensorlist[0]
        # .empty()"): it stays, and raises
        if not norm or not cleared or g is None or not g.optimizer or g.manual is not None or g.leaves \
                or g.accumulate or g.outer or any(h.backwards and h.backwards[0] < i < h.step for h in groups):
            continue
        args = list(_clip_site(body[i])[1].args)
        first = code_of(args[0].value).strip() if args else ""
        m = re.fullmatch(r"_ms_compat\.parameters\(([\w.]+)\)|([\w.]+)\.(?:parameters|trainable_params)\(\)", first)
        owner = (m.group(1) or m.group(2)) if m else None
        # the step's optimizer cleared: taken for the parameters clipped where the loop steps one optimizer only
        # (a GAN's `opt_d.zero_grad(); clip(G.parameters())` would clip G's kept gradients)
        if (g.optimizer in cleared and len(groups) == 1) or (owner is not None and owner in cleared):
            g.cleared_clips.append(i)
            g.extras.append(i)


def _keep_cleared_co_steps(groups: Sequence[StepGroup], original: Optional[cst.CSTNode]) -> None:
    """Drops the co-steps (_co_step) of optimizers the loop as written does not clear with zero_grad(): torch's
    step applies the gradients of every iteration so far, which a step of this iteration's would not; that
    step() stays as written (and raises, optimizer.step() outside a converted step). None given: all go."""
    body = original.body.body if original is not None and isinstance(original.body, cst.IndentedBlock) else ()
    cleared = {m.group(1) for st in body if isinstance(st, cst.SimpleStatementLine)
               for m in re.finditer(r"([\w.]+)\.zero_grad\(", code_of(st))}
    for g in groups:
        for k, o in [c for c in g.co_steps if c[1] not in cleared]:
            g.co_steps.remove((k, o))
            g.extras.remove(k)


def _co_step(call: Optional[cst.Call], groups: Sequence[StepGroup], i: int, info: LoopInfo) -> Optional[str]:
    """`decoder_opt.step()` right after the step that closed the last group (`loss.backward();
    encoder_opt.step(); decoder_opt.step()`, or two losses' backward()s and then both optimizers' steps): the
    optimizer stepped on the same gradients, else None. torch's backward()s fill every parameter's .grad with
    the gradient of the sum of the losses; differentiating that sum w.r.t. both optimizers' parameters gives
    each its share."""
    recv = _method(call, "step")
    if recv is None or call.args or not groups:
        return None
    g = groups[-1]
    rc = code_of(recv).strip()
    if i != max([g.step] + [k for k, _ in g.co_steps]) + 1 or not _is_optimizer(rc, info) \
            or rc in info.closure_only or rc == g.optimizer or any(rc == o for _, o in g.co_steps):
        return None
    if g.scaler or g.accumulate or g.closure or g.wrapper_call or g.manual is not None or g.leaves or g.outer \
            or g.held or g.uncleared or not g.optimizer:
        return None
    return rc


def _optimizer_grad_method(call: Optional[cst.Call], info: LoopInfo) -> Optional[str]:
    """`opt.first_step(zero_grad=True)` after a backward(): a method of the program's own optimizer class that
    reads p.grad (LoopInfo.optimizer_grad_methods), called on an optimizer: the optimizer's code, else None."""
    if call is None or not isinstance(call.func, cst.Attribute) or any(a.star for a in call.args) \
            or call.func.attr.value not in info.optimizer_grad_methods:
        return None
    rc = code_of(call.func.value).strip()
    return rc if _is_optimizer(rc, info) and rc not in info.closure_only else None


class _GradMethodCalls(cst.CSTVisitor):
    def __init__(self, methods: Set[str]) -> None:
        self.methods = methods
        self.receivers: Set[str] = set()
        self.clears: List[Tuple[str, cst.SimpleStatementLine]] = []

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        r = _method(_stmt_call(node), "zero_grad")
        if r is not None:
            self.clears.append((code_of(r).strip(), node))

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in self.methods:
            self.receivers.add(code_of(node.func.value).strip())


def grad_method_clears(module: cst.Module, methods: Set[str]) -> Set[int]:
    """ids of the `opt.zero_grad()` statements of optimizers the module steps through a method that reads p.grad
    (SAM's `opt.first_step()`): kept, they clear the gradients give_gradients hands those methods, which add up
    as torch's .grad until then."""
    if not methods or ".zero_grad(" not in module.code:
        return set()
    v = _GradMethodCalls(methods)
    walk(module, v)
    return {id(st) for r, st in v.clears if r in v.receivers}


def _wrapper_step(call: Optional[cst.Call], info: LoopInfo) -> Optional[str]:
    """`wrapper.method()` where wrapper wraps an optimizer and method steps it: the wrapped optimizer's code."""
    if call is None or call.args or not isinstance(call.func, cst.Attribute):
        return None
    wrapper, method = code_of(call.func.value).strip(), call.func.attr.value
    if wrapper in info.optimizer_wrappers:
        attribute, methods = info.optimizer_wrappers[wrapper]
        return f"{wrapper}.{attribute}" if method in methods else None
    if wrapper in info.optimizers or method not in info.wrapper_step_methods:
        return None
    if method == "step":    # an optimizer or a project wrapper (NoamOpt.step()): which one is known at run time
        return f"_ms_compat.stepped_optimizer({wrapper}, {info.wrapper_step_methods[method]!r})"
    return f"{wrapper}.{info.wrapper_step_methods[method]}"


def _step_of(stmt: cst.CSTNode, group: StepGroup, info: "LoopInfo") -> Optional[str]:
    """The optimizer that `stmt` steps (`opt.step()`, `scaler.step(opt)`), or None."""
    call = _stmt_call(stmt)
    recv = _method(call, "step")
    if recv is None:
        return None
    rc = code_of(recv).strip()
    if group.scaler is not None and rc == group.scaler and len(call.args) == 1:
        return code_of(call.args[0].value).strip()
    if not call.args and _is_optimizer(rc, info):
        return rc
    return None


def _accumulation_step(stmt: cst.CSTNode, group: StepGroup, info: "LoopInfo") -> Optional[str]:
    """`if (i + 1) % accum == 0: optimizer.step(); optimizer.zero_grad()`: gradients of several
    batches add up before one update. Returns the optimizer stepped inside the `if`."""
    if not (isinstance(stmt, cst.If) and stmt.orelse is None and isinstance(stmt.body, cst.IndentedBlock)):
        return None
    for inner in stmt.body.body:
        opt = _step_of(inner, group, info)
        if opt is not None:
            return opt
    return None


def _accumulation_if(stmt: cst.If, g: StepGroup, acc: str) -> cst.If:
    """The body of the accumulation `if` on the accumulated gradients: clip them, apply them
    with `optimizer(acc)`, and start a new sum."""
    out: List[cst.BaseStatement] = []
    for inner in stmt.body.body:
        call = _stmt_call(inner)
        target, acall = _assigned_call(inner)
        recv = _method(call, "step")
        steps = recv is not None and (
            (not call.args and code_of(recv).strip() == g.optimizer)
            or (g.scaler is not None and code_of(recv).strip() == g.scaler and len(call.args) == 1
                and code_of(call.args[0].value).strip() == g.optimizer))
        if steps:
            # the update, then a new sum: torch's zero_grad() after step() (the converter has
            # already removed that call, which has no MindSpore counterpart)
            out.append(_line(f"{g.optimizer}({acc})").with_changes(leading_lines=inner.leading_lines))
            out.append(_line(f"{acc} = None"))
        elif _method(call, "zero_grad") is not None and code_of(_method(call, "zero_grad")).strip() == g.optimizer:
            continue
        elif acall is not None and _call_name(acall) in (CLIP_NORM, CLIP_VALUE):
            rest = ", ".join(code_of(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)).strip()
                             for a in list(acall.args)[1:])
            if _call_name(acall) == CLIP_NORM:
                norm = target if target and re.fullmatch(r"\w+", target) else "_"
                out.append(_line(f"{acc}, {norm} = _ms_compat.clip_grad_norm({acc}, {rest})"))
            else:
                out.append(_line(f"{acc} = _ms_compat.clip_grad_value({acc}, {rest})"))
        elif g.scaler is not None and any(
                _method(call, n) is not None and code_of(_method(call, n)).strip() == g.scaler
                for n in ("update", "unscale_")):
            continue
        else:
            out.append(inner)
    return stmt.with_changes(body=stmt.body.with_changes(body=out))


@dataclass
class OuterStep:
    """The update an enclosing loop makes after a loop of backward()s (outer_accumulation)."""
    optimizer: str
    scaler: Optional[str]


_CLIP_CALL = re.compile(r"(^|\.)clip_grad_(norm|value)_$")


def _clip_statement(stmt: cst.CSTNode) -> bool:
    _, call = _assigned_call(stmt)
    return call is not None and bool(_CLIP_CALL.search(_call_name(call)))


def _calls_method(node: cst.CSTNode, name: str) -> List[str]:
    """Receivers of the `x.name(...)` calls in a piece of code."""
    found: List[str] = []

    class _V(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            r = _method(call, name)
            if r is not None:
                found.append(code_of(r).strip())

    walk(node, _V())
    return found


def outer_accumulation(outer: cst.CSTNode, inner: cst.CSTNode, info: LoopInfo) -> Optional[OuterStep]:
    """nanoGPT's gradient accumulation, judged on the original torch code:

        for it in range(iters):
            for micro_step in range(accum):
                loss = model(x, y) / accum
                scaler.scale(loss).backward()          # or loss.backward()
            if grad_clip != 0.0:
                scaler.unscale_(optimizer); torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            scaler.step(optimizer); scaler.update()    # or optimizer.step()
            optimizer.zero_grad(set_to_none=True)

    The inner loop's backward()s add their gradients up; the enclosing loop updates once and clears them.
    Accepted only when, outside the inner loop, the enclosing body holds no other backward(), no `.grad`,
    exactly one step of the optimizer, a zero_grad() of it at its top level, and between the inner loop and
    the step only clipping and unscale_() (also under a plain `if`) and statements that clear, step, scale or clip
    nothing (a print of the loss); the inner loop clears nothing."""
    if not (isinstance(outer, (cst.For, cst.While)) and isinstance(outer.body, cst.IndentedBlock)
            and isinstance(inner, (cst.For, cst.While)) and inner.orelse is None and outer.orelse is None):
        return None
    body = list(outer.body.body)
    pos = next((k for k, st in enumerate(body) if st is inner), None)
    if pos is None or _calls_method(inner, "zero_grad") or _calls_method(inner, "step") \
            or ".grad" in code_of(inner).replace(".grad_", ""):
        return None
    backs = [r for r in _calls_method(inner, "backward")]
    scalers = {code_of(_method(r, "scale")).strip() for r in (cst.parse_expression(b) for b in backs)
               if isinstance(r, cst.Call) and _method(r, "scale") is not None}
    if not backs or len(scalers) > 1:
        return None
    scaler = next(iter(scalers), None)
    rest = body[:pos] + body[pos + 1:]
    if any(_calls_method(st, "backward") for st in rest) or any(re.search(r"\.grad\b", code_of(st)) for st in rest):
        return None
    probe = StepGroup(backwards=[], losses=[], scaler=scaler)
    steps = [(k, _step_of(st, probe, info)) for k, st in enumerate(body) if k > pos and _step_of(st, probe, info)]
    if len(steps) != 1 or sum(len(_calls_method(st, "step")) for st in rest) != 1:
        return None
    k_step, optimizer = steps[0]

    def between(st: cst.CSTNode) -> bool:
        r = _method(_stmt_call(st), "unscale_")
        if r is not None:
            return scaler is not None and code_of(r).strip() == scaler
        if isinstance(st, cst.If) and st.orelse is None and isinstance(st.body, cst.IndentedBlock):
            return all(between(x) for x in st.body.body)
        if _clip_statement(st):
            return True
        # PaLM's train.py: `print(f"training loss: {loss.item()}")` between the micro steps and the clipping.
        # A statement that clears, steps, scales or clips nothing (backward() and .grad are ruled out above)
        # runs where it stood, before the update, as in torch
        return not isinstance(st, cst.If) and not any(
            _calls_method(st, n) for n in ("zero_grad", "step", "update", "unscale_", "scale")) \
            and "clip_grad_" not in code_of(st)

    if not all(between(st) for st in body[pos + 1:k_step]):
        return None
    cleared = any(_method(_stmt_call(st), "zero_grad") is not None
                  and code_of(_method(_stmt_call(st), "zero_grad")).strip() == optimizer for st in rest)
    if not cleared or any(z != optimizer for st in rest for z in _calls_method(st, "zero_grad")):
        return None
    return OuterStep(optimizer, scaler)


def _block_holding(body: Sequence[cst.CSTNode], inner: cst.CSTNode) -> Optional[List[cst.CSTNode]]:
    """The statements of the `if`/`else` branch (at any depth of `if`s) that hold `inner` itself; None."""
    for st in body:
        node = st
        while isinstance(node, cst.If):
            for part in (node.body, node.orelse.body if isinstance(node.orelse, cst.Else) else None):
                if isinstance(part, cst.IndentedBlock):
                    if any(x is inner for x in part.body):
                        return list(part.body)
                    found = _block_holding(part.body, inner)
                    if found is not None:
                        return found
            node = node.orelse if isinstance(node.orelse, cst.If) else None
    return None


def taped_outer_step(outer: cst.CSTNode, inner: cst.CSTNode, info: LoopInfo) -> Optional[str]:
    """The optimizer whose step() follows `inner` (a loop of backward()s, no step) in `outer` (the enclosing
    function or loop), where outer_accumulation found no step the loop's losses could be summed into:
    REINFORCE's `train_net` clears, keeps one backward() per saved probability in a loop, and steps once.
    The loop's backward()s are taped and that step becomes tape_step (taped_steps.py). Only when the
    enclosing body clears that optimizer before the loop, calls backward() nowhere else, reads no `.grad`,
    steps it once after the loop and clips or clears nothing in between, and the loop itself clears, steps
    and reads `.grad` nowhere."""
    if isinstance(outer, cst.IndentedBlock):        # a function's body (the transformer's scope node)
        body = list(outer.body)
        # a branch of an `if` of the body (loop_unswitch.py wrote the body once per branch of a setting)
        body = _block_holding(body, inner) or body
    elif isinstance(outer, (cst.For, cst.While, cst.FunctionDef)) and isinstance(outer.body, cst.IndentedBlock):
        body = list(outer.body.body)
    else:
        return None
    if not (isinstance(inner, (cst.For, cst.While)) and inner.orelse is None):
        return None
    pos = next((k for k, st in enumerate(body) if st is inner), None)
    if pos is None or not _calls_method(inner, "backward") or _calls_method(inner, "zero_grad") \
            or _calls_method(inner, "step") or re.search(r"\.grad\b", code_of(inner)):
        return None
    rest = body[:pos] + body[pos + 1:]
    if any(_calls_method(st, "backward") for st in rest) or any(re.search(r"\.grad\b", code_of(st)) for st in rest):
        return None
    steps = []
    for k in range(pos + 1, len(body)):
        recv = _method(_stmt_call(body[k]), "step")
        if recv is not None and not _stmt_call(body[k]).args and _is_optimizer(code_of(recv).strip(), info):
            steps.append((k, code_of(recv).strip()))
    if len(steps) != 1:
        return None
    k_step, optimizer = steps[0]
    if any(_calls_method(st, n) for st in body[pos + 1:k_step] for n in ("zero_grad", "unscale_", "scale")) \
            or any("clip_grad_" in code_of(st) for st in body[pos + 1:k_step]):
        return None
    cleared = any(_method(_stmt_call(st), "zero_grad") is not None
                  and code_of(_method(_stmt_call(st), "zero_grad")).strip() == optimizer for st in body[:pos])
    return optimizer if cleared else None


def apply_outer_step(loop: cst.CSTNode, step: OuterStep, acc: str, info: LoopInfo
                     ) -> Tuple[cst.CSTNode, List[cst.CSTNode]]:
    """The enclosing loop of outer_accumulation (converted code): its clipping works on the summed
    gradients `acc`, its step is `optimizer(acc)` followed by a new sum (torch's zero_grad(), which the
    main pass removed), the scaler's unscale_()/update() go. Returns the loop and the statements (of the
    loop given) that were the step."""
    g = StepGroup(backwards=[], losses=[], scaler=step.scaler, optimizer=step.optimizer)
    out: List[cst.BaseStatement] = []
    updates: List[cst.CSTNode] = []
    for st in loop.body.body:
        if isinstance(st, cst.If) and st.orelse is None and isinstance(st.body, cst.IndentedBlock) and \
                any(_clip_statement(x) for x in st.body.body):
            out.append(_accumulation_if(st, g, acc))
            continue
        if _step_of(st, g, info) == step.optimizer or _clip_statement(st) or any(
                g.scaler is not None and _method(_stmt_call(st), n) is not None
                and code_of(_method(_stmt_call(st), n)).strip() == g.scaler for n in ("update", "unscale_")):
            if _step_of(st, g, info) == step.optimizer:
                updates.append(st)
            new = _accumulation_if(cst.If(test=cst.Name("True"), body=cst.IndentedBlock(body=[st])), g, acc)
            out.extend(new.body.body)
            continue
        out.append(st)
    return loop.with_changes(body=loop.body.with_changes(body=out or [_line("pass")])), updates


def update_choice(loop: cst.CSTNode, info: LoopInfo) -> Optional[cst.CSTNode]:
    """word_language_model's update chosen by an `if` (converted code):

        ...; loss.backward(); clip_grad_norm_(...)
        if args.use_optimizer: optimizer.step()
        else: for p in model.parameters(): p.data.add_(p.grad, alpha=-lr)

    becomes one `if` holding two train steps, the statements from the loop's start to the update copied
    into both branches (each then rewritten as a step under an `if`, its definitions inside the branch, so
    the optimizer is looked up only where it is used):

        if args.use_optimizer: <statements>; loss.backward(); clip; optimizer.step()
        else: <statements>; loss.backward(); clip; <hand-written update>

    Only when the test calls nothing and reads nothing the loop body assigns (it has the same value at the
    top of the body as after backward()), one plain backward() precedes it, and only clipping lies between.
    Returns the loop so split (None: not this shape)."""
    if not isinstance(loop.body, cst.IndentedBlock):
        return None
    body = list(loop.body.body)
    backs = [k for k, st in enumerate(body) if _method(_stmt_call(st), "backward") is not None]
    if len(backs) != 1 or code_of(body[backs[0]]).count("backward") != 1:
        return None
    b = backs[0]
    recv = _method(_stmt_call(body[b]), "backward")
    if isinstance(recv, cst.Call) or _stmt_call(body[b]).args:
        return None     # scaler.scale(loss), backward(gradient...): not this shape
    k = b + 1
    while k < len(body) and _clip_statement(body[k]):
        k += 1
    if k >= len(body):
        return None
    st = body[k]
    if not (isinstance(st, cst.If) and isinstance(st.orelse, cst.Else) and isinstance(st.body, cst.IndentedBlock)
            and isinstance(st.orelse.body, cst.IndentedBlock)
            and len(st.body.body) == 1 and len(st.orelse.body.body) == 1):
        return None
    loop_bound: Set[str] = set()
    for x in body:
        loop_bound |= assigns(x)
    calls = _CallsAndOps()
    walk(st.test, calls)
    if calls.calls or set(reads(st.test)) & loop_bound:
        return None
    probe = StepGroup(backwards=[], losses=[])
    first, second = st.body.body[0], st.orelse.body.body[0]
    if not ((_step_of(first, probe, info) and MU.find(second) is not None)
            or (_step_of(second, probe, info) and MU.find(first) is not None)):
        return None
    if any(_method(_stmt_call(x), "backward") is not None or re.search(r"\.grad\b", code_of(x)) for x in body[k + 1:]):
        return None
    shared = body[:k]
    split = st.with_changes(body=st.body.with_changes(body=shared + [first]),
                            orelse=st.orelse.with_changes(body=st.orelse.body.with_changes(body=shared + [second])))
    return loop.with_changes(body=loop.body.with_changes(body=[split] + body[k + 1:]))


def _setting_read(node: cst.BaseExpression) -> bool:
    """A read of the program's settings that has no effect and is the same when read again: names, attributes,
    subscripts by literals, literals, and a `.get(literal, literal)` of those (`self.opt['train'].get('use_grad_clip',
    True)`, `args.clip`)."""
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.Attribute):
        return _setting_read(node.value)
    if isinstance(node, cst.Subscript):
        return _setting_read(node.value) and all(
            isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.SimpleString, cst.Integer))
            for e in node.slice)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "get":
        return _setting_read(node.func.value) and 1 <= len(node.args) <= 2 and all(
            a.keyword is None and not a.star and isinstance(a.value, (cst.Name, cst.Integer, cst.Float,
                                                                        cst.SimpleString)) for a in node.args)
    return False


def _settings_read_by_clip_test(body: Sequence[cst.CSTNode], stmt: cst.CSTNode, group: StepGroup,
                                loop_bound: Set[str]) -> Dict[str, cst.BaseExpression]:
    """basicsr's optimize_parameters: `loss.backward(); use_grad_clip = self.opt['train'].get('use_grad_clip',
    True); if use_grad_clip: clip_grad_norm_(...); optimizer.step()`: the clip's test reads a name the body binds,
    once, after the backward() and before the `if`, to a read of the settings (_setting_read) of nothing the body
    binds: the test inside the train step reads the settings themselves (the assignment stays where it is, after
    the step, reading the same value). {name: its value} for such names; {} where any name the test reads from the
    body is otherwise bound."""
    if not (isinstance(stmt, cst.If) and group.backwards):
        return {}
    names = set(reads(stmt.test)) & loop_bound
    out: Dict[str, cst.BaseExpression] = {}
    here = next((k for k, st in enumerate(body) if st is stmt), None)
    for n in names:
        sites = [k for k, st in enumerate(body) if n in assigns(st)]
        if here is None or len(sites) != 1 or not group.backwards[-1] < sites[0] < here:
            return {}
        st = body[sites[0]]
        small = st.body[0] if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 else None
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == n
                and _setting_read(small.value) and not set(reads(small.value)) & loop_bound):
            return {}
        out[n] = small.value
    return out


class _SettingsInlined(cst.CSTTransformer):
    """The names of _settings_read_by_clip_test replaced by their values in the clip's test (attribute and keyword
    names left alone)."""

    def __init__(self, values: Dict[str, cst.BaseExpression]):
        super().__init__()
        self.values = values

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return False

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return updated.with_changes(value=updated.value.visit(self))

    def visit_Arg(self, node: cst.Arg) -> bool:
        return False

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(value=updated.value.visit(self))

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        value = self.values.get(updated.value)
        return updated if value is None else cst.parse_expression(f"({code_of(value).strip()})")


def _conditional_clips(stmt: cst.CSTNode, group: StepGroup, loop_bound: Set[str]) -> List[cst.Call]:
    """`if args.clip > 0: clip_grad_norm_(...)` (nanoGPT's form, with `scaler.unscale_(opt)`
    possibly inside): the clip calls, when the test reads nothing the loop body assigns
    (the step is compiled once; its condition is fixed for the run)."""
    if not (isinstance(stmt, cst.If) and stmt.orelse is None
            and isinstance(stmt.body, (cst.IndentedBlock, cst.SimpleStatementSuite))):
        return []
    if set(reads(stmt.test)) & loop_bound:
        return []
    clips: List[cst.Call] = []
    inners = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else [   # `if args.clip: clip_grad_norm_(...)`
        cst.SimpleStatementLine(body=[small]) for small in stmt.body.body]      # on one line (awd-lstm-lm)
    for inner in inners:
        target, call = _assigned_call(inner)
        if call is not None and target is None and _call_name(call) in (CLIP_NORM, CLIP_VALUE):
            clips.append(call)
            continue
        r = _method(_stmt_call(inner), "unscale_")
        if r is not None and group.scaler is not None and code_of(r).strip() == group.scaler:
            continue
        return []
    return clips


def _rhs(stmt: cst.CSTNode) -> Optional[cst.BaseExpression]:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        small = stmt.body[0]
        if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            return small.value
    return None


class _CallsAndOps(cst.CSTVisitor):
    """The calls of a piece of code, and its operators outside subscripts: index arithmetic
    (`X[i:i + n]`, `seq[:, :-1]`) slices data, it computes nothing a gradient flows through."""

    def __init__(self) -> None:
        self.calls: List[str] = []
        self.ops = 0
        self._index = 0

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(code_of(node.func).strip())

    def visit_SubscriptElement(self, node) -> None:
        self._index += 1

    def leave_SubscriptElement(self, node) -> None:
        self._index -= 1

    def visit_BinaryOperation(self, node) -> None:
        self.ops += not self._index

    def visit_UnaryOperation(self, node) -> None:
        self.ops += not self._index

    def visit_Comparison(self, node) -> None:
        self.ops += not self._index


HOST_CALL = re.compile(r"(^|\.)(from_numpy|asnumpy|numpy|item|tolist)$")


def _is_data_call(c: str, host: Set[str]) -> bool:
    """A call whose result is data for the step: a random draw, `next(it)`, a host value
    (.item(), from_numpy), or a module function that computes on the host (host_functions)."""
    if c in host or bool(RANDOM_CALL.search(c) or HOST_CALL.search(c)) or c == "next":
        return True
    # a host-drawing method of a plain class of the project on a bare name (`replay_buffer.sample(batch_size)`:
    # ProjectIndex.host_sampling_calls' `*.sample`), unless the module uses that name as a network (`!model`)
    head, _, method = c.partition(".")
    return (bool(method) and "." not in method and head != "self" and f"*.{method}" in host
            and f"!{head}" not in host)


def is_source(stmt: cst.CSTNode, host: Set[str] = frozenset()) -> bool:
    """A statement that produces data for the step rather than computing from it:
    unpacking/renaming (`x, y = batch`), random draws, `next(it)`, `.item()` reads, NumPy
    data (`torch.from_numpy(rng.standard_normal(...))`, a function that makes it, a statement calling only
    NumPy's module: `np.zeros(...)`), also
    under an `if` (`if args.deterministic: eps = ... else: eps = None`). Inside a compiled
    step such a value would be computed once, at compile time, and reused at every step."""
    rhs = _rhs(stmt)
    v = _CallsAndOps()
    if rhs is None:
        if isinstance(stmt, cst.FunctionDef):
            return False    # a function the loss is computed with (higher_order_grad.py's `_y_of_x`)
        if isinstance(stmt, cst.If):
            walk(stmt, v)
            return any(_is_data_call(c, host) for c in v.calls)
        return not isinstance(stmt, cst.With)   # other compound statements stay outside
    walk(rhs, v)
    if not v.calls and not v.ops:
        return True
    if v.calls and all(c.split(".")[0] in ("np", "numpy") for c in v.calls):
        return True     # `tokens = np.zeros((4, 6), dtype=np.int64)`: a host array the batch is built in
    data = [c for c in v.calls if _is_data_call(c, host)]
    return bool(data) and not _helper_of_network_output(rhs, data, host) and not _network_of_draw(rhs, host)


def _network_of_draw(rhs: cst.BaseExpression, host: Set[str]) -> bool:
    """`log_p, logdet, _ = model(image + torch.rand_like(image) / n_bins)` (glow-pytorch's dequantization noise): a
    network called on a value drawn in its own argument computes from the network; the statement belongs to the step
    (left out as a source of data, the network's output was an input of the step and the parameters got no
    gradient). The draw is made in the step, each call its own, as torch's. A call of a name (or attribute chain) of
    the program, no library's and no data call, with a random draw among its arguments."""
    for node in _calls_in(rhs):
        name = code_of(node.func).strip()
        root = _root(node.func)
        if root is None or root in _LIBRARY_ROOTS or _is_data_call(name, host):
            continue
        if any(RANDOM_CALL.search(code_of(inner.func).strip()) for arg in node.args for inner in _calls_in(arg.value)):
            return True
    return False


def _helper_of_network_output(rhs: cst.BaseExpression, data: List[str], host: Set[str]) -> bool:
    """`loss = masked_loss(model(inputs), targets, lengths)`: a function of the program that data_functions takes
    for a batch maker (it never calls its parameters: `logits.view(...)`, `torch.gather(...)`), given what a network
    call returns: the loss computes from the network there, the statement belongs to the step. Only where every
    data call is such a function (no draw, no host value) and the network is called by its name."""
    if not all(c in host and "." not in c and not RANDOM_CALL.search(c) and not HOST_CALL.search(c) and c != "next"
               for c in data):
        return False
    for node in _calls_in(rhs):
        if isinstance(node.func, cst.Name) and node.func.value in data:
            for arg in node.args:
                for inner in _calls_in(arg.value):
                    name = inner.func.value if isinstance(inner.func, cst.Name) else None
                    if name and name not in _LIBRARY_ROOTS and not _is_data_call(name, host):
                        return True
    return False


def _calls_in(node: cst.CSTNode) -> List[cst.Call]:
    found: List[cst.Call] = []

    class _V(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            found.append(call)

    walk(node, _V())
    return found


def drawing_objects(module: cst.Module, numpy_names: Set[str], drawing: Set[str]) -> Set[str]:
    """Names bound (`encoder = Encoder()`, anywhere in the module) to an instance of a class of the module
    whose methods draw on the host: call NumPy (`numpy_names`) or a drawing function of the module
    (`drawing`, host_functions), or read a tensor there (`t.numpy()`). Inside a compiled step such a draw is made once, at compile time (or the
    graph does not compile: MindSpore 2.10 rejects np.random in construct), so a step that calls one runs
    op by op in either mode (compile_step(..., host_calls=True)), as a host helper would."""
    classes: Set[str] = set()
    for st in module.body:
        if isinstance(st, cst.ClassDef):
            v = _CallsAndOps()
            walk(st.body, v)
            # `t.numpy()` too: a host read, which a compiled step refuses (host_draws.host_value)
            if any(c.split(".", 1)[0] in numpy_names or c in drawing or c.endswith(".numpy") for c in v.calls):
                classes.add(st.name.value)
    if not classes:
        return set()

    class _Made(cst.CSTVisitor):
        def __init__(self) -> None:
            self.names: Set[str] = set()

        def visit_Assign(self, node: cst.Assign) -> None:
            if isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Name) \
                    and node.value.func.value in classes:
                for t in node.targets:
                    if isinstance(t.target, cst.Name):
                        self.names.add(t.target.value)

    made = _Made()
    walk(module, made)
    return made.names


def host_functions(module: cst.Module, numpy_names: Set[str]) -> Set[str]:
    """Module-level functions that make data on the host: they call NumPy (one of
    `numpy_names`, the names numpy is imported as) or from_numpy. Their results are
    inputs of a train step, not part of it."""
    found: Set[str] = set()
    for st in module.body:
        if isinstance(st, cst.FunctionDef):
            v = _CallsAndOps()
            walk(st.body, v)
            if any(c.split(".", 1)[0] in numpy_names or c.endswith("from_numpy") for c in v.calls):
                found.add(st.name.value)
    return found


class _CallsOf(cst.CSTVisitor):
    def __init__(self, names: Set[str]) -> None:
        self.names, self.hit = names, False

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "self" \
                and f"self.{f.attr.value}" in self.names:
            self.hit = True     # a method of the class (clearing_functions)
        while isinstance(f, cst.Attribute):
            f = f.value
        if isinstance(f, cst.Name) and f.value in self.names:
            self.hit = True


# `model.parameters()`, `sam.mask_decoder.train()`: the root name is a network the module holds
_NETWORK_USE = re.compile(r"\b([A-Za-z_]\w*)(?:\.\w+)*\.(?:parameters|named_parameters|state_dict|load_state_dict|"
                          r"eval|train|modules|children|zero_grad|requires_grad_)\(")


def network_names(module: cst.Module) -> Set[str]:
    """The names the module uses as networks (`model.parameters()`, `sam.mask_decoder.train()`): a function calling
    one of them, held in a global, is no data function."""
    return set(_NETWORK_USE.findall(module.code)) - {"self", "torch", "nn"}


def data_functions(module: cst.Module, networks: Set[str] = frozenset()) -> Set[str]:
    """Module-level functions that never call their parameters or methods on them that
    reach a network (`get_batch(source, i)` slices a tensor), nor a network the module holds in a global
    (`networks`: segment-anything's fine-tuning helper `run(...)` calling `sam.mask_decoder(...)`): what they return
    is a batch for the step. Computed inside a compiled step their Python arguments (the batch index)
    would be compile-time constants: one compilation per batch."""
    found: Set[str] = set()
    for st in module.body:
        if not isinstance(st, cst.FunctionDef):
            continue
        params = {p.name.value for p in list(st.params.params) + list(st.params.kwonly_params)
                  + list(st.params.posonly_params)}
        held = _CallsOf(set(networks) - params - assigns(st.body))
        walk(st.body, held)
        if held.hit:
            continue
        v = _CallsOf(params)
        walk(st.body, v)
        calls = _CallsAndOps()
        walk(st.body, calls)
        # called parameters are networks or callbacks; `x.view(...)` on a parameter is data work,
        # `model(x)`/`model.forward(x)` is not (caught above: the call's base name is a parameter)
        if not v.hit or all(c.rsplit(".", 1)[-1] in _DATA_METHODS for c in calls.calls
                            if c.split(".", 1)[0] in params):
            found.add(st.name.value)
    return found


_DATA_METHODS = {"view", "reshape", "contiguous", "t", "transpose", "permute", "size", "narrow", "to",
                 "long", "float", "int", "clone", "detach", "squeeze", "unsqueeze", "flatten", "cuda", "cpu",
                 "__getitem__", "numel", "dim"}


def _detached_input(stmt: cst.CSTNode) -> Optional[str]:
    """`x = ops.stop_gradient(x)` (torch's `x = x.detach()`): x."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)
            and len(stmt.body[0].targets) == 1 and isinstance(stmt.body[0].targets[0].target, cst.Name)):
        return None
    n, v = stmt.body[0].targets[0].target.value, stmt.body[0].value
    if isinstance(v, cst.Call) and code_of(v.func).strip() in ("ops.stop_gradient", "mindspore.ops.stop_gradient") \
            and len(v.args) == 1 and isinstance(v.args[0].value, cst.Name) and v.args[0].value.value == n:
        return n
    return None


def _slice(body: Sequence[cst.CSTNode], group: StepGroup, skip: Set[int],
           host: Set[str] = frozenset(), outside: Optional[List[int]] = None,
           earlier: Set[int] = frozenset(), drawing: Set[str] = frozenset()) -> List[int]:
    """Statements before the last backward() that the losses depend on. `outside` collects the
    statements that bind a name the losses need but stay out of the step (data sources).
    A statement of an earlier step's slice (`earlier`) whose names this step reads only detached
    (`D(gen.detach())`) is left out: its value, the earlier step's, is an input (run again it would
    update BatchNorm statistics and draw noise a second time)."""
    last = group.backwards[-1]
    needed: Set[str] = set(reads(group.losses[-1]))
    needed_grad: Set[str] = grad_reads(group.losses[-1])
    chosen: List[int] = []
    for j in range(last - 1, -1, -1):
        if j in group.backwards:
            needed |= set(reads(group.losses[group.backwards.index(j)]))
            needed_grad |= grad_reads(group.losses[group.backwards.index(j)])
            continue
        if j in skip:
            continue
        st = body[j]
        bound = assigns(st)
        if not (bound & needed):
            continue
        if j in earlier and not (bound & needed_grad):
            continue
        if j not in group.host_ifs and _carried_host_update(body, j, host):
            if outside is not None:
                outside.append(j)
            continue
        if j not in group.host_ifs and is_source(st, host) and not _loop_through_network(st, host) and \
                not _loop_over_computed(body, j, host, skip) and not _updates_computed(body, j, host, skip) and \
                not _helper_of_network_value(body, j, host, drawing) and not _renames_computed(body, j, host, skip):
            if outside is not None:
                outside.append(j)
            continue
        chosen.append(j)
        if bound & needed_grad:
            needed_grad -= bound
            needed_grad |= grad_reads(st)
        needed -= bound
        # a loop's target is bound before its body reads it: `for scale in D_fake: loss_G += -scale[-1].mean()`
        # needs no earlier `scale` (melgan's train.py: the discriminator's `for scale in D_real: loss_D += ...`
        # was taken into the generator's step, which then returned loss_D counted twice)
        read = reads(st)
        needed |= {n for n in read if read.count(n) > loop_bound_reads(st).get(n, 0)}
        if group.cut_detached and _detached_input(st) is not None and _detached_input(st) not in needed_grad:
            # no gradient flows through the detached value: what computes it runs before the step, as written
            needed.discard(_detached_input(st))
    chosen.reverse()
    return chosen


def _carried_host_update(body: Sequence[cst.CSTNode], j: int, host: Set[str]) -> bool:
    """`if step % 3 == 0: beta = step / 6`, `beta += 0.05`, `beta = min(1.0, beta * 2)`: a value the loop carries
    from one iteration to the next (bound under an `if`, or from its own value), computed from host values only
    (library calls, no network, nothing the body computed before it). It stays in the loop and the step takes
    its value as an input: moved into the forward function, the binding would make the name local there, and the
    loop's next iteration would read the old value again (or None)."""
    st = body[j]
    bound = assigns(st)
    if not bound:
        return False
    if isinstance(st, cst.If):
        pass
    elif isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and \
            isinstance(st.body[0], (cst.Assign, cst.AugAssign)):
        if not (isinstance(st.body[0], cst.AugAssign) or bound & set(reads(st.body[0].value))):
            return False
    else:
        return False
    if any(root not in _LIBRARY_ROOTS and root not in host for root in call_roots(st)):
        return False
    read = set(reads(st))
    return not any(assigns(body[k]) & read and not is_source(body[k], host) for k in range(j))


def _updates_computed(body: Sequence[cst.CSTNode], j: int, host: Set[str], skip: Set[int]) -> bool:
    """`loss /= accumulation_steps`, `style_loss *= args.style_weight` (fast_neural_style), `xbhat /= nsamples`
    (pytorch-made): an augmented assignment to a name a computing statement bound before it. It calls nothing, so
    by its form it is data; left out of the step, the loss the forward function returned was the value before the
    update (the gradients off by the factor, silently). Part of the step."""
    st = body[j]
    if not (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.AugAssign)
            and isinstance(st.body[0].target, cst.Name)):
        return False
    name = st.body[0].target.value
    return any(name in assigns(body[k]) and not is_source(body[k], host) for k in range(j) if k not in skip)


def _renames_computed(body: Sequence[cst.CSTNode], j: int, host: Set[str], skip: Set[int]) -> bool:
    """`d_loss = d_loss_real`, mixup's `y_a, y_b = y, y[perm]` (no call, no operator: a source by its form, like
    `x, y = batch`) reading a value that a computing statement before it bound (`x, y = X[i:i + n], ...`): part
    of the step, so the slice follows the names back (left out, the loss would be an input and its gradient
    through the renamed value lost, or the step refused). Names bound only by data (`batch` from the loader,
    `next(it)`) keep it data."""
    st = body[j]
    rhs = _rhs(st)
    if rhs is None or not isinstance(st.body[0], cst.Assign):
        return False
    form = _CallsAndOps()
    walk(rhs, form)
    if form.calls or form.ops:   # a draw or a host read reading a computed value stays data
        return False
    names = set(reads(rhs))
    for k in range(j - 1, -1, -1):
        bound = assigns(body[k]) & names
        if not bound:
            continue
        if k not in skip and not is_source(body[k], host):
            return True
        names -= bound
    return False


def _helper_of_network_value(body: Sequence[cst.CSTNode], j: int, host: Set[str],
                             drawing: Set[str] = frozenset()) -> bool:
    """`loss = mse(out, x) + helper(emb)` after `out, emb = D(x)`: a statement that is data only because it
    calls a program function (host/data functions: `helper` never calls its parameter) but reads a value a
    network call before it computed belongs to the step (a loss helper), not to the data. A helper that
    draws with NumPy (`drawing`) is not: the step holds it only as a host helper, run op by op."""
    st = body[j]
    if is_source(st) or set(call_roots(st)) & drawing:
        return False
    r = set(reads(st))
    for k in range(j):
        prev = body[k]
        if assigns(prev) & r and not is_source(prev, host) and \
                any(root not in _LIBRARY_ROOTS for root in call_roots(prev)):
            return True
    return False


def _loop_through_network(stmt: cst.CSTNode, host: Set[str]) -> bool:
    """`for k in range(n): loss = loss + crit(model(xs[k]), ys[k])`: a loop that sums the loss over
    network calls belongs to the step (no random draw or host value inside it)."""
    if not isinstance(stmt, (cst.For, cst.While)) or stmt.orelse is not None:
        return False
    v = _CallsAndOps()
    walk(stmt, v)
    if any(_is_data_call(c, host) for c in v.calls):
        return False
    inner = assigns(stmt)
    return any(r not in inner and r not in _LIBRARY_ROOTS for r in call_roots(stmt))


def _loop_over_computed(body: Sequence[cst.CSTNode], j: int, host: Set[str], skip: Set[int]) -> bool:
    """`out = model(x); loss = 0; for i in range(T): loss += F.cross_entropy(out[:, i], y[:, i])`: a loop
    that computes from what an earlier statement of the body computed (the network's output) belongs to
    the step too (no random draw or host value inside it); left out, the loss would be a constant."""
    stmt = body[j]
    if not isinstance(stmt, (cst.For, cst.While)) or stmt.orelse is not None:
        return False
    v = _CallsAndOps()
    walk(stmt, v)
    if not (v.calls or v.ops) or any(_is_data_call(c, host) for c in v.calls):
        return False
    read = set(reads(stmt))
    for k in range(j):
        if k not in skip and assigns(body[k]) & read and not is_source(body[k], host):
            return True
    return False


def _free_reads(st: cst.CSTNode, bound: Set[str], inputs: List[str]) -> None:
    """Add to `inputs` the names `st` reads before binding them, statement by statement inside
    compound statements too (`if c: aux = f(out); loss = loss + aux` reads out and loss, not aux);
    then add what `st` binds to `bound`."""
    def read(node: cst.CSTNode, names: Set[str]) -> None:
        for n in reads(node):
            if n not in names and n not in inputs:
                inputs.append(n)

    def block(b, names: Set[str]) -> None:
        for inner in (b.body if isinstance(b, cst.IndentedBlock) else [b]):
            _free_reads(inner, names, inputs)

    if isinstance(st, cst.SimpleStatementLine):
        for small in st.body:
            read(small, bound)
            bound |= assigns(small)
        return
    if isinstance(st, cst.If):
        read(st.test, bound)
        block(st.body, set(bound))
        if isinstance(st.orelse, cst.If):
            _free_reads(st.orelse, set(bound), inputs)
        elif st.orelse is not None:
            block(st.orelse.body, set(bound))
    elif isinstance(st, cst.For):
        read(st.iter, bound)
        inner = set(bound) | assigns(cst.For(target=st.target, iter=cst.Name("_"), body=cst.IndentedBlock([])))
        block(st.body, inner)
        if st.orelse is not None:
            block(st.orelse.body, inner)
    elif isinstance(st, cst.While):
        read(st.test, bound)
        block(st.body, set(bound))
    elif isinstance(st, cst.With):
        inner = set(bound)
        for item in st.items:
            read(item.item, inner)
            if item.asname is not None:
                inner |= assigns(item.asname)
        block(st.body, inner)
    else:
        read(st, bound)
    bound |= assigns(st)


def _inputs(stmts: Sequence[cst.CSTNode], tail: Sequence[cst.BaseExpression]) -> Tuple[List[str], Set[str]]:
    """Names read before the statements bind them (in first-read order), and all names bound."""
    bound: Set[str] = set()
    inputs: List[str] = []
    for st in stmts:
        _free_reads(st, bound, inputs)
    for e in tail:
        for n in reads(e):
            if n not in bound and n not in inputs:
                inputs.append(n)
    return inputs, bound


def _unique(base: str, taken: Set[str]) -> str:
    name, n = base, 2
    while name in taken:
        name = f"{base}_{n}"
        n += 1
    taken.add(name)
    return name


def _suffix(optimizer: str, many: bool) -> str:
    if not many:
        return ""
    last = optimizer.rsplit(".", 1)[-1]
    s = re.sub(r"^(optimizer|optimiser|optim|opt)_?", "", last, flags=re.I) or last
    return "_" + re.sub(r"\W", "_", s)


def _line(code: str) -> cst.BaseStatement:
    return cst.parse_statement(code)


class _Rename(cst.CSTTransformer):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return True

    def leave_Attribute(self, original, updated):
        return updated.with_changes(attr=original.attr)

    def leave_Name(self, original, updated):
        return updated.with_changes(value=self.new) if original.value == self.old else updated


def _comment(text: str) -> List[cst.EmptyLine]:
    return [cst.EmptyLine(comment=cst.Comment("# msmigrate: " + text))]


class _Called(cst.CSTVisitor):
    """Names that are called (`model(x)`)."""

    def __init__(self) -> None:
        self.names: Set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self.names.add(node.func.value)


class _UsedAsObject(_Called):
    """Names that are called (`model(x)`) or whose attributes are used (`opt.param_groups`)."""

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.attr.value not in ("shape", "dtype", "ndim", "T"):
            self.names.add(node.value.value)


# ------------------------------------------------------------------ soundness
# The rewrite must carry the whole computation from the parameters to the loss into forward_fn:
# a model call left outside it is a constant for value_and_grad, and every gradient is zero.
# Where the slice does not show that, the backward() becomes a TODO that raises.
_LIBRARY_ROOTS = {"ms", "mindspore", "ops", "nn", "mint", "np", "numpy", "math", "random", "_ms_compat",
                  "F", "Tensor", "Parameter", "functools", "itertools", "operator"} | set(dir(builtins))


def _root(expr: cst.BaseExpression) -> Optional[str]:
    """The base name of `a.b[c](d).e`."""
    while True:
        if isinstance(expr, cst.Attribute):
            expr = expr.value
        elif isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call):
            expr = expr.func
        else:
            return expr.value if isinstance(expr, cst.Name) else None


class _CallRoots(cst.CSTVisitor):
    def __init__(self) -> None:
        self.roots: List[str] = []
        self.calls: List[cst.Call] = []

    @classmethod
    def of(cls, node: cst.CSTNode) -> List[cst.Call]:
        """The calls with a named root in node."""
        v = cls()
        walk(node, v)
        return v.calls

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if (isinstance(f, cst.Call) and code_of(f.func).strip() == "_ms_compat.forward_of" and len(f.args) == 1
                and f.args[0].keyword is None):
            f = f.args[0].value     # `model.forward(x)` converted: `_ms_compat.forward_of(model)(x)` calls model
        r = _root(f)
        if r is not None:
            self.roots.append(r)
            self.calls.append(node)


def call_roots(node: cst.CSTNode) -> List[str]:
    v = _CallRoots()
    walk(node, v)
    return v.roots


def reaches_network(stmts: Sequence[cst.CSTNode], losses: Sequence[cst.BaseExpression],
                    params: Sequence[str], info: "LoopInfo") -> bool:
    """Whether the forward function calls something that can hold the trained parameters: a
    network, a method of the trainer (`self.model(x)`, `self.compute_loss(batch)`) or a helper of
    the program (`criterion_fn(model, batch)`), reached from outside (a closure), not a value the
    function computed or received, not a library function (ops.*, _ms_compat.*, builtins)."""
    inside: Set[str] = set(params)
    for st in stmts:
        inside |= assigns(st)
    library = _LIBRARY_ROOTS | {info.ms} | set(info.host_functions)
    for node in list(stmts) + list(losses):
        for r in call_roots(node):
            if r not in inside and r not in library:
                return True
        # a parameter made by hand read from outside (`loss = ((x @ w - y) ** 2).mean()`, w = nn.Parameter(...))
        if any(n in info.parameter_names and n not in inside for n in reads(node)):
            return True
        # `self.log_alpha` (a class's parameter made by hand: info.parameter_names' `self.` entries)
        text = code_of(node)
        if any(n.startswith("self.") and re.search(re.escape(n) + r"\b", text) for n in info.parameter_names):
            return True
    return False


class _AttrToName(cst.CSTTransformer):
    """`self.loss` -> a local name (reads and writes)."""

    def __init__(self, code: str, name: str) -> None:
        self.code, self.name = code, name

    def leave_Attribute(self, original, updated):
        return cst.Name(self.name) if code_of(original).strip() == self.code else updated


def _attribute_targets(stmt: cst.CSTNode) -> Set[str]:
    """Attribute chains a simple statement assigns (`logits, self.loss = ...` -> {"self.loss"})."""
    out: Set[str] = set()

    def target(t) -> None:
        if isinstance(t, (cst.Tuple, cst.List)):
            for e in t.elements:
                target(e.value)
        elif isinstance(t, cst.StarredElement):
            target(t.value)
        elif isinstance(t, cst.Attribute):
            out.add(code_of(t).strip())

    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                for t in small.targets:
                    target(t.target)
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                target(small.target)
    return out


def localize_attribute_losses(body: List[cst.CSTNode], g: StepGroup, start: int, used: Set[str]) -> List[str]:
    """`logits, self.loss = model(x, y); self.loss.backward()` (GPT trainers): the attribute the loss
    is kept in becomes a local name from its assignment on (so the slice follows it into the model
    call), and is assigned back after the step. Returns those assignments (`self.loss = loss`)."""
    after: List[str] = []
    for k, x in enumerate(g.losses):
        code = code_of(x).strip()
        if not isinstance(x, cst.Attribute) or not re.fullmatch(r"\w+(\.\w+)+", code):
            continue
        first = next((j for j in range(start, g.backwards[k])
                      if j not in g.backwards and code in _attribute_targets(body[j])), None)
        if first is None:
            continue        # assigned elsewhere: the slice cannot follow it (reaches_network decides)
        local = _unique(code.rsplit(".", 1)[-1], used)
        for j in range(first, g.backwards[-1]):
            if j not in g.backwards:
                body[j] = body[j].visit(_AttrToName(code, local))
        g.losses = [cst.Name(local) if code_of(y).strip() == code else y for y in g.losses]
        after.append(f"{code} = {local}")
    return after


def broken_chain(body: Sequence[cst.CSTNode], chosen: Sequence[int], outside: Sequence[int]) -> Optional[int]:
    """A statement left out of the step (a host value, a loop) through which the loss passes: it
    reads what a statement of the step computed before it (`if loss.item() > 9: loss = loss / 10`).
    The gradient would not flow through it."""
    for j in outside:
        computed: Set[str] = set()
        for c in chosen:
            if c < j:
                computed |= assigns(body[c])
        if set(reads(body[j])) & computed:
            return j
    return None


_MUTATORS = {"append", "extend", "insert", "appendleft", "extendleft", "add", "update", "reverse", "sort", "pop",
             "popleft", "remove", "clear", "setdefault", "discard"}


class _Mutated(cst.CSTVisitor):
    """Names a statement changes without binding them: `xs.append(v)`, `d[k] = v`, `xs[i] += v`."""

    def __init__(self) -> None:
        self.names: Set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.attr.value in _MUTATORS:
            self.names.add(f.value.value)

    def _subscript(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            self.names.add(target.value.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._subscript(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._subscript(node.target)


def fed_back(body: Sequence[cst.CSTNode], chosen: Sequence[int]) -> Optional[int]:
    """PPO's advantages: `delta = (td_target - v(s)).detach().numpy()`, then a loop outside the step that
    fills `advantage_lst` from delta, then `advantage = torch.tensor(advantage_lst)` inside it. A statement
    left out of the step that reads what the step computes before it and fills (without binding) a name the
    step reads after it: no order of the step and that statement computes the loss (the index; None: none)."""
    picked = set(chosen)
    tainted: Set[str] = set()       # what the step computes, and what statements left out derive from it
    for j in range(min(chosen, default=0), max(chosen, default=0)):
        if j in picked:
            tainted |= assigns(body[j])
            continue
        if not set(reads(body[j])) & tainted:
            continue
        found = _Mutated()
        walk(body[j], found)
        tainted |= assigns(body[j]) | found.names
        after: Set[str] = set()
        for c in chosen:
            if c > j:
                after |= set(reads(body[c]))
        if found.names & after:
            return j
    return None


def _host_helper(body: Sequence[cst.CSTNode], g: StepGroup, chosen: Sequence[int], outside: Sequence[int],
                 info: "LoopInfo") -> Optional[str]:
    """WGAN-GP's `gp = compute_gradient_penalty(D, real, fake)`: a helper of the program that draws on the
    host (NumPy noise inside it, so host_functions counts it as data) and that the loss passes through (it
    reads what the step computes). The step holds it (its name, returned here), and is then run op by op in
    either mode (compile_step(..., host_calls=True)): compiled, the helper's draw would be made once."""
    j = broken_chain(body, chosen, outside)
    if j is None:
        return None
    _, call = _assigned_call(body[j])
    if call is None or not isinstance(call.func, cst.Name):
        return None
    name = call.func.value
    return name if name in info.host_functions and name not in g.host_helpers else None


def _host_condition(body: Sequence[cst.CSTNode], g: StepGroup, outside: Sequence[int]) -> Optional[int]:
    """EBGAN's `if (margin - d_loss_fake).item() > 0: d_loss += margin - d_loss_fake`: an `if` on a host
    value (.item(), float()) that the loss passes through, its branches plain statements that draw nothing.
    The step holds it (its index, returned here) and runs op by op in either mode (compile_step(...,
    host_calls=True)): each step takes the branch its own values choose, and the gradient flows through it,
    as in torch. Compiled, the host value would be read once, at compile time."""
    for j in sorted(outside, reverse=True):
        st = body[j]
        if not isinstance(st, cst.If) or j in g.host_ifs:
            continue
        test = _CallsAndOps()
        walk(st.test, test)
        if not any(HOST_CALL.search(c) or c in ("float", "int", "bool") for c in test.calls):
            continue
        branches: List[cst.CSTNode] = []
        node: Optional[cst.CSTNode] = st
        while isinstance(node, cst.If):
            branches.append(node.body)
            node = node.orelse
        if isinstance(node, cst.Else):
            branches.append(node.body)
        plain = all(isinstance(b, cst.IndentedBlock) and all(isinstance(x, cst.SimpleStatementLine) for x in b.body)
                    for b in branches)
        calls = _CallsAndOps()
        for b in branches:
            walk(b, calls)
        if plain and not any(_is_data_call(c, set()) for c in calls.calls):
            return j
    return None


class _Exits(ScopeLocalVisitor):
    """A `continue`, `break` or `return` that leaves the iteration of the loop whose body holds the statement (not
    one of a loop, function or class inside it)."""

    def __init__(self) -> None:
        self.found = False

    def visit_Continue(self, node) -> None:
        self.found = True

    def visit_Break(self, node) -> None:
        self.found = True

    def visit_Return(self, node) -> None:
        self.found = True

    def visit_For(self, node) -> bool:
        return False

    def visit_While(self, node) -> bool:
        return False


def _before_exits(body: Sequence[cst.CSTNode], start: int, first_backward: int, special: Set[int]) -> Set[int]:
    """The statements of a step's stretch of the loop body (from `start`) before the last one, ahead of its first
    backward(), that may leave the iteration (glow-pytorch's `if i == 0: with torch.no_grad(): model.module(x);
    continue`, its ActNorm initialization): they run before it, as written, and the step after it. Gathered into
    the step, the step would run ahead of that statement: also in the iterations it leaves, and before what it
    does (the initialization)."""
    last = None
    for j in range(start, first_backward):
        if j in special:
            continue
        v = _Exits()
        walk(body[j], v)
        if v.found:
            last = j
    return set() if last is None else {j for j in range(start, last) if j not in special}


def _network_before_exit(body: Sequence[cst.CSTNode], g: StepGroup, chosen: Sequence[int], before: Set[int],
                         info: "LoopInfo") -> Optional[str]:
    """Why the step cannot run after such a statement (_before_exits): the loss is computed from a statement
    before it that calls the network, whose output the step would take as a constant (no gradient)."""
    if not before:
        return None
    inputs, _ = _inputs([body[k] for k in chosen], g.losses)
    library = _LIBRARY_ROOTS | {info.ms} | set(info.host_functions)
    for k in sorted(before):
        st = body[k]
        if assigns(st) & set(inputs) and any(
                c.split(".", 1)[0] not in library and not _is_data_call(c, info.host_functions)
                for c in _named_calls(st)):
            return (f"the loss is computed from `{_short(st)}`, which calls the network before a statement that may "
                    "leave the iteration (continue, break, return): a train step cannot run both before and after "
                    "it; write this train step with mindspore.value_and_grad by hand")
    return None


def _unsound(body: Sequence[cst.CSTNode], g: StepGroup, chosen: Sequence[int], outside: Sequence[int],
             per_iteration: Set[str], info: "LoopInfo") -> Optional[str]:
    """Why the forward function of a group would not carry the computation from the parameters to
    the loss (None: it does)."""
    j = _changed_outside(body, g, chosen)
    if j is not None:
        return (f"`{_short(body[j])}` changes a value the loss is computed from (in place, or by binding it again), "
                "and stays out of the train step: its forward function would compute the loss from the value "
                "before the change; write this train step with mindspore.value_and_grad by hand")
    if g.leaves:
        inputs, _ = _inputs([body[k] for k in chosen], g.losses)
        missing = [n for n in g.leaves if n not in inputs]
        return None if not missing else (
            f"{', '.join(missing)} does not reach the loss through this block: write the gradient with "
            "mindspore.grad by hand")
    j = broken_chain(body, chosen, outside)
    if j is not None:
        return (f"the loss passes through `{_short(body[j])}`, which the train step cannot hold (a loop, or a "
                "host value such as .item() or NumPy): value_and_grad would not differentiate through it; "
                "write this train step with mindspore.value_and_grad by hand")
    j = fed_back(body, chosen)
    if j is not None:
        return (f"the loss reads what `{_short(body[j])}` fills from values the step computes (a host loop, "
                "NumPy): a train step cannot run it in between; write this train step with "
                "mindspore.value_and_grad by hand")
    fwd_stmts = [body[k] for k in chosen]
    inputs, _ = _inputs(fwd_stmts, g.losses)
    library = _LIBRARY_ROOTS | {info.ms} | set(info.host_functions)
    for k in outside:
        # word_language_model's `if args.model == 'Transformer': output = model(data) else: hidden =
        # repackage_hidden(hidden); output, hidden = model(data, hidden)`: kept out of the step for its data
        # call, it still calls the network, and the step would take the network's output as a constant
        st = body[k]
        if not isinstance(st, cst.SimpleStatementLine) and assigns(st) & set(inputs) and any(
                c.split(".", 1)[0] not in library and c.split(".", 1)[0] not in assigns(st)
                and not _is_data_call(c, info.host_functions) for c in _named_calls(st)):
            return (f"the loss is computed from `{_short(st)}`, which calls the network but holds a data call "
                    "(.item(), NumPy, a batch helper) the train step cannot hold: value_and_grad would take the "
                    "network's output as a constant and lose its gradients; write this train step with "
                    "mindspore.value_and_grad by hand")
    # `batch.out = model(batch.src)` left out of the step, then `loss = ((batch.out - y) ** 2).mean()` in it: the
    # forward function would read the attribute as a value computed outside value_and_grad (no gradient)
    texts = [code_of(st) for st in fwd_stmts] + [code_of(x) for x in g.losses]
    for k in (k for k in range(max(chosen, default=0)) if k not in chosen):
        for attr in sorted(_attribute_targets(body[k])):
            if any(re.search(r"(?<![\w.])" + re.escape(attr) + r"\b", t) for t in texts) and any(
                    c.split(".", 1)[0] not in library and not _is_data_call(c, info.host_functions)
                    for c in _named_calls(body[k])):
                return (f"the loss reads {attr}, which `{_short(body[k])}` assigns from a call outside the train "
                        "step: value_and_grad would take it as a constant and lose its gradients; keep the value "
                        "in a local name, or write this train step with mindspore.value_and_grad by hand")
    params = [n for n in inputs if n in per_iteration]
    if not reaches_network(fwd_stmts, g.losses, params, info):
        compound = [k for k in outside if not isinstance(body[k], cst.SimpleStatementLine)]
        if compound:
            return (f"the loss comes from `{_short(body[compound[-1]])}`, which the train step cannot hold (it "
                    "draws random numbers or reads host values such as .item()): value_and_grad would see a "
                    "constant and every gradient would be zero; write this train step with "
                    "mindspore.value_and_grad by hand")
        losses = ", ".join(code_of(x).strip() for x in g.losses)
        return (f"the loss ({losses}) is not computed from a call of the network in this loop body (it is "
                "computed in another function, kept in an attribute set elsewhere, or the network is a loop "
                "variable), so value_and_grad would "
                "see a constant and every gradient would be zero: write this train step with "
                "mindspore.value_and_grad by hand")
    return None


def _join_element_writes(body: Sequence[cst.CSTNode], g: StepGroup, chosen: List[int], skip: Set[int]) -> None:
    """`y = torch.stack(rows)` computed in the step, then `y[0, -1] = -1` or `y[y > 3] += 1` before the loss reads y
    (nanoGPT-style targets masked by hand): the element write calls nothing, so by its form it is data and stayed out
    of the step, and the step was refused (_changed_outside). It joins the step in its place: the forward function
    computes the loss from the changed value, as torch does. Only a write into elements (a subscript target) that
    reads no host value; the value it writes into was bound by a statement of the step, so the change stays inside
    the forward function and the caller's tensors are not written."""
    while True:
        j = _changed_outside(body, g, chosen)
        if j is None or j in skip or not _element_write(body[j]):
            return
        chosen.append(j)
        chosen.sort()


def _element_write(st: cst.CSTNode) -> bool:
    if not (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1):
        return False
    small = st.body[0]
    if isinstance(small, cst.Assign):
        targets = [t.target for t in small.targets]
    elif isinstance(small, cst.AugAssign):
        targets = [small.target]
    else:
        return False
    if not all(isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name) for t in targets):
        return False
    calls = _CallsAndOps()
    walk(st, calls)
    return not any(HOST_CALL.search(c) for c in calls.calls)


_NOT_NETWORKS = frozenset(dir(builtins)) | {"ms", "mindspore", "ops", "nn", "np", "numpy", "math", "_ms_compat"}


def _called_roots(node: cst.CSTNode) -> Set[str]:
    """`model` of `model(x)`, `self` of `self.net.forward(x)`: the names at the root of the called expressions."""
    return {c.split(".")[0] for c in _named_calls(node)} - _NOT_NETWORKS


def _reads_before_step(body: Sequence[cst.CSTNode], g: StepGroup, chosen: Sequence[int], skip: Set[int],
                       computed: Set[str], info: "LoopInfo") -> Tuple[List[cst.BaseStatement], Set[int]]:
    """Statements between the last backward() and the step that call an object the loss's statements call
    (`D_x = D(real).mean().item()` between the critic's backward() and its step, as DCGAN logs): torch runs them on
    the weights before the update, but left where they stand they run after the train step's call, on the updated
    weights (silently other values). Each one that reads nothing the step computes, binds nothing the step reads and
    reads nothing a statement before it binds since the backward() runs instead just before the step's call (the same
    weights), after `_ms_compat.network_read_before_step('module:line', <the objects>)`, which refuses a network
    with a BatchNorm or Dropout in training mode (their statistics or masks would come in another order). Returns
    those lines and the indices they leave."""
    if not isinstance(g.step, int) or not chosen:
        return [], set()
    last = g.backwards[-1]
    step_roots = set().union(*(_called_roots(body[k]) for k in chosen))
    step_roots -= set().union(*(assigns(body[k]) for k in chosen))
    step_reads = set().union(*(set(reads(body[k])) for k in chosen)) | set(computed)
    lines: List[cst.BaseStatement] = []
    hoisted: Set[int] = set()
    bound_since: Set[str] = set()
    for j in range(last + 1, g.step):
        st = body[j]
        if j in skip or not isinstance(st, cst.SimpleStatementLine):
            bound_since |= assigns(st) | mutated(st)
            continue
        objects = sorted(_called_roots(st) & step_roots)
        read = set(reads(st))
        small = st.body[0] if len(st.body) == 1 else None
        # a call statement of an object of the step (`self.clip(self.model)`: a trainer's method changing the
        # gradients) and any .grad read work on the step's gradients: they stay
        own_call = isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and \
            code_of(small.value.func).strip().split(".")[0] in step_roots
        if objects and small is not None and not own_call and not re.search(r"\.grad\b", code_of(st)) and \
                not (read & (set(computed) | bound_since)) and not (assigns(st) & step_reads):
            line = re.findall(r"#@msmigrate-line:(\d+)@", mark_of(st))
            where = f"{info.module}:{line[-1]}" if line else info.module
            lines.append(_line(f"_ms_compat.network_read_before_step({where!r}, {', '.join(objects)})"))
            lines.append(st.with_changes(leading_lines=[]))
            hoisted.add(j)
            continue
        bound_since |= assigns(st) | mutated(st)
    return lines, hoisted


def _changed_outside(body: Sequence[cst.CSTNode], g: StepGroup, chosen: Sequence[int]) -> Optional[int]:
    """A statement the step leaves out that changes, between the step's statements, a value one of them computed
    and a later one (or the loss) reads: `y[:, 0] = 0`, `y[y > 1] *= 3`, `z /= 2` (kept out as a data statement:
    no call). The forward function would compute the loss from the value before the change (silently, the
    gradients of another loss): the index of the first such statement, or None."""
    if not chosen:
        return None
    skip = {*g.backwards, g.step, *g.extras}
    last = g.backwards[-1]
    loss_reads = set().union(*(set(reads(x)) for x in g.losses))
    for j in range(chosen[0] + 1, last):
        if j in chosen or j in skip:
            continue
        changed = mutated(body[j]) | assigns(body[j])
        before = set().union(*(assigns(body[k]) for k in chosen if k < j))
        after = set().union(*(set(reads(body[k])) for k in chosen if k > j)) | loss_reads
        if changed & before & after:
            return j
    return None


def _named_calls(node: cst.CSTNode) -> List[str]:
    """The called names of a piece of code that are plain dotted names (`model`, `self.net.forward`), not
    methods of a computed value (`rng.standard_normal(s).astype`)."""
    found: List[str] = []

    class _V(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            code = code_of(call.func).strip()
            if re.fullmatch(r"\w+(\.\w+)*", code):
                found.append(code)

    walk(node, _V())
    return found


def _short(stmt: cst.CSTNode, limit: int = 80) -> str:
    flat = " ".join(code_of(stmt).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _zeroed_leaves(original: Optional[cst.CSTNode]) -> Set[str]:
    """TRADES' PGD attack: `opt = optim.SGD([x], lr=1e-3); opt.zero_grad(); ...; loss.backward(); x.grad`: an
    optimizer the loop body builds over the one tensor x, cleared before the body's first backward(), clears
    x.grad in every turn (the first one too). The names so cleared, from the loop as written (the converted body
    has lost its zero_grad() calls)."""
    if original is None or not isinstance(getattr(original, "body", None), cst.IndentedBlock):
        return set()
    over: Dict[str, str] = {}
    out: Set[str] = set()
    for st in original.body.body:
        if _method(_stmt_call(st), "backward") is not None or _GRAD_READ.search(code_of(st)):
            break
        target, call = _assigned_call(st)
        if target is not None and call is not None and call.args and isinstance(call.args[0].value, cst.List) \
                and len(call.args[0].value.elements) == 1 and call.args[0].keyword is None \
                and isinstance(call.args[0].value.elements[0].value, cst.Name) \
                and (OPTIMIZER_NAME.search(_call_name(call)) or OPTIMIZER_NAME.search(target)):
            over[target] = call.args[0].value.elements[0].value.value
            continue
        cleared = _method(_stmt_call(st), "zero_grad")
        if cleared is not None and code_of(cleared).strip() in over:
            out.add(over[code_of(cleared).strip()])
    return out


def _grad_leaves(body: Sequence[cst.CSTNode], g: StepGroup, zeroed: Set[str] = frozenset()) -> List[str]:
    """`y.backward(); print(x.grad)` with no optimizer step: the names whose .grad the rest of the
    block reads, when only one backward() ran and each one's .grad holds exactly that backward's gradient:
    - it is made in the block before the backward() (a fresh tensor: its .grad held nothing before);
    - or the block clears its .grad before the backward() (PIFGSM's `if images.grad is not None:
      images.grad.detach_(); images.grad.zero_()`): those statements go (g.leaf_clears);
    - or the block marks it `x.requires_grad = True` before the backward() and binds it again after it
      (the iterative attacks' `images.requires_grad = True; ...; cost.backward(); ...; images = (...).detach()`):
      each turn differentiates a new tensor, and the first turn's had required no gradient before the mark.
    A .grad read before the backward() reads the last turn's gradient: none of these."""
    if len(g.backwards) != 1:
        return []
    last = g.backwards[0]
    found: List[str] = []
    for st in body[last + 1:]:
        for m in re.finditer(r"(?<![\w.])(\w+)\.grad\b", code_of(st)):
            if m.group(1) not in found:
                found.append(m.group(1))
        if _method(_stmt_call(st), "backward") is not None:
            return []
    clears: List[int] = []
    for n in found:
        made = [j for j in range(last) if n in assigns(body[j])]
        if len(made) == 1:
            continue
        cleared = [j for j in range(last) if _clears_grad(body[j], n)]
        if any(re.search(rf"(?<![\w.]){n}\.grad\b", code_of(body[j])) for j in range(last) if j not in cleared):
            return []
        if n in zeroed:
            continue        # cleared by the zero_grad() of an optimizer over it alone (_zeroed_leaves)
        if cleared:
            clears.extend(cleared)
            continue
        marked = any(_marks_leaf(body[j], n) for j in range(last))
        rebound = any(_fresh_binding(body[j], n) for j in range(last + 1, len(body)))
        if not (marked and rebound and not made):
            return []
    g.leaf_clears = sorted(set(clears))
    return found


def attack_enclosure(outer: cst.CSTNode, inner: cst.CSTNode, info: LoopInfo) -> Optional[FrozenSet[str]]:
    """PGD adversarial training (fast_adversarial's train_mnist.py), judged on the original torch code:

        for X, y in loader:
            delta = torch.zeros_like(X).uniform_(-eps, eps)
            for _ in range(iters):                     # the inner loop: backward(), no step
                delta.requires_grad = True
                loss = criterion(model(X + delta), y)
                loss.backward()
                delta.data = delta + alpha * torch.sign(delta.grad.detach())
            delta = delta.detach()
            loss = criterion(model(X + delta), y)
            opt.zero_grad()
            loss.backward()
            opt.step()

    The inner loop's backward()s also add to the parameters' .grad, which the enclosing body's zero_grad() empties
    before anything reads or steps them: only the perturbation's gradient is used. Accepted when the inner loop
    steps nothing, and after it the enclosing body clears an optimizer's gradients at its top level before any
    backward(), step() or .grad read, and steps no other optimizer. Returns the names the enclosing body marks
    requires_grad (at its top level) before the inner loop; None where it is no such loop."""
    if not (isinstance(outer, (cst.For, cst.While)) and isinstance(outer.body, cst.IndentedBlock)
            and isinstance(inner, (cst.For, cst.While))):
        return None
    body = list(outer.body.body)
    pos = next((k for k, st in enumerate(body) if st is inner), None)
    if pos is None or not _calls_method(inner, "backward") \
            or any(_is_optimizer(r, info) for r in _calls_method(inner, "step")):
        return None
    cleared = None
    for k in range(pos + 1, len(body)):
        st = body[k]
        r = _method(_stmt_call(st), "zero_grad")
        if r is not None and _is_optimizer(code_of(r).strip(), info):
            cleared = code_of(r).strip()
            break
        if _calls_method(st, "backward") or _calls_method(st, "step") or _GRAD_READ.search(code_of(st)):
            return None
    if cleared is None or any(r != cleared for st in body[pos + 1:] for r in _calls_method(st, "step")
                              if _is_optimizer(r, info)):
        return None
    return frozenset(n for st in body[:pos] for n in assigns(st) | _marked_names(st) if _marks_leaf(st, n))


def _marked_names(stmt: cst.CSTNode) -> Set[str]:
    """The names `x.requires_grad = True` / `x.requires_grad_()` (or their conversions) may mark."""
    return {a or b for a, b in re.findall(r"(\w+)\.requires_grad|set_requires_grad\((\w+)", code_of(stmt))}


def _summed_leaves(body: Sequence[cst.CSTNode], g: StepGroup, marked_before: FrozenSet[str]) -> List[str]:
    """The inner loop of attack_enclosure: the names whose .grad the body reads after its one backward(), where
    each is marked requires_grad in the body before the backward() (or by the enclosing body before the loop) and
    bound nowhere in the body (`.data` writes keep the tensor): torch adds each turn's gradient to the one its .grad
    holds, the sum over the turns since the tensor was made or the program cleared it. Nothing else's .grad is read
    in the body, and nothing's before the backward()."""
    if len(g.backwards) != 1:
        return []
    last = g.backwards[0]
    found = _grads_read_after(body, last)
    later = [code_of(st) for st in body[last + 1:]]
    if found is None or any(_method(_stmt_call(st), "backward") is not None for st in body[last + 1:]) \
            or any(len(re.findall(r"(?<![\w.])\w+\.grad\b", c)) != len(re.findall(r"\.grad\b", c)) for c in later):
        return []       # (`self.x.grad`, `f(x).grad`: no name of this body)
    for n in found:
        if any(n in assigns(st) for st in body):
            return []
        if n not in marked_before and not any(_marks_leaf(body[j], n) for j in range(last)):
            return []
    return found


def _stepped_input_leaves(body: Sequence[cst.CSTNode], g: StepGroup, info: "LoopInfo") -> List[str]:
    """Free adversarial training (fast_adversarial's train_free.py, Shafahi et al.): one backward() serves both the
    optimizer's step and the perturbation, whose .grad the body reads after it:

        output = model(X + delta[:X.size(0)])
        loss = criterion(output, y)
        opt.zero_grad()
        loss.backward()
        grad = delta.grad.detach()
        delta.data = clamp(delta + epsilon * torch.sign(grad), -epsilon, epsilon)
        opt.step()
        delta.grad.zero_()

    The names whose .grad the body reads after the group's one backward() (none before it), each bound nowhere in
    the body (`.data` writes keep the tensor) and no parameter, and cleared after its last read (`delta.grad.zero_()`:
    every read sees this iteration's gradient alone, as the step returns it). An optimizer step of any other shape
    (accumulation, closures, wrappers, several optimizers, loss scaling) keeps none."""
    if not g.optimizer or len(g.backwards) != 1 or g.leaves or g.accumulate or g.closure or g.wrapper_call \
            or g.grad_method or g.manual is not None or g.co_steps or g.outer or g.held or g.scaler \
            or g.taped_outer or g.edited or g.clips:
        return []
    last = g.backwards[0]
    found = _grads_read_after(body, last)
    for n in found or ():
        if n in info.parameter_names or any(n in assigns(st) for st in body):
            return []
        touched = [j for j in range(last + 1, len(body)) if re.search(rf"(?<![\w.]){n}\.grad\b", code_of(body[j]))]
        clears = [j for j in touched if _clears_grad(body[j], n)]
        reads = [j for j in touched if j not in clears]
        if not clears or (reads and min(clears) < max(reads)):
            return []
    return found or []


def _grads_read_after(body: Sequence[cst.CSTNode], last: int) -> Optional[List[str]]:
    """The names whose .grad the body reads after its backward() at `last`, in order; None where some .grad is read
    before it (what it reads is an earlier turn's)."""
    if any(_GRAD_READ.search(code_of(st)) for st in body[:last]):
        return None
    found: List[str] = []
    for st in body[last + 1:]:
        found.extend(n for n in re.findall(r"(?<![\w.])(\w+)\.grad\b", code_of(st)) if n not in found)
    return found


def _clears_grad(stmt: cst.CSTNode, n: str) -> bool:
    """`x.grad.zero_()`, `x.grad = None`, `x.grad.detach_()` (MU._zeroing), or those under `if x.grad is not None:`."""
    if isinstance(stmt, cst.If) and stmt.orelse is None and isinstance(stmt.body, cst.IndentedBlock) \
            and re.fullmatch(rf"{n}\.grad is not None", code_of(stmt.test).strip()):
        return bool(stmt.body.body) and all(MU._zeroing(st, n) for st in stmt.body.body)
    return MU._zeroing(stmt, n)


def _marks_leaf(stmt: cst.CSTNode, n: str) -> bool:
    """`x.requires_grad = True` / `x.requires_grad_()` (also as converted: `_ms_compat.set_requires_grad(x, True)`,
    `x = _ms_compat.requires_grad_(..., True)`)."""
    code = " ".join(code_of(stmt).split("#")[0].split())
    return bool(re.fullmatch(rf"{n}\.requires_grad = True|{n}\.requires_grad_\((True)?\)"
                             rf"|_ms_compat\.set_requires_grad\({n}, True\)"
                             rf"|{n} = _ms_compat\.requires_grad_\(.*, True\)|{n} = .*\.requires_grad_\((True)?\)",
                             code))


def _fresh_binding(stmt: cst.CSTNode, n: str) -> bool:
    """`x = <a call or arithmetic>`: a new tensor under x (not another name's, not an attribute's)."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)
            and len(stmt.body[0].targets) == 1):
        return False
    t, v = stmt.body[0].targets[0].target, stmt.body[0].value
    return isinstance(t, cst.Name) and t.value == n and isinstance(v, (cst.Call, cst.BinaryOperation))


class _GradAttr(cst.CSTTransformer):
    def __init__(self, names: Dict[str, str]) -> None:
        self.names = names

    def leave_Attribute(self, original, updated):
        if (original.attr.value == "grad" and isinstance(original.value, cst.Name)
                and original.value.value in self.names):
            return cst.Name(self.names[original.value.value])
        return updated


def _leaf_gradients(g: StepGroup, body, params: List[str], fwd: str, fwd_body, outs: List[str], aux: List[str],
                    info: "LoopInfo", taken: Set[str], replace, sites, moved, resolved) -> None:
    """The gradient of the loss with respect to the tensors whose .grad is read, where the
    backward() was: `loss, (x_grad,) = ms.value_and_grad(forward_fn, (0,))(x, ...)`; the later reads
    of `x.grad` read `x_grad`."""
    last = g.backwards[0]
    params = list(g.leaves) + [p for p in params if p not in g.leaves]
    grads = {n: _unique(f"{n}_grad", taken) for n in g.leaves}
    fdef = cst.FunctionDef(
        name=cst.Name(fwd), params=cst.Parameters(params=[cst.Param(cst.Name(p)) for p in params]),
        body=cst.IndentedBlock(body=fwd_body), leading_lines=list(body[last].leading_lines) + _comment(
            "the computation backward() differentiated, a function of the tensors whose .grad is read"))
    values = f"({', '.join(outs)})" if aux else outs[0]
    if len(g.leaves) == 1:      # one position: MindSpore returns the gradient itself, not a 1-tuple
        positions, targets = "0", next(iter(grads.values()))
    else:
        positions = "(" + ", ".join(str(i) for i in range(len(g.leaves))) + ")"
        targets = f"({', '.join(grads.values())})"
    call = _line(f"{values}, {targets} = {info.ms}.value_and_grad({fwd}, {positions}, None"
                 f"{', has_aux=True' if aux else ''})({', '.join(params)})")
    updates = [MU.rebinding(body[j], grads) for j in g.tensor_updates]
    # torch adds the gradient to the one x.grad holds: the body's x.grad reads read that sum
    summed = [_line(f"{grads[n]} = _ms_compat.add_grad({n}, {grads[n]})") for n in g.leaves] if g.summed else []
    replace[last] = [fdef, call] + summed + updates + moved
    for j in g.leaf_clears:     # nothing accumulates: each call returns this backward's gradient alone
        replace[j] = []
        resolved.extend(MU.placeholders_in(body[j]))
    _variable_leaves(g, body, last, info, replace, sites, resolved)
    for j in range(last + 1, len(body)):
        if j in g.extras:
            continue
        new = body[j].visit(_GradAttr(grads))
        if new is not body[j] and code_of(new) != code_of(body[j]):
            replace[j] = [new]
    sites.append((last, "Tensor.backward", f"mindspore.value_and_grad over {', '.join(g.leaves)}",
                  f"the gradients of {code_of(g.losses[0]).strip()} with respect to {', '.join(g.leaves)} "
                  f"(torch's .grad), computed where backward() was"))


def _variable_leaves(g: StepGroup, body, last: int, info: "LoopInfo", replace, sites, resolved) -> None:
    """A leaf bound by `x = Variable(data, requires_grad=True)` (a placeholder: no mapping gives gradients with
    respect to data) whose gradient value_and_grad now takes (made.py's autoregressive check: `xtr =
    Variable(torch.from_numpy(x), requires_grad=True)`, `model(xtr)[0, k].backward()`, `xtr.grad` read): `x =
    data`, the gradient being that of the function of x written where backward() was; the placeholder's TODO
    resolved."""
    for n in g.leaves:
        made = [j for j in range(last) if n in assigns(body[j])]
        if len(made) != 1 or made[0] in replace:
            continue
        found = variable_data(body[made[0]], n, info.lazy_calls)
        if found is None:
            continue
        stmt, where = found
        line = where.rsplit(":", 1)[-1]
        if not line.isdigit():
            continue
        replace[made[0]] = [stmt]
        resolved.append((VARIABLE, int(line)))
        sites.append((made[0], VARIABLE, "identity",
                      f"requires_grad=True: the tensor itself; the gradient of {code_of(g.losses[0]).strip()} with "
                      f"respect to {n} (its .grad) is taken by mindspore.value_and_grad where backward() was"))


def _handed_over(body: Sequence[cst.CSTNode], chosen: Sequence[int], earlier: Set[int],
                 losses: Sequence[cst.BaseExpression]) -> Dict[int, List[str]]:
    """Statements of this step's slice that an earlier step's slice holds too (`gen = G(z)` before a
    generator step, read again by the discriminator step): {index: the names this step reads from them}.
    torch computed them once, before the earlier optimizer changed its parameters; recomputed here they
    would see the new parameters."""
    readers: Set[str] = set()
    for j in chosen:
        if j not in earlier:
            readers |= set(reads(body[j]))
    for x in losses:
        readers |= set(reads(x))
    out: Dict[int, List[str]] = {}
    for j in chosen:
        # a statement calling no network or helper (`valid = ops.ones(...)`) gives the same value again
        if j in earlier and any(r not in _LIBRARY_ROOTS for r in call_roots(body[j])):
            names = sorted(assigns(body[j]) & readers)
            if names:
                out[j] = names
    return out


_IN_PLACE_METHOD = re.compile(r"[a-z]\w*[a-z0-9]_")


def _writes_in_place_only(stmt: cst.CSTNode) -> bool:
    """`real_A = Variable(input_A.copy_(batch['A']))`: every call of the program's own objects is a tensor method
    writing in place (a trailing underscore): the statement calls no network. Held by an earlier step's slice, it
    ran there: the value it bound is handed over as it is, not run again (a second run writes again: `n.add_(1)`
    counts twice, and MindSpore refuses an in-place write into a tensor the step receives)."""
    v = _CallRoots()
    walk(stmt, v)
    own = [c for c, r in zip(v.calls, v.roots) if r not in _LIBRARY_ROOTS]
    return bool(own) and all(isinstance(c.func, cst.Attribute) and _IN_PLACE_METHOD.fullmatch(c.func.attr.value)
                             for c in own)


def _rebinds_own_input(stmt: cst.CSTNode) -> bool:
    """`y = y.unsqueeze(1)` (hifi-gan's train.py, before its discriminator and generator steps): a statement of
    library calls that rebinds the only names it reads. Held by an earlier step's slice, that step returned the
    rebound value (its input, rebound): run again by a later step it would apply twice (a 4-D waveform). Reading
    step inputs and no network, it carries no gradient: the value is handed over as it is."""
    made = assigns(stmt)
    read = set(reads(stmt))
    return bool(made & read) and read <= made | _LIBRARY_ROOTS and \
        all(r in _LIBRARY_ROOTS or r in made for r in call_roots(stmt))


def _recomputed_with_value_kept(stmt: cst.BaseStatement, names: Sequence[str], taken: Set[str],
                                ms: str) -> List[cst.BaseStatement]:
    """`gen = G(z)` handed over from an earlier step (its output `gen` is an input here): the value is
    the one the earlier step computed (torch's: before that step's update), the gradient flows through
    the recomputation (`stop_gradient(gen) + (r - stop_gradient(r))` is `gen` in value, `r` in gradient).
    `gen` itself is cut: op by op it still holds the earlier step's record of G, and the gradient went through
    both (G's gradients twice torch's in PYNATIVE). Through _ms_compat.value_kept (compat_parts/handed_over_values.py),
    which does so item by item where the value is a list or tuple of tensors (melgan's Discriminator: a list per
    scale of each layer's features)."""
    if not names:
        return [stmt]
    fresh = {n: _unique(f"{n}_recomputed", taken) for n in names}
    for n, r in fresh.items():
        stmt = stmt.visit(_Rename(n, r))
    return [stmt] + [_line(f"{n} = _ms_compat.value_kept({n}, {r})") for n, r in fresh.items()]


def _with_dependents(body: Sequence[cst.CSTNode], later: List[int], last: int, fixed: Set[int],
                     step_inputs: Sequence[str]) -> List[int]:
    """The statements that run after the step (`later`), with those between them and the step that depend
    on them: a statement reading what a moved one binds (`acc = f(pred)` after `pred = g(out)`), or
    rebinding what a moved one reads, moves with them, in the original order. Left in place it would
    run before the value it reads exists (a NameError) or change what the moved statement sees. A
    statement binding a name the step itself reads stays (the step needs it first)."""
    if not later:
        return later
    moved = set(later)
    bound: Set[str] = set()
    read: Set[str] = set()
    for j in range(later[0], last):
        if j in fixed:
            continue
        st = body[j]
        if j not in moved:
            made = assigns(st)
            if not (set(reads(st)) & bound or made & read) or made & set(step_inputs):
                continue
            moved.add(j)
        bound |= assigns(st)
        read |= set(reads(st))
    return sorted(moved)


def _read_before_step(body: Sequence[cst.CSTNode], chosen: Sequence[int], region_start: int,
                      in_steps: Set[int]) -> Set[int]:
    """Statements of the slice that the loop body still reads before the step call, outside any step
    (`probe = D(real).detach()` before an earlier step, with `real = x * 1.0` in this slice): they stay
    in the loop too (also computed in the step)."""
    keep: Set[int] = set()
    readers = [k for k in range(region_start) if k not in in_steps]
    changed = True
    while changed:
        changed = False
        for j in chosen:
            if j in keep:
                continue
            bound = assigns(body[j])
            if any(k > j and set(reads(body[k])) & bound for k in readers + sorted(keep)):
                keep.add(j)
                changed = True
    return keep


# calls without effects that a binding kept before the step (and computed in it again) may make
_PURE_BUILTINS = frozenset({"len", "isinstance", "int", "float", "bool", "str", "min", "max", "abs", "tuple", "list",
                            "range", "round", "getattr", "hasattr"})
_PURE_METHODS = frozenset({"endswith", "startswith", "lower", "upper", "strip", "format", "get", "keys", "values",
                           "items", "split", "join", "replace"})


class _EffectFree(cst.CSTVisitor):
    """Whether an expression has no effect: names, attributes, literals, operators, conditional expressions,
    subscripts, and calls of _PURE_BUILTINS and _PURE_METHODS only (no network, no draw, no in-place change)."""

    def __init__(self) -> None:
        self.ok = True

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if not ((isinstance(f, cst.Name) and f.value in _PURE_BUILTINS)
                or (isinstance(f, cst.Attribute) and f.attr.value in _PURE_METHODS)):
            self.ok = False

    def visit_Lambda(self, node) -> None:
        self.ok = False

    def visit_NamedExpr(self, node) -> None:
        self.ok = False

    def visit_Await(self, node) -> None:
        self.ok = False

    def visit_Yield(self, node) -> None:
        self.ok = False


def _copied_bindings(body: Sequence[cst.CSTNode], chosen: Sequence[int], in_steps: Set[int], last: int) -> Set[int]:
    """Statements of the slice that bind names with an effect-free expression (_EffectFree) of values bound before
    the slice, and that a statement outside the steps reads before the last backward(). They are kept where they
    are as well as computed in the step (the same values twice), so that their readers stay before the step: an
    evaluation forward that the train-loop rewrite would otherwise have run after the step (the driver's
    `x = big if wide else small; y0 = net(x); loss = crit(net(x), t); loss.backward(); opt.step()`)."""
    out: Set[int] = set()
    computed: Set[str] = set()
    for c in chosen:
        st = body[c]
        bound = assigns(st)
        rhs = _rhs(st)
        simple = (rhs is not None and isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1
                  and isinstance(st.body[0], cst.Assign)
                  and all(isinstance(t.target, cst.Name) for t in st.body[0].targets))
        if simple and not (set(reads(rhs)) & computed):
            pure = _EffectFree()
            walk(rhs, pure)
            if pure.ok and any(set(reads(body[j])) & bound for j in range(c + 1, last) if j not in in_steps):
                out.add(c)
                continue
        computed |= bound
    return out


def _step_inputs(body: Sequence[cst.CSTNode], groups: Sequence[StepGroup]) -> List[str]:
    """The names the block reads from before it up to its last backward() (what the losses may depend
    on); a value read only after the steps (`print(loss_D.item())` of the critic's step) is no input."""
    last = max(g.backwards[-1] for g in groups)
    inputs, _ = _inputs([st for j, st in enumerate(body) if j < last], [x for g in groups for x in g.losses])
    return inputs


_DETACHING = re.compile(r"(^|\.)(stop_gradient|detach|no_grad_value)$")


def _read_attached(body: Sequence[cst.CSTNode], name: str) -> bool:
    """Whether some statement reads `name` outside a detaching call (ops.stop_gradient(...), x.detach())."""
    class _V(cst.CSTVisitor):
        def __init__(self) -> None:
            self.detached, self.hit = 0, False

        def _detaching(self, node: cst.Call) -> bool:
            f = node.func
            text = f.value if isinstance(f, cst.Name) else (code_of(f).strip() if isinstance(f, cst.Attribute)
                                                            else "")
            return bool(_DETACHING.search(text))

        def visit_Call(self, node: cst.Call) -> None:
            if self._detaching(node):
                self.detached += 1

        def leave_Call(self, node: cst.Call) -> None:
            if self._detaching(node):
                self.detached -= 1

        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name and not self.detached:
                self.hit = True

    v = _V()
    for st in body:
        walk(st, v)
    return v.hit


def _network_call(call: cst.Call, info: LoopInfo) -> bool:
    """A call that may run a network: not a library's, not a batch-reading method of a tensor held by a name
    (`x.to(device)`, `labels.clone()`: its value is a network's only if the name's is, which the caller follows
    through reads), not a data method of the enclosing class (`self.label2onehot(labels, n)`)."""
    if _root(call.func) in _LIBRARY_ROOTS:
        return False
    f = call.func
    if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.attr.value in _DATA_METHODS \
            and f.value.value != "self":
        return False
    return code_of(f).strip() not in info.data_methods


def step_reading_outer_network_values(block: cst.If, outer: Sequence[cst.CSTNode],
                                      info: LoopInfo) -> Optional[Rewrite]:
    """A step under an `if` that reads a value the enclosing loop computed with a network call
    (`gen = G(z)` before `if i % n_critic == 0: g_loss = -D(gen).mean(); g_loss.backward()`): the step
    of the `if` alone would take it as a constant and lose the gradient through it. Its backward()s
    become raising TODOs (their zero_grad() calls go); None when no such value is read."""
    body = list(block.body.body)
    groups, _ = find_groups(body, info)
    if not groups:
        return None
    inputs = _step_inputs(body, groups)
    computed: Set[str] = set()
    for st in outer:
        if st is block:
            continue
        # a network call's value, or one computed from such a value (run.py's `xbhat += model(xb)` then
        # `loss = F.binary_cross_entropy_with_logits(xbhat, xb)` before `if split == 'train': loss.backward()`)
        if not is_source(st, info.host_functions) and (
                any(_network_call(c, info) for c in _CallRoots.of(st)) or computed & set(reads(st))):
            computed |= assigns(st)
    # a value read only detached (`(log_pi + target).detach()`, SAC's temperature loss: converted to
    # ops.stop_gradient) carries no gradient in torch either: a constant of the step is what torch computes
    read = [n for n in inputs if n in computed and _read_attached(body, n)]
    if not read:
        return None
    why = (f"this step under an `if` reads {', '.join(read)}, computed by a network call outside the `if`: "
           "its train step would take it as a constant and lose the gradient through it; compute it inside "
           "the `if` (or write this train step with mindspore.value_and_grad by hand)")
    problems = [(b, why) for g in groups for b in g.backwards]
    drop = {e for g in groups for e in g.extras if _method(_stmt_call(body[e]), "zero_grad") is not None}
    new_body = [st for i, st in enumerate(body) if i not in drop] or [_line("pass")]
    return Rewrite(block.with_changes(body=block.body.with_changes(body=new_body)), [], set(), [], problems)


# zero_grad(set_to_none=False) or `p.grad.zero_()`: torch's .grad of a parameter stays a zero tensor (not None)
_ZEROES_GRADS = re.compile(r"\.zero_grad\(\s*(set_to_none\s*=\s*)?False\s*\)|\.grad(\.data)?\.zero_\(")


def _keeps_zero_grads(original: Optional[cst.CSTNode]) -> bool:
    """The loop's clearing (the step's removed zero_grad(), a module's, a loop zeroing p.grad) keeps the gradients
    as zero tensors: a parameter the loss does not use keeps a zero .grad once it had one; torch's optimizers
    move it. `original`: the loop as written (the body here has lost its zero_grad() calls)."""
    body = original.body.body if original is not None and isinstance(original.body, cst.IndentedBlock) else ()
    return any(_ZEROES_GRADS.search(code_of(st)) for st in body)


# what clears the gradients in a loop body: zero_grad() of an optimizer or module, `p.grad = None`,
# `p.grad.zero_()` / `p.grad.data.zero_()`
_CLEARS_GRADS = re.compile(r"\.zero_grad\(|\.grad\s*=\s*None\b|\.grad(\.data)?\.zero_\(")


def clearing_functions(module: cst.Module) -> Set[str]:
    """Module-level functions whose body clears gradients (zero_grad(), `p.grad = None`): yunjey's GAN
    tutorial clears both optimizers through `reset_grad()`; and `self.m` for a method m of the module's classes
    that clears them (a trainer's `def optimizer_step(self): self.opt.step(); self.opt.zero_grad()`), where every
    class defining m clears in it (a `self.m()` call is not tied to one class here)."""
    out = {st.name.value for st in module.body
           if isinstance(st, cst.FunctionDef) and _CLEARS_GRADS.search(code_of(st.body))}
    methods: Dict[str, bool] = {}
    for cls in module.body:
        if not (isinstance(cls, cst.ClassDef) and isinstance(cls.body, cst.IndentedBlock)):
            continue
        for st in cls.body.body:
            if isinstance(st, cst.FunctionDef):
                clears = bool(_CLEARS_GRADS.search(code_of(st.body)))
                methods[st.name.value] = methods.get(st.name.value, True) and clears
    return out | {f"self.{m}" for m, clears in methods.items() if clears}


def backward_methods(module: cst.Module) -> Dict[str, int]:
    """Methods of the module's classes whose body (past a docstring) is `<parameter>.backward()` alone: name ->
    the parameter's position after self, where every class defining a method of that name agrees."""
    found: Dict[str, Optional[int]] = {}
    for cls in module.body:
        if not (isinstance(cls, cst.ClassDef) and isinstance(cls.body, cst.IndentedBlock)):
            continue
        for fn in cls.body.body:
            if not isinstance(fn, cst.FunctionDef):
                continue
            body = list(fn.body.body) if isinstance(fn.body, cst.IndentedBlock) else []
            if body and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1 \
                    and isinstance(body[0].body[0], cst.Expr) and isinstance(body[0].body[0].value, cst.SimpleString):
                body = body[1:]   # the docstring
            call = _stmt_call(body[0]) if len(body) == 1 else None
            recv = _method(call, "backward")
            params = [p.name.value for p in fn.params.params]
            pos = None
            if recv is not None and not call.args and isinstance(recv, cst.Name) and params[:1] == ["self"] \
                    and recv.value in params[1:] and not fn.decorators:
                pos = params.index(recv.value) - 1
            name = fn.name.value
            found[name] = pos if name not in found or found[name] == pos else None
    return {name: pos for name, pos in found.items() if pos is not None}


def _own_backward(call: Optional[cst.Call], info: "LoopInfo") -> Optional[cst.BaseExpression]:
    """`self.backward(loss)`: the tensor a method of backward_methods calls backward() on (loss); None when the
    call is no such method's."""
    pos = info.backward_methods.get(call.func.attr.value) if call is not None else None
    if pos is None or len(call.args) != pos + 1 or any(a.keyword is not None or a.star for a in call.args):
        return None
    return call.args[pos].value


def _uncleared_steps(loop: cst.CSTNode, body: Sequence[cst.CSTNode], groups: Sequence[StepGroup],
                     clearing: Set[str] = frozenset()) -> List[StepGroup]:
    """The optimizer steps of a `for`/`while` loop whose body clears no gradients, itself or by calling one of
    `clearing` (clearing_functions): torch's backward() adds each iteration's gradients to those of the
    earlier iterations and optimizer.step() applies the growing sum (a step applying the gradients of its
    own loss would update by another amount)."""
    def clears(st: cst.CSTNode) -> bool:
        if _CLEARS_GRADS.search(code_of(st)):
            return True
        calls = _CallsOf(set(clearing))
        walk(st, calls)
        return calls.hit
    if not isinstance(loop, (cst.For, cst.While)) or any(clears(st) for st in body):
        return []
    return _summable(groups)


def _summable(groups: Sequence[StepGroup]) -> List[StepGroup]:
    """The plain optimizer steps among `groups`: those that can apply a held sum of gradients."""
    # (a method given the gradients adds them to those its optimizer holds, as torch's .grad: give_gradients)
    return [g for g in groups if g.optimizer and not g.accumulate and not g.closure and not g.leaves
            and g.manual is None and not g.grad_method]


def _names_used(body: Sequence[cst.CSTNode]) -> Set[str]:
    out: Set[str] = set()
    for st in body:
        out |= assigns(st) | set(reads(st))
    return out


def data_params(fn: cst.FunctionDef) -> Set[str]:
    """The parameters a step function passes to its step (tensors): not self/cls, not called or read
    attributes of (model, loss, optimizer: closed over)."""
    params = [p.name.value for p in list(fn.params.posonly_params) + list(fn.params.params)
              + list(fn.params.kwonly_params)]
    used = _UsedAsObject()
    walk(fn.body, used)
    return {p for p in params if p not in used.names and p not in ("self", "cls")}


def rewrite_function(fn: cst.FunctionDef, info: LoopInfo, summing: bool = False,
                     leftover: Optional[str] = None, original: Optional[cst.FunctionDef] = None
                     ) -> Optional[Rewrite]:
    """A step written as a function called once per batch (`def train_step(model, batch, opt)`):
    the same rewrite, with the step's definitions inside the function, right before the call.
    compile_step() keeps the compiled step across calls, so defining it per call costs little.
    Parameters that the step calls or reads attributes of (model, loss, optimizer) are closed
    over; the others (tensors) are passed to the step. summing: the body clears no gradients, so
    each call applies the sum since the optimizer's last zero_grad() (grad_carry.summing_step_functions);
    leftover: why that sum cannot be held (its backward()s become raising TODOs); original: the function as
    written (with its zero_grad() calls: which optimizers it clears)."""
    params = [p.name.value for p in list(fn.params.posonly_params) + list(fn.params.params)
              + list(fn.params.kwonly_params)]
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ()
    if not any(_method(_stmt_call(stmt), "backward") is not None for stmt in body):
        return None   # no backward() at the top level of the body: not a step function
    used = _UsedAsObject()
    walk(fn.body, used)
    data_params = {p for p in params if p not in used.names and p not in ("self", "cls")}
    called = called_object_step(fn, body, data_params, info)
    if called is not None:
        return called
    # `m = nn.Conv2d(...); m.load_state_dict(sd); m.eval(); y = m(x); y.backward()`: the layer is built before
    # the step, and what is done to it (weights loaded, eval) happens before the step too; so is a network built by
    # a factory function (`net = get_network(args)`) and then called (`net(x)`): the step closes over the names
    # the body binds and calls, as a script's straight-line step does (rewrite_statements)
    called = _Called()
    walk(fn.body, called)
    bound_and_called = {n for n in called.names if any(n in assigns(st) for st in body)}
    return rewrite_loop(fn, info, extra_per_iteration=data_params, inline_defs=True,
                        closed_over=_built_objects(body) | bound_and_called, leftover=leftover,
                        sums_across_calls=summing, original=original)


def called_object_step(fn: cst.FunctionDef, body: Sequence[cst.CSTNode], data_params: Set[str],
                       info: LoopInfo) -> Optional[Rewrite]:
    """annotated-transformer's loss object: `__call__(self, x, y, norm)` computes the loss from its
    arguments, `loss.backward()`, `self.opt.step()`, called per batch as `loss_compute(out, y, n)` after
    `out = model(src)` in the caller. Its step would take `x` (the network's output) as a constant:
    every gradient before it lost, silently. An object is called through any name, so its callers (what
    they pass) cannot be followed: a `__call__` whose losses read its arguments gets raising TODOs
    (its zero_grad() calls go). None: not this shape."""
    if fn.name.value != "__call__":
        return None
    groups, _ = find_groups(list(body), info)
    if not groups:
        return None
    read = sorted(n for n in _step_inputs(body, groups) if n in data_params)
    if not read:
        return None
    why = (f"this __call__ computes its loss from its arguments ({', '.join(read)}), which its caller computes "
           "(`out = model(x); loss = loss_compute(out, y, ...)`): a train step here would take them as constants "
           "and lose the gradient through the network; compute the loss and its backward() where the network "
           "is called (or write this train step with mindspore.value_and_grad by hand)")
    problems = [(b, why) for g in groups for b in g.backwards]
    drop = {e for g in groups for e in g.extras if _method(_stmt_call(body[e]), "zero_grad") is not None}
    new_body = [st for i, st in enumerate(body) if i not in drop] or [_line("pass")]
    return Rewrite(fn.with_changes(body=fn.body.with_changes(body=new_body)), [], set(), [], problems)


def _owner(expr: cst.BaseExpression) -> Optional[str]:
    """The name an expression belongs to: its root, or `self.<attribute>` for the trainer's own objects."""
    while isinstance(expr, (cst.Call, cst.Subscript)):
        expr = expr.func if isinstance(expr, cst.Call) else expr.value
    parts = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return None
    return f"self.{parts[-1]}" if expr.value == "self" and parts else expr.value


class _CallOwners(cst.CSTVisitor):
    """(owner of the called function, its name, owners of its arguments) of every call."""

    def __init__(self) -> None:
        self.calls: List[Tuple[Optional[str], str, Set[str]]] = []

    def visit_Call(self, node: cst.Call) -> None:
        name = node.func.attr.value if isinstance(node.func, cst.Attribute) else code_of(node.func).strip()
        self.calls.append((_owner(node.func), name, {o for a in node.args for o in [_owner(a.value)] if o}))


# `p.grad = ...`, `p.grad[...] = ...`, `p.grad += ...`, `p.grad.mul_(...)`, `p.grad.data.clamp_(...)`, and the
# last as converted (param_data_update.py): `ops.assign(p.grad, ...)`
_GRAD_WRITE = re.compile(r"\.grad\b(\s*\[[^\]]*\])?\s*([-+*/]?=(?!=))|\.grad(\.data)?\.\w+_\(|"
                         r"\bassign\(\s*[\w.]+\.grad\s*,")


def grad_writers(module: cst.Module) -> Dict[str, bool]:
    """Every function and method the module defines, by name -> whether one of that name writes a `.grad`."""
    out: Dict[str, bool] = {}

    class _Defs(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            name = node.name.value
            out[name] = out.get(name, False) or bool(_GRAD_WRITE.search(code_of(node)))

    walk(module, _Defs())
    return out


def _gradient_changers(body: Sequence[cst.CSTNode], g: StepGroup, info: LoopInfo) -> List[int]:
    """Statements between a group's last backward() and its step(), other than the clipping, unscaling and
    clearing it folds in, that pass a network the loss calls (or the optimizer) to a function of the program
    (DINO's `utils.clip_gradients(student, clip)`, `cancel_gradients_last_layer(epoch, student, n)`), in a
    project that reads `.grad`: torch runs them on the gradients before the step; the train step would
    apply the gradients first. A function this module defines that writes no `.grad` (a norm logged) changes
    none; one defined elsewhere may. Statements of `if`s are not looked into."""
    if not info.keep_grads or g.step < 0 or not g.backwards or not g.optimizer:
        return []
    known = set(g.extras) | set(g.backwards) | {c[0] for c in g.clips} | set(g.clip_conds)
    # (`clip_gradient(optimizer, c)` reads no network: a data function, but one writing .grad)
    library = _LIBRARY_ROOTS | {info.ms} | {f for f in info.host_functions if not info.grad_writers.get(f, False)}
    handed: Set[str] = set()
    for st in body[:g.backwards[0]]:
        calls = _CallOwners()
        walk(st, calls)
        handed |= {f for f, _, _ in calls.calls if f and f not in library}
    handed |= {_owner(cst.parse_expression(g.optimizer))} - {None}
    found = []
    for j in range(g.backwards[-1] + 1, g.step):
        if j in known:
            continue
        if _GRAD_WRITE.search(code_of(body[j])):     # `for p in model.parameters(): p.grad.data.clamp_(-c, c)`
            found.append(j)
            continue
        calls = _CallOwners()
        walk(body[j], calls)
        if any(f not in library and f not in handed and args & handed and info.grad_writers.get(name, True)
               and name != "unscale_" for f, name, args in calls.calls):     # a GradScaler's, folded in
            found.append(j)
    return found


def _setting_changers(body: Sequence[cst.CSTNode], g: StepGroup) -> List[int]:
    """Statements between a group's last backward() and its step(), other than those it folds in, that may change
    the optimizer's settings before the step: one naming the optimizer (`optimizer.param_groups[0]['lr'] = lr`,
    `adjust_lr(optimizer, it)`) or calling another object's step() (vq-vae-2's `scheduler.step()` there, a
    CycleScheduler writing each group's lr). torch's step() applies the new learning rate; a train step applying
    the gradients at once would run with the old one and the statement after it, silently."""
    if g.step < 0 or not g.backwards or not g.optimizer:
        return []
    known = set(g.extras) | set(g.backwards) | {c[0] for c in g.clips} | set(g.clip_conds)
    owner = _owner(cst.parse_expression(g.optimizer))
    found = []
    for j in range(g.backwards[-1] + 1, g.step):
        if j in known:
            continue
        calls = _CallOwners()
        walk(body[j], calls)
        if (owner is not None and re.search(rf"(?<![\w.]){re.escape(owner)}\b", code_of(body[j]))) or any(
                name == "step" and f != owner for f, name, _ in calls.calls):
            found.append(j)
    return found


def _editable(g: StepGroup) -> bool:
    """A plain step (one optimizer, no clipping folded in, no accumulation, closure or wrapper) whose gradients
    the statements before its step() may change: the step returns them and the optimizer applies them after
    those statements (StepGroup.edited)."""
    return not (g.clips or g.accumulate or g.closure or g.wrapper_call or g.manual is not None or g.leaves
                or g.outer or g.co_steps or g.held or g.uncleared or len(g.backwards) != 1)


def _built_objects(stmts: Sequence[cst.BaseStatement]) -> Set[str]:
    """Names bound to an object built once (`model = Net()`, `opt = _ms_compat.SGD(...)`: a class, by its
    name): the step closes over them, and the statements building them stay out of it."""
    names: Set[str] = set()
    for st in stmts:
        if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Assign):
            value = st.body[0].value
            if isinstance(value, cst.Call) and re.match(r"_*[A-Z]", code_of(value.func).strip().rsplit(".", 1)[-1]):
                names |= assigns(st)
    return names


def rewrite_module(module: cst.Module, info: LoopInfo) -> Optional[Tuple[cst.FunctionDef, Rewrite]]:
    """backward() in a script's straight-line code (`loss.backward(); opt.step()` at the top level):
    the step of a step function, defined where the backward() was. The module body is handed over
    as the body of a function (returned with the rewrite, for the caller to unwrap); the names it
    calls or reads attributes of (model, optimizer) are the step's closures, and the statements
    that bind them (the model's construction) stay out of the step."""
    return rewrite_statements(list(module.body), info)


def rewrite_statements(stmts: List[cst.BaseStatement], info: LoopInfo
                       ) -> Optional[Tuple[cst.FunctionDef, Rewrite]]:
    """rewrite_module for a list of straight-line statements (a module body, or the body of its
    `if __name__ == "__main__":`)."""
    if not any(_method(_stmt_call(stmt), "backward") is not None for stmt in stmts):
        return None
    fn = cst.FunctionDef(name=cst.Name("_module"), params=cst.Parameters(),
                         body=cst.IndentedBlock(body=list(stmts)))
    used = _Called()
    for st in stmts:
        walk(st, used)
    # classes and functions the script defines (`Fn.apply(x)` of a custom autograd.Function) are closed over:
    # passed to the step as arguments, a class is no value MindSpore's value_and_grad can take
    defined = {st.name.value for st in stmts if isinstance(st, (cst.ClassDef, cst.FunctionDef))}
    rw = rewrite_loop(fn, dataclasses.replace(info, module_globals=True), inline_defs=True,
                      closed_over=used.names | _built_objects(stmts) | defined)
    return None if rw is None else (fn, rw)


def hoist_data_arguments(body: Sequence[cst.CSTNode], info: "LoopInfo") -> Optional[List[cst.CSTNode]]:
    """PaLM's train.py: `loss = model(next(train_loader))` (or `model(get_batch())`): the network is called on
    what a data call returns, in one statement, which as a whole is data for the step (is_source) and so
    stayed out of it: the loss was no network call's (a raising TODO). The data call goes to a statement of its
    own before, `_ms_input = next(train_loader)` then `loss = model(_ms_input)`: the batch is an input of the
    step, the call part of it. Only for `target = f(...)` whose arguments are each a data call (_is_data_call)
    or an expression calling nothing (so that Python's order of evaluation is kept), f no data call itself.
    Returns the new body (None: nothing to hoist)."""
    taken = _names_used(body)
    out: List[cst.CSTNode] = []
    changed = False
    for st in body:
        if not (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Assign)
                and len(st.body[0].targets) == 1 and isinstance(st.body[0].value, cst.Call)):
            out.append(st)
            continue
        call = st.body[0].value
        if _is_data_call(_call_name(call), info.host_functions) or not re.fullmatch(r"[\w.]+", _call_name(call)):
            out.append(st)
            continue
        plan = []
        for arg in call.args:
            inner = _calls_in(arg.value)
            if not inner:
                plan.append(None)
            elif (isinstance(arg.value, cst.Call) and not arg.star
                  and _is_data_call(_call_name(arg.value), info.host_functions)
                  and all(_is_data_call(_call_name(c), info.host_functions) for c in inner)):
                plan.append(arg)
            else:
                plan = []
                break
        if not any(plan):
            out.append(st)
            continue
        new_args = []
        for arg, hoist in zip(call.args, plan):
            if hoist is None:
                new_args.append(arg)
                continue
            k = 0
            while f"_ms_input{k or ''}" in taken:
                k += 1
            name = f"_ms_input{k or ''}"
            taken.add(name)
            out.append(st.with_changes(body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))],
                                                        value=arg.value)]))
            st = st.with_changes(leading_lines=[])
            new_args.append(arg.with_changes(value=cst.Name(name)))
        out.append(st.with_changes(body=[st.body[0].with_changes(value=call.with_changes(args=new_args))],
                                   leading_lines=[]))
        changed = True
    return out if changed else None


def with_data_arguments_hoisted(loop: cst.CSTNode, info: "LoopInfo") -> cst.CSTNode:
    """The loop with hoist_data_arguments applied to its body, where the body calls backward() itself."""
    if not isinstance(getattr(loop, "body", None), cst.IndentedBlock) or not any(
            _calls_method(st, "backward") for st in loop.body.body):
        return loop
    body = hoist_data_arguments(list(loop.body.body), info)
    return loop if body is None else loop.with_changes(body=loop.body.with_changes(body=body))


def _text_reads(text: str) -> Set[str]:
    """The names an expression's source text reads; none for text that is no expression (an optimizer
    group's description, "" where a step has none)."""
    try:
        return set(reads(cst.parse_expression(text)))
    except cst.ParserSyntaxError:
        return set()


def rewrite_loop(loop: cst.CSTNode, info: LoopInfo, extra_per_iteration: Set[str] = frozenset(),
                 inline_defs: bool = False, closed_over: Set[str] = frozenset(),
                 outer_step: Optional[OuterStep] = None, closure_of: Optional[str] = None,
                 original: Optional[cst.CSTNode] = None, leftover: Optional[str] = None,
                 sums_across_calls: bool = False, held_for: Optional[str] = None,
                 taped_for: Optional[str] = None, tape: bool = True,
                 attack_marks: Optional[FrozenSet[str]] = None) -> Optional[Rewrite]:
    """leftover: why the loop's first step would miss gradients another step left in torch's .grad
    (grad_carry.py): its backward()s become raising TODOs. sums_across_calls: a step function clearing
    no gradients, whose steps apply the held sum (as a loop clearing none). tape: a group no step holds is
    taped (taped_steps.py) rather than a TODO (the last resort: a loop tries a step per branch first)."""
    body = list(loop.body.body) if isinstance(loop.body, cst.IndentedBlock) else []
    if not body:
        return None
    groups, problems = find_groups(body, info, outer_step, closure_of, held_for, taped_for,
                                   zeroed=_zeroed_leaves(original), attack_marks=attack_marks)
    outer_taped = [g for g in groups if g.taped_outer]
    if outer_taped and leftover is None:
        # kept on the tape; the enclosing step (taped_outer_step) differentiates them
        g = outer_taped[0]
        TS.taped_statements(g, body, step=False)
        sites = [(b, "Tensor.backward", f"{TS.COMPAT}.tape_backward", TS.NOTE) for b in g.backwards]
        return Rewrite(loop.with_changes(body=loop.body.with_changes(body=body)), [], set(), sites, problems,
                       steps=len(sites), taped=True)
    groups = _split_cleared(groups, body, original, problems)
    _keep_cleared_co_steps(groups, original)
    _take_cleared_clips(groups, body, original)
    if leftover is not None and groups:
        problems.extend((b, leftover) for g in groups for b in g.backwards)
        return Rewrite(loop, [], set(), [], problems)
    # the loop as written (the converted body has lost its zero_grad() calls); none given: not checked
    uncleared = _summable(groups) if sums_across_calls else \
        [] if original is None else _uncleared_steps(original, original.body.body, groups, info.clearing_functions)
    if any(g.clips or g.scaler or g.wrapper_call for g in uncleared):
        # torch clips (or unscales) the growing .grad in place, changing the sum the next iteration adds to; a
        # wrapper's method would be handed this iteration's gradients only (hold_gradients), not the sum
        problems.extend((b, "no zero_grad() in this loop: torch adds each iteration's gradients to the earlier "
                            "ones and clips, unscales or steps that sum through an optimizer wrapper; write the "
                            "sum by hand") for g in groups for b in g.backwards)
        return Rewrite(loop, [], set(), [], problems)
    changers = [(g, j) for g in groups for j in _gradient_changers(body, g, info)]
    settings = [(g, j) for g in groups for j in _setting_changers(body, g)]
    for g in {id(g): g for g, _ in changers + settings}.values():
        if _editable(g):
            g.edited = True
    changers = [(g, j) for g, j in changers if not g.edited]
    settings = [(g, j) for g, j in settings if not g.edited and all(g is not h or j != k for h, k in changers)]
    if settings:
        problems.extend((b, f"`{_short(body[j])}` runs between this backward() and {g.optimizer}.step() and may "
                            "change the optimizer's settings (its learning rate) before the step, which a train step "
                            "applying the gradients at once would run with the old ones; move it after the step, or "
                            "write this step with mindspore.value_and_grad by hand")
                        for g, j in settings for b in g.backwards)
        return Rewrite(loop, [], set(), [], problems)
    if changers:
        problems.extend((b, f"`{_short(body[j])}` runs between this backward() and {g.optimizer}.step() and hands "
                            "the network or optimizer to a function of the program, which reads .grad: it may "
                            "change the gradients (clip, zero a layer's) before the step, which a train step "
                            "would apply first; write this step with mindspore.value_and_grad by hand")
                        for g, j in changers for b in g.backwards)
        return Rewrite(loop, [], set(), [], problems)
    for g in uncleared:
        # torch's .grad keeps growing: the gradients are summed over the iterations and never cleared
        g.accumulate = g.uncleared = True
    for g in groups:
        g.input_leaves = _stepped_input_leaves(body, g, info)
    if not groups:
        return Rewrite(loop, [], set(), [], problems) if problems else None

    original_body = list(body)
    used = _names_used(body) | set(info.taken) | set(extra_per_iteration)
    after_step: Dict[int, List[str]] = {}      # id(group) -> `self.loss = loss` after its step
    starts: Dict[int, int] = {}
    start = 0
    written_losses = {id(g): list(g.losses) for g in groups}    # as written (localize renames attributes)
    for g in groups:
        starts[id(g)] = start
        after_step[id(g)] = localize_attribute_losses(body, g, start, used)
        start = g.step + 1
    frozen: Set[int] = set()        # statements of groups left as TODOs (or taped): untouched
    taped_sites: List[Tuple[int, str, str, str]] = []     # backward()s of the taped groups (taped_steps.py)
    unsound_drop: Set[int] = set()  # their zero_grad() calls (no MindSpore counterpart; the TODO raises)
    while True:
        special: Set[int] = set()
        for g in groups:
            special |= {*g.backwards, g.step, *g.extras, *(c[0] for c in g.clips)}
        per_iteration: Set[str] = set(extra_per_iteration)
        if isinstance(loop, cst.For):
            targets = _Assigns()
            targets.unpack(loop.target)
            per_iteration |= targets.names
        for st in body:
            # a tensor the loop changes in place (WassersteinGAN's `input.resize_as_(batch).copy_(batch)`) is a
            # value of this iteration too: the step takes it as an argument, which a compiled step reads anew at
            # each call (a global it would keep reading as it was when compiled, whatever its new shape); not a
            # Parameter written in place (`H.clamp_(min=0)` under no_grad after the step): the step trains it
            per_iteration |= assigns(st) | (mutated(st) - set(info.parameter_names))
        per_iteration -= set(closed_over)
        # statements binding closed-over objects (a model built in straight-line code) stay outside
        kept_out = {j for j, st in enumerate(body) if assigns(st) & set(closed_over)}
        for g in groups:    # the tensors whose .grad is read are the inputs differentiated
            kept_out |= {j for j in range(g.backwards[0]) if assigns(body[j]) & set(g.leaves)}
        # what runs before a statement that may leave the iteration (`if i == 0: ...; continue`) stays before it:
        # the step runs after it (_before_exits)
        before_exit = {id(g): _before_exits(body, starts[id(g)], g.backwards[0], special | frozen) for g in groups}
        for g in groups:
            kept_out |= before_exit[id(g)]
        outsides: List[List[int]] = [[] for _ in groups]
        slices = []
        for g, out in zip(groups, outsides):
            slices.append(_slice(body, g, special | frozen | kept_out, info.host_functions - g.host_helpers, out,
                                 earlier={j for s in slices for j in s},
                                 drawing=info.drawing_functions - g.host_helpers))
        for g, chosen in zip(groups, slices):
            _join_element_writes(body, g, chosen, special | frozen | kept_out)
        bad = None
        for g, chosen, outside in zip(groups, slices, outsides):
            why = _unsound(body, g, chosen, outside, per_iteration, info) or _network_before_exit(
                body, g, chosen, before_exit[id(g)], info)
            if why is not None:
                bad = (g, why)
                break
        if bad is None:
            break
        g, why = bad
        if not g.cut_detached and any(_detached_input(body[j]) for j in slices[groups.index(g)]):
            g.cut_detached = True           # PGD's `delta = delta.detach()` after its attack loop: slice again
            continue
        helper = _host_helper(body, g, slices[groups.index(g)], outsides[groups.index(g)], info)
        if helper is not None:
            g.host_helpers.add(helper)      # the step holds it: slice again
            continue
        cond = _host_condition(body, g, outsides[groups.index(g)])
        if cond is not None:
            g.host_ifs.add(cond)            # the step holds it, run op by op: slice again
            continue
        for j in range(starts[id(g)], g.step + 1):
            body[j] = original_body[j]
        frozen |= set(range(starts[id(g)], g.step + 1))
        zero_grads = [e for e in g.extras if _method(_stmt_call(body[e]), "zero_grad") is not None]
        if tape and TS.tapeable(g, body, zero_grads, info.distributed):
            # run as written, differentiated from PyNative's record of what ran (taped_steps.py)
            g.losses = written_losses[id(g)]
            unsound_drop |= set(TS.taped_statements(g, body))
            taped_sites.extend((b, "Tensor.backward", f"{TS.COMPAT}.tape_backward", TS.NOTE) for b in g.backwards)
        else:
            problems.extend((b, why) for b in g.backwards)
            unsound_drop |= set(zero_grads)
        groups = [x for x in groups if x is not g]
        if not groups:
            new_body = [st for i, st in enumerate(body) if i not in unsound_drop] or [_line("pass")]
            return Rewrite(loop.with_changes(body=loop.body.with_changes(body=new_body)), [], set(), taped_sites,
                           problems, steps=len(taped_sites), taped=bool(taped_sites))

    for g, chosen in zip(groups, slices):     # a network that draws with NumPy in its forward: op by op
        g.host_helpers |= {r for k in chosen for r in call_roots(body[k])} & set(info.drawing_objects)
    defs: List[cst.BaseStatement] = []
    closures: Set[str] = set()
    sites: List[Tuple[int, str, str, str]] = []
    resolved: List[Tuple[str, int]] = []
    replace: Dict[int, List[cst.BaseStatement]] = {}
    drop: Set[int] = set(special) | unsound_drop
    in_any_slice = set(j for s in slices for j in s)
    many = len(groups) > 1
    taken = set(info.taken) | per_iteration
    region_start = 0
    accumulator: Optional[str] = None
    earlier_sliced: Set[int] = set()     # statements of the slices of the steps written so far
    any_kept = False
    input_grads: Dict[str, str] = {}     # an input whose .grad a step also fills -> its gradient's name
    hoisted: List[cst.BaseStatement] = []     # the step definitions that go before the loop
    for g, chosen in zip(groups, slices):
        last = g.backwards[-1]
        sliced = set(chosen)
        # an optimizer the loop itself binds (`for net, opt in zip(nets, optimizers)`): the step's definitions
        # read it (`opt.parameters`, `opt(grads)`) where they are made, so they are made in the loop, per
        # iteration (compile_step reuses the compiled step of each optimizer)
        # (run op by op: compiled steps of one loop share its variables' closure cells, and MindSpore 2.10's
        # graph of the second optimizer called the first one's update)
        per_iteration_opt = (g.optimizer is not None and g.manual is None
                             and bool(_text_reads(g.optimizer) & per_iteration))
        inline_g = inline_defs or per_iteration_opt
        first_def = len(defs)
        # a script's `y.backward(); x.grad` at its top level (rewrite_statements): what the differentiated
        # statements bind stays defined after them, a module's names being what its importers read
        script_globals = bool(g.leaves) and isinstance(loop, cst.FunctionDef) and loop.name.value == "_module"
        handed = _handed_over(body, chosen, earlier_sliced, g.losses)
        rewritten = {j: [] if j in earlier_sliced and (_writes_in_place_only(body[j]) or _rebinds_own_input(body[j]))
                     else _recomputed_with_value_kept(body[j], handed.get(j, []), taken, info.ms) for j in chosen}
        earlier_sliced |= sliced
        fwd_stmts = [st for j in chosen for st in rewritten[j]]
        inputs, computed = _inputs(fwd_stmts, g.losses)
        sfx = _suffix(g.optimizer or ("manual" if g.manual is not None else "grad"), many)
        # the value to differentiate: the loss, or the sum of several backward()s
        loss_codes = [code_of(x).strip() for x in g.losses]
        if len(g.losses) == 1 and isinstance(g.losses[0], cst.Name):
            loss_out = loss_codes[0]
            total = loss_out
        else:
            loss_out = _unique("loss" + sfx if "loss" + sfx not in computed else "total_loss" + sfx, taken)
            total = " + ".join(f"({c})" if not re.fullmatch(r"[\w.]+", c) else c for c in loss_codes)
        # statements the slice interleaves with that read what it computes run after the step;
        # a value the slice overwrites later is handed over under its own name
        # so does one that rebinds an input of the step after the slice (nanoGPT's `X, Y = get_batch('train')`
        # between the loss and backward()): the step reads the values the loss was computed from
        # (what the slice computes only after a statement reads is, there, the step's input: word_language_model's
        # `hidden = repackage_hidden(hidden)` before `output, hidden = model(data, hidden)` stays before the step)
        # (a binding of the slice that only chooses among values bound before it, `images = big if k else small`,
        # is kept where it is as well: a statement that reads it, an evaluation forward of the network, stays
        # before the step, as written; run after the step, it would see the updated weights: _copied_bindings)
        copied = _copied_bindings(body, chosen, set(in_any_slice) | special, last)
        later = [j for j in range(region_start, last)
                 if j not in in_any_slice and j not in special and j not in frozen
                 and (set(reads(body[j])) & {n for c in chosen if c < j and c not in copied
                                             for st in rewritten[c] for n in assigns(st)}
                      or (chosen and j > chosen[-1] and assigns(body[j]) & set(inputs)))]
        later = _with_dependents(body, later, last, in_any_slice | special | frozen, inputs)
        keyed: List[Tuple[float, cst.BaseStatement]] = []
        for j in chosen:
            keyed.extend((j + k / 100.0, st) for k, st in enumerate(rewritten[j]))
        moved: List[cst.BaseStatement] = []
        aux: List[str] = []
        for j in later:
            st = body[j]
            for n in sorted(set(reads(st)) & computed):
                if any(jj > j and n in assigns(body[jj]) for jj in chosen):
                    alias = _unique(f"{n}_{j}", taken)
                    keyed.append((j - 0.5, _line(f"{alias} = {n}")))
                    st = st.visit(_Rename(n, alias))
                    aux.append(alias)
                elif n not in aux and n != loss_out:
                    aux.append(n)
            moved.append(st)
        fwd_body = [st for _, st in sorted(keyed, key=lambda kv: kv[0])]
        inside_reads: Dict[str, int] = {}
        for st in fwd_stmts:      # converted statements, compared with the torch code's counts
            for n in written_reads(st):
                inside_reads[n] = inside_reads.get(n, 0) + 1
        for x in g.losses:
            for n in written_reads(x):
                inside_reads[n] = inside_reads.get(n, 0) + 1
        # a loop variable of the step's own loops (`for i in range(k): loss = loss + ...`) is live after the step
        # only where a read outside a loop rebinding it sees it: a Python int handed out as an extra output
        # breaks MindSpore's has_aux (the step's `i` is not the `i` of `for i in ...: print(words[i])`)
        own_loops = {n for st in fwd_stmts for n in _loop_targets(st)}
        inside_loop_reads: Dict[str, int] = {}
        for st in fwd_stmts:
            for n, k in loop_bound_reads(st).items():
                inside_loop_reads[n] = inside_loop_reads.get(n, 0) + k
        for n in sorted(computed):
            if n in aux or n == loss_out:
                continue
            if (n in own_loops and n not in inputs
                    and info.read_counts.get(n, 0) - info.loop_reads.get(n, 0)
                    <= inside_reads.get(n, 0) - inside_loop_reads.get(n, 0)):
                continue
            if (info.read_counts.get(n, 0) > inside_reads.get(n, 0) or n in inputs or info.module_globals
                    or script_globals):
                aux.append(n)     # read elsewhere (a module's globals by its importers too), or carried to the next iteration (hidden states)
        if loss_out != total:
            for c in loss_codes:
                if re.fullmatch(r"\w+", c) and c not in aux and info.read_counts.get(c, 0) > inside_reads.get(c, 0):
                    aux.append(c)
        params = [n for n in inputs if n in per_iteration]
        closures |= {n for n in inputs if n not in per_iteration}
        fwd = _unique("forward_fn" + sfx, taken)
        gfn = _unique("grad_fn" + sfx, taken)
        step = _unique(("grad_step" if g.accumulate or g.closure or g.wrapper_call or g.edited else "train_step")
                       + sfx, taken)
        outs = [loss_out] + aux
        has_aux = bool(aux)
        fwd_body.append(_line(f"return {', '.join([total] + aux)}"))
        if info.record_fields:      # a record the network builds is its fields' dict when compiled (graph_records.py)
            fwd_body = field_reads_of_step(fwd_body, info.record_fields, {info.ms, *info.module_names})
        if g.leaves:
            _leaf_gradients(g, body, params, fwd, fwd_body, outs, aux, info, taken, replace, sites, moved, resolved)
            drop |= sliced | set(later)
            region_start = last + 1
            continue
        defs.append(cst.FunctionDef(
            name=cst.Name(fwd), params=cst.Parameters(params=[cst.Param(cst.Name(p)) for p in params]),
            body=cst.IndentedBlock(body=fwd_body),
            leading_lines=[cst.EmptyLine(indent=False)] + _comment("the forward computation of the training step "
                                                       "(differentiated by " + gfn + ")")))
        n_defs = 4      # forward_fn, grad_fn, train_step, compile_step (+ the gradient reducer, the weights)
        weights = f"{g.optimizer}.parameters"
        if g.co_steps:      # each optimizer's share of the gradients, in the order of `weights`
            weights = _unique("stepped_params" + sfx, taken)
            together = ", ".join([g.optimizer] + [o for _, o in g.co_steps])
            defs.append(_line(f"{weights} = _ms_compat.stepped_together({together})"))
            n_defs += 1
        if g.manual is not None:
            # the parameters the hand-written update loop iterates (those torch gives a .grad)
            weights = _unique("trained_params" + sfx, taken)
            closures |= set(reads(cst.parse_expression(g.manual.params)))   # defined where these are
            defs.append(_line(f"{weights} = tuple(p for p in {g.manual.params} if p.requires_grad)"))
            n_defs += 1
        grad_of = f"{info.ms}.value_and_grad({fwd}, None, {weights}{', has_aux=True' if has_aux else ''})"
        zeroed = ", zeroed=True" if _keeps_zero_grads(original if original is not None else loop) else ""
        if any(n not in params for n in g.input_leaves) or g.host_helpers or g.host_ifs:
            g.input_leaves = []     # the loss does not take it as this iteration's input: its .grad stays refused
        leaf_grads = {n: _unique(f"{n}_grad", taken) for n in g.input_leaves}
        inputs = f", inputs=({''.join(f'{params.index(n)}, ' for n in g.input_leaves).rstrip()})" \
            if leaf_grads else ""
        if g.manual is None:    # a parameter the loss did not use gets None, as torch's .grad (unused_params)
            grad_of = (f"_ms_compat.value_and_grad_reached({fwd}, {weights}{', has_aux=True' if has_aux else ''}"
                       f"{zeroed}{inputs})")
        if g.host_helpers or g.host_ifs:    # made where the step runs (op by op): made in GRAPH mode, it compiles
            if has_aux:     # op by op, an extra output may be a host value (`.numpy()` in the network)
                grad_of = f"_ms_compat.value_and_grad_host_aux({fwd}, {weights}{zeroed})"
            defs.append(cst.parse_statement(f"def {gfn}(*args):\n    return {grad_of}(*args)\n"))
        else:
            defs.append(_line(f"{gfn} = {grad_of}"))
        arglist = ", ".join(params)
        lhs = f"({', '.join(outs)}), grads" if has_aux else f"{loss_out}, grads"
        if leaf_grads:      # the inputs' gradients first (value_and_grad_reached's `inputs`)
            lhs = lhs[:-len("grads")] + f"(({''.join(f'{v}, ' for v in leaf_grads.values()).rstrip()}), grads)"
        step_lines = [f"{lhs} = {gfn}({arglist}){mark_of(body[g.backwards[0]])}"]   # original lines (line_map.py)
        keep = g.edited or _keeps_grads(original_body, g, info)
        if keep and g.clips:    # torch's .grad between backward() and the clipping: the unclipped gradients
            step_lines.append("unclipped_grads = grads")
        if info.distributed:
            # torch's DDP averages the gradients across processes during backward(): here right after
            # value_and_grad, before any clipping (an identity when the program runs as one process)
            red = _unique("grad_reducer" + sfx, taken)
            defs.append(_line(f"{red} = _ms_compat.GradReducer({weights})"))
            step_lines.append(f"grads = {red}(grads)")
            n_defs += 1
        extra_outs: List[str] = []
        for (ci, target, ccall) in g.clips:
            cname = _call_name(ccall)
            rest = ", ".join(code_of(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)).strip()
                             for a in list(ccall.args)[1:])
            cond = g.clip_conds.get(ci)
            if_cond = f"if {cond}:\n        " if cond else ""   # the step's body is indented by 4
            if cname == CLIP_NORM:
                norm = target if target and re.fullmatch(r"\w+", target) else "grad_norm"
                step_lines.append(f"{if_cond}grads, {norm} = _ms_compat.clip_grad_norm(grads, {rest})")
                if target:
                    extra_outs.append(norm)
                sites.append((ci, "torch.nn.utils.clip_grad_norm_", f"_ms_compat.clip_grad_norm in {step}",
                              "the gradients are clipped inside the train step (torch's formula)"))
            else:
                step_lines.append(f"{if_cond}grads = _ms_compat.clip_grad_value(grads, {rest})")
                sites.append((ci, "torch.nn.utils.clip_grad_value_", f"_ms_compat.clip_grad_value in {step}",
                              "the gradients are clipped inside the train step"))
        for ci in g.cleared_clips:
            sites.append((ci, "torch.nn.utils.clip_grad_norm_", "removed",
                          "runs between zero_grad() and backward(): torch clips cleared gradients, nothing"))
        if g.accumulate or g.closure or g.wrapper_call or g.edited:
            # summed in the loop and applied in the `if`; the closure's result; held for the wrapped optimizer; or
            # kept for the statements changing them before the step
            extra_outs.append("grads")
        elif g.manual is not None:
            step_lines.extend(MU.step_lines(g.manual, weights, info.ms))
        elif g.co_steps:
            start = "0"
            for o in [g.optimizer] + [o for _, o in g.co_steps]:
                end = f"{start} + len({o}.parameters)" if start != "0" else f"len({o}.parameters)"
                step_lines.append(f"{o}(grads[{'' if start == '0' else start}:{end}])")
                start = end
            if keep:
                extra_outs.extend(["unclipped_grads", "grads"] if g.clips else ["grads"])
        else:
            step_lines.append(f"{g.optimizer}(grads){mark_of(body[g.step])}")
            if keep:        # for the program's `.grad` reads after the step
                extra_outs.extend(["unclipped_grads", "grads"] if g.clips else ["grads"])
        extra_outs.extend(leaf_grads.values())
        step_lines.append(f"return {', '.join(outs + extra_outs)}")
        step_def = cst.parse_statement(f"def {step}({arglist}):{mark_of(loop)}\n"
                                       + "".join(f"    {s}\n" for s in step_lines))
        defs.append(step_def.with_changes(leading_lines=[cst.EmptyLine(indent=False)] + _comment(
            "one optimizer step, compiled into a graph in GRAPH mode (PYNATIVE: op by op)")))
        reads_forward_store = bool(info.forward_stores & _object_attribute_reads(fwd_body))
        defs.append(_line(f"{step} = _ms_compat.compile_step({step}"
                          f"{', host_calls=True' if g.host_helpers or g.host_ifs or per_iteration_opt or reads_forward_store else ''})"))
        call_stmt = _line(f"{', '.join(outs + extra_outs)} = {step}({arglist}){mark_of(body[g.backwards[0]])}")
        call_stmt = call_stmt.with_changes(leading_lines=body[g.backwards[0]].leading_lines)
        moved = [_line(a) for a in after_step[id(g)]] + moved
        kept = [_line(f"_ms_compat.keep_grads({weights}, {'unclipped_grads' if g.clips else 'grads'})")] if keep else []
        if info.keep_grads and not keep and not g.grad_method:
            # the gradients an earlier step kept are not this step's: a later `.grad` read raises, not reads them
            kept = [_line(f"_ms_compat.keep_grads({weights}, None)")]
        if keep and g.clips:    # clipped in place where the program clips them
            ci = max(c[0] for c in g.clips)
            replace[ci] = [_line(f"_ms_compat.keep_grads({weights}, grads)").with_changes(
                leading_lines=body[ci].leading_lines)]
        any_kept = any_kept or keep
        early, run_early = ([], set()) if g.accumulate else _reads_before_step(
            body, g, chosen, in_any_slice | special | frozen, computed | set(outs), info)
        drop |= run_early
        replace[last] = ([d for d in defs[len(defs) - n_defs:]] if inline_g else []) + early + [call_stmt] + kept + \
            moved
        drop |= (sliced - _read_before_step(body, chosen, region_start, in_any_slice | special) - copied) | set(later)
        if g.accumulate and g.uncleared:
            # torch's .grad keeps growing, across this loop's iterations and past its end (a second loop, the
            # next call of a per-epoch function): the sum is held per optimizer until its zero_grad()
            acc = _unique("accum_grads" + sfx, taken)
            summed = _line(f"{acc} = _ms_compat.grad_sum({g.optimizer}, grads)").with_changes(leading_lines=_comment(
                "torch's growing .grad: every backward() since the optimizer's last zero_grad()"))
            if keep:
                kept = [_line(f"_ms_compat.keep_grads({weights}, {acc})")]
            held = [_line(f"_ms_compat.hold_gradients({g.optimizer}, {acc})")] if g.held else []
            replace[last] = ([d for d in defs[len(defs) - n_defs:]] if inline_g else []) + [call_stmt, summed] + \
                held + kept + moved
            if not g.held:
                replace[g.step] = [_line(f"{g.optimizer}({acc})").with_changes(
                    leading_lines=body[g.step].leading_lines)]
        elif g.accumulate:
            acc = _unique("accum_grads" + sfx, taken)
            defs.insert(len(defs) - n_defs, _line(f"{acc} = None").with_changes(leading_lines=_comment(
                "gradients summed over batches until the optimizer steps (torch's .grad accumulation)")))
            call_stmt = _line(f"{', '.join(outs + extra_outs)} = {step}({arglist})").with_changes(
                leading_lines=call_stmt.leading_lines)
            replace[last] = ([d for d in defs[len(defs) - n_defs - 1:]] if inline_g else []) + [
                call_stmt, _line(f"{acc} = _ms_compat.accumulate_grads({acc}, grads)")] + kept + moved
            if g.outer:     # the enclosing loop clips, applies and clears (apply_outer_step)
                accumulator = acc
            else:
                replace[g.step] = [_accumulation_if(body[g.step], g, acc)]
            for e in g.extras:
                if _method(_stmt_call(body[e]), "zero_grad") is not None:
                    replace[e] = [_line(f"{acc} = None").with_changes(leading_lines=body[e].leading_lines)]
        if g.edited:    # the statements in between ran on the kept gradients, as on torch's .grad
            replace[g.step] = [_line(f"{g.optimizer}(_ms_compat.kept_grads({weights}))").with_changes(
                leading_lines=list(body[g.step].leading_lines) + _comment(
                    "the gradients as the statements since the gradient step left them (torch's .grad)"))]
            sites.append((g.step, "Optimizer.step", f"{g.optimizer}(_ms_compat.kept_grads({weights}))",
                          f"{step} returns the gradients; the statements before this step() change them as torch's "
                          ".grad (kept, _ms_compat.keep_grads) and the optimizer applies what they leave"))
        if g.grad_method:       # the optimizer's method runs as written and reads them as p.grad
            method = _stmt_call(body[g.step]).func.attr.value
            replace[g.step] = [_line(f"_ms_compat.give_gradients({g.optimizer}, grads, {method!r})").with_changes(
                leading_lines=body[g.step].leading_lines), body[g.step].with_changes(leading_lines=[])]
            sites.append((g.step, "Optimizer.step", f"_ms_compat.give_gradients({g.optimizer}, grads)",
                          f"{step} returns the gradients; {g.optimizer}.{method}() reads them as p.grad"))
        elif g.wrapper_call:      # the wrapper's method runs as written; its `self.<optimizer>.step()` applies them
            replace[g.step] = [_line(f"_ms_compat.hold_gradients({g.optimizer}, grads)").with_changes(
                leading_lines=body[g.step].leading_lines), body[g.step].with_changes(leading_lines=[])]
            sites.append((g.step, "Optimizer.step", f"_ms_compat.hold_gradients({g.optimizer}, grads)",
                          f"{step} returns the gradients; the wrapper's method steps {g.optimizer} with them"))
        for b in g.backwards:
            sites.append((b, "Tensor.backward", f"mindspore.value_and_grad in {step}",
                          f"gradients of {total} w.r.t. {weights}, from value_and_grad"))
        if leaf_grads:
            input_grads.update(leaf_grads)
            sites.append((g.backwards[0], "Tensor.grad", f"{', '.join(leaf_grads.values())} from {step}",
                          f"the same backward() fills {', '.join(leaf_grads)}'s .grad, read after it: {step} "
                          "differentiates them too (value_and_grad_reached's inputs) and returns their gradients; "
                          "their `.grad.zero_()` goes (each step returns its own)"))
        if g.manual is not None:
            sites.append((g.step, "Tensor.grad", f"{info.ms}.ops.assign in {step}",
                          "the hand-written update runs inside the train step on the gradients value_and_grad "
                          "returned; every change of a parameter is an ops.assign (in-place arithmetic on a "
                          "MindSpore Parameter may change nothing)"))
            resolved.extend(g.manual.resolved)
        elif g.held:
            sites.append((g.step, "Optimizer.step", f"_ms_compat.hold_gradients({g.optimizer}, {acc})",
                          f"the gradients summed since {g.optimizer}.zero_grad(), held for its step() in another "
                          "method, as torch's .grad"))
        elif g.uncleared:
            sites.append((g.step, "Optimizer.step", f"{g.optimizer}(accumulated gradients)",
                          "the loop clears no gradients: each step applies the sum of the gradients of every "
                          "iteration so far, as torch's growing .grad"))
        elif not g.outer and not g.closure and not g.wrapper_call and not g.edited:
            sites.append((g.step, "Optimizer.step", f"{g.optimizer}(grads) in {step}",
                          "the update runs inside the train step"))
            for k, o in g.co_steps:
                sites.append((k, "Optimizer.step", f"{o}(its share of grads) in {step}",
                              f"stepped on the same backward()s as {g.optimizer}: the gradients are taken w.r.t. "
                              "both optimizers' parameters, each applies its own"))
        if g.scaler:
            sites.append((g.backwards[0], "torch.cuda.amp.GradScaler.scale", "(removed)",
                          "float32 training needs no loss scaling (a `.grad` read between backward() and "
                          "unscale_() sees the unscaled gradient, torch's with scaling off); for float16 on Ascend "
                          "use mindspore.amp.DynamicLossScaler"))
        region_start = g.step + 1
        if not inline_g:
            hoisted.extend(defs[first_def:])
    new_body: List[cst.BaseStatement] = []
    for i, st in enumerate(body):
        if i in replace:
            new_body.extend(replace[i])
        elif i not in drop:
            new_body.append(st)
    if input_grads:     # the inputs' .grad reads read what the step returned; their clearing goes
        new_body = [st.visit(_GradAttr(input_grads)) for st in new_body
                    if not any(_clears_grad(st, n) for n in input_grads)]
    if not new_body:
        new_body = [_line("pass")]
    new_loop = loop.with_changes(body=loop.body.with_changes(body=new_body))
    return Rewrite(new_loop, hoisted, closures, sites + taped_sites, problems, len(groups) + len(taped_sites),
                   resolved, accumulator, any_kept, taped=bool(taped_sites))
