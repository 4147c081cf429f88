"""Availability probes of torch in converted code (msmigrate/package_probes.py applies them)."""
from __future__ import annotations

from ..records import DIFFERENCE, mapping

_T = "tests/test_package_probes.py::test_converted_library_sees_torch"
_NOTE = ("torch and torchvision (converted) answer as installed, at the torch API version the conversion "
         "follows (torch.__version__'s in converted code); any other package is probed as written")
mapping("importlib.util.find_spec", "_ms_compat.find_spec", args=("name", "package"), status=DIFFERENCE,
        note=_NOTE, test=_T)
mapping("importlib.metadata.version", "_ms_compat.package_version", args=("distribution_name",),
        status=DIFFERENCE, note=_NOTE, test=_T)
mapping("importlib_metadata.version", "_ms_compat.package_version", args=("distribution_name",),
        status=DIFFERENCE, note=_NOTE, test=_T)

# probes of torch's build that libraries read at import time: a converted program runs on MindSpore,
# never on a ROCm or XPU build of torch, and never under torch.compile's tracing (a CPU torch's answers)
_B = "tests/parity/test_build_probes.py::test_build_probes_answer_as_a_cpu_torch"
mapping("torch.version.hip", "expr:None", note="MindSpore has no ROCm backend", test=_B)
mapping("torch.xpu.is_available", "expr:False", note="MindSpore has no Intel XPU backend", test=_B)
mapping("torch.xpu.device_count", "expr:0", note="MindSpore has no Intel XPU backend", test=_B)
for _name in ("torch.compiler.is_compiling", "torch.compiler.is_dynamo_compiling", "torch._dynamo.is_compiling"):
    mapping(_name, "expr:False", note="converted code never runs under torch.compile's tracing (MindSpore's GRAPH "
            "mode compiles from the source; Python branches on this take the eager path)", test=_B)
