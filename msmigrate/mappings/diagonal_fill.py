"""Tensor.fill_diagonal_: a whole statement on a local tensor is rebound to the filled value
(msmigrate/diagonal_fill.py, helper templates/compat_parts/diagonal_fill.py); this record answers every other use."""
from __future__ import annotations

from ..callsite import UnsupportedSite
from ..records import DIFFERENCE, rule


@rule("Tensor.fill_diagonal_", None, args=("fill_value", "wrap"), status=DIFFERENCE,
      test="tests/parity/test_random_fills.py::test_fill_diagonal_matches_torch",
      note="a whole statement `x.fill_diagonal_(v, wrap)` on a local tensor becomes `x = _ms_compat.fill_diagonal("
           "x, v, wrap)` (a masked fill, differentiable, graph-safe); other references to the same tensor do not see "
           "the change; elsewhere a TODO")
def _fill_diagonal_elsewhere(ctx):
    raise UnsupportedSite("in-place fill_diagonal_ outside a whole statement on a local tensor name: write "
                          "`x = _ms_compat.fill_diagonal(x, value, wrap)` and rebind every name that must see it")
