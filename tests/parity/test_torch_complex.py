"""Parity of torch's complex-number functions, methods and dtypes (msmigrate/mappings/torch_complex.py and their
tensor-method twins): values (real and imaginary parts) and dtypes in PyNative, ms.jit on a few cases."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import assert_every_record_cased, case, run_table

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4)).astype(np.float32)
Y = RNG.standard_normal((3, 4)).astype(np.float32)
Z = (X + 1j * Y).astype(np.complex64)
Z2 = Z[:, :3].copy()
SIGNED = np.array([-2.0, -0.5, 0.0, 1.5], np.float32)
T = "torch."

CASES = [
    case([T + "conj", T + "conj_physical", T + "resolve_conj", T + "resolve_neg", "Tensor.conj",
          "Tensor.conj_physical", "Tensor.resolve_conj", "Tensor.resolve_neg"],
         "z, x: (torch.conj(z), torch.conj_physical(z), torch.conj(x), torch.resolve_conj(z.conj()),"
         " torch.resolve_neg(z), z.conj(), z.conj_physical(), z.conj().resolve_conj(), x.resolve_neg())", [Z, X],
         typed=True),
    case([T + "angle", "Tensor.angle", T + "is_complex", "Tensor.is_complex"],
         "z, s, d: (torch.angle(z), torch.angle(s), z.angle(), d.angle(), torch.is_complex(z), torch.is_complex(s),"
         " z.is_complex(), s.is_complex())", [Z, SIGNED, SIGNED.astype(np.float64)], typed=True, graph=False),
    case([T + "complex", T + "polar", T + "view_as_real", T + "view_as_real_copy", T + "view_as_complex",
          T + "view_as_complex_copy"],
         "x, y, z: (torch.complex(x, y), torch.polar(x.abs(), y), torch.view_as_real(z), torch.view_as_real_copy(z),"
         " torch.view_as_complex(torch.stack([x, y], -1)), torch.view_as_complex_copy(torch.stack([y, x], -1)))",
         [X, Y, Z], typed=True, rtol=1e-5, atol=1e-6),
    case(T + "polar", "x, y: (torch.polar(x.abs()[:1], y), torch.polar(x.abs(), y[0, 0]))", [X, Y], typed=True,
         rtol=1e-5, atol=1e-6),   # broadcast operands
    case([T + "adjoint", "Tensor.adjoint"], "z, x: (torch.adjoint(z), z.adjoint(), torch.adjoint(x), x.adjoint())",
         [Z2, X], typed=True, graph=False),
    case([T + "cfloat", T + "cdouble", "Tensor.cfloat", "Tensor.cdouble", T + "uint16", T + "uint32", T + "uint64"],
         "x: (x.to(torch.cfloat), x.to(torch.cdouble), x.cfloat(), x.cdouble(), torch.zeros(2, dtype=torch.cfloat),"
         " torch.tensor([1, 2], dtype=torch.uint16), torch.tensor([3, 4], dtype=torch.uint32),"
         " torch.tensor([5, 6], dtype=torch.uint64), (x > 0).to(torch.uint32))", [X], typed=True, graph=False),
]

# a real tensor with a complex one, complex64 with complex128: torch computes in the complex dtype; MindSpore 2.10's
# CPU Mul/Div refuse a mixed pair (compat_parts/complex_operands.py). Ordinary pairs (rounding_mode too) unchanged.
I32 = np.array([[4, 9, 8, -3]], np.int32)
MIXED = [
    case([T + "mul", T + "multiply", "Tensor.mul"],
         "x, z, i, d: (torch.mul(x, z), torch.multiply(i, z), z.mul(x), x.mul(z.to(torch.complex128)),"
         " torch.mul(d, z), torch.mul(z, z.to(torch.complex128)), torch.mul(x, i), x.mul(2.5),"
         " torch.mul(z, 2.0), z.mul(3))",
         [X, Z, I32, X.astype(np.float64)], typed=True),
    case([T + "div", T + "divide", "Tensor.div"],
         "x, z, i, d: (torch.divide(input=x, other=z), torch.div(i, z), z.div(i), x.div(z.to(torch.complex128)),"
         " torch.div(d, z), torch.div(x, i), torch.div(x, i, rounding_mode='floor'),"
         " x.div(3.0, rounding_mode='trunc'), torch.div(z, 2.0), z.div(4))",
         [X, Z, I32, X.astype(np.float64)], typed=True),
    # a Python complex literal: PyNative only (MindSpore's graph parser takes no complex constant)
    case([T + "mul", T + "div"], "x, i, d: (torch.mul(x, 2j), d.mul(1 - 1j), torch.mul(i, 0.5j), torch.div(x, 2j),"
         " d.div(1 + 1j))", [X, I32, X.astype(np.float64)], typed=True, graph=False),
]


def test_mixed_complex_products_match_torch():
    failures = run_table(MIXED, graph_every=1)
    assert not failures, "\n".join(failures)


def test_complex():
    failures = run_table(CASES, graph_every=2)
    assert not failures, "\n".join(failures)


def test_every_complex_record_has_a_case():
    assert_every_record_cased("tests/parity/test_torch_complex.py", {"test_complex": CASES,
                                                                "test_mixed_complex_products_match_torch": MIXED})


# `*` and `/` with a complex tensor and a real tensor or Python number: MindSpore 2.10's Mul/Div raise a raw TypeError;
# in a module that makes complex values they go through _ms_compat.times/over (msmigrate/complex_operators.py)
OPERATORS = '''
import torch


def rotate(x, y, d, i):
    z = torch.complex(x, y)
    w = z * x + x * z - z / 2.0 + 3 / z + d / z
    w = w + z * 2 + i * z
    acc = z.clone()
    alias = acc
    acc *= x
    acc /= 2
    parts = [acc.clone(), acc]
    parts[0] *= y
    scale = 4 * 3 / 2
    return w, acc, alias, parts[0] * scale, x * y / 2, "ab" * 2


def spectral(x, y):
    return torch.view_as_complex(torch.stack([x, y], -1)) * x / y.abs().clamp(min=0.5)


def filtered(x, w):
    f = torch.fft.rfft(x) * w * 0.5
    return torch.fft.irfft(f / (w + 2.0), n=x.shape[-1])


def cast_tuple(val, depth=2):
    # a parenthesised tuple operand keeps its parentheses as the helper's argument (x-transformers' cast_tuple:
    # `_ms_compat.times(val,, depth)` was invalid Python, the file copied unconverted)
    return val if isinstance(val, tuple) else (val,) * depth
'''


def test_complex_operators_with_real_operands_match_torch():
    import mindspore as ms
    import torch
    from tests.parity.harness import assert_close, load_converted, load_torch
    d = X.astype(np.float64)
    want = load_torch(OPERATORS)["rotate"](*(torch.from_numpy(a) for a in (X, Y, d, I32)))
    mod, code, _ = load_converted(OPERATORS)
    got = mod.rotate(*(ms.Tensor(a) for a in (X, Y, d, I32)))
    assert "acc = _ms_compat.times(acc, x)" in code and "parts[0] = _ms_compat.times(parts[0], y)" in code, code
    assert "scale = 4 * 3 / 2" in code and '"ab" * 2' in code, code          # no tensor operand: as written
    assert got[-1] == want[-1]
    assert mod.cast_tuple(3) == load_torch(OPERATORS)["cast_tuple"](3) == (3, 3)
    for g, t, what in zip(got[:-1], want[:-1], ("w", "acc", "alias", "part", "real")):
        assert str(g.dtype).lower() == str(t.dtype).replace("torch.", "").lower(), (what, g.dtype, t.dtype)
        assert_close(g, t.numpy(), what=what)
    want = load_torch(OPERATORS)["spectral"](torch.from_numpy(X), torch.from_numpy(Y))
    assert_close(ms.jit(mod.spectral)(ms.Tensor(X), ms.Tensor(Y)), want.numpy(), what="GRAPH")


def test_complex_operator_gradients_match_torch():
    """MindSpore has no gradient for a complex Mul: a complex tensor times a real one is computed on its parts."""
    from tests.parity.harness import check_function
    check_function(OPERATORS, [X[:, :4], np.abs(Y[:, :3]) + 0.1], entry="filtered", grad=True)


def test_operators_in_a_module_without_complex_values_stay_as_written():
    from tests.parity.harness import load_converted
    _, code, _ = load_converted("import torch\n\n\ndef f(x, y):\n    x *= y\n    return x * y / 2\n")
    assert "x *= y" in code and "return x * y / 2" in code and "times" not in code, code
