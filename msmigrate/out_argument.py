"""torch's `out=` keyword: `torch.add(a, b, out=c)` as a whole statement becomes
`c = ops.cast(<converted torch.add(a, b)>, c.dtype)`, and the value of a plain assignment
`r = torch.add(a, b, out=c)` becomes `r = c = ops.cast(...)` (torch returns `out` itself); an unpacking one
`v, i = torch.mode(x, 1, out=o)` becomes `v, i = o = ...`.

MindSpore functions return new tensors and take no output argument. torch writes the result into `out`,
resizing it to the result's shape and casting it to out's dtype; rebinding the name to the cast result
computes the same values. Other references to the same tensor do not see the change, and an `out=` that
is not a plain name (a slice, an attribute), or a call whose result is used otherwise, stays a TODO.

A function that returns a tuple (torch.sort, torch.max(x, dim), torch.linalg.svd...) takes a tuple of
tensors: `torch.sort(x, out=(v, i))` becomes `v, i = <converted torch.sort(x)>` (and `r = ...` becomes
`r = v, i = ...`, r the tuple of both). torch refuses out tensors whose dtype differs from the result's,
so no cast. `out=name` on such a function (a tuple held in a variable) becomes `name = ...` where the
variable holds freshly built tensors nothing else refers to (fresh_out_tuples.py); elsewhere a TODO: the
tensors it holds may have other names, which a rebinding would not update."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from . import records as R
from .callsite import UnsupportedSite, code_of


# functions whose result is always a tuple of tensors, and those whose result is one when a dim is given
TUPLE_RESULTS = frozenset(
    "torch." + n for n in (
        "sort topk kthvalue mode cummax cummin aminmax frexp svd qr slogdet geqrf triangular_solve lu lu_unpack "
        "histogram linalg.cholesky_ex linalg.inv_ex linalg.svd linalg.qr linalg.eig linalg.eigh linalg.slogdet "
        "linalg.lu linalg.lu_factor linalg.lu_factor_ex linalg.ldl_factor linalg.ldl_factor_ex linalg.solve_ex"
    ).split())
TUPLE_WITH_DIM = frozenset({"torch.max", "torch.min", "torch.median", "torch.nanmedian"})
_NOT_TENSORS = ("None", "True", "False")


def out_keyword(call: cst.Call) -> Optional[cst.Arg]:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == "out"), None)


def plain_target(target: cst.BaseAssignTargetExpression) -> bool:
    """A name, or a tuple/list of names (`v, i = ...`): an assignment target out= may be chained with."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements)
    return isinstance(target, cst.Name)


def is_out_statement(call) -> bool:
    """A whole statement `torch.f(..., out=name)` or `out=(v, i)` (visit_Expr marks these)."""
    if not isinstance(call, cst.Call):
        return False
    arg = out_keyword(call)
    return arg is not None and out_target(arg.value) is not None


def out_target(value: cst.BaseExpression) -> Optional[cst.BaseAssignTargetExpression]:
    """What `out=` rebinds: a plain name, or a tuple of plain names from a tuple/list literal; else None."""
    if isinstance(value, cst.Name):
        return value if value.value not in _NOT_TENSORS else None
    if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) >= 2 and all(
            isinstance(e, cst.Element) and isinstance(e.value, cst.Name) and e.value.value not in _NOT_TENSORS
            for e in value.elements):
        return cst.Tuple(elements=[cst.Element(cst.Name(e.value.value)) for e in value.elements], lpar=[], rpar=[])
    return None


def returns_tuple(call: cst.Call, qn: str) -> Optional[bool]:
    """torch.max(x): always a tuple; torch.max(x, 1) / torch.median(x, dim=0): a (values, indices) tuple;
    torch.max(x, y) with y a name: a dim or a tensor, None (the converted call tells), but one tensor where out=
    names the input x itself (`torch.max(m, v, out=m)`, AMSGrad's running maximum): a tensor cannot take the
    (values, indices) tuple, so torch's call is the elementwise maximum."""
    if qn in TUPLE_RESULTS:
        return True
    if qn not in TUPLE_WITH_DIM:
        return False
    if any(a.keyword is not None and a.keyword.value == "dim" for a in call.args):
        return True
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if len(positional) < 2:
        return False
    out = out_keyword(call)
    if (out is not None and isinstance(out.value, cst.Name) and isinstance(positional[0], cst.Name)
            and out.value.value == positional[0].value):
        return False
    second = positional[1]
    if isinstance(second, cst.UnaryOperation) and isinstance(second.operator, cst.Minus):
        second = second.expression
    return True if isinstance(second, cst.Integer) or qn.endswith("median") else None


def _decided_by_converted_code(code: str) -> Optional[bool]:
    """torch.max(x, y): ops.maximum (one tensor), ops.max (a tuple), both behind an isinstance test or
    _ms_compat.max_or_maximum (decided at run time: None)."""
    elementwise = "maximum(" in code or "minimum(" in code
    reduction = "ops.max(" in code or "ops.min(" in code
    if "_or_max" in code or "_or_min" in code or (elementwise and reduction):
        return None   # decided at run time
    return not elementwise


def convert(tr, original: cst.Call, updated: cst.Call, qn: str) -> Optional[cst.BaseExpression]:
    """The converted call without out=, cast to out's dtype (the statement becomes the assignment:
    tr._out_targets); None when the site is no such rebinding (the usual path then makes it a TODO)."""
    arg = out_keyword(updated)
    target = None if arg is None else out_target(arg.value)
    if target is None:
        return None
    # a tuple of names, or a variable holding fresh tensors only (fresh_out_tuples.py): rebound as a whole
    as_tuple = isinstance(target, cst.Tuple) or id(original) in tr._fresh_out_tuples
    tuple_result = returns_tuple(updated, qn)
    if tuple_result is not None and as_tuple != tuple_result:
        return _mismatch(tr, original, updated, qn, arg, as_tuple)
    m = R.lookup(qn)
    if m is None or (m.target is None and m.rule is None) or m.target in ("drop", "identity"):
        return None
    rest = [a for a in updated.args if a is not arg]
    if rest:
        rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    try:
        out = tr._apply(original, updated.with_changes(args=rest), m, qn, receiver=None)
    except UnsupportedSite:
        return None
    site = tr.sites[-1]
    site.status = R.DIFFERENCE
    name = code_of(target).strip()
    if tuple_result is None and _decided_by_converted_code(code_of(out)) != as_tuple:
        tr.sites.pop()   # the site becomes the TODO
        return _mismatch(tr, original, updated, qn, arg, as_tuple, at_run_time=True)
    if as_tuple:
        site.note = (f"out={code_of(arg.value).strip()} -> rebinding `{name} = ...` (torch requires out's dtypes to equal the "
                     f"results'); other references to the same tensors do not see the change"
                     + (f"; {site.note}" if site.note else ""))
        result = out
    else:
        site.note = (f"out={name} -> rebinding `{name} = ...` cast to {name}'s dtype (MindSpore functions return "
                     f"new tensors); other references to the same tensor do not see the change"
                     + (f"; {site.note}" if site.note else ""))
        result = tr._render_template(f"ops.cast({code_of(out).strip()}, {name}.dtype)")
        if _shared(tr, name):
            # `m = state["m"]; torch.max(m, v, out=m)`: the state's tensor must change, as torch writes into it
            tr.uses_compat = True
            site.note = (f"out={name}: the result written into the tensor `{name}` holds (_ms_compat.write_into), "
                         f"which the other holders share; {site.note}")
            result = cst.Call(func=tr._render_template("_ms_compat.write_into"),
                              args=[cst.Arg(cst.Name(name)), cst.Arg(result)])
    tr._out_targets[id(result)] = (target, result)   # the node kept alive: its id stays its own
    return result


def _shared(tr, name: str) -> bool:
    """A local name whose tensor other holders share (a dict entry, a loop over parameters: inplace_holders.py),
    or a parameter of the function (the caller's tensor: Adafactor's `torch.mul(r, c, out=output)`), outside graph
    code: a rebinding would leave those holders unchanged."""
    scope = tr._scopes[-1] if tr._scopes else {}
    return (name in scope.get("held", ()) or name in scope.get("params", ())) and not tr._in_cell_code()


def _mismatch(tr, original, updated, qn: str, arg: cst.Arg, as_tuple: bool,
              at_run_time: bool = False) -> cst.BaseExpression:
    """out= of the wrong kind for the call's result (or one only known at run time): a TODO that says so."""
    out = code_of(arg.value).strip()
    if as_tuple:
        why = (f"out={out}: a tuple of outputs where {qn} may return one tensor (torch raises then): "
               + ("pass dim= as a keyword, or assign the result" if qn in TUPLE_WITH_DIM else "assign the result"))
    else:
        why = (f"out={out}: {qn} here " + ("may return (decided at run time)" if at_run_time else "returns")
               + " a tuple, and only a tuple/list literal of names, or a variable "
               "assigned fresh tensors (torch.empty...) just before, can be rebound (its tensors may have other names): "
               "assign the result (`v, i = ...`)")
    return tr._todo(original, qn, why, updated)
