"""torch's in-place tensor methods (`x.add_(y)`, `x.cos_()`, `x.eq_(y)`) as rebindings of their
out-of-place form: `x = <converted x.add(y)>`.

On CPU PyNative MindSpore's own in-place arithmetic runs and leaves the tensor unchanged, or has no
kernel (measured on 2.10: add_/sub_/mul_/div_/exp_... do nothing; fill_/clamp_/sigmoid_... fail). So a
whole statement `x.op_(args)` on a local tensor name becomes an assignment of the out-of-place result:
the `Tensor.op` record, or else the `torch.op` record with the receiver as its first argument.
torch computes an in-place result in the promoted dtype and casts it back to x's dtype; for the ops
whose result dtype differs from their input's (comparisons, logical ops: bool) the rebinding casts back
too. Anywhere else (`y = x.add_(1)`, `x[0].add_(1)`, `self.buf.add_(1)`) the site stays a TODO: other
references to the tensor would not see the change.
"""
from __future__ import annotations

from typing import Optional, Tuple

from . import records as R

# random fills: `x.bernoulli_(p)` draws with probability p, while torch.bernoulli(x) reads x as the
# probabilities, so the out-of-place name does not give the in-place meaning
NOT_A_REBINDING = frozenset({"bernoulli_", "cauchy_", "exponential_", "geometric_", "log_normal_", "normal_",
                             "random_", "uniform_", "resize_", "resize_as_", "set_", "share_memory_",
                             "requires_grad_", "apply_", "map_", "map2_", "as_strided_", "copy_", "fill_",
                             "zero_", "put_", "fill_diagonal_"})

# out-of-place results of another dtype (bool) than the receiver's: torch's in-place form keeps x's dtype
CAST_BACK = frozenset({"eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_", "less_",
                       "less_equal_", "not_equal_", "logical_and_", "logical_or_", "logical_xor_",
                       "logical_not_"})

# the first parameter of a torch function record that takes the receiver
_RECEIVER_PARAMS = ("input", "self", "dividend", "x")


def _usable(m: Optional[R.Mapping]) -> bool:
    return m is not None and (m.target is not None or m.rule is not None)


def out_of_place(name: str) -> Optional[Tuple[R.Mapping, bool]]:
    """For an in-place method name (`add_`): the record of its out-of-place form and whether it is a
    torch function taking the receiver first (True) or a tensor method (False); None when the in-place
    form is no plain rebinding of one."""
    if not name.endswith("_") or name.endswith("__") or name in NOT_A_REBINDING:
        return None
    base = name[:-1]
    m = R.lookup("Tensor." + base)
    if _usable(m):
        return m, False
    f = R.lookup("torch." + base)
    if _usable(f) and f.args and f.args[0] in _RECEIVER_PARAMS:
        return f, True
    return None


def needs_cast_back(name: str) -> bool:
    return name in CAST_BACK


def outside_statement_reason(name: str) -> str:
    return (f"in-place `{name}` outside a whole statement on a local tensor name: MindSpore's in-place arithmetic "
            f"leaves the tensor unchanged on CPU PyNative; write `x = x.{name[:-1]}(...)` (the out-of-place form, "
            f"rebinding every name that must see the new value)")
