"""torch dtypes -> MindSpore dtypes."""
from __future__ import annotations

from ..registry import mapping

_T = "tests/parity/test_dtypes.py::test_dtype_names"
_DTYPES = {
    "float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
    "float16": "float16", "half": "float16", "bfloat16": "bfloat16",
    "int8": "int8", "int16": "int16", "short": "int16", "int32": "int32", "int": "int32",
    "int64": "int64", "long": "int64", "uint8": "uint8", "bool": "bool_",
    "complex64": "complex64", "complex128": "complex128",
}
for _src, _dst in _DTYPES.items():
    mapping(f"torch.{_src}", f"mindspore.{_dst}", test=_T)
mapping("torch.dtype", "mindspore.dtype.Type", note="the class of dtypes, for annotations", test=_T)
mapping("torch.Tensor", "mindspore.Tensor", test=_T,
        note="as a type; calling torch.Tensor(data) is mapped to mindspore.Tensor(data)")
mapping("torch.FloatTensor", "mindspore.Tensor", test=_T)
mapping("torch.LongTensor", "mindspore.Tensor", test=_T)
mapping("torch.Size", "tuple", note="shapes are tuples in MindSpore", test=_T)
