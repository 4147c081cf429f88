"""Table-driven parity: many one-line torch functions converted as one snippet, then compared case by case.

A case is `case(apis, "x, y: torch.fft.fft(x, n=8)", [inputs], grad=..., graph=...)`: the text before the
first colon is the parameter list, the rest the returned expression. All cases of a table become one torch
source (`def f0(x, y): return ...`), converted once; each function then runs in torch and converted (PyNative,
and inside ms.jit unless graph=False) on the same inputs. Values are compared (complex values by their real and
imaginary parts), dtypes are compared, every API a case names must be a converted site with its record's status,
and with grad=True the gradients of sum(out * w) with respect to the float inputs are compared too.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np
import pytest

from tests.parity.harness import load_converted, load_torch


def case(apis, src: str, inputs: Sequence, grad: bool = False, graph: bool = True, rtol: float = 1e-5,
         atol: float = 1e-5, dtype: bool = True, post: Optional[str] = None, typed: bool = False):
    """post: an expression over `out` applied to both results before comparing (for results defined only up
    to a sign or an order, e.g. "abs"); dtype=False where the record's note states a dtype difference;
    typed: the parameters that receive arrays are annotated `torch.Tensor` (tensor methods convert on a
    receiver known to be a tensor)."""
    apis = [apis] if isinstance(apis, str) else list(apis)
    return dict(apis=apis, src=src, inputs=list(inputs), grad=grad, graph=graph, rtol=rtol, atol=atol,
                dtype=dtype, post=post, typed=typed)


def source(cases: List[dict]) -> str:
    lines = ["import torch", "import numpy as np", ""]
    for i, c in enumerate(cases):
        params, _, expr = c["src"].partition(":")
        if c.get("typed"):
            names = [p.strip() for p in params.split(",") if p.strip()]
            params = ", ".join(f"{p}: torch.Tensor" if isinstance(a, np.ndarray) else p
                               for p, a in zip(names, c["inputs"]))
        lines += [f"def f{i}({params.strip()}):", f"    return {expr.strip()}", ""]
    return "\n".join(lines)


def _np(v):
    if hasattr(v, "detach"):
        v = v.detach()
        if v.is_complex():
            v = v.resolve_conj()
        return v.numpy()
    if hasattr(v, "asnumpy"):
        return v.asnumpy()
    return np.asarray(v)


def _flat(out) -> list:
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _flat(o)]
    return [out]


def _dtype_name(v) -> str:
    if hasattr(v, "detach"):
        return str(v.dtype).replace("torch.", "")
    if hasattr(v, "asnumpy"):
        return str(v.dtype).lower().replace("bool_", "bool")
    return type(v).__name__


def _post(values, post):
    if post == "abs":
        return [np.abs(v) for v in values]
    if post == "sorted":
        return [np.sort(v, axis=-1) for v in values]
    return values


def compare(ms_out, torch_out, c, what):
    m, t = _flat(ms_out), _flat(torch_out)
    assert len(m) == len(t), f"{what}: {len(m)} MindSpore results vs {len(t)} torch results"
    if c["dtype"]:
        assert [_dtype_name(v) for v in m] == [_dtype_name(v) for v in t], (what, [_dtype_name(v) for v in m],
                                                                            [_dtype_name(v) for v in t])
    mv, tv = _post([_np(v) for v in m], c["post"]), _post([_np(v) for v in t], c["post"])
    for i, (a, b) in enumerate(zip(mv, tv)):
        assert a.shape == b.shape, f"{what}[{i}]: shape {a.shape} vs torch {b.shape}"
        if b.dtype == np.bool_ or np.issubdtype(b.dtype, np.integer):
            np.testing.assert_array_equal(a, b, err_msg=f"{what}[{i}]")
        elif np.iscomplexobj(b) or np.iscomplexobj(a):
            np.testing.assert_allclose(a.astype(np.complex128), b.astype(np.complex128), rtol=c["rtol"],
                                       atol=c["atol"], err_msg=f"{what}[{i}]")
        else:
            np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=c["rtol"], atol=c["atol"],
                                       err_msg=f"{what}[{i}]", equal_nan=True)


def _to_torch(a):
    import torch
    return torch.from_numpy(np.array(a)) if isinstance(a, np.ndarray) else a


def _to_ms(a):
    import mindspore as ms
    return ms.Tensor(np.array(a)) if isinstance(a, np.ndarray) else a


def _grads(tfn, mfn, c, t_out):
    import mindspore as ms
    import torch

    idx = [i for i, a in enumerate(c["inputs"]) if isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating)]
    outs = [_np(o) for o in _flat(t_out)]
    rng = np.random.default_rng(1)
    weights = [rng.standard_normal(o.shape).astype(np.float32) for o in outs]
    t_in = [_to_torch(a).clone().requires_grad_(True) if i in idx else _to_torch(a)
            for i, a in enumerate(c["inputs"])]
    res = _flat(tfn(*t_in))
    sum((r * torch.from_numpy(w)).sum() for r, w in zip(res, weights)).backward()
    t_grads = [t_in[i].grad for i in idx]

    def objective(*xs):
        total = 0
        for r, w in zip(_flat(mfn(*xs)), weights):
            total = total + (r * ms.Tensor(w)).sum()
        return total
    m_grads = ms.grad(objective, grad_position=tuple(idx))(*[_to_ms(a) for a in c["inputs"]])
    m_grads = (m_grads,) if len(idx) == 1 else m_grads
    compare(list(m_grads), t_grads, dict(c, dtype=False, post=None, rtol=max(c["rtol"], 1e-4),
                                           atol=max(c["atol"], 1e-4)), "gradient")


def run_table(cases: List[dict], graph_every: int = 3) -> List[str]:
    """Run every case; return the failures (the test asserts there are none, listing them all). Compiling is
    the slow part: every `graph_every`-th case also runs
    inside ms.jit, so each table keeps its GRAPH-mode proof at a fraction of the cost."""
    import mindspore as ms

    from msmigrate.registry import TODO, lookup

    src = source(cases)
    tns = load_torch(src)
    mod, code, sites = load_converted(src)
    todo = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todo, todo
    statuses = {}
    for s in sites:
        statuses.setdefault(s.api, set()).add(s.status)
    failures = []
    for api in {a for c in cases for a in c["apis"]}:
        m = lookup(api)
        if m is None or statuses.get(api) != {m.status}:
            failures.append(f"{api}: site statuses {statuses.get(api)}, record {m and m.status}")
    for i, c in enumerate(cases):
        tfn, mfn = tns[f"f{i}"], getattr(mod, f"f{i}")
        label = f"f{i} {c['src']}"
        try:
            t_out = tfn(*[_to_torch(a) for a in c["inputs"]])
            m_in = [_to_ms(a) for a in c["inputs"]]
            compare(mfn(*m_in), t_out, c, "pynative")
            if c["graph"] and (i % graph_every == 0):
                compare(ms.jit(mfn)(*m_in), t_out, c, "graph")
            if c["grad"]:
                _grads(tfn, mfn, c, t_out)
        except Exception as exc:   # collect them all: one report names every failing case
            failures.append(f"{label}: {type(exc).__name__}: {str(exc)[:400]}")
    return failures


def covered(cases: List[dict]) -> set:
    return {a for c in cases for a in c["apis"]}


def assert_every_record_cased(test_file: str, tables: dict) -> None:
    """Each record naming a test of `test_file` is exercised by a case of that test's table."""
    from msmigrate.registry import all_mappings

    mine = [m for m in all_mappings() if m.test.startswith(test_file + "::")]
    assert mine
    missing = [(m.source, m.test) for m in mine if m.source not in covered(tables.get(m.test.split("::")[1], []))]
    assert not missing, missing


