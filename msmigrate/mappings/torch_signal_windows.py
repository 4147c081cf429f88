"""`torch.signal.windows.*` -> MindSpore window ops (sym=True is periodic=False) or the window formulas torch
documents, over ops.arange. Proven by tests/parity/test_torch_signal_windows.py (M = 1, odd and even M, sym and
periodic, dtype)."""
from __future__ import annotations

from .compose import FACTORY_DROP, composed

T = "tests/parity/test_torch_signal_windows.py::test_windows"
W = "torch.signal.windows."
_NOTE = "sym=True (torch's default) is MindSpore's periodic=False; float32 unless dtype= is given"

for _name, _op, _extra in (("hann", "hann_window", ""), ("hamming", "hamming_window", ""),
                           ("bartlett", "bartlett_window", ""),
                           ("kaiser", "kaiser_window", ", {beta}")):
    _length = "ms.Tensor({M})" if _name == "bartlett" else "{M}"
    composed(W + _name, f"(ops.ones(1, {{dtype}}) if {{M}} == 1 else ops.{_op}({_length}, not {{sym}}{_extra}, "
             f"dtype={{dtype}}))", ("M", "sym", "dtype") + (("beta",) if _name == "kaiser" else ()),
             defaults={"sym": "True", "dtype": "ms.float32", "beta": "12.0"} if _name == "kaiser" else
             {"sym": "True", "dtype": "ms.float32"}, drop=FACTORY_DROP, target=f"mindspore.ops.{_op}", note=_NOTE,
             test=T)

# the formulas over n = 0..M-1, with torch's denominator (M - 1 when sym, M when periodic)
_N = "_ms_compat.window_points({M}, {dtype})"   # float64 for a float64 window, else float32
# exp's windows over float64 points, cast after: MindSpore 2.10's CPU float32 exp is ~1e-6 off (torch's ~1e-7); the
# cosine sums keep float32 (their cancellation near 0 follows torch's float32 rounding). std, tau and center are
# float64 tensors: a Python float meeting a float64 tensor is rounded to float32 (std=0.6: 3e-6 off in float64)
_N64 = "_ms_compat.window_points({M}, ms.float64)"
_DEN = "({M} - 1 if {sym} else {M})"
_CENTER = "(({M} - 1) / 2 if {sym} else {M} / 2)"
for _name, _formula, _args, _defaults in (
        ("cosine", f"ops.sin(3.141592653589793 * ({_N} + 0.5) / ({{M}} if {{sym}} else {{M}} + 1))", (), {}),
        ("gaussian", f"ops.exp(-0.5 * (({_N64} - {_CENTER}) / ms.Tensor({{std}}, ms.float64)) ** 2)", ("std",),
         {"std": "1.0"}),
        ("exponential", f"ops.exp(-ops.abs({_N64} - ms.Tensor({{center}}, ms.float64)) / ms.Tensor({{tau}}, ms.float64))",
         ("center", "tau"), {"tau": "1.0"}),
        ("general_hamming", f"({{alpha}} - (1 - {{alpha}}) * ops.cos(6.283185307179586 * {_N} / {_DEN}))",
         ("alpha",), {"alpha": "0.54"}),
        ("nuttall", f"(0.3635819 - 0.4891775 * ops.cos(6.283185307179586 * {_N} / {_DEN}) + 0.1365995 * "
                    f"ops.cos(12.566370614359172 * {_N} / {_DEN}) - 0.0106411 * ops.cos(18.84955592153876 * {_N} / "
                    f"{_DEN}))", (), {})):
    _window = f"(ops.ones(1, {{dtype}}) if {{M}} == 1 else ({_formula}).astype({{dtype}}))"
    composed(W + _name, _window, ("M", "sym", "dtype") + _args,
             defaults=dict({"sym": "True", "dtype": "ms.float32"}, **_defaults),
             absent={"center": _window.replace("{center}", _CENTER)} if _name == "exponential" else None,
             drop=FACTORY_DROP, target="mindspore.ops.arange",
             note="torch's formula over ops.arange (float64 for a float64 window, else float32 cast to dtype; "
                  "gaussian/exponential in float64 then cast; _ms_compat.window_points); sym as in torch", test=T)
# torch's general_cosine: its linspace of the angles and its sum's order, in the window's dtype (float64, else float32)
composed(W + "general_cosine", "_ms_compat.general_cosine_window({M}, {a}, {sym}, {dtype})", ("M", "a", "sym", "dtype"),
         defaults={"sym": "True", "dtype": "ms.float32"}, drop=FACTORY_DROP, target="_ms_compat.general_cosine_window",
         test=T, note="torch's sum of (-1)**k * a[k] * cos(k * linspace(0, 2 pi (M - 1) / (M - 1 if sym else M), M)) "
                      "(float64 for a float64 window, else float32 cast to dtype; templates/compat_parts/"
                      "window_points.py); a is any sequence of numbers")
# torch's blackman is general_cosine with a = (0.42, 0.5, 0.08), summed in that order: its ends are 0.42 - 0.5 + 0.08
# rounded (-1.4e-17 in float64, -1.5e-8 in float32); ops.blackman_window gives 0 there and other float32 roundings
composed(W + "blackman", "_ms_compat.general_cosine_window({M}, (0.42, 0.5, 0.08), {sym}, {dtype})",
         ("M", "sym", "dtype"), defaults={"sym": "True", "dtype": "ms.float32"}, drop=FACTORY_DROP,
         target="_ms_compat.general_cosine_window", test=T,
         note="torch's general_cosine with a = (0.42, 0.5, 0.08) (_ms_compat.general_cosine_window); sym as in torch")
