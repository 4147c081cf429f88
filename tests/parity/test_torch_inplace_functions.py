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


def test_torch_inplace_elsewhere_is_a_todo():
    """`z = torch.relu_(x)` (the result used), or a name of an enclosing scope: a TODO saying how to rewrite it,
    and code that raises where it runs."""
    import mindspore as ms
    import pytest

    src = _snippet("z = {fn}(x{args})", ["torch.relu_", "torch.clamp_"]) + (
        "W = torch.ones(3)\ndef g():\n    torch.relu_(W)\n    return W\n")
    mod, code, sites = load_converted(src)
    todo = {s.api: s.note for s in sites if s.status == TODO}
    assert set(todo) == {"torch.relu_", "torch.clamp_"}, code
    assert all("x = torch." in note for note in todo.values()), todo
    with pytest.raises(Exception, match="relu_"):
        mod.f_torch_relu_(ms.Tensor(A), ms.Tensor(A), ms.Tensor(Z))
    with pytest.raises(Exception, match="relu_"):
        mod.g()
