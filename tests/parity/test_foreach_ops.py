"""torch._foreach_OP (msmigrate/mappings/foreach_ops.py): every record, out of place and in place, run by torch
and converted on the same list of tensors; the results (a list; the in-place form returns the list itself) and
the list after the call must match. An in-place call on a list display stays a TODO."""
from __future__ import annotations

import numpy as np

from msmigrate.mappings.foreach_ops import UNARY
from msmigrate.registry import REGISTRY, TODO
from tests.parity.harness import load_converted, load_torch

# inside (0, 1): every op of the family is defined there (acos, atanh-free, log...)
A = [0.15, 0.5, 0.85]
B = [[0.3, 0.7], [0.45, 0.05]]


def _ops():
    return [op for op in UNARY + ("zero",) if f"torch._foreach_{op}_" in REGISTRY]


def _snippet(ops) -> str:
    lines = ["import torch"]
    for op in ops:
        lines.append(f"def f_{op}():")
        lines.append(f"    tensors = [torch.tensor({A}), torch.tensor({B})]")
        if op != "zero":
            lines.append(f"    out = torch._foreach_{op}(tensors)")
        else:
            lines.append("    out = None")
        lines.append(f"    ret = torch._foreach_{op}_(tensors)")
        lines.append("    return out, ret, tensors")
    return "\n".join(lines) + "\n"


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else t.asnumpy()


def test_foreach_ops():
    ops = _ops()
    assert len(ops) >= 25, ops
    src = _snippet(ops)
    tns = load_torch(src)
    mod, code, sites = load_converted(src)
    assert not [s for s in sites if s.status == TODO], code
    for op in ops:
        want_out, want_ret, want_list = tns[f"f_{op}"]()
        got_out, got_ret, got_list = getattr(mod, f"f_{op}")()
        assert want_ret is want_list and got_ret is got_list, op
        pairs = list(zip(got_list, want_list)) + (list(zip(got_out, want_out)) if want_out is not None else [])
        assert len(got_list) == len(want_list) and (want_out is None or len(got_out) == len(want_out)), op
        for g, w in pairs:
            assert str(g.dtype).lower() == str(w.dtype).replace("torch.", ""), (op, g.dtype, w.dtype)
            np.testing.assert_allclose(_np(g), _np(w), rtol=1e-5, atol=1e-6, err_msg=op)


DISPLAY_SRC = """
import torch
r = torch._foreach_sqrt_([torch.tensor([4.0, 9.0]), torch.tensor([[0.25]])])
"""


def test_foreach_in_place_on_made_tensors():
    want = load_torch(DISPLAY_SRC)["r"]
    mod, code, sites = load_converted(DISPLAY_SRC)
    assert not [s for s in sites if s.status == TODO], code
    assert len(mod.r) == len(want)
    for g, w in zip(mod.r, want):
        np.testing.assert_allclose(_np(g), _np(w), rtol=1e-6)


def test_foreach_in_place_on_a_display_is_a_todo():
    src = "import torch\ndef f(a, b):\n    torch._foreach_exp_([a, b])\n    return a, b\n"
    _, code, sites = load_converted(src)
    assert [s.api for s in sites if s.status == TODO] == ["torch._foreach_exp_"], code
