"""Every test starts and ends in MindSpore's PyNative mode.

Converted programs set `ms.set_context(mode=ms.GRAPH_MODE)` at import, as the programs they come from would, and
several tests compile on purpose. MindSpore's mode is process-wide, so one test that leaves GRAPH mode on makes
later tests in the same xdist worker compile code written for PyNative and fail for a reason of their own: which
tests those are depends on how the workers split the files. A test that wants GRAPH mode sets it itself.
PyNative's record opened by a converted program's `_ms_compat.open_tape()` is closed after each test too.

MindSpore runs a full `gc.collect()` before every graph compile. In a test process that holds torch, MindSpore,
libcst trees and the collected tests, each of those took about 0.4 s, most of a small parity test's time. The
objects alive after collection, and after each test file, are moved out of the collector's sight (`gc.freeze()`):
what a test creates is still collected, only the long-lived heap is no longer scanned again at every compile.
Even so a full collection scanned everything a test file had made so far (0.19 s a compile in test_train_loop.py,
a seventh of the compile): inside the tests, that call collects the youngest generation only. It is there to
free memory; Python's own collections still run.

The suite runs in CI on 2 cores within a time limit. The slowest tests whose ground a faster test of the same
converter path also covers are listed in tests/heavy_tests.txt: they are skipped (and counted as skipped) unless
MSMIGRATE_HEAVY_TESTS=1, which `python bench/heavy_tests.py` sets to run them.

`convert --deps` keeps its conversions in a cache (msmigrate/deps_cache.py); the tests use one of their own, in a
temporary folder, never the user's.
"""
import gc
import os
import sys
import tempfile
from pathlib import Path

import pytest

os.environ["MSMIGRATE_CACHE_DIR"] = tempfile.mkdtemp(prefix="msmigrate-test-cache-")


def _pynative():
    ms = sys.modules.get("mindspore")    # tests that never import MindSpore (the light install) stay without it
    if ms is not None and ms.get_context("mode") != ms.PYNATIVE_MODE:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def _tape_closed():
    """A converted program with a taped backward() opens PyNative's record at import (taped_steps.py); the
    record is process-wide like the mode, so it is closed after each test."""
    for name in ("_ms_compat",):
        helper = sys.modules.get(name)
        if helper is not None and hasattr(helper, "close_tape"):
            helper.close_tape()
    # record_autograd() (recorded_backward.py) sets the executor's grad flag for the program's lifetime: a later
    # test's in-place write on a Parameter would then be refused as a write on a recorded leaf
    api = sys.modules.get("mindspore.graph.api")
    if api is not None and api._pynative_executor.grad_flag():
        api._pynative_executor.set_grad_flag(False)
    # An exception raised inside a function MindSpore 2.10 differentiates op by op (a test that expects a converted
    # program to stop with MigrationError under ms.grad) leaves that function's graph open in the executor, and every
    # later gradient is taken as one nested in it: there an int index (`x[0]`) is refused with "Only support
    # integers ... but got 0 with type <class 'int'>". A later test in the same worker then fails for a reason not
    # its own; clear_res() closes what was left open.
    if api is not None:
        api._pynative_executor.clear_res()


def _heavy_ids():
    listed = Path(__file__).with_name("heavy_tests.txt")
    return {ln.split("#")[0].strip() for ln in listed.read_text().splitlines()} - {""}


def pytest_collection_modifyitems(config, items):
    if os.environ.get("MSMIGRATE_HEAVY_TESTS") == "1":
        return
    heavy = _heavy_ids()
    skip = pytest.mark.skip(reason="heavy: tests/heavy_tests.txt, run by bench/heavy_tests.py")
    for item in items:
        if item.nodeid in heavy or item.nodeid.split("[")[0] in heavy:
            item.add_marker(skip)


def pytest_collection_finish(session):
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True, scope="module")
def _frozen_heap():
    yield
    gc.collect()
    gc.freeze()


class _YoungGenerationCollect:
    """Stands for the `gc` module in mindspore.graph.api: its `gc.collect()` before every graph compile collects the
    youngest generation only (the test process's own collections run as usual)."""

    def __getattr__(self, name):
        return getattr(gc, name)

    @staticmethod
    def collect(generation=0):
        return gc.collect(0)


def _light_compile_collect():
    api = sys.modules.get("mindspore.graph.api")
    if api is not None and getattr(api, "gc", None) is gc:
        api.gc = _YoungGenerationCollect()


@pytest.fixture(autouse=True)
def _pynative_mode():
    _light_compile_collect()
    _pynative()
    yield
    _tape_closed()
    _pynative()
