"""torch's `out=` keyword (msmigrate/out_argument.py): `torch.f(..., out=c)` as a statement becomes
`c = ops.cast(<converted torch.f(...)>, c.dtype)`. One converted snippet holds a function per case; each
runs in torch and converted on the same inputs: values, shapes (out is resized) and dtypes (out's dtype
is kept) must match. Forms that are no plain rebinding stay TODOs; tuples of outputs: test_out_tuple.py."""
from __future__ import annotations

import numpy as np

from msmigrate.registry import DIFFERENCE, TODO
from tests.parity.harness import assert_close, load_converted, load_torch

_rng = np.random.default_rng(11)
A = _rng.standard_normal((3, 4)).astype(np.float32)
B = _rng.standard_normal((3, 4)).astype(np.float32)
P = _rng.uniform(0.1, 2.0, (3, 4)).astype(np.float32)
M = _rng.standard_normal((4, 2)).astype(np.float32)

# name -> (torch call with out=c, x, y); c starts as torch.empty(0) of the `dtype` column
CASES = {
    "add": ("torch.add(x, y, alpha=2, out=c)", A, B),
    "sub": ("torch.sub(x, y, out=c)", A, B),
    "mul": ("torch.mul(x, 3.0, out=c)", A, B),
    "div": ("torch.div(x, y, out=c)", A, P),
    "matmul": ("torch.matmul(x, y, out=c)", A, M),
    "mm": ("torch.mm(x, y, out=c)", A, M),
    "cat": ("torch.cat([x, y], 1, out=c)", A, B),
    "cat_dim": ("torch.cat((x, y), dim=0, out=c)", A, B),
    "stack": ("torch.stack([x, y], out=c)", A, B),
    "exp": ("torch.exp(x, out=c)", A, B),
    "log": ("torch.log(y, out=c)", A, P),
    "sqrt": ("torch.sqrt(y, out=c)", A, P),
    "abs": ("torch.abs(x, out=c)", A, B),
    "neg": ("torch.neg(x, out=c)", A, B),
    "tanh": ("torch.tanh(x, out=c)", A, B),
    "sigmoid": ("torch.sigmoid(x, out=c)", A, B),
    "clamp": ("torch.clamp(x, -0.5, 0.5, out=c)", A, B),
    "pow": ("torch.pow(y, 2, out=c)", A, P),
    "maximum": ("torch.maximum(x, y, out=c)", A, B),
    "minimum": ("torch.minimum(x, y, out=c)", A, B),
    "sum": ("torch.sum(x, 1, out=c)", A, B),
    "cumsum": ("torch.cumsum(x, dim=1, out=c)", A, B),
    "float64_out": ("torch.add(x, y, out=c)", A, B),
}
DTYPES = {"float64_out": "torch.float64"}

TODO_SRC = '''
import torch
def g(x: torch.Tensor, y: torch.Tensor, c: torch.Tensor, v: torch.Tensor):
    z = torch.add(x, y, out=c) * 2
    torch.max(x, 0, out=(c, v[0]))
    torch.mul(x, y, out=c[0])
    return z
'''


def _snippet() -> str:
    lines = ["import torch"]
    for name, (call, *_inputs) in CASES.items():
        lines += [f"def f_{name}(x: torch.Tensor, y: torch.Tensor):",
                  f"    c = torch.empty(0, dtype={DTYPES.get(name, 'torch.float32')})",
                  f"    {call}", "    return c"]
    return "\n".join(lines) + "\n"


def test_out_rebinds_match_torch():
    import mindspore as ms
    import torch

    src = _snippet()
    tns = load_torch(src)
    mod, code, sites = load_converted(src)
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, (todos, code)
    rebound = [s for s in sites if "out=c" in s.note]
    assert len(rebound) == len(CASES) and all(s.status == DIFFERENCE for s in rebound), code
    assert "out=" not in code.replace("out=c ->", ""), code
    for name, (call, x, y) in CASES.items():
        want = tns[f"f_{name}"](torch.from_numpy(x.copy()), torch.from_numpy(y.copy()))
        got = getattr(mod, f"f_{name}")(ms.Tensor(x.copy()), ms.Tensor(y.copy()))
        assert str(got.dtype).lower() == str(want.dtype).replace("torch.", ""), (name, got.dtype, want.dtype)
        assert_close(got, want, rtol=1e-5, atol=1e-5, what=name)


ASSIGNED_SRC = '''
import torch
def f(x: torch.Tensor, y: torch.Tensor):
    c = torch.empty(0)
    r = torch.addmm(x, y, y.T, beta=0.5, alpha=2.0, out=c)
    return r, c
'''


def test_out_in_an_assignment_binds_both_names():
    """`r = torch.f(..., out=c)`: torch returns out itself (resized), so r and c both hold the result."""
    import mindspore as ms
    import torch

    tns = load_torch(ASSIGNED_SRC)
    mod, code, sites = load_converted(ASSIGNED_SRC)
    assert not [s for s in sites if s.status == TODO], code
    assert "r = c = " in code, code
    x = _rng.standard_normal((3, 3)).astype(np.float32)
    want = tns["f"](torch.from_numpy(x), torch.from_numpy(A[:, :3].copy()))
    got = mod.f(ms.Tensor(x), ms.Tensor(A[:, :3].copy()))
    for g, w, what in zip(got, want, ("r", "c")):
        assert str(g.dtype).lower() == str(w.dtype).replace("torch.", ""), (what, g.dtype, w.dtype)
        assert_close(g, w, rtol=1e-5, atol=1e-5, what=what)


def test_out_elsewhere_is_a_todo():
    """A used result, a tuple of outputs holding a slice, a slice as out: each a TODO that names out=
    (a tuple of names: tests/parity/test_out_tuple.py)."""
    _, code, sites = load_converted(TODO_SRC)
    todo = [s for s in sites if s.status == TODO]
    assert [s.api for s in todo] == ["torch.add", "torch.max", "torch.mul"], code
    assert all("out=" in s.note for s in todo), [s.note for s in todo]
