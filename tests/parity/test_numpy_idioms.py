"""NumPy 2's `copy=` idioms rewritten for numpy<2 (msmigrate/numpy_idioms.py) keep numpy 2's meaning.

numpy 2 is not installed next to MindSpore (which needs numpy<2), so numpy 2's documented semantics are
the reference: copy=None shares memory when no copy is needed, copy=True always returns a new array, and
values, dtype and memory layout are those of the input. The original calls fail on numpy 1.26."""
from __future__ import annotations

import numpy as np
import pytest

from msmigrate.converter import convert_code
from msmigrate.numpy_idioms import convert_numpy_only

SRC = '''
import numpy as np
from numpy import asarray


def fn(x):
    return (np.array(x, copy=None), np.asarray(x, copy=None), np.asarray(x, copy=True),
            np.asarray(x, dtype=np.float64, copy=None), asarray(x, copy=True), np.asarray(x, copy=False))


def dynamic(x, flag):
    return np.array(x, copy=flag), np.asarray(x, None, copy=flag)
'''
IMPORTS = {"np": "numpy", "asarray": "numpy.asarray"}


def _run(code):
    ns = {}
    exec(compile(code, "<converted>", "exec"), ns)
    return ns


def test_copy_keyword_on_numpy_1():
    assert np.__version__.startswith("1."), "MindSpore needs numpy<2"
    with pytest.raises((TypeError, ValueError)):
        _run(SRC)["fn"](np.ones(3))           # the numpy 2 original fails here
    code, sites = convert_numpy_only(SRC, IMPORTS)
    assert {s.api for s in sites} == {"numpy.array(copy=None)", "numpy.asarray(copy=None)",
                                      "numpy.asarray(copy=True)", "numpy.asarray(copy=False)",
                                      "numpy.array(copy=...)", "numpy.asarray(copy=...)"}, sites
    ns = _run(code)
    x = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    a, b, c, d, e, f = ns["fn"](x)
    for r in (a, b, c, e, f):
        np.testing.assert_array_equal(r, x)
        assert r.dtype == x.dtype and r.flags.f_contiguous, "layout kept (numpy 2 copies with order='K')"
    assert np.shares_memory(a, x) and np.shares_memory(b, x) and np.shares_memory(f, x), "copy=None/False: no copy"
    assert not np.shares_memory(c, x) and not np.shares_memory(e, x), "copy=True: a new array"
    assert d.dtype == np.float64 and not np.shares_memory(d, x), "a dtype change copies, as numpy 2 does"
    # a copy=flag decided at run time: True copies, None and False share (no copy needed here)
    for flag, shares in ((True, False), (None, True), (False, True)):
        for r in ns["dynamic"](x, flag):
            np.testing.assert_array_equal(r, x)
            assert np.shares_memory(r, x) == shares, flag
    # list input: numpy 2 copies where it must (copy=None), numpy 1's copy=False does the same
    np.testing.assert_array_equal(ns["fn"]([1.0, 2.0])[0], np.array([1.0, 2.0]))


def test_copy_idioms_in_a_torch_file_and_second_pass():
    src = "import numpy as np\nimport torch\n\n\ndef f(x):\n    return torch.tensor(np.asarray(x, copy=True))\n"
    code, sites, _ = convert_code(src)
    assert "np.asarray(x).copy(order=\"K\")" in code, code
    assert [s.line for s in sites if s.api.startswith("numpy.")] == [6]
    assert convert_code(code)[0] == code


def test_a_file_without_torch_is_rewritten_too(tmp_path):
    from msmigrate.cli import main

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "prep.py").write_text("import numpy\n\n\ndef f(x):\n    return numpy.array(x, copy=None)\n")
    assert main(["convert", str(tmp_path / "src"), "-o", str(tmp_path / "out"), "-q"]) == 0
    assert "numpy.array(x, copy=False)" in (tmp_path / "out" / "prep.py").read_text()
