"""A fast sample of bench/crash_free.py: 12 files of timm's real wheel, chosen deterministically (by a hash
of their path), converted by `msmigrate convert`: no crash, every output parses, a second conversion changes
nothing, and the input is byte-identical afterwards."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import crash_free  # noqa: E402

N_FILES = 12


def _sources() -> Path:
    try:
        return crash_free.extract_sources("timm")
    except (subprocess.CalledProcessError, OSError) as exc:
        if os.environ.get("CI", "").lower() == "true":
            raise
        pytest.skip(f"timm's wheel could not be downloaded ({exc})")


@pytest.fixture(scope="module")
def sample_result(tmp_path_factory):
    src = _sources()
    files = sorted(src.rglob("*.py"), key=lambda p: hashlib.sha1(str(p.relative_to(src)).encode()).hexdigest())
    sample = tmp_path_factory.mktemp("sample") / "timm"
    for p in files[:N_FILES]:
        dst = sample / p.relative_to(src)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, dst)
    return crash_free.run_tree(sample, jobs=2)


def test_timm_sample_converts_cleanly(sample_result):
    r = sample_result
    assert r["files"] == N_FILES
    assert r["sites"] > 50, "the sample exercises the converter"
    assert r["unparsable_outputs"] == 0, r["unparsable_list"]
    assert r["input_unchanged"]
    assert r["crashes"] == 0, r["crash_list"]
    assert r["idempotent"], r["not_idempotent"]
