"""The in-place method family (`x.add_(y)`, `x.cos_()`, `x.eq_(y)`...): a whole statement on a local tensor
becomes `x = <out-of-place form>` (msmigrate/inplace_forms.py, records in mappings/inplace.py). One converted
snippet holds a function per in-place record; each runs in torch and converted on the same inputs, and the
values and dtypes must match. Every record the rule makes must have a case here."""
from __future__ import annotations

import numpy as np

from msmigrate.registry import DIFFERENCE, TODO, all_mappings
from tests.parity.harness import assert_close, load_converted, load_torch

_rng = np.random.default_rng(7)
A = _rng.standard_normal((3, 4)).astype(np.float32)                       # signed
B = _rng.standard_normal((3, 4)).astype(np.float32)
P = _rng.uniform(0.1, 0.9, (3, 4)).astype(np.float32)                     # positive
D = (np.sign(B) * (np.abs(B) + 0.5)).astype(np.float32)                   # a divisor away from 0
QA = np.round(A).astype(np.float32)                                       # equal values and zeros occur
QB = np.round(B).astype(np.float32)
SQ = _rng.standard_normal((4, 4)).astype(np.float32)
M35 = _rng.standard_normal((3, 5)).astype(np.float32)
M45 = _rng.standard_normal((4, 5)).astype(np.float32)
IDX = np.array([[0, 2], [1, 3], [3, 0]], dtype=np.int64)
Z = np.zeros(1, np.float32)                                               # an unused argument

# in-place name -> (arguments as source, receiver x, y, w)
CASES = {
    "abs_": ("", A), "absolute_": ("", A), "neg_": ("", A), "negative_": ("", A), "sign_": ("", A),
    "ceil_": ("", A), "floor_": ("", A), "round_": ("", A * 3), "relu_": ("", A), "sigmoid_": ("", A),
    "tanh_": ("", A), "exp_": ("", A), "erf_": ("", A), "cos_": ("", A), "sin_": ("", A),
    "detach_": ("", A), "t_": ("", A),
    "log_": ("", P), "log1p_": ("", P), "sqrt_": ("", P), "rsqrt_": ("", P),
    "add_": ("y, alpha=2", A, B), "sub_": ("y, alpha=0.5", A, B), "subtract_": ("y", A, B),
    "mul_": ("y", A, B), "multiply_": ("y", A, B),
    "div_": ("y", A, D), "divide_": ("y", A, D), "true_divide_": ("y", A, D),
    "floor_divide_": ("y", A, D), "fmod_": ("y", A, D), "remainder_": ("y", A, D),
    "pow_": ("y", P, B), "atan2_": ("y", A, B), "arctan2_": ("y", A, B), "lerp_": ("y, 0.3", A, B),
    "clamp_": ("-0.5, 0.5", A), "clamp_min_": ("-0.3", A), "clamp_max_": ("0.3", A),
    "clip_": ("min=-0.2, max=0.4", A),
    "cumsum_": ("0", A), "cumprod_": ("1", A),
    "eq_": ("y", QA, QB), "ne_": ("y", QA, QB), "not_equal_": ("y", QA, QB), "ge_": ("y", QA, QB),
    "gt_": ("y", QA, QB), "le_": ("y", QA, QB), "lt_": ("y", QA, QB), "greater_": ("y", QA, QB),
    "greater_equal_": ("y", QA, QB), "less_": ("y", QA, QB), "less_equal_": ("y", QA, QB),
    "logical_and_": ("y", QA, QB), "logical_or_": ("y", QA, QB), "logical_xor_": ("y", QA, QB),
    "logical_not_": ("", QA),
    "masked_fill_": ("y > 0, -1.0", A, B),
    "scatter_": ("1, y, w", A, IDX, B),
    "squeeze_": ("1", A.reshape(3, 1, 4)), "unsqueeze_": ("1", A),
    "swapaxes_": ("0, 1", A), "swapdims_": ("0, 1", A), "transpose_": ("0, 1", A),
    "tril_": ("", SQ), "triu_": ("1", SQ),
    "addmm_": ("y, w, beta=0.5, alpha=2", M35, A, M45),
    "baddbmm_": ("y, w", np.stack([M35, -M35]), np.stack([A, B]), np.stack([M45, M45 * 2])),
}

# in-place forms whose out-of-place records other families add (torch.acos, Tensor.addcmul...): the rule makes
# their records as soon as those exist, and then these cases prove them
_I1 = np.random.default_rng(8).integers(1, 40, (3, 4)).astype(np.int64)
_I2 = np.random.default_rng(9).integers(1, 40, (3, 4)).astype(np.int64)
_S = np.random.default_rng(10).integers(0, 4, (3, 4)).astype(np.int64)
_U = np.random.default_rng(11).uniform(-0.9, 0.9, (3, 4)).astype(np.float32)
_NAN = np.array([[np.nan, np.inf, -np.inf, 1.0]] * 3, np.float32)
_ROWS = np.array([2, 0], np.int64)
CASES.update({
    "acos_": ("", _U), "arccos_": ("", _U), "asin_": ("", _U), "arcsin_": ("", _U), "atan_": ("", A),
    "arctan_": ("", A), "atanh_": ("", _U), "arctanh_": ("", _U), "acosh_": ("", P + 1), "arccosh_": ("", P + 1),
    "asinh_": ("", A), "arcsinh_": ("", A), "cosh_": ("", A), "sinh_": ("", A), "tan_": ("", _U),
    "exp2_": ("", A), "expm1_": ("", A), "log2_": ("", P), "log10_": ("", P), "reciprocal_": ("", D),
    "square_": ("", A), "trunc_": ("", A * 3), "fix_": ("", A * 3), "frac_": ("", A * 3), "sgn_": ("", A),
    "deg2rad_": ("", A), "rad2deg_": ("", A), "digamma_": ("", P), "lgamma_": ("", P), "erfc_": ("", A),
    "erfinv_": ("", _U), "i0_": ("", A), "logit_": ("", P), "sinc_": ("", A),
    "polygamma_": ("1", P), "mvlgamma_": ("2", P + 2), "nan_to_num_": ("nan=0.5, posinf=9.0", _NAN),
    "hypot_": ("y", A, B), "copysign_": ("y", A, B), "xlogy_": ("y", P, A), "nextafter_": ("y", A, B),
    "heaviside_": ("y", QA, B), "ldexp_": ("y", A, QB), "float_power_": ("y", A.astype(np.float64) ** 2, QB),
    "igamma_": ("y", P, P[::-1].copy()), "igammac_": ("y", P, P[::-1].copy()),
    "gcd_": ("y", _I1, _I2), "lcm_": ("y", _I1, _I2), "bitwise_and_": ("y", _I1, _I2),
    "bitwise_or_": ("y", _I1, _I2), "bitwise_xor_": ("y", _I1, _I2), "bitwise_not_": ("", _I1),
    "bitwise_left_shift_": ("y", _I1, _S), "bitwise_right_shift_": ("y", _I1, _S),
    "renorm_": ("2, 0, 1.0", A), "addcmul_": ("y, w, value=2", A, B, P), "addcdiv_": ("y, w, value=0.5", A, B, P),
    "addmv_": ("y, w", A[:, 0].copy(), A, B[0].copy()), "addr_": ("y, w", A, B[:, 0].copy(), P[0].copy()),
    "addbmm_": ("y, w", M35, np.stack([A, B]), np.stack([M45, M45])),
    "index_add_": ("0, y, w", A, _ROWS, B[:2].copy()), "index_fill_": ("1, y, -1.0", A, _ROWS),
    "index_copy_": ("0, y, w", A, _ROWS, B[:2].copy()), "scatter_add_": ("1, y, w", A, IDX, B),
    "scatter_reduce_": ("1, y, w, reduce='sum'", A, IDX, B), "masked_scatter_": ("y > 0, w", A, B, P),
    "index_reduce_": ("0, y, w, 'prod'", A, _ROWS, B[:2].copy()), "conj_physical_": ("", A),
    "index_put_": ("(y, y), w, True", A, np.array([0, 2, 0], np.int64), B[0, :3].copy()),
})

# a few also run compiled (ms.jit): the rebinding is graph-safe
GRAPH = ("add_", "eq_", "cos_", "clamp_", "masked_fill_", "transpose_")


def _snippet(statement: str, names) -> str:
    lines = ["import torch"]
    for name in names:
        args = CASES[name][0]
        lines += [f"def f_{name}(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor):",
                  "    " + statement.format(name=name, args=args), "    return x"]
    return "\n".join(lines) + "\n"


def _rule_made():
    return sorted(m.source[len("Tensor."):] for m in all_mappings()
                  if m.source.startswith("Tensor.") and m.rule is not None
                  and m.rule.__name__ == "_outside_statement")


def test_inplace_rebinds_match_torch():
    import mindspore as ms
    import torch

    made = _rule_made()
    assert len(made) >= 60, made
    missing = sorted(set(made) - set(CASES))
    assert not missing, f"in-place records without a parity case: {missing}"
    src = _snippet("x.{name}({args})", made)
    tns = load_torch(src)
    mod, code, sites = load_converted(src)
    status = {}
    for s in sites:
        status.setdefault(s.api, set()).add(s.status)
    for name in made:
        assert status.get("Tensor." + name) == {DIFFERENCE}, (name, status.get("Tensor." + name), code)
    assert "Unconverted(" not in code, code
    for name in made:
        args, *inputs = CASES[name]
        inputs = list(inputs) + [Z] * (3 - len(inputs))
        want = tns[f"f_{name}"](*[torch.from_numpy(a.copy()) for a in inputs])
        fn = getattr(mod, f"f_{name}")
        got = fn(*[ms.Tensor(a.copy()) for a in inputs])
        assert str(got.dtype).lower() == str(want.dtype).replace("torch.", ""), (name, got.dtype, want.dtype)
        assert_close(got, want, rtol=1e-5, atol=1e-5, what=name)
        if name in GRAPH:
            assert_close(ms.jit(fn)(*[ms.Tensor(a.copy()) for a in inputs]), want, what=name + " graph")


def test_inplace_elsewhere_is_a_todo():
    """`z = (x.op_(...), x)` (x read again in the statement, where the order of the reads matters): a TODO
    that says how to rewrite it, and code that raises where it runs."""
    import mindspore as ms
    import pytest

    src = _snippet("z = (x.{name}({args}), x)", _rule_made())
    mod, code, sites = load_converted(src)
    todo = {s.api for s in sites if s.status == TODO}
    assert {"Tensor." + n for n in _rule_made()} <= todo, code
    for s in sites:
        if s.api.startswith("Tensor.") and s.status == TODO:
            assert "in-place" in s.note and "x = x." in s.note, s
    with pytest.raises(Exception, match="add_"):
        mod.f_add_(ms.Tensor(A), ms.Tensor(B), ms.Tensor(Z))


VALUE_USED = """
import torch
G = torch.ones(3)


def used(x: torch.Tensor, y: torch.Tensor, v: torch.Tensor, k: float):
    res = []
    for _ in range(2):
        s = x.sum(0)
        res.append(s.mul_(100.0 / k))         # detr's accuracy()  [hoisted-mul_]
    z = y.add_(x, alpha=2)                    # z is y  [hoisted-add_]
    w = (x.sum() + v.mul_(k)).clamp(0, 50)    # [hoisted-mul_]
    u = x.clone()
    d = u.lerp_(torch.full((3, 4), 2.0), x.sum() * 0.1)   # the whole value: calls in its arguments  [hoisted-lerp_]
    return res[0], res[1], z, y, w, v, d, u


def still_todo(x: torch.Tensor, y: torch.Tensor, u: torch.Tensor, q: torch.Tensor, r: torch.Tensor, c: bool):
    a = x.sum() + x.mul_(2)                   # x read before the call  [todo-mul_]
    b = y if c else y.add_(1)                 # evaluated only sometimes  [todo-add_]
    d = 2 * u.sub_(y.sum())                   # the argument calls, and the call is no whole value  [todo-sub_]
    e = G.mul_(2)                             # a global: a rebinding would make it local  [todo-mul_]
    f = q.add_(1)                             # q changed again below: f must see it  [todo-add_]
    q.mul_(2)
    res = []
    for _ in range(2):
        res.append(r.div_(2))                 # the same tensor each pass  [todo-div_]
    return a, b, d, e, f, res
"""


def test_inplace_value_used_rebinds_before_the_statement():
    """`res.append(s.mul_(k))`, `z = y.add_(x)`: `s = <out-of-place form>` goes before the statement and the
    call reads s (msmigrate/inplace_values.py); equal to torch in PyNative and compiled. Where another name
    would miss a change torch shows through it, or the order of reads matters, the site stays a TODO."""
    import mindspore as ms
    import torch

    tns = load_torch(VALUE_USED)
    mod, code, sites = load_converted(VALUE_USED)
    assert "s = _ms_compat.mul(s, 100.0 / k)\n        res.append(s)" in code, code
    st = {(s.line, s.api): s.status for s in sites}
    for i, text in enumerate(VALUE_USED.splitlines(), 1):
        for mark, want in (("hoisted-", DIFFERENCE), ("todo-", TODO)):
            if f"[{mark}" in text:
                api = "Tensor." + text.split(f"[{mark}")[1].rstrip("]")
                assert st.get((i, api)) == want, (i, api, st, code)
    args = [A, B, P]
    want = tns["used"](*[torch.from_numpy(a.copy()) for a in args], 4.0)
    for fn in (mod.used, ms.jit(mod.used)):
        got = fn(*[ms.Tensor(a.copy()) for a in args], 4.0)
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, rtol=1e-5, atol=1e-5, what=f"used[{i}]")


FRESH_RECEIVER = """
import torch


def fresh(x: torch.Tensor, index: torch.Tensor):
    return (torch.zeros(3, 5).scatter_(1, index, 1.0), torch.zeros(3, 5).scatter_(dim=0, index=index, src=x),
            x.clone().abs_(), torch.ones(3, 5).add_(x, alpha=2), torch.full((3, 5), 2.0).mul_(x), x,
            # a bool result cast back to the new tensor's dtype, as torch's in-place form keeps it
            torch.tensor([True, False, True]).logical_not_(), torch.ones(3, 5).logical_not_(),
            x.clone().gt_(0.5), torch.zeros(3, 5).eq_(x.round()))


def shared(x: torch.Tensor):
    return x.float().abs_()                       # x.float() is x itself: a TODO
"""


def test_inplace_on_a_new_tensor():
    """`torch.zeros(3, 5).scatter_(...)`, `x.clone().abs_()`: nothing else refers to the tensor changed in place, so the
    out-of-place form is exact (msmigrate/mappings/inplace.py); x itself unchanged. On `x.float()` (x itself) a TODO."""
    import mindspore as ms
    import torch

    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    index = np.array([[0], [1], [2]], np.int64)
    tns = load_torch(FRESH_RECEIVER)
    mod, code, sites = load_converted(FRESH_RECEIVER)
    line = FRESH_RECEIVER.splitlines().index("    return x.float().abs_()                       # x.float() is x itself: a TODO") + 1
    todo = [(s.line, s.api) for s in sites if s.status == TODO]
    assert todo == [(line, "Tensor.abs_")], (todo, code)
    want = tns["fresh"](torch.from_numpy(x.copy()), torch.from_numpy(index))
    got = mod.fresh(ms.Tensor(x.copy()), ms.Tensor(index))
    for i, (g, w) in enumerate(zip(got, want)):
        assert str(g.dtype).lower() == str(w.dtype).replace("torch.", ""), (i, g.dtype, w.dtype)
        assert_close(g, w, rtol=1e-6, atol=1e-6, what=f"fresh[{i}]")
