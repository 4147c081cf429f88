"""torch's in-place functions (`torch.relu_(x)`, `torch.clamp_(x, 0, 1)`, `torch.sigmoid_(x)`): a whole
statement on a local tensor name becomes `x = <converted torch.relu(x)>`, the rule the in-place methods follow
(msmigrate/inplace_forms.py: MindSpore's in-place arithmetic leaves the tensor unchanged on CPU PyNative).

The out-of-place form is the `torch.NAME` record (the receiver its first parameter) or else the `Tensor.NAME`
record; a record is made for every public torch in-place function whose out-of-place form is converted.
An assignment's whole value `y = torch.relu_(x)` (or `input=x`) becomes `y = x = <...>` where x is read
nowhere else in the statement and changed in place nowhere else in its function (msmigrate/inplace_values.py).
Anywhere else (`y = 2 * torch.relu_(x)`, a receiver that is no plain name) the site is a TODO saying how to
rewrite it. Proven by tests/parity/test_torch_inplace_functions.py.
"""
from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from ..callsite import UnsupportedSite
from ..inplace_forms import NOT_A_REBINDING, needs_cast_back
from ..records import DIFFERENCE, REGISTRY, Mapping, rule

T = "tests/parity/test_torch_inplace_functions.py::test_torch_inplace_functions"
_RECEIVER_PARAMS = ("input", "self", "x")
# random in-place forms: their values cannot be compared with torch's, so they stay TODOs here
_RANDOM = frozenset({"dropout_", "alpha_dropout_", "feature_dropout_", "feature_alpha_dropout_", "rrelu_"})
# torch.fill_(x, v) / torch.zero_(x): their out-of-place forms have other names
_OTHER_NAME = {"fill_": "torch.fill", "zero_": "torch.zeros_like"}


def _usable(m: Optional[Mapping]) -> bool:
    return m is not None and (m.target is not None or m.rule is not None)


def out_of_place(name: str, namespace: str = "torch") -> Optional[Tuple[Mapping, bool]]:
    """The out-of-place record of NAMESPACE.NAME_ and whether it is a function (else a Tensor method)."""
    if namespace == "torch" and name in _OTHER_NAME:
        f = REGISTRY.get(_OTHER_NAME[name])
        return (f, True) if _usable(f) else None
    if not name.endswith("_") or name.endswith("__") or name in NOT_A_REBINDING or name in _RANDOM:
        return None
    base = name[:-1]
    f = REGISTRY.get(f"{namespace}.{base}")
    if _usable(f) and f.args and f.args[0] in _RECEIVER_PARAMS:
        return f, True
    if namespace != "torch":
        return None
    m = REGISTRY.get("Tensor." + base)
    if _usable(m):
        return m, False
    return None


def _outside(name: str, namespace: str = "torch") -> str:
    short = "F" if namespace == "torch.nn.functional" else namespace
    return (f"in-place `{short}.{name}(x, ...)` outside a whole statement on a local tensor name: MindSpore's in-place "
            f"arithmetic leaves the tensor unchanged on CPU PyNative; write `x = {short}.{name[:-1]}(x, ...)`, "
            f"rebinding every name that must see the new value")


def _rebinding(name: str, base: Mapping, function_form: bool, namespace: str = "torch"):
    def convert(ctx):
        tr, call = ctx.tr, ctx.bound.call
        # the changed tensor: the first positional argument, or `input=x` (torch.relu_(input=x))
        at = 0 if call.args and call.args[0].keyword is None else next(
            (i for i, a in enumerate(call.args) if a.keyword is not None and a.keyword.value in _RECEIVER_PARAMS), None)
        first = call.args[at] if at is not None else None
        if (id(ctx.original) not in tr._inplace_stmt_calls or first is None or first.star
                or not isinstance(first.value, cst.Name)):
            raise UnsupportedSite(_outside(name, namespace))
        x = first.value
        scope = tr._scopes[-1] if tr._funcs and tr._scopes else None
        if scope is not None and x.value not in scope["shadows"] | scope["bound"]:
            # a name of an enclosing scope: `x = ...` here would make it local (UnboundLocalError)
            raise UnsupportedSite(_outside(name, namespace))
        before = len(tr.sites)
        if function_form:
            out = tr._apply(ctx.original.with_changes(func=cst.Name(name[:-1])),
                            call.with_changes(func=cst.Name(name[:-1])), base, base.source, receiver=None)
        else:
            rest = list(call.args[:at]) + list(call.args[at + 1:])
            method = call.with_changes(func=cst.Attribute(value=x, attr=cst.Name(name[:-1])), args=rest)
            out = tr._apply(ctx.original, method, base, base.source, receiver=x)
        del tr.sites[before:]   # reported once, as torch.NAME_
        if needs_cast_back(name):   # a bool result: torch keeps x's dtype
            from ..callsite import code_of
            out = ctx.expr(f"ops.cast({code_of(out).strip()}, {x.value}.dtype)")
        tr._out_targets[id(out)] = (x, out)   # the statement becomes `x = <out>` (as for out=)
        return out

    return convert


def _register() -> None:
    from ..torch_api_surface import SURFACE

    for namespace in ("torch", "torch.nn.functional"):
        for name in sorted(SURFACE[namespace]):
            source = f"{namespace}.{name}"
            if source in REGISTRY:
                continue
            found = out_of_place(name, namespace)
            if found is None:
                continue
            base, function_form = found
            args = base.args if function_form else ("input",) + tuple(base.args)
            short = "F" if namespace == "torch.nn.functional" else namespace
            rule(source, base.target, args=args, status=DIFFERENCE, test=T,
                 note=f"in place: a whole statement `{short}.{name}(x, ...)` on a local tensor becomes `x = "
                      f"<{base.source} converted>` (MindSpore's in-place arithmetic leaves the tensor unchanged on CPU "
                      f"PyNative); other references to the same tensor do not see the change; elsewhere a TODO")(
                _rebinding(name, base, function_form, namespace))


_register()
