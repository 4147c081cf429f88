"""`out=` on torch functions that return tuples (msmigrate/out_argument.py): `torch.sort(x, out=(v, i))` becomes
`v, i = <converted torch.sort(x)>`, `r = torch.sort(x, out=(v, i))` becomes `r = v, i = ...`. Each case runs in
torch and converted on the same inputs: the out tensors' values, shapes and dtypes must match (and r holds them).
`out=name` on such a function stays a TODO that raises MigrationError where it is reached."""
from __future__ import annotations

import numpy as np
import pytest

from msmigrate.registry import DIFFERENCE, TODO
from tests.parity.harness import assert_close, load_converted, load_torch

_rng = np.random.default_rng(5)
X = _rng.standard_normal((3, 5)).astype(np.float32)
X[1, 2] = X[1, 4]   # a repeated value: mode along dim 1 is unique per row only where one repeats
_B = _rng.standard_normal((4, 4)).astype(np.float32)
SPD = (_B @ _B.T + 4 * np.eye(4)).astype(np.float32)

# name -> (out tensors' dtypes, torch statement writing them, input); the function returns the out tensors
CASES = {
    "sort": (("float32", "int64"), "torch.sort(x, 1, descending=True, out=(o0, o1))", X),
    "topk": (("float32", "int64"), "torch.topk(x, 2, out=(o0, o1))", X),
    "max_dim": (("float32", "int64"), "torch.max(x, 1, out=[o0, o1])", X),
    "min_dim_kw": (("float32", "int64"), "torch.min(x, dim=0, keepdim=True, out=(o0, o1))", X),
    "kthvalue": (("float32", "int64"), "torch.kthvalue(x, 2, 1, out=(o0, o1))", X),
    "median_dim": (("float32", "int64"), "torch.median(x, 1, out=(o0, o1))", X),
    "mode": (("float32", "int64"), "torch.mode(torch.round(x), 0, out=(o0, o1))", X),
    "cholesky_ex": (("float32", "int32"), "torch.linalg.cholesky_ex(x, out=(o0, o1))", SPD),
    "inv_ex": (("float32", "int32"), "torch.linalg.inv_ex(x, out=(o0, o1))", SPD),
    "slogdet": (("float32", "float32"), "torch.linalg.slogdet(x, out=(o0, o1))", SPD),
    "qr": (("float32", "float32"), "torch.linalg.qr(x, out=(o0, o1))", SPD),
    "eigh": (("float32", "float32"), "torch.linalg.eigh(x, out=(o0, o1))", SPD),
    "lu": (("float32", "int32"), "torch.lu(x, pivot=True, out=(o0, o1))", SPD),
    "lu_infos": (("float32", "int32", "int32"), "torch.lu(x, get_infos=True, out=(o0, o1, o2))", SPD),
}


def _snippet() -> str:
    lines = ["import torch"]
    for name, (dtypes, call, _x) in CASES.items():
        lines.append(f"def f_{name}(x: torch.Tensor):")
        lines += [f"    o{k} = torch.empty(0, dtype=torch.{d})" for k, d in enumerate(dtypes)]
        lines += [f"    {call}", f"    return {', '.join(f'o{k}' for k in range(len(dtypes)))}"]
    return "\n".join(lines) + "\n"


def _same(got, want, what):
    for k, (g, w) in enumerate(zip(got, want)):
        assert str(g.dtype).lower() == str(w.dtype).replace("torch.", ""), (what, k, g.dtype, w.dtype)
    assert_close(got, want, rtol=1e-4, atol=1e-4, what=what)


def test_tuple_out_rebinds_match_torch():
    import mindspore as ms
    import torch

    src = _snippet()
    tns = load_torch(src)
    mod, code, sites = load_converted(src)
    assert not [(s.api, s.note) for s in sites if s.status == TODO], code
    rebound = [s for s in sites if "-> rebinding `o0, o1" in s.note]
    assert len(rebound) == len(CASES) and all(s.status == DIFFERENCE for s in rebound), code
    assert "out=" not in code, code
    for name, (_dtypes, _call, x) in CASES.items():
        want = tns[f"f_{name}"](torch.from_numpy(x.copy()))
        got = getattr(mod, f"f_{name}")(ms.Tensor(x.copy()))
        if name == "eigh":   # eigenvectors are unique up to sign: compare |v|
            got, want = (got[0], ops_abs(got[1])), (want[0], want[1].abs())
        _same(got, want, name)


def ops_abs(t):
    from mindspore import ops
    return ops.abs(t)


ASSIGNED_SRC = '''
import torch
def f(x: torch.Tensor):
    v = torch.empty(0)
    i = torch.empty(0, dtype=torch.long)
    r = torch.sort(x, -1, out=(v, i))
    return r[0], r[1], v, i
'''


def test_used_result_is_the_tuple_of_outs():
    """`r = torch.sort(x, out=(v, i))`: r is (v, i) after the call, as torch's named tuple of the out tensors."""
    import mindspore as ms
    import torch

    tns = load_torch(ASSIGNED_SRC)
    mod, code, sites = load_converted(ASSIGNED_SRC)
    assert not [s for s in sites if s.status == TODO], code
    assert "r = v, i = " in code, code
    want = tns["f"](torch.from_numpy(X.copy()))
    got = mod.f(ms.Tensor(X.copy()))
    _same(got, want, "r, v, i")


UNPACKED_SRC = '''
import torch
def f(x: torch.Tensor):
    out = [torch.empty(0), torch.empty(0, dtype=torch.long)]
    values, index = torch.mode(torch.round(x), 1, False, out=out)
    v, i = torch.empty(0), torch.empty(0, dtype=torch.long)
    [a, b] = torch.sort(x, 0, out=(v, i))
    c = torch.empty(0)
    r0, r1, r2 = torch.add(x, 1.0, out=c)
    return values, index, out[0], out[1], a, b, v, i, r0, r1, r2, c
'''


def test_unpacked_result_rebinds_the_outs_too():
    """`values, index = torch.mode(x, 1, out=out)`: the names unpack the result and out is rebound as well
    (`values, index = out = ...`), as torch, whose result is out's tensors."""
    import mindspore as ms
    import torch

    tns = load_torch(UNPACKED_SRC)
    mod, code, sites = load_converted(UNPACKED_SRC)
    assert not [s for s in sites if s.status == TODO], code
    assert "values, index = out = " in code and "[a, b] = v, i = " in code and "r0, r1, r2 = c = " in code, code
    want = tns["f"](torch.from_numpy(X.copy()))
    got = mod.f(ms.Tensor(X.copy()))
    _same(got, want, "unpacked")


NAME_OUT_SRC = '''
import torch
def f(x: torch.Tensor, y):
    vals = torch.empty(0)
    torch.sort(x, out=vals)
    return vals
def g(x: torch.Tensor, d):
    v = torch.empty(0)
    torch.max(x, dim=d, out=v)
    return v
def h(x: torch.Tensor, y):
    v = torch.empty(0)
    torch.max(x, y, out=v)
    return v
def k(x: torch.Tensor, y: torch.Tensor):
    v = torch.empty(0)
    i = torch.empty(0)
    torch.add(x, y, out=(v, i))
    return v
'''


def test_out_of_the_wrong_kind_is_a_todo_that_raises():
    """out=name where the result is (or may be, as torch.max(x, y)) a tuple; a tuple out on a one-tensor call:
    TODOs whose note names out=, raising MigrationError when reached (no AttributeError from a cast tuple)."""
    import mindspore as ms

    mod, code, sites = load_converted(NAME_OUT_SRC)
    todo = [s for s in sites if s.status == TODO]
    assert [s.api for s in todo] == ["torch.sort", "torch.max", "torch.max", "torch.add"], code
    assert all("out=" in s.note and "tuple" in s.note for s in todo), [s.note for s in todo]
    assert "may return (decided at run time)" in todo[2].note, todo[2].note
    helper = __import__("_ms_compat")
    x = ms.Tensor(X.copy())
    for fn, arg in ((mod.f, None), (mod.g, 1), (mod.h, 1), (mod.k, x)):
        with pytest.raises(helper.MigrationError):
            fn(x, arg)


VARIABLE_SRC = '''
import torch
def f(x: torch.Tensor):
    out = (torch.empty(0), torch.empty(0, dtype=torch.long))
    r = torch.sort(x, dim=1, descending=True, out=out)
    return r[0], r[1], out[0], out[1]
def g(x: torch.Tensor):
    outs = [torch.zeros(0), torch.zeros(0, dtype=torch.int64)]
    torch.max(x, 1, out=outs)
    return outs[0], outs[1]
def h(x: torch.Tensor):
    v = torch.empty(0)
    shared = (v, torch.empty(0, dtype=torch.long))
    torch.max(x, 1, out=shared)
    return v
def k(x: torch.Tensor):
    outs = (torch.empty(0), torch.empty(0, dtype=torch.long))
    alias = outs
    torch.max(x, 1, out=outs)
    return alias[0]
def m(x: torch.Tensor):
    out = tuple([torch.tensor(-1.), torch.tensor(-1.)])
    r = torch.aminmax(x, out=out)
    pair = list((torch.tensor([-1.0]), torch.tensor([-1.0])))
    torch.aminmax(x, dim=1, keepdim=False, out=pair)
    return r[0], r[1], out[0], out[1], pair[0], pair[1]
'''


def test_out_variable_of_fresh_tensors_is_rebound():
    """`out = (torch.empty(0), ...)` then `torch.sort(x, out=out)`: nothing else holds those tensors, so
    `out = <converted call>` computes what torch writes; a variable whose tensors have other names (v, alias)
    stays a TODO raising MigrationError."""
    import mindspore as ms
    import torch

    tns = load_torch(VARIABLE_SRC)
    mod, code, sites = load_converted(VARIABLE_SRC)
    assert "r = out = " in code and "outs = ops.max(" in code, code
    todo = [s for s in sites if s.status == TODO]
    assert [s.api for s in todo] == ["torch.max", "torch.max"] and all("out=" in s.note for s in todo), code
    for fn in ("f", "g", "m"):     # m: tuple([...]) / list((...)) of fresh tensors, torch.aminmax
        _same(getattr(mod, fn)(ms.Tensor(X.copy())), tns[fn](torch.from_numpy(X.copy())), fn)
    helper = __import__("_ms_compat")
    for fn in (mod.h, mod.k):
        with pytest.raises(helper.MigrationError):
            fn(ms.Tensor(X.copy()))
