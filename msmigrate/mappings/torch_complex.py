"""torch's complex-number functions and dtypes (torch.conj, torch.angle, torch.view_as_real, torch.cfloat...)
-> mindspore.ops on complex64/complex128 tensors, which MindSpore 2.10 runs on CPU (checked there: ops.conj,
ops.angle, ops.real/imag, ops.Complex, ops.polar, ops.is_complex; ops.angle has no kernel for real inputs, so
they are taken as complex). MindSpore has no lazy conjugate or negative bits: conj is computed at once, so
resolve_conj/resolve_neg return their input. Proven by tests/parity/test_torch_complex.py.
"""
from __future__ import annotations

from ..records import VALUE_ATTRS, mapping
from .compose import composed
from .torch_linalg import BROADCAST_PAIR

T = "tests/parity/test_torch_complex.py::test_complex"
T_ABS = "tests/test_first_rule_gaps.py::test_complex_magnitude_and_parts_are_real_as_in_torch"

for _name in ("conj", "conj_physical"):
    # a real tensor is itself (the Conj kernel also rejects an empty one)
    composed(f"torch.{_name}", "(ops.conj({input}) if ops.is_complex({input}) else {input})", ("input",), test=T,
             target="mindspore.ops.conj",
             note="computed at once (MindSpore has no lazy conjugate view); a real tensor is returned unchanged")
for _name in ("resolve_conj", "resolve_neg"):
    composed(f"torch.{_name}", "{input}", ("input",), target="identity", test=T,
             note="MindSpore's conj and neg are computed at once: nothing is left to resolve")
composed("torch.angle", "ops.angle({input} if ops.is_complex({input}) else {input}.astype(ms.complex128 if "
         "{input}.dtype == ms.float64 else ms.complex64))", ("input",), target="mindspore.ops.angle", test=T,
         note="a real input is taken as complex (ops.angle has no real kernel): 0 for x >= 0, pi for x < 0, as torch")
composed("torch.complex", BROADCAST_PAIR.format(op="Complex()", rest="").replace("{input}", "{real}").replace(
    "{other}", "{imag}"), ("real", "imag"), target="mindspore.ops.Complex",
    note="the parts are broadcast first (ops.Complex wants equal shapes)", test=T)
composed("torch.polar", BROADCAST_PAIR.format(op="polar", rest="").replace("{input}", "{abs}").replace(
    "{other}", "{angle}"), ("abs", "angle"), target="mindspore.ops.polar",
    note="the inputs are broadcast first (ops.polar wants equal shapes)", test=T)
for _name in ("view_as_real", "view_as_real_copy"):
    composed(f"torch.{_name}", "ops.stack([ops.real({input}), ops.imag({input})], -1)", ("input",),
             target="mindspore.ops.stack", test=T, note="a new tensor (real, imag) in a last dimension of 2, not a view")
for _name in ("view_as_complex", "view_as_complex_copy"):
    composed(f"torch.{_name}", "ops.Complex()({input}[..., 0], {input}[..., 1])", ("input",),
             target="mindspore.ops.Complex", test=T, note="a new complex tensor from the last dimension of 2, not a view")
composed("torch.is_complex", "ops.is_complex({input})", ("input",), test=T, note="a Python bool, as torch")
composed("torch.adjoint", "ops.swapaxes(ops.conj({input}), -2, -1)", ("input",), target="mindspore.ops.conj", test=T,
         note="the conjugate transpose of the last two dimensions, computed (not a view)")
for _src, _dst in (("cfloat", "complex64"), ("cdouble", "complex128"), ("uint16", "uint16"), ("uint32", "uint32"),
                   ("uint64", "uint64")):
    mapping(f"torch.{_src}", f"mindspore.{_dst}", test=T,
            note="MindSpore's unsigned 16/32/64-bit tensors hold values but have few arithmetic kernels on CPU"
            if _src.startswith("uint") else "")
    VALUE_ATTRS[f"torch.{_src}"] = {"itemsize"}     # bytes per element, as torch's
for _src, _dst in (("cfloat", "complex64"), ("cdouble", "complex128")):
    mapping(f"Tensor.{_src}", f"expr:{{self}}.astype(ms.{_dst})", args=("memory_format",), test=T)

# `z.real`, `z.imag` (attributes in torch, methods on a MindSpore tensor): msmigrate/tensor_reads.py
for _name in ("real", "imag"):
    mapping(f"Tensor.{_name}", f"expr:_ms_compat.{_name}_part({{self}})", test=T_ABS,
            note=f"MindSpore's Tensor.{_name} is a method: ops.{_name}")
