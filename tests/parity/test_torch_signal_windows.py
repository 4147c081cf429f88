"""Parity of torch.signal.windows (msmigrate/mappings/torch_signal_windows.py): every window for M = 1, odd and even
M, symmetric and periodic, with its parameters and dtype, in PyNative and ms.jit."""
from __future__ import annotations

from tests.parity.table_harness import assert_every_record_cased, case, run_table

W = "torch.signal.windows."
_ALL = ("hann", "hamming", "blackman", "bartlett", "kaiser", "cosine", "gaussian", "exponential", "general_hamming",
        "nuttall")
WINDOWS = [case(W + n, f": (torch.signal.windows.{n}(1), torch.signal.windows.{n}(7), torch.signal.windows.{n}(8),"
                f" torch.signal.windows.{n}(8, sym=False), torch.signal.windows.{n}(5, sym=False),"
                f" torch.signal.windows.{n}(6, dtype=torch.float64))", [], rtol=1e-5, atol=1e-6) for n in _ALL]
WINDOWS += [case(W + "kaiser", ": (torch.signal.windows.kaiser(9, beta=5.0), torch.signal.windows.kaiser(8, beta=2.0,"
                 " sym=False))", [], atol=1e-6),
            case(W + "gaussian", ": torch.signal.windows.gaussian(9, std=2.5, sym=False)", [], atol=1e-6),
            case(W + "exponential", ": (torch.signal.windows.exponential(9, tau=3.0), torch.signal.windows.exponential("
                 "8, center=2.0, tau=0.5, sym=False))", [], atol=1e-6),
            case(W + "general_hamming", ": torch.signal.windows.general_hamming(8, alpha=0.6)", [], atol=1e-6),
            # float32 windows to torch's float32 rounding (computed in float64, then cast: MindSpore's float32 exp
            # is ~1e-6 off)
            case([W + "gaussian", W + "exponential"], ": (torch.signal.windows.gaussian(10, std=1.5),"
                 " torch.signal.windows.exponential(9, tau=2.0), torch.signal.windows.gaussian(7, sym=False))", [],
                 rtol=1e-6, atol=0.0, typed=True),
            # float64 windows with parameters no float32 holds exactly (std=0.6, tau=0.3, center=2.2): torch's float64
            # values (PyNative: inside ms.jit MindSpore rounds a float64 constant to float32 too)
            case([W + "gaussian", W + "exponential"], ": (torch.signal.windows.gaussian(M=10, std=0.6, sym=False,"
                 " dtype=torch.float64), torch.signal.windows.exponential(9, center=2.2, tau=0.3, sym=False,"
                 " dtype=torch.float64), torch.signal.windows.exponential(8, tau=0.7, dtype=torch.float64))", [],
                 rtol=1e-13, atol=0.0, typed=True, graph=False),
            # a cosine sum near 0 (alpha=0.4): torch's float32 rounding, at 1e-6
            case([W + "general_hamming", W + "general_cosine"], ": (torch.signal.windows.general_hamming(10, alpha=0.4,"
                 " sym=False), torch.signal.windows.general_cosine(10, a=[0.5, 1 - 0.5]))", [], rtol=1e-6, atol=0.0,
                 typed=True),
            case(W + "general_cosine", ": (torch.signal.windows.general_cosine(1, a=[0.5, 0.5]),"
                 " torch.signal.windows.general_cosine(10, a=[0.46, 0.23, 0.31]),"
                 " torch.signal.windows.general_cosine(M=9, a=[0.5, 1 - 0.5], sym=False),"
                 " torch.signal.windows.general_cosine(8, a=(0.3635819, 0.4891775, 0.1365995, 0.0106411),"
                 " dtype=torch.float64), torch.signal.windows.general_cosine(10, a=[0.46, 0.23, 0.31], sym=True,"
                 " dtype=torch.float64, layout=torch.strided, requires_grad=False))", [], rtol=1e-5, atol=1e-6,
                 typed=True),
            # blackman and general_cosine as torch computes them (its linspace of angles, its sum's order): float64
            # to 1e-13 with the ends' -1.4e-17 (ops.blackman_window: 0, and Python coefficients rounded to float32 by
            # a float64 tensor: 1.5e-8 off), float32 at torch's rounding
            case([W + "blackman", W + "general_cosine"], ": (torch.signal.windows.blackman(M=5, sym=True,"
                 " dtype=torch.float64), torch.signal.windows.blackman(6, sym=False, dtype=torch.float64),"
                 " torch.signal.windows.general_cosine(7, a=[0.46, 0.23, 0.31], dtype=torch.float64),"
                 " torch.signal.windows.blackman(0, dtype=torch.float64))", [], rtol=1e-13, atol=0.0, typed=True,
                 graph=False),
            case([W + "blackman", W + "general_cosine"], ": (torch.signal.windows.blackman(5),"
                 " torch.signal.windows.blackman(12, sym=False), torch.signal.windows.general_cosine(9, a=[0.42, 0.5,"
                 " 0.08]))", [], rtol=1e-6, atol=0.0, typed=True)]


def test_windows():
    failures = run_table(WINDOWS)
    assert not failures, "\n".join(failures)


def test_every_window_record_has_a_case():
    assert_every_record_cased("tests/parity/test_torch_signal_windows.py", {"test_windows": WINDOWS})
