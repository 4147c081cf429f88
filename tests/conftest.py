"""Every test starts and ends in MindSpore's PyNative mode.

Converted programs set `ms.set_context(mode=ms.GRAPH_MODE)` at import, as the programs they come from would, and
several tests compile on purpose. MindSpore's mode is process-wide, so one test that leaves GRAPH mode on makes
later tests in the same xdist worker compile code written for PyNative and fail for a reason of their own: which
tests those are depends on how the workers split the files. A test that wants GRAPH mode sets it itself.
"""
import sys

import pytest


def _pynative():
    ms = sys.modules.get("mindspore")    # tests that never import MindSpore (the light install) stay without it
    if ms is not None and ms.get_context("mode") != ms.PYNATIVE_MODE:
        ms.set_context(mode=ms.PYNATIVE_MODE)


@pytest.fixture(autouse=True)
def _pynative_mode():
    _pynative()
    yield
    _pynative()
