"""Numeric limits of dtypes (torch.finfo / torch.iinfo), memory-format and dense-layout constants."""
from __future__ import annotations

from ..records import mapping

T = "tests/parity/test_numerics.py"

mapping("torch.finfo", "_ms_compat.finfo", args=("type",), target_args=("dtype",), rename={"type": "dtype"},
        note="bits, eps, max, min, tiny, smallest_normal, resolution, dtype with torch's numbers (MindSpore has no "
             "finfo); works inside GRAPH-mode construct (x.dtype is known at compile time)",
        test=f"{T}::test_finfo_iinfo_fields")
mapping("torch.iinfo", "_ms_compat.iinfo", args=("type",), target_args=("dtype",), rename={"type": "dtype"},
        note="bits, min, max, dtype (MindSpore has no iinfo)", test=f"{T}::test_finfo_iinfo_fields")

# A memory format is a layout hint for torch's strided kernels; it changes no values. MindSpore
# tensors have no user-visible strides: memory_format= arguments are dropped where they are passed
# (Tensor.to/contiguous/clone, factories); the constants stay comparable names.
for _fmt in ("channels_last", "channels_last_3d", "contiguous_format", "preserve_format"):
    mapping(f"torch.{_fmt}", f"expr:'{_fmt}'",
            note="layout hint with no MindSpore counterpart (no user-visible strides); values are unchanged",
            test=f"{T}::test_memory_format_is_a_layout_hint")

# torch.strided is the dense layout, the only one MindSpore tensors have: `layout=torch.strided` is dropped by the
# factories (torch.zeros, torch.arange, windows, Tensor.new_*) and the constant stays a comparable name. The sparse
# layouts (torch.sparse_coo...) keep no record: a site naming them is a TODO.
mapping("torch.strided", "expr:'strided'",
        note="the dense layout, the only one MindSpore tensors have; layout=torch.strided arguments are dropped",
        test=f"{T}::test_strided_is_the_dense_layout")
