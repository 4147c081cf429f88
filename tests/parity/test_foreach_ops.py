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


def test_foreach_in_place_on_a_display_writes_its_tensors():
    """`torch._foreach_exp_([a, b])` changes a and b themselves (before: a TODO, the list's items could only be
    replaced)."""
    src = "import torch\ndef f(a, b):\n    torch._foreach_exp_([a, b])\n    return a, b\n"
    mod, code, sites = load_converted(src)
    assert not [s for s in sites if s.status == TODO], code
    import mindspore as ms
    import torch
    got = mod.f(ms.Tensor(np.float32([0.5, 1.0])), ms.Tensor(np.float32([[2.0]])))
    want = load_torch(src)["f"](torch.tensor([0.5, 1.0]), torch.tensor([[2.0]]))
    for g, w in zip(got, want):
        np.testing.assert_allclose(_np(g), _np(w), rtol=1e-6)


def test_foreach_in_place_on_a_call_is_a_todo():
    src = "import torch\ndef f(m):\n    torch._foreach_exp_(list(m.parameters()))\n"
    _, code, sites = load_converted(src)
    assert [s.api for s in sites if s.status == TODO] == ["torch._foreach_exp_"], code


# torch._foreach_OP with operands (templates/compat_parts/foreach_lists.py): each form torch accepts (a list of
# tensors, a list of numbers, one number, one tensor; alpha=/value=), out of place and in place; in place, the
# tensors themselves change (`held` keeps the first one by another name, as an optimizer's state does)
OPERAND_CASES_BY_OP = {
    "add": ["others()", "others(), alpha=-0.5", "0.25", "[0.5, -2.0]", "torch.tensor(0.75)"],
    "sub": ["others()", "others(), alpha=3.0", "0.25", "[0.5, -2.0]"],
    "mul": ["others()", "0.9", "[0.5, -2.0]", "torch.tensor(1.5)"],
    "div": ["others()", "0.9", "[0.5, -2.0]"],
    "maximum": ["others()", "0.3"],
    "minimum": ["others()", "0.3"],
    "clamp_min": ["others()", "0.3"],
    "clamp_max": ["others()", "0.3"],
    "pow": ["2.0", "[2.0, 3.0]"],
    "lerp": ["others(), 0.3", "others(), 0.8", "others(), others()"],
    "addcmul": ["others(), others()", "others(), others(), value=0.5", "others(), others(), [0.5, -1.0]"],
    "addcdiv": ["others(), others()", "others(), others(), value=0.5", "others(), others(), [0.5, -1.0]"],
    "copy": ["others()"],
}


def _operand_cases() -> str:
    lines = ["import torch", "",
             "def lists():",
             "    return [torch.tensor([0.15, -0.5, 0.85]), torch.tensor([[0.3, 0.7], [0.45, 0.05]])]", "",
             "def others():",
             "    return [torch.tensor([0.2, 0.4, -0.6]), torch.tensor([[0.9, 0.1], [0.25, 0.5]])]", "",
             "def results():", "    out = {}"]
    for op, cases in OPERAND_CASES_BY_OP.items():
        for i, args in enumerate(cases):
            for in_place in ((False, True) if op != "copy" else (True,)):
                lines += ["    tensors = lists()", "    held = tensors[0]",
                          f"    r = torch._foreach_{op}{'_' if in_place else ''}(tensors, {args})",
                          f"    out[({op!r}, {i}, {in_place})] = list(r) + list(tensors) + [held]"]
    return "\n".join(lines + ["    return out", ""])


OPERAND_CASES = _operand_cases()


def test_foreach_with_operands():
    """Values and dtypes as torch's for every case; in place, the returned list is the list itself and the tensor
    another name holds changed."""
    mod, code, sites = load_converted(OPERAND_CASES)
    assert not [s for s in sites if s.status == TODO], code
    assert "Unconverted" not in code, code
    want, got = load_torch(OPERAND_CASES)["results"](), mod.results()
    assert set(want) == set(got) and len(want) >= 50
    for key in want:
        assert len(got[key]) == len(want[key]), key
        for g, w in zip(got[key], want[key]):
            assert str(g.dtype).lower() == str(w.dtype).replace("torch.", ""), key
            np.testing.assert_allclose(_np(g), _np(w), rtol=1e-6, atol=1e-7, err_msg=str(key))


SHARED_SRC = """
import torch


def step(p, s):
    params, states = [p], [s]
    torch._foreach_mul_(params, 0.5)
    torch._foreach_sqrt_(states)
    torch._foreach_addcdiv_(params, states, states, value=-0.25)
    return p, s
"""


def test_foreach_in_place_changes_the_tensors_themselves():
    """A parameter and a state tensor put in lists and changed by _foreach_OP_: the tensors themselves change
    (before, a unary in-place form replaced the list's items, so the state tensor kept its old value)."""
    import mindspore as ms

    mod, code, sites = load_converted(SHARED_SRC)
    assert not [s for s in sites if s.status == TODO], code
    p, s = ms.Parameter(ms.Tensor(np.float32([1.0, -2.0])), name="p"), ms.Tensor(np.float32([4.0, 9.0]))
    mod.step(p, s)
    import torch
    tp, ts = torch.tensor([1.0, -2.0]), torch.tensor([4.0, 9.0])
    load_torch(SHARED_SRC)["step"](tp, ts)
    np.testing.assert_allclose(p.asnumpy(), tp.numpy(), rtol=1e-6)
    np.testing.assert_allclose(s.asnumpy(), ts.numpy(), rtol=1e-6)


SIGMOID_SRC = """
import torch
def f(a, b):
    out = torch._foreach_sigmoid([a, b])
    tensors = [a * 1, b * 1]
    torch._foreach_sigmoid_(tensors)
    return out, tensors
"""


def test_foreach_sigmoid_at_torch_float32_precision():
    """torch._foreach_sigmoid(_): each item through _ms_compat.precise_sigmoid (MindSpore 2.10's CPU float32 sigmoid
    kernel is 2.3e-6 off: the peer suite's cases, inputs below, were 1.1e-6 off), values at rtol 1e-6 atol 0; an
    integer tensor is computed in float32 as torch promotes it."""
    import mindspore as ms
    import torch

    a = np.array([0.34, 5.76, 0.73, -3.3, 9.5, -0.01], np.float32)
    b = np.linspace(-8, 8, 33).astype(np.float32)
    want = load_torch(SIGMOID_SRC)["f"](torch.from_numpy(a), torch.from_numpy(b))
    mod, code, _ = load_converted(SIGMOID_SRC)
    assert "_ms_compat.precise_sigmoid(" in code, code
    got = mod.f(ms.Tensor(a), ms.Tensor(b))
    for g, w in zip(list(got[0]) + list(got[1]), list(want[0]) + list(want[1])):
        assert g.dtype == ms.float32
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-6, atol=0)
    ints = load_torch(SIGMOID_SRC.replace("a * 1, b * 1", "a * 1.0, b * 1.0"))["f"](torch.tensor([0, 3, -2]),
                                                                                    torch.tensor([True, False]))
    got = load_converted(SIGMOID_SRC.replace("a * 1, b * 1", "a * 1.0, b * 1.0"))[0].f(
        ms.Tensor(np.array([0, 3, -2], np.int64)), ms.Tensor(np.array([True, False])))
    for g, w in zip(got[0], ints[0]):
        assert str(g.dtype).lower() == str(w.dtype).replace("torch.", "")
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-6, atol=0)
