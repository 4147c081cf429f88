"""`torch.autograd.grad(outputs=y, inputs=x, grad_outputs=s, create_graph=True)[0]` (WGAN-GP's
gradient penalty) -> a gradient of a function.

torch differentiates the graph it recorded; MindSpore differentiates functions. The statements
between x's binding and the call that y depends on become a function of x, and
`ops.GradOperation()(fn)(x, s)`, with fn returning sum(y * s), is its vector-Jacobian product with s
(torch's grad_outputs). That result is differentiable again: a train step's value_and_grad over a loss that
holds it computes second-order gradients (checked on CPU, GRAPH and PYNATIVE mode, MindSpore 2.10,
through Dense + LeakyReLU/ReLU/Tanh: tests/test_train_loop.py::test_gradient_penalty_matches_torch).

The main pass has already turned the call into a raising placeholder (no mapping record); this
rule replaces the placeholder where the pattern is clear: one input tensor (a name), outputs a
name computed from it by plain statements of the same block. Anything else stays the TODO.

The statements from the inputs to the output are moved into the function where nothing else reads what they bind
(_movable), so they run once, as in torch: a draw made once, a BatchNorm's running statistics moved once, the forward
not run twice. An output still read after is returned by value_and_grad with the gradient. Where they are read
elsewhere the function holds copies (the block runs them, the function again), and a computation that draws stays
the TODO; before such a gradient, `_ms_compat.forward_run_again` raises MigrationError naming the line where an
object the copies call holds a BatchNorm or Dropout in training mode (the copies would move its statistics, or
draw, a second time). A statement that changes a needed value in place (`cost[mask] /= n`) is one of them (mutated)."""
from __future__ import annotations

import builtins
import re
from typing import Dict, List, Optional, Tuple

import libcst as cst

from .callsite import code_of
from .same_branches import plain_test
from .train_loop import assigns, mutated, reads
from .variable_leaves import PLACEHOLDER, VARIABLE
from .variable_leaves import unguarded as _unguarded, variable_data as _variable_data

API = "torch.autograd.grad"


def _placeholder_args(stmt: cst.CSTNode, lazy_calls: Optional[Dict[str, cst.Call]] = None
                      ) -> Optional[Tuple[str, cst.Call, bool]]:
    """`T = _ms_compat.Unconverted('torch.autograd.grad', where, why)(...)[0]` -> (T, the call, indexed);
    T is the target's code (`g` or a tuple to unpack, `gx, gw`). A module-level placeholder written without
    its call (`Unconverted(...)[0]`) gets it from lazy_calls."""
    stmt = _unguarded(stmt)
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1
            and _simple_target(stmt.body[0].targets[0].target)):
        return None
    value, indexed = stmt.body[0].value, False
    if isinstance(value, cst.Subscript):
        if len(value.slice) != 1 or code_of(value.slice[0]).strip().rstrip(",").strip() != "0":
            return None
        value, indexed = value.value, True
    if (isinstance(value, cst.Call) and code_of(value.func).strip() == PLACEHOLDER and len(value.args) > 1
            and code_of(value.args[0].value).strip().strip("'\"") == API):
        lazy = (lazy_calls or {}).get(code_of(value.args[1].value).strip().strip("'\""))
        if lazy is None:
            return None
        value = lazy.with_changes(func=value)
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Call)
            and code_of(value.func.func).strip() == PLACEHOLDER and value.func.args
            and code_of(value.func.args[0].value).strip().strip("'\"") == API):
        return None
    return code_of(stmt.body[0].targets[0].target).strip(), value, indexed


def _simple_target(t: cst.BaseExpression) -> bool:
    """a name, or a tuple/list of names (`g, = ...`, `gx, gw = ...`)"""
    if isinstance(t, (cst.Tuple, cst.List)):
        return all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in t.elements)
    return isinstance(t, cst.Name)


def _names(expr: cst.BaseExpression) -> Optional[List[str]]:
    """`x` -> [x]; `[x, w]` / `(x, w)` -> [x, w]; anything else None."""
    if isinstance(expr, cst.Name):
        return [expr.value]
    if isinstance(expr, (cst.Tuple, cst.List)) and expr.elements and all(
            isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in expr.elements):
        return [e.value.value for e in expr.elements]
    return None


def _where(call: cst.Call) -> str:
    return code_of(call.func.args[1].value).strip().strip("'\"") if len(call.func.args) > 1 else ""


def rewrite_block(body: List[cst.BaseStatement], ms: str,
                  lazy_calls: Optional[Dict[str, cst.Call]] = None,
                  drawing: frozenset = frozenset(),
                  outside: Optional[frozenset] = None) -> Tuple[List[cst.BaseStatement], List[str]]:
    """The block with each clear `torch.autograd.grad` placeholder replaced; returns the new block and
    the placeholders' `module:line` that are now converted (an input bound by `Variable(data,
    requires_grad=True)` becomes its data: among them too). lazy_calls: `module:line` -> the converted call
    of a placeholder written without its arguments (a module-level definition).

    A gradient used inside a statement (`grad += torch.autograd.grad(cost, x)[0]`, `g = autograd.grad(...)[0] / n`:
    torchattacks' EOT and variance-tuning loops) is first taken out into `_grad_N = ...[0]` before the
    statement; where that one is not converted, the statement is left as written. drawing: the module's functions
    and methods that draw random numbers (drawing_functions). outside: the names the code around the block reads
    (None: not known), for the statements _movable takes into the gradient's function."""
    original_body = body
    body, twins = _same_in_both_branches(body, lazy_calls)
    flat, done = _rewrite_hoisted(body, ms, lazy_calls, drawing, outside)
    if twins:
        body_done = set(done)
        done += [twin for where, twin in twins.items() if where in body_done]
        if any(where not in body_done for where in twins):     # a pair left as it was: the `if` as written
            return _rewrite_hoisted(original_body, ms, lazy_calls, drawing, outside)
    return flat, done


def _rewrite_hoisted(body, ms, lazy_calls, drawing, outside):
    hoisted = _hoisted(body, set())
    if len(hoisted) == len(body):
        return _rewrite_block(body, ms, lazy_calls, drawing, outside)
    flat, done = _rewrite_block(hoisted, ms, lazy_calls, drawing, outside)
    kept = {w for w in _hoisted_wheres(body) if w in done}
    if kept == set(_hoisted_wheres(body)):
        return flat, done
    return _rewrite_block(_hoisted(body, kept, only=True), ms, lazy_calls, drawing, outside)


def _same_in_both_branches(body, lazy_calls) -> Tuple[List[cst.BaseStatement], Dict[str, str]]:
    """`if self.gpu_mode: g = grad(..., grad_outputs=ones.cuda())[0] else: g = grad(..., grad_outputs=ones)[0]`
    (a branch per device, the same gradient once converted): the `if` on a plain flag whose two branches are one
    gradient placeholder each, the same once converted but for their line, is that one statement (the test reads
    only a name or attribute). Returns the block and {the kept placeholder's module:line: the other one's}."""
    out: List[cst.BaseStatement] = []
    twins: Dict[str, str] = {}
    for stmt in body:
        pair = None
        if (isinstance(stmt, cst.If) and isinstance(stmt.orelse, cst.Else) and plain_test(stmt.test)
                and isinstance(stmt.body, cst.IndentedBlock) and isinstance(stmt.orelse.body, cst.IndentedBlock)
                and len(stmt.body.body) == 1 and len(stmt.orelse.body.body) == 1):
            pair = [stmt.body.body[0], stmt.orelse.body.body[0]]
        found = [_placeholder_args(st, lazy_calls) for st in pair] if pair else None
        if not found or None in found:
            out.append(stmt)
            continue
        wheres = [_where(f[1]) for f in found]
        # the same but for their line: the line's string, whitespace and the converter's line markers set aside
        forms = [re.sub(r"\s+|#@msmigrate-line:\d+@", "", code_of(st.with_changes(leading_lines=[]))
                        .replace(repr(w), "''").replace(f'"{w}"', "''")) for st, w in zip(pair, wheres)]
        if forms[0] != forms[1] or found[0][0] != found[1][0] or wheres[0] == wheres[1]:
            out.append(stmt)
            continue
        out.append(pair[0].with_changes(leading_lines=list(stmt.leading_lines) + list(pair[0].leading_lines)))
        twins[wheres[0]] = wheres[1]
    return out, twins


def _grad_in(stmt: cst.CSTNode) -> Optional[cst.Subscript]:
    """The one `Unconverted('torch.autograd.grad', ...)(...)[0]` inside a one-statement line that is not its whole
    value (a plain `T = ...[0]` is taken as it is)."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], (cst.Assign, cst.AugAssign, cst.Expr, cst.Return))):
        return None
    found: List[cst.Subscript] = []

    class _Find(cst.CSTVisitor):
        def visit_Subscript(self, node: cst.Subscript) -> None:
            v = node.value
            if (isinstance(v, cst.Call) and isinstance(v.func, cst.Call)
                    and code_of(v.func.func).strip() == PLACEHOLDER and v.func.args
                    and code_of(v.func.args[0].value).strip().strip("'\"") == API and len(node.slice) == 1
                    and code_of(node.slice[0]).strip().rstrip(",").strip() == "0"):
                found.append(node)

    stmt.visit(_Find())
    small = stmt.body[0]
    if len(found) != 1 or (isinstance(small, cst.Assign) and small.value is found[0] and len(small.targets) == 1
                           and _simple_target(small.targets[0].target)):
        return None
    return found[0]


def _hoisted_wheres(body) -> List[str]:
    return [_where(g.value) for g in (_grad_in(st) for st in body) if g is not None]


def _hoisted(body, wheres: set, only: bool = False) -> List[cst.BaseStatement]:
    """body with each _grad_in gradient taken out before its statement (only: those of `wheres`)."""
    out: List[cst.BaseStatement] = []
    for k, st in enumerate(body):
        g = _grad_in(st)
        if g is None or (only and _where(g.value) not in wheres):
            out.append(st)
            continue
        name = f"_grad_{k}"
        out.append(cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(target=cst.Name(name))],
                                                            value=g)], leading_lines=st.leading_lines))
        out.append(st.deep_replace(g, cst.Name(name)).with_changes(leading_lines=[]))
    return out


def _rewrite_block(body: List[cst.BaseStatement], ms: str,
                   lazy_calls: Optional[Dict[str, cst.Call]] = None,
                   drawing: frozenset = frozenset(),
                   outside: Optional[frozenset] = None) -> Tuple[List[cst.BaseStatement], List[str]]:
    out = list(body)
    done: List[str] = []
    generated: set = set()     # the functions written here: a later grad may take them into its function
    for i, stmt in enumerate(body):
        found = _placeholder_args(stmt, lazy_calls)
        if found is None:
            continue
        stmt = _unguarded(stmt)
        target, call, indexed = found
        args = _grad_args(call)
        if args is None:
            continue
        # the block as rewritten so far: a derivative of a derivative (d2u from du) takes the first one's
        # function and gradient into its own function
        seen: List[cst.BaseStatement] = []
        for st in out[:i]:
            seen.extend(st if isinstance(st, list) else [st])
        general = _general_form(seen + list(body[i:]), len(seen), target, args, indexed, ms, generated, drawing,
                                outside, _where(call))
        if general is not None:
            kept = [ln for ln in stmt.leading_lines if not (ln.comment and API in ln.comment.value)]
            stmts, inputs_bound_at, moved, _ = general
            if not moved:
                moved = []
            for k in inputs_bound_at:
                _replace_in(out, seen[k], _without_requires_grad(seen[k]))
            for k in moved:      # taken into the function (all before the call: in seen)
                _replace_in(out, seen[k], None)
            out[i] = [stmts[0].with_changes(leading_lines=kept + list(stmts[0].leading_lines))] + stmts[1:]
            generated.add(stmts[0].name.value)
            done.append(_where(call))
            continue
        if "allow_unused" in args or "materialize_grads" in args:
            continue
        out_expr, in_expr = args["outputs"], args["inputs"]
        if isinstance(in_expr, (cst.Tuple, cst.List)) and len(in_expr.elements) == 1:
            in_expr = in_expr.elements[0].value
        if isinstance(out_expr, (cst.Tuple, cst.List)) and len(out_expr.elements) == 1:
            out_expr = out_expr.elements[0].value
        if not (isinstance(in_expr, cst.Name) and isinstance(out_expr, cst.Name)) or not indexed:
            continue
        x, y = in_expr.value, out_expr.value
        made = [k for k in range(i) if x in assigns(body[k])]
        if not made:
            continue
        # the statements after x's binding that y depends on: the function of x
        needed, chosen = {y}, []
        for k in range(i - 1, made[-1], -1):
            bound, changed = assigns(body[k]), mutated(body[k]) & needed
            if bound & needed or changed:
                if not changed and _closure_values(body, k, i, {x}, made[-1], needed):
                    needed -= bound
                    continue
                if not (isinstance(body[k], cst.SimpleStatementLine) or _plain_branches(body[k], needed)):
                    chosen = None
                    break
                chosen.append(k)
                needed = (needed - bound) | _free_reads(body[k]) | changed
        if not chosen or y in needed or _reads_own_binding(body, chosen, needed):
            continue
        fn = f"_{y}_of_{x}"
        sens = code_of(args["grad_outputs"]).strip() if "grad_outputs" in args else "None"
        sens, inner = _sens_inside(body, i, chosen, y, sens, outside, out, drawing)
        keep_y = _movable(body, i, chosen, y, sens, outside, out, drawing)
        if keep_y is None and _draws((body[k] for k in chosen), drawing):
            continue
        # the vector-Jacobian product as the gradient of sum(y * grad_outputs): GradOperation's own
        # sens_param refuses a sensitivity of dynamic shape in GRAPH mode (a compiled train step)
        ret = _returned(y, sens, inner, ms)
        fn_def = cst.parse_statement(f"def {fn}({x}{', _sens' if sens != 'None' else ''}):\n    pass\n")
        fn_def = fn_def.with_changes(body=cst.IndentedBlock(
            body=_function_body(body, chosen, keep_y is not None) + [cst.parse_statement(ret + "\n")]))
        grad = f"{ms}.ops.GradOperation()({fn})({_variable(x, ms)}{', ' + sens if sens != 'None' else ''})"
        comment = cst.EmptyLine(comment=cst.Comment(
            f"# msmigrate: torch.autograd.grad -> the gradient of {fn} (the computation from {x} to {y}"
            + (", moved into it: run once, as in torch" if keep_y is not None else "")
            + "), differentiable again by an enclosing value_and_grad"))
        kept = [ln for ln in stmt.leading_lines if not (ln.comment and API in ln.comment.value)]
        binding = out[made[-1]]
        if not isinstance(binding, list):
            data = _variable_data(binding, x, lazy_calls or {})
            if data is not None:
                binding, variable_where = data
                done.append(variable_where)
            out[made[-1]] = _without_requires_grad(binding)
        if keep_y is None:
            call_lines = _forward_check(body, chosen, [x], _where(call)) + [cst.parse_statement(f"{target} = {grad}\n")]
        else:
            for k in chosen:
                out[k] = []
            call_lines = _moved_call(fn, [x], sens, y, keep_y, ms, target)
        out[i] = [fn_def.with_changes(leading_lines=kept + [comment])] + call_lines
        done.append(_where(call))
    for k, st in enumerate(body):
        if isinstance(st, cst.For) and out[k] is st:
            seen = []
            for before in out[:k]:
                seen.extend(before if isinstance(before, list) else [before])
            nested = _in_inner_loop(seen, st, ms, drawing)
            if nested is not None:
                out[k], where = nested
                done.append(where)
    flat: List[cst.BaseStatement] = []
    for st in out:
        flat.extend(st if isinstance(st, list) else [st])
    return flat, done


def _grad_args(call: cst.Call) -> Optional[Dict[str, cst.BaseExpression]]:
    """torch.autograd.grad's arguments by name (torch's positional order), or None where the rewrite takes none
    of them (a starred argument, is_grads_batched, an unknown keyword)."""
    names = ["outputs", "inputs", "grad_outputs", "retain_graph", "create_graph", "only_inputs",
             "allow_unused", "is_grads_batched", "materialize_grads"]
    args = {}
    for k, a in enumerate(call.args):
        key = a.keyword.value if a.keyword is not None else (names[k] if k < len(names) else None)
        if key is None or a.star:
            return None
        args[key] = a.value
    if "outputs" not in args or "inputs" not in args:
        return None
    if "is_grads_batched" in args and _flag(args, "is_grads_batched") is not False:
        return None     # is_grads_batched (vmap over grad_outputs): stays a TODO
    args.pop("is_grads_batched", None)
    if any(k not in ("outputs", "inputs", "grad_outputs", "create_graph", "retain_graph", "only_inputs",
                     "allow_unused", "materialize_grads") for k in args):
        return None
    return args


def _in_inner_loop(prefix: List[cst.BaseStatement], loop: cst.For, ms: str, drawing=frozenset()):
    """A gradient in an inner loop's body whose output is computed from the input through statements of the
    enclosing block before the loop (torchattacks' SINIFGSM: `nes_image = adv_images + ...` before `for i in
    range(m): nes_images = nes_image / 2 ** i; cost = ...; grad(cost, adv_images)`): the function, defined in the
    inner loop's body, holds copies of those statements too. Only where the inner loop binds none of the names they
    bind or read, nor an input (each turn sees the values they computed), and nothing is moved (the statements
    before the loop ran once for all turns). Returns (the loop rewritten, the site's `module:line`) or None."""
    if not isinstance(loop.body, cst.IndentedBlock):
        return None
    inner = _hoisted(list(loop.body.body), set())
    found = [(j, _placeholder_args(st)) for j, st in enumerate(inner)]
    found = [(j, f) for j, f in found if f is not None]
    if len(found) != 1:
        return None
    j, (target, call, indexed) = found[0]
    args = _grad_args(call)
    if args is None:
        return None
    block = list(prefix) + inner
    general = _general_form(block, len(prefix) + j, target, args, indexed, ms, frozenset(), drawing, None,
                            _where(call))
    if general is None:
        return None
    stmts, inputs_bound_at, _, chosen = general
    taken = [k for k in chosen if k < len(prefix)]
    if inputs_bound_at or not taken:
        return None     # within the inner block alone: its own rewrite's
    names = set(_names(args["inputs"]) or ())
    for k in taken:
        names |= assigns(prefix[k]) | set(reads(prefix[k]))
    if assigns(loop) & names:
        return None
    kept = [ln for ln in inner[j].leading_lines if not (ln.comment and API in ln.comment.value)]
    stmts = [stmts[0].with_changes(leading_lines=kept + list(stmts[0].leading_lines))] + stmts[1:]
    new_body = inner[:j] + stmts + inner[j + 1:]
    return loop.with_changes(body=loop.body.with_changes(body=new_body)), _where(call)


def _movable(body, i: int, chosen: List[int], y: str, sens: str, outside, out,
             drawing=frozenset()) -> Optional[bool]:
    """Whether the statements from the inputs to the output y (chosen, indices into body) can be taken out of the
    block into the gradient's function, which then runs them once, as torch does: None where they cannot; else
    whether y's own value is still read (then value_and_grad gives it with the gradient).

    They can where nothing but _independent statements runs between them and the call, and no name
    they bind but y is read anywhere else: not by the block's other statements (a loop body's earlier ones read
    the last turn's values), not by the code around the block (outside; None: unknown, nothing is moved). y's own
    value needs a function returning y itself: not with grad_outputs (the function returns sum(y * s)).
    Left in place, the block ran them and the function again: a draw made twice and the gradient that of the
    second draw (torchattacks' DIFGSM, Jitter), a BatchNorm's running statistics updated twice."""
    if outside is None:
        return None
    if out is not None and any(out[k] is not body[k] for k in chosen):
        return None     # rewritten already (an earlier gradient's function)
    bound = set().union(*(assigns(body[k]) for k in chosen))
    used = set().union(*(set(reads(body[k])) for k in chosen))
    for k in range(min(chosen), i):
        if k not in chosen and not _independent(body[k], bound, used, drawing):
            return None
    elsewhere = set(outside)
    for k, st in enumerate(body):
        if k not in chosen and k != i:
            # a later plain binding of the same name (VMIFGSM's neighbour loop: `outputs = ...` again) needs
            # nothing of the moved value; a change in place does
            elsewhere |= _free_reads(st) | (mutated(st) & bound) | (assigns(st) & bound if k < i else set())
    if sens != "None" and (set(re.findall(r"[A-Za-z_]\w*", sens)) & bound or y in elsewhere):
        return None
    if (bound - {y}) & elsewhere:
        return None
    return y in elsewhere


def _sens_inside(body, i: int, chosen: List[int], y: str, sens: str, outside, out, drawing
                 ) -> Tuple[str, Optional[str]]:
    """grad_outputs computed from the output itself (`torch.ones(y.size())`, `ones_like(y)`: WGAN-GP's) reads
    y outside the function, which keeps the statements to y in the block and runs them again in the function.
    Where y is read nowhere else and the statements can move, the function computes the sensitivity from its
    own y: ("None", the expression); otherwise (sens, None) as given."""
    if sens == "None":
        return sens, None
    bound = set().union(*(assigns(body[k]) for k in chosen))
    if set(re.findall(r"[A-Za-z_]\w*", sens)) & bound != {y}:
        return sens, None
    if _movable(body, i, chosen, y, "None", outside, out, drawing) is not False:
        return sens, None
    return "None", sens


def _returned(y: str, sens: str, inner: Optional[str], ms: str) -> str:
    """The function's return: y, sum(y * _sens), or sum(y * s) with s computed inside (constant to the gradient,
    as torch's grad_outputs is)."""
    if inner is not None:
        return f"return ({y} * {ms}.ops.stop_gradient({inner})).sum()"
    return f"return ({y} * _sens).sum()" if sens != "None" else f"return {y}"


_MARKED = re.compile(r"^\s*(\w+)\.requires_grad", re.M)


def _independent(stmt, bound: set, used: set, drawing) -> bool:
    """A statement between those moved and the call that they may run after (WGAN-GP's `fake = Tensor(n, 1).fill_(1)`
    between `d = D(interpolates)` and the gradient): plain assignments to names, none of which the moved statements
    read or bind, reading nothing they bind, drawing nothing (the draws keep their order); or an input's
    requires_grad mark."""
    marked = set(_MARKED.findall(code_of(stmt)))
    if _marks_requires_grad(stmt, marked) and not marked & bound:
        return True     # `x.requires_grad = True` (FGSM's, after its loss object): MindSpore needs no mark
    if not (isinstance(stmt, cst.SimpleStatementLine)
            and all(isinstance(sm, cst.Assign) and all(isinstance(t.target, (cst.Name, cst.Tuple)) for t in sm.targets)
                    for sm in stmt.body)):
        return False
    return not (set(reads(stmt)) & bound or assigns(stmt) & (bound | used) or _draws([stmt], drawing))


def _function_body(body, chosen: List[int], moved: bool) -> List[cst.BaseStatement]:
    """The function's statements: copies of the block's (their comments stay there), or the block's own, moved
    with their comments."""
    return [body[k] if moved else body[k].with_changes(leading_lines=[]) for k in sorted(chosen)]


def _variable(x: str, ms: str) -> str:
    """An input of the gradient as `ms.mutable(x)`: in a compiled graph a tensor the step makes itself (IRM's
    `scale = torch.tensor(1.).requires_grad_()`) is a constant, whose gradient value_and_grad gives as an empty
    tuple (TypeError naming no line, measured on MindSpore 2.10); mutable, it is torch's, and the gradient still
    flows through it to what it was computed from. Op by op it is the tensor itself."""
    return f"{ms}.mutable({x})"


def _moved_call(fn: str, used: List[str], sens: str, y: str, keep_y: bool, ms: str,
                target: Optional[str] = None) -> List[cst.BaseStatement]:
    """`target = ms.grad(fn, ...)(inputs)` (target: `fn_grads` by default), or with y still read
    `y, target = ms.value_and_grad(...)(...)` (its value is differentiable again, in GRAPH mode too; the has_aux
    values of value_and_grad are not there)."""
    positions = "0" if len(used) == 1 else "(" + ", ".join(str(j) for j in range(len(used))) + ")"
    args = ", ".join(_variable(u, ms) for u in used) + (", " + sens if sens != "None" else "")
    target = target or f"{fn}_grads"
    if keep_y:
        target = target if "," not in target else f"({target})"
        return [cst.parse_statement(f"{y}, {target} = {ms}.value_and_grad({fn}, grad_position={positions})({args})\n")]
    return [cst.parse_statement(f"{target} = {ms}.grad({fn}, grad_position={positions})({args})\n")]


def _closure_values(body, k: int, i: int, xs: set, start: int, needed: set) -> bool:
    """A statement the function cannot hold (an `if` binding a name on one path only: torchattacks'
    `if self.targeted: target_labels = ...`) whose values do not depend on the inputs: the function reads them
    from the enclosing scope instead, as they stand at the gradient (no statement after it binds them again).
    Statements the function can hold are taken into it as before."""
    st = body[k]
    bound = assigns(st)
    if isinstance(st, cst.SimpleStatementLine) or _plain_branches(st, needed):
        # one the function can hold, but not one rebinding a name it reads (`labels = labels.clone().detach()`:
        # inside the function that name would be a local read before its binding, UnboundLocalError)
        if not bound & set(reads(st)):
            return False
    elif not isinstance(st, cst.If) or not _plain_if(st):
        return False
    if any(bound & assigns(body[j]) for j in range(k + 1, i)) or bound & xs:
        return False
    # before `x.requires_grad = True` torch recorded nothing from x: what the statement computes from it is a
    # constant of the gradient (torchattacks' `if self.targeted: target_labels = self.get_target_label(images,
    # labels)` ahead of `images.requires_grad = True`)
    if any(_marks_requires_grad(body[j], xs) for j in range(k + 1, i)):
        return True
    dep = set(xs)
    for j in range(start + 1, k):
        if set(reads(body[j])) & dep:
            dep |= assigns(body[j])
    return not (set(reads(st)) & dep or bound & dep)


def _marks_requires_grad(stmt: cst.CSTNode, xs: set) -> bool:
    """`x.requires_grad = True` or `x.requires_grad_()` / `x.requires_grad_(True)` of an input x."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return False
    small = stmt.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        t = small.targets[0].target
        return (isinstance(t, cst.Attribute) and t.attr.value == "requires_grad" and isinstance(t.value, cst.Name)
                and t.value.value in xs and code_of(small.value).strip() == "True")
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "requires_grad_" \
                and isinstance(call.func.value, cst.Name) and call.func.value.value in xs:
            return all(code_of(a.value).strip() == "True" for a in call.args)
    return False


# a random draw the function would make again: the block's statements still run before it (their values are
# what the program goes on with), so the gradient would be that of other noise, and the stream drawn twice
_DRAW = re.compile(r"\b(rand\w*|normal_?|standard_normal|uniform_?|bernoulli_?|multinomial|dropout\w*|random\w*)\s*\(")


def _draws(stmts, drawing=frozenset()) -> bool:
    """Whether the statements draw random numbers (torchattacks' Jitter: `hat_z + std * torch.randn_like(hat_z)`
    between the input and the cost), themselves or through a function or method of the module that draws
    (drawing; DIFGSM's `self.input_diversity(x)`, whose resize and padding are drawn): such a computation stays the
    TODO, which raises. (The function of the input runs the statements again, after the program ran them.)"""
    for st in stmts:
        code = code_of(st)
        if _DRAW.search(code) or any(name in drawing for name in _CALLED_NAME.findall(code)):
            return True
    return False


_CALLED_NAME = re.compile(r"(?<![\w.])(?:self\.|cls\.)?(\w+)\s*\(")


def drawing_functions(module: cst.Module) -> frozenset:
    """The names of the module's functions and methods that draw random numbers, directly or by calling
    (`name(...)`, `self.name(...)`) another of them."""
    bodies: Dict[str, List[str]] = {}

    class _Defs(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            bodies.setdefault(node.name.value, []).append(code_of(node.body))

    module.visit(_Defs())
    drawing = {name for name, codes in bodies.items() if any(_DRAW.search(c) for c in codes)}
    changed = True
    while changed:
        changed = False
        for name, codes in bodies.items():
            if name not in drawing and any(set(_CALLED_NAME.findall(c)) & drawing for c in codes):
                drawing.add(name)
                changed = True
    return frozenset(drawing)


_LEAVING = (cst.Return, cst.Break, cst.Continue, cst.Global, cst.Nonlocal)


def _plain_branches(stmt: cst.CSTNode, needed: set) -> bool:
    """`if c: cost = -loss(out, t)` / `else: cost = loss(out, y)` (torchattacks' targeted and untargeted costs):
    an `if` (elif/else) of plain statements that binds each needed name on every path, so the function of the
    inputs can hold the whole statement and compute what the block computes. No statement in it may leave the
    block (return, break, continue) or bind outside it (global, nonlocal, yield)."""
    if not isinstance(stmt, cst.If) or not _plain_if(stmt):
        return False
    # a name bound on some paths only is one the statement also reads (torchattacks' Jitter: `if self.std != 0:
    # hat_z = hat_z + noise`): on the other paths it keeps its value from before, which the function then needs
    return not ((assigns(stmt) & needed) - _always_bound(stmt) - _free_reads(stmt))


def _free_reads(stmt: cst.CSTNode) -> set:
    """The names a statement reads before it binds them: an `if` branch's `Y = one_hot(labels); cost = loss(z, Y)`
    reads labels and z, not Y; a loop's body `out = model(v); cost = out.sum()` reads v, not out. Only a binding
    made on every path counts (`if c: out = ...` before a read of out leaves it read)."""
    if isinstance(stmt, cst.If):
        free = set(reads(stmt.test))
        blocks = [stmt.body] + ([stmt.orelse.body] if isinstance(stmt.orelse, cst.Else) else [])
        if isinstance(stmt.orelse, cst.If):
            free |= _free_reads(stmt.orelse)
        return free.union(*(_block_free_reads(b, set()) for b in blocks))
    if isinstance(stmt, cst.For):
        free = set(reads(stmt.iter)) | _block_free_reads(stmt.body, set(assigns(stmt.target)))
    elif isinstance(stmt, cst.While):
        free = set(reads(stmt.test)) | _block_free_reads(stmt.body, set())
    elif isinstance(stmt, cst.With):
        free = set().union(*(set(reads(item.item)) for item in stmt.items))
        bound = set().union(*(set(assigns(item.asname.name)) for item in stmt.items if item.asname is not None))
        return free | _block_free_reads(stmt.body, bound)
    else:
        return set(reads(stmt))
    if stmt.orelse is not None:
        free |= _block_free_reads(stmt.orelse.body, set())
    return free


def _block_free_reads(block, bound: set) -> set:
    free: set = set()
    for st in getattr(block, "body", ()):
        free |= _free_reads(st) - bound
        bound = bound | _always_bound(st)
    return free


def _reads_own_binding(body, chosen: List[int], needed: set) -> bool:
    """A name the function still needs from around it that one of its statements binds: in the function that name
    is a local, read before its binding (UnboundLocalError); such a computation stays the TODO."""
    return bool(needed & set().union(*(assigns(body[k]) for k in chosen)))


def _plain_if(stmt: cst.If) -> bool:
    blocks = [stmt.body]
    orelse = stmt.orelse
    while orelse is not None:
        blocks.append(orelse.body)
        orelse = orelse.orelse if isinstance(orelse, cst.If) else None
    for block in blocks:
        if not isinstance(block, cst.IndentedBlock):
            return False
        for st in block.body:
            if isinstance(st, cst.If):
                if not _plain_if(st):
                    return False
            elif not isinstance(st, cst.SimpleStatementLine) or any(isinstance(sm, _LEAVING) for sm in st.body) \
                    or "yield" in code_of(st).split():
                return False
    return True


def _always_bound(stmt: cst.CSTNode) -> set:
    """The names a statement binds on every path through it."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return set(assigns(stmt))
    if not isinstance(stmt, cst.If) or stmt.orelse is None:
        return set()

    def block(b) -> set:
        out: set = set()
        for st in b.body:
            out |= _always_bound(st)
        return out
    orelse = stmt.orelse
    other = _always_bound(orelse) if isinstance(orelse, cst.If) else block(orelse.body)
    return block(stmt.body) & other


def _flag(args, name: str) -> Optional[bool]:
    """A keyword flag's value when it is a literal (False when absent); None when it is not one."""
    if name not in args:
        return False
    v = code_of(args[name]).strip()
    return {"True": True, "False": False}.get(v)


def _replace_in(out: list, old: cst.BaseStatement, new: cst.BaseStatement) -> None:
    """Put `new` where `old` is in the block being rewritten (an entry or inside a rewritten entry's list)."""
    for k, st in enumerate(out):
        if st is old:
            out[k] = new if new is not None else []
            return
        if isinstance(st, list) and any(x is old for x in st):
            out[k] = [x if x is not old else new for x in st if x is not old or new is not None]
            return


def _general_form(body, i: int, target: str, args, indexed: bool, ms: str, generated=frozenset(),
                  drawing=frozenset(), outside=None, where: str = ""):
    """torch.autograd.grad of one output name over one or more input names, its result unpacked
    (`g, = ...`, `gx, gw = ...`), taken whole or indexed with [0] beyond the one-input form below:
    (statements replacing the call, indices of the inputs' bindings) or None (stays a TODO).
    An input y does not depend on gives None (allow_unused=True), zeros (materialize_grads=True),
    and stays a TODO otherwise (torch raises there)."""
    xs, out_expr = _names(args["inputs"]), args["outputs"]
    if isinstance(out_expr, (cst.Tuple, cst.List)) and len(out_expr.elements) == 1:
        out_expr = out_expr.elements[0].value       # [y] for one output
    if xs is None or isinstance(out_expr, (cst.Tuple, cst.List)) or (
            indexed and len(xs) == 1 and isinstance(out_expr, cst.Name)
            and "allow_unused" not in args and "materialize_grads" not in args
            and any(xs[0] in assigns(body[k]) for k in range(i))):
        return None     # the one-input `[0]` form of an input bound in the block: the rewrite below
    allow_unused, materialize = _flag(args, "allow_unused"), _flag(args, "materialize_grads")
    if allow_unused is None or materialize is None or len(set(xs)) != len(xs):
        return None
    # an output written as an expression ((x ** 3).sum()) is computed by the function as its result
    y = out_expr.value if isinstance(out_expr, cst.Name) else "output"
    if y == "output":
        body = list(body[:i]) + [cst.parse_statement(f"output = {code_of(out_expr).strip()}\n")] + list(body[i:])
        i += 1
    # where each input was last bound in the block; -1: before it (a parameter of the function)
    made = {x: [-1] + [k for k in range(i) if x in assigns(body[k])] for x in xs}
    first = min(m[-1] for m in made.values())
    # the statements after the inputs' bindings that y depends on (none may bind an input again)
    # (an input's last binding, between the first input's and the call, is a parameter's definition)
    last = {m[-1]: x for x, m in made.items()}
    needed, chosen, reached = {y}, [], set()
    for k in range(i - 1, first, -1):
        bound, changed = assigns(body[k]), mutated(body[k]) & needed
        if k in last:
            if (bound - {last[k]}) & needed:
                return None
            if last[k] in needed:
                reached.add(last[k])
                needed.discard(last[k])
            continue
        if bound & needed or changed:
            if not changed and not bound & set(xs) and _closure_values(body, k, i, set(xs), first, needed):
                needed -= bound
                continue
            if bound & set(xs) or not (isinstance(body[k], cst.SimpleStatementLine) or (
                    isinstance(body[k], cst.FunctionDef) and body[k].name.value in generated)
                    or _plain_branches(body[k], needed)):
                return None
            # a statement before an input's last binding reads another value under that name
            if any(made[x][-1] > k for x in set(reads(body[k])) & set(xs)):
                return None
            chosen.append(k)
            needed = (needed - bound) | _free_reads(body[k]) | changed
    if not chosen or y in needed or _reads_own_binding(body, chosen, needed - set(xs)):
        return None
    sens = code_of(args["grad_outputs"]).strip() if "grad_outputs" in args else "None"
    if sens.startswith(("[", "(")) and sens.endswith(("]", ")")) and sens.count(",") == 1 \
            and sens.rstrip("])").rstrip().endswith(","):
        sens = sens[1:-1].strip().rstrip(",").strip()   # [s] for one output
    inner = None
    if y != "output":
        sens, inner = _sens_inside(body, i, chosen, y, sens, outside, None, drawing)
    keep_y = _movable(body, i, chosen, y, sens, outside, None, drawing) if y != "output" else None
    if keep_y is None and _draws((body[k] for k in chosen), drawing):
        return None
    used = [x for x in xs if x in needed or x in reached]
    if len(used) < len(xs) and not (allow_unused or materialize):
        return None
    if not used:
        return None
    fn = f"_{y}_of_{'_'.join(used)}"
    ret = _returned(y, sens, inner, ms)
    fn_def = cst.parse_statement(f"def {fn}({', '.join(used)}{', _sens' if sens != 'None' else ''}):\n    pass\n")
    fn_def = fn_def.with_changes(body=cst.IndentedBlock(
        body=_function_body(body, chosen, keep_y is not None) + [cst.parse_statement(ret + "\n")]))
    # mindspore.grad gives one tensor for one position, a tuple for several
    positions = "0" if len(used) == 1 else "(" + ", ".join(str(j) for j in range(len(used))) + ")"
    call = (f"{ms}.grad({fn}, grad_position={positions})({', '.join(_variable(u, ms) for u in used)}"
            f"{', ' + sens if sens != 'None' else ''})")
    parts = []
    for x in xs:
        if x in used:
            j = used.index(x)
            parts.append(f"{fn}_grads[{j}]" if len(used) > 1 else f"{fn}_grads")
        else:
            parts.append(f"{ms}.ops.zeros_like({x})" if materialize else "None")
    value = parts[0] if indexed else "(" + ", ".join(parts) + ",)"
    comment = cst.EmptyLine(comment=cst.Comment(
        f"# msmigrate: torch.autograd.grad -> the gradient of {fn} (the computation from "
        f"{', '.join(used)} to {y}" + (", moved into it: run once, as in torch" if keep_y is not None else "")
        + ")" + ("; unused inputs get " + ("zeros" if materialize else "None") if len(used) < len(xs) else "")))
    grads = _forward_check(body, chosen, xs, where) + [cst.parse_statement(f"{fn}_grads = {call}\n")] \
        if keep_y is None else _moved_call(fn, used, sens, y, keep_y, ms)
    return ([fn_def.with_changes(leading_lines=[comment])] + grads + [cst.parse_statement(f"{target} = {value}\n")],
            sorted({m[-1] for m in made.values()} - {-1}), [] if keep_y is None else sorted(chosen), sorted(chosen))


_NOT_OBJECTS = frozenset(dir(builtins)) | {"ms", "mindspore", "ops", "nn", "np", "numpy", "math", "_ms_compat"}


def _called_roots(stmt: cst.CSTNode) -> set:
    """The names at the root of the called expressions: `model` of `model(x)`, `self` of `self.net.forward(x)`."""
    found: set = set()
    local: set = set()      # a lambda's parameters, a comprehension's variables: not the block's names

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            f = node.func
            while isinstance(f, cst.Attribute):
                f = f.value
            if isinstance(f, cst.Name):
                found.add(f.value)

        def visit_Lambda(self, node: cst.Lambda) -> None:
            local.update(p.name.value for p in node.params.params)

        def visit_CompFor(self, node: cst.CompFor) -> None:
            local.update(assigns(node.target) if not isinstance(node.target, cst.Name) else {node.target.value})
    stmt.visit(_Calls())
    return found - local


def _forward_check(body, chosen: List[int], inputs: List[str], where: str) -> List[cst.BaseStatement]:
    """Before the copy form's gradient: `_ms_compat.forward_run_again('module:line', model, self, ...)`, the objects
    the copied statements call, from around them, which raises MigrationError at run time where one holds a BatchNorm
    or Dropout in training mode (the copies would move its statistics, or draw, a second time)."""
    bound = set().union(*(assigns(body[k]) for k in chosen))
    # the objects whose calls run a forward: `model(x)`, `self.get_logits(x)`, `loss(out, y)` (a name read only on
    # some path, a label, may be unbound where the check runs)
    called = set().union(*(_called_roots(body[k]) for k in chosen))
    names = sorted(called - bound - set(inputs) - _NOT_OBJECTS)
    if not names or not where:
        return []
    return [cst.parse_statement(f"_ms_compat.forward_run_again({where!r}, {', '.join(names)})\n")]


def _without_requires_grad(stmt):
    """`x = (...).requires_grad_(True)`: MindSpore differentiates the function of x, x needs no flag
    (and Tensor.requires_grad_ inside a compiled step breaks its compilation)."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Assign)):
        return stmt
    value = stmt.body[0].value
    if (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "requires_grad_"):
        held = value.args[0].value if code_of(value.func).strip() == "_ms_compat.requires_grad_" else value.func.value
        return stmt.with_changes(body=[stmt.body[0].with_changes(value=held)])
    return stmt


