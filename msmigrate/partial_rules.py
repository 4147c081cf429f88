"""functools.partial of a torch function whose record is a rule (`partial(F.softmax, dim=-1)`, as
x-transformers builds its attention function): the rule is run on a call of the function with a
stand-in input, and the partial keeps the converted function and keywords when the rule left that
input as the first positional argument of a plain call (`partial(ops.softmax, axis=-1)`).

`partial(torch.amp.autocast, 'cuda', enabled=False)` (vector-quantize's FSQ and LFQ: `ctx = partial(autocast,
...) if force_f32 else nullcontext`, then `with ctx():` in forward): _ms_compat.autocast is a null context
that takes any arguments, so the partial is that class itself. Compiled, the jit_class _ms_compat.partial
cannot call a class ("The object is not callable", naming no line; measured on 2.10); the class compiles."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from . import records as R
from .callsite import BoundCall, RuleContext, UnsupportedSite, apply_mapping, code_of, emit_call

STAND_IN = "_msmigrate_partial_input"


def convert(tr, original: cst.Call, updated: cst.Call, qn: str, m) -> Optional[cst.Call]:
    """The converted partial(...) call, or None (left as it is: the function is then a value whose
    keywords are not translated, which the site's note says)."""
    rest = list(updated.args[1:])
    if not rest or any(a.keyword is None or a.star for a in rest):
        return None     # positional arguments would bind the input itself
    inner = cst.Call(func=original.args[0].value, args=[cst.Arg(cst.Name(STAND_IN))] + rest)
    try:
        bound = BoundCall(inner, m.args)
        result = m.rule(RuleContext(tr, bound, original, None))
        if result is None or isinstance(result, str):
            target = result if isinstance(result, str) else m.target
            if not target or target.startswith(("expr:", "drop", "identity", "method:")):
                return None
            apply_mapping(bound, m)
            result = emit_call(bound, tr.render(target), m.target_args)
    except UnsupportedSite:
        return None
    if isinstance(result, cst.Call) and m.target_args and code_of(result.func).strip() == code_of(
            tr.render(m.target)).strip():
        # the rule wrote positional arguments after the input: by the target's parameter names
        args = list(result.args)
        for j in range(1, len(args)):
            if args[j].keyword is None and not args[j].star and j < len(m.target_args):
                args[j] = args[j].with_changes(keyword=cst.Name(m.target_args[j]),
                                               equal=cst.AssignEqual(cst.SimpleWhitespace(""),
                                                                     cst.SimpleWhitespace("")))
        result = result.with_changes(args=args)
    if not (isinstance(result, cst.Call) and result.args and result.args[0].keyword is None
            and isinstance(result.args[0].value, cst.Name) and result.args[0].value.value == STAND_IN
            and all(a.keyword is not None and STAND_IN not in code_of(a) for a in result.args[1:])
            and STAND_IN not in code_of(result.func)):
        return None
    tr._record(original, qn, code_of(result.func).strip(), m.status,
               (m.note + "; " if m.note else "") + "inside functools.partial")
    return updated.with_changes(args=[updated.args[0].with_changes(value=result.func)] + list(result.args[1:]))


# torch context managers whose converted class is a null context that takes any arguments (runtime.py)
NULL_CONTEXTS = ("torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast")


def null_context(tr, original: cst.Call, updated: cst.Call, qn: str) -> Optional[cst.BaseExpression]:
    """`partial(torch.amp.autocast, ...)` -> `_ms_compat.autocast` (the module docstring), or None."""
    if qn not in NULL_CONTEXTS or original.args[0].keyword is not None or original.args[0].star \
            or any(a.star for a in original.args[1:]):
        return None
    tr._record(original, qn, "_ms_compat.autocast", R.DIFFERENCE,
               "inside functools.partial: the class itself, a null context whatever the arguments bound")
    return tr._render_template("_ms_compat.autocast")
