"""torch.fft's Hermitian transforms (hfft, ihfft, hfft2, ihfft2, hfftn, ihfftn) through rfft/irfft: MindSpore
2.10's own ops.hfft*/ihfft* on CPU return the conjugate on every second call with the same arguments (a
kernel's kept state; tests/parity/test_torch_fft.py::test_hermitian_ffts_repeat)."""


def hermitian_fft(kind, inverse, x, size=None, dim=None, norm=None):
    """torch.fft.{i}hfft{kind}(x, size, dim, norm); kind '', '2' or 'n' (size: n, or s)."""
    # hfft = irfft of the conjugate and ihfft = conjugate of rfft, each under the other direction's scaling
    # (an if, not a dict: a None key is no constant in a compiled graph)
    norm = "ortho" if norm == "ortho" else ("backward" if norm == "forward" else "forward")
    if dim is None and kind != "n":
        dim = -1 if kind == "" else (-2, -1)
    if inverse:
        return ops.conj(getattr(ops, "rfft" + kind)(x, size, dim, norm))
    if x.dtype not in (ms.complex64, ms.complex128):     # the dtype: a constant in a compiled graph
        x = x.astype(ms.complex128 if x.dtype == ms.float64 else ms.complex64)
    return getattr(ops, "irfft" + kind)(ops.conj(x), size, dim, norm)
