"""einops (rearrange, repeat, reduce, einsum, pack/unpack, parse_shape, the torch layers).

einops has no MindSpore backend. A call whose pattern is a string literal (and whose tensor
is a name) is translated where it stands into reshape / ops.transpose / ops.broadcast_to /
reductions over `x.shape`, which GRAPH mode compiles like any other code; every other call
goes to the emitted helpers (templates/compat_parts/einops.py), which parse the pattern
from the tensor's shape. Both read the same parser and planner: the pure-Python first part
of that template, loaded here.
"""
from __future__ import annotations

import re
import types
from pathlib import Path
from typing import Dict, List, Optional

import libcst as cst

from ..callsite import code_of, literal_string
from ..records import mapping, rule

T = "tests/parity/test_einops.py"
_TEMPLATE = Path(__file__).resolve().parent.parent / "templates" / "compat_parts" / "einops.py"
_EXECUTION_MARK = "# ---------------------------------------------------------------- MindSpore execution"


def _load_planner() -> types.ModuleType:
    """The template's parsing/planning part (plain Python, no MindSpore) as a module."""
    text = _TEMPLATE.read_text(encoding="utf-8")
    module = types.ModuleType("msmigrate._einops_planner")
    exec(compile(text.split(_EXECUTION_MARK, 1)[0], str(_TEMPLATE), "exec"), module.__dict__)
    return module


PLANNER = _load_planner()

# reduction name -> the mindspore.ops function taking (x, axes)
# the empty-safe reductions (templates/compat_parts/empty_reductions.py): an axis of length 0 reduces to
# torch's 0 / nan / 1 / False, and max / min raise as einops on torch does
_REDUCTIONS = {"mean": "_ms_compat.reduce_mean", "sum": "_ms_compat.reduce_sum", "max": "_ms_compat.reduce_amax",
               "min": "_ms_compat.reduce_amin", "prod": "_ms_compat.reduce_prod", "any": "_ms_compat.reduce_any",
               "all": "ops.all"}
_SIMPLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$|^\d+$")


def _product(factors: List[str]) -> str:
    if not factors:
        return "1"
    if len(factors) == 1:
        return factors[0]
    # `x.shape[1] // 2` is parenthesised as a factor; names and x.shape[i] are not
    return " * ".join(f"({f})" if " " in f else f for f in factors)


def _shape_code(parts: List[object]) -> str:
    """A reshape argument from sizes (str) and, at most once, a slice of shapes (a 1-tuple holding the
    slice's code): `a, b, c` or `(a, b) + x.shape[1:-1] + (c,)`."""
    if not any(isinstance(p, tuple) for p in parts):
        return ", ".join(parts) if parts else "()"
    pieces, run = [], []
    for p in parts:
        if isinstance(p, tuple):
            if run:
                pieces.append(f"({', '.join(run)}{',' * (len(run) == 1)})")
                run = []
            pieces.append(p[0])
        else:
            run.append(p)
    if run:
        pieces.append(f"({', '.join(run)}{',' * (len(run) == 1)})")
    return " + ".join(pieces)


def static_code(tensor: str, pattern: str, operation: str, reduction: Optional[str],
                lengths: Dict[str, str]) -> str:
    """MindSpore code doing einops' `operation` with a literal pattern on the tensor named
    `tensor`. `lengths`: axis name -> source code of its length. Raises ValueError for a pattern
    that is not valid einops (the helper then raises einops' error at run time).

    An ellipsis is planned as one axis: the first reshape merges the dimensions it covers, the
    last one puts them back (`x.shape[1:-1]`), so the code between has a known number of axes."""
    left = PLANNER.einops_parse_side(pattern.split("->")[0]) if "->" in pattern else ()
    ell = PLANNER.EINOPS_ELLIPSIS
    # '(...)' on the right merges the ellipsis' dimensions into one; a bare '...' puts them back as they were.
    # Planned as one axis, both are the same group: the parse of the right side tells them apart
    merged_ell = "->" in pattern and any(g != ell and ell in g
                                         for g in PLANNER.einops_parse_side(pattern.split("->")[1]))
    k = left.index(ell) if ell in left else -1          # input dimensions before the ellipsis
    m = len(left) - k - 1                                # and after it
    ell_shape = (f"{tensor}.shape[{k or ''}:{-m if m else ''}]".replace("[:]", ""),) if k >= 0 else None
    recipe = PLANNER.einops_recipe(pattern, operation, len(left), tuple(lengths))
    axes, in_groups, reduced, order, out_groups = recipe
    block = axes.index(ell + "0") if k >= 0 else -1      # the elementary axis standing for the ellipsis
    n_in = sum(len(g) for g in in_groups)
    size: List[Optional[str]] = []
    for a in axes:
        size.append(str(a[2]) if isinstance(a, tuple) else lengths.get(a))
    need_init = k >= 0
    init: List[str] = [""] * n_in
    # one unknown length among the split axes reads best as -1 in the reshape (the ellipsis takes it)
    unknown_count = 2 if k >= 0 else sum(1 for g in in_groups if len(g) != 1 for i in g if size[i] is None)
    for dim, group in enumerate(in_groups):
        whole = f"{tensor}.shape[{dim if k < 0 or dim < k else dim - len(left)}]"
        if group == (block,):
            size[block] = init[block] = "-1"
            continue
        if len(group) == 1 and size[group[0]] is None:
            size[group[0]] = whole
            init[group[0]] = whole
            continue
        need_init = True        # a split, or a length given for a plain axis (checked by the reshape)
        known = [size[i] for i in group if size[i] is not None]
        for i in group:
            if size[i] is None:
                divisor = _product(known)
                size[i] = f"{whole} // {'(' + divisor + ')' if ' ' in divisor else divisor}" if known else whole
                init[i] = "-1" if unknown_count == 1 else size[i]
            else:
                init[i] = size[i]
    code = tensor
    if need_init:
        code = f"{code}.reshape({', '.join(init)})"
    # a reshape right after the first one makes it unneeded: reshape(reshape(x, a), b) is reshape(x, b)
    unchanged_since_init = tensor
    if reduced:
        if reduction not in _REDUCTIONS:
            raise ValueError(f"reduction {reduction!r}")
        axes_code = f"({reduced[0]},)" if len(reduced) == 1 else str(tuple(reduced))
        code = f"{_REDUCTIONS[reduction]}({code}, {axes_code})"
        unchanged_since_init = None
    kept = [i for i in range(n_in) if i not in reduced]
    perm = tuple(kept.index(i) for i in order)
    if perm != tuple(range(len(perm))):
        code = f"ops.transpose({code}, {perm})"
        unchanged_since_init = None
    flat_out = [i for g in out_groups for i in g]
    if len(flat_out) != len(order):      # repeat: new axes of length 1, broadcast to their lengths
        expand = [size[i] if i < n_in else "1" for i in flat_out]
        target = ["-1" if i < n_in else size[i] for i in flat_out]
        code = f"ops.broadcast_to({unchanged_since_init or code}.reshape({', '.join(expand)}), " \
               f"({', '.join(target)}{',' * (len(target) == 1)}))"
        unchanged_since_init = None
    if any(len(g) != 1 for g in out_groups) or block in flat_out:
        final: List[object] = []
        for g in out_groups:
            if g == (block,) and not merged_ell:
                final.append(ell_shape)          # the ellipsis' dimensions, back as they were
            elif block in g:
                final.append("-1")               # (c ...) or (...): the only length not written out
            else:
                final.append(_product([size[i] for i in g]))
        code = f"{unchanged_since_init or code}.reshape({_shape_code(final)})"
    return code


def _helper_call(ctx, target: str) -> cst.BaseExpression:
    """The same call with the einops function replaced by the emitted helper of the same signature."""
    return ctx.bound.call.with_changes(func=ctx.render(target))


_PLACEHOLDER = "_einops_input_"


def _pattern_rule(operation: str, helper: str):
    def fn(ctx):
        b = ctx.bound
        tensor = b.value("tensor")
        pattern = literal_string(b.value("pattern"))
        reduction = literal_string(b.value("reduction")) if operation == "reduce" else None
        names = [n for n in b.order if not n.startswith("__") and n not in ("tensor", "pattern", "reduction")]
        lengths = {n: b.code(n) for n in names}
        literal = (tensor is not None and not b.starred and pattern is not None
                   and not any(n.startswith("__pos") for n in b.order)
                   and all(_SIMPLE.match(v) for v in lengths.values())
                   and (operation != "reduce" or reduction is not None)
                   and ctx.tr._receiver_kind(tensor) != "other")    # a list or tuple: the helper stacks it
        if literal:
            try:
                code = static_code(_PLACEHOLDER, pattern, operation, reduction, lengths)
            except ValueError:
                code = None   # the helper handles it (and raises einops' error where einops does)
            tensor_code = code_of(tensor).strip()
            if code is not None and (_SIMPLE.match(tensor_code) or code.count(_PLACEHOLDER) == 1):
                # an expression is written once: only where the code needs no shape of it
                if not _SIMPLE.match(tensor_code) and not isinstance(tensor, (cst.Call, cst.Subscript)):
                    tensor_code = f"({tensor_code})"
                return ctx.expr(code.replace(_PLACEHOLDER, tensor_code))
        return _helper_call(ctx, helper)
    fn.handles_starred = True
    fn.__name__ = fn.__qualname__ = f"{operation}_pattern"
    return fn


_NOTE = ("einops has no MindSpore backend: a literal pattern becomes reshape/ops.transpose/"
         "ops.broadcast_to/reduction code over x.shape; other calls use _ms_compat.{helper} (same arguments; "
         "the pattern is planned from the shape, at compile time in GRAPH mode). A list of tensors is stacked "
         "by the helper only: a name bound to a list needs the helper call")
for _op, _args in (("rearrange", ("tensor", "pattern")), ("repeat", ("tensor", "pattern")),
                   ("reduce", ("tensor", "pattern", "reduction"))):
    _helper = f"_ms_compat.einops_{_op}"
    for _src in (f"einops.{_op}", f"einops.einops.{_op}"):
        rule(_src, _helper, args=_args, note=_NOTE.format(helper=f"einops_{_op}"),
             test=f"{T}::test_{_op}")(_pattern_rule(_op, _helper))


def _same_call(helper: str):
    def fn(ctx):
        return _helper_call(ctx, helper)
    fn.handles_starred = True
    fn.__name__ = fn.__qualname__ = f"call_{helper.rsplit('.', 1)[1]}"
    return fn


for _name, _args, _note in (
        ("einsum", (), "MindSpore's einsum has no CPU kernel: _ms_compat.einops_einsum contracts pairwise with "
                       "transposes, reshapes and batched matmuls (diagonals, i.e. an axis repeated in one input, "
                       "raise)"),
        ("pack", ("tensors", "pattern"), "_ms_compat.einops_pack: reshape + ops.cat; returns the packed shapes"),
        ("unpack", ("tensor", "packed_shapes", "pattern"), "_ms_compat.einops_unpack: ops.narrow + reshape"),
        ("parse_shape", ("x", "pattern"), "_ms_compat.einops_parse_shape: a dict of axis lengths")):
    for _src in (f"einops.{_name}", f"einops.einops.{_name}", f"einops.packing.{_name}"):
        if _src.startswith("einops.packing.") and _name not in ("pack", "unpack"):
            continue
        rule(_src, f"_ms_compat.einops_{_name}", args=_args, note=_note,
             test=f"{T}::test_{'pack' if _name == 'unpack' else _name}")(_same_call(f"_ms_compat.einops_{_name}"))

for _layer, _args in (("Rearrange", ("pattern",)), ("Reduce", ("pattern", "reduction"))):
    mapping(f"einops.layers.torch.{_layer}", f"_ms_compat.Einops{_layer}", args=_args, target_args=_args,
            note=f"a Cell with einops' arguments; the pattern is planned from the input shape (at compile time in "
                 f"GRAPH mode)", test=f"{T}::test_layers")
mapping("einops.layers.torch.EinMix", None, note="EinMix (an einsum with learned weights) is not converted yet",
        test=f"{T}::test_unsupported")
mapping("einops.asnumpy", "expr:{tensor}.asnumpy()", args=("tensor",), test=f"{T}::test_parse_shape")
