"""Parity of torch build probes that libraries read at import time (records in
msmigrate/mappings/package_probes.py): ROCm/XPU builds and torch.compile tracing, none of which a
converted program runs under."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .harness import load_converted, load_torch, no_todo  # noqa: E402

SRC = '''
import torch


def probes():
    hip = getattr(torch, "version").hip is not None
    xpu = hasattr(torch, "xpu") and torch.xpu.is_available()
    return [torch.version.hip, hip, xpu, torch.xpu.device_count(), torch.compiler.is_compiling(),
            torch.compiler.is_dynamo_compiling()]
'''


def test_build_probes_answer_as_a_cpu_torch():
    """A CPU torch (what the parity tests run) answers these as a converted program must: no ROCm, no
    XPU, not being compiled."""
    mod, code, sites = load_converted(SRC)
    no_todo(sites)
    assert mod.probes() == load_torch(SRC)["probes"]() == [None, False, False, 0, False, False]
