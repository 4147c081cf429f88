"""torch's in-place functions (`torch.relu_(x)`, `torch.clamp_(x, -0.5, 0.5)`...): a whole statement on a local
tensor name becomes `x = <converted out-of-place form>` (msmigrate/mappings/torch_inplace_functions.py). One
converted snippet holds a function per record; each runs in torch and converted on the same inputs, values and
dtypes compared. Anywhere else the site is a TODO that raises where it runs."""
from __future__ import annotations

import numpy as np

from msmigrate.registry import DIFFERENCE, TODO, all_mappings
from tests.parity.harness import assert_close, load_converted, load_torch
from tests.parity.test_inplace_family import CASES as METHOD_CASES, Z

_rng = np.random.default_rng(3)
A = _rng.standard_normal((3, 4)).astype(np.float32)
# the functions' arguments after the tensor, and the inputs (x, y, w), where the method family has no case
CASES = dict(METHOD_CASES)
CASES.update({"celu_": ("", A), "selu_": ("", A), "threshold_": ("0.1, -1.0", A), "elu_": ("", A),
              "hardtanh_": ("-0.5, 0.5", A), "leaky_relu_": ("0.2", A), "fill_": ("2.5", A), "zero_": ("", A)})
GRAPH = ("torch.relu_", "torch.clamp_", "torch.xlogy_", "F.leaky_relu_")
T = "tests/parity/test_torch_inplace_functions.py::"


def _made():
    """The records' sources as the snippet writes them (torch.relu_, F.relu_)."""
    return sorted(m.source.replace("torch.nn.functional.", "F.") for m in all_mappings() if m.test.startswith(T))


def _fn(source: str) -> str:
    return "f_" + source.replace(".", "_")


def _snippet(statement: str, sources) -> str:
    lines = ["import torch", "import torch.nn.functional as F"]
    for source in sources:
        args = CASES[source.split(".")[1]][0]
        lines += [f"def {_fn(source)}(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor):",
                  "    " + statement.format(fn=source, args=", " + args if args else ""), "    return x"]
    return "\n".join(lines) + "\n"


def test_torch_inplace_functions():
    import mindspore as ms
    import torch

    made = _made()
    assert len(made) >= 60 and "F.relu_" in made, made
    missing = sorted(n for n in made if n.split(".")[1] not in CASES)
    assert not missing, f"records without a parity case: {missing}"
    src = _snippet("{fn}(x{args})", made)
    tns = load_torch(src)
    mod, code, sites = load_converted(src)
    status = {}
    for s in sites:
        status.setdefault(s.api, set()).add(s.status)
    for name in made:
        api = name.replace("F.", "torch.nn.functional.")
        assert status.get(api) == {DIFFERENCE}, (name, status.get(api), code)
    assert "Unconverted(" not in code, code
    for name in made:
        args, *inputs = CASES[name.split(".")[1]]
        inputs = list(inputs) + [Z] * (3 - len(inputs))
        t_in = [torch.from_numpy(a.copy()) for a in inputs]
        want = tns[_fn(name)](*t_in)
        fn = getattr(mod, _fn(name))
        got = fn(*[ms.Tensor(a.copy()) for a in inputs])
        assert str(got.dtype).lower() == str(want.dtype).replace("torch.", ""), (name, got.dtype, want.dtype)
        assert_close(got, want, rtol=1e-5, atol=1e-5, what=name)
        if name in GRAPH:
            assert_close(ms.jit(fn)(*[ms.Tensor(a.copy()) for a in inputs]), want, what=name + " graph")


def test_torch_inplace_assigned_value():
    """`z = torch.relu_(x)` / `z = F.leaky_relu_(input=x, ...)`, an assignment's whole value (its arguments may call):
    `z = x = <out-of-place form>`; z and x equal torch's (msmigrate/inplace_values.py), at a script's top level too."""
    import mindspore as ms
    import torch

    names = ["torch.relu_", "torch.clamp_", "torch.sin_", "torch.sigmoid_", "torch.threshold_", "F.leaky_relu_"]
    src = "import torch\nimport torch.nn.functional as F\n"
    for name in names:
        args = CASES[name.split(".")[1]][0]
        call = f"{name}(x, {args})" if args else f"{name}(input=x)"    # positional, or the receiver by keyword
        src += f"def {_fn(name)}(x: torch.Tensor):\n    z = {call}\n    return z, x\n"
    src += ("def calls(x: torch.Tensor):\n    z = torch.clamp_(x, min=torch.tensor(-0.5), max=torch.ones(1).sum() * 0.5)\n"
            "    return z, x\n"
            "top = torch.tensor([-1.2, -0.3, 0.7, 1.4])\ntop_z = torch.sin_(top)\n"
            # the function named through a module attribute chain (nn.functional.X_)
            "import torch.nn as nn\ndef dotted(x: torch.Tensor):\n    z = nn.functional.threshold_(x, 0.5, 0.0)\n"
            "    return z, x\ndef dotted_statement(x: torch.Tensor):\n    nn.functional.hardtanh_(x, -0.3, 0.9)\n"
            "    return x, x\n")
    tns = load_torch(src)
    mod, code, sites = load_converted(src)
    assert not [s for s in sites if s.status == TODO], code
    assert "Unconverted(" not in code, code
    for fn_name in [_fn(name) for name in names] + ["calls", "dotted", "dotted_statement"]:
        want = tns[fn_name](torch.from_numpy(A.copy()))
        got = getattr(mod, fn_name)(ms.Tensor(A.copy()))
        for g, w in zip(got, want):
            assert str(g.dtype).lower() == str(w.dtype).replace("torch.", ""), (fn_name, g.dtype, w.dtype)
            assert_close(g, w, rtol=1e-5, atol=1e-5, what=fn_name)
    assert_close(mod.top_z, tns["top_z"], what="top_z")
    assert_close(mod.top, tns["top"], what="top")


def test_torch_inplace_elsewhere_is_a_todo():
    """`z = 2 * torch.relu_(x)` (the result used inside an expression), or a name of an enclosing scope: a TODO
    saying how to rewrite it, and code that raises where it runs."""
    import mindspore as ms
    import pytest

    src = _snippet("z = 2 * {fn}(x{args})", ["torch.relu_", "torch.clamp_"]) + (
        "W = torch.ones(3)\ndef g():\n    torch.relu_(W)\n    return W\n")
    mod, code, sites = load_converted(src)
    todo = {s.api: s.note for s in sites if s.status == TODO}
    assert set(todo) == {"torch.relu_", "torch.clamp_"}, code
    assert all("x = torch." in note for note in todo.values()), todo
    with pytest.raises(Exception, match="relu_"):
        mod.f_torch_relu_(ms.Tensor(A), ms.Tensor(A), ms.Tensor(Z))
    with pytest.raises(Exception, match="relu_"):
        mod.g()
