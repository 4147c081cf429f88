"""`x.fill_diagonal_(value, wrap=False)` as a whole statement on a local tensor -> `x = _ms_compat.
fill_diagonal(x, value, wrap)`: the filled tensor as a new value (a masked fill, differentiable and
graph-safe), rebound to the name, as the other in-place rebindings (msmigrate/inplace_forms.py). Other uses
(`self.mask.fill_diagonal_(0)`, a used result) reach the record's rule, a TODO."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from . import records as R
from .callsite import code_of
from .sites import shorten

API = "Tensor.fill_diagonal_"


def rebinding(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.BaseExpression]:
    """The converted value for `x = ...`, or None (left to the record: a TODO)."""
    args = {}
    for k, a in enumerate(updated.args):
        key = a.keyword.value if a.keyword is not None else ("fill_value", "wrap")[k] if k < 2 else None
        if key not in ("fill_value", "wrap") or a.star or key in args:
            return None
        args[key] = code_of(a.value).strip()
    if "fill_value" not in args:
        return None
    x = code_of(updated.func.value).strip()
    out = tr._render_template(f"_ms_compat.fill_diagonal({x}, {args['fill_value']}, {args.get('wrap', 'False')})")
    tr._record(original, API, shorten(code_of(out), 60), R.DIFFERENCE,
               f"in place -> rebinding `{x} = ...` (a masked fill, differentiable); other references to the same "
               f"tensor do not see the change")
    return out
