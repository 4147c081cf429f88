"""torch.autograd.Function subclasses that only checkpoint: called as the function they recompute.

Diffusion UNets (openai/improved-diffusion's and guided-diffusion's nn.py, latent-diffusion's util.py) save memory
with a Function whose forward stores the function it is given and its first N arguments on ctx and returns that
function's result computed under no_grad, and whose backward calls the stored function again on detached copies
of those inputs and returns `(None, None)` followed by torch.autograd.grad of that recomputation over the inputs
and the remaining arguments (the parameters the function reads).

Its values are F(*ARGS[:N]) and its gradients those of that call (the backward recomputes it and
differentiates over its inputs and the parameters it reads): checkpointing trades compute for memory and changes no
number. The converted `CheckpointFunction.apply(f, n, *args)` (a Function's apply refuses GRAPH mode, and the
backward's torch.autograd.grad over a recomputation is not converted) is `_ms_compat.recomputed_call(f, n, *args)`:
`f(*args[:n])`, differentiated by MindSpore as any call. Recognised only in this exact shape: forward(ctx, F, N,
*ARGS) storing `ctx.A = F` and `ctx.B = list(ARGS[:N])` (or `ARGS[:N]`) and returning what `ctx.A(*ctx.B)` (or
`F(*ARGS[:N])`) gave, under no_grad and nothing else computed; backward calling `ctx.A` again and
torch.autograd.grad, returning `(None, None) + <the gradients>`.
"""
from __future__ import annotations

from typing import Optional, Set

import libcst as cst


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node).strip()


def _staticmethod(cls: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
    for st in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ():
        if isinstance(st, cst.FunctionDef) and st.name.value == name and \
                any(_code(d.decorator) == "staticmethod" for d in st.decorators):
            return st
    return None


def _simple_statements(body: cst.BaseSuite):
    """The small statements of a body, `with` blocks opened (their items returned apart); None if any other
    compound statement."""
    out, withs = [], []
    for st in body.body if isinstance(body, cst.IndentedBlock) else ():
        if isinstance(st, cst.SimpleStatementLine):
            out.extend(st.body)
        elif isinstance(st, cst.With):
            withs.extend(_code(i.item) for i in st.items)
            inner = _simple_statements(st.body)
            if inner is None:
                return None
            out.extend(inner[0])
            withs.extend(inner[1])
        else:
            return None
    return out, withs


def _is_recompute_forward(fn: cst.FunctionDef) -> Optional[str]:
    """`ctx.A` (the stored function's attribute) when forward has the checkpointing shape."""
    p = fn.params
    if len(p.params) != 3 or not isinstance(p.star_arg, cst.Param) or p.kwonly_params or p.star_kwarg:
        return None
    ctx, f, n = (x.name.value for x in p.params)
    args = p.star_arg.name.value
    parts = _simple_statements(fn.body)
    if parts is None:
        return None
    stmts, withs = parts
    if not withs or not all(w.endswith("no_grad()") for w in withs):
        return None
    fn_attr, inputs_attr, result = None, None, None
    slices = {f"{args}[:{n}]", f"list({args}[:{n}])"}
    for st in stmts:
        if isinstance(st, cst.Assign) and len(st.targets) == 1:
            target, value = _code(st.targets[0].target), _code(st.value)
            if value == f and target.startswith(ctx + "."):
                fn_attr = target
            elif value in slices and target.startswith(ctx + "."):
                inputs_attr = target
            elif value in (f"{args}[{n}:]", f"list({args}[{n}:])") and target.startswith(ctx + "."):
                pass
            elif fn_attr and inputs_attr and value in (f"{fn_attr}(*{inputs_attr})", f"{f}(*{inputs_attr})") \
                    and isinstance(st.targets[0].target, cst.Name):
                result = target
            elif value == f"{f}(*{args}[:{n}])" and isinstance(st.targets[0].target, cst.Name):
                fn_attr = fn_attr or f
                result = target
            else:
                return None
        elif isinstance(st, cst.Return) and st.value is not None and result and _code(st.value) == result:
            return fn_attr
        else:
            return None
    return None


def _is_recompute_backward(fn: cst.FunctionDef, fn_attr: str) -> bool:
    text = _code(fn.body)
    if f"{fn_attr}(" not in text or "autograd.grad(" not in text:
        return False
    returns = [st for line in (fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ())
               if isinstance(line, cst.SimpleStatementLine) for st in line.body if isinstance(st, cst.Return)]
    return len(returns) == 1 and returns[0].value is not None and \
        _code(returns[0].value).replace(" ", "").startswith("(None,None)+")


def recompute_functions(module: cst.Module) -> Set[str]:
    """Names of this module's classes that are checkpointing Functions (the shape above)."""
    out: Set[str] = set()
    for cls in module.body:
        if not isinstance(cls, cst.ClassDef) or not any(_code(b.value).endswith("Function") for b in cls.bases):
            continue
        fwd, bwd = _staticmethod(cls, "forward"), _staticmethod(cls, "backward")
        if fwd is None or bwd is None:
            continue
        fn_attr = _is_recompute_forward(fwd)
        if fn_attr and _is_recompute_backward(bwd, fn_attr):
            out.add(cls.name.value)
    return out
