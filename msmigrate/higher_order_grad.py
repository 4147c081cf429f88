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
name computed from it by plain statements of the same block. Anything else stays the TODO."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from .callsite import code_of
from .train_loop import assigns, reads

API = "torch.autograd.grad"
VARIABLE = "torch.autograd.Variable"
PLACEHOLDER = "_ms_compat.Unconverted"


def _unguarded(stmt: cst.CSTNode) -> cst.CSTNode:
    """The statement inside the import guard of a module-level definition (placeholders.guarded_definition:
    `try: T = ... except Exception as _ms_error: T = _ms_compat.unconverted_definition(...)`), else itself."""
    if (isinstance(stmt, cst.Try) and len(stmt.body.body) == 1 and len(stmt.handlers) == 1
            and not stmt.orelse and not stmt.finalbody
            and "unconverted_definition" in code_of(stmt.handlers[0].body)):
        return stmt.body.body[0].with_changes(leading_lines=stmt.leading_lines)
    return stmt


def _placeholder_args(stmt: cst.CSTNode, lazy_calls: Optional[Dict[str, cst.Call]] = None
                      ) -> Optional[Tuple[str, cst.Call, bool]]:
    """`T = _ms_compat.Unconverted('torch.autograd.grad', where, why)(...)[0]` -> (T, the call, indexed).
    A module-level placeholder written without its call (`Unconverted(...)[0]`) gets it from lazy_calls."""
    stmt = _unguarded(stmt)
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1
            and isinstance(stmt.body[0].targets[0].target, cst.Name)):
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
    return stmt.body[0].targets[0].target.value, value, indexed


def _where(call: cst.Call) -> str:
    return code_of(call.func.args[1].value).strip().strip("'\"") if len(call.func.args) > 1 else ""


def rewrite_block(body: List[cst.BaseStatement], ms: str,
                  lazy_calls: Optional[Dict[str, cst.Call]] = None) -> Tuple[List[cst.BaseStatement], List[str]]:
    """The block with each clear `torch.autograd.grad` placeholder replaced; returns the new block and
    the placeholders' `module:line` that are now converted (an input bound by `Variable(data,
    requires_grad=True)` becomes its data: among them too). lazy_calls: `module:line` -> the converted call
    of a placeholder written without its arguments (a module-level definition)."""
    out = list(body)
    done: List[str] = []
    for i, stmt in enumerate(body):
        found = _placeholder_args(stmt, lazy_calls)
        if found is None:
            continue
        stmt = _unguarded(stmt)
        target, call, indexed = found
        names = ["outputs", "inputs", "grad_outputs"]
        args = {}
        for k, a in enumerate(call.args):
            key = a.keyword.value if a.keyword is not None else (names[k] if k < len(names) else None)
            if key is None or a.star:
                args = None
                break
            args[key] = a.value
        if not args or "outputs" not in args or "inputs" not in args:
            continue
        if any(k not in ("outputs", "inputs", "grad_outputs", "create_graph", "retain_graph", "only_inputs")
               for k in args):
            continue     # allow_unused, is_grads_batched: stays a TODO
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
            bound = assigns(body[k])
            if bound & needed:
                if not isinstance(body[k], cst.SimpleStatementLine):
                    chosen = None
                    break
                chosen.append(k)
                needed = (needed - bound) | set(reads(body[k]))
        if not chosen or y in needed:
            continue
        fn = f"_{y}_of_{x}"
        sens = code_of(args["grad_outputs"]).strip() if "grad_outputs" in args else "None"
        # the vector-Jacobian product as the gradient of sum(y * grad_outputs): GradOperation's own
        # sens_param refuses a sensitivity of dynamic shape in GRAPH mode (a compiled train step)
        ret = f"return ({y} * _sens).sum()" if sens != "None" else f"return {y}"
        fn_def = cst.parse_statement(f"def {fn}({x}{', _sens' if sens != 'None' else ''}):\n    pass\n")
        fn_def = fn_def.with_changes(body=cst.IndentedBlock(
            body=[body[k].with_changes(leading_lines=[]) for k in reversed(chosen)]
            + [cst.parse_statement(ret + "\n")]))
        grad = f"{ms}.ops.GradOperation()({fn})({x}{', ' + sens if sens != 'None' else ''})"
        comment = cst.EmptyLine(comment=cst.Comment(
            f"# msmigrate: torch.autograd.grad -> the gradient of {fn} (the computation from {x} to {y}), "
            "differentiable again by an enclosing value_and_grad"))
        kept = [ln for ln in stmt.leading_lines if not (ln.comment and API in ln.comment.value)]
        binding = out[made[-1]]
        if not isinstance(binding, list):
            data = _variable_data(binding, x, lazy_calls or {})
            if data is not None:
                binding, variable_where = data
                done.append(variable_where)
            out[made[-1]] = _without_requires_grad(binding)
        out[i] = [fn_def.with_changes(leading_lines=kept + [comment]),
                  cst.parse_statement(f"{target} = {grad}\n")]
        done.append(_where(call))
    flat: List[cst.BaseStatement] = []
    for st in out:
        flat.extend(st if isinstance(st, list) else [st])
    return flat, done


def _without_requires_grad(stmt):
    """`x = (...).requires_grad_(True)`: MindSpore differentiates the function of x, x needs no flag
    (and Tensor.requires_grad_ inside a compiled step breaks its compilation)."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Assign)):
        return stmt
    value = stmt.body[0].value
    if (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "requires_grad_"):
        return stmt.with_changes(body=[stmt.body[0].with_changes(value=value.func.value)])
    return stmt


def _variable_data(stmt: cst.CSTNode, x: str, lazy_calls: Dict[str, cst.Call]):
    """`x = Variable(data, requires_grad=True)` (a placeholder: no mapping gives gradients w.r.t. data) where
    autograd.grad differentiates with respect to x: `x = data`, the gradient being the function of x above.
    Returns (the statement, the placeholder's `module:line`) or None."""
    inner = _unguarded(stmt)
    if not (isinstance(inner, cst.SimpleStatementLine) and len(inner.body) == 1
            and isinstance(inner.body[0], cst.Assign) and len(inner.body[0].targets) == 1
            and isinstance(inner.body[0].targets[0].target, cst.Name)
            and inner.body[0].targets[0].target.value == x):
        return None
    value = inner.body[0].value
    ph = value.func if isinstance(value, cst.Call) and isinstance(value.func, cst.Call) else value
    if not (isinstance(ph, cst.Call) and code_of(ph.func).strip() == PLACEHOLDER and len(ph.args) > 1
            and code_of(ph.args[0].value).strip().strip("'\"") == VARIABLE):
        return None
    where = code_of(ph.args[1].value).strip().strip("'\"")
    call = value if ph is not value else lazy_calls.get(where)
    if call is None:
        return None
    data = None
    for k, a in enumerate(call.args):
        key = a.keyword.value if a.keyword is not None else ("data" if k == 0 else None)
        if a.star or key not in ("data", "requires_grad", "volatile"):
            return None
        if key == "data":
            data = a.value
    if data is None:
        return None
    comments = [ln for ln in stmt.leading_lines if not (ln.comment and VARIABLE in ln.comment.value)]
    return inner.with_changes(body=[inner.body[0].with_changes(value=data)], leading_lines=comments), where
