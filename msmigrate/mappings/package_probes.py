"""Availability probes of torch in converted code (msmigrate/package_probes.py applies them)."""
from __future__ import annotations

from ..registry import DIFFERENCE, mapping

_T = "tests/test_package_probes.py::test_converted_library_sees_torch"
_NOTE = ("torch and torchvision (converted) answer as installed, at the torch API version the conversion "
         "follows (torch.__version__'s in converted code); any other package is probed as written")
mapping("importlib.util.find_spec", "_ms_compat.find_spec", args=("name", "package"), status=DIFFERENCE,
        note=_NOTE, test=_T)
mapping("importlib.metadata.version", "_ms_compat.package_version", args=("distribution_name",),
        status=DIFFERENCE, note=_NOTE, test=_T)
mapping("importlib_metadata.version", "_ms_compat.package_version", args=("distribution_name",),
        status=DIFFERENCE, note=_NOTE, test=_T)
