"""Parity of torch.fft (msmigrate/mappings/torch_fft.py): every function on real and complex inputs, with
n/s/dim/norm, in PyNative and ms.jit, gradients through rfft/fft/irfft, one converted snippet for all."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import assert_every_record_cased, case, run_table

RNG = np.random.default_rng(0)
R = RNG.standard_normal((4, 6)).astype(np.float32)
R3 = RNG.standard_normal((2, 4, 6)).astype(np.float32)
C = (RNG.standard_normal((4, 6)) + 1j * RNG.standard_normal((4, 6))).astype(np.complex64)
TOL = dict(rtol=1e-4, atol=1e-4)

FFT = []
for _n in ("fft", "ifft", "hfft", "irfft"):
    FFT += [case(f"torch.fft.{_n}", f"x: torch.fft.{_n}(x)", [R], **TOL),
            case(f"torch.fft.{_n}", f"x: torch.fft.{_n}(x, n=8, dim=0, norm='ortho')", [C], **TOL),
            case(f"torch.fft.{_n}", f"x: torch.fft.{_n}(x, 5, -1, 'forward')", [C], **TOL)]
for _n in ("rfft", "ihfft"):
    FFT += [case(f"torch.fft.{_n}", f"x: torch.fft.{_n}(x)", [R], **TOL),
            case(f"torch.fft.{_n}", f"x: torch.fft.{_n}(x, n=5, dim=0, norm='ortho')", [R], **TOL)]
for _n in ("fft2", "ifft2", "hfft2", "irfft2", "fftn", "ifftn", "hfftn", "irfftn"):
    FFT += [case(f"torch.fft.{_n}", f"x: torch.fft.{_n}(x)", [C], **TOL),
            case(f"torch.fft.{_n}", f"x: torch.fft.{_n}(x, s=(3, 4), dim=(1, 2), norm='ortho')",
                 [R3.astype(np.complex64)], **TOL)]
for _n in ("rfft2", "ihfft2", "rfftn", "ihfftn"):
    FFT += [case(f"torch.fft.{_n}", f"x: torch.fft.{_n}(x)", [R3], **TOL),
            case(f"torch.fft.{_n}", f"x: torch.fft.{_n}(x, (3, 4), (0, 2), 'forward')", [R3], **TOL)]
FFT += [
    case("torch.fft.fftshift", "x: torch.fft.fftshift(x)", [R]),
    case("torch.fft.fftshift", "x: torch.fft.fftshift(x, dim=1)", [R3]),
    case("torch.fft.ifftshift", "x: (torch.fft.ifftshift(x), torch.fft.ifftshift(x, (0, 2)))", [R3]),
    case(["torch.fft.fftfreq", "torch.fft.rfftfreq"],
         ": (torch.fft.fftfreq(7), torch.fft.fftfreq(8, d=0.5), torch.fft.rfftfreq(7), torch.fft.rfftfreq(8, 0.1),"
         " torch.fft.fftfreq(4, dtype=torch.float64), torch.fft.rfftfreq(5, device='cpu'), torch.fft.fftfreq(n=5, d=2),"
         " torch.fft.rfftfreq(6, 3, dtype=None))", []),
    # the usual spectral idioms, with gradients
    case(["torch.fft.rfft", "torch.fft.irfft"], "x: torch.fft.irfft(torch.fft.rfft(x) * 0.5, n=x.shape[-1])", [R],
         grad=True, **TOL),
    # |z|^2 through real/imag: abs() of a complex MindSpore tensor stays complex64 (torch: float32)
    case("torch.fft.rfft", "x: (lambda z: torch.real(z) ** 2 + torch.imag(z) ** 2)(torch.fft.rfft(x, norm='ortho'))",
         [R], grad=True, **TOL),
    case("torch.fft.fft", "x: torch.real(torch.fft.fft(x)) + torch.imag(torch.fft.fft(x)) ** 2", [R], grad=True, **TOL),
    case("torch.fft.fft2", "x: torch.imag(torch.fft.fft2(x)) * torch.real(torch.fft.fft2(x))", [R3], grad=True,
         **TOL),
    case("torch.fft.rfft", "x: torch.fft.rfft((x * 10).long())", [R], **TOL),
    case("torch.fft.fft", "x: torch.fft.fft(x.double())", [R], **TOL),
]


def test_fft_values():
    failures = run_table(FFT)
    assert not failures, "\n".join(failures)


def test_fft_unsupported_arguments_are_todo():
    """An argument the record does not know leaves a visible TODO, never a dropped argument. out= in an
    assignment binds both names to the result (the out_argument rule's: tests/parity/test_out_argument.py)."""
    from msmigrate.registry import TODO
    from tests.parity.harness import convert_snippet

    code, sites = convert_snippet("import torch\ndef f(x, y):\n    z = torch.fft.fft(x, out=y)\n"
                                  "    return torch.fft.rfft(x, 4, 0, 'ortho', 3)\n")
    assert [s.status for s in sites if s.api == "torch.fft.rfft"] == [TODO], code
    # y is the caller's tensor: written into (_ms_compat.write_into, tests/test_heldout38_programs.py)
    assert "z = y = _ms_compat.write_into(y, ops.cast(ops.fft(x, None, -1, None), y.dtype))" in code, code


def test_every_fft_record_has_a_case():
    assert_every_record_cased("tests/parity/test_torch_fft.py", {"test_fft_values": FFT})


def test_hermitian_ffts_repeat():
    """The converted Hermitian transforms give torch's values on every call: MindSpore 2.10's own
    ops.hfft/ihfftn return the conjugate on every second call on CPU, so the records compute them through
    rfft/irfft (the peer suite's fft_ihfftn case 8 read a conjugate after case 7's identical call)."""
    import torch
    from tests.parity.harness import load_converted
    import mindspore as ms

    src = ("import torch\n"
           "def f(x, c):\n"
           "    return (torch.fft.ihfftn(x, (2, 5), (0, 1), 'backward'), torch.fft.hfft(c[:3], 5, 0),\n"
           "            torch.fft.ihfft(x), torch.fft.hfft2(c), torch.fft.ihfft2(x, norm='ortho'),\n"
           "            torch.fft.hfftn(c, norm='forward'))\n")
    x = np.arange(20, dtype=np.float64).reshape(4, 5)
    c = C.astype(np.complex128)[:4, :5]
    want = [t.resolve_conj().numpy() for t in
            __import__("tests.parity.harness", fromlist=["load_torch"]).load_torch(src)["f"](
                torch.from_numpy(x), torch.from_numpy(c))]
    mod, code, _ = load_converted(src)
    assert "ops.hfft" not in code and "ops.ihfft" not in code, code
    for _ in range(3):
        got = mod.f(ms.Tensor(x), ms.Tensor(c))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.asnumpy(), w, rtol=1e-6, atol=1e-9)
