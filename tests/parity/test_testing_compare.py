"""Parity of torch.testing.assert_close / assert_allclose and their conversion (records in
msmigrate/mappings/testing_compare.py): the same pairs pass, or fail with the same exception, in both."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .harness import _to_ms, _to_torch, load_converted, load_torch  # noqa: E402

SRC = '''
import torch


def close(a, b):
    torch.testing.assert_close(a, b)


def close_nan(a, b):
    torch.testing.assert_close(a, b, equal_nan=True)


def close_tol(a, b):
    torch.testing.assert_close(actual=a, expected=b, rtol=1e-3, atol=1e-6, check_dtype=False, msg="not close")


def close_nested(a, b):
    torch.testing.assert_close([a, {"k": a}], (b, {"k": b}))


def close_half_tol(a, b):
    torch.testing.assert_close(a, b, rtol=1e-3)


def allclose(a, b):
    torch.testing.assert_allclose(a, b)


def allclose_tol(a, b):
    torch.testing.assert_allclose(a, b, 1e-5, 1e-8, False, "not allclose")


def allclose_list(a):
    torch.testing.assert_allclose(a, a.tolist())
'''

F32 = np.array([10.0, -2.0, 0.5], np.float32)
PAIRS = {
    "same": (F32, F32.copy()),
    "1e-5 apart": (F32, F32 + np.float32(1e-5) * F32),          # within assert_allclose's, not assert_close's
    "1e-7 apart": (F32, F32 + np.float32(1e-7) * F32),
    "nan": (np.array([1.0, np.nan], np.float32), np.array([1.0, np.nan], np.float32)),
    "dtypes": (F32, F32.astype(np.float64)),
    "shapes": (F32, F32[None]),
    "f64 close": (F32.astype(np.float64), F32.astype(np.float64) * (1 + 5e-8)),
    "f64 apart": (F32.astype(np.float64), F32.astype(np.float64) * (1 + 5e-6)),
    "ints": (np.array([1, 2, 3], np.int64), np.array([1, 2, 4], np.int64)),
    "ints same": (np.array([1, 2, 3], np.int64), np.array([1, 2, 3], np.int64)),
    "f16": (F32.astype(np.float16), (F32 * (1 + 5e-4)).astype(np.float16)),
}


def _outcome(fn, *args):
    try:
        fn(*args)
    except (AssertionError, ValueError, TypeError) as e:
        return type(e).__name__, str(e) if str(e).startswith("not ") else ""
    return "ok", ""


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_assert_close(pair):
    t = load_torch(SRC)
    mod, code, sites = load_converted(SRC)
    assert not [s for s in sites if s.status == TODO], [(s.api, s.note) for s in sites if s.status == TODO]
    a, b = PAIRS[pair]
    outcomes = []
    for name in ("close", "close_nan", "close_tol", "close_nested", "close_half_tol", "allclose", "allclose_tol"):
        want = _outcome(t[name], _to_torch(a), _to_torch(b))
        got = _outcome(getattr(mod, name), _to_ms(a), _to_ms(b))
        assert got == want, (name, pair, got, want)
        outcomes.append(want[0])
    assert _outcome(mod.allclose_list, _to_ms(a)) == _outcome(t["allclose_list"], _to_torch(a))
    if pair in ("1e-5 apart", "nan", "dtypes", "shapes", "ints"):
        assert "AssertionError" in outcomes, (pair, outcomes)      # the pair really tells them apart
