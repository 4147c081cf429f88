"""torch.testing's comparisons -> _ms_compat.assert_close / assert_allclose (templates/compat_parts/testing_compare.py):
torch's closeness rule and default tolerances on MindSpore tensors, AssertionError on a mismatch.

Proven by tests/parity/test_testing_compare.py (the same pairs pass and fail under torch and converted).
"""
from __future__ import annotations

from ..records import mapping

T = "tests/parity/test_testing_compare.py::test_assert_close"

_CLOSE_ARGS = ("actual", "expected", "allow_subclasses", "rtol", "atol", "equal_nan", "check_device",
               "check_dtype", "check_layout", "check_stride", "msg")
mapping("torch.testing.assert_close", "_ms_compat.assert_close", args=_CLOSE_ARGS, target_args=_CLOSE_ARGS,
        note="|actual - expected| <= atol + rtol * |expected| with torch's default tolerances per dtype, equal "
             "shapes, equal dtypes with check_dtype, nested sequences/mappings item by item; device, layout and "
             "stride have one value each in MindSpore", test=T)
_ALLCLOSE_ARGS = ("actual", "expected", "rtol", "atol", "equal_nan", "msg")
mapping("torch.testing.assert_allclose", "_ms_compat.assert_allclose", args=_ALLCLOSE_ARGS,
        target_args=_ALLCLOSE_ARGS, note="torch's deprecated form: its own default tolerances, expected read in "
                                         "actual's dtype, dtypes not checked, NaN equal by default", test=T)
